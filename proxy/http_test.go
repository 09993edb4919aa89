package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
)

// seen is what one side of the relay saw of one HTTP request.
type seen struct {
	Method, Path string
	Header       http.Header
	Body         string
}

// upstream is a fake MCP server that records what reached it and
// answers with the handler given.
type upstream struct {
	mu   sync.Mutex
	got  []seen
	srv  *httptest.Server
	path string
}

func newUpstream(t *testing.T, reply http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{path: "/mcp"}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.got = append(u.got, seen{r.Method, r.URL.RequestURI(), r.Header.Clone(), string(body)})
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body)) // the reply may read it too
		reply(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) url() *url.URL {
	p, _ := url.Parse(u.srv.URL + u.path)
	return p
}

func (u *upstream) received() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.got...)
}

// startRelay serves an HTTP relay to up on loopback.
func startRelay(t *testing.T, up *url.URL, rec Observer, cfg HTTPConfig) (*HTTP, string) {
	t.Helper()
	cfg.Upstream, cfg.Observer = up, rec
	h := NewHTTP(cfg)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return h, srv.URL
}

// sentHeaders are the headers the tests' client sends: what a Streamable
// HTTP client sends, plus a custom one.
func sentHeaders() http.Header {
	return http.Header{
		"Accept":               {"application/json, text/event-stream"},
		"Content-Type":         {"application/json"},
		"Mcp-Protocol-Version": {"2025-11-25"},
		"Mcp-Session-Id":       {"s-1"},
		"Authorization":        {"Bearer secret-token-123"},
		"X-Odd":                {"a", "b"},
		"User-Agent":           {"test-client/1"},
	}
}

// relevant drops the headers that belong to each connection, not to the
// message (RFC 9110 §7.6.1), and those Go's client or server sets on
// each hop by itself.
func relevant(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range []string{"Content-Length", "Accept-Encoding", "Connection", "Date", "Transfer-Encoding"} {
		out.Del(k)
	}
	return out
}

