package runner_test

import (
	"io"
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

// TestCutBodyNamed: a server that sends part of a JSON reply whose
// Content-Length it never fills, and then answers the liveness probe,
// fails for the reply it left unfinished; the finding says so, not that
// the request went unanswered. The twin: the whole reply, judged as ever.
func TestCutBodyNamed(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "completion/bad-ref" })
	for _, cut := range []bool{false, true} {
		url := serveRefIntercepted(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if !cut || gjson.GetBytes(body, "method").Str != "completion/complete" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "200")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"jsonrpc":"2.0",`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return true
		})
		target := &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: 500 * time.Millisecond}}}
		for _, parallel := range []int{1, 8} {
			rows, _ := corpusRunAt(t, target, parallel, fx, envelope.V20251125)
			var got []string
			for _, l := range rows {
				if strings.HasPrefix(l, "completion/bad-ref RPC1006 ") {
					got = append(got, l)
				}
			}
			if len(got) != 1 {
				t.Fatalf("parallel %d, cut %v: want one RPC1006 row, got %q", parallel, cut, got)
			}
			switch l := got[0]; {
			case !cut && !strings.Contains(l, " pass "):
				t.Errorf("parallel %d, whole reply: %s", parallel, l)
			case cut && (!strings.Contains(l, " fail ") || !strings.Contains(l, "unfinished") || strings.Contains(l, "unanswered")):
				t.Errorf("parallel %d, cut reply: want a fail naming the unfinished reply, got %s", parallel, l)
			}
		}
	}
}
