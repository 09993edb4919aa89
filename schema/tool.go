package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wymcp/wymcp-check/envelope"
)

// Bounds on a schema a server publishes, so that one hostile tools/list
// cannot make the checker spend unbounded memory or time (T-SCHEMA-6; the
// spec sets no numbers, these are generous for real tools). Depth counts
// JSON levels, two for each nested object (properties, then the member),
// so 256 levels are 127 nested objects. The compiler's cost grows with
// the number of subschemas times the length of their locations (it looks
// each one up in a list of those seen), so the sum of the subschemas'
// depths is bounded too: 10,000 subschemas 64 levels deep, or fewer
// deeper, which keeps the worst case within a couple of seconds
// (BenchmarkCompileDeepSchema) while a deep schema of a few hundred
// subschemas compiles.
const (
	maxSchemaBytes      = 1 << 20
	maxSchemaDepth      = 256
	maxSchemaSubschemas = 10000
	maxSchemaDepthSum   = 64 * maxSchemaSubschemas
)

// ErrSchemaBounds marks a schema refused for its size, depth or number
// of subschemas, or for the work its references make a validation do
// (maxSchemaVisits): not invalid, but more than the checker will compile.
var ErrSchemaBounds = errors.New("schema exceeds the checker's bounds")

// ErrUnknownDialect marks a schema whose $schema names a dialect the
// checker does not know: a server may choose one (T-SCHEMA-1), so the
// schema is not known to be invalid, only not judged.
var ErrUnknownDialect = errors.New("unsupported $schema dialect")

// toolSchemaURL is where a tool schema without its own $id lives while it
// is compiled; references relative to it resolve inside the same fake
// origin and are refused like any other.
const toolSchemaURL = "mem://wymcp/tool-schema.json"

// A ToolSchema is a compiled inputSchema or outputSchema of a tool. It is
// immutable and safe for concurrent use.
type ToolSchema struct {
	schema  *jsonschema.Schema
	dialect string
	// unreadable are the schema's patterns the checker cannot read; log
	// counts their use. Validations of such a schema take mu, so that a
	// change of the count is this validation's (see Validate).
	unreadable []string
	notECMA    []string
	log        *patternLog
	mu         sync.Mutex
	// recursion bounds the instances validated by the work the
	// schema's recursion would do on them.
	recursion *recursion
	// stricter: the schema has a place where a pattern read as matching
	// everything can make it stricter than it is (see stricterPlaces);
	// elsewhere such a pattern only makes it laxer, and a failure stays
	// sure.
	stricter bool
}

// CompileToolSchema compiles a tool's inputSchema or outputSchema as
// published by a server speaking version. The dialect is the schema's
// $schema, or JSON Schema 2020-12 when it has none (T-SCHEMA-1; 2025-06-18
// names no default, AMB-15, and 2020-12 is what later versions codify).
// References outside the document are never fetched: they fail with
// ErrExternalRef (T-SCHEMA-4, T-SCHEMA-5). Schemas larger, deeper, with
// more subschemas than the package's bounds, or whose references fan out
// into more work than maxSchemaVisits are refused (ErrSchemaBounds). Errors are one
// line and name the cause.
func CompileToolSchema(raw []byte, version string) (*ToolSchema, error) {
	if !slices.Contains(Versions(), version) {
		return nil, fmt.Errorf("tool schema: unknown protocol version %q", version)
	}
	return compileTool(raw, defaultDraft(version))
}

// CompileToolSchemaDraft7 compiles a tool schema that declares no
// dialect as draft-07: the other reading of a 2025-06-18 schema, whose
// version names no dialect (AMB-15) and whose own schema is draft-07.
func CompileToolSchemaDraft7(raw []byte) (*ToolSchema, error) {
	return compileTool(raw, jsonschema.Draft7)
}

// Declared reports whether a schema document names its dialect ($schema).
func Declared(raw []byte) bool {
	doc, err := parseSchemaDoc(raw)
	if err != nil {
		return false
	}
	obj, ok := doc.(map[string]any)
	_, has := obj["$schema"]
	return ok && has
}