func TestHTTPRelaysEverythingUnchanged(t *testing.T) {
	sse := "event: message\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\r\n\r\n" +
		": keep-alive\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":7,\"result\":{\"x\":\"\\u001b[31m\"}}\r\r"
	tests := []struct {
		name           string
		method, path   string
		body           string
		status         int
		replyHeader    http.Header
		replyBody      string
		wantKinds      []Kind // of the observations, in order
		wantPair       bool
		wantReplyMsgs  int
		wantPairMethod string
	}{
		{name: "json reply", method: "POST", path: "/mcp",
			body:   `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`,
			status: 200, replyHeader: http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"s-1"}, "X-Up": {"1"}},
			replyBody: "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":[]}}\n",
			wantKinds: []Kind{KindRequest, KindResponse}, wantPair: true, wantPairMethod: "tools/list"},
		{name: "sse reply", method: "POST", path: "/mcp",
			body:   `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`,
			status: 200, replyHeader: http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}},
			replyBody: sse,
			wantKinds: []Kind{KindRequest, KindNone, KindNotification, KindResponse, KindNone}, wantPair: true,
			wantReplyMsgs: 2, wantPairMethod: "tools/call"},
		{name: "notification accepted", method: "POST", path: "/mcp",
			body:   `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			status: 202, replyHeader: http.Header{},
			wantKinds: []Kind{KindNotification, KindNone}, wantPair: true, wantPairMethod: "notifications/initialized"},
		{name: "get refused", method: "GET", path: "/mcp?x=1",
			status: 405, replyHeader: http.Header{"Allow": {"POST"}, "Content-Type": {"application/json"}},
			replyBody: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"use POST"}}`,
			wantKinds: []Kind{KindNone, KindResponse}, wantPair: true},
		{name: "delete", method: "DELETE", path: "/mcp",
			status: 204, replyHeader: http.Header{},
			wantKinds: []Kind{KindNone, KindNone}, wantPair: true},
		{name: "other path, not paired", method: "GET", path: "/.well-known/oauth-protected-resource",
			status: 200, replyHeader: http.Header{"Content-Type": {"application/json"}},
			replyBody: `{"resource":"x"}`,
			wantKinds: []Kind{KindNone, KindOther}, wantPair: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				for k, vs := range tc.replyHeader {
					w.Header()[k] = vs
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.replyBody)
			})
			rec := &recorder{}
			h, base := startRelay(t, up.url(), rec, HTTPConfig{})

			req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			if tc.body == "" {
				req.Body = http.NoBody
			}
			req.Header = sentHeaders()
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()

			// What reached the server is what the client sent.
			want := []seen{{tc.method, tc.path, sentHeaders(), tc.body}}
			recv := up.received()
			for i := range recv {
				recv[i].Header = relevant(recv[i].Header)
			}
			if diff := cmp.Diff(want, recv); diff != "" {
				t.Errorf("the server received (-sent by the client +received):\n%s", diff)
			}
			// What reached the client is what the server sent.
			if resp.StatusCode != tc.status || string(got) != tc.replyBody {
				t.Errorf("the client got %d %q, the server sent %d %q", resp.StatusCode, got, tc.status, tc.replyBody)
			}
			if diff := cmp.Diff(tc.replyHeader, relevant(resp.Header)); diff != "" {
				t.Errorf("reply headers (-sent by the server +received by the client):\n%s", diff)
			}

			obs, pairs := rec.waitFor(t, "every observation", func(obs []Observation, pairs []Pair) bool {
				return len(obs) >= len(tc.wantKinds) && (!tc.wantPair || len(pairs) == 1)
			})
			h.Close()
			var kinds []Kind
			for _, o := range obs {
				kinds = append(kinds, o.Kind)
				if o.HTTP == nil {
					t.Errorf("observation #%d has no HTTP part", o.Seq)
					continue
				}
				if v := o.HTTP.Header.Get("Authorization"); v != "" && v != Redacted {
					t.Errorf("observation #%d shows Authorization %q", o.Seq, v)
				}
			}
			if diff := cmp.Diff(tc.wantKinds, kinds); diff != "" {
				t.Errorf("observed kinds (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
			if !tc.wantPair {
				if len(pairs) != 0 {
					t.Errorf("traffic off the endpoint was paired:\n%s", describe(obs, pairs))
				}
				return
			}
			if len(pairs) != 1 {
				t.Fatalf("%d pairs, want 1:\n%s", len(pairs), describe(obs, pairs))
			}
			p := pairs[0]
			ex := p.Exchange
			if p.Asker != ClientToServer || p.Method != tc.wantPairMethod || ex.Failure != "" || ex.Transport != envelope.HTTP {
				t.Errorf("pair: %+v, failure %q", p, ex.Failure)
			}
			if string(ex.Request.Body) != tc.body || ex.Request.HTTPMethod() != tc.method {
				t.Errorf("pair request: %s %q", ex.Request.HTTPMethod(), ex.Request.Body)
			}
			if got := ex.Request.Header.Get("Authorization"); got != Redacted {
				t.Errorf("pair request Authorization = %q, want %q", got, Redacted)
			}
			if ex.Response == nil || ex.Response.Status != tc.status {
				t.Fatalf("pair response: %+v", ex.Response)
			}
			if tc.wantReplyMsgs > 0 {
				if len(ex.Response.Messages) != tc.wantReplyMsgs {
					t.Errorf("pair response has %d messages, want %d: %q", len(ex.Response.Messages), tc.wantReplyMsgs, ex.Response.Messages)
				}
				// The judge reads the same messages from the recorded text.
				split, _, err := envelope.SplitSSE(ex.Response.Body, 1<<20)
				if err != nil || len(split) != tc.wantReplyMsgs {
					t.Errorf("the pair's stream text splits into %d messages (%v), want %d: %q", len(split), err, tc.wantReplyMsgs, ex.Response.Body)
				}
			} else if tc.method == "POST" && string(ex.Response.Body) != tc.replyBody {
				t.Errorf("pair response body %q, want %q", ex.Response.Body, tc.replyBody)
			}
			var completes int
			for _, o := range obs {
				if o.Completes {
					completes++
					if o.Seq != p.ReplySeq {
						t.Errorf("observation #%d completes, the pair names #%d", o.Seq, p.ReplySeq)
					}
				}
			}
			if completes != 1 {
				t.Errorf("%d observations complete the pair, want 1", completes)
			}
		})
	}
}

