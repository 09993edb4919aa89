package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
)

// HTTP sends each request as one HTTP request to URL, as a Streamable HTTP
// client does, and reads the reply as JSON or as an SSE stream.
type HTTP struct {
	URL string
	// Header is added to every request (e.g. Authorization from
	// --header). A header the request itself carries wins, compared
	// case-insensitively. These headers are not copied into
	// Exchange.Request: they typically hold credentials, which must not
	// reach transcripts and reports.
	Header http.Header
	// Client sends the requests. Nil means a fresh client per exchange
	// that follows no redirects, asks for no compression, and sends no
	// User-Agent unless one is given. A fresh connection per exchange
	// keeps what a server leaves on one (a half-read stream, a second
	// response) from touching the next exchange. Kept-alive connections
	// were tried, for the accept each connection costs a server: a
	// second response was then read as the next request's reply, and
	// every later exchange on the connection was out of step by one
	// (TestHTTPConnectionPerExchange).
	Client *http.Client
	Limits Limits
}

// Do sends req and returns the exchange. The request goes out with its
// method (POST when empty), its headers exactly as given (names in the
// case given) plus h.Header, and its body byte for byte. Exchange.Request
// is req itself.
//
// The reply's status and headers are always recorded. A text/event-stream
// reply is read event by event: each event's data joins
// Response.Messages, the raw bytes read join Response.Body, and reading
// waits for the first message that answers the request (see Answers: a
// response to another id is kept, and read past) and ends Limits.Quiet
// after it, at the end of the stream (no Failure: the checks judge a
// stream that closed without an answer),
// or at a bound (Failure set, Messages kept). Any other reply is read
// whole into Body, up to Limits.MaxBytes. A reply with a Content-Encoding
// is read as a client reads it, decoded as it arrives, its decoded bytes
// bounded as those of any reply; Body holds them decoded, and Header
// lacks the Content-Encoding and Content-Length of the coded bytes.
//
// A transport error (refused, reset, timed out) is reported in Failure,
// with the partial Response if headers had arrived. Do never fails for
// the server's misbehaviour; it stops when ctx is done.
func (h *HTTP) Do(ctx context.Context, req envelope.Request) envelope.Exchange {
	lim := h.Limits.withDefaults()
	ex := envelope.Exchange{Transport: envelope.HTTP, Request: req}
	cctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	b := bound{parent: ctx, ctx: cctx, lim: lim}

	client := h.Client
	if client == nil {
		tr := newTransport(lim)
		defer tr.CloseIdleConnections()
		client = &http.Client{Transport: tr, CheckRedirect: noRedirect}
	}
	hreq, err := http.NewRequestWithContext(cctx, req.HTTPMethod(), h.URL, bytes.NewReader(req.Body))
	if err != nil {
		ex.Failure = fmt.Sprintf("cannot build the request: %v", err)
		return ex
	}
	hreq.Header = mergeHeader(h.Header, req.Header)
	if v, ok := envelope.HeaderValue(hreq.Header, "Host"); ok {
		hreq.Host = v // net/http takes Host from here, never from Header
	}
	if _, ok := envelope.HeaderValue(hreq.Header, "User-Agent"); !ok {
		hreq.Header["User-Agent"] = nil // present but empty: net/http then sends none
	}

	answerIn := func(http.Header) {}
	if envelope.HeaderGet(hreq.Header, "MCP-Protocol-Version") != envelope.V20260728 {
		// (A 2026-07-28 server sends no request on a request's stream,
		// T-HTTP-17; nor has it a session to answer in.)
		actx, stop := context.WithCancel(cctx)
		var wait func()
		b.answer, wait, answerIn = h.answerer(actx, client, hreq.Header, req)
		defer func() {
			// The exchange is over: an answer still under way matters no
			// more, and none outlives it.
			stop()
			wait()
		}()
	}
	resp, err := client.Do(hreq)
	if cause := MalformedHTTP(err); cause != "" {
		// The server answered with bytes no client can read as an HTTP
		// message: its finding, not the checker's failure.
		ex.Malformed = cause
		return ex
	}
	if err != nil {
		ex.Failure = b.describe(fmt.Sprintf("no reply within %s", lim.Timeout), fmt.Sprintf("request failed: %v", err))
		// A connection the server closed or reset after the request went
		// out is an answer withheld, like a timeout; so is one it reset
		// while the request was still going out (hangupConn lets the rest
		// go unsent, and no reply came). A refused one never carried the
		// request.
		ex.Unanswered = b.timedOut() || b.parent.Err() == nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET))
		ex.Refused = errors.Is(err, syscall.ECONNREFUSED)
		return ex
	}
	defer resp.Body.Close()
	answerIn(resp.Header)
	r := &envelope.Response{Status: resp.StatusCode, Header: resp.Header.Clone()}
	ex.Response = r
	body, coding := decoded(lim, resp)
	pb := b // the POST's reply, with its coding
	pb.coding = coding
	if coding != "" {
		r.Header = recordDecoded(resp.Header)
	}
	if envelope.IsEventStream(resp.Header.Get("Content-Type")) {
		var end sseEnd
		answers := Answers(req.Body)
		ex.Failure = readSSE(pb, body, r, answers, cancel, &end)
		// A stream the server broke off after an event id, not one the
		// checker stopped reading at --timeout, is resumed as one it
		// ended: a client reconnects with Last-Event-ID after either
		// (T-HTTP-15), and the response may come there.
		broken := ex.Failure != "" && r.Cut && !b.timedOut() && b.parent.Err() == nil
		if v := resumes(req); (ex.Failure == "" || broken) && end.malformed == "" && !end.answered && end.lastID != "" && req.HTTPMethod() == "POST" && v != "" {
			ex.Failure, ex.Note = h.resume(b, client, hreq.Header, v, r, answers, cancel, &end)
		}
		ex.Malformed = end.malformed
	} else {
		ex.Failure, ex.Malformed = readBody(pb, body, r, resp.StatusCode >= 400 && resp.ContentLength < 0 && len(resp.TransferEncoding) == 0, resp.ContentLength >= 0 || len(resp.TransferEncoding) > 0)
	}
	if coding != "" && ex.Failure == "" && ex.Malformed == "" {
		ex.Note = envelope.JoinNotes(decodedNote(coding), ex.Note)
	}
	if ex.Malformed != "" {
		// The body's framing broke HTTP/1.1's syntax, or its bytes do
		// not decode in the coding it names: as a broken header section,
		// no message a client can read (HTTP1006).
		ex.Response, ex.Failure = nil, ""
		return ex
	}
	// A body cut short by the server, like a connection it closed before
	// the headers, is an answer withheld.
	ex.Unanswered = ex.Failure != "" && (b.timedOut() || r.Cut && b.parent.Err() == nil)
	return ex
}