func compileTool(raw []byte, draft *jsonschema.Draft) (*ToolSchema, error) {
	doc, err := parseSchemaDoc(raw)
	if err != nil {
		return nil, fmt.Errorf("tool schema: %w", err)
	}
	c, log := newLoggingCompiler(draft)
	annotateFormats(c, doc)
	if err := c.AddResource(toolSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("tool schema: %w", err)
	}
	sch, err := c.Compile(toolSchemaURL)
	if err != nil {
		return nil, fmt.Errorf("tool schema: %w", describeCompileError(err, toolSchemaURL, doc))
	}
	inertDependencies(sch)
	// Compiling is linear in the document; validating is not, so the
	// work its references make is bounded before any instance meets it.
	if err := checkVisits(sch); err != nil {
		return nil, fmt.Errorf("tool schema: %w", err)
	}
	t := &ToolSchema{schema: sch, dialect: dialectOf(doc), log: log, recursion: newRecursion(sch)}
	t.unreadable, t.notECMA = log.finish()
	t.stricter = len(t.unreadable) > 0 && stricterPlaces(doc, false)
	return t, nil
}

// stricterPlaces reports whether a schema document has a keyword under
// which a pattern read as matching everything may make a value fail that
// the schema accepts: not, oneOf and if (a subschema that matches more
// rejects or selects more), contains (with maxContains, more items
// count), and a patternProperties key the checker cannot read (it
// applies its schema to every member). Under any other keyword matching
// more only accepts more. The walk tells keywords from the names that
// properties, $defs and their kind hold; a subschema reached through a
// $ref from such a place is in the document all the same, so the answer
// is for the whole document.
func stricterPlaces(v any, names bool) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if !names {
				switch k {
				case "not", "oneOf", "if":
					return true
				case "contains":
					if _, ok := v["maxContains"]; ok {
						return true
					}
				case "patternProperties":
					if pp, ok := e.(map[string]any); ok {
						for key := range pp {
							if _, err := compileECMA(key); err != nil {
								return true
							}
						}
					}
				}
			}
			holdsNames := !names && (k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions" || k == "dependentSchemas")
			if stricterPlaces(e, holdsNames) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if stricterPlaces(e, false) {
				return true
			}
		}
	}
	return false
}

// inertDependencies makes "dependencies" inert in every subschema of a
// 2019-09 or later resource, where it is no keyword (it became
// dependentRequired and dependentSchemas): the validation library
// applies it under every draft, so a 2020-12 reading refused what a
// 2020-12 validator accepts (review rev54). Decided per resource (an
// embedded one may declare its own $schema), on the compiled schema, so
// the document, and a $ref into it, stay as written (review rev58).
func inertDependencies(root *jsonschema.Schema) {
	for _, s := range reach(root).all {
		if s.DraftVersion >= 2019 {
			s.Dependencies = nil
		}
	}
}

// annotateFormats makes every format the document names an annotation:
// draft-07 and draft-04 let a validator assert format or not (draft-07
// §7.2, "MAY"), and 2020-12 only annotates it, so under no dialect is a
// value that breaks only a format surely refused, nor a server that
// accepts it wrong. The library asserts formats for drafts before
// 2019-09 whatever it is told; a format registered as always valid is
// not asserted. ("regex" cannot be replaced; the engine's own reading of
// it stands.)
func annotateFormats(c *jsonschema.Compiler, doc any) {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if f, ok := e.(string); ok && k == "format" && !seen[f] {
					seen[f] = true
					c.RegisterFormat(&jsonschema.Format{Name: f, Validate: func(any) error { return nil }})
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
}

// Dialect is the $schema the tool schema declares, or the 2020-12 URI
// when it declares none.
func (t *ToolSchema) Dialect() string { return t.dialect }

// NotECMA lists the schema's patterns that are no ECMA-262 regular
// expression under any flags, each quoted with why, sorted (the first 8,
// then how many more): JSON
// Schema asks a pattern to be one (SHOULD). Patterns RE2 merely cannot
// express (lookaround, back-references) are not among them.
func (t *ToolSchema) NotECMA() []string { return t.notECMA }

// Validate validates instance, one JSON value (tool arguments, structured
// content), and returns nil when it is valid; an error (ErrBeyondBounds)
// when the checker does not validate it. When the instance fails after a
// pattern the checker cannot read was asked to match, the problems come
// with an error wrapping ErrUnreadablePattern: that pattern was read as
// matching everything, which may have made the schema stricter than it
// is (under not, oneOf, patternProperties), so the failure is not sure.
func (t *ToolSchema) Validate(instance []byte) ([]envelope.DistilledEntry, error) {
	v, err := decode(instance)
	if errors.Is(err, ErrBeyondBounds) {
		return nil, err
	}
	if err != nil {
		return []envelope.DistilledEntry{{Location: "", Problems: []string{err.Error()}}}, nil
	}
	if err := checkDepth(t.recursion, envelope.Depth(instance)); err != nil {
		return nil, err
	}
	es, asked := t.validate(v)
	if len(es) > 0 && asked && t.stricter {
		return es, fmt.Errorf("%w (%s)", ErrUnreadablePattern, quote(t.unreadable[0]))
	}
	return es, nil
}

// valid validates an already decoded value: nil when it is valid, an
// error (ErrBeyondBounds) when the checker does not validate it.
func (t *ToolSchema) valid(v any) ([]envelope.DistilledEntry, error) {
	if err := checkDepth(t.recursion, valueDepth(v)); err != nil {
		return nil, err
	}
	es, _ := t.validate(v)
	return es, nil
}

// valueDepth is the deepest nesting of objects and arrays in a decoded
// value, as envelope.Depth counts it in JSON text.
func valueDepth(v any) int {
	deepest := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			deepest = max(deepest, valueDepth(e))
		}
	case []any:
		for _, e := range v {
			deepest = max(deepest, valueDepth(e))
		}
	default:
		return 0
	}
	return deepest + 1
}

