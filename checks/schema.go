package checks

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
)

// ProtocolSchemas validates replies against the checker's own protocol
// schemas, compiled once per version on first use.
func ProtocolSchemas(reg *schema.Registry) SchemaValidator { return protocolSchemas{reg} }

type protocolSchemas struct{ reg *schema.Registry }

func (p protocolSchemas) ValidateReply(version, method string, raw []byte) ([]envelope.DistilledEntry, error) {
	set, err := p.reg.Version(version)
	if err != nil {
		return nil, err
	}
	return set.ValidateReply(method, raw)
}

// Warm compiles the schemas of versions ahead of their first use (see
// Warmer).
func (p protocolSchemas) Warm(versions ...string) { p.reg.Warm(versions...) }

// UserSchema validates replies against a protocol schema the user gave
// (--schema FILE), whatever the version.
func UserSchema(u *schema.UserSchema) SchemaValidator { return userSchema{u} }

type userSchema struct{ u *schema.UserSchema }

func (s userSchema) ValidateReply(_, method string, raw []byte) ([]envelope.DistilledEntry, error) {
	return s.u.ValidateReply(method, raw)
}

// schemaGap says why v holds no schema of version, as the end of a skip
// reason that names the version first; "" when it holds one. The
// checker's own schemas hold every version, 2025-03-26 included (its own
// types, T-V0326-4: schema.ReplyVersions). A --schema file is the user's
// choice for every exchange, except that an official file recognised as
// another version's (schema.UserSchema.Revision) would blame the server
// for types its version does not have: in a recording of mixed
// versions, each exchange is held only to its own.
func schemaGap(v SchemaValidator, version string) string {
	if u, ok := v.(userSchema); ok {
		if r := u.u.Revision(); r != "" && r != version {
			return fmt.Sprintf("which the --schema file %s does not describe: it is the official %s schema", u.u.Path(), r)
		}
	}
	return ""
}

var ToolSchemas = &Check{
	ID:       "SCH1002",
	Title:    "Tool and elicitation schemas are valid JSON Schema",
	SpecRef:  "T-SCHEMA-1, T-SCHEMA-2, T-SCHEMA-4, T-SCHEMA-5, AMB-15",
	Severity: MUST,
	Area:     AreaSchema,
	Doc: `Every schema a server publishes compiles under its declared dialect
($schema), or JSON Schema 2020-12 when none is declared (T-SCHEMA-1,
T-SCHEMA-2): the inputSchema and outputSchema of each tool in a tools/list
result, and the requestedSchema of a form elicitation, whether the server
asks it in an elicitation/create request besides its response (2025-xx)
or in the inputRequests of an input_required result (2026-07-28; a
request a 2026-07-28 server sends is PRO1003's, T-LIFE-15). A schema that
does not compile cannot be used by any client to validate arguments,
results or the user's answer. The checker never
fetches a $ref: a reference outside the schema document makes the schema
unusable without a network fetch the spec forbids by default (T-SCHEMA-4,
T-SCHEMA-5), which warns; so does one whose $schema names a dialect the
checker does not know (T-SCHEMA-1 lets a server pick one; whether clients
know it is open). A schema beyond the checker's own bounds (1 MiB, 256
levels, two to a nested object; 10,000 subschemas, and their depths
summed at most 640,000; T-SCHEMA-6 lets a validator bound schemas) is
not judged: the verdict is error, unless another schema of the reply
fails. In 2025-06-18, which names no
dialect (AMB-15), a schema that fails to compile as 2020-12 only warns.
Patterns are ECMA-262 (read with the u flag) and translated for Go's
regexp; one it cannot express even so (lookahead, lookbehind,
back-references) does not make a schema invalid: it is read as matching
every string, and a value that fails after such a pattern was asked is
not surely invalid (SCH1003 warns). A pattern that is no ECMA-262
regular expression under any flags (an unterminated class or group, a
range out of order, unbalanced parentheses, a quantifier with nothing to
repeat) warns: JSON Schema says a pattern SHOULD be one, and libraries
differ on whether such a schema compiles at all. The MCP shape of these
schemas (an elicitation's flat primitive properties) is SCH1001's and
SCH1004's.`,
	Run: func(p *Pass) error {
		published, err := publishedSchemas(p)
		if err != nil {
			return err
		}
		if len(published) == 0 && p.Expect.Method != "tools/list" {
			return Skip("not a tools/list reply, and no elicitation in the reply asks for a requestedSchema")
		}
		var beyond error // the first schema beyond the checker's bounds
		failed := false
		for _, ps := range published {
			ts, cerr := p.ToolCache.Compile(ps.raw, ps.version)
			if cerr == nil {
				if bad := ts.NotECMA(); len(bad) > 0 {
					p.Deviate(expect.Want{Level: expect.Should, Rule: "JSON Schema 2020-12 Validation §6.3.3"}, ps.path,
						"%s has a pattern that is no ECMA-262 regular expression (%s), which a pattern should be; the checker reads it as matching every string", ps.what, strings.Join(bad, "; "))
				}
				continue
			}
			var why any = cerr
			if !ps.tool {
				// The compiler names every schema a tool schema.
				why = strings.TrimPrefix(cerr.Error(), "tool schema: ")
			}
			switch {
			case errors.Is(cerr, schema.ErrSchemaBounds):
				if beyond == nil {
					beyond = fmt.Errorf("%s is not judged: %w", ps.what, cerr)
				}
			case errors.Is(cerr, schema.ErrUnknownDialect):
				p.Warnf(ps.path, "%s names a dialect the checker does not know, so it is not judged (T-SCHEMA-1 lets a server choose its dialect; clients may not know it either): %v", ps.what, why)
			case errors.Is(cerr, schema.ErrExternalRef):
				p.Warnf(ps.path, "%s refers outside itself, which a client must not fetch by default: %v", ps.what, why)
			case ps.version == envelope.V20250618:
				p.Warnf(ps.path, "%s does not compile as JSON Schema 2020-12 (2025-06-18 names no dialect): %v", ps.what, why)
			default:
				p.Failf(ps.path, "%s is not a valid schema: %v", ps.what, why)
				failed = true
			}
		}
		if beyond != nil && !failed {
			// The checker's own limits: could not judge, never a finding
			// of the server (DESIGN). A schema that surely fails still
			// fails the reply.
			return beyond
		}
		return nil
	},
}

