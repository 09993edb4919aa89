package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

const (
	ping     = `{"jsonrpc":"2.0", "id":1,  "method":"ping"}` // odd spacing: must travel as is
	pong     = `{"jsonrpc":"2.0","id":1,"result":{}}`
	progress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
)

// serve starts an httptest server on 127.0.0.1, closed and checked for
// leaked connections when the test ends. Handlers see the request body
// already read: net/http only notices a client that hung up (and cancels
// r.Context()) once the body has been consumed.
func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	checkNoLeaks(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func post(body string) envelope.Request {
	return envelope.Request{
		Header: http.Header{
			"Accept":       {"application/json, text/event-stream"},
			"Content-Type": {"application/json"},
		},
		Body: []byte(body),
	}
}

// timed runs h.Do and measures it.
func timed(ctx context.Context, h *HTTP, req envelope.Request) (envelope.Exchange, time.Duration) {
	start := time.Now()
	ex := h.Do(ctx, req)
	return ex, time.Since(start)
}

// sseWriter writes events and flushes each one at once.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return sseWriter{w, w.(http.Flusher)}
}

func (s sseWriter) send(raw string) error {
	_, err := io.WriteString(s.w, raw)
	s.f.Flush()
	return err
}

func TestHTTPJSONReply(t *testing.T) {
	type seen struct {
		method string
		header http.Header
		body   string
	}
	got := make(chan seen, 1)
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.Header, string(body)}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, pong)
	})
	h := &HTTP{
		URL: url,
		Header: http.Header{
			"Authorization": {"Bearer s3cret"},
			"Content-Type":  {"text/plain"}, // the request's own wins
			"User-Agent":    {"wymcp-check/test"},
		},
		Limits: Limits{Timeout: 5 * time.Second},
	}
	req := post(ping)
	ex := h.Do(context.Background(), req)

	want := envelope.Exchange{
		Transport: envelope.HTTP,
		Request:   req, // as given: the credentials in h.Header stay out
		Response: &envelope.Response{
			Status: http.StatusOK,
			Header: http.Header{"Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(pong))}},
			Body:   []byte(pong),
		},
	}
	ex.Response.Header = stripDate(ex.Response.Header)
	if diff := cmp.Diff(want, ex); diff != "" {
		t.Errorf("exchange (-want +got):\n%s", diff)
	}

	s := <-got
	s.header.Del("Content-Length")
	wantSeen := seen{
		method: http.MethodPost,
		header: http.Header{
			"Accept":        {"application/json, text/event-stream"},
			"Authorization": {"Bearer s3cret"},
			"Content-Type":  {"application/json"},
			"User-Agent":    {"wymcp-check/test"},
		},
		body: ping,
	}
	if diff := cmp.Diff(wantSeen, s, cmp.AllowUnexported(seen{})); diff != "" {
		t.Errorf("what the server received (-want +got):\n%s", diff)
	}
}

// TestHTTPWireRequest reads the request off a raw socket: net/http's
// server would hide added headers' absence and the case of names.
func TestHTTPWireRequest(t *testing.T) {
	checkNoLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	head := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			head <- err.Error()
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		var lines []string
		for {
			l, err := br.ReadString('\n')
			if err != nil || l == "\r\n" {
				break
			}
			lines = append(lines, strings.TrimRight(l, "\r\n"))
		}
		head <- strings.Join(lines, "\n")
		io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	}()

	h := &HTTP{URL: "http://" + ln.Addr().String() + "/mcp", Limits: Limits{Timeout: 5 * time.Second}}
	req := envelope.Request{Method: http.MethodGet, Header: http.Header{"mcp-method": {"Ping"}, "Accept": {"text/event-stream"}}}
	ex := h.Do(context.Background(), req)
	if ex.Failure != "" || ex.Response == nil || ex.Response.Status != http.StatusMethodNotAllowed {
		t.Fatalf("exchange = %+v, want a clean 405", ex)
	}
	lines := strings.Split(<-head, "\n")
	if want := "GET /mcp HTTP/1.1"; lines[0] != want {
		t.Errorf("request line = %q, want %q", lines[0], want)
	}
	got := lines[1:]
	want := []string{"Host: " + ln.Addr().String(), "Accept: text/event-stream", "mcp-method: Ping"}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("request headers on the wire (-want +got):\n%s", diff)
	}
}

