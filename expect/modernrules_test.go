package expect_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// TestModernFaultRules: a 2026-07-28 refusal's wants name the rules of
// the faults the request has, and no other fault's, so a breach counts
// against the rule that set it.
func TestModernFaultRules(t *testing.T) {
	body := func(version, caps string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `"` + caps + `}}}`)
	}
	const caps = `,"io.modelcontextprotocol/clientCapabilities":{}`
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"héllo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"` + caps + `}}}`)
	callHeader := func(name string) http.Header {
		return http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {name}}
	}
	for _, c := range []struct {
		name                  string
		header                http.Header
		body                  []byte
		refusal, code, status string
	}{
		{"Mcp-Method differs", http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"prompts/list"}}, body("2026-07-28", caps),
			"T-HDR-2", "T-ERR-12, T-HDR-2", "T-HDR-2"},
		{"version not served", http.Header{"Mcp-Protocol-Version": {"2099-01-01"}, "Mcp-Method": {"tools/list"}}, body("2099-01-01", caps),
			"T-LIFE-9", "T-ERR-14, T-LIFE-9", "T-HTTP-8, T-LIFE-9"},
		{"client capabilities missing", http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}}, body("2026-07-28", ""),
			"T-LIFE-7", "T-LIFE-7, T-HTTP-10", "T-HTTP-10, T-LIFE-7"},
		{"protocol header differs and capabilities missing", http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Method": {"tools/list"}}, body("2026-07-28", ""),
			"T-HTTP-8, T-HDR-2, T-LIFE-7", "T-ERR-12, T-HTTP-8, T-LIFE-7, T-HTTP-10", "T-HTTP-8, T-HDR-2, T-HTTP-10, T-LIFE-7"},
		// The sentinel's markers are lowercase: an uppercase one is the
		// literal value, which mismatches. Serving it breaks T-HDR-2;
		// T-HDR-3 only if the server compares headers at all, which one
		// reply does not show, so the wants do not name it.
		{"Mcp-Name in an uppercase sentinel", callHeader("=?BASE64?aMOpbGxv?="), call,
			"T-HDR-2", "T-ERR-12, T-HDR-2", "T-HDR-2"},
		{"Mcp-Name in a sentinel that differs", callHeader("=?base64?aGVsbG8=?="), call,
			"T-HDR-2", "T-ERR-12, T-HDR-2", "T-HDR-2"},
		// Its twins: a plain value that differs is T-HDR-2's too; the
		// sentinel of the body's value is no fault.
		{"Mcp-Name plain and different", callHeader("hello"), call,
			"T-HDR-2", "T-ERR-12, T-HDR-2", "T-HDR-2"},
		{"Mcp-Name in the sentinel of the body's value", callHeader("=?base64?aMOpbGxv?="), call,
			"", "", ""},
	} {
		ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20260728, Request: envelope.Request{Method: http.MethodPost, Header: c.header, Body: c.body}}
		x := expect.Build(ex, nil, nil)
		got := []string{x.Error.Rule, x.Code.Rule, x.StatusWant.Rule}
		if diff := cmp.Diff([]string{c.refusal, c.code, c.status}, got); diff != "" {
			t.Errorf("%s: the rules of refusal, code, status (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestRemovedMethodRules: a method 2026-07-28 removed is refused as an
// unknown one, so a wrong code or status breaks T-ERR-3 (and T-HTTP-9),
// as for a method no version defined: T-LIFE-16 only describes the
// removal, and a description is never failed.
func TestRemovedMethodRules(t *testing.T) {
	for _, c := range []struct{ method, code, status string }{
		{"ping", "T-ERR-3", "T-HTTP-9"},
		{"resources/subscribe", "T-ERR-3", "T-HTTP-9"},
		{"no/such_method", "T-ERR-3", "T-HTTP-9"},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + c.method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {c.method}}
		ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20260728, Request: envelope.Request{Method: http.MethodPost, Header: h, Body: []byte(body)}}
		x := expect.Build(ex, &expect.Facts{Version: envelope.V20260728, Capabilities: []byte(`{"tools":{}}`)}, nil)
		if diff := cmp.Diff([]string{c.code, c.status}, []string{x.Code.Rule, x.StatusWant.Rule}); diff != "" {
			t.Errorf("%s: the rules of code, status (-want +got):\n%s", c.method, diff)
		}
	}
}
