package runner_test

import (
	"net/http"
	"sync"
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

// TestGet404InLiveSession: a 2025-11-25 server that routes only POST
// answers the run's GET 404 (an Express app's "Cannot GET /mcp"), and
// goes on serving the session: a ping in it after the GET is served, so
// the 404 is the GET's own answer, which T-HTTP-12 forbids (fail; review
// rev89: it warned, as in a session the server might have ended). The
// twin ends the session with the GET: every request in it is answered
// 404 after, and the status only warns (T-SESS-5, T-SESS-3).
func TestGet404InLiveSession(t *testing.T) {
	for _, c := range []struct {
		name   string
		ends   bool
		status checks.Status
	}{{"served", false, checks.StatusFail}, {"ended", true, checks.StatusWarn}} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			ended := ""
			hs := refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
				return func(w http.ResponseWriter, req *http.Request) {
					mu.Lock()
					gone := ended != "" && req.Header.Get("Mcp-Session-Id") == ended
					if req.Method == http.MethodGet && c.ends {
						ended = req.Header.Get("Mcp-Session-Id")
					}
					mu.Unlock()
					if req.Method == http.MethodGet || gone {
						w.Header().Set("Content-Type", "text/html; charset=utf-8")
						w.WriteHeader(http.StatusNotFound)
						w.Write([]byte("<pre>Cannot GET /mcp</pre>"))
						return
					}
					srv.ServeHTTP(w, req)
				}
			})
			got, _, err := httpRun(t, hs.URL+"/mcp", envelope.V20251125, 0, 5*time.Second, "http/get")
			if err != nil {
				t.Fatal(err)
			}
			judged := false
			for _, v := range got.verdicts {
				if v.Fixture == "http/get" && v.Check.ID == "HTTP1002" {
					judged = true
					if v.Status != c.status {
						t.Errorf("HTTP1002 on http/get: %s, want %s (%v)", v.Status, c.status, v.Findings)
					}
				}
			}
			if !judged {
				t.Error("http/get's HTTP1002 was not reported")
			}
		})
	}
}
