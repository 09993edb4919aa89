package runner_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/refserver"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transport"
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
			srv, err := refserver.New(refserver.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			ended := map[string]bool{}
			hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				sid := req.Header.Get("Mcp-Session-Id")
				mu.Lock()
				dead := ended[sid]
				if req.Method == http.MethodDelete {
					ended[sid] = true
				}
				mu.Unlock()
				if dead && hang {
					// (Read to the end: only then does net/http notice the
					// client closing the connection.)
					io.Copy(io.Discard, req.Body)
					<-req.Context().Done()
					return
				}
				srv.ServeHTTP(w, req)
			}))
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			hs.Listener.Close()
			hs.Listener = l
			hs.Start()
			t.Cleanup(func() { srv.Close(); hs.Close() })
			all, err := fixtures.Embedded()
			if err != nil {
				t.Fatal(err)
			}
			fx, err := fixtures.Select(all, []string{"lifecycle/ping"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := &collect{}
			_, err = runner.Run(context.Background(), &runner.HTTPTarget{T: &transport.HTTP{URL: hs.URL + "/mcp", Limits: transport.Limits{Timeout: 500 * time.Millisecond}}},
				runner.Options{Protocol: envelope.V20251125, Fixtures: fx, Contract: envelope.Strict(), Schemas: checks.ProtocolSchemas(schema.NewRegistry()), Deadline: time.Minute}, c)
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
