package runner_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/transport"
)

// TestSlowGETRefusalJudged: a server that answers the GET with 405 and
// sends the body half a second after the headers (legal: the body comes
// within --timeout) gets its reply judged. The look that bounds an open
// event stream ended it mid-body, and the fixture was "could not judge".
// The twin: the body sent with the headers, judged as ever.
func TestSlowGETRefusalJudged(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "http/get" })
	for _, delay := range []time.Duration{0, 500 * time.Millisecond} {
		t.Run(fmt.Sprint(delay), func(t *testing.T) {
			url := serveRefIntercepted(t, func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
				if r.Method != http.MethodGet {
					return false
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusMethodNotAllowed)
				w.(http.Flusher).Flush()
				time.Sleep(delay)
				fmt.Fprint(w, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"GET opens no stream here"}}`)
				return true
			})
			for _, parallel := range []int{1, 8} {
				target := &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: 3 * time.Second}}}
				rows, _ := corpusRunAt(t, target, parallel, fx, envelope.V20251125)
				for _, l := range rows {
					if f := strings.Fields(l); len(f) >= 3 && f[0] == "http/get" && f[2] == "error" {
						t.Errorf("parallel %d: %s", parallel, l)
					}
				}
			}
		})
	}
}
