package expect_test

import (
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// TestToolArgsAnyVersionOrder: a tool's arguments are judged whichever
// version is asked first and by whichever name: a relay's client check
// asked by a 2025-03-26 session's own version, which has no schema of
// its own, and the failed compile then stood for the server check too,
// which asked by 2025-06-18 (its judging rules): one order skipped
// both checks, the other judged them (the relay and lint disagreed).
func TestToolArgsAnyVersionOrder(t *testing.T) {
	raw := []byte(`{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}`)
	for _, order := range [][]string{
		{envelope.V20250326, envelope.V20250618, envelope.V20251125},
		{envelope.V20251125, envelope.V20250326, envelope.V20250618},
	} {
		tl, ok := expect.NewTool(raw)
		if !ok {
			t.Fatal("no tool")
		}
		for _, v := range order {
			probs, _, err := tl.CheckArgs([]byte(`{"a":"one"}`), v)
			if err != nil || len(probs) == 0 {
				t.Errorf("order %v: %s: problems %v, err %v; want the string refused", order, v, probs, err)
			}
		}
	}
}
