package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// silenceTimeout is the relay's --timeout in these tests.
const silenceTimeout = 200 * time.Millisecond

// methodOf reads the JSON-RPC method of a request the upstream got.
func methodOf(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return gjson.GetBytes(b, "method").Str
}

// hangUntilGone holds a request until its client (the relay) goes away.
func hangUntilGone(r *http.Request) { <-r.Context().Done() }

func pong(w http.ResponseWriter, r *http.Request, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"jsonrpc":"2.0","id":`+gjson.GetBytes(body, "id").Raw+`,"result":{}}`)
}

// sseHead starts an event stream.
func sseHead(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
}

func sendEvent(w http.ResponseWriter, data string) {
	io.WriteString(w, "data: "+data+"\n\n")
	w.(http.Flusher).Flush()
}

// probes are the liveness probes among what the upstream received.
func probes(u *upstream) []seen {
	var out []seen
	for _, s := range u.received() {
		if strings.Contains(s.Body, livenessID) {
			out = append(out, s)
		}
	}
	return out
}

// silenceClient sends the client's requests through the relay, in one
// session, with a credential and the version header.
type silenceClient struct {
	t    *testing.T
	base string
}

func (c silenceClient) post(ctx context.Context, body string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", c.base+"/mcp", strings.NewReader(body))
	req.Header = http.Header{
		"Accept":               {"application/json, text/event-stream"},
		"Content-Type":         {"application/json"},
		"Mcp-Protocol-Version": {"2025-11-25"},
		"Mcp-Session-Id":       {"s-1"},
		"Authorization":        {"Bearer secret-token-123"},
	}
	return http.DefaultTransport.RoundTrip(req)
}

// call sends the request in the background and returns what the client
// got: its body, or the error its connection ended with. cancel makes
// the client give up.
func (c silenceClient) call(body string) (got <-chan string, cancel func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	ch := make(chan string, 1)
	go func() {
		resp, err := c.post(ctx, body)
		if err != nil {
			ch <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			ch <- "error: " + err.Error() + " after " + string(b)
			return
		}
		ch <- string(b)
	}()
	return ch, cancel
}

func theCall(pairs []Pair) []Pair { return pairsOf(pairs, ClientToServer, "tools/call") }

const toolsCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{}}}`

