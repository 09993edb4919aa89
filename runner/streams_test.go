package runner_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/refserver"
)

// TestStreamIDsAcrossSession: the reference server, 2025-11-25, each POST
// answered with an SSE stream (a priming event, then the response), its
// event ids numbered per stream ("0", "1" on every stream: T-HTTP-16
// broken, which no one exchange shows) or per server (the conforming
// twin). The run compares each stream with the earlier ones of its
// session, as lint does a transcript's.
func TestStreamIDsAcrossSession(t *testing.T) {
	for _, perStream := range []bool{true, false} {
		t.Run(fmt.Sprintf("ids numbered per stream %v", perStream), func(t *testing.T) {
			var n atomic.Int64
			hs := refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					rec := httptest.NewRecorder()
					srv.ServeHTTP(rec, r)
					res := rec.Result()
					for k, v := range res.Header {
						w.Header()[k] = v
					}
					if r.Method != http.MethodPost || res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
						w.WriteHeader(res.StatusCode)
						_, _ = w.Write(rec.Body.Bytes())
						return
					}
					first, second := "0", "1"
					if !perStream {
						k := n.Add(2)
						first, second = fmt.Sprint(k-1), fmt.Sprint(k)
					}
					w.Header().Del("Content-Length")
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(http.StatusOK)
					fmt.Fprintf(w, "id: %s\ndata: \n\nid: %s\nevent: message\ndata: %s\n\n", first, second, rec.Body.Bytes())
				}
			})
			c, _, err := httpRun(t, hs.URL, envelope.V20251125, 0, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var fails []string
			for _, v := range c.verdicts {
				if v.Check.ID == "HTTP1005" && v.Status != checks.StatusPass && v.Status != checks.StatusSkip {
					fails = append(fails, fmt.Sprintf("%s %s %v", v.Fixture, v.Status, v.Findings))
				}
			}
			switch {
			case perStream && len(fails) == 0:
				t.Error("event ids reused on every stream of the session, and HTTP1005 found nothing")
			case perStream && !slices.ContainsFunc(fails, func(s string) bool { return strings.Contains(s, "fail") && strings.Contains(s, "earlier stream") }):
				t.Errorf("no fail for an id an earlier stream used:\n%s", strings.Join(fails, "\n"))
			case !perStream && len(fails) > 0:
				t.Errorf("ids unique across the session, and HTTP1005 did not pass:\n%s", strings.Join(fails, "\n"))
			}
		})
	}
}

// TestResumedStreamHangsIsSilence: a 2025-11-25 server that answers each
// POST (but initialize) with a stream that sets an event id and ends,
// and holds the resuming GET open without events: the liveness probe
// meets the same stream, so it never got an answer either, and every
// fixture was "could not judge" (error). The server answered the probe's
// POST and set an id: it is there, and the responses it does not deliver
// are its silence (RPC1006 fails).
func TestResumedStreamHangsIsSilence(t *testing.T) {
	hs := refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			switch {
			case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			case r.Method == http.MethodPost && !bytes.Contains(body, []byte(`"initialize"`)) && !bytes.Contains(body, []byte(`"notifications/`)):
				w.Header().Set("Content-Type", "text/event-stream")
				if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
					w.Header().Set("Mcp-Session-Id", sid)
				}
				w.WriteHeader(http.StatusOK)
				fmt.Fprintf(w, "id: e-%d\nretry: 10\ndata:\n\n", time.Now().UnixNano())
			default:
				srv.ServeHTTP(w, r)
			}
		}
	})
	c, _, err := httpRun(t, hs.URL, envelope.V20251125, 0, 500*time.Millisecond, "lifecycle/ping")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range c.verdicts {
		if v.Fixture == "lifecycle/ping" && v.Check.ID == "RPC1006" {
			got = append(got, string(v.Status))
		}
	}
	if !slices.Equal(got, []string{string(checks.StatusFail)}) {
		_, detail := c.bad()
		t.Errorf("RPC1006 of lifecycle/ping: %v, want one fail\n%s", got, detail)
	}
}
