package schema

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestLoadUserSchemaErrors(t *testing.T) {
	dir := filepath.Join("testdata", "user")
	cases := []struct {
		file, want string
	}{
		{"missing.json", "no such file or directory"},
		{"truncated.json", ": not valid json: line 1, column 11 (byte offset 10): unexpected end of JSON input"},
		{"syntax.json", ": not valid json: line 3, column 3 (byte offset 87): invalid character '\"' after object key:value pair"},
		{"bad-pattern.json", ": pattern '(a' at /$defs/JSONRPCMessage/properties/id/pattern is no ECMA-262 regular expression: missing closing )"},
		{"fanout.json", ": JSONRPCMessage: schema exceeds the checker's bounds: its references make one validation visit more than 131072 subschemas"},
		{"no-entry.json", ": no JSONRPCMessage in $defs or definitions"},
		{"bad-type.json", ": JSONRPCMessage: not a valid schema: at /$defs/JSONRPCMessage/type: must be one of"},
		{"external-ref.json", ": JSONRPCMessage: external $ref not fetched: 'https://example.com/mcp/schema.json'"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.file)
		_, err := LoadUserSchema(path, nil)
		if err == nil {
			t.Errorf("%s: loaded", c.file)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "schema file "+path) || !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q, want the file name and %q", c.file, msg, c.want)
		}
		if strings.ContainsAny(msg, "\r\n") {
			t.Errorf("%s: error is not one line: %q", c.file, msg)
		}
	}
	// A file that never ends is read no further than the bound.
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := LoadUserSchema("/dev/zero", nil)
		if want := "schema file /dev/zero: /dev/zero runs past 16777216 bytes: read no further"; err == nil || err.Error() != want {
			t.Errorf("/dev/zero: error %v, want %s", err, want)
		}
	}
	_, err := LoadUserSchema(filepath.Join(dir, "external-ref.json"), nil)
	if !errors.Is(err, ErrExternalRef) {
		t.Errorf("external $ref: errors.Is(err, ErrExternalRef) is false: %v", err)
	}
}

func TestUserSchemaValidateReply(t *testing.T) {
	u, err := LoadUserSchema(filepath.Join("testdata", "user", "minimal.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		method, reply string
		want          entries
	}{
		{"tools/list", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}`, nil},
		{"tools/list", `{"jsonrpc":"2.0","id":1.5,"result":{"tools":[{}]}}`, entries{
			{Location: "/id", Problems: []string{"got number, want integer or string"}},
			{Location: "/result/tools/0", Problems: []string{"missing property 'name'"}},
		}},
		{"prompts/list", `{"jsonrpc":"2.0","id":1,"result":{"whatever":1}}`, nil},
		{"tools/list", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"result":{}}`, nil},
		{"tools/list", `nope`, entries{{Location: "", Problems: []string{"not valid json"}}}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, valid(t)(u.ValidateReply(c.method, []byte(c.reply)))); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", c.method, c.reply, diff)
		}
	}
	if u.Path() != filepath.Join("testdata", "user", "minimal.json") {
		t.Errorf("Path() = %q", u.Path())
	}
}

// TestUserSchemaOfficial loads the official schemas as --schema files:
// the 2020-12 ones and the draft-07 one (definitions, $schema honoured).
func TestUserSchemaOfficial(t *testing.T) {
	dir := officialDir(t)
	cases := []struct {
		version, method, reply string
		want                   entries
	}{
		{"2026-07-28", "server/discover",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}}`,
			nil},
		{"2026-07-28", "tools/list",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[{"name":"t"}]}}`,
			entries{
				{Location: "/result", Problems: []string{"missing property 'cacheScope'", "missing property 'ttlMs'"}},
				{Location: "/result/tools/0", Problems: []string{"missing property 'inputSchema'"}},
			}},
		{"2026-07-28", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":7}}`,
			entries{{Location: "/result/requestState", Problems: []string{"got number, want string"}}}},
		// An error response's id may be null (JSON-RPC 2.0 §5) or absent
		// (2025-11-25 and later) in every version, as under the checker's
		// own schemas (T-RPC-9); the rest of it is still validated.
		{"2026-07-28", "tools/list",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			nil},
		{"2026-07-28", "tools/list", `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}`, nil},
		{"2026-07-28", "tools/list", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`,
			entries{{Location: "/error", Problems: []string{"missing property 'message'"}}}},
		{"2026-07-28", "tools/list", `{"jsonrpc":"2.0","id":true,"error":{"code":-32700,"message":"Parse error"}}`,
			entries{{Location: "/id", Problems: []string{"got boolean, want integer or string"}}}},
		{"2026-07-28", "tools/list", `{"jsonrpc":"2.0","id":null,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"public"}}`,
			entries{{Location: "/id", Problems: []string{"got null, want integer or string"}}}},
		{"2025-11-25", "tools/list", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, nil},
		{"2025-11-25", "tools/list", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`, nil},
		{"2025-06-18", "tools/list", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, nil},
		{"2025-06-18", "tools/list", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`, nil},
		{"2025-11-25", "tasks/get",
			`{"jsonrpc":"2.0","id":1,"result":{"taskId":"t","status":"running"}}`,
			entries{
				{Location: "/result", Problems: []string{"missing property 'createdAt'", "missing property 'lastUpdatedAt'", "missing property 'ttl'"}},
				{Location: "/result/status", Problems: []string{"must be one of 'cancelled', 'completed', 'failed', 'input_required', 'working'"}},
			}},
		{"2025-11-25", "tasks/list",
			`{"jsonrpc":"2.0","id":1,"result":{"items":[]}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'tasks'"}}}},
		{"2025-11-25", TaskAugmented("tools/call"), `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":5000}}}`, nil},
		{"2025-11-25", TaskAugmented("tools/call"), `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, nil},
		{"2025-11-25", TaskAugmented("tools/call"), `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t"}}}`,
			entries{{Location: "/result/task", Problems: []string{"missing property 'createdAt'", "missing property 'lastUpdatedAt'", "missing property 'status'", "missing property 'ttl'"}}}},
		{"2025-11-25", "tools/call", `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":5000}}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'content'"}}}},
		{"2025-06-18", TaskAugmented("tools/call"), `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":5000}}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'content'"}}}},
		{"2025-06-18", "initialize",
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
			nil},
		{"2025-06-18", "initialize",
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":[]},"serverInfo":{"name":"s"}}}`,
			entries{
				{Location: "/result/capabilities/tools", Problems: []string{"got array, want object"}},
				{Location: "/result/serverInfo", Problems: []string{"missing property 'version'"}},
			}},
	}
	official := officialUserSchemas(t, dir)
	for _, c := range cases {
		u := official(c.version)
		got := valid(t)(u.ValidateReply(c.method, []byte(c.reply)))
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", c.version, c.method, diff)
		}
		checkShape(t, got)
	}
}