// maxResumes bounds the GETs that resume one POST's stream.
const maxResumes = envelope.MaxResumes

// resumes: the request's stream may be resumed after it ends without
// the response: 2025-11-25 lets a server close it after an event with an
// id, the client then resuming with GET and Last-Event-ID (T-HTTP-15);
// 2025-06-18 asks the server not to close it (HTTP1005 warns of it) but
// has the same resumption, which a client follows. (2026-07-28 has no
// resumption.)
//
// The initialize that negotiates carries no version header yet: its
// body names the version asked, and a client asking one of those
// resumes its stream as it would any other.
// It returns the version the stream speaks, "" when it is not resumed.
func resumes(req envelope.Request) string {
	v, ok := envelope.HeaderValue(req.Header, "MCP-Protocol-Version")
	if !ok {
		m := envelope.Parse(req.Body)
		v = m.Get("params.protocolVersion").Str
		if m.Get("method").Str != "initialize" {
			return ""
		}
	}
	if v = strings.TrimSpace(v); v == envelope.V20251125 || v == envelope.V20250618 {
		return v
	}
	return ""
}

// resume follows a POST's stream that ended without its response, as a
// 2025-11-25 client does: after the retry the stream set, a GET with
// Last-Event-ID and the request's session and version headers, whose
// events join the exchange's (Body and Messages), until the response
// comes, a stream ends without an id, or maxResumes. It returns the
// exchange's failure and a note of what it did.
func (h *HTTP) resume(b bound, client *http.Client, sent http.Header, version string, r *envelope.Response, answers func([]byte) bool, linger func(), end *sseEnd) (failure, note string) {
	for i := 0; i < maxResumes && end.malformed == "" && !end.answered && end.lastID != ""; i++ {
		note = envelope.JoinNotes(note, fmt.Sprintf("the stream stopped after event id %s without the response; resumed with GET and Last-Event-ID (T-HTTP-15)", strconv.Quote(end.lastID)))
		if end.partial {
			// Bytes that end no event (one cut short, a comment) are
			// dropped, as a client drops them: the next stream joins at
			// the last whole event, as it is read after it.
			r.Body = r.Body[:int64(len(r.Body))-(end.size-end.whole)]
			note = envelope.JoinNotes(note, "the bytes after its last whole event were dropped, as a client drops them")
		}
		if ms, err := strconv.Atoi(strings.TrimSpace(end.retry)); err == nil && ms > 0 {
			t := time.NewTimer(time.Duration(min(ms, 5000)) * time.Millisecond)
			select {
			case <-t.C:
			case <-b.ctx.Done():
				t.Stop()
				return b.describe(fmt.Sprintf("no response within %s: %s", b.lim.Timeout, countWithout(end.events, "event")), "stopped"), note
			}
		}
		r.Resumed++
		get, err := http.NewRequestWithContext(b.ctx, http.MethodGet, h.URL, nil)
		if err != nil {
			return "", envelope.JoinNotes(note, fmt.Sprintf("cannot build the GET: %v", err))
		}
		get.Header = sent.Clone()
		for _, k := range []string{"Content-Type", "Content-Length", "Mcp-Method", "Mcp-Name", "Accept", "Last-Event-ID"} {
			envelope.HeaderDel(get.Header, k)
		}
		get.Host = sent.Get("Host")
		get.Header.Set("Accept", "text/event-stream")
		get.Header.Set("Last-Event-ID", end.lastID)
		if sid := envelope.HeaderGet(r.Header, "Mcp-Session-Id"); sid != "" && envelope.HeaderGet(get.Header, "Mcp-Session-Id") == "" {
			// An initialize's stream: the session it opened, and the
			// version it asked for, are the client's from here on.
			get.Header.Set("Mcp-Session-Id", sid)
			if envelope.HeaderGet(get.Header, "MCP-Protocol-Version") == "" {
				get.Header.Set("MCP-Protocol-Version", version)
			}
		}
		resp, err := client.Do(get)
		if err != nil {
			if b.ctx.Err() != nil {
				// The wait for the response ran out on the GET: silence,
				// as on the POST's own stream.
				return b.describe(fmt.Sprintf("no response within %s: %s", b.lim.Timeout, countWithout(end.events, "event")), "stopped"), note
			}
			// (A connection that failed is no answer of the server's:
			// not recorded as refused, as the relay records it; review
			// rev65.)
			return "", envelope.JoinNotes(note, fmt.Sprintf("the GET failed: %v", err))
		}
		if resp.StatusCode != http.StatusOK || !envelope.IsEventStream(resp.Header.Get("Content-Type")) {
			resp.Body.Close()
			r.ResumeRefused = true
			return "", envelope.JoinNotes(note, fmt.Sprintf("the GET was answered %d %s, not a stream", resp.StatusCode, strconv.Quote(resp.Header.Get("Content-Type"))))
		}
		more := &envelope.Response{}
		*end = sseEnd{events: end.events}
		// The GET's stream has its own coding; its events join the
		// POST's decoded, as every body of an exchange is recorded.
		body, coding := decoded(b.lim, resp)
		gb := b
		gb.coding = coding
		if coding != "" {
			note = envelope.JoinNotes(note, "the GET's "+decodedNote(coding))
		}
		failure = readSSE(gb, body, more, answers, linger, end)
		resp.Body.Close()
		// The GET is a stream of its own, which may start with a byte
		// order mark; after the POST's events the mark would begin a
		// field's name, and the event it starts would be lost to a
		// reading of the joined body (a transcript's, lint's). A POST's
		// stream that ended inside an event is not resumed, so the two
		// join at an event's end.
		r.Body = append(r.Body, bytes.TrimPrefix(more.Body, []byte("\ufeff"))...)
		r.Messages = append(r.Messages, more.Messages...)
		r.Truncated, r.Cut, r.Ended, r.HeldOpen = r.Truncated || more.Truncated, r.Cut || more.Cut, more.Ended, more.HeldOpen
		if failure != "" && more.Cut && !b.timedOut() && b.parent.Err() == nil && end.lastID != "" && !end.answered && end.malformed == "" {
			// Broken off after an id, as the POST's stream may be: a
			// client resumes it again (the loop's bound holds).
			failure = ""
			continue
		}
		if failure != "" {
			return failure, note
		}
	}
	return "", note
}