func TestHTTPAccepted(t *testing.T) {
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
	h := &HTTP{URL: url, Limits: Limits{Timeout: 5 * time.Second}}
	ex := h.Do(context.Background(), post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	want := &envelope.Response{Status: http.StatusAccepted, Header: http.Header{"Content-Length": {"0"}}}
	ex.Response.Header = stripDate(ex.Response.Header)
	if diff := cmp.Diff(want, ex.Response, cmpopts.EquateEmpty()); diff != "" || ex.Failure != "" {
		t.Errorf("response (-want +got):\n%s\nfailure %q", diff, ex.Failure)
	}
}

// TestHTTPSSE covers the streams that end well or badly: each case's
// server writes its events, and the exchange must stop where the case
// says, with the messages read so far.
func TestHTTPSSE(t *testing.T) {
	const stream = "id: 0\ndata:\n\n" + // a priming event: counted, not a message
		": keep-alive\n\n" +
		"data: " + progress + "\n\n"
	tests := []struct {
		name      string
		req       string // ping when empty
		events    func(s sseWriter, done <-chan struct{})
		limits    Limits
		want      [][]byte
		failure   string
		truncated bool
		min, max  time.Duration
	}{{
		name: "notification then response, stream left open",
		events: func(s sseWriter, done <-chan struct{}) {
			s.send(stream + "data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":{}}\r\n\r\n")
			<-done // a stream that stays open after the response must not hold the exchange
		},
		limits: Limits{Timeout: 5 * time.Second},
		want:   [][]byte{[]byte(progress), []byte("{\"jsonrpc\":\"2.0\",\n\"id\":1,\"result\":{}}")},
		max:    2 * time.Second,
	}, {
		name: "what the stream carries after the response is read",
		events: func(s sseWriter, done <-chan struct{}) {
			// A second response and progress after the response are the
			// checks' to judge (RPC1006, PRO1003), as lint judges them.
			s.send(stream + "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
			time.Sleep(20 * time.Millisecond)
			s.send("data: " + progress + "\n\n" + "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		},
		limits: Limits{Timeout: 5 * time.Second, Quiet: time.Second},
		want:   [][]byte{[]byte(progress), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), []byte(progress), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		max:    900 * time.Millisecond, // the stream's end ends the read, not the look
	}, {
		name: "after the response the read lasts Quiet",
		events: func(s sseWriter, done <-chan struct{}) {
			s.send(stream + "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n" + "data: " + progress + "\n\ndata: {\"half\":")
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				s.send("1}\n\ndata: " + progress + "\n\n")
			}
		},
		limits: Limits{Timeout: 5 * time.Second, Quiet: 200 * time.Millisecond},
		want:   [][]byte{[]byte(progress), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), []byte(progress)},
		min:    200 * time.Millisecond,
		max:    2 * time.Second,
	}, {
		name: "a flood after the response ends the read, not the exchange",
		events: func(s sseWriter, done <-chan struct{}) {
			s.send(stream + "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
			for s.send("data: "+progress+"\n\n") == nil {
			}
		},
		limits: Limits{Timeout: 5 * time.Second, MaxEvents: 6}, // the priming event, the progress and the response are three
		want:   [][]byte{[]byte(progress), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), []byte(progress), []byte(progress), []byte(progress)},
		max:    2 * time.Second,
	}, {
		name: "a named event before the response is no message",
		events: func(s sseWriter, done <-chan struct{}) {
			// {"ts":1} would end the read as a response if it were read
			// as a message; the response after it would be lost.
			s.send(stream + "event: heartbeat\ndata: {\"ts\":1}\n\n" + "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
			<-done
		},
		limits: Limits{Timeout: 5 * time.Second},
		want:   [][]byte{[]byte(progress), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		max:    2 * time.Second,
	}, {
		name: "a response to another id does not end the read",
		events: func(s sseWriter, done <-chan struct{}) {
			// A client waits on for its own response; the stray is the
			// checks' to judge, not the end of the exchange.
			s.send(stream + "data: {\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}\n\n" + "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
			<-done
		},
		limits: Limits{Timeout: 5 * time.Second},
		want:   [][]byte{[]byte(progress), []byte(`{"jsonrpc":"2.0","id":99,"result":{}}`), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		max:    2 * time.Second,
	}, {
		name: "the id in the other type ends the read",
		events: func(s sseWriter, done <-chan struct{}) {
			// Either may be the server's answer to this request, judged
			// for its id; waiting past it would cost the whole timeout.
			s.send(stream + "data: {\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{}}\n\n")
			<-done
		},
		limits: Limits{Timeout: 5 * time.Second},
		want:   [][]byte{[]byte(progress), []byte(`{"jsonrpc":"2.0","id":"1","result":{}}`)},
		max:    2 * time.Second,
	}, {
		name: "a big id read as a float64 ends the read",
		events: func(s sseWriter, done <-chan struct{}) {
			s.send(stream + "data: {\"jsonrpc\":\"2.0\",\"id\":12345678901234567000,\"result\":{}}\n\n")
			<-done
		},
		req:    `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`,
		limits: Limits{Timeout: 5 * time.Second},
		want:   [][]byte{[]byte(progress), []byte(`{"jsonrpc":"2.0","id":12345678901234567000,"result":{}}`)},
		max:    2 * time.Second,
	}, {
		name: "never a response, never ends",
		events: func(s sseWriter, done <-chan struct{}) {
			s.send(stream)
			for {
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
					if s.send(": still here\n\n") != nil {
						return
					}
				}
			}
		},
		limits:  Limits{Timeout: 300 * time.Millisecond},
		want:    [][]byte{[]byte(progress)},
		failure: "no response within 300ms: 2 events without a response",
		min:     300 * time.Millisecond,
		max:     2 * time.Second,
	}, {
		name: "ends without a response",
		events: func(s sseWriter, done <-chan struct{}) {
			s.send(stream)
		},
		limits: Limits{Timeout: 5 * time.Second},
		want:   [][]byte{[]byte(progress)},
		max:    2 * time.Second,
	}, {
		name: "a flood of notifications",
		events: func(s sseWriter, done <-chan struct{}) {
			for s.send("data: "+progress+"\n\n") == nil {
			}
		},
		limits:    Limits{Timeout: 5 * time.Second, MaxEvents: 3},
		want:      [][]byte{[]byte(progress), []byte(progress), []byte(progress)},
		failure:   "no response in the first 3 events",
		truncated: true,
		max:       2 * time.Second,
	}, {
		name: "one endless data line",
		events: func(s sseWriter, done <-chan struct{}) {
			s.send("data: " + progress + "\n\ndata: ")
			chunk := strings.Repeat("x", 64<<10)
			for s.send(chunk) == nil {
			}
		},
		limits:    Limits{Timeout: 5 * time.Second, MaxBytes: 256 << 10},
		want:      [][]byte{[]byte(progress)},
		failure:   "reply exceeds 262144 bytes",
		truncated: true,
		max:       2 * time.Second,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				tt.events(startSSE(w), r.Context().Done())
			})
			h := &HTTP{URL: url, Limits: tt.limits}
			req := tt.req
			if req == "" {
				req = ping
			}
			ex, took := timed(context.Background(), h, post(req))
			within(t, "exchange", took, tt.min, tt.max)
			if ex.Failure != tt.failure {
				t.Errorf("failure = %q, want %q", ex.Failure, tt.failure)
			}
			if ex.Response == nil {
				t.Fatal("no response recorded")
			}
			r := ex.Response
			if diff := cmp.Diff(tt.want, r.Messages); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if r.Truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", r.Truncated, tt.truncated)
			}
			if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/event-stream" {
				t.Errorf("status %d, content type %q", r.Status, r.Header.Get("Content-Type"))
			}
			if !bytes.HasPrefix(r.Body, []byte("id: 0\n")) && !bytes.HasPrefix(r.Body, []byte("data: ")) {
				t.Errorf("body does not hold the raw stream: %.40q", r.Body)
			}
			if tt.failure == "" {
				// A transcript of the body reads the same messages.
				split, _, err := envelope.SplitSSE(r.Body, envelope.MaxSSELine)
				if err != nil {
					t.Fatalf("split the recorded body: %v", err)
				}
				if diff := cmp.Diff(tt.want, split); diff != "" {
					t.Errorf("the recorded body's messages (-want +got):\n%s", diff)
				}
			}
			if tt.limits.MaxBytes > 0 && int64(len(r.Body)) > tt.limits.MaxBytes {
				t.Errorf("body holds %d bytes, over the %d bound", len(r.Body), tt.limits.MaxBytes)
			}
		})
	}
}

