package schema

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wymcp/wymcp-check/envelope"
)

// fanoutDefs are levels $defs L0…L(levels-1), each referring twice to
// the next ({"anyOf":[L+1, {"allOf":[L+1, string]}]}), and a last one no
// object passes: a validation of an object visits about 3·2^levels
// subschemas (review rev29 finding 1, at 40 levels).
func fanoutDefs(levels int) string {
	var defs []string
	for i := range levels {
		defs = append(defs, fmt.Sprintf(`"L%d":{"anyOf":[{"$ref":"#/$defs/L%d"},{"allOf":[{"$ref":"#/$defs/L%d"},{"type":"string"}]}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"L%d":{"not":{"type":"object"}}`, levels))
	return strings.Join(defs, ",")
}

// TestFanoutSchemaRefused: a schema whose references fan out is refused
// when it is loaded, before any validation, as a --schema file and as a
// tool's inputSchema; before the bound, either hung the run. The test
// only has to end.
func TestFanoutSchemaRefused(t *testing.T) {
	tool := `{"type":"object","$defs":{` + fanoutDefs(40) + `},"properties":{"a":{"$ref":"#/$defs/L0"}}}`
	user := filepath.Join("testdata", "user", "fanout.json")
	for _, tc := range []struct {
		name string
		load func() error
		want string
	}{
		{"tool inputSchema", func() error { _, err := CompileToolSchema([]byte(tool), envelope.V20260728); return err },
			"tool schema: schema exceeds the checker's bounds: its references make one validation visit more than 131072 subschemas"},
		{"tool schema read as draft-07", func() error { _, err := CompileToolSchemaDraft7([]byte(tool)); return err },
			"tool schema: schema exceeds the checker's bounds: its references make one validation visit more than 131072 subschemas"},
		{"--schema file", func() error { _, err := LoadUserSchema(user, nil); return err },
			"schema file " + user + ": JSONRPCMessage: schema exceeds the checker's bounds: its references make one validation visit more than 131072 subschemas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.load()
			if err == nil {
				t.Fatal("loaded")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if !errors.Is(err, ErrSchemaBounds) {
				t.Errorf("errors.Is(err, ErrSchemaBounds) is false: %v", err)
			}
		})
	}
}

// TestSchemaVisits pins the count on small schemas: references are
// followed as often as they are made, and a cycle counts once.
func TestSchemaVisits(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         uint64
	}{
		{"leaf", `{"type":"string"}`, 1},
		{"boolean members", `{"allOf":[true,false]}`, 3},
		{"one level of fan-out", `{"$defs":{` + fanoutDefs(1) + `},"$ref":"#/$defs/L0"}`, 1 + (1 + (1 + 2) + (1 + (1 + 2) + 1))},
		{"fan-out doubles", `{"$defs":{` + fanoutDefs(10) + `},"$ref":"#/$defs/L0"}`, 7164},
		{"a reference made twice counts twice", `{"$defs":{"x":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/x"},"b":{"$ref":"#/$defs/x"}}}`, 5},
		{"recursion counts once", `{"$defs":{"node":{"properties":{"kids":{"items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`, 5},
		{"a loop in place counts once", `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, 4},
		// (It may resolve to the root, an enclosing schema: a recursion.)
		{"$dynamicRef into the schema it is in counts once", `{"$id":"mem://wymcp/d.json","$dynamicAnchor":"n","$defs":{"small":{"$id":"small.json","$dynamicAnchor":"n"}},"properties":{"a":{"$dynamicRef":"small.json#n"}},"allOf":[{"type":"object"},{"type":"object"}]}`, 1 + 2 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCompiler(jsonschema.Draft2020)
			doc, err := decode([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.AddResource(toolSchemaURL, doc); err != nil {
				t.Fatal(err)
			}
			sch, err := c.Compile(toolSchemaURL)
			if err != nil {
				t.Fatal(err)
			}
			if got := schemaVisits(sch, maxSchemaVisits); got != tc.want {
				t.Errorf("visits %d, want %d", got, tc.want)
			}
		})
	}
}

// TestSchemaVisitsOfficial: the twins of TestFanoutSchemaRefused. Every
// official schema loads as a --schema file and every type of it unfolds
// far below the bound (the bound's margin: 64 times the largest); a
// realistic large tool schema, recursive, compiles and validates.
func TestSchemaVisitsOfficial(t *testing.T) {
	dir := officialDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.schema.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no official schemas in %s: %v", dir, err)
	}
	for _, f := range files {
		if _, err := LoadUserSchema(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	var most uint64
	eachOfficialType(t, func(_, _ string, sch *jsonschema.Schema) {
		most = max(most, schemaVisits(sch, maxSchemaVisits))
	})
	if most*64 > maxSchemaVisits {
		t.Errorf("an official type unfolds to %d visits: the bound %d leaves less than 64 times that", most, maxSchemaVisits)
	}

	raw, err := os.ReadFile(filepath.Join("testdata", "tool", "realistic.json"))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := CompileToolSchema(raw, envelope.V20260728)
	if err != nil {
		t.Fatal(err)
	}
	good := `{"database_id":"0123456789abcdef0123456789abcdef","filter":{"or":[{"property":"Done","checkbox":{"equals":true}},{"and":[{"property":"Due","date":{"before":"2025-01-01"}},{"property":"Name","title":{"contains":"x"}}]}]},"sorts":[{"timestamp":"created_time","direction":"descending"}]}`
	bad := `{"database_id":"nope","filter":{"or":[{"and":[{"property":"Due","date":{"before":1}}]}]}}`
	for _, tc := range []struct {
		args  string
		valid bool
	}{{good, true}, {bad, false}} {
		probs, err := ts.Validate([]byte(tc.args))
		if err != nil || (len(probs) == 0) != tc.valid {
			t.Errorf("%s: problems %v (err %v), want valid %v", tc.args, probs, err, tc.valid)
		}
	}
}
