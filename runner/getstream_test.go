package runner_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
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

// TestGetStreamStatus: a GET answered with an event stream that stays
// open is judged when the look ends, whatever its 2xx status: mcp-go
// v0.32 answers 202, and the run reported "could not judge" (error)
// where it had all it needed. The twin answers 200.
func TestGetStreamStatus(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusAccepted} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv, err := refserver.New(refserver.Options{})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if req.Method != http.MethodGet {
					srv.ServeHTTP(w, req)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(status)
				w.(http.Flusher).Flush()
				<-req.Context().Done() // held open, no event
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
			fx, err := fixtures.Select(all, []string{"http/get"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := &collect{}
			_, err = runner.Run(context.Background(), &runner.HTTPTarget{T: &transport.HTTP{URL: hs.URL + "/mcp", Limits: transport.Limits{Timeout: 5 * time.Second}}},
				runner.Options{Protocol: envelope.V20251125, Fixtures: fx, Contract: envelope.Strict(), Schemas: checks.ProtocolSchemas(schema.NewRegistry()), Deadline: time.Minute}, c)
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