// TestHTTPStreamsEachEvent: an SSE event reaches the client while the
// server still holds the stream open, and is observed then.
func TestHTTPStreamsEachEvent(t *testing.T) {
	next := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for i := range 3 {
			io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":`+string(rune('0'+i))+"}}\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-time.After(10 * time.Second):
				return
			}
		}
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	})
	rec := &recorder{}
	_, base := startRelay(t, up.url(), rec, HTTPConfig{})
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i := range 3 {
		// Each event arrives before the server writes the next: the relay
		// holds nothing back.
		done := make(chan string, 1)
		go func() {
			line, _ := br.ReadString('\n')
			br.ReadString('\n')
			done <- line
		}()
		select {
		case line := <-done:
			if !strings.Contains(line, `"progress":`+string(rune('0'+i))) {
				t.Fatalf("event %d: %q", i, line)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d did not reach the client while the stream was open", i)
		}
		rec.waitFor(t, "the event's observation", func(obs []Observation, _ []Pair) bool {
			return len(obs) >= 3+i // the request, the head, the events so far
		})
		next <- struct{}{}
	}
	io.ReadAll(br)
	_, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
	if n := len(pairs[0].Exchange.Response.Messages); n != 4 {
		t.Errorf("the pair holds %d messages, want 4", n)
	}
}