func TestHTTPHugeBody(t *testing.T) {
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := bytes.Repeat([]byte("7"), 1<<20)
		for range 100 { // 100 MB, unless the client hangs up first
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	h := &HTTP{URL: url, Limits: Limits{Timeout: 5 * time.Second, MaxBytes: 1 << 20}}
	ex, took := timed(context.Background(), h, post(ping))
	within(t, "exchange", took, 0, 2*time.Second)
	if want := "reply exceeds 1048576 bytes"; ex.Failure != want {
		t.Errorf("failure = %q, want %q", ex.Failure, want)
	}
	if r := ex.Response; r == nil || !r.Truncated || len(r.Body) != 1<<20 || r.Messages != nil {
		t.Errorf("response: want the first 1 MiB, truncated; got %d bytes, truncated %v", len(r.Body), r.Truncated)
	}
}

func TestHTTPTerminalEscapesKeptRaw(t *testing.T) {
	body := "\x1b[2J\x1b]0;owned\x07{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"\x1b[31mred\x1b[0m\r\"}}\x00\xff"
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	})
	h := &HTTP{URL: url, Limits: Limits{Timeout: 5 * time.Second}}
	ex := h.Do(context.Background(), post(ping))
	if ex.Failure != "" || ex.Response == nil {
		t.Fatalf("failure %q, response %v", ex.Failure, ex.Response)
	}
	if diff := cmp.Diff([]byte(body), ex.Response.Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

// TestHTTPBrokenServers covers servers that never answer, answer in
// part, or hang up: each ends with an honest Failure within the bound.
// TestHTTPEscapesInHeader pins what net/http does with a control byte in
// a reply header: the reply is not HTTP (the server's finding,
// Malformed), and the cause names the header (quoted by Go, so the bytes
// arrive escaped).
func TestHTTPEscapesInHeader(t *testing.T) {
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Title", "\x1b]0;owned\x07")
		io.WriteString(w, pong)
	})
	h := &HTTP{URL: url, Limits: Limits{Timeout: 5 * time.Second}}
	ex := h.Do(context.Background(), post(ping))
	if ex.Response != nil || ex.Failure != "" || !strings.Contains(ex.Malformed, `malformed MIME header line: "X-Title: \x1b]0;owned\a"`) {
		t.Errorf("malformed %q, failure %q, response %v; want a malformed header", ex.Malformed, ex.Failure, ex.Response)
	}
}

