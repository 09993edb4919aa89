package checks

import (
	"strconv"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// TestRefusedAs: a -32603 finding names the fault as the reply does, and
// the rule the code breaks: an unknown tool where its message says so
// (T-ERR-5: -32603 is for the server's own failures), invalid params
// otherwise (T-ERR-4).
func TestRefusedAs(t *testing.T) {
	x := &expect.Expectation{Method: "tools/call", Request: envelope.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`))}
	for msg, want := range map[string][2]string{
		`Unknown tool: nope. Available tools: add`:               {"an unknown tool (a client's mistake, not the server's failure)", "T-ERR-5"},
		`Invalid input: expected number, received string at "a"`: {"invalid params", "T-ERR-4"},
		// A prompt the tool's backend does not know is no prompt the
		// call named (review rev50).
		`Langfuse: Unknown prompt 'summarizer-v2'`: {"invalid params", "T-ERR-4"},
	} {
		e := gjson.Parse(`{"code":-32603,"message":` + strconv.Quote(msg) + `}`)
		if what, rule := refusedAs(x, e); what != want[0] || rule != want[1] {
			t.Errorf("refusedAs(%q) = %q, %q; want %q, %q", msg, what, rule, want[0], want[1])
		}
	}
}

// TestGraceRule: a death that left nothing owed cites the cursors' rule
// (T-PAGE-3) only for a request with a cursor; any other message's is
// robustness alone (review rev73).
func TestGraceRule(t *testing.T) {
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"bogus"}}`:  ", where an invalid cursor SHOULD be handled gracefully (T-PAGE-3)",
		`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"x"}}`: " (robustness: no rule asks a server to exit on a message)",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`:            " (robustness: no rule asks a server to exit on a message)",
	} {
		x := &expect.Expectation{Request: envelope.Parse([]byte(body))}
		if got := graceRule(x); got != want {
			t.Errorf("graceRule(%s) = %q, want %q", body, got, want)
		}
	}
}
