package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHTTPGetStreamProgressForAnsweredRequest: progress on a session's
// GET stream for the token of a request the relay already relayed the
// answer of (more than Limits.Quiet before) names no active request
// (T-PROG-1, MUST): PRO1003 fails it, as check fails progress for a
// token no request of its session offered. The GET's exchanges list the
// tokens of the session's requests still active (envelope.Exchange.
// Offered); they listed none, and the progress only warned, as if its
// request were in flight (T-HTTP-12). The twins: progress for a request
// still in flight warns as before (T-HTTP-12: the GET stream's messages
// SHOULD leave it alone), and so does progress within Limits.Quiet of
// the answer, or in a session the relay did not see begin, whose
// requests it may not all know.
func TestHTTPGetStreamProgressForAnsweredRequest(t *testing.T) {
	const (
		initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
		callBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{},"_meta":{"progressToken":1}}}`
		progress = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
		warnGet  = "warn reply.params.progressToken: progress for token 1 on the GET stream, whose messages SHOULD be unrelated to the client's requests in flight (T-HTTP-12)"
	)
	tests := []struct {
		name     string
		init     bool // the client's initialize goes through the relay
		answered bool // the call is answered before the progress
		quiet    time.Duration
		want     string
	}{
		{"answered, in a session begun through the relay", true, true, 50 * time.Millisecond, "fail reply.params.progressToken: progress for token 1, which no request of the session still active offered (T-PROG-1)"},
		{"in flight (twin)", true, false, 50 * time.Millisecond, warnGet},
		// (Two connections: within Limits.Quiet of the answer, which came
		// first on the server is not known.)
		{"answered within Limits.Quiet (twin)", true, true, 5 * time.Second, warnGet},
		{"answered, in a session not begun through the relay (twin)", false, true, 50 * time.Millisecond, warnGet},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			emit, release := make(chan struct{}), make(chan struct{})
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(200)
					w.(http.Flusher).Flush()
					select {
					case <-emit:
					case <-r.Context().Done():
						return
					}
					io.WriteString(w, progress)
					w.(http.Flusher).Flush()
					<-r.Context().Done()
					return
				}
				body, _ := io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "application/json")
				switch {
				case strings.Contains(string(body), `"initialize"`):
					w.Header().Set("Mcp-Session-Id", "S")
					io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`)
				case strings.Contains(string(body), `"tools/call"`):
					if !tc.answered {
						<-release
					}
					io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
				default:
					w.WriteHeader(202)
				}
			})
			rec := &recorder{}
			_, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Quiet: tc.quiet}})
			post := func(body string) {
				req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", "S")
				req.Header.Set("MCP-Protocol-Version", "2025-06-18")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			if tc.init {
				post(initBody)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			get, _ := http.NewRequestWithContext(ctx, "GET", base+"/mcp", nil)
			get.Header.Set("Accept", "text/event-stream")
			get.Header.Set("Mcp-Session-Id", "S")
			get.Header.Set("MCP-Protocol-Version", "2025-06-18")
			resp, err := http.DefaultClient.Do(get)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			called := make(chan struct{})
			go func() { post(callBody); close(called) }()
			if tc.answered {
				<-called
				time.Sleep(200 * time.Millisecond) // past Limits.Quiet
			} else {
				time.Sleep(100 * time.Millisecond) // the call is at the server
			}
			close(emit)
			rec.waitFor(t, "the progress observed", func(obs []Observation, _ []Pair) bool {
				for _, o := range obs {
					if o.Method == "notifications/progress" {
						return true
					}
				}
				return false
			})
			time.Sleep(100 * time.Millisecond)
			close(release)
			<-called
			obs, pairs := rec.snapshot()
			j := newJudge()
			var got []string
			for _, p := range pairs {
				if p.Exchange == nil || p.Exchange.Request.Method != http.MethodGet {
					continue
				}
				for _, v := range j.verdicts(relayed(t, p.Exchange)) {
					if v.Check.ID == "PRO1003" && len(v.Findings) > 0 {
						for _, f := range v.Findings {
							got = append(got, string(v.Status)+" "+f.Path+": "+f.Message)
						}
					}
				}
			}
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("PRO1003 on the GET stream (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
		})
	}
}
