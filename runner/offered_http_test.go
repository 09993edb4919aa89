package runner_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
)

// TestProgressUnofferedInSession: in a 2025-11-25 HTTP session the run
// is the only client, so progress on a POST's stream for a token none
// of its requests in the session offered names no request at all and
// fails PRO1003 (T-PROG-1), as on stdio. Without a session the server
// may serve other clients, whose request the token may be: it warns.
func TestProgressUnofferedInSession(t *testing.T) {
	for _, tc := range []struct {
		session string
		want    checks.Status
	}{
		{"s1", checks.StatusFail},
		{"", checks.StatusWarn},
	} {
		t.Run(fmt.Sprintf("session=%q", tc.session), func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if req.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				body, _ := io.ReadAll(req.Body)
				id := gjson.GetBytes(body, "id").Raw
				switch gjson.GetBytes(body, "method").Str {
				case "initialize":
					if tc.session != "" {
						w.Header().Set("Mcp-Session-Id", tc.session)
					}
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, id)
				case "notifications/initialized":
					w.WriteHeader(http.StatusAccepted)
				case "ping":
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"never-sent\",\"progress\":1}}\n\n")
					fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", id)
				default:
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
				}
			}))
			t.Cleanup(hs.Close)
			c, _, err := httpRun(t, hs.URL, "auto", 0, 2*time.Second, "lifecycle/ping")
			if err != nil {
				t.Fatal(err)
			}
			var got []checks.Status
			for _, v := range c.verdicts {
				if v.Fixture == "lifecycle/ping" && v.Check.ID == "PRO1003" {
					got = append(got, v.Status)
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				_, detail := c.bad()
				t.Errorf("PRO1003 on lifecycle/ping: %v, want [%v]; findings:\n%s", got, tc.want, detail)
			}
		})
	}
}
