package runner_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/refserver"
)

// TestEndedSessionHangs: a server that accepts DELETE and then leaves
// every request in the ended session hanging (the TypeScript SDK 1.11)
// is silent there, and alive outside it: session/reuse-after-delete is
// judged (RPC1006 fails), not "could not judge" because the liveness
// probe went to the same dead session. The twin ends the session as the
// spec says (404) and passes.
func TestEndedSessionHangs(t *testing.T) {
	for _, hang := range []bool{true, false} {
		t.Run(map[bool]string{true: "hangs", false: "404"}[hang], func(t *testing.T) {
			var mu sync.Mutex
			ended := map[string]bool{}
			hs := refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
				return func(w http.ResponseWriter, req *http.Request) {
					sid := req.Header.Get("Mcp-Session-Id")
					mu.Lock()
					dead := ended[sid]
					if req.Method == http.MethodDelete {
						ended[sid] = true
					}
					mu.Unlock()
					if dead && hang {
						// (Read to the end: only then does net/http notice
						// the client closing the connection.)
						io.Copy(io.Discard, req.Body)
						<-req.Context().Done()
						return
					}
					srv.ServeHTTP(w, req)
				}
			})
			c, _, err := httpRun(t, hs.URL+"/mcp", envelope.V20251125, 0, 500*time.Millisecond, "lifecycle/ping")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range c.verdicts {
				if v.Fixture == "session/reuse-after-delete" && v.Status != checks.StatusPass && v.Status != checks.StatusSkip {
					got = append(got, v.Check.ID+" "+string(v.Status))
				}
			}
			want := ""
			if hang {
				want = "RPC1006 fail"
			}
			if strings.Join(got, ", ") != want {
				t.Errorf("session/reuse-after-delete findings = %q, want %q", got, want)
			}
		})
	}
}
