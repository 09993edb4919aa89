package runner_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/transport"
)

// TestListenSilenceJudged: a server that sends nothing at all, not even
// the head of the stream, to subscriptions/listen is judged (PRO1009
// warns that no acknowledgment came), as the silence of any request is:
// the liveness probe shows it alive. It was "could not judge". The twin:
// the reference server's stream, acknowledged, passes.
func TestListenSilenceJudged(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "subscriptions/listen" })
	for _, silent := range []bool{false, true} {
		t.Run(fmt.Sprint("silent=", silent), func(t *testing.T) {
			url := serveRefIntercepted(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if !silent || gjson.GetBytes(body, "method").Str != "subscriptions/listen" {
					return false
				}
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
				return true
			})
			target := &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: time.Second}}}
			rows, _ := corpusRunAt(t, target, 1, fx, envelope.V20260728)
			var got []string
			for _, l := range rows {
				if f := strings.Fields(l); len(f) >= 3 && f[0] == "subscriptions/listen" && f[1] != "sent" && f[2] != "pass" && f[2] != "skip" {
					got = append(got, f[1]+" "+f[2])
				}
			}
			want := ""
			if silent {
				want = "PRO1009 warn"
			}
			if strings.Join(got, ", ") != want {
				t.Errorf("verdicts %q, want %q\n%s", got, want, strings.Join(rows, "\n"))
			}
		})
	}
}
