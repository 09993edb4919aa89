package schema

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The official MCP schemas and examples are test data that live outside
// the module (../shared/mcp-schema); CI always has them.
const schemaDirEnv = "WYMCP_MCP_SCHEMA_DIR"

func officialDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(schemaDirEnv)
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "mcp-schema")
	}
	if _, err := os.Stat(filepath.Join(dir, "2026-07-28.schema.json")); err != nil {
		t.Skipf("official MCP schemas not found: set %s to the mcp-schema directory (%v)", schemaDirEnv, err)
	}
	return dir
}

// official compiles $defs types of one official schema file.
type official struct {
	url      string
	defsKey  string
	compiler *jsonschema.Compiler
	cache    map[string]*jsonschema.Schema
	names    []string // the $defs types, sorted
}

func loadOfficial(t testing.TB, version string) *official {
	t.Helper()
	dir := officialDir(t)
	raw, err := os.ReadFile(filepath.Join(dir, version+".schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := decode(raw)
	if err != nil {
		t.Fatalf("%s: %v", version, err)
	}
	o := &official{
		url:      "mem://official/" + version + ".json",
		defsKey:  "$defs",
		compiler: newCompiler(jsonschema.Draft2020),
		cache:    map[string]*jsonschema.Schema{},
	}
	if _, ok := doc.(map[string]any)["definitions"]; ok {
		o.defsKey = "definitions"
	}
	if defs, ok := doc.(map[string]any)[o.defsKey].(map[string]any); ok {
		o.names = slices.Sorted(maps.Keys(defs))
	}
	if err := o.compiler.AddResource(o.url, doc); err != nil {
		t.Fatal(err)
	}
	return o
}

// compile is the official type, as {"$ref":"#/$defs/<name>"} would be.
func (o *official) compile(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	if s, ok := o.cache[name]; ok {
		return s
	}
	s, err := o.compiler.Compile(o.url + "#/" + o.defsKey + "/" + name)
	if err != nil {
		t.Fatalf("official %s: %v", name, err)
	}
	o.cache[name] = s
	return s
}

// eachOfficialType calls f with every $defs type of every official
// schema file, compiled.
func eachOfficialType(t testing.TB, f func(version, name string, s *jsonschema.Schema)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(officialDir(t), "*.schema.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no official schemas: %v", err)
	}
	for _, file := range files {
		v := strings.TrimSuffix(filepath.Base(file), ".schema.json")
		o := loadOfficial(t, v)
		for _, name := range o.names {
			f(v, name, o.compile(t, name))
		}
	}
}

// ours compiles $defs types of this package's schema of one version.
type ours struct {
	p        *protocolDoc
	compiler *jsonschema.Compiler
	cache    map[string]*jsonschema.Schema
}

func loadOurs(t testing.TB, version string) *ours {
	t.Helper()
	p, err := loadProtocol(version)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.compiler()
	if err != nil {
		t.Fatal(err)
	}
	return &ours{p: p, compiler: c, cache: map[string]*jsonschema.Schema{}}
}

func (o *ours) compile(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	if s, ok := o.cache[name]; ok {
		return s
	}
	s, err := o.p.compileDef(o.compiler, name)
	if err != nil {
		t.Fatal(err)
	}
	o.cache[name] = s
	return s
}

// example is one official example file.
type example struct {
	typeName string
	file     string
	value    any
}

func loadExamples(t testing.TB) []example {
	t.Helper()
	dir := filepath.Join(officialDir(t), "examples-2026-07-28")
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples under %s (%v)", dir, err)
	}
	sort.Strings(files)
	var out []example
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, example{
			typeName: filepath.Base(filepath.Dir(f)),
			file:     filepath.Base(f),
			value:    v,
		})
	}
	return out
}

// A mutation is one systematic change to an example.
type mutation struct {
	op    string // drop, retype, null, token, empty
	path  string // JSON Pointer of the changed value
	value any    // the whole mutated instance
}

// mutations derives, for every value inside v: dropping it (members of
// objects), changing its JSON type, replacing it by null, replacing a
// string (an enum or const value, or free text) by an unknown token, and
// emptying a non-empty array.
func mutations(v any) []mutation {
	var out []mutation
	var walk func(cur any, path []string)
	walk = func(cur any, path []string) {
		at := func(op string, repl any, drop bool) {
			out = append(out, mutation{op: op, path: pointer(path), value: replaceAt(v, path, repl, drop)})
		}
		if len(path) > 0 {
			if _, isObjMember := parentIsObject(v, path); isObjMember {
				at("drop", nil, true)
			}
		}
		at("retype", otherType(cur), false)
		if cur != nil {
			at("null", nil, false)
		}
		switch c := cur.(type) {
		case string:
			at("token", "zz-unknown-value", false)
		case []any:
			if len(c) > 0 {
				at("empty", []any{}, false)
			}
			for i, e := range c {
				walk(e, append(clonePath(path), strconv.Itoa(i)))
			}
		case map[string]any:
			keys := make([]string, 0, len(c))
			for k := range c {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(c[k], append(clonePath(path), k))
			}
		}
	}
	walk(v, nil)
	return out
}

func clonePath(p []string) []string { return append([]string(nil), p...) }

// otherType is a value of a different JSON type; integers are used for
// numbers so that the official schema's number quirks stay out of it.
func otherType(v any) any {
	switch v.(type) {
	case string:
		return json.Number("42")
	case json.Number:
		return "42"
	case bool:
		return "true"
	case []any:
		return map[string]any{}
	case map[string]any:
		return "x"
	default:
		return "x"
	}
}

func parentIsObject(root any, path []string) (map[string]any, bool) {
	cur := root
	for _, tok := range path[:len(path)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, _ := strconv.Atoi(tok)
			cur = c[i]
		}
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

// replaceAt returns a deep copy of root with the value at path replaced by
// repl, or removed when drop is set.
func replaceAt(root any, path []string, repl any, drop bool) any {
	if len(path) == 0 {
		return repl
	}
	switch c := root.(type) {
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, v := range c {
			out[k] = v
		}
		if len(path) == 1 && drop {
			delete(out, path[0])
			return out
		}
		out[path[0]] = replaceAt(c[path[0]], path[1:], repl, drop)
		return out
	case []any:
		out := append([]any(nil), c...)
		i, _ := strconv.Atoi(path[0])
		out[i] = replaceAt(c[i], path[1:], repl, drop)
		return out
	}
	return root
}

// officialDefs lists the type names an official schema file defines.
func officialDefs(t testing.TB, version string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(officialDir(t), version+".schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		// $schema is a string, not a map: decode the two keys we want.
		var loose struct {
			Defs        map[string]json.RawMessage `json:"$defs"`
			Definitions map[string]json.RawMessage `json:"definitions"`
		}
		if err := json.Unmarshal(raw, &loose); err != nil {
			t.Fatal(err)
		}
		doc = map[string]map[string]json.RawMessage{"$defs": loose.Defs, "definitions": loose.Definitions}
	}
	out := map[string]bool{}
	for _, key := range []string{"$defs", "definitions"} {
		for name := range doc[key] {
			out[name] = true
		}
	}
	return out
}