// TestHTTPServerRequestPairedWithClientResponse: a request the server
// sends on a stream is paired with the response the client POSTs.
func TestHTTPServerRequestPairedWithClientResponse(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.WriteHeader(202)
	})
	rec := &recorder{}
	_, base := startRelay(t, up.url(), rec, HTTPConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, "GET", base+"/mcp", nil)
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	bufio.NewReader(resp.Body).ReadString('\n')
	post, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}`))
	presp, err := http.DefaultClient.Do(post)
	if err != nil {
		t.Fatal(err)
	}
	presp.Body.Close()
	obs, pairs := rec.waitFor(t, "the server's request paired", func(_ []Observation, pairs []Pair) bool {
		return len(pairsOf(pairs, ServerToClient, "roots/list")) == 1
	})
	p := pairsOf(pairs, ServerToClient, "roots/list")[0]
	if got := string(p.Exchange.Response.Messages[0]); got != `{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}` {
		t.Errorf("paired with %q", got)
	}
	if p.ReplySeq == 0 || p.RequestSeq == 0 || p.ReplySeq <= p.RequestSeq {
		t.Errorf("pair seqs %d → %d\n%s", p.RequestSeq, p.ReplySeq, describe(obs, pairs))
	}
}

// TestHTTPHostile: a server that is unreachable, hangs, or floods a
// stream never hangs the relay or the client, and never makes the relay
// keep more than its bound.
func TestHTTPHostile(t *testing.T) {
	t.Run("unreachable", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		u, _ := url.Parse(dead.URL + "/mcp")
		dead.Close()
		rec := &recorder{}
		_, base := startRelay(t, u, rec, HTTPConfig{})
		resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("status %d, want 502", resp.StatusCode)
		}
		_, pairs := rec.waitFor(t, "the failed pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
		if f := pairs[0].Exchange.Failure; !strings.Contains(f, "could not be reached") || pairs[0].Exchange.Response != nil {
			t.Errorf("failure %q, response %+v", f, pairs[0].Exchange.Response)
		}
	})
	// A reply that breaks HTTP/1.1's syntax (its status line, its chunks)
	// is the server's finding, as check judges it (HTTP1006), not the
	// relay's failure; the twin, well-formed chunks, is a reply.
	for _, tc := range []struct{ name, reply, cause string }{
		{"a status that is no number", "HTTP/1.1 2x0 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", `malformed HTTP status code "2x0"`},
		{"a chunk size that is no hex number", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2x\r\n{}\r\n0\r\n\r\n", "invalid byte in chunk length"},
		{"well-formed chunks", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				c, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					panic(err)
				}
				io.WriteString(c, tc.reply)
				c.Close()
			})
			rec := &recorder{}
			_, base := startRelay(t, up.url(), rec, HTTPConfig{})
			if resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			_, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
			ex := pairs[0].Exchange
			switch {
			case tc.cause != "" && (ex.Malformed != tc.cause || ex.Failure != "" || ex.Response != nil):
				t.Errorf("malformed %q, failure %q, response %+v; want malformed %q alone", ex.Malformed, ex.Failure, ex.Response, tc.cause)
			case tc.cause == "" && (ex.Malformed != "" || ex.Failure != "" || ex.Response == nil || string(ex.Response.Body) != "{}"):
				t.Errorf("malformed %q, failure %q, response %+v; want the reply", ex.Malformed, ex.Failure, ex.Response)
			}
		})
	}
	t.Run("hangs, client gives up", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		rec := &recorder{}
		_, base := startRelay(t, up.url(), rec, HTTPConfig{})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if _, err := http.DefaultClient.Do(req); err == nil {
			t.Fatal("a hanging server answered")
		}
		_, pairs := rec.waitFor(t, "the failed pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
		if f := pairs[0].Exchange.Failure; !strings.Contains(f, "client went away") {
			t.Errorf("failure %q", f)
		}
	})
	t.Run("floods a stream", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			ev := []byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + strings.Repeat("x", 1000) + "\"}}\n\n")
			for r.Context().Err() == nil {
				if _, err := w.Write(ev); err != nil {
					return
				}
			}
		})
		rec := &recorder{block: make(chan struct{})} // and an Observer that never keeps up
		h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{MaxBytes: 64 << 10}})
		resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.CopyN(io.Discard, resp.Body, 20<<20)
		resp.Body.Close()
		if n != 20<<20 {
			t.Fatalf("relayed %d bytes of the flood", n)
		}
		st := h.Stats()
		if st.DroppedMessages == 0 {
			t.Errorf("an Observer that never reads dropped nothing: %+v", st)
		}
		close(rec.block)
	})
	t.Run("one endless event", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: ")
			chunk := bytes.Repeat([]byte("y"), 32<<10)
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		})
		rec := &recorder{}
		h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{MaxBytes: 64 << 10}})
		resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
		if err != nil {
			t.Fatal(err)
		}
		io.CopyN(io.Discard, resp.Body, 8<<20)
		resp.Body.Close()
		h.Close()
		obs, pairs := rec.snapshot()
		for _, o := range obs {
			if len(o.Raw) > 64<<10 {
				t.Errorf("observation #%d keeps %d bytes, over the bound", o.Seq, len(o.Raw))
			}
		}
		for _, p := range pairs {
			if r := p.Exchange.Response; r != nil && len(r.Body) > 64<<10 {
				t.Errorf("the pair keeps %d bytes, over the bound", len(r.Body))
			}
		}
	})
}

// TestHTTPOversized: a body over the bound is relayed whole, observed
// cut, and its pair is marked not to be judged.
func TestHTTPOversized(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"pad":"` + strings.Repeat("z", 5000) + `"}}`
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"pad":"`+strings.Repeat("q", 5000)+`"}}`)
	})
	rec := &recorder{}
	_, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{MaxBytes: 1000}})
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(got) < 5000 || up.received()[0].Body != big {
		t.Fatalf("not relayed whole: reply %d bytes, request %d of %d", len(got), len(up.received()[0].Body), len(big))
	}
	obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
	if !pairs[0].Oversized {
		t.Errorf("pair not marked oversized")
	}
	for _, o := range obs {
		if !o.Oversized || int64(len(o.Raw)) != 1000 || o.Size < 5000 || o.Note == "" {
			t.Errorf("observation #%d: oversized %v, kept %d, size %d, note %q", o.Seq, o.Oversized, len(o.Raw), o.Size, o.Note)
		}
	}
	if obs[0].Kind != KindRequest || obs[0].Method != "tools/call" {
		t.Errorf("the cut request is read as %v %q", obs[0].Kind, obs[0].Method)
	}
}

// TestHTTPHeaderFlag: --header values replace the client's, reach the
// server, and are redacted wherever the relay shows them.
func TestHTTPHeaderFlag(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"bad token tok-from-flag-999"}}`)
	})
	rec := &recorder{}
	h, base := startRelay(t, up.url(), rec, HTTPConfig{Header: http.Header{"X-Api-Key": {"tok-from-flag-999"}}})
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("X-Api-Key", "the-clients-own")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := up.received()[0].Header.Values("X-Api-Key"); len(got) != 1 || got[0] != "tok-from-flag-999" {
		t.Errorf("the server got X-Api-Key %q", got)
	}
	obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
	if got := obs[0].HTTP.Header.Get("X-Api-Key"); got != Redacted {
		t.Errorf("observed X-Api-Key %q", got)
	}
	if got := pairs[0].Exchange.Request.Header.Get("X-Api-Key"); got != Redacted {
		t.Errorf("paired X-Api-Key %q", got)
	}
	if got := string(h.Redactor().Scrub(pairs[0].Exchange.Response.Body)); strings.Contains(got, "tok-from-flag-999") {
		t.Errorf("Scrub left the secret: %s", got)
	}
}