// validate validates a decoded value and reports whether a pattern the
// checker cannot read was asked to match on the way. Schemas without one
// validate concurrently; the others one at a time, so the count is this
// validation's own.
func (t *ToolSchema) validate(v any) ([]envelope.DistilledEntry, bool) {
	if len(t.unreadable) == 0 {
		return Distill(t.schema.Validate(v)), false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	before := t.log.calls.Load()
	es := Distill(t.schema.Validate(v))
	return es, t.log.calls.Load() != before
}

const dialect202012 = "https://json-schema.org/draft/2020-12/schema"

func defaultDraft(string) *jsonschema.Draft { return jsonschema.Draft2020 }

func dialectOf(doc any) string {
	if obj, ok := doc.(map[string]any); ok {
		if s, ok := obj["$schema"].(string); ok {
			return s
		}
	}
	return dialect202012
}

// parseSchemaDoc decodes a schema and enforces the size bounds before the
// compiler sees it.
func parseSchemaDoc(raw []byte) (any, error) {
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrSchemaBounds, maxSchemaBytes)
	}
	doc, err := decode(raw)
	if errors.Is(err, ErrBeyondBounds) {
		return nil, fmt.Errorf("%w: %w", ErrSchemaBounds, err)
	}
	if err != nil {
		return nil, err
	}
	var m measures
	if err := m.measure(doc, 0); err != nil {
		return nil, err
	}
	return doc, nil
}

// measures are what measure has counted so far.
type measures struct {
	count    int // objects: every subschema is one
	depthSum int // their depths added up
}

