package runner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/transport"
)

// TestStaleProgressInSequence: in a stdio run, in sequence or
// multiplexed, progress for the token of a request the server answered
// before fails (T-PROG-1): no other request is in flight whose token it
// could be (review rev76: every token the run ever offered counted, and
// it only warned; review rev84: multiplexed, it still did). The twin: a
// server that sends no such progress draws no PRO1003 finding.
func TestStaleProgressInSequence(t *testing.T) {
	parse := func(name, body string) *fixtures.Fixture {
		f, err := fixtures.Parse(name+".txtar", []byte("A request.\n-- fixture --\nid: mine/"+name+"\n-- body --\n"+body+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	fx := []*fixtures.Fixture{
		parse("offers", `{"jsonrpc":"2.0","id":{{id}},"method":"tools/list","params":{{{meta:progress}}}}`),
		parse("after", `{"jsonrpc":"2.0","id":{{id}},"method":"prompts/list","params":{}}`),
	}
	for _, tc := range []struct {
		stale    bool
		parallel int
	}{{false, 1}, {true, 1}, {false, 8}, {true, 8}} {
		stale := tc.stale
		t.Setenv(ignoringEnv, "1")
		if stale {
			t.Setenv(quirkEnv, "stale-progress")
		} else {
			t.Setenv(quirkEnv, "")
		}
		lines, _ := stdioCorpusRunAt(t, transport.Limits{Timeout: time.Second, Quiet: 50 * time.Millisecond}, tc.parallel, fx, envelope.V20251125)
		var got []string
		for _, l := range lines {
			if strings.HasPrefix(l, "mine/after PRO1003 ") {
				got = append(got, l)
			}
		}
		want := " skip " // no progress arrived
		if stale {
			want = " fail "
		}
		if len(got) != 1 || !strings.Contains(got[0], want) {
			t.Errorf("stale %v, parallel %d: want one PRO1003 row with%q, got %q\n%s", stale, tc.parallel, want, got, strings.Join(lines, "\n"))
		}
	}
}