// A publishedSchema is a JSON Schema a server published in a reply: a
// tool's inputSchema or outputSchema, or a form elicitation's
// requestedSchema.
type publishedSchema struct {
	path    string // where it stands, as findings name it
	what    string // what it is, for messages
	raw     []byte
	version string // the version it is published under (its default dialect)
	tool    bool   // a tool's, not an elicitation's
}

// publishedSchemas gathers the schemas of the reply SCH1002 compiles.
// Members of the wrong type are left to the shape checks (SCH1001,
// SCH1004).
func publishedSchemas(p *Pass) ([]publishedSchema, error) {
	var out []publishedSchema
	var none error // why a tools/list reply has no tools to compile
	x := p.Expect
	if x.Method == "tools/list" {
		m, err := needObject(p)
		tools := gjson.Result{}
		if err == nil {
			tools = m.Get("result.tools")
		}
		switch {
		case err != nil:
			none = err
		case !tools.IsArray():
			none = Skip("the reply lists no tools")
		}
		for i, t := range tools.Array() {
			name := Quote(t.Get("name").Str, quoteN)
			for _, key := range []string{"inputSchema", "outputSchema"} {
				if s := t.Get(key); s.IsObject() {
					out = append(out, publishedSchema{fmt.Sprintf("result.tools.%d.%s", i, key), key + " of tool " + name, []byte(s.Raw), x.Version, true})
				}
			}
		}
	}
	out = append(out, elicitationSchemas(p)...)
	if len(out) == 0 && none != nil {
		return nil, none
	}
	return out, nil
}

