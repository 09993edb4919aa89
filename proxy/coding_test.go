package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transcript"
)

// compressed codes b as the coding names it: gzip or deflate (zlib).
func compressed(t testing.TB, coding string, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&out)
	case "deflate":
		w = zlib.NewWriter(&out)
	default:
		t.Fatalf("no coding %q", coding)
	}
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// wire keeps what the server wrote, byte for byte.
type wire struct {
	mu sync.Mutex
	b  []byte
}

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *wire) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.b)
}

// asked is the coding a request's Accept-Encoding asks for, as
// nginx's gzip and Express's compression() pick one: gzip first.
func asked(r *http.Request) string {
	ae := r.Header.Get("Accept-Encoding")
	switch {
	case strings.Contains(ae, "gzip"):
		return "gzip"
	case strings.Contains(ae, "deflate"):
		return "deflate"
	}
	return ""
}

// fails lists the failed and unjudged verdicts, "ID status".
func fails(vs []checks.Verdict) []string {
	var out []string
	for _, v := range vs {
		if v.Status == checks.StatusFail || v.Status == checks.StatusError {
			out = append(out, fmt.Sprintf("%s %s", v.Check.ID, v.Status))
		}
	}
	return out
}

// rejudged is the verdicts of ex once recorded and read back, as lint
// judges a --record transcript.
func rejudged(t *testing.T, ex *envelope.Exchange) []checks.Verdict {
	t.Helper()
	var line bytes.Buffer
	if err := transcript.Write(&line, "x", ex, nil); err != nil {
		t.Fatal(err)
	}
	rec, err := transcript.NewReader("t.jsonl", &line).Next()
	if err != nil {
		t.Fatal(err)
	}
	return checks.Judge(checks.Input{Exchange: &rec.Exchange}, checks.All())
}

