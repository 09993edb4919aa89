package checks

import (
	"strconv"
	"testing"

	"github.com/tidwall/gjson"
)

// TestRefusedAs: a -32603 finding names the fault as the reply does: an
// unknown tool where its message says so, invalid params otherwise.
func TestRefusedAs(t *testing.T) {
	for msg, want := range map[string]string{
		`Unknown tool: nope. Available tools: add`:               "an unknown tool (a client's mistake, not the server's failure)",
		`Invalid input: expected number, received string at "a"`: "invalid params",
	} {
		e := gjson.Parse(`{"code":-32603,"message":` + strconv.Quote(msg) + `}`)
		if got := refusedAs(e); got != want {
			t.Errorf("refusedAs(%q) = %q, want %q", msg, got, want)
		}
	}
}