func TestHTTPBrokenServers(t *testing.T) {
	hijack := func(w http.ResponseWriter, raw string) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		io.WriteString(c, raw)
		c.Close()
	}
	// reset writes raw and then resets the connection (RST, not FIN), as
	// a server does that closes with request bytes it never read.
	reset := func(w http.ResponseWriter, raw string) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		io.WriteString(c, raw)
		time.Sleep(50 * time.Millisecond) // the reply reaches the client first
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		failure  string // prefix
		body     string // partial body kept; "-" means no response at all
		min, max time.Duration
		// withheld: an answer the server withheld (Unanswered), which
		// a liveness probe tells from a server that stopped answering.
		withheld bool
	}{{
		name:     "hangs without answering",
		handler:  func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
		failure:  "no reply within 200ms",
		body:     "-",
		min:      200 * time.Millisecond,
		max:      2 * time.Second,
		withheld: true,
	}, {
		name: "stalls in the body",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jso`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
		failure:  "reply incomplete after 200ms (5 bytes read)",
		body:     `{"jso`,
		min:      200 * time.Millisecond,
		max:      2 * time.Second,
		withheld: true,
	}, {
		name:     "closes the connection",
		handler:  func(w http.ResponseWriter, r *http.Request) { hijack(w, "") },
		failure:  "request failed: Post ",
		body:     "-",
		max:      2 * time.Second,
		withheld: true,
	}, {
		name: "closes the connection mid-body",
		handler: func(w http.ResponseWriter, r *http.Request) {
			hijack(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"partial")
		},
		failure:  "reading the reply: unexpected EOF (9 bytes read)",
		body:     `{"partial`,
		max:      2 * time.Second,
		withheld: true,
	}, {
		// RFC 9112 §6.3: without a declared length the body is what came
		// before the server closed the connection; a reset closes it too.
		name: "resets after a reply without a declared length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			reset(w, "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n")
		},
		body: "",
		max:  2 * time.Second,
	}, {
		name: "resets mid-body of a declared length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			reset(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"partial")
		},
		failure:  "reading the reply: read tcp ",
		body:     `{"partial`,
		max:      2 * time.Second,
		withheld: true,
	}, {
		// A reset may have erased what followed: a body cut short is not
		// taken for the whole.
		name: "resets mid-body without a declared length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			reset(w, "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"partial")
		},
		failure:  "reading the reply: read tcp ",
		body:     `{"partial`,
		max:      2 * time.Second,
		withheld: true,
	}, {
		// The bytes that came form a whole JSON value: that is the reply,
		// however the connection then ended.
		name: "resets after a whole reply without a declared length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			reset(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"+pong)
		},
		body: pong,
		max:  2 * time.Second,
	}, {
		// A body that never ends is no reply, however whole its bytes:
		// a client reading to the end of the body waits for ever.
		name: "stays open after a whole reply without a declared length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"+pong)
			<-r.Context().Done()
			time.Sleep(300 * time.Millisecond)
			c.Close()
		},
		failure:  "reply incomplete after 200ms",
		body:     pong,
		min:      200 * time.Millisecond,
		max:      2 * time.Second,
		withheld: true,
	}, {
		name: "resets after a 200 without a declared length and without a body",
		handler: func(w http.ResponseWriter, r *http.Request) {
			reset(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
		},
		failure:  "reading the reply: read tcp ",
		body:     "",
		max:      2 * time.Second,
		withheld: true,
	}, {
		// A chunked body ends at its last chunk (RFC 9112 §7.1): one the
		// connection closed before it is cut, however whole the JSON in
		// its chunks (Python's clients refuse it), as a body cut short of
		// its Content-Length is (review rev41).
		name: "closes a chunked JSON body before its last chunk",
		handler: func(w http.ResponseWriter, r *http.Request) {
			hijack(w, fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(pong), pong))
		},
		failure:  "reading the reply: unexpected EOF",
		body:     pong,
		max:      2 * time.Second,
		withheld: true,
	}, {
		// The twin: the last chunk came.
		name: "ends a chunked JSON body with its last chunk",
		handler: func(w http.ResponseWriter, r *http.Request) {
			hijack(w, fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(pong), pong))
		},
		body: pong,
		max:  2 * time.Second,
	}, {
		// An event stream the server aborts before its response (its
		// chunked body never ends) withholds the answer, as a JSON body
		// cut short does: judged after a liveness probe, not "could not
		// judge" (tmcp does it).
		name: "aborts an event stream before the response",
		handler: func(w http.ResponseWriter, r *http.Request) {
			hijack(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		},
		failure:  "reading the event stream: reading sse stream: unexpected EOF (0 events",
		body:     "",
		max:      2 * time.Second,
		withheld: true,
	}, {
		// The twin: the stream ends cleanly without a response; nothing
		// failed to be read, and the checks judge the missing response.
		name: "ends an event stream before the response",
		handler: func(w http.ResponseWriter, r *http.Request) {
			hijack(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
		},
		body: "",
		max:  2 * time.Second,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := serve(t, tt.handler)
			h := &HTTP{URL: url, Limits: Limits{Timeout: 200 * time.Millisecond}}
			ex, took := timed(context.Background(), h, post(ping))
			within(t, "exchange", took, tt.min, tt.max)
			hasPrefix(t, "failure", ex.Failure, tt.failure)
			if tt.withheld != ex.Unanswered && (tt.withheld || tt.failure != "") {
				t.Errorf("unanswered = %v, want %v", ex.Unanswered, tt.withheld)
			}
			switch {
			case tt.failure == "" && ex.Failure != "":
				t.Errorf("failure = %q, want none", ex.Failure)
			case tt.body == "-" && ex.Response != nil:
				t.Errorf("response = %+v, want none", ex.Response)
			case tt.body != "-" && ex.Response == nil:
				t.Errorf("no response, want the partial body %q", tt.body)
			case tt.body != "-" && string(ex.Response.Body) != tt.body:
				t.Errorf("body = %q, want %q", ex.Response.Body, tt.body)
			}
		})
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	checkNoLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	h := &HTTP{URL: "http://" + addr, Limits: Limits{Timeout: 2 * time.Second}}
	ex := h.Do(context.Background(), post(ping))
	if ex.Response != nil || !strings.Contains(ex.Failure, "connection refused") {
		t.Errorf("failure %q, response %v; want a refusal and no response", ex.Failure, ex.Response)
	}
}

