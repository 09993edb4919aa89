package checks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
)

// officialSchema loads the official schema file of version as --schema
// would. The files live outside the module, as for the schema package's
// tests.
func officialSchema(t *testing.T, version string) checks.SchemaValidator {
	t.Helper()
	dir := os.Getenv("WYMCP_MCP_SCHEMA_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "mcp-schema")
	}
	u, err := schema.LoadUserSchema(filepath.Join(dir, version+".schema.json"), nil)
	if os.IsNotExist(err) || err != nil && strings.Contains(err.Error(), "no such file") {
		t.Skipf("official MCP schemas not found: set WYMCP_MCP_SCHEMA_DIR (%v)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return checks.UserSchema(u)
}

// judgeWith judges one stdio exchange of version (its request a request
// of method, its reply the messages) with c alone, against v.
func judgeWith(t *testing.T, v checks.SchemaValidator, c *checks.Check, version, facts, method string, reply ...string) checks.Verdict {
	t.Helper()
	var f *expect.Facts
	if facts != "" {
		var err error
		if f, err = expect.ParseFacts([]byte(facts)); err != nil {
			t.Fatal(err)
		}
	}
	msgs := make([][]byte, len(reply))
	for i, r := range reply {
		msgs[i] = []byte(r)
	}
	ex := &envelope.Exchange{Transport: envelope.Stdio, Version: version,
		Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{}}`)},
		Response: &envelope.Response{Messages: msgs}}
	vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, f, nil), Schemas: v}, []*checks.Check{c})
	if len(vs) != 1 {
		t.Fatalf("%d verdicts, want 1", len(vs))
	}
	return vs[0]
}

func wantVerdict(t *testing.T, got checks.Verdict, status checks.Status, paths ...string) {
	t.Helper()
	var gotPaths []string
	for _, f := range got.Findings {
		gotPaths = append(gotPaths, f.Path)
	}
	if got.Status != status || strings.Join(gotPaths, " ") != strings.Join(paths, " ") {
		t.Errorf("%s: %s %v (%s; %+v), want %s %v", got.Check.ID, got.Status, gotPaths, got.Reason, got.Findings, status, paths)
	}
}

const facts0326 = `{"protocolVersion":"2025-06-18","spoken":"2025-03-26","supportedVersions":["2025-06-18"],"capabilities":{"tools":{},"logging":{}}}`

// A server that speaks 2025-03-26 is judged against the checker's own
// 2025-03-26 schema, and against --schema FILE when the file may describe
// 2025-03-26 (the official 2025-03-26 file, or a schema of the user's
// own), with the same verdicts here.
func TestUserSchema0326Applied(t *testing.T) {
	video := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"video","data":"AAAA","mimeType":"video/mp4"}]}}`
	text := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`
	noData := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`
	withData := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	for name, v := range map[string]checks.SchemaValidator{"2025-03-26 file": officialSchema(t, "2025-03-26"), "builtin": checks.ProtocolSchemas(schema.NewRegistry())} {
		t.Run(name, func(t *testing.T) {
			wantVerdict(t, judgeWith(t, v, checks.SchemaValid, envelope.V20250618, facts0326, "tools/call", video), checks.StatusFail, "/result/content/0/type")
			wantVerdict(t, judgeWith(t, v, checks.SchemaValid, envelope.V20250618, facts0326, "tools/call", text), checks.StatusPass)
			wantVerdict(t, judgeWith(t, v, checks.ServerSchemaValid, envelope.V20250618, facts0326, "tools/call", noData, text), checks.StatusFail, "messages[0].params")
			wantVerdict(t, judgeWith(t, v, checks.ServerSchemaValid, envelope.V20250618, facts0326, "tools/call", withData, text), checks.StatusPass)
		})
	}

	// The official file of another version does not describe 2025-03-26.
	for _, c := range []*checks.Check{checks.SchemaValid, checks.ServerSchemaValid} {
		got := judgeWith(t, officialSchema(t, "2025-06-18"), c, envelope.V20250618, facts0326, "tools/call", noData, video)
		if got.Status != checks.StatusSkip || !strings.Contains(got.Reason, "2025-03-26") {
			t.Errorf("2025-06-18 file, %s: %s %q, want a skip naming 2025-03-26", c.ID, got.Status, got.Reason)
		}
	}
}

// An official --schema file judges only exchanges of its own version: a
// 2025-11-25 reply is not failed for lacking what 2026-07-28 asks
// (resultType, ttlMs, cacheScope); the skip names both versions. The
// file still judges its own version, and a schema of the user's own
// judges every version.
func TestUserSchemaOtherVersionSkips(t *testing.T) {
	s2026 := officialSchema(t, "2026-07-28")
	s1125 := officialSchema(t, "2025-11-25")
	list1125 := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	for _, c := range []*checks.Check{checks.SchemaValid, checks.ServerSchemaValid} {
		got := judgeWith(t, s2026, c, envelope.V20251125, "", "tools/list", note, list1125)
		if got.Status != checks.StatusSkip || !strings.Contains(got.Reason, "2025-11-25") || !strings.Contains(got.Reason, "2026-07-28") {
			t.Errorf("2026-07-28 file, 2025-11-25 exchange, %s: %s %q, want a skip naming both versions", c.ID, got.Status, got.Reason)
		}
	}
	wantVerdict(t, judgeWith(t, s1125, checks.SchemaValid, envelope.V20251125, "", "tools/list", list1125), checks.StatusPass)
	wantVerdict(t, judgeWith(t, s1125, checks.ServerSchemaValid, envelope.V20251125, "", "tools/list", note, list1125), checks.StatusPass)
	// The 2026-07-28 file still fails a 2026-07-28 reply without them.
	got := judgeWith(t, s2026, checks.SchemaValid, envelope.V20260728, "", "tools/list", list1125)
	if got.Status != checks.StatusFail {
		t.Errorf("2026-07-28 file, 2026-07-28 exchange: %s %q, want fail", got.Status, got.Reason)
	}

	u, err := schema.LoadUserSchema(filepath.Join("..", "schema", "testdata", "user", "minimal.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	own := checks.UserSchema(u)
	for _, v := range []string{envelope.V20250618, envelope.V20251125, envelope.V20260728} {
		wantVerdict(t, judgeWith(t, own, checks.SchemaValid, v, "", "tools/list", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{}]}}`), checks.StatusFail, "/result/tools/0")
		wantVerdict(t, judgeWith(t, own, checks.SchemaValid, v, "", "tools/list", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t"}]}}`), checks.StatusPass)
	}
	wantVerdict(t, judgeWith(t, own, checks.SchemaValid, envelope.V20250618, facts0326, "tools/list", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{}]}}`), checks.StatusFail, "/result/tools/0")
}

// format is an annotation in a draft-07 --schema file too: a relative
// reference where the 2025-06-18 schema says format uri passes, as under
// the builtin schema and the 2020-12 files; a uri of the wrong type fails.
func TestUserSchemaDraft7FormatNotAsserted(t *testing.T) {
	s0618 := officialSchema(t, "2025-06-18")
	rel := `{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"notes/today.md","name":"r"}]}}`
	num := `{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":7,"name":"r"}]}}`
	wantVerdict(t, judgeWith(t, s0618, checks.SchemaValid, envelope.V20250618, "", "resources/list", rel), checks.StatusPass)
	wantVerdict(t, judgeWith(t, s0618, checks.SchemaValid, envelope.V20250618, "", "resources/list", num), checks.StatusFail, "/result/resources/0/uri")
}