// TestHTTPSilenceJudged: a request the server leaves without its
// response past --timeout, or whose connection it drops, is judged as
// check judges it: after a liveness probe (in the request's session,
// with its credentials and the --header values, an id of the relay's
// own, never seen by the client), the exchange of a live server is
// paired with no response and no failure (RPC1006 fails it), that of a
// server that then refuses connections died on it (PRO1005), and one
// that answers nothing is not judged. Twins: answered in time; a stream
// kept alive by the request's progress.
func TestHTTPSilenceJudged(t *testing.T) {
	const late = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	tests := []struct {
		name string
		// call serves the client's tools/call; everything else is
		// answered with a result unless hangAll.
		call    func(w http.ResponseWriter, r *http.Request, srv *httptest.Server)
		hangAll bool
		// want is the exchange judged: Failure, Died, Note (prefix), and
		// whether it has a response and it was cut.
		wantFailure, wantDied, wantNote string
		wantResponse, wantCut           bool
		wantProbes                      int
		wantClient                      string // prefix of what the client got
	}{
		{name: "answered in time", call: func(w http.ResponseWriter, r *http.Request, _ *httptest.Server) {
			time.Sleep(silenceTimeout / 4)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, late)
		}, wantResponse: true, wantClient: late},
		{name: "progress on its token keeps it alive", call: func(w http.ResponseWriter, r *http.Request, _ *httptest.Server) {
			sseHead(w)
			for range 5 {
				time.Sleep(silenceTimeout / 2)
				sendEvent(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`)
			}
			sendEvent(w, late)
		}, wantResponse: true, wantClient: "data: "},
		{name: "hangs, the server alive", call: func(w http.ResponseWriter, r *http.Request, _ *httptest.Server) { hangUntilGone(r) },
			wantNote: "no reply within 200ms; the server answered a liveness probe, so it is alive and left this request unanswered", wantProbes: 1, wantClient: "error: "},
		{name: "a stream open without the response", call: func(w http.ResponseWriter, r *http.Request, _ *httptest.Server) {
			sseHead(w)
			sendEvent(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`)
			hangUntilGone(r)
		}, wantNote: "no response within 200ms: 1 event without a response; the server answered a liveness probe", wantResponse: true, wantCut: true, wantProbes: 1, wantClient: "error: "},
		{name: "progress on another token does not", call: func(w http.ResponseWriter, r *http.Request, _ *httptest.Server) {
			sseHead(w)
			for range 8 {
				time.Sleep(silenceTimeout / 2)
				sendEvent(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"other","progress":1}}`)
			}
			hangUntilGone(r)
		}, wantNote: "no response within 200ms", wantResponse: true, wantCut: true, wantProbes: 1, wantClient: "error: "},
		{name: "answers past --timeout", call: func(w http.ResponseWriter, r *http.Request, _ *httptest.Server) {
			time.Sleep(3 * silenceTimeout)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, late)
		}, wantNote: "no reply within 200ms; the server answered a liveness probe", wantProbes: 1, wantClient: late},
		{name: "hangs, and so does the probe", hangAll: true, call: func(w http.ResponseWriter, r *http.Request, _ *httptest.Server) { hangUntilGone(r) },
			wantFailure: "no reply within 200ms; the server did not answer a liveness probe either", wantProbes: 1, wantClient: "error: "},
		{name: "drops the connection, the server alive", call: func(http.ResponseWriter, *http.Request, *httptest.Server) { panic(http.ErrAbortHandler) },
			wantNote: "request failed: EOF; the server answered a liveness probe, so it is alive and left this request unanswered", wantProbes: 1, wantClient: "error: "},
		{name: "breaks off its stream, the server alive", call: func(w http.ResponseWriter, r *http.Request, _ *httptest.Server) {
			sseHead(w)
			sendEvent(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`)
			panic(http.ErrAbortHandler)
		}, wantNote: "reading the event stream: unexpected EOF (1 event without a response); the server answered a liveness probe", wantResponse: true, wantCut: true, wantProbes: 1, wantClient: "error: "},
		{name: "drops the connection and goes away", call: func(_ http.ResponseWriter, _ *http.Request, srv *httptest.Server) {
			srv.Listener.Close()
			panic(http.ErrAbortHandler)
		}, wantFailure: "request failed: EOF; the server did not answer a liveness probe either",
			wantDied: "it left the request unanswered, then stopped accepting connections (request failed: ", wantClient: "error: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var srv *httptest.Server
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				switch m := gjson.GetBytes(body, "method").Str; {
				case m == "tools/call":
					tc.call(w, r, srv)
				case tc.hangAll:
					hangUntilGone(r)
				default:
					pong(w, r, body)
				}
			})
			srv = up.srv
			rec := &recorder{}
			h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: silenceTimeout},
				Header: http.Header{"X-Api-Key": {"key-from-the-flag"}}})
			c := silenceClient{t, base}
			body := toolsCall
			if strings.Contains(tc.name, "progress") {
				body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{},"_meta":{"progressToken":"p1"}}}`
			}
			got, cancel := c.call(body)
			defer cancel()
			obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
			if tc.wantClient == late || strings.HasPrefix(tc.wantClient, "data: ") {
				// The reply the client waits for comes, whenever it comes.
			} else {
				time.Sleep(silenceTimeout / 2)
				cancel()
			}
			if g := <-got; !strings.HasPrefix(g, tc.wantClient) || strings.Contains(g, "502") || strings.Contains(g, "wymcp-check") {
				t.Errorf("the client got %q, want %q…", g, tc.wantClient)
			}
			time.Sleep(silenceTimeout / 2)
			obs, pairs = rec.snapshot()
			h.Close()
			if n := len(theCall(pairs)); n != 1 {
				t.Fatalf("%d pairs for the request, want 1\n%s", n, describe(obs, pairs))
			}
			p := theCall(pairs)[0]
			ex := p.Exchange
			if ex.Failure != tc.wantFailure || !strings.HasPrefix(ex.Died, tc.wantDied) || (tc.wantDied == "") != (ex.Died == "") ||
				!strings.HasPrefix(ex.Note, tc.wantNote) || (tc.wantNote == "") != (ex.Note == "") {
				t.Errorf("failure %q, died %q, note %q;\nwant failure %q, died %q…, note %q…", ex.Failure, ex.Died, ex.Note, tc.wantFailure, tc.wantDied, tc.wantNote)
			}
			if (ex.Response != nil) != tc.wantResponse || ex.Response != nil && ex.Response.Cut != tc.wantCut {
				t.Errorf("response %+v; want one: %v, cut: %v", ex.Response, tc.wantResponse, tc.wantCut)
			}
			if tc.wantResponse && !tc.wantCut && p.ReplySeq == 0 {
				t.Errorf("the pair names no reply")
			}
			// One probe, in the request's session, with its version, the
			// client's credential and the --header value.
			ps := probes(up)
			if tc.wantDied != "" {
				ps = nil // refused: it never arrived
			}
			if len(ps) != tc.wantProbes {
				t.Fatalf("%d probes reached the server, want %d: %+v", len(ps), tc.wantProbes, ps)
			}
			for _, pr := range ps {
				want := map[string]string{"Mcp-Session-Id": "s-1", "Mcp-Protocol-Version": "2025-11-25", "Authorization": "Bearer secret-token-123",
					"X-Api-Key": "key-from-the-flag", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
				gotH := map[string]string{}
				for k := range want {
					gotH[k] = pr.Header.Get(k)
				}
				if diff := cmp.Diff(want, gotH); diff != "" {
					t.Errorf("the probe's headers (-want +got):\n%s", diff)
				}
				if pr.Body != `{"jsonrpc":"2.0","id":"wymcp-check-liveness-1","method":"ping"}` {
					t.Errorf("the probe %s", pr.Body)
				}
			}
			// A reply past --timeout is relayed and noted, not paired again.
			if tc.wantClient == late && tc.wantProbes > 0 {
				var noted bool
				for _, o := range obs {
					noted = noted || o.Kind == KindResponse && o.Note == "answers #1 past --timeout, judged then" && !o.Completes
				}
				if !noted {
					t.Errorf("no note on the late reply\n%s", describe(obs, pairs))
				}
			}
		})
	}
}

// TestHTTPSilenceNotJudged: no silence is judged of a request the
// client cancelled, nor while the server waits for the client's answer
// to a request of its own in the session (the clock starts again from
// the answer). Twin: a server that, once answered, still leaves the
// request unanswered past --timeout is judged.
func TestHTTPSilenceNotJudged(t *testing.T) {
	t.Run("cancelled", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			if methodOf(r) == "tools/call" {
				hangUntilGone(r)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		})
		rec := &recorder{}
		h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: silenceTimeout}})
		c := silenceClient{t, base}
		got, cancel := c.call(toolsCall)
		time.Sleep(silenceTimeout / 4)
		resp, err := c.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		time.Sleep(3 * silenceTimeout)
		cancel()
		<-got
		obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
		h.Close()
		if ps := probes(up); len(ps) != 0 {
			t.Errorf("a cancelled request was probed for: %+v", ps)
		}
		if f := theCall(pairs)[0].Exchange.Failure; f != "the client went away before the reply" {
			t.Errorf("failure %q, want the client's leaving\n%s", f, describe(obs, pairs))
		}
	})
	for _, tc := range []struct {
		name      string
		hangAfter bool // the server leaves the request unanswered once the client answered it
	}{{"the server waits for the client", false}, {"once answered, the server still leaves it unanswered", true}} {
		t.Run(tc.name, func(t *testing.T) {
			answered := make(chan struct{})
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				switch m := gjson.GetBytes(body, "method"); {
				case m.Str == "tools/call":
					sseHead(w)
					sendEvent(w, `{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`)
					select {
					case <-answered:
					case <-r.Context().Done():
						return
					}
					if tc.hangAfter {
						hangUntilGone(r)
						return
					}
					time.Sleep(silenceTimeout / 4)
					sendEvent(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
				case !m.Exists():
					// The client's answer.
					w.WriteHeader(http.StatusAccepted)
					close(answered)
				default:
					pong(w, r, body)
				}
			})
			rec := &recorder{}
			h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: silenceTimeout}})
			c := silenceClient{t, base}
			got, cancel := c.call(toolsCall)
			defer cancel()
			rec.waitFor(t, "the server's request", func(obs []Observation, _ []Pair) bool {
				for _, o := range obs {
					if o.Method == "sampling/createMessage" {
						return true
					}
				}
				return false
			})
			// The client takes its time, past --timeout, to answer.
			time.Sleep(3 * silenceTimeout)
			resp, err := c.post(context.Background(), `{"jsonrpc":"2.0","id":"srv-1","result":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}}`)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
			if tc.hangAfter {
				cancel()
			}
			<-got
			h.Close()
			ex := theCall(pairs)[0].Exchange
			if tc.hangAfter {
				if !strings.HasPrefix(ex.Note, "no response within 200ms: 1 event without a response; the server answered a liveness probe") || ex.Failure != "" {
					t.Errorf("failure %q, note %q; want judged silent\n%s", ex.Failure, ex.Note, describe(obs, pairs))
				}
				return
			}
			if ps := probes(up); len(ps) != 0 || ex.Note != "" || ex.Failure != "" || theCall(pairs)[0].ReplySeq == 0 {
				t.Errorf("probes %+v, failure %q, note %q; want the response judged\n%s", ps, ex.Failure, ex.Note, describe(obs, pairs))
			}
		})
	}
}

// TestHTTPSilenceProbe2026: a 2026-07-28 request's probe is
// server/discover, with its headers, as check's runner sends it.
func TestHTTPSilenceProbe2026(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if gjson.GetBytes(body, "method").Str == "tools/call" {
			hangUntilGone(r)
			return
		}
		pong(w, r, body)
	})
	rec := &recorder{}
	h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: silenceTimeout}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {envelope.V20260728}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"add"}}
	go func() {
		if resp, err := http.DefaultTransport.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}()
	_, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
	cancel()
	h.Close()
	if n := theCall(pairs)[0].Exchange.Note; !strings.Contains(n, "the server answered a liveness probe") {
		t.Errorf("note %q", n)
	}
	ps := probes(up)
	if len(ps) != 1 {
		t.Fatalf("%d probes", len(ps))
	}
	want := seen{Method: "POST", Path: "/mcp", Body: `{"jsonrpc":"2.0","id":"wymcp-check-liveness-1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		Header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {envelope.V20260728}, "Mcp-Method": {"server/discover"},
			"User-Agent": {"Go-http-client/1.1"}}} // the client's
	if diff := cmp.Diff(want, seen{ps[0].Method, ps[0].Path, relevant(ps[0].Header), ps[0].Body}); diff != "" {
		t.Errorf("the probe (-want +got):\n%s", diff)
	}
}