func newTransport(lim Limits) *http.Transport {
	var d net.Dialer
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &hangupConn{Conn: c}, nil
		},
		// The request must carry no Accept-Encoding it was not given;
		// a coding the server applies all the same (RFC 9110 §12.5.3
		// lets it) is undone by the checker itself (see decoded), for
		// every coding it reads, not only the gzip net/http asks for.
		DisableCompression:     true,
		ForceAttemptHTTP2:      true,
		MaxResponseHeaderBytes: lim.MaxBytes,
	}
}

// hangupConn lets the rest of a request go unsent, silently, once the
// server has hung up. A server refusing an oversized request (Node
// answers 16 KB of headers with a 431) writes its refusal and closes
// before it has read the whole request; the refusal stays readable, but
// net/http gives up on the write error and never reads it, so whether
// the checker saw the refusal or "broken pipe" hung on how much of the
// request the kernel had taken first. A server that hung up without a
// word still fails the read that follows.
type hangupConn struct {
	net.Conn
	hungUp atomic.Bool
}

func (c *hangupConn) Write(p []byte) (int, error) {
	if c.hungUp.Load() {
		return len(p), nil
	}
	n, err := c.Conn.Write(p)
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
		c.hungUp.Store(true)
		return len(p), nil
	}
	return n, err
}