// TestHTTPDecodesForJudging: a server that compresses its reply when
// the client asks (nginx gzip, Express compression()) gets the client's
// Accept-Encoding and the client gets the server's coded bytes, as they
// are; the relay observes and judges the reply decoded, as the client
// reads it, and a transcript of the exchange is judged the same.
func TestHTTPDecodesForJudging(t *testing.T) {
	result := `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`
	wrongVersion := `{"jsonrpc":"1.0","id":7,"result":{"tools":[]}}`
	request := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`
	tests := []struct {
		name   string
		accept string // the client's Accept-Encoding
		ctype  string
		reply  string // decoded
		coding string // what the server answers with
		want   []string
	}{
		{name: "gzip asked", accept: "gzip, deflate, br", ctype: "application/json", reply: result, coding: "gzip"},
		{name: "deflate asked", accept: "deflate", ctype: "application/json", reply: result, coding: "deflate"},
		{name: "nothing asked", ctype: "application/json", reply: result},
		{name: "gzip asked, wrong jsonrpc", accept: "gzip", ctype: "application/json", reply: wrongVersion, coding: "gzip",
			want: []string{"RPC1002 fail"}},
		{name: "gzip asked, SSE", accept: "gzip", ctype: "text/event-stream", reply: "event: message\ndata: " + result + "\n\n", coding: "gzip"},
		{name: "gzip asked, SSE, wrong jsonrpc", accept: "gzip", ctype: "text/event-stream", reply: "data: " + wrongVersion + "\n\n", coding: "gzip",
			want: []string{"RPC1002 fail"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sent wire
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.Header().Set("Vary", "Accept-Encoding")
				c := asked(r)
				if c != tc.coding {
					t.Errorf("the server was asked for %q, want %q", c, tc.coding)
				}
				body := []byte(tc.reply)
				if c != "" {
					w.Header().Set("Content-Encoding", c)
					body = compressed(t, c, body)
				}
				io.MultiWriter(w, &sent).Write(body)
			})
			rec := &recorder{}
			_, base := startRelay(t, up.url(), rec, HTTPConfig{})
			req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(request))
			req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
				"Mcp-Protocol-Version": {"2025-11-25"}}
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			// A client that reads the coding itself: it sees the bytes.
			resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(got, sent.bytes()) || resp.Header.Get("Content-Encoding") != tc.coding {
				t.Errorf("the client got %q (Content-Encoding %q), the server sent %q (%q)", got, resp.Header.Get("Content-Encoding"), sent.bytes(), tc.coding)
			}

			obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
			var replies []string
			for _, o := range obs {
				if o.Dir == ServerToClient && o.Raw != nil {
					replies = append(replies, string(o.Raw))
				}
			}
			wantMsg := tc.reply
			if tc.ctype == "text/event-stream" {
				wantMsg = strings.TrimSuffix(tc.reply[strings.Index(tc.reply, "data: ")+len("data: "):], "\n\n")
			}
			if diff := cmp.Diff([]string{wantMsg}, replies); diff != "" {
				t.Errorf("observed replies (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}

			ex := pairs[0].Exchange
			if ex.Failure != "" || ex.Response == nil {
				t.Fatalf("pair: failure %q, response %v", ex.Failure, ex.Response)
			}
			if string(ex.Response.Body) != tc.reply {
				t.Errorf("the judged body is %q, want the decoded %q", ex.Response.Body, tc.reply)
			}
			if ce := ex.Response.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("the judged copy keeps Content-Encoding %q", ce)
			}
			if (tc.coding != "") != strings.Contains(ex.Note, "Content-Encoding "+tc.coding) {
				t.Errorf("note %q for Content-Encoding %q", ex.Note, tc.coding)
			}
			vs := checks.Judge(checks.Input{Exchange: ex}, checks.All())
			if diff := cmp.Diff(tc.want, fails(vs)); diff != "" {
				t.Errorf("fails and errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(fails(vs), fails(rejudged(t, ex))); diff != "" {
				t.Errorf("the recorded exchange is judged otherwise (-live +recorded):\n%s", diff)
			}
		})
	}
}

// TestHTTPCodedStreamEachEvent: a compressed SSE stream, flushed event
// by event, is decoded as it passes: each event is observed while the
// server still holds the stream open, before the client has read it
// whole.
func TestHTTPCodedStreamEachEvent(t *testing.T) {
	next := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(200)
		z := gzip.NewWriter(w)
		for i := range 3 {
			fmt.Fprintf(z, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d}}\n\n", i)
			z.Flush()
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-time.After(10 * time.Second):
				return
			}
		}
		io.WriteString(z, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		z.Close()
	})
	rec := &recorder{}
	_, base := startRelay(t, up.url(), rec, HTTPConfig{})
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`))
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(zr)
	for i := range 3 {
		line, _ := br.ReadString('\n')
		br.ReadString('\n')
		if !strings.Contains(line, fmt.Sprintf(`"progress":%d`, i)) {
			t.Fatalf("event %d: %q", i, line)
		}
		rec.waitFor(t, "the event's observation", func(obs []Observation, _ []Pair) bool {
			return len(obs) >= 3+i && obs[2+i].Kind == KindNotification // the request, the head, the events so far
		})
		next <- struct{}{}
	}
	io.ReadAll(br)
	_, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
	if n := len(pairs[0].Exchange.Response.Messages); n != 4 || pairs[0].Exchange.Failure != "" {
		t.Errorf("the pair holds %d messages (failure %q), want 4", n, pairs[0].Exchange.Failure)
	}
}