func TestHTTPCancel(t *testing.T) {
	url := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	h := &HTTP{URL: url, Limits: Limits{Timeout: 5 * time.Second}}
	ex, took := timed(ctx, h, post(ping))
	// The cancel's clock started before timed's: a few ms of slack below.
	within(t, "exchange", took, 90*time.Millisecond, 2*time.Second)
	if want := "cancelled: context canceled"; ex.Failure != want {
		t.Errorf("failure = %q, want %q", ex.Failure, want)
	}
}

func TestHTTPRedirectNotFollowed(t *testing.T) {
	followed := make(chan struct{}, 1)
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed <- struct{}{}
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	h := &HTTP{URL: url + "/mcp", Limits: Limits{Timeout: 5 * time.Second}}
	ex := h.Do(context.Background(), post(ping))
	if ex.Failure != "" || ex.Response == nil || ex.Response.Status != http.StatusTemporaryRedirect ||
		ex.Response.Header.Get("Location") != "/elsewhere" {
		t.Errorf("exchange = %+v, want the 307 itself", ex)
	}
	select {
	case <-followed:
		t.Error("the redirect was followed")
	default:
	}
}

func TestMergeHeader(t *testing.T) {
	base := http.Header{"Authorization": {"Bearer a"}, "Mcp-Method": {"base"}, "X-Keep": {"k"}}
	over := http.Header{"mcp-method": {"over"}, "Accept": {"a", "b"}}
	got := mergeHeader(base, over)
	want := http.Header{"Authorization": {"Bearer a"}, "mcp-method": {"over"}, "X-Keep": {"k"}, "Accept": {"a", "b"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	got["Accept"][0] = "changed"
	if over["Accept"][0] != "a" {
		t.Error("merge shares value slices with its input")
	}
}

// TestHTTPSSEEnded: a stream the server closes, read to its end, says
// so (PRO1009 judges a listen stream so ended); one the read leaves open
// (its look after the response ended) does not, and says it was held
// open past its response (HTTP1005 warns of it).
func TestHTTPSSEEnded(t *testing.T) {
	for _, closes := range []bool{true, false} {
		url := serve(t, func(w http.ResponseWriter, r *http.Request) {
			startSSE(w).send("data: " + pong + "\n\n")
			if !closes {
				<-r.Context().Done()
			}
		})
		h := &HTTP{URL: url, Limits: Limits{Timeout: 5 * time.Second, Quiet: 300 * time.Millisecond}}
		ex := h.Do(context.Background(), post(ping))
		if ex.Response == nil || ex.Failure != "" {
			t.Fatalf("closes=%v: failure %q", closes, ex.Failure)
		}
		if ex.Response.Ended != closes {
			t.Errorf("closes=%v: Ended = %v", closes, ex.Response.Ended)
		}
		if ex.Response.HeldOpen != !closes {
			t.Errorf("closes=%v: HeldOpen = %v", closes, ex.Response.HeldOpen)
		}
	}
}

// TestHTTPSSEHeldOpenLineEnds: a held-open stream's response is read
// as soon as its event ends, whichever line end the server writes: a
// lone CR that is the last byte sent ends its line (an LF would only
// make it a CRLF). The CR-framed event waited out the whole timeout.
func TestHTTPSSEHeldOpenLineEnds(t *testing.T) {
	for name, end := range map[string]string{"LF": "\n", "CRLF": "\r\n", "CR": "\r"} {
		t.Run(name, func(t *testing.T) {
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				startSSE(w).send("data: " + pong + end + end)
				<-r.Context().Done()
			})
			h := &HTTP{URL: url, Limits: Limits{Timeout: 10 * time.Second, Quiet: 100 * time.Millisecond}}
			start := time.Now()
			ex := h.Do(context.Background(), post(ping))
			if ex.Response == nil || ex.Failure != "" || len(ex.Response.Messages) != 1 || !ex.Response.HeldOpen {
				t.Fatalf("failure %q, response %+v", ex.Failure, ex.Response)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the response took %s, the timeout is 10s", took)
			}
		})
	}
}

