package runner_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/refserver"
	"github.com/wymcp/wymcp-check/runner"
)

// TestHTTPServerDies: an HTTP server that goes away while handling a
// request (go-sdk v0.2 on id null) left every later fixture an error and
// named none. Alone in flight, the request it died on fails PRO1005, and
// the run's reason names it; the twin answers the same request and
// lives.
func TestHTTPServerDies(t *testing.T) {
	for _, dies := range []bool{true, false} {
		t.Run(map[bool]string{true: "dies", false: "lives"}[dies], func(t *testing.T) {
			var hs *httptest.Server
			hs = refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
				return func(w http.ResponseWriter, req *http.Request) {
					body, _ := io.ReadAll(req.Body)
					if dies && bytes.Contains(body, []byte(`"id":null`)) {
						hs.Listener.Close() // nothing listens any more
						if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
							c.Close()
						}
						return
					}
					req.Body = io.NopCloser(bytes.NewReader(body))
					srv.ServeHTTP(w, req)
				}
			})
			c, _, err := httpRun(t, hs.URL+"/mcp", envelope.V20251125, 1, time.Second, "id/null", "lifecycle/ping")
			died := false
			for _, v := range c.verdicts {
				if v.Fixture == "id/null" && v.Check.ID == "PRO1005" && v.Status == checks.StatusFail {
					died = true
				}
			}
			if died != dies {
				t.Errorf("id/null PRO1005 fails: %v, want %v", died, dies)
			}
			named := err != nil && errors.Is(err, runner.ErrNotDriven) && strings.Contains(err.Error(), "after it left id/null unanswered")
			if named != dies {
				t.Errorf("err = %v; want the run's reason to name id/null: %v", err, dies)
			}
		})
	}
}

// TestHTTPServerDiesOnDiscover: a server that goes away on the
// server/discover probe (mcp-golang's HTTP transport panics on it) left
// a reason that led with initialize's refused connection, as for a
// wrong URL; it names the probe the server went away on.
func TestHTTPServerDiesOnDiscover(t *testing.T) {
	var hs *httptest.Server
	hs = refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			if bytes.Contains(body, []byte(`"server/discover"`)) {
				hs.Listener.Close()
				if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
					c.Close()
				}
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			srv.ServeHTTP(w, req)
		}
	})
	_, _, err := httpRun(t, hs.URL+"/mcp", "", 1, time.Second, "lifecycle/ping")
	if err == nil || !errors.Is(err, runner.ErrNotDriven) || !strings.Contains(err.Error(), "stopped accepting connections after server/discover") {
		t.Errorf("err = %v; want the reason to say the server went away on server/discover", err)
	}
}
