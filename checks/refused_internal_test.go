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