// TestHTTPServerHangsUpMidRequest: a server that refuses a request it
// has read only part of (as Node refuses 40 KB of headers with a 431)
// answers and hangs up while the request is still being written; the
// answer is judged, not the broken pipe. Its twin hangs up without a
// word: the answer is withheld.
func TestHTTPServerHangsUpMidRequest(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		status  int
		failure string // prefix
	}{
		{name: "refuses with 431", reply: "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n", status: 431},
		{name: "hangs up without a word", failure: "request failed: Post "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkNoLeaks(t)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				io.ReadFull(c, make([]byte, 16<<10))
				io.WriteString(c, tt.reply)
				c.Close() // with the rest of the request unread: a reset
			}()
			req := post(ping)
			// Far beyond what loopback buffers take before the server
			// hangs up, so the write fails every time.
			req.Header.Set("X-Padding", strings.Repeat("a", 8<<20))
			h := &HTTP{URL: "http://" + ln.Addr().String(), Limits: Limits{Timeout: 2 * time.Second}}
			ex := h.Do(context.Background(), req)
			hasPrefix(t, "failure", ex.Failure, tt.failure)
			if tt.failure == "" && ex.Failure != "" {
				t.Errorf("failure = %q, want none", ex.Failure)
			}
			switch {
			case tt.status == 0 && ex.Response != nil:
				t.Errorf("response = %+v, want none", ex.Response)
			case tt.status != 0 && ex.Response == nil:
				t.Errorf("no response, want status %d", tt.status)
			case tt.status != 0 && ex.Response.Status != tt.status:
				t.Errorf("status = %d, want %d", ex.Response.Status, tt.status)
			}
			if want := tt.status == 0; ex.Unanswered != want {
				t.Errorf("unanswered = %v, want %v", ex.Unanswered, want)
			}
		})
	}
}

