package schema

import (
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrExternalRef is the cause of every compile error for a $ref or $schema
// that points outside the document being compiled. Nothing is ever
// fetched: a schema's author must not make the checker reach the network
// or the file system (T-SCHEMA-4), and such a schema is rejected rather
// than treated as accepting anything (T-SCHEMA-5).
var ErrExternalRef = errors.New("external $ref not fetched")

// refusingLoader replaces the library's default loader, which reads
// file:// URLs; the embedded metaschemas are resolved before any loader.
type refusingLoader struct{}

func (refusingLoader) Load(string) (any, error) { return nil, ErrExternalRef }

func newCompiler(draft *jsonschema.Draft) *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(draft)
	c.UseLoader(refusingLoader{})
	return c
}
