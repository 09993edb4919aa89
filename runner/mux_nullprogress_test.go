package runner_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/transport"
)

// TestMultiplexedNullProgressSilentOnce: a tool that tells its progress
// with a null token, late, while other exchanges are open, is failed for
// it (PRO1003) on its own call, as in sequence, even where the progress
// landed in an exchange the server left silent (rpc/jsonrpc-missing,
// say): the calls it may be from go again, alone, and the silent
// exchange is judged without it. No request the server left silent is
// sent twice. The twin (slow-progress), whose progress names the call's
// token, lands on its call and sends no call again.
func TestMultiplexedNullProgressSilentOnce(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	lim := transport.Limits{Timeout: 500 * time.Millisecond, Quiet: 200 * time.Millisecond}
	for _, quirk := range []string{"slow-progress", "null-progress"} {
		t.Run(quirk, func(t *testing.T) {
			t.Setenv(ignoringEnv, "1")
			t.Setenv(quirkEnv, quirk)
			seq, _ := stdioCorpusRun(t, lim, 1, fx)
			log := filepath.Join(t.TempDir(), "server.log")
			t.Setenv(ignoringEnv, log)
			mux, _ := stdioCorpusRun(t, lim, 8, fx)
			t.Setenv(ignoringEnv, "1")
			var judged []string // the rows of the calls' progress check
			for _, l := range seq {
				if strings.HasPrefix(l, "tools/call-valid/count PRO1003 ") || strings.HasPrefix(l, "progress/token-integer/count PRO1003 ") {
					judged = append(judged, l)
				}
			}
			want := "pass"
			if quirk == "null-progress" {
				want = "fail"
			}
			if len(judged) != 2 || slices.ContainsFunc(judged, func(l string) bool { return !strings.Contains(l, " PRO1003 "+want+" ") }) {
				t.Fatalf("in sequence the calls' progress checks are %q, want %s: the quirk did not work", judged, want)
			}
			if diff := cmp.Diff(seq, mux); diff != "" {
				t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
			}
			// The fixtures' requests the server read more than once
			// (those sent again), and those it ignored (left silent).
			read, ignored := map[string]int{}, map[string]bool{}
			method := map[string]string{}
			evs, raw := readServerLog(t, log)
			for _, e := range evs {
				switch {
				case e.id == noID || e.id == unreadable || runnersOwn(e.id):
				case e.what == "line":
					read[e.id]++
					method[e.id] = e.method
				case e.what == "ignored":
					ignored[e.id] = true
				}
			}
			if len(ignored) == 0 {
				t.Fatalf("the server ignored no request: no exchange went silent\n%s", raw)
			}
			var calls, silent []string
			for id, n := range read {
				switch {
				case n == 1:
				case ignored[id]:
					silent = append(silent, id+" "+method[id])
				case method[id] == "tools/call":
					calls = append(calls, id)
				}
			}
			if len(silent) > 0 {
				slices.Sort(silent)
				t.Errorf("requests the server left silent were sent again (each waited its silence twice): %q\n%s", silent, raw)
			}
			switch {
			case quirk == "slow-progress" && len(calls) > 0:
				t.Errorf("calls sent again for progress that names its call: %q\n%s", calls, raw)
			case quirk == "null-progress" && len(calls) == 0:
				t.Errorf("no call was sent again: its null-token progress cannot have been told apart\n%s", raw)
			}
		})
	}
}
