package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wymcp/wymcp-check/envelope"
)

// Recursive schemas for TestRecursionBounded: one whose recursion fans
// out (two alternatives at one place recurse into the same member, and
// neither passes a leaf without it: every level doubles the work), and
// the realistic ones it must not catch.
const (
	fanoutRecursion = `{"$defs":{"A":{"anyOf":[
		{"properties":{"p":{"$ref":"#/$defs/A"}},"required":["p"]},
		{"properties":{"p":{"$ref":"#/$defs/A"}},"required":["p"]}]}},
		"$ref":"#/$defs/A"}`
	jsonValueSchema = `{"$defs":{"v":{"anyOf":[
		{"type":"string","maxLength":8},{"type":"number"},{"type":"boolean"},{"type":"null"},
		{"type":"array","items":{"$ref":"#/$defs/v"}},
		{"type":"object","additionalProperties":{"$ref":"#/$defs/v"}}]}},
		"$ref":"#/$defs/v"}`
	treeSchema = `{"$defs":{"node":{"type":"object","required":["value"],"properties":{
		"value":{"type":"integer"},"left":{"$ref":"#/$defs/node"},"right":{"$ref":"#/$defs/node"}},
		"additionalProperties":false}},"$ref":"#/$defs/node"}`
)

// nest wraps leaf in levels of wrap, whose %s is the level below.
func nest(levels int, wrap, leaf string) string {
	s := leaf
	for range levels {
		s = strings.Replace(wrap, "%s", s, 1)
	}
	return s
}