// measure walks the document counting objects and failing past the
// bounds.
func (m *measures) measure(v any, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("%w: nested deeper than %d levels", ErrSchemaBounds, maxSchemaDepth)
	}
	switch v := v.(type) {
	case map[string]any:
		m.count++
		m.depthSum += depth
		if m.count > maxSchemaSubschemas {
			return fmt.Errorf("%w: more than %d subschemas", ErrSchemaBounds, maxSchemaSubschemas)
		}
		if m.depthSum > maxSchemaDepthSum {
			return fmt.Errorf("%w: subschemas nested more than %d levels deep in all", ErrSchemaBounds, maxSchemaDepthSum)
		}
		for _, e := range v {
			if err := m.measure(e, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := m.measure(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// describeCompileError turns the library's compile errors, some of them
// multi-line, into one line that names the cause. base is the URL the
// document was compiled at; references are shown relative to it.
func describeCompileError(err error, base string, doc any) error {
	var (
		load     *jsonschema.LoadURLError
		invalid  *jsonschema.SchemaValidationError
		noPtr    *jsonschema.JSONPointerNotFoundError
		noAnchor *jsonschema.AnchorNotFoundError
		badRegex *jsonschema.InvalidRegexError
		draft    *jsonschema.UnsupportedDraftError
		metaURL  *jsonschema.InvalidMetaSchemaURLError
		metaLoop *jsonschema.MetaSchemaCycleError
		vocab    *jsonschema.UnsupportedVocabularyError
		badPtr   *jsonschema.InvalidJsonPointerError
		badURL   *jsonschema.ParseURLError
	)
	switch {
	case errors.As(err, &load):
		if errors.Is(load.Err, ErrExternalRef) {
			if d := dialectOf(doc); strings.TrimSuffix(d, "#") == strings.TrimSuffix(load.URL, "#") {
				return fmt.Errorf("%w %s", ErrUnknownDialect, quote(d))
			}
			return fmt.Errorf("%w: %s", ErrExternalRef, quote(relative(load.URL, base)))
		}
		return fmt.Errorf("cannot load %s: %s", quote(relative(load.URL, base)), oneLine(load.Err.Error()))
	case errors.As(err, &invalid):
		return fmt.Errorf("not a valid schema: %s", FirstProblem(Distill(invalid.Err)))
	case errors.As(err, &noPtr):
		return fmt.Errorf("$ref target %s not found", quote(relative(noPtr.URL, base)))
	case errors.As(err, &noAnchor):
		return fmt.Errorf("$ref anchor %s not found", quote(relative(noAnchor.Reference, base)))
	case errors.As(err, &badRegex):
		return fmt.Errorf("invalid regular expression %s", quote(badRegex.Regex))
	case errors.As(err, &draft), errors.As(err, &metaURL), errors.As(err, &metaLoop):
		return fmt.Errorf("%w %s", ErrUnknownDialect, quote(dialectOf(doc)))
	case errors.As(err, &vocab):
		return fmt.Errorf("unsupported vocabulary %s", quote(vocab.Vocabulary))
	case errors.As(err, &badPtr):
		return fmt.Errorf("invalid json pointer %s", quote(relative(badPtr.URL, base)))
	case errors.As(err, &badURL):
		return fmt.Errorf("invalid reference %s", quote(badURL.URL))
	}
	return errors.New(oneLine(err.Error()))
}

// relative shows a URL of the document itself as its fragment, so errors
// do not leak the package's internal base URL.
func relative(u, base string) string {
	if rest, ok := strings.CutPrefix(u, base); ok {
		if rest == "" {
			return "#"
		}
		return rest
	}
	if rest, ok := strings.CutPrefix(u, "mem://wymcp/"); ok {
		return rest
	}
	return u
}

// FirstProblem renders the first distilled entry, counting the rest,
// for a one-line message ("at /a: must be integer (and 2 more problems)").
func FirstProblem(es []envelope.DistilledEntry) string {
	if len(es) == 0 || len(es[0].Problems) == 0 {
		return "rejected by its schema"
	}
	loc := es[0].Location
	if loc == "" {
		loc = "the root"
	}
	s := "at " + loc + ": " + es[0].Problems[0]
	more := -1
	for _, e := range es {
		more += len(e.Problems)
	}
	if more > 0 {
		s += fmt.Sprintf(" (and %d more %s)", more, plural(more, "problem", "problems"))
	}
	return s
}

// A ToolCache compiles each distinct tool schema once: a run that meets
// the same tools/list again and again (lint of a long transcript, a
// relay watching a client poll) compiles each schema it lists once, not
// once per listing. It keeps at most maxCachedSchemaBytes of schemas;
// past that it compiles without keeping. Safe for concurrent use; the
// zero value is ready, and a nil *ToolCache compiles every time.
type ToolCache struct {
	mu    sync.Mutex
	m     map[toolKey]compiledTool
	bytes int
}

type toolKey struct{ version, raw string }

type compiledTool struct {
	ts  *ToolSchema
	err error
}

// draft7Key is the version a ToolCache files draft-07 compilations under.
const draft7Key = "draft-07"

// CompileDraft7 is CompileToolSchemaDraft7, remembered.
func (c *ToolCache) CompileDraft7(raw []byte) (*ToolSchema, error) {
	return c.compile(raw, draft7Key, CompileToolSchemaDraft7)
}

// maxCachedSchemaBytes bounds the schemas a ToolCache keeps.
const maxCachedSchemaBytes = 16 << 20

// Compile is CompileToolSchema, remembered: a ToolSchema is immutable, and
// compiling the same bytes for the same version gives the same schema or
// the same error.
func (c *ToolCache) Compile(raw []byte, version string) (*ToolSchema, error) {
	return c.compile(raw, version, func(raw []byte) (*ToolSchema, error) { return CompileToolSchema(raw, version) })
}

// compile compiles raw with build, remembered under reading (a
// version, or draft7Key).
func (c *ToolCache) compile(raw []byte, reading string, build func([]byte) (*ToolSchema, error)) (*ToolSchema, error) {
	if c == nil {
		return build(raw)
	}
	c.mu.Lock()
	r, ok := c.m[toolKey{reading, string(raw)}]
	c.mu.Unlock()
	if ok {
		return r.ts, r.err
	}
	ts, err := build(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	// Another caller may have compiled the same schema meanwhile: its
	// entry stays, and the bytes are counted once.
	key := toolKey{reading, string(raw)}
	if r, ok := c.m[key]; ok {
		return r.ts, r.err
	}
	if c.bytes+len(raw) <= maxCachedSchemaBytes {
		if c.m == nil {
			c.m = map[toolKey]compiledTool{}
		}
		c.m[key] = compiledTool{ts, err}
		c.bytes += len(raw)
	}
	return ts, err
}
