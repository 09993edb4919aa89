package schema

import (
	"errors"
	"regexp"

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
	c.UseRegexpEngine(lenientRegexp)
	return c
}

// lenientRegexp compiles a pattern with Go's regexp (RE2: linear time on
// any input, which a server's schema and strings may be), and a pattern
// RE2 cannot read as a pattern the checker does not enforce. JSON Schema
// patterns are ECMA-262, and the ones RE2 lacks (lookahead, lookbehind,
// back-references, [^]) are what the TypeScript SDK's zod emits for
// .regex(): failing such a schema as invalid, or a server for a value
// that breaks it, would be a guess. A pattern that is no ECMA-262 either
// breaks only a SHOULD (the pattern SHOULD be one), which the checker
// cannot tell from the rest, so it is not judged either.
func lenientRegexp(pattern string) (jsonschema.Regexp, error) {
	if re, err := regexp.Compile(pattern); err == nil {
		return re, nil
	}
	return unenforced(pattern), nil
}

// unenforced is a pattern the checker cannot read: every string matches.
type unenforced string

func (u unenforced) MatchString(string) bool { return true }
func (u unenforced) String() string          { return string(u) }
