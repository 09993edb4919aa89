package runner_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/refserver"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transport"
)

// warmSpy records the versions a run has compiled ahead.
type warmSpy struct {
	checks.SchemaValidator
	mu     sync.Mutex
	warmed []string
}

func (w *warmSpy) Warm(versions ...string) {
	w.mu.Lock()
	w.warmed = append(w.warmed, versions...)
	w.mu.Unlock()
	w.SchemaValidator.(checks.Warmer).Warm(versions...)
}

// TestNegotiationWarmsSchemas: the schemas of the version about to be
// asked are compiled beside the negotiation's round trips (compiling
// them when the probes were judged held up every fixture), and only
// those: a forced version at once, 2025-11-25 once server/discover
// failed, none before a 2026-07-28 server confirms (its probe is judged
// at once). The run judges alike either way.
func TestNegotiationWarmsSchemas(t *testing.T) {
	for _, tc := range []struct {
		name, protocol string
		legacy         bool // server/discover answered with an error
		want           []string
		version        string
	}{
		{"auto, 2026-07-28", "auto", false, nil, envelope.V20260728},
		{"auto, legacy", "auto", true, []string{envelope.V20251125}, envelope.V20251125},
		{"forced", envelope.V20250618, false, []string{envelope.V20250618}, envelope.V20250618},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
				return func(w http.ResponseWriter, req *http.Request) {
					body, _ := io.ReadAll(req.Body)
					if tc.legacy && bytes.Contains(body, []byte(`"server/discover"`)) {
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusBadRequest)
						io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`)
						return
					}
					req.Body = io.NopCloser(bytes.NewReader(body))
					srv.ServeHTTP(w, req)
				}
			})
			fx, err := fixtures.Embedded()
			if err != nil {
				t.Fatal(err)
			}
			if fx, err = fixtures.Select(fx, []string{"tools/list"}, nil); err != nil {
				t.Fatal(err)
			}
			spy := &warmSpy{SchemaValidator: checks.ProtocolSchemas(schema.NewRegistry())}
			target := &runner.HTTPTarget{T: &transport.HTTP{URL: hs.URL + "/mcp", Limits: transport.Limits{Timeout: 2 * time.Second}}}
			c := &collect{}
			res, err := runner.Run(context.Background(), target, runner.Options{Protocol: tc.protocol, Fixtures: fx, Contract: envelope.Strict(), Schemas: spy, Deadline: time.Minute}, c)
			if err != nil {
				t.Fatal(err)
			}
			if res.Version != tc.version {
				t.Errorf("negotiated %s, want %s", res.Version, tc.version)
			}
			spy.mu.Lock()
			defer spy.mu.Unlock()
			if diff := cmp.Diff(tc.want, spy.warmed); diff != "" {
				t.Errorf("versions compiled ahead (-want +got):\n%s", diff)
			}
			judged := false
			for _, v := range c.verdicts {
				if v.Fixture == "tools/list" && v.Check.ID == "SCH1001" && v.Status == checks.StatusPass {
					judged = true
				}
			}
			if !judged {
				t.Error("tools/list's reply was not schema-validated: want SCH1001 to pass")
			}
		})
	}
}