// TestHTTPCodedNotJudged: a body the relay cannot decode, or that
// decodes past the byte bound, is relayed as it is and not judged: a
// bomb as an oversized reply is, a cut body or an unknown coding with
// the reason. One whose bytes no client can decode (a bad checksum) is
// the server's finding, Malformed (HTTP1006), as check's transport has
// it (review rev58). Their twins, within the bound and decodable, are
// judged.
func TestHTTPCodedNotJudged(t *testing.T) {
	const bound = 64 << 10
	zeros := func(n int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{"pad":"` + strings.Repeat("0", n) + `"}}`)
	}
	corrupt := compressed(t, "gzip", zeros(10))
	corrupt[len(corrupt)-6] ^= 0xff // the CRC-32
	tests := []struct {
		name      string
		coding    string
		body      []byte
		oversized bool
		failure   string // in the pair's failure; "" judged
		malformed string // the pair's Malformed
	}{
		{name: "bomb", coding: "gzip", body: compressed(t, "gzip", zeros(10<<20)), oversized: true, failure: "larger than the byte bound"},
		{name: "within the bound", coding: "gzip", body: compressed(t, "gzip", zeros(bound-100))},
		{name: "corrupt gzip", coding: "gzip", body: corrupt, malformed: "Content-Encoding gzip: the body does not decode (gzip: invalid checksum)"},
		{name: "cut gzip", coding: "gzip", body: compressed(t, "gzip", zeros(10))[:25], failure: "Content-Encoding gzip: the body does not decode (unexpected EOF)"},
		{name: "br", coding: "br", body: []byte{0x0b, 0x02, 0x80, 0x7b, 0x7d, 0x03}, failure: "Content-Encoding br: a coding the checker does not decode"},
		{name: "gzip, x-gzip", coding: "gzip, x-gzip", body: compressed(t, "gzip", compressed(t, "gzip", zeros(10)))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", tc.coding)
				w.Write(tc.body)
			})
			rec := &recorder{}
			_, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{MaxBytes: bound}})
			req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(got, tc.body) {
				t.Errorf("the client got %d bytes, the server sent %d", len(got), len(tc.body))
			}
			obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
			p := pairs[0]
			if p.Oversized != tc.oversized || !strings.Contains(p.Exchange.Failure, tc.failure) || (tc.failure == "") != (p.Exchange.Failure == "") || p.Exchange.Malformed != tc.malformed {
				t.Errorf("pair: oversized %v, failure %q, malformed %q; want %v, %q, %q\n%s", p.Oversized, p.Exchange.Failure, p.Exchange.Malformed, tc.oversized, tc.failure, tc.malformed, describe(obs, pairs))
			}
			reply := obs[len(obs)-1]
			if reply.Size != int64(len(tc.body)) || int64(len(reply.Raw)) > bound {
				t.Errorf("reply observation: size %d (wire %d), kept %d", reply.Size, len(tc.body), len(reply.Raw))
			}
			if (tc.failure != "" || tc.malformed != "") && !strings.Contains(reply.Note, "Content-Encoding") {
				t.Errorf("reply observation's note %q does not name the coding", reply.Note)
			}
			switch f := fails(checks.Judge(checks.Input{Exchange: p.Exchange}, checks.All())); {
			case tc.malformed != "" && !slices.Equal(f, []string{"HTTP1006 fail"}):
				t.Errorf("judged: %v, want HTTP1006's fail", f)
			case tc.malformed != "" && !slices.Equal(fails(rejudged(t, p.Exchange)), []string{"HTTP1006 fail"}):
				t.Errorf("recorded and read back (lint): %v, want HTTP1006's fail", fails(rejudged(t, p.Exchange)))
			case tc.failure == "" && tc.malformed == "" && len(f) != 0:
				t.Errorf("judged: %v", f)
			}
		})
	}
}

// TestHTTPCodedSecretsScrubbed: the judged copy is the decoded text, so
// a credential a server echoes inside a compressed reply is found and
// scrubbed before anything is printed or recorded, as in a plain one.
func TestHTTPCodedSecretsScrubbed(t *testing.T) {
	const token = "secret-token-123"
	for _, coding := range []string{"gzip", ""} {
		t.Run("coding="+coding, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				body := []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad token ` + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + `"}}`)
				w.Header().Set("Content-Type", "application/json")
				if coding != "" {
					w.Header().Set("Content-Encoding", coding)
					body = compressed(t, coding, body)
				}
				w.Write(body)
			})
			rec := &recorder{}
			h, base := startRelay(t, up.url(), rec, HTTPConfig{})
			req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			_, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
			body := pairs[0].Exchange.Response.Body
			if !bytes.Contains(body, []byte(token)) {
				t.Fatalf("the judged body %q does not hold the echoed token", body)
			}
			if scrubbed := h.Redactor().Scrub(body); bytes.Contains(scrubbed, []byte(token)) {
				t.Errorf("the token survives scrubbing: %q", scrubbed)
			}
		})
	}
}

// TestHTTPCodedServerRequestPaired: a request the server sends on a
// compressed GET stream is decoded and waiting in the ledger before the
// client can read it, so the client's response pairs with it.
func TestHTTPCodedServerRequestPaired(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(200)
			z := gzip.NewWriter(w)
			io.WriteString(z, "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}\n\n")
			z.Flush()
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.WriteHeader(202)
	})
	rec := &recorder{}
	_, base := startRelay(t, up.url(), rec, HTTPConfig{})
	get, _ := http.NewRequest("GET", base+"/mcp", nil)
	get.Header.Set("Accept-Encoding", "gzip")
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(zr).ReadString('\n'); !strings.Contains(line, "roots/list") {
		t.Fatalf("the client read %q", line)
	}
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
	if p.Exchange.Response == nil || p.ReplySeq == 0 || p.Exchange.Failure != "" {
		t.Errorf("not paired with the client's response:\n%s", describe(obs, pairs))
	}
}
