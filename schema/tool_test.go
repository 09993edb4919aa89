package schema

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPatternsRE2CannotRead: an ECMA-262 pattern Go's regexp cannot
// compile (the lookahead zod emits) compiles, and is not enforced: the
// checker cannot tell which strings it allows. A pattern RE2 reads is
// enforced as ever.
func TestPatternsRE2CannotRead(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		value   string
		valid   bool
	}{
		{`^(?=.*\\d)(?=.*[a-z]).{8,}$`, `"short"`, true},
		{`(?<=@)example\\.com$`, `"x"`, true},
		{`^(a)\\1$`, `"ab"`, true},
		{`(unclosed`, `"x"`, true},
		{`^[a-z]+$`, `"abc"`, true},
		{`^[a-z]+$`, `"ABC"`, false},
	} {
		ts, err := CompileToolSchema([]byte(`{"type":"string","pattern":"`+tc.pattern+`"}`), "2026-07-28")
		if err != nil {
			t.Fatalf("pattern %s: %v", tc.pattern, err)
		}
		probs, err := ts.Validate([]byte(tc.value))
		if err != nil || (len(probs) == 0) != tc.valid {
			t.Errorf("pattern %s, value %s: problems %v (err %v), want valid %v", tc.pattern, tc.value, probs, err, tc.valid)
		}
	}
}

func TestCompileToolSchemaErrors(t *testing.T) {
	deep := strings.Repeat(`{"items":`, maxSchemaDepth+1) + `{}` + strings.Repeat(`}`, maxSchemaDepth+1)
	wide := `{"anyOf":[` + repeatJSON(`{}`, maxSchemaSubschemas+1) + `]}`
	huge := `{"description":"` + strings.Repeat("x", maxSchemaBytes) + `"}`
	cases := []struct {
		name, schema, version, want string
		external                    bool
	}{
		{"network $ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/schemas/a.json"}}}`, "2026-07-28",
			`tool schema: external $ref not fetched: 'https://example.com/schemas/a.json'`, true},
		{"http $ref to a metadata address", `{"$ref":"http://169.254.169.254/latest/meta-data"}`, "2025-11-25",
			`tool schema: external $ref not fetched: 'http://169.254.169.254/latest/meta-data'`, true},
		{"file $ref", `{"$ref":"file:///etc/passwd"}`, "2025-06-18",
			`tool schema: external $ref not fetched: 'file:///etc/passwd'`, true},
		{"relative $ref", `{"$ref":"other.json#/$defs/x"}`, "2026-07-28",
			`tool schema: external $ref not fetched: 'other.json'`, true},
		{"$ref under a foreign $id", `{"$id":"https://example.com/root.json","$ref":"leaf.json"}`, "2026-07-28",
			`tool schema: external $ref not fetched: 'https://example.com/leaf.json'`, true},
		{"missing local $ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}`, "2026-07-28",
			`tool schema: $ref target '#/$defs/nope' not found`, false},
		{"bad type", `{"type":"object","properties":{"a":{"type":12}}}`, "2026-07-28",
			`tool schema: not a valid schema: at /properties/a/type: must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'`, false},
		{"bad required", `{"type":"object","required":"a"}`, "2026-07-28",
			`tool schema: not a valid schema: at /required: got string, want array`, false},
		{"draft-07 tuple items under 2020-12", `{"type":"object","properties":{"a":{"items":[{"type":"string"}]}}}`, "2026-07-28",
			`tool schema: not a valid schema: at /properties/a/items: got array, want boolean or object`, false},
		{"unknown dialect", `{"$schema":"https://example.com/my-dialect","type":"object"}`, "2026-07-28",
			`tool schema: unsupported $schema dialect 'https://example.com/my-dialect'`, false},
		{"not json", `{"type":`, "2026-07-28", `tool schema: not valid json`, false},
		{"too deep", deep, "2026-07-28", `tool schema: schema exceeds the checker's bounds: nested deeper than 256 levels`, false},
		{"too deep in all", string(deepSchema(100, 6000)), "2026-07-28", `tool schema: schema exceeds the checker's bounds: subschemas nested more than 640000 levels deep in all`, false},
		{"too many subschemas", wide, "2026-07-28", `tool schema: schema exceeds the checker's bounds: more than 10000 subschemas`, false},
		{"too large", huge, "2026-07-28", `tool schema: schema exceeds the checker's bounds: larger than 1048576 bytes`, false},
		{"unknown version", `{}`, "2024-11-05", `tool schema: unknown protocol version "2024-11-05"`, false},
	}
	var cache ToolCache
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := CompileToolSchema([]byte(c.schema), c.version)
			if err == nil {
				t.Fatal("compiled")
			}
			// A cache gives the same error, compiled or remembered.
			for range 2 {
				_, cerr := cache.Compile([]byte(c.schema), c.version)
				if cerr == nil || cerr.Error() != err.Error() || errors.Is(cerr, ErrExternalRef) != c.external || errors.Is(cerr, ErrSchemaBounds) != errors.Is(err, ErrSchemaBounds) {
					t.Errorf("cached error %v, want %v", cerr, err)
				}
			}
			if got := err.Error(); got != c.want {
				t.Errorf("error\n got %s\nwant %s", got, c.want)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if got := errors.Is(err, ErrExternalRef); got != c.external {
				t.Errorf("errors.Is(err, ErrExternalRef) = %v, want %v", got, c.external)
			}
		})
	}
}

