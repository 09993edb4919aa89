package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// TestWhyQuotesLineNotJSON: a negotiation on stdio that got a line that
// is not JSON instead of a response says what came, quoted short, its
// terminal escapes neutralised; a JSON line before it is passed over.
// The twin: lines that are all JSON add nothing to the failure.
func TestWhyQuotesLineNotJSON(t *testing.T) {
	failure := transport.NoResponse(time.Second, 2)
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"up"}}`)
	banner := []byte("\x1b[31mserver ready\x1b[0m on stdio, " + strings.Repeat("x", 100))
	ex := &envelope.Exchange{Transport: envelope.Stdio, Failure: failure, Response: &envelope.Response{Messages: [][]byte{note, banner}}}
	want := failure + `, the first not JSON: "\x1b[31mserver ready\x1b[0m on stdio, ` + strings.Repeat("x", 28) + `…"`
	if got := why(ex); got != want {
		t.Errorf("why = %q\nwant %q", got, want)
	}
	if got := why(ex); strings.Contains(got, "\x1b") {
		t.Errorf("why = %q: a terminal escape passed through", got)
	}
	ex.Response.Messages = [][]byte{note, note}
	if got := why(ex); got != failure {
		t.Errorf("why of JSON lines = %q, want %q", got, failure)
	}
}

// TestWhyPassesOverCutLine: the last line of a reply the checker's own
// bound cut is its doing, not the server's, and is never named as the
// first not JSON; a line that is not JSON before it still is.
func TestWhyPassesOverCutLine(t *testing.T) {
	failure := "the reply passed the checker's bound of 4 lines"
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"up"}}`)
	cut := []byte(`{"jsonrpc":"2.0","method":"notifications/mes`)
	ex := &envelope.Exchange{Transport: envelope.Stdio, Failure: failure, Response: &envelope.Response{Messages: [][]byte{note, cut}, Truncated: true}}
	if got := why(ex); got != failure {
		t.Errorf("why of a cut last line = %q, want %q", got, failure)
	}
	ex.Response.Messages = [][]byte{[]byte("booting"), note, cut}
	want := failure + `, the first not JSON: "booting"`
	if got := why(ex); got != want {
		t.Errorf("why = %q\nwant %q", got, want)
	}
}
