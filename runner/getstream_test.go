package runner_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/refserver"
)

// TestGetStreamStatus: a GET answered with an event stream that stays
// open is judged when the look ends, whatever its 2xx status: mcp-go
// v0.32 answers 202, and the run reported "could not judge" (error)
// where it had all it needed. The twin answers 200.
func TestGetStreamStatus(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusAccepted} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			hs := refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
				return func(w http.ResponseWriter, req *http.Request) {
					if req.Method != http.MethodGet {
						srv.ServeHTTP(w, req)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(status)
					w.(http.Flusher).Flush()
					<-req.Context().Done() // held open, no event
				}
			})
			c, _, err := httpRun(t, hs.URL+"/mcp", envelope.V20251125, 0, 5*time.Second, "http/get")
			if err != nil {
				t.Fatal(err)
			}
			judged := false
			for _, v := range c.verdicts {
				if v.Fixture != "http/get" {
					continue
				}
				judged = true
				if v.Status == checks.StatusError {
					t.Errorf("%s %s: error (%s); want the stream judged", v.Fixture, v.Check.ID, v.Reason)
				}
			}
			if !judged {
				t.Error("http/get was not reported")
			}
		})
	}
}