// TestHTTPAnswersServerRequest: a 2025-xx server that sends a ping on a
// POST's stream and waits for the answer before it responds gets the
// answer, POSTed in the session, and the exchange its response. The
// checker's silence was blamed on the server (RPC1006). The twin: a
// request the checker does not serve (sampling) gets -32601.
func TestHTTPAnswersServerRequest(t *testing.T) {
	for _, tc := range []struct{ method, want string }{
		{"ping", `{"jsonrpc":"2.0","id":"srv-1","result":{}}`},
		{"sampling/createMessage", `{"jsonrpc":"2.0","id":"srv-1","error":{"code":-32601,"message":"Method not found"}}`},
	} {
		answered := make(chan string, 1)
		url := serve(t, func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if gjson.GetBytes(body, "method").Exists() {
				s := startSSE(w)
				s.send(`data: {"jsonrpc":"2.0","id":"srv-1","method":"` + tc.method + `"}` + "\n\n")
				select {
				case a := <-answered:
					if a == tc.want {
						s.send("data: " + pong + "\n\n")
					}
				case <-time.After(3 * time.Second):
				}
				return
			}
			if r.Header.Get("Mcp-Session-Id") == "s-1" {
				answered <- string(body)
			}
			w.WriteHeader(http.StatusAccepted)
		})
		h := &HTTP{URL: url, Limits: Limits{Timeout: 5 * time.Second, Quiet: 100 * time.Millisecond}}
		req := post(ping)
		req.Header.Set("Mcp-Session-Id", "s-1")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		ex := h.Do(context.Background(), req)
		if ex.Failure != "" || ex.Response == nil || len(ex.Response.Messages) != 2 {
			t.Errorf("%s: failure %q, response %+v", tc.method, ex.Failure, ex.Response)
		}
	}
}

// TestHTTPAnswersInTheSessionInitializeOpens: a ping on an initialize's
// stream is answered in the session that answer opens, with the version
// asked; the request carried neither yet. The answer went without them,
// and a server that keeps sessions refused it.
func TestHTTPAnswersInTheSessionInitializeOpens(t *testing.T) {
	answered := make(chan http.Header, 1)
	result := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if gjson.GetBytes(body, "method").Str == "initialize" {
			w.Header().Set("Mcp-Session-Id", "s-7")
			s := startSSE(w)
			s.send(`data: {"jsonrpc":"2.0","id":"srv-1","method":"ping"}` + "\n\n")
			select {
			case h := <-answered:
				if h.Get("Mcp-Session-Id") == "s-7" && h.Get("MCP-Protocol-Version") == "2025-06-18" {
					s.send("data: " + result + "\n\n")
				}
			case <-time.After(3 * time.Second):
			}
			return
		}
		answered <- r.Header.Clone()
		w.WriteHeader(http.StatusAccepted)
	})
	h := &HTTP{URL: url, Limits: Limits{Timeout: 5 * time.Second, Quiet: 100 * time.Millisecond}}
	ex := h.Do(context.Background(), post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	if ex.Failure != "" || ex.Response == nil || len(ex.Response.Messages) != 2 {
		t.Errorf("failure %q, response %+v", ex.Failure, ex.Response)
	}
}

