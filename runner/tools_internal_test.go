package runner

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
)

// A fixture that needs a prompt or resource is skipped with a reason
// that blames the server only for what it said.
func TestNoneListed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caps   string
		listed bool
		want   string
	}{
		{"undeclared", `{"tools":{}}`, false, "the server does not declare the prompts capability"},
		{"declared false", `{"prompts":false}`, false, "the server does not declare the prompts capability"},
		{"unknown", "", false, "the server's capabilities are not known, so its prompts were not listed"},
		{"list cut short", `{"prompts":{}}`, false, "prompts/list was not read to its end, so no prompt the server has is known"},
		{"listed empty", `{"prompts":{}}`, true, "the server lists no prompts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &expect.Facts{}
			if tc.caps != "" {
				f.Capabilities = []byte(tc.caps)
			}
			if got := noneListed(f, "prompts", tc.listed); got != tc.want {
				t.Errorf("noneListed = %q, want %q", got, tc.want)
			}
		})
	}
}

// A negotiation that failed says what the server answered; a response
// hidden in a named SSE event is named as such, not as a body that is no
// JSON-RPC.
func TestWhyNamesHiddenResponse(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	for _, tc := range []struct {
		name, body string
		header     http.Header
		want       string
	}{
		{"named event", "event: mcp\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", sse,
			`HTTP 200, a response in an SSE event named "mcp", which no client reads as a message (only unnamed or "message" events are)`},
		{"not json", "hello", http.Header{"Content-Type": {"application/json"}},
			`HTTP 200, a body that is no JSON-RPC response: "hello"`},
		{"stream labelled text/plain", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", http.Header{"Content-Type": {"text/plain"}},
			`HTTP 200, a body of Content-Type "text/plain", which no client reads as a reply (T-HTTP-5: application/json or text/event-stream): "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"`},
		{"no type", "hello", http.Header{},
			`HTTP 200, a body of Content-Type none, which no client reads as a reply (T-HTTP-5: application/json or text/event-stream): "hello"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &envelope.Exchange{Transport: envelope.HTTP, Response: &envelope.Response{Status: 200, Header: tc.header, Body: []byte(tc.body)}}
			if got := why(ex); got != tc.want {
				t.Errorf("why = %q\nwant %q", got, tc.want)
			}
		})
	}
}

// On stdio a reply's lines are its messages, its body empty: one that is
// no response is quoted, not called an empty body.
func TestWhyQuotesStdioLines(t *testing.T) {
	ex := &envelope.Exchange{Transport: envelope.Stdio, Response: &envelope.Response{Messages: [][]byte{[]byte(`[{"jsonrpc":"2.0","method":"notifications/message"}]`)}}}
	if got, want := why(ex), `a reply that is no JSON-RPC response: "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}]"`; got != want {
		t.Errorf("why = %q\nwant %q", got, want)
	}
	if got := why(&envelope.Exchange{Transport: envelope.Stdio, Response: &envelope.Response{}}); got != "an empty body" {
		t.Errorf("why of nothing = %q", got)
	}
}

// A negotiation reply no client can read as HTTP is named for what it
// is, not called no reply; the twin: an exchange without one is.
func TestWhyNamesMalformedHTTP(t *testing.T) {
	ex := &envelope.Exchange{Transport: envelope.HTTP, Malformed: `malformed HTTP status code "2x0"`}
	if got, want := why(ex), `a reply that is no HTTP/1.1 message: malformed HTTP status code "2x0"`; got != want {
		t.Errorf("why = %q\nwant %q", got, want)
	}
	if got := why(&envelope.Exchange{Transport: envelope.HTTP}); got != "no reply" {
		t.Errorf("why of no reply = %q", got)
	}
}

// TestTasklessToolPick: tasks/call-taskless calls, with a task, a tool
// that declares no task support. A read-only tool that takes the empty
// arguments is called first: a server that runs it anyway is seen
// serving it (T-TASK-2), where a tool refusing the arguments would hide
// that behind the refusal (review rev25). Failing that, a read-only one,
// then one whose schema refuses the arguments; never one that may act.
func TestTasklessToolPick(t *testing.T) {
	const (
		needsArg = `{"name":"%s","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}%s}`
		noArgs   = `{"name":"%s","inputSchema":{"type":"object"}%s}`
		ro       = `,"annotations":{"readOnlyHint":true}`
		tasked   = `,"execution":{"taskSupport":"required"}`
	)
	for _, tc := range []struct {
		name  string
		tools []string
		want  string // the tool's name, or "" when none may be called
	}{
		{"read-only taking {} first", []string{fmt.Sprintf(needsArg, "echo", ro), fmt.Sprintf(noArgs, "noargs", ro)}, "noargs"},
		{"read-only refusing {} next", []string{fmt.Sprintf(needsArg, "refuses", ""), fmt.Sprintf(needsArg, "echo", ro)}, "echo"},
		{"refusing {} last", []string{fmt.Sprintf(noArgs, "acts", ""), fmt.Sprintf(needsArg, "refuses", "")}, "refuses"},
		{"never one that may act or takes tasks", []string{fmt.Sprintf(noArgs, "acts", ""), fmt.Sprintf(noArgs, "tasked", ro+tasked)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &expect.Facts{Capabilities: []byte(`{"tasks":{"requests":{"tools":{"call":{}}}}}`)}
			for _, raw := range tc.tools {
				tl, ok := expect.NewTool([]byte(raw))
				if !ok {
					t.Fatalf("tool %s", raw)
				}
				f.Tools = append(f.Tools, tl)
			}
			r := &run{facts: f, sess: session{version: envelope.V20251125}}
			var c fixtures.Context
			why := r.fillDeclared([]byte(`{"name":"{{tasklesstool}}"}`), &c)
			got := strings.Trim(c.TasklessTool, `"`)
			if tc.want == "" {
				if why == "" {
					t.Errorf("called %q; want none", got)
				}
				return
			}
			if why != "" || got != tc.want {
				t.Errorf("called %q (%s); want %q", got, why, tc.want)
			}
		})
	}
}

// TestDropsInvalidHeaderTools: over HTTP in 2026-07-28 a tool whose
// x-mcp-header declarations break T-HDR-7 is one a conforming client
// drops, so no fixture calls it (review rev91: its calls went without
// the header its valid declaration asks, and the server's right -32020
// failed ERR1002). The tool with valid declarations stays; over stdio,
// which carries no headers, and in 2025-11-25 both stay.
func TestDropsInvalidHeaderTools(t *testing.T) {
	valid, ok := expect.NewTool([]byte(`{"name":"a","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}`))
	invalid, ok2 := expect.NewTool([]byte(`{"name":"b","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"tags":{"type":"array","items":{"type":"string","x-mcp-header":"Tag"}}}}}`))
	if !ok || !ok2 {
		t.Fatal("tools not read")
	}
	for _, tc := range []struct {
		name    string
		version string
		target  Target
		want    []string
	}{
		{"2026 http", envelope.V20260728, &HTTPTarget{}, []string{"a"}},
		{"2026 stdio", envelope.V20260728, &StdioTarget{}, []string{"a", "b"}},
		{"2025 http", envelope.V20251125, &HTTPTarget{}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &run{facts: &expect.Facts{Tools: []*expect.Tool{valid, invalid}}, sess: session{version: tc.version}, t: tc.target}
			var got []string
			for _, tl := range r.callableTools() {
				got = append(got, tl.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("callable %v, want %v", got, tc.want)
			}
			if len(r.facts.Tools) != 2 {
				t.Errorf("the facts lost a tool: %d", len(r.facts.Tools))
			}
		})
	}
}