// elicitationSchemas are the requestedSchemas of the form elicitations
// the reply asks for.
func elicitationSchemas(p *Pass) []publishedSchema {
	var out []publishedSchema
	x := p.Expect
	if p.Reply == nil {
		return nil
	}
	// Elicitations asked besides the response (2025-xx).
	version := messagesVersion(p)
	for i := range p.Reply.Messages {
		m := &p.Reply.Messages[i]
		if m == p.Reply.Response || !m.IsObject() || m.Get("method").Str != "elicitation/create" || !m.Get("id").Exists() {
			continue
		}
		if version == envelope.V20260728 {
			continue // a request in 2026-07-28: PRO1003's (T-LIFE-15)
		}
		if s := m.Get("params.requestedSchema"); s.IsObject() {
			out = append(out, publishedSchema{msgPath(p, i) + ".params.requestedSchema", "the requestedSchema of the elicitation/create request", []byte(s.Raw), version, false})
		}
	}
	// Elicitations an input_required result asks (2026-07-28).
	if r := p.Reply.Response; r != nil && r.IsObject() && x.Version == envelope.V20260728 && x.Condition != expect.CondLegacyInitialize &&
		r.Get("result.resultType").Str == "input_required" {
		r.Get("result.inputRequests").ForEach(func(k, v gjson.Result) bool {
			if v.Get("method").Str != "elicitation/create" {
				return true
			}
			if s := v.Get("params.requestedSchema"); s.IsObject() {
				out = append(out, publishedSchema{envelope.JoinPath("result.inputRequests", k.Str) + ".params.requestedSchema", "the requestedSchema of input request " + Quote(k.Str, quoteN), []byte(s.Raw), x.Version, false})
			}
			return true
		})
	}
	return out
}

var StructuredContent = &Check{
	ID:       "SCH1003",
	Title:    "A tool's structuredContent matches its outputSchema",
	SpecRef:  "T-TOOL-10, AMB-13, AMB-15",
	Severity: MUST,
	Area:     AreaSchema,
	Doc: `When a live run calls a tool that declares an outputSchema (with
--call-tools), the result carries structuredContent that validates against
that schema (T-TOOL-10, MUST); each violation is reported once per
location, distilled. The server SHOULD also put the serialised JSON in a
text block for older clients: its absence warns. Whether an isError result
must conform is not stated (AMB-13): one without structuredContent is not
judged, and one whose structuredContent breaks the schema warns. So does
a failure after a pattern the checker cannot read (lookahead,
back-references) was asked: read as matching every string, under not,
oneOf or patternProperties it makes the schema stricter than it is. In
2025-06-18, which names no dialect (AMB-15), an outputSchema without
$schema is read as 2020-12 and as draft-07 (where a $ref's siblings are
ignored): a value both reject fails, one only one rejects warns. A value
nested deeper than the outputSchema's recursion lets one validation stay
within the checker's work bound is not validated: the verdict says the
checker could not judge it, never a finding of the server.`,
	Run: func(p *Pass) error {
		t := p.Expect.Tool
		if t == nil || t.OutputSchema == nil {
			return Skip("no tool with an outputSchema was called with valid arguments")
		}
		if f := p.Expect.Facts; f != nil && f.Spoken == envelope.V20250326 {
			return Skip("the server speaks 2025-03-26, which has no structuredContent (T-V0326-4)")
		}
		m, err := needObject(p)
		if err != nil {
			return err
		}
		r := m.Get("result")
		isError := r.Get("isError").Type == gjson.True
		switch {
		case !r.IsObject():
			return Skip("the reply is not a result")
		case isError && !r.Get("structuredContent").Exists():
			return Skip("an isError result without structuredContent (AMB-13)")
		case p.Expect.Version == envelope.V20260728 && r.Get("resultType").Str == "input_required":
			// (Before 2026-07-28 resultType means nothing: the result is
			// a CallToolResult, and owes the output.)
			return Skip("an input_required result carries no output")
		case envelope.CreatedTask(&p.Expect.Request, r):
			// A task-augmented call (2025-11-25 tasks) answered with the
			// task it created: the output comes later, from tasks/result.
			return Skip("a task-augmented call answered with the task it created (CreateTaskResult) carries no output")
		case p.Expect.Version == envelope.V20260728 && r.Get("resultType").Exists() && r.Get("resultType").Str != "complete":
			// Another result type (an extension's, "task" say) is no
			// CallToolResult; PRO1002 judges whether it may come.
			return Skip("a result of another resultType than complete is no CallToolResult")
		}
		sc := r.Get("structuredContent")
		if !sc.Exists() {
			p.Failf("result.structuredContent", "the tool declares an outputSchema but the result has no structuredContent")
			return nil
		}
		ts, cerr := p.ToolCache.Compile(t.OutputSchema, p.Expect.Version)
		var entries []envelope.DistilledEntry
		var unsure string
		switch {
		case errors.Is(cerr, schema.ErrSchemaBounds):
			return fmt.Errorf("the result is not judged: the tool's outputSchema: %w", cerr)
		case cerr != nil && p.Expect.Version == envelope.V20250618 && !schema.Declared(t.OutputSchema):
			// Not a 2020-12 schema, but perhaps a draft-07 one (tuple
			// items, additionalItems), the other reading 2025-06-18
			// allows (AMB-15): what it rejects warns.
			d7, err := p.ToolCache.CompileDraft7(t.OutputSchema)
			switch {
			case errors.Is(err, schema.ErrSchemaBounds):
				return fmt.Errorf("the result is not judged: the tool's outputSchema: %w", err)
			case err != nil:
				return Skip("the tool's outputSchema does not compile (see SCH1002)")
			}
			entries, err = d7.Validate([]byte(sc.Raw))
			if err = unsureOf(err, &unsure); err != nil {
				return err // beyond the validator's bounds: could not judge
			}
			unsure = cmp.Or(unsure, "AMB-15: read as draft-07, which 2025-06-18 allows for a schema without $schema; it is no 2020-12 schema")
		case cerr != nil:
			return Skip("the tool's outputSchema does not compile (see SCH1002)")
		default:
			var err error
			if entries, unsure, err = structuredProblems(p, ts, t.OutputSchema, []byte(sc.Raw)); err != nil {
				return err // beyond the validator's bounds: could not judge
			}
		}
		report := p.Failf
		switch {
		case unsure != "":
			report = func(path, format string, args ...any) {
				p.Warnf(path, format+" (%s)", append(args, unsure)...)
			}
		case isError:
			// Whether an error result's structuredContent must conform is
			// not stated (AMB-13): a mismatch warns.
			report = func(path, format string, args ...any) {
				p.Warnf(path, format+" (AMB-13: an isError result's structuredContent is not said to conform)", args...)
			}
		}
		for _, e := range entries {
			for _, pr := range e.Problems {
				report("result.structuredContent"+strings.ReplaceAll(e.Location, "/", "."), "%s", pr)
			}
		}
		if isError {
			return nil
		}
		if !hasJSONText(r.Get("content"), sc) {
			p.Warnf("result.content", "no text block carries the structuredContent as JSON, for clients that do not read it")
		}
		return nil
	},
}