// noRedirect makes a redirect the reply itself: following it would send
// the fixture somewhere the user did not name.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// mergeHeader returns base plus over, over winning. Names are kept in the
// case given, so fixtures can probe how a server treats header-name case.
func mergeHeader(base, over http.Header) http.Header {
	out := make(http.Header, len(base)+len(over))
	for k, vs := range base {
		if _, ok := envelope.HeaderValue(over, k); !ok {
			out[k] = append([]string(nil), vs...)
		}
	}
	for k, vs := range over {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// bound knows the clocks of one exchange, to tell a timeout from a
// cancellation from a broken connection when a read fails.
type bound struct {
	parent context.Context // the caller's
	ctx    context.Context // parent plus Limits.Timeout
	lim    Limits
	// coding names the content codings undone on the reply being read
	// ("" for none), for the failure past the byte bound.
	coding string
	// answer, when set, answers a request the server sends on a stream
	// (see answerer).
	answer func(msg []byte)
}

// maxHTTPAnswers bounds the server's requests one exchange answers.
const maxHTTPAnswers = 8

// answerer answers the requests a 2025-xx server sends on a stream (a
// ping before it answers, a sampling request), as a client must and as
// the checker does on stdio (clientAnswer): each answer POSTed in the
// session the request was sent in. A server that waits for the answer
// before it responds is not left to be blamed for the checker's
// silence. wait waits for the answers under way, which ctx bounds. in
// takes the reply's headers: the session an initialize's answer opens is
// the one its stream's requests are answered in, with the version asked.
func (h *HTTP) answerer(ctx context.Context, client *http.Client, sent http.Header, req envelope.Request) (answer func([]byte), wait func(), in func(http.Header)) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	hdr := sent.Clone()
	for _, k := range []string{"Mcp-Method", "Mcp-Name", "Last-Event-ID", "Content-Length"} {
		envelope.HeaderDel(hdr, k)
	}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Accept", "application/json, text/event-stream")
	in = func(reply http.Header) {
		mu.Lock()
		defer mu.Unlock()
		if sid := envelope.HeaderGet(reply, "Mcp-Session-Id"); sid != "" && envelope.HeaderGet(hdr, "Mcp-Session-Id") == "" {
			hdr.Set("Mcp-Session-Id", sid)
			if envelope.HeaderGet(hdr, "MCP-Protocol-Version") == "" {
				if m := envelope.Parse(req.Body); m.Get("method").Str == "initialize" {
					if v := m.Get("params.protocolVersion").Str; envelope.KnownVersion(v) {
						hdr.Set("MCP-Protocol-Version", v)
					}
				}
			}
		}
	}
	answer = func(msg []byte) {
		a := clientAnswer(msg)
		mu.Lock()
		defer mu.Unlock()
		if a == nil || n >= maxHTTPAnswers {
			return
		}
		n++
		ah := hdr.Clone()
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(a))
			if err != nil {
				return
			}
			req.Header, req.Host = ah, sent.Get("Host")
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}()
	}
	return answer, wg.Wait, in
}

// timedOut: the exchange's own clock ran out (not the caller's).
func (b bound) timedOut() bool {
	return b.parent.Err() == nil && errors.Is(b.ctx.Err(), context.DeadlineExceeded)
}

// describe picks the Failure for an I/O error: the caller's
// cancellation, else onTimeout when the exchange's clock ran out (the
// error is then only its echo), else onError.
func (b bound) describe(onTimeout, onError string) string {
	switch {
	case b.parent.Err() != nil:
		return fmt.Sprintf("cancelled: %v", context.Cause(b.parent))
	case errors.Is(b.ctx.Err(), context.DeadlineExceeded):
		return onTimeout
	}
	return onError
}