// TestMalformedHTTP: a reply whose start line or header section breaks
// HTTP/1.1's syntax is the server's finding (Malformed, net/http's cause
// with the server's bytes), not the checker's failure; the twins are
// readings RFC 9112 leaves to a recipient, read as replies.
func TestMalformedHTTP(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"result":{}}`
	for _, tc := range []struct {
		name, head, want string // want: the cause's start, "" for a reply
	}{
		{"two Content-Lengths that differ", "HTTP/1.1 200 OK\r\nContent-Length: 36\r\nContent-Length: 37\r\n", "message cannot contain multiple Content-Length headers"},
		{"a negative Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: -36\r\n", `bad Content-Length "-36"`},
		{"a control character in a value", "HTTP/1.1 200 OK\r\nX-A: a\x01b\r\nContent-Length: 36\r\n", "malformed MIME header line"},
		{"a header line without a colon", "HTTP/1.1 200 OK\r\nXA\r\nContent-Length: 36\r\n", "malformed MIME header: missing colon"},
		{"a status that is no number", "HTTP/1.1 2x0 OK\r\nContent-Length: 36\r\n", `malformed HTTP status code "2x0"`},
		{"no status line", "hello world\r\n", "malformed HTTP"},
		{"the same Content-Length twice", "HTTP/1.1 200 OK\r\nContent-Length: 36\r\nContent-Length: 36\r\n", ""},
		{"bare LF line ends", "HTTP/1.1 200 OK\nContent-Length: 36\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				c, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					panic(err)
				}
				end := "\r\n"
				if strings.Contains(tc.head, "OK\n") {
					end = "\n"
				}
				io.WriteString(c, tc.head+"Content-Type: application/json"+end+end+body)
				c.Close()
			})
			h := &HTTP{URL: url, Limits: Limits{Timeout: 2 * time.Second}}
			ex := h.Do(context.Background(), post(ping))
			switch {
			case tc.want == "" && (ex.Malformed != "" || ex.Failure != "" || ex.Response == nil || string(ex.Response.Body) != body):
				t.Errorf("malformed %q, failure %q, response %+v; want the reply read", ex.Malformed, ex.Failure, ex.Response)
			case tc.want != "" && (!strings.HasPrefix(ex.Malformed, tc.want) || ex.Failure != "" || ex.Response != nil || ex.Unanswered):
				t.Errorf("malformed %q, failure %q, response %+v, unanswered %v; want malformed %q… alone", ex.Malformed, ex.Failure, ex.Response, ex.Unanswered, tc.want)
			}
		})
	}
	// The checker's own bound on the header section is no finding.
	long := strings.Repeat("x", 2<<20)
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Long", long)
		io.WriteString(w, body)
	})
	ex := (&HTTP{URL: url, Limits: Limits{Timeout: 2 * time.Second, MaxBytes: 1 << 20}}).Do(context.Background(), post(ping))
	if ex.Malformed != "" || ex.Failure == "" {
		t.Errorf("a header past the bound: malformed %q, failure %q; want a failure of the checker's", ex.Malformed, ex.Failure)
	}
	if got := MalformedHTTP(errors.New("Post \"http://x\": net/http: HTTP/1.x transport connection broken: malformed MIME header line: \"" + strings.Repeat("é", 300) + "\"")); len(got) > maxCause+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("a long cause kept as %d bytes, want at most %d and cut", len(got), maxCause)
	}
}

// TestMalformedChunks: a chunked body whose framing breaks RFC 9112
// §7.1's syntax, in a JSON reply or an event stream, is the server's
// finding as a broken header section is (Malformed, Response nil). The
// twins: well-formed chunks (with an extension, in one chunk or many)
// are read as the reply, and a body the server cut short is the
// checker's "could not judge", no finding.
func TestMalformedChunks(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"result":{}}` // 0x24 bytes
	const event = "data: " + body + "\n\n"              // 0x2c bytes
	for _, tc := range []struct {
		name, ctype, chunks, want string // want: the cause's start; "" a reply; "cut" a failure
	}{
		{"a size that is no hex number", "application/json", "2x\r\n" + body + "\r\n0\r\n\r\n", "invalid byte in chunk length"},
		{"no size", "application/json", "\r\n" + body + "\r\n0\r\n\r\n", "empty hex number for chunk length"},
		{"data past its size", "application/json", "20\r\n" + body + "\r\n0\r\n\r\n", "malformed chunked encoding"},
		{"a bare LF after the size", "application/json", "24\n" + body + "\r\n0\r\n\r\n", "chunked line ends with bare LF"},
		{"a CR inside the size line", "application/json", "2\r4\r\n" + body + "\r\n0\r\n\r\n", "invalid CR in chunked line"},
		{"a broken last chunk", "application/json", "24\r\n" + body + "\r\nz\r\n\r\n", "invalid byte in chunk length"},
		{"an event stream's size that is no hex number", "text/event-stream", "2q\r\n" + event + "\r\n0\r\n\r\n", "invalid byte in chunk length"},
		{"one chunk", "application/json", "24\r\n" + body + "\r\n0\r\n\r\n", ""},
		{"two chunks and an extension", "application/json", "4;a=b\r\n" + body[:4] + "\r\n20\r\n" + body[4:] + "\r\n0\r\n\r\n", ""},
		{"an event stream in one chunk", "text/event-stream", "2c\r\n" + event + "\r\n0\r\n\r\n", ""},
		{"cut short", "application/json", "24\r\n" + body[:10], "cut"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				c, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					panic(err)
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: "+tc.ctype+"\r\nTransfer-Encoding: chunked\r\n\r\n"+tc.chunks)
				c.Close()
			})
			ex := (&HTTP{URL: url, Limits: Limits{Timeout: 2 * time.Second}}).Do(context.Background(), post(ping))
			switch tc.want {
			case "":
				read := ex.Response != nil && (tc.ctype == "application/json" && string(ex.Response.Body) == body ||
					tc.ctype == "text/event-stream" && len(ex.Response.Messages) == 1 && string(ex.Response.Messages[0]) == body)
				if ex.Malformed != "" || ex.Failure != "" || !read {
					t.Errorf("malformed %q, failure %q, response %+v; want the reply read", ex.Malformed, ex.Failure, ex.Response)
				}
			case "cut":
				if ex.Malformed != "" || ex.Failure == "" {
					t.Errorf("malformed %q, failure %q; want the checker's failure", ex.Malformed, ex.Failure)
				}
			default:
				if !strings.HasPrefix(ex.Malformed, tc.want) || ex.Failure != "" || ex.Response != nil {
					t.Errorf("malformed %q, failure %q, response %+v; want malformed %q… alone", ex.Malformed, ex.Failure, ex.Response, tc.want)
				}
			}
		})
	}
}
