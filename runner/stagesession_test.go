package runner_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/transport"
)

// TestStageSessionPingOwed: a staged fixture's session, issued by its own
// initialize, is one the server holds, so a ping in it before
// notifications/initialized is owed its result (T-LIFE-5). A server that
// refuses that ping fails PRO1001; the run did not count the stage's
// session as held, and the fixture could never fail over HTTP. The
// twin: the clean server's answer passes.
func TestStageSessionPingOwed(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "lifecycle/ping-before-initialized" })
	for _, refuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("refuse=%v", refuse), func(t *testing.T) {
			url := serveRefusingEarlyPing(t, refuse)
			target := &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: 2 * time.Second}}}
			rows, _ := corpusRunAt(t, target, 1, fx, envelope.V20251125)
			var got []string
			for _, l := range rows {
				if f := strings.Fields(l); len(f) >= 3 && f[0] == "lifecycle/ping-before-initialized" && f[1] == "PRO1001" {
					got = append(got, f[2])
				}
			}
			want := []string{"pass"}
			if refuse {
				want = []string{"fail"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("PRO1001 of the ping (-want +got):\n%s\nall rows:\n%s", diff, strings.Join(rows, "\n"))
			}
		})
	}
}

// serveRefusingEarlyPing serves the reference server over HTTP; with
// refuse, a ping in a session that has not sent notifications/initialized
// is refused -32600, as a server that holds the lifecycle too strictly
// does.
func serveRefusingEarlyPing(t *testing.T, refuse bool) string {
	t.Helper()
	var mu sync.Mutex
	ready := map[string]bool{}
	return serveRefIntercepted(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		sid := r.Header.Get("Mcp-Session-Id")
		method := gjson.GetBytes(body, "method").Str
		mu.Lock()
		if method == "notifications/initialized" {
			ready[sid] = true
		}
		early := refuse && sid != "" && method == "ping" && !ready[sid]
		mu.Unlock()
		if early {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"session not initialized"}}`, gjson.GetBytes(body, "id").Raw)
		}
		return early
	})
}