// structuredProblems validates structuredContent against the outputSchema
// under every reading the version allows. unsure says why the problems
// only warn: a pattern the checker cannot read was asked (read as
// matching every string, it may make the schema stricter than it is), or,
// in 2025-06-18, whose schemas without $schema may be 2020-12 or draft-07
// (AMB-15), only one reading rejects the value; then the problems are
// that reading's. err: beyond the validator's bounds.
func structuredProblems(p *Pass, ts *schema.ToolSchema, raw, sc []byte) (entries []envelope.DistilledEntry, unsure string, err error) {
	entries, err = ts.Validate(sc)
	if err = unsureOf(err, &unsure); err != nil {
		return nil, "", err
	}
	if p.Expect.Version != envelope.V20250618 || schema.Declared(raw) {
		return entries, unsure, nil
	}
	d7, cerr := p.ToolCache.CompileDraft7(raw)
	if cerr != nil {
		return entries, unsure, nil // no draft-07 schema: 2020-12 is the one reading
	}
	e7, err := d7.Validate(sc)
	var unsure7 string
	if err = unsureOf(err, &unsure7); err != nil {
		return nil, "", err
	}
	switch {
	case len(entries) > 0 && len(e7) > 0:
		return entries, cmp.Or(unsure, unsure7), nil
	case len(entries) > 0:
		return entries, "AMB-15: valid read as draft-07, which 2025-06-18 allows for a schema without $schema", nil
	case len(e7) > 0:
		return e7, "AMB-15: invalid only read as draft-07, which 2025-06-18 allows for a schema without $schema; valid as 2020-12", nil
	}
	return nil, "", nil
}

// unsureOf turns a validation error that only makes the problems unsure
// into the reason they are, and returns any other.
func unsureOf(err error, unsure *string) error {
	if errors.Is(err, schema.ErrUnreadablePattern) {
		*unsure = fmt.Sprintf("not sure: %v, read as matching every string", err)
		return nil
	}
	return err
}

// hasJSONText: some text block parses to the same JSON value.
func hasJSONText(content, sc gjson.Result) bool {
	for _, c := range content.Array() {
		if t := c.Get("text"); t.Type == gjson.String && gjson.Valid(t.Str) && envelope.SameValue(gjson.Parse(t.Str), sc) {
			return true
		}
	}
	return false
}
