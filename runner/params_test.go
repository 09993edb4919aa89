package runner_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/transport"
)

// TestParamHeaders: for a tool that marks a parameter with x-mcp-header,
// the runner sends Mcp-Param-<Name> as a 2026-07-28 client must (T-HDR-4),
// so a server that enforces it serves the call.
func TestParamHeaders(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(body, "id").Raw
		w.Header().Set("Content-Type", "application/json")
		meta := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"p","version":"1"}}`
		switch gjson.GetBytes(body, "method").Str {
		case "server/discover":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public",`+meta+`}}`)
		case "tools/list":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public",`+meta+`,"tools":[{"name":"weather","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}}]}}`)
		case "tools/call":
			mu.Lock()
			seen = append(seen, r.Header.Get("Mcp-Param-Region"))
			mu.Unlock()
			if want := gjson.GetBytes(body, "params.arguments.region"); want.Type == gjson.String && r.Header.Get("Mcp-Param-Region") != want.Str {
				w.WriteHeader(400)
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32020,"message":"header Mcp-Param-Region does not match the body"}}`)
				return
			}
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"complete","content":[{"type":"text","text":"sunny"}],`+meta+`}}`)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"unknown method"}}`)
		}
	}))
	defer srv.Close()
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var call []*fixtures.Fixture
	for _, f := range fx {
		if f.ID == "tools/call-valid" {
			call = append(call, f)
		}
	}
	c := &collect{}
	target := &runner.HTTPTarget{T: &transport.HTTP{URL: srv.URL, Limits: transport.Limits{Timeout: 2 * time.Second}}}
	if _, err := runner.Run(context.Background(), target, runner.Options{Fixtures: call, CallTools: runner.CallReadOnly, Contract: envelope.Strict()}, c); err != nil {
		t.Fatal(err)
	}
	if ids, detail := c.bad(); len(ids) > 0 {
		t.Errorf("the call drew findings:\n%s", detail)
	}
	passed := false
	for _, v := range c.verdicts {
		if v.Fixture == "tools/call-valid/weather" && v.Check.ID == "PRO1001" && v.Status == checks.StatusPass {
			// (A listed tool given arguments its schema accepts must be
			// served, T-TOOL-13: PRO1001 passes the result.)
			passed = true
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !passed || len(seen) != 1 || seen[0] == "" {
		t.Errorf("the tool was not called with its Mcp-Param-Region header (headers seen: %q)", seen)
	}
}