// TestHTTPClientLeavesAfterA202: a client that has the 202 of its
// notification and closes before the end of the body's framing (node's
// fetch does) leaves a whole exchange, judged, not a cut-off one.
func TestHTTPClientLeavesAfterA202(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		w.(http.Flusher).Flush() // chunked: the body's end comes later
		time.Sleep(300 * time.Millisecond)
	})
	rec := &recorder{}
	_, base := startRelay(t, up.url(), rec, HTTPConfig{})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // before the body's end: the connection goes
	_, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
	if f := pairs[0].Exchange.Failure; f != "" || pairs[0].Exchange.Response == nil || pairs[0].Exchange.Response.Status != 202 {
		t.Errorf("failure %q, response %+v", f, pairs[0].Exchange.Response)
	}
}

// TestHTTPKeepsUpstreamQueryAndEscapedPath: the upstream URL's query (a
// server that takes its key there) reaches the server whatever query the
// client's request has: the client's parameters go as they came beside
// it, and one of the same name gives way to it, as a client's header
// gives way to --header's. An escaped slash in the path stays escaped.
// The relay sent the client's empty query instead, and the path
// decoded; then a client's query replaced the upstream's whole.
func TestHTTPKeepsUpstreamQueryAndEscapedPath(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	target, _ := url.Parse(up.srv.URL + "/api%2Fv1/mcp?api_key=S3")
	_, base := startRelay(t, target, &recorder{}, HTTPConfig{})
	for _, path := range []string{"/api%2Fv1/mcp", "/api%2Fv1/mcp?api_key=other", "/api%2Fv1/mcp?session=a%20b&api%5Fkey=x", "/api%2Fv1/mcp?session=1"} {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		req.Header = sentHeaders()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	var got []string
	for _, s := range up.received() {
		got = append(got, s.Path)
	}
	if diff := cmp.Diff([]string{"/api%2Fv1/mcp?api_key=S3", "/api%2Fv1/mcp?api_key=S3", "/api%2Fv1/mcp?session=a%20b&api_key=S3", "/api%2Fv1/mcp?session=1&api_key=S3"}, got); diff != "" {
		t.Errorf("request URIs the server saw (-want +got):\n%s", diff)
	}
}

// TestHTTPBrokenReplyBreaksTheClient: a reply the server breaks off (or
// whose framing is malformed) reaches the client broken, as it would
// directly, not as a clean end: a relay that ended it cleanly would
// tell the client a cut stream was whole. The twin, a stream the server
// ends, reads to its end.
func TestHTTPBrokenReplyBreaksTheClient(t *testing.T) {
	event := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
	tests := []struct {
		name      string
		ends      func(w http.ResponseWriter) // after the event
		wantErr   bool
		failure   string // the exchange's, a prefix ("": none)
		malformed bool   // judged as a reply that broke HTTP/1.1 (HTTP1006)
	}{
		{"dies mid-stream", func(w http.ResponseWriter) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			c.Close() // no final chunk: the stream broke off
		}, true, "reading the event stream: unexpected EOF", false},
		{"malformed chunk", func(w http.ResponseWriter) {
			c, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			buf.WriteString("2x\r\n{}\r\n0\r\n\r\n") // a chunk size that is no hex number
			buf.Flush()
			c.Close()
		}, true, "", true},
		{"ends the stream", func(http.ResponseWriter) {}, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				io.WriteString(w, event)
				w.(http.Flusher).Flush()
				tt.ends(w)
			})
			rec := &recorder{}
			_, base := startRelay(t, up.url(), rec, HTTPConfig{})
			resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1}}}`))
			if err != nil {
				t.Fatal(err)
			}
			got, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(got) != event {
				t.Errorf("the client read %q, want the event %q", got, event)
			}
			if (rerr != nil) != tt.wantErr {
				t.Errorf("the client's read ended with %v; want an error: %v", rerr, tt.wantErr)
			}
			_, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
			ex := pairs[0].Exchange
			if !strings.HasPrefix(ex.Failure, tt.failure) || tt.failure == "" && ex.Failure != "" || (ex.Malformed != "") != tt.malformed {
				t.Errorf("failure %q, malformed %q; want failure %q, malformed: %v", ex.Failure, ex.Malformed, tt.failure, tt.malformed)
			}
		})
	}
}

// TestHTTPServerRequestsPairedPerSession: two sessions' servers each ask
// their client with id 0 (SDKs count a session's requests from 0), and
// the clients answer in the other order: each answer pairs with its own
// session's request, and neither request is given up as ambiguous. The
// twin: an answer in a session that asked nothing answers no request.
func TestHTTPServerRequestsPairedPerSession(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" {
			method := map[string]string{"A": "sampling/createMessage", "B": "elicitation/create"}[r.Header.Get("Mcp-Session-Id")]
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":%q}\n\n", method)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.WriteHeader(202)
	})
	rec := &recorder{}
	_, base := startRelay(t, up.url(), rec, HTTPConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, sid := range []string{"A", "B"} {
		get, _ := http.NewRequestWithContext(ctx, "GET", base+"/mcp", nil)
		get.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(get)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		bufio.NewReader(resp.Body).ReadString('\n')
	}
	rec.waitFor(t, "both server requests", func(obs []Observation, _ []Pair) bool {
		n := 0
		for _, o := range obs {
			if o.Kind == KindRequest && o.Dir == ServerToClient {
				n++
			}
		}
		return n == 2
	})
	answer := map[string]string{
		"B": `{"jsonrpc":"2.0","id":0,"result":{"action":"decline"}}`,
		"A": `{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`,
		"C": `{"jsonrpc":"2.0","id":0,"result":{}}`,
	}
	for _, sid := range []string{"B", "A", "C"} {
		post, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(answer[sid]))
		post.Header.Set("Mcp-Session-Id", sid)
		presp, err := http.DefaultClient.Do(post)
		if err != nil {
			t.Fatal(err)
		}
		presp.Body.Close()
	}
	obs, pairs := rec.waitFor(t, "the answers observed", func(obs []Observation, _ []Pair) bool {
		n := 0
		for _, o := range obs {
			if o.Kind == KindResponse && o.Dir == ClientToServer {
				n++
			}
		}
		return n == 3
	})
	got := map[string]string{}
	for _, p := range pairs {
		if p.Asker != ServerToClient {
			continue
		}
		if p.Exchange.Failure != "" || p.Exchange.Response == nil {
			t.Errorf("%s: given up: %q\n%s", p.Method, p.Exchange.Failure, describe(obs, pairs))
			continue
		}
		got[p.Method] = string(p.Exchange.Response.Messages[0])
	}
	want := map[string]string{"sampling/createMessage": answer["A"], "elicitation/create": answer["B"]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
	}
	for _, o := range obs {
		if o.Kind == KindResponse && o.Dir == ClientToServer && string(o.Raw) == answer["C"] && o.Note != "answers no request of the server's" {
			t.Errorf("session C's answer: note %q, want it to answer no request\n%s", o.Note, describe(obs, pairs))
		}
	}
}