// A ToolCache remembers a compiled schema per version, and keeps no more
// than its bound.
func TestToolCache(t *testing.T) {
	raw := []byte(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`)
	var c ToolCache
	a, err1 := c.Compile(raw, "2026-07-28")
	b, err2 := c.Compile(raw, "2026-07-28")
	if err1 != nil || err2 != nil || a != b {
		t.Fatalf("compiled %p, %v then %p, %v; want one schema, remembered", a, err1, b, err2)
	}
	if d, _ := c.Compile(raw, "2025-06-18"); d == a {
		t.Error("another version shares the schema compiled for 2026-07-28")
	}
	if es, err := b.Validate([]byte(`{}`)); err != nil || len(es) == 0 {
		t.Errorf("the remembered schema accepts {}: %v, %v", es, err)
	}
	var nilCache *ToolCache
	if _, err := nilCache.Compile(raw, "2026-07-28"); err != nil {
		t.Errorf("a nil cache: %v", err)
	}
	full := ToolCache{bytes: maxCachedSchemaBytes}
	full.Compile(raw, "2026-07-28")
	if len(full.m) != 0 {
		t.Error("a full cache kept another schema")
	}
}

// Callers that compile the same schema at once (lint's workers) all get
// the one kept, and its bytes count once against the bound.
func TestToolCacheConcurrent(t *testing.T) {
	raw := []byte(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`)
	var c ToolCache
	start := make(chan struct{})
	got := make([]*ToolSchema, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			<-start
			got[i], _ = c.Compile(raw, "2026-07-28")
		})
	}
	close(start)
	wg.Wait()
	for i, ts := range got {
		if ts != got[0] {
			t.Fatalf("caller %d got schema %p, caller 0 %p; want the one kept", i, ts, got[0])
		}
	}
	if c.bytes != len(raw) {
		t.Errorf("the cache counts %d bytes for one schema of %d", c.bytes, len(raw))
	}
}

func TestToolSchemaValidate(t *testing.T) {
	cases := []struct {
		name, schema, instance string
		want                   entries
	}{
		{"default dialect is 2020-12", `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"}],"items":false}}}`,
			`{"p":["a",1]}`,
			entries{{Location: "/p/1", Problems: []string{"not allowed"}}}},
		{"draft-07 honoured", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"p":{"type":"array","items":[{"type":"string"}],"additionalItems":false}}}`,
			`{"p":["a",1]}`,
			entries{{Location: "/p", Problems: []string{"1 more item than allowed"}}}},
		{"local $defs", `{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}},"required":["n"],"$defs":{"n":{"type":"integer","minimum":1}}}`,
			`{"n":0}`,
			entries{{Location: "/n", Problems: []string{"must be >= 1"}}}},
		{"valid", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"a":"x"}`, nil},
		{"not json", `{"type":"object"}`, `{"a":`, entries{{Location: "", Problems: []string{"not valid json"}}}},
		// "dependencies" is no 2020-12 keyword (review rev54); a property
		// of that name, and a value holding it, stay as they are.
		{"dependencies no keyword", `{"type":"object","dependencies":{"a":["b"]}}`, `{"a":1}`, nil},
		{"dependencies as a name", `{"type":"object","properties":{"dependencies":{"type":"string"}},"$defs":{"dependencies":{"type":"integer"}}}`,
			`{"dependencies":1}`,
			entries{{Location: "/dependencies", Problems: []string{"got number, want string"}}}},
		{"dependencies in a value", `{"const":{"dependencies":{"a":["b"]}}}`, `{}`,
			entries{{Location: "", Problems: []string{"must equal the allowed value"}}}},
		{"dependencies under draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"a":["b"]}}`, `{"a":1}`,
			entries{{Location: "", Problems: []string{"property 'a' requires 'b'"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts, err := CompileToolSchema([]byte(c.schema), "2026-07-28")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, valid(t)(ts.Validate([]byte(c.instance)))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolSchemaDialect(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"object"}`: "https://json-schema.org/draft/2020-12/schema",
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`: "http://json-schema.org/draft-07/schema#",
	} {
		ts, err := CompileToolSchema([]byte(schema), "2025-11-25")
		if err != nil {
			t.Fatal(err)
		}
		if ts.Dialect() != want {
			t.Errorf("Dialect() = %q, want %q", ts.Dialect(), want)
		}
	}
}