// TestDistillSizeOnGarbageMessage measures, as the design note does, one
// garbage message against the official JSONRPCMessage: the library's
// detailed tree against the distilled form.
func TestDistillSizeOnGarbageMessage(t *testing.T) {
	dir := officialDir(t)
	u, err := LoadUserSchema(filepath.Join(dir, "2026-07-28.schema.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	garbage := `{"jsonrpc":"1.0","id":{"x":1},"method":42,"params":[1,2,{"a":"` + strings.Repeat("z", 200) + `"}]}`
	v, err := decode([]byte(garbage))
	if err != nil {
		t.Fatal(err)
	}
	verr := u.message.Validate(v)
	tree, err := json.Marshal(verr.(*jsonschema.ValidationError).DetailedOutput())
	if err != nil {
		t.Fatal(err)
	}
	d := valid(t)(u.ValidateReply("", []byte(garbage)))
	dist, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("garbage message vs official JSONRPCMessage: detailed tree %d bytes, distilled %d bytes: %s", len(tree), len(dist), dist)
	if len(dist)*3 > len(tree) {
		t.Errorf("distilled %d bytes is not much smaller than the tree's %d", len(dist), len(tree))
	}
	checkShape(t, d)
}

// TestUserSchemaServerMessages: with an official schema.json, the
// messages a server sends besides its response are validated against
// their official types, where the file defines them.
func TestUserSchemaServerMessages(t *testing.T) {
	dir := officialDir(t)
	cases := []struct {
		version, method, msg string
		covered              bool
		want                 entries
	}{
		{"2025-11-25", "notifications/message",
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
			true, nil},
		{"2025-11-25", "notifications/message",
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`,
			true, entries{{Location: "/params", Problems: []string{"missing property 'data'"}}}},
		{"2025-06-18", "sampling/createMessage",
			`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[]}}`,
			true, entries{{Location: "/params", Problems: []string{"missing property 'maxTokens'"}}}},
		{"2025-11-25", "tasks/get",
			`{"jsonrpc":"2.0","id":"g1","method":"tasks/get","params":{}}`,
			true, entries{{Location: "/params", Problems: []string{"missing property 'taskId'"}}}},
		{"2025-06-18", "tasks/get",
			`{"jsonrpc":"2.0","id":"g1","method":"tasks/get","params":{}}`,
			false, nil},
		{"2025-06-18", "notifications/elicitation/complete",
			`{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{}}`,
			false, nil},
		{"2026-07-28", "notifications/resources/updated",
			`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{}}`,
			true, entries{{Location: "/params", Problems: []string{"missing property 'uri'"}}}},
	}
	official := officialUserSchemas(t, dir)
	for _, c := range cases {
		u := official(c.version)
		got, covered, err := u.ValidateServerMessage(c.method, []byte(c.msg))
		if err != nil {
			t.Fatal(err)
		}
		if covered != c.covered {
			t.Errorf("%s %s: covered %v, want %v", c.version, c.method, covered, c.covered)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", c.version, c.method, diff)
		}
		checkShape(t, got)
	}
}

// officialUserSchemas loads the official schema of a version from dir as
// a --schema file, once per version.
func officialUserSchemas(t *testing.T, dir string) func(version string) *UserSchema {
	t.Helper()
	loaded := map[string]*UserSchema{}
	return func(version string) *UserSchema {
		if u := loaded[version]; u != nil {
			return u
		}
		u, err := LoadUserSchema(filepath.Join(dir, version+".schema.json"), nil)
		if err != nil {
			t.Fatal(err)
		}
		loaded[version] = u
		return u
	}
}