// TestHTTPSilenceCloseStopsProbes: Close ends a probe under way at
// once, and pairs its exchange as stopped.
func TestHTTPSilenceCloseStopsProbes(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { hangUntilGone(r) })
	rec := &recorder{}
	cfg := HTTPConfig{Upstream: up.url(), Observer: rec, Limits: Limits{Timeout: silenceTimeout}}
	h := NewHTTP(cfg)
	srv := httptest.NewServer(h)
	defer srv.Close()
	got, cancel := silenceClient{t, srv.URL}.call(toolsCall)
	defer cancel()
	for deadline := time.Now().Add(5 * time.Second); len(probes(up)) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no probe")
		}
	}
	start := time.Now()
	h.Close()
	if d := time.Since(start); d > silenceTimeout/2 {
		t.Errorf("Close took %v with a probe under way", d)
	}
	cancel()
	<-got
	_, pairs := rec.snapshot()
	if len(theCall(pairs)) != 1 || theCall(pairs)[0].Exchange.Failure != "the proxy stopped before the reply" {
		t.Errorf("pairs %s", describe(nil, pairs))
	}
}

// TestHTTPSilenceKeepAlive: a server that pings its client as a
// keep-alive, the client answering each ping at once, still has its
// silence on a request judged: a ping holds up nothing, and an answer of
// the client's does not restart the session's clocks (review rev9: every
// answer restarted them, so a keep-alive kept any hang from being
// judged). Twin: TestHTTPSilenceNotJudged's server waiting on the
// client's sampling answer.
func TestHTTPSilenceKeepAlive(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch m := gjson.GetBytes(body, "method"); {
		case m.Str == "tools/call":
			sseHead(w)
			for i := 1; ; i++ {
				sendEvent(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":"k-%d","method":"ping"}`, i))
				select {
				case <-time.After(silenceTimeout / 4):
				case <-r.Context().Done():
					return
				}
			}
		case !m.Exists():
			w.WriteHeader(http.StatusAccepted) // the client's answer
		default:
			pong(w, r, body)
		}
	})
	rec := &recorder{}
	h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: silenceTimeout}})
	c := silenceClient{t, base}
	got, cancel := c.call(toolsCall)
	defer cancel()
	for i := 1; i <= 12; i++ {
		id := fmt.Sprintf(`"k-%d"`, i)
		rec.waitFor(t, "the server's ping "+id, func(obs []Observation, _ []Pair) bool {
			return slices.ContainsFunc(obs, func(o Observation) bool { return o.Method == "ping" && o.ID == id })
		})
		resp, err := c.post(context.Background(), `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, pairs := rec.snapshot(); len(theCall(pairs)) == 1 {
			break
		}
	}
	obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
	cancel()
	<-got
	h.Close()
	if ex := theCall(pairs)[0].Exchange; ex.Failure != "" || !strings.Contains(ex.Note, "the server answered a liveness probe") {
		t.Errorf("failure %q, note %q; want judged silent\n%s", ex.Failure, ex.Note, describe(obs, pairs))
	}
}

// TestHTTPSilenceDeathPinnedOnlyAlone: a server that drops two requests
// open at once and goes away died of one of them, which is not known:
// neither is pinned PRO1005 (check and wrap judge none then), where the
// one request alone is (TestHTTPSilenceJudged). And a server that breaks
// a stream off after an event id and goes away, the client never
// resuming, is probed when the hold ends: it died on the request
// (PRO1005), as without the event id (review rev9: it only warned).
func TestHTTPSilenceDeathPinnedOnlyAlone(t *testing.T) {
	t.Run("two open", func(t *testing.T) {
		var srv *httptest.Server
		second := make(chan struct{})
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			body := readBody(r)
			if gjson.GetBytes(body, "method").Str != "tools/call" {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			if gjson.GetBytes(body, "id").Int() == 2 {
				close(second)
			} else {
				<-second // both in flight
				time.Sleep(silenceTimeout / 4)
				srv.Listener.Close()
				srv.CloseClientConnections()
			}
			hangUntilGone(r)
		})
		srv = up.srv
		rec := &recorder{}
		h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: 4 * silenceTimeout}})
		c := silenceClient{t, base}
		got1, cancel1 := c.call(toolsCall)
		defer cancel1()
		got2, cancel2 := c.call(strings.Replace(toolsCall, `"id":1`, `"id":2`, 1))
		defer cancel2()
		<-got1
		<-got2
		obs, pairs := rec.waitFor(t, "both pairs", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 2 })
		h.Close()
		for _, p := range theCall(pairs) {
			if p.Exchange.Died != "" || !strings.Contains(p.Exchange.Failure, "which one it died of is not known") {
				t.Errorf("died %q, failure %q; want no death pinned\n%s", p.Exchange.Died, p.Exchange.Failure, describe(obs, pairs))
			}
		}
	})
	t.Run("broken off after an id, never resumed", func(t *testing.T) {
		var srv *httptest.Server
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			if methodOf(r) != "tools/call" {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			sseHead(w)
			io.WriteString(w, "id: ev-1\ndata: \n\n")
			w.(http.Flusher).Flush()
			srv.Listener.Close()
			panic(http.ErrAbortHandler)
		})
		srv = up.srv
		rec := &recorder{}
		h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: silenceTimeout}})
		c := silenceClient{t, base}
		got, cancel := c.call(toolsCall)
		defer cancel()
		<-got
		obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
		h.Close()
		if ex := theCall(pairs)[0].Exchange; !strings.HasPrefix(ex.Died, "it left the request unanswered, then stopped accepting connections") {
			t.Errorf("died %q, failure %q, note %q; want PRO1005's death\n%s", ex.Died, ex.Failure, ex.Note, describe(obs, pairs))
		}
	})
}

func readBody(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	return b
}

// TestHTTPSilenceIdleConnectionRace: a request dropped on a pooled
// connection that sat idle long enough for the server to close it as
// idle may never have reached the server (the relay's own pooling,
// which check never meets): not judged. Twin: the same drop on a
// connection used a moment ago is the server's, judged (RPC1006).
func TestHTTPSilenceIdleConnectionRace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		idle   time.Duration
		judged bool
	}{{"used a moment ago", 0, true}, {"idle past the race bound", idleRace + 100*time.Millisecond, false}} {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				body := readBody(r)
				if gjson.GetBytes(body, "method").Str == "tools/call" {
					panic(http.ErrAbortHandler)
				}
				pong(w, r, body)
			})
			rec := &recorder{}
			h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: silenceTimeout}})
			c := silenceClient{t, base}
			resp, err := c.post(context.Background(), `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			time.Sleep(tc.idle)
			got, cancel := c.call(toolsCall)
			defer cancel()
			<-got
			obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
			h.Close()
			ex := theCall(pairs)[0].Exchange
			if judged := ex.Failure == "" && strings.Contains(ex.Note, "the server answered a liveness probe"); judged != tc.judged {
				t.Errorf("failure %q, note %q; want judged silent: %v\n%s", ex.Failure, ex.Note, tc.judged, describe(obs, pairs))
			}
		})
	}
}