// TestRecursionBounded: an instance deep enough that a schema's
// recursion would make its validation visit more than maxSchemaVisits
// subschemas is not validated (could not judge), as a tool's schema and
// as a --schema file's type; before the bound, 40 levels of the fan-out
// took 2^40 visits and hung the run, and the test only has to end. The
// twins: realistic recursive schemas validate instances 20 levels deep
// and still find what breaks them.
func TestRecursionBounded(t *testing.T) {
	realistic, err := os.ReadFile(filepath.Join("testdata", "tool", "realistic.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Ten filters nested by and/or: 21 levels with the arguments' own.
	filter := func(leaf string) string {
		return `{"database_id":"0123456789abcdef0123456789abcdef","filter":` +
			nest(5, `{"and":[{"or":[%s,{"property":"Done","checkbox":{"equals":true}}]}]}`, leaf) + `}`
	}
	const (
		refused = "refused"
		valid   = "valid"
		invalid = "invalid"
	)
	for _, tc := range []struct {
		name, schema, instance string
		want                   string
		problem                string // the first problem of an invalid one
	}{
		{"fan-out, 40 levels", fanoutRecursion, nest(40, `{"p":%s}`, `{}`), refused, ""},
		{"fan-out, 22 levels", fanoutRecursion, nest(22, `{"p":%s}`, `{}`), refused, ""},
		{"fan-out, 4 levels, validated", fanoutRecursion, nest(4, `{"p":%s}`, `{}`), invalid, "at /p/p/p/p: missing property 'p'"},
		{"json value, 20 levels", jsonValueSchema, nest(10, `{"a":[%s,1,null]}`, `"leaf"`), valid, ""},
		{"json value, 20 levels, a long string", jsonValueSchema, nest(10, `{"a":[%s,1,null]}`, `"too long a leaf"`), invalid, ""},
		{"json value, 512 levels", jsonValueSchema, nest(256, `{"a":[%s]}`, `1`), valid, ""},
		{"tree, 20 levels", treeSchema, nest(20, `{"value":1,"left":%s,"right":{"value":2}}`, `{"value":3}`), valid, ""},
		{"tree, 20 levels, a leaf without its value", treeSchema, nest(20, `{"value":1,"right":%s}`, `{"left":{"value":3}}`), invalid, ""},
		{"realistic filter, 21 levels", string(realistic), filter(`{"property":"Name","title":{"contains":"x"}}`), valid, ""},
		{"realistic filter, 21 levels, a bad date", string(realistic), filter(`{"property":"Due","date":{"before":1}}`), invalid, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := CompileToolSchema([]byte(tc.schema), envelope.V20260728)
			if err != nil {
				t.Fatal(err)
			}
			probs, err := ts.Validate([]byte(tc.instance))
			got := valid
			switch {
			case errors.Is(err, ErrBeyondBounds):
				got = refused
			case err != nil:
				t.Fatalf("error: %v", err)
			case len(probs) > 0:
				got = invalid
			}
			if got != tc.want {
				t.Fatalf("%s, want %s (problems %v, err %v)", got, tc.want, probs, err)
			}
			if tc.problem != "" {
				if diff := cmp.Diff(tc.problem, FirstProblem(probs)); diff != "" {
					t.Errorf("first problem (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestRecursionBoundedUserSchema: the same bound for a --schema file's
// types, the message's and the result's, with its twin.
func TestRecursionBoundedUserSchema(t *testing.T) {
	const (
		hostile = `{"$defs":{
			"JSONRPCMessage":{"type":"object","properties":{"error":{"$ref":"#/$defs/A"}}},
			"A":{"anyOf":[
				{"properties":{"p":{"$ref":"#/$defs/A"}},"required":["p"]},
				{"properties":{"p":{"$ref":"#/$defs/A"}},"required":["p"]}]}}}`
		jsonValue = `{"$defs":{
			"JSONRPCMessage":{"type":"object","required":["jsonrpc"]},
			"CallToolResult":{"properties":{"structuredContent":{"$ref":"#/$defs/V"}}},
			"V":{"anyOf":[
				{"type":"string","maxLength":8},{"type":"number"},{"type":"boolean"},{"type":"null"},
				{"type":"array","items":{"$ref":"#/$defs/V"}},
				{"type":"object","additionalProperties":{"$ref":"#/$defs/V"}}]}}}`
	)
	result := func(sc string) string { return `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":` + sc + `}}` }
	for _, tc := range []struct {
		name, file, reply string
		want              string // the error, "" for none
		problems          int
	}{
		{"fan-out in the message, 40 levels", hostile, `{"jsonrpc":"2.0","id":1,"error":` + nest(40, `{"p":%s}`, `{}`) + `}`,
			"beyond what the checker validates: a value nested 42 levels deep, where the schema's recursion would make its validation visit more than 131072 subschemas", 0},
		{"fan-out in the message, 4 levels", hostile, `{"jsonrpc":"2.0","id":1,"error":` + nest(4, `{"p":%s}`, `{}`) + `}`, "", 1},
		{"json value in the result, 20 levels", jsonValue, result(nest(9, `{"a":[%s]}`, `"x"`)), "", 0},
		{"json value in the result, a long string", jsonValue, result(nest(9, `{"a":[%s]}`, `"too long a leaf"`)), "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "schema.json")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			u, err := LoadUserSchema(path, map[string]string{"tools/call": "CallToolResult"})
			if err != nil {
				t.Fatal(err)
			}
			probs, err := u.ValidateReply("tools/call", []byte(tc.reply))
			var got string
			if err != nil {
				got = err.Error()
				if !errors.Is(err, ErrBeyondBounds) {
					t.Errorf("errors.Is(err, ErrBeyondBounds) is false: %v", err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if len(probs) != tc.problems {
				t.Errorf("problems %v, want %d", probs, tc.problems)
			}
		})
	}
}

// TestRecursionOfficial: every type of the official schemas (JSONValue
// recurses in 2026-07-28) validates instances as deep as the checker
// reads them.
func TestRecursionOfficial(t *testing.T) {
	eachOfficialType(t, func(version, name string, sch *jsonschema.Schema) {
		if err := checkDepth(newRecursion(sch), maxJSONDepth); err != nil {
			t.Errorf("%s: %s: %v", version, name, err)
		}
	})
}
