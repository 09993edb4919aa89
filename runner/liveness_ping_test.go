package runner_test

import (
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

// TestPingLeftUnanswered: a server that never answers ping, the
// liveness probe's own method, still answers a method it does not know
// (-32601): the probe asks so once its ping went unanswered, and the
// fixture lifecycle/ping fails (RPC1006) instead of "could not judge"
// (review rev73). The twins: a server that answers ping passes; one
// that answers neither cannot be judged.
func TestPingLeftUnanswered(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "lifecycle/ping" })
	for _, tc := range []struct {
		name   string
		silent []string // the methods the server leaves unanswered
		want   string   // the verdict of lifecycle/ping's RPC1006 row
	}{
		{"answers ping", nil, " pass "},
		{"never answers ping", []string{"ping"}, " fail "},
		{"answers nothing more", []string{"ping", envelope.LivenessFallbackMethod}, " error "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := serveRefIntercepted(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				m := gjson.GetBytes(body, "method").Str
				for _, s := range tc.silent {
					if m == s {
						<-r.Context().Done()
						return true
					}
				}
				return false
			})
			target := &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: 300 * time.Millisecond}}}
			rows, _ := corpusRunAt(t, target, 1, fx, envelope.V20251125)
			var got []string
			for _, l := range rows {
				if strings.HasPrefix(l, "lifecycle/ping RPC1006 ") {
					got = append(got, l)
				}
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Fatalf("want one RPC1006 row with%s, got %q", tc.want, got)
			}
		})
	}
}