// TestHTTPSilenceServerCancelsItsRequest: a server that asks its client
// (sampling) and then cancels its own request is owed no answer, and
// waits on the client no more: the request it then leaves unanswered is
// judged, its clock pushed back only by the time the server's request
// stood open before the cancellation. The cancelled request stays the
// server's, as wrap keeps it: an answer the client sends anyway pairs
// with it (before, it "answered no request of the server's"), and one
// never sent is no failure at all (before, a pair failed "the server
// cancelled it"). Twin: a request the server still waits on, unanswered,
// holds the clock for the rest of the session.
func TestHTTPSilenceServerCancelsItsRequest(t *testing.T) {
	const (
		timeout  = time.Second
		cancelAt = 100 * time.Millisecond
		answerAt = 700 * time.Millisecond // after the cancellation, before the clock runs out
		sample   = `{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`
		answer   = `{"jsonrpc":"2.0","id":"srv-1","result":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}}`
	)
	tests := []struct {
		name           string
		cancel, answer bool
		silent         bool     // the call is judged silent (else paired when the relay stops)
		server         []string // the server's request's pairs
		unanswered     int64    // Stats.Unanswered: the pairs closed with no reply
	}{
		{name: "cancelled by the server", cancel: true, silent: true},
		{name: "answered anyway", cancel: true, answer: true, silent: true, server: []string{"sampling/createMessage replied"}},
		{name: "not cancelled, not answered", server: []string{"sampling/createMessage failure=the client never answered before the proxy stopped"},
			unanswered: 2}, // and the call, "the proxy stopped before the reply"
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				body := readBody(r)
				switch gjson.GetBytes(body, "method").Str {
				case "tools/call":
				case "":
					w.WriteHeader(http.StatusAccepted) // the client's answer
					return
				default:
					pong(w, r, body)
					return
				}
				sseHead(w)
				sendEvent(w, sample)
				if tc.cancel {
					time.Sleep(cancelAt)
					sendEvent(w, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"srv-1"}}`)
				}
				hangUntilGone(r)
			})
			rec := &recorder{}
			h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: timeout}})
			c := silenceClient{t, base}
			got, cancel := c.call(toolsCall)
			defer cancel()
			if tc.answer {
				rec.waitFor(t, "the cancellation", func(obs []Observation, _ []Pair) bool {
					return slices.ContainsFunc(obs, func(o Observation) bool { return o.Method == "notifications/cancelled" })
				})
				time.Sleep(answerAt - cancelAt)
				resp, err := c.post(context.Background(), answer)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			if tc.silent {
				rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
			} else {
				time.Sleep(2 * timeout)
			}
			cancel()
			<-got
			h.Close()
			obs, pairs, call := oneCallJudged(t, rec, tc.silent)
			if tc.silent {
				// Pushed back by the time the server's request stood open
				// until its cancellation, as the relay saw it, not again
				// by the answer: its clock ran --timeout, and a probe.
				stood := obsTime(obs, "notifications/cancelled").Sub(obsTime(obs, "sampling/createMessage"))
				if ran := call.Done.Sub(call.Sent) - stood; ran < timeout-20*time.Millisecond || ran > timeout+(answerAt-cancelAt)*3/4 {
					t.Errorf("judged silent after its clock ran %v (it stood %v), want about %v", ran, stood, timeout)
				}
			}
			var server []string
			for _, p := range pairsOf(pairs, ServerToClient, "sampling/createMessage") {
				line := p.Method + " replied"
				if p.ReplySeq == 0 {
					line = p.Method + " failure=" + p.Exchange.Failure
				}
				server = append(server, line)
			}
			if diff := cmp.Diff(tc.server, server); diff != "" {
				t.Errorf("the server's request's pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
			for _, o := range obs {
				if o.Note == "answers no request of the server's" {
					t.Errorf("#%d %s", o.Seq, o.Note)
				}
			}
			if n := h.Stats().Unanswered; n != tc.unanswered {
				t.Errorf("%d requests counted unanswered, want %d", n, tc.unanswered)
			}
		})
	}
}

// obsTime is when the first message with method passed.
func obsTime(obs []Observation, method string) time.Time {
	for _, o := range obs {
		if o.Method == method {
			return o.Time
		}
	}
	return time.Time{}
}

// TestHTTPSilenceAnswerRefused: a client's answer to the server's
// request that the server's HTTP layer refuses (a 401 before a token
// refresh, a 400 of a malformed body) answered nothing: the server's
// request waits on, and the session's clocks stand for it (review
// rev72: a tools/call waiting on it was judged silent). The answer sent
// again completes no second pair. The twin: an answer accepted, after
// which the server leaves the call unanswered, is judged silent.
func TestHTTPSilenceAnswerRefused(t *testing.T) {
	const (
		sample = `{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`
		answer = `{"jsonrpc":"2.0","id":"srv-1","result":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}}`
	)
	tests := []struct {
		name    string
		refuse  []int // the statuses the server's HTTP layer gives the answers it refuses, in turn
		resend  bool  // the client sends its answer again
		replies bool  // the server answers the call once it has the answer
		silent  bool  // the call is judged silent
	}{
		{name: "refused 401, sent again", refuse: []int{http.StatusUnauthorized}, resend: true, replies: true},
		{name: "refused 400, never sent again", refuse: []int{http.StatusBadRequest}},
		{name: "accepted, the call left unanswered", silent: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answered := make(chan struct{})
			var mu sync.Mutex
			refuse := slices.Clone(tc.refuse)
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				body := readBody(r)
				switch gjson.GetBytes(body, "method").Str {
				case "tools/call":
				case "":
					mu.Lock()
					defer mu.Unlock()
					if len(refuse) > 0 {
						w.WriteHeader(refuse[0])
						refuse = refuse[1:]
						return
					}
					w.WriteHeader(http.StatusAccepted)
					close(answered)
					return
				default:
					pong(w, r, body)
					return
				}
				sseHead(w)
				sendEvent(w, sample)
				select {
				case <-answered:
				case <-r.Context().Done():
					return
				}
				if !tc.replies {
					hangUntilGone(r)
					return
				}
				sendEvent(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
			})
			rec := &recorder{}
			h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: silenceTimeout}})
			c := silenceClient{t, base}
			got, cancel := c.call(toolsCall)
			defer cancel()
			rec.waitFor(t, "the server's request", func(obs []Observation, _ []Pair) bool {
				return slices.ContainsFunc(obs, func(o Observation) bool { return o.Method == "sampling/createMessage" })
			})
			send := func() {
				resp, err := c.post(context.Background(), answer)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			send()
			// The client takes its time, past --timeout, to mend.
			time.Sleep(3 * silenceTimeout)
			if tc.resend {
				send()
			}
			if tc.replies || tc.silent {
				rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
			}
			cancel()
			<-got
			h.Close()
			obs, pairs, call := oneCallJudged(t, rec, tc.silent)
			if replied := call.ReplySeq != 0; replied != tc.replies {
				t.Errorf("the call replied: %v, want %v\n%s", replied, tc.replies, describe(obs, pairs))
			}
			if n := len(pairsOf(pairs, ServerToClient, "sampling/createMessage")); n != 1 {
				t.Errorf("%d pairs for the server's request, want 1\n%s", n, describe(obs, pairs))
			}
			for _, o := range obs {
				if o.Note == "answers no request of the server's" {
					t.Errorf("#%d %s", o.Seq, o.Note)
				}
			}
		})
	}
}

// oneCallJudged returns what the relay observed and paired, and the one
// pair of the call, failing the test unless there is exactly one and it
// was judged silent (the server answered a liveness probe) exactly when
// silent says.
func oneCallJudged(t *testing.T, rec *recorder, silent bool) ([]Observation, []Pair, Pair) {
	t.Helper()
	obs, pairs := rec.snapshot()
	calls := theCall(pairs)
	if len(calls) != 1 {
		t.Fatalf("%d pairs for the call\n%s", len(calls), describe(obs, pairs))
	}
	ex := calls[0].Exchange
	if judged := ex.Failure == "" && strings.Contains(ex.Note, "the server answered a liveness probe"); judged != silent {
		t.Errorf("failure %q, note %q; want judged silent: %v\n%s", ex.Failure, ex.Note, silent, describe(obs, pairs))
	}
	return obs, pairs, calls[0]
}
