package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// maxSessions bounds the sessions whose protocol version is remembered.
const maxSessions = 1024

// HTTPConfig configures an HTTP relay.
type HTTPConfig struct {
	// Upstream is the server's MCP endpoint. Requests go to its scheme
	// and host with the path and query the client used: the client
	// reaches the endpoint at the same path on the proxy, and anything
	// else it asks for (OAuth discovery) still reaches the server.
	Upstream *url.URL
	// Header is set on every request to the server, replacing what the
	// client sent under those names (--header: a token the client lacks).
	// Its values are secrets.
	Header http.Header
	// Redactor redacts headers in observations; nil: NewRedactor(Header).
	Redactor *Redactor
	Limits   Limits
	// Transport sends the requests to the server. Nil: one of the
	// relay's own that asks for no compression (the client's bytes and
	// the server's go as they are), adds no User-Agent and follows no
	// redirects (a redirect is the server's reply, relayed).
	Transport http.RoundTripper
	Observer  Observer
	Now       func() time.Time // nil: time.Now
}

// HTTP is a Streamable HTTP reverse proxy to one MCP server, an
// http.Handler. Every request, its headers and body, and every reply,
// its status, headers and body, go through as they are: an SSE event is
// written and flushed to the client as soon as it is read from the
// server. Only hop-by-hop headers (Connection and those it names,
// Keep-Alive, Transfer-Encoding, Upgrade, Proxy-*) are the connection's
// own, as RFC 9110 §7.6.1 says, and Host names the server.
type HTTP struct {
	cfg  HTTPConfig
	red  *Redactor
	rt   http.RoundTripper
	c    *core
	path string // the endpoint's path

	// probes are the liveness probes under way (see http_silence.go),
	// which Close cancels (pstop) and waits for.
	probes sync.WaitGroup
	pctx   context.Context
	pstop  context.CancelFunc

	// Guarded by c.mu:
	open     map[*httpExchange]struct{}
	sessions map[string]string // Mcp-Session-Id → negotiated version
	// tokens are the progress tokens of the sessions' requests (see
	// http_tokens.go), by Mcp-Session-Id.
	tokens   map[string]*sessionTokens
	stopped  bool
	probeN   uint64    // the liveness probes' ids, counted
	lastDrop time.Time // when the server last dropped a request (see freezeLocked)
}

// NewHTTP returns a relay to cfg.Upstream.
func NewHTTP(cfg HTTPConfig) *HTTP {
	h := &HTTP{cfg: cfg, red: cfg.Redactor, rt: cfg.Transport,
		c:    newCore(cfg.Observer, cfg.Limits, cfg.Now),
		path: cfg.Upstream.Path, open: map[*httpExchange]struct{}{}, sessions: map[string]string{}}
	if h.path == "" {
		h.path = "/"
	}
	h.pctx, h.pstop = context.WithCancel(context.Background())
	if h.red == nil {
		h.red = NewRedactor(cfg.Header)
	}
	if h.rt == nil {
		h.rt = &http.Transport{
			Proxy:                  http.ProxyFromEnvironment,
			DisableCompression:     true,
			ForceAttemptHTTP2:      true,
			MaxIdleConnsPerHost:    32,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: 1 << 20,
		}
	}
	return h
}

// Close ends the relay's observing: every exchange still open is paired
// with no reply ("the proxy stopped"), and the Observer gets up to a few
// seconds to take what is queued. Requests still in flight are relayed
// on, unobserved, until the caller closes the server. Close returns the
// counts, and whether the Observer finished in time.
func (h *HTTP) Close() (Stats, bool) {
	h.c.mu.Lock()
	h.stopped = true
	var evs []event
	for x := range h.open {
		// An exchange that had its answer is judged with what came of
		// its stream so far; the others got no reply.
		why := "the proxy stopped before the reply"
		if x.answer != nil || x.held {
			// (A held stream ended: judged as it ended, unresumed.)
			why = ""
		}
		if ev, ok := x.pairLocked(why, x.answer); ok {
			evs = append(evs, ev)
		}
	}
	for _, w := range h.c.server.drainOwed() {
		evs = append(evs, h.c.failLocked(ServerToClient, w, "the client never answered before the proxy stopped"))
	}
	for _, e := range evs {
		h.c.q.put(e)
	}
	h.c.mu.Unlock()
	// The probes under way give up: their exchanges were paired above,
	// and a probe that returns finds its exchange paired.
	h.pstop()
	h.probes.Wait()
	ok := h.c.q.close(drainWait)
	return h.c.q.snapshot(), ok
}

// Stats returns the counts so far.
func (h *HTTP) Stats() Stats { return h.c.q.snapshot() }

// Redactor returns the relay's redactor, which has learned the secrets
// that passed.
func (h *HTTP) Redactor() *Redactor { return h.red }

// idleRace is how long a pooled connection must have been idle for a
// drop on it to be taken for the server closing it as idle, not for a
// drop of the request: a connection used a moment ago is open on the
// server's side too.
const idleRace = time.Second

func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	lim := h.c.lim
	kept, over, err := readBounded(r.Body, lim.MaxBytes)
	if err != nil {
		return // the client went away mid-body: nobody is left to answer
	}
	x := h.begin(r, kept, over)

	target := *h.cfg.Upstream
	target.Path, target.RawPath = r.URL.Path, r.URL.RawPath
	target.RawQuery = mergeQuery(r.URL.RawQuery, h.cfg.Upstream.RawQuery)
	var body io.Reader = bytes.NewReader(kept)
	if over {
		body = io.MultiReader(body, r.Body)
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, target.String(), body)
	if err != nil {
		x.fail(fmt.Sprintf("cannot build the request to the server: %v", err))
		http.Error(w, "wymcp-check proxy: cannot build the request to the server", http.StatusBadGateway)
		return
	}
	out.ContentLength = r.ContentLength
	if r.ContentLength == 0 && len(kept) == 0 {
		out.Body = http.NoBody
	}
	out.Header = r.Header.Clone()
	removeHopHeaders(out.Header)
	for k, vs := range h.cfg.Header {
		out.Header.Del(k)
		out.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = nil // present but empty: net/http then sends none of its own
	}
	x.startClock(out.Header, target.String())

	// Whether a connection to the server was had, and the request
	// written on it, tells a server that was never reached from one
	// that dropped the request.
	var connected, reused, wrote atomic.Bool
	out = out.WithContext(httptrace.WithClientTrace(out.Context(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			connected.Store(true)
			reused.Store(i.Reused && i.WasIdle && i.IdleTime >= idleRace)
		},
		WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) },
	}))
	resp, err := h.rt.RoundTrip(out)
	if err != nil {
		if r.Context().Err() != nil {
			x.fail("the client went away before the reply")
			return
		}
		if cause := transport.MalformedHTTP(err); cause != "" {
			x.broken(cause)
			x.fail("the reply is no HTTP/1.1 message: " + cause)
			http.Error(w, "wymcp-check proxy: the server's reply is no HTTP/1.1 message", http.StatusBadGateway)
			return
		}
		if !connected.Load() {
			// No connection was had (refused, no such host, a failed
			// TLS handshake): nothing reached the server, so there is
			// nothing of the server's for the client to see. The
			// client's own connection was to the proxy, and it was
			// accepted; breaking it would tell the client a server took
			// its request and dropped it. A 502, the answer of a proxy
			// whose upstream is not there, says what happened.
			c := x.h.c
			c.mu.Lock()
			x.unreached = true
			c.mu.Unlock()
			x.fail(fmt.Sprintf("the server could not be reached: %v", err))
			http.Error(w, "wymcp-check proxy: the server could not be reached", http.StatusBadGateway)
			return
		}
		// The server had the connection and closed or reset it without
		// a reply: the client's connection breaks the same way, and the
		// server's silence is judged as check judges it (a liveness
		// probe tells a live server that left the request unanswered
		// from one that went away).
		failure := fmt.Sprintf("request failed: %v", err)
		if reused.Load() {
			// On a kept-alive connection idle for a while, the server
			// may have closed it as idle just as the request went out
			// (Node closes them after 5 s): a race of the relay's own
			// pooling, which check, a connection per exchange, never
			// meets. Not surely the server's silence: not judged.
			failure += " (on a kept-alive connection idle long enough for the server to close it as idle: not judged)"
		}
		x.dropped(failure, wrote.Load() && droppedConn(err) && !reused.Load())
		abortReply()
	}
	defer resp.Body.Close()

	hdr := w.Header()
	for k, vs := range resp.Header {
		hdr[k] = vs
	}
	removeHopHeaders(hdr)
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	rc.Flush()
	x.head(resp)

	// Bytes are observed just before they are written on, so that a
	// request the server sends in an event is waiting in the ledger
	// before the client can answer it, and a body of known length is
	// paired before the client, holding it, sends its next request.
	buf := make([]byte, 32<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if x.feed(buf[:n]) == resp.ContentLength {
				x.end("")
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				x.end(clientGone)
				return
			}
			rc.Flush()
		}
		bad := transport.MalformedHTTP(rerr) // "" for nil and for other errors
		switch {
		case rerr == io.EOF:
			x.end("")
			return
		case rerr != nil && r.Context().Err() != nil && x.size == 0 && noBody(resp.StatusCode):
			// A client that has the status of a reply that has no body
			// (a 202 to a notification) may close before the end of the
			// body's framing: the reply was whole.
			x.end("")
			return
		case rerr != nil && r.Context().Err() != nil:
			x.end(clientGone)
			return
		case rerr != nil && bad != "":
			x.broken(bad)
			x.end("the reply is no HTTP/1.1 message: " + bad)
			abortReply()
		case rerr != nil:
			x.endDropped(rerr)
			abortReply()
		}
	}
}

// clientGone is the failure of a reply the client stopped reading.
const clientGone = "the client went away during the reply"

// abortReply breaks the connection to the client mid-reply. A handler
// that returned would have net/http end the reply cleanly (the final
// chunk), and the client would take a stream the server broke off, or
// one it could not have read, for a whole one: the relay must not mend
// what the server broke. net/http takes this panic for an abort, and
// logs nothing.
func abortReply() {
	panic(http.ErrAbortHandler)
}

// readBounded reads a body up to max bytes. over: there is more, still
// unread in body.
func readBounded(body io.Reader, max int64) ([]byte, bool, error) {
	if body == nil {
		return nil, false, nil
	}
	kept, err := io.ReadAll(io.LimitReader(body, max))
	if err != nil {
		return nil, false, err
	}
	if int64(len(kept)) < max {
		return kept, false, nil
	}
	var one [1]byte
	n, err := io.ReadFull(body, one[:])
	if n == 0 {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return kept, false, nil
		}
		return nil, false, err
	}
	// The byte read belongs to the message: it goes on with the rest.
	return append(kept, one[0]), true, nil
}

// hopHeaders are the connection's own (RFC 9110 §7.6.1), not the
// message's: a proxy does not forward them.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHopHeaders(h http.Header) {
	for _, f := range h["Connection"] {
		for _, name := range strings.Split(f, ",") {
			if name = textproto.TrimString(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// noBody: a reply with this status has no content (RFC 9110 §15.3.3,
// §15.3.5), or an MCP server sends none (202 to a notification).
func noBody(status int) bool {
	return status == http.StatusAccepted || status == http.StatusNoContent || status == http.StatusNotModified
}

// An httpExchange is one HTTP request through the relay, observed.
type httpExchange struct {
	h    *HTTP
	req  *Observation // the client's request
	meta HTTPMeta     // the request's, copied into each reply observation
	// ex is what is judged; nil off the endpoint. paired is set once the
	// exchange is complete (or failed): later messages are observed only,
	// but for a GET stream's (tailLocked).
	ex     *envelope.Exchange
	method string // JSON-RPC method
	paired bool
	// The reply.
	reply  *envelope.Response
	stream bool
	sized  bool   // the reply's head gave its length
	body   []byte // kept: the body, or the stream's text, decoded
	size   int64  // bytes relayed, as the server sent them
	text   int64  // bytes of the body decoded from its Content-Encoding (size without one)
	inf    *inflater
	coding string // the Content-Encoding undone, for notes
	sse    sseSplitter
	events int
	kept   int64 // bytes of messages kept in ex
	ended  bool  // the reply was observed to its end
	// malformed is net/http's cause when the reply broke HTTP/1.1's
	// syntax before the exchange was paired: judged so (HTTP1006), with
	// no reply, as check's transport has it.
	malformed string
	// unreached: no connection to the server could be had (Pair.Unreached).
	unreached bool
	// answer is the response on a POST's stream, once it came: the
	// stream is read on past it, as check's transport reads it, until
	// the stream ends, Limits.Quiet passes (quiet), or a bound is met,
	// and what comes meanwhile is judged with the exchange. cut is where
	// the last event taken in ends in the stream's text, the body's end
	// once paired. counted is the events of a POST's stream taken in, as
	// check's transport counts them (see eventIDLocked; a resumed stream's
	// count on), against transport.DefaultMaxEvents.
	answer *Observation
	// answers tells a message of a POST's stream that answers the
	// request (transport.Answers, as check's transport tells it): a
	// response to another request's id is kept, and the stream is read
	// on past it for the request's own.
	answers func(msg []byte) bool
	quiet   *time.Timer
	cut     int64
	counted int
	// tail counts the messages of a GET stream judged after its head,
	// their events and bytes; tailFull: the bound was met.
	tail      int
	tailBytes int64
	tailFull  bool
	// silence is the clock of a request owed a reply (see
	// http_silence.go); nil for the others.
	silence *silence
	// gave is the server's request the client's response in this POST
	// answered: should the server's HTTP layer refuse the POST, it
	// waits again (waiting.given).
	gave *waiting
	// Resumption (see http_resume.go): lastID is the stream's last event
	// id; held, a POST's stream ended after it without the response and
	// waits for the client to resume it; resumer is the GET that does,
	// resumes the POST a GET resumes, and joined counts the GET's
	// events joined to it.
	lastID string
	whole  int64 // where the stream's last whole event ends in its text
	held   bool
	// brokeOff is how the server broke a held stream off (not ended
	// it): held unresumed, or its resumption refused, the exchange is
	// probed as a dropped one is.
	brokeOff string
	// alone: no other request of the client's was open when the server
	// dropped this one (see freezeLocked); heldProbe: the probe is of a
	// held stream the server broke off, which the client did not resume.
	alone, heldProbe bool
	resumer          *httpExchange
	resumes          *httpExchange
	joined           int
}

// begin observes the client's request and opens its exchange.
func (h *HTTP) begin(r *http.Request, kept []byte, over bool) *httpExchange {
	c := h.c
	size := int64(len(kept))
	if over {
		size = max(r.ContentLength, size)
		kept = kept[:c.lim.MaxBytes]
	}
	endpoint := r.URL.Path == h.path
	c.mu.Lock()
	defer c.mu.Unlock()
	var raw []byte
	if size > 0 {
		raw = kept
	}
	o := c.observeLocked(ClientToServer, raw, size, over)
	if over && r.ContentLength < 0 {
		o.Note = fmt.Sprintf("larger than the %d-byte bound: relayed whole, not judged", c.lim.MaxBytes)
	}
	o.HTTP = &HTTPMeta{Request: o.Seq, Method: r.Method, Path: r.URL.RequestURI(), Endpoint: endpoint, Header: h.red.Header(r.Header)}
	x := &httpExchange{h: h, req: o, meta: *o.HTTP, method: o.Method, sse: sseSplitter{max: c.lim.MaxBytes}}
	x.meta.Header = nil
	evs := []event{obsEvent(o)}
	if endpoint && o.Kind == KindResponse && r.Method == http.MethodPost {
		if w, p := c.clientResponseLocked(o, r.Header.Get("Mcp-Session-Id")); w != nil {
			if p != nil {
				evs = append(evs, pairEvent(p))
			}
			if w.method != "ping" && !w.cancelled {
				// The client answered a request of the server's: the
				// session's requests waiting meanwhile may have waited
				// on it, and their clocks stood while it was open. (A
				// ping, a keep-alive, holds up nothing; one the server
				// cancelled held them up until then, and pushed them
				// back then.)
				h.extendSessionLocked(r.Header.Get("Mcp-Session-Id"), o.Time.Sub(w.sent))
			}
			x.gave = w
		}
	}
	if endpoint && r.Method == http.MethodPost && o.Kind == KindNotification && o.Method == "notifications/cancelled" && !over {
		h.cancelLocked(r.Header.Get("Mcp-Session-Id"), raw)
	}
	if endpoint && !h.stopped {
		hdr := o.HTTP.Header.Clone()
		for k := range h.cfg.Header {
			hdr.Del(k)
			hdr[http.CanonicalHeaderKey(k)] = []string{Redacted}
		}
		x.ex = &envelope.Exchange{Transport: envelope.HTTP, Version: h.sessions[r.Header.Get("Mcp-Session-Id")],
			Request: envelope.Request{Method: r.Method, Header: hdr, Body: raw}}
		x.answers = transport.Answers(raw)
		h.open[x] = struct{}{}
		h.offerLocked(x, raw, over)
		if r.Method == http.MethodGet {
			h.resumeLocked(x, r.Header)
		}
		if r.Method == http.MethodPost && o.Kind == KindRequest && !over && o.Method != "subscriptions/listen" {
			// (A listen stream's response comes only when the
			// subscription ends: no silence to judge.)
			x.silence = newSilence(o)
		}
	}
	// The client's response already completed its pair; it does not
	// complete this one (the HTTP exchange, which gets a 202).
	c.q.put(evs...)
	return x
}

// pairLocked completes the exchange with what was read of the reply.
func (x *httpExchange) pairLocked(failure string, reply *Observation) (event, bool) {
	if x.ex == nil || x.paired {
		return event{}, false
	}
	x.paired = true
	delete(x.h.open, x)
	if x.quiet != nil {
		x.quiet.Stop()
	}
	x.stopClockLocked()
	x.ex.Failure = failure
	if x.malformed != "" {
		x.ex.Failure, x.ex.Malformed = "", x.malformed
	}
	if x.reply != nil && x.malformed == "" {
		r := *x.reply
		r.Body = x.body
		if x.answer != nil || x.cut > 0 {
			// What was read past the last event taken in is not part of
			// the exchange: the recorded body splits into its messages.
			// (Past the event bound, a read that brought the answer
			// with the bounding event judged it, run to run as the
			// server's writes were cut: review of stop 62.)
			r.Body = r.Body[:min(x.cut, int64(len(r.Body)))]
		}
		x.ex.Response = &r
		if x.inf != nil && failure == "" {
			x.ex.Note = "Content-Encoding " + x.coding + ": judged decoded, as the client reads it"
		}
	}
	p := &Pair{Asker: ClientToServer, Exchange: x.ex, Method: x.method, Sent: x.req.Time, Done: x.h.c.now(),
		RequestSeq: x.req.Seq, Oversized: x.req.Oversized, Unreached: x.unreached}
	if reply != nil {
		if !reply.Completes {
			// Not yet queued: an answer queued before its pair was
			// marked when it was observed.
			reply.Completes = true
		}
		p.ReplySeq, p.Done = reply.Seq, reply.Time
		p.Oversized = p.Oversized || reply.Oversized
		if x.ex.Response != nil {
			x.ex.Response.Truncated = x.ex.Response.Truncated || reply.Oversized
		}
	}
	if p.Oversized && x.ex.Failure == "" {
		x.ex.Failure = "larger than the byte bound: relayed, not judged"
	}
	if x.answer == nil && x.ex.Failure == "" {
		x.remember(x.ex.Response)
	}
	if w := x.gave; w != nil && x.ex.Response != nil && envelope.RefusedAtHTTP(x.ex.Response.Status, x.body) {
		// The server's HTTP layer refused the client's answer: no MCP
		// code read it, and the server's request waits on, as do the
		// requests that wait on it (review rev72: a 400 to a malformed
		// answer left the server's tools/call failed as silent).
		w.given, w.sent = true, x.h.c.now()
		x.h.c.server.add(w)
	}
	switch x.req.HTTP.Method {
	case http.MethodPost:
		if x.answer != nil || reply != nil && x.ex.Failure == "" && x.answers != nil && x.answers(reply.Raw) {
			x.h.answeredLocked(x, p.Done)
		}
	case http.MethodGet:
		if x.ex.Request.Header.Get("Last-Event-ID") == "" {
			x.ex.Offered = x.h.offeredLocked(x.session(), p.Done)
		}
	}
	return pairEvent(p), true
}

// remember keeps the version a session negotiated, and forgets a
// session the client ended, from a reply that completed its exchange
// (or the answer of a stream still read on: the client has it, and its
// next request may come at once).
func (x *httpExchange) remember(r *envelope.Response) {
	h := x.h
	if r == nil {
		return
	}
	switch {
	case x.method == "initialize" && r.Status/100 == 2:
		sid := r.Header.Get("Mcp-Session-Id")
		var v string
		for _, m := range r.Messages {
			if v = negotiated(m); v != "" {
				break
			}
		}
		if v == "" && !x.stream {
			v = negotiated(r.Body)
		}
		if sid != "" && v != "" {
			if len(h.sessions) >= maxSessions {
				clear(h.sessions)
			}
			h.sessions[sid] = v
		}
	case x.ex.Request.Method == http.MethodDelete && r.Status/100 == 2:
		delete(h.sessions, x.ex.Request.Header.Get("Mcp-Session-Id"))
		delete(h.tokens, x.ex.Request.Header.Get("Mcp-Session-Id"))
	}
}

// broken notes that the reply broke HTTP/1.1's syntax (see malformed),
// before the exchange ends with that failure.
func (x *httpExchange) broken(cause string) {
	c := x.h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	x.malformed = cause
}

// failLocked closes the exchange with no reply.
func (x *httpExchange) failLocked(why string) (event, bool) { return x.pairLocked(why, nil) }

func (x *httpExchange) fail(why string) {
	c := x.h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev, ok := x.failLocked(why); ok {
		c.q.put(ev)
	}
	if r := x.resumes; r != nil {
		// The GET that resumed a POST's stream got no stream: the POST
		// waits for nothing more.
		r.resumedEndLocked(x, why, false)
	}
}

// streamDecodeFactor bounds what a coded stream decodes to, in byte
// bounds: a long stream of events, not a bomb.
const streamDecodeFactor = 16

// head notes the reply's status and headers. A stream's head is observed
// at once (the stream may last); a GET or DELETE stream completes its
// exchange there, as nothing in it answers the request (the messages
// that come on it later are judged one by one, see tailLocked).
func (x *httpExchange) head(resp *http.Response) {
	c := x.h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	x.stream = envelope.IsEventStream(resp.Header.Get("Content-Type"))
	x.sized = resp.ContentLength >= 0
	hdr := x.h.red.Header(resp.Header)
	x.reply = &envelope.Response{Status: resp.StatusCode, Header: hdr}
	x.meta.Status, x.meta.Header, x.meta.Stream = resp.StatusCode, hdr, x.stream
	if codings := envelope.Codings(resp.Header); codings != nil {
		// The client reads the body decoded, and so does the judge: the
		// judged copy is the decoded body, without the headers that
		// described the coded one. A body (not a stream) is decoded up
		// to the byte bound, as it is kept up to it.
		bound := c.lim.MaxBytes
		if x.stream {
			// Each event is bounded as it is split; the stream as a
			// whole is bounded too, or two kilobytes that expand a
			// thousandfold per layer hold the relay for seconds. Past
			// it the rest of the stream is relayed, not judged.
			bound = streamDecodeFactor * c.lim.MaxBytes
		}
		x.inf, x.coding = newInflater(codings, bound), strings.Join(codings, ", ")
		x.reply.Header = hdr.Clone()
		x.reply.Header.Del("Content-Encoding")
		x.reply.Header.Del("Content-Length")
	}
	if !x.stream {
		return
	}
	if r := x.resumes; r != nil && !r.paired {
		// The resumed stream is now the one whose end the POST's
		// exchange records, as check's transport takes the last GET's.
		r.reply.Ended = false
	}
	o := c.observeLocked(ServerToClient, nil, 0, false)
	o.HTTP = x.metaCopy()
	evs := []event{obsEvent(o)}
	if x.req.HTTP.Method != http.MethodPost {
		if ev, ok := x.pairLocked("", o); ok {
			evs = append(evs, ev)
		}
	}
	c.q.put(evs...)
}

func (x *httpExchange) metaCopy() *HTTPMeta {
	m := x.meta
	return &m
}

// feed observes reply bytes about to be relayed, and returns how many
// have come so far.
func (x *httpExchange) feed(p []byte) int64 {
	c := x.h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	x.size += int64(len(p))
	if x.inf != nil {
		x.inf.write(p, x.take)
	} else {
		x.take(p)
	}
	return x.size
}

// take observes decoded reply bytes.
func (x *httpExchange) take(p []byte) {
	c := x.h.c
	x.text += int64(len(p))
	if !x.paired || x.frozen() {
		// Once paired, the exchange holds the text it was judged on; a
		// stream's later text is observed event by event only. A body
		// that comes past --timeout is still observed whole.
		x.body = keep(x.body, p, c.lim.MaxBytes)
	}
	if x.stream {
		x.sse.feed(p, x.eventLocked)
	}
	if x.answer != nil && x.text > c.lim.MaxBytes {
		// Past its answer a stream is read on only up to the byte bound,
		// as check reads it: the events whole by then are the exchange's.
		x.settleLocked()
	} else if x.text > c.lim.MaxBytes && x.judgingStream() {
		// Past the byte bound before its answer, as check's transport
		// stops reading one (the events whole within it were taken in
		// above, and none answered).
		if ev, ok := x.truncateLocked(x.tooLarge()); ok {
			c.q.put(ev)
		}
	}
}

// judgingStream: x is a POST's exchange whose stream is still read for
// its judgement, not yet paired nor frozen (judged as silent).
func (x *httpExchange) judgingStream() bool {
	return x.ex != nil && x.stream && !x.paired && !x.frozen() && x.req.HTTP.Method == http.MethodPost
}

// truncateLocked pairs a POST's exchange whose stream met a bound of
// check's transport before its answer: the reply read is not whole
// (Response.Truncated), and failure names the bound in check's words,
// so the checks say "could not judge", as they do in check, never that
// the server left the request unanswered.
func (x *httpExchange) truncateLocked(failure string) (event, bool) {
	x.reply.Truncated = true
	return x.pairLocked(failure, nil)
}

// tooLarge is the failure of a stream past the byte bound before its
// answer, as check's transport words it: of its decoded text when it
// was coded.
func (x *httpExchange) tooLarge() string {
	if x.inf != nil {
		return (&envelope.CodingError{Coding: x.coding, Max: x.h.c.lim.MaxBytes, Err: envelope.ErrDecodedTooLarge}).Error()
	}
	return fmt.Sprintf("reply exceeds %d bytes", x.h.c.lim.MaxBytes)
}

// settleLocked pairs an exchange whose answer came with what came of
// its stream after it, if not done yet.
func (x *httpExchange) settleLocked() {
	if ev, ok := x.pairLocked("", x.answer); ok {
		x.h.c.q.put(ev)
	}
}

// quietEnd pairs an exchange whose stream stayed open Limits.Quiet past
// its answer: a server may keep it open, and the judgement waits no
// longer (the client has had every event at once).
func (x *httpExchange) quietEnd() {
	c := x.h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if x.reply != nil && !x.paired {
		// Held open past its response, as check's transport records it
		// (HTTP1005 warns: the response SHOULD end the stream).
		x.reply.HeldOpen = true
	}
	x.settleLocked()
}

// eventLocked observes one SSE event.
func (x *httpExchange) eventLocked(f frame) {
	c := x.h.c
	counts := x.eventIDLocked(f)
	// t is the exchange the event is taken into: x, or the POST whose
	// stream x (a GET with Last-Event-ID) resumes.
	t := x
	if r := x.resumes; r != nil && !r.paired {
		t = r
		f = t.joinLocked(f)
	}
	t.whole = f.end
	// last: the event is the last check's transport reads of the stream,
	// its event bound met; the exchange is paired once it is taken in.
	var last bool
	switch {
	case !t.judgingStream():
	case f.end > c.lim.MaxBytes && t.answer != nil:
		// The look past the answer ends at the byte bound, before this
		// event.
		t.settleLocked()
	case f.end > c.lim.MaxBytes:
		// The stream passed the byte bound before its answer, as check's
		// transport reads it: this event is beyond what it reads.
		if ev, ok := t.truncateLocked(t.tooLarge()); ok {
			c.q.put(ev)
		}
	default:
		if counts {
			t.counted++
			last = t.counted >= transport.DefaultMaxEvents
		}
		if t.answer != nil || last {
			// (At the event bound too: check's transport reads no
			// further, and text the same read brought past it, the
			// answer among it, is no part of the exchange.)
			t.cut = f.end
		}
	}
	data := eventData(f)
	if data == nil {
		// A comment or a bare id: no message.
		if last {
			t.boundLocked()
		}
		return
	}
	x.events++
	o := c.observeLocked(ServerToClient, data, f.size, f.oversized)
	o.HTTP = x.metaCopy()
	o.HTTP.Event = x.events
	var evs []event
	switch o.Kind {
	case KindRequest:
		evs = c.serverRequestLocked(o, envelope.HTTP, x.version(), x.session())
	default:
		evs = []event{obsEvent(o)}
	}
	if o.Kind == KindNotification && o.Method == "notifications/cancelled" {
		// The server gave up a request of its own: no answer is owed,
		// and the session's clocks no longer wait on it, pushed back by
		// the time it stood open, as by an answer.
		if w := c.server.cancelIn(x.session(), o); w != nil {
			x.h.extendSessionLocked(x.session(), o.Time.Sub(w.sent))
		}
	}
	if o.Kind == KindNotification && o.Method == "notifications/progress" && !o.Oversized {
		x.h.progressLocked(x.session(), o.Raw)
	}
	switch {
	case x.ex == nil:
	case t != x && t.paired:
		// (Paired between the join above and now: at its bound.)
	case t.frozen():
		t.lateLocked(o, envelope.Response{Status: t.reply.Status, Header: t.reply.Header, Messages: [][]byte{data}})
	case t != x || !x.paired:
		// (A resumed stream's events are the POST's, judged with it, not
		// on their own as a GET stream's: nothing is judged twice.)
		evs = append(evs, t.keepLocked(o, f, data)...)
	case x.req.HTTP.Method != http.MethodPost:
		if ev, ok := x.tailLocked(o, f, data); ok {
			// Right after its message, as an Observer expects a pair.
			evs = slices.Insert(evs, 1, ev)
		}
	}
	c.q.put(evs...)
	if last {
		t.boundLocked()
	}
}

// boundLocked pairs a POST's exchange whose stream reached the event
// bound of check's transport (transport.DefaultMaxEvents), the events
// up to it taken in: with its answer, if one came among them (the look
// past it ends there), else as not whole, as check's transport stops
// reading it ("could not judge").
func (x *httpExchange) boundLocked() {
	if !x.judgingStream() {
		return
	}
	if x.answer != nil {
		x.settleLocked()
		return
	}
	if ev, ok := x.truncateLocked(fmt.Sprintf("no response in the first %d events", x.counted)); ok {
		x.h.c.q.put(ev)
	}
}

// keepLocked takes a message of a stream not yet paired into its
// exchange. The first message that answers the request (x.answers, as
// check's transport tells it) is its response: the stream is read on
// past it for Limits.Quiet, unless it cannot be judged anyway. Any
// other message, a response to another request's id among them, is
// kept, and the stream is read on for the response, within the bounds
// check's transport reads it in (--timeout, its events and bytes).
func (x *httpExchange) keepLocked(o *Observation, f frame, data []byte) []event {
	c := x.h.c
	answers := x.answer == nil && x.answers(data)
	if x.kept+int64(len(data)) <= c.lim.MaxBytes || answers {
		x.reply.Messages = append(x.reply.Messages, data)
		x.kept += int64(len(data))
	}
	if !answers {
		return nil
	}
	if o.Oversized || x.req.Oversized {
		// Not to be judged: nothing to wait for. (An answer that ends
		// past the byte bound never comes here: the stream was
		// truncated before it, see eventLocked.)
		if ev, ok := x.pairLocked("", o); ok {
			return []event{ev}
		}
		return nil
	}
	// The answer is the exchange's reply, marked before it is queued; its
	// pair follows once the stream ends, Quiet passes or a bound is met.
	// It came within --timeout: no silence to judge.
	x.stopClockLocked()
	o.Completes, o.Later = true, true
	x.answer, x.cut = o, f.end
	x.remember(x.reply)
	x.quiet = time.AfterFunc(c.lim.Quiet, x.quietEnd)
	return nil
}

// tailLocked judges a message that came on a GET stream after its head
// completed the request's pair: an exchange of its own, of the GET
// request, the stream's status and headers, and a body of that event
// alone, as check judges the messages of its GET fixture's stream. One
// event each: a GET stream may last as long as the session, and its
// messages are judged as they come. Notifications, requests and, on a
// stream not resumed, responses are judged (responses on a resumed stream
// answer another exchange); at
// most transport.DefaultMaxEvents of them (the events check's transport
// reads of one stream), and Limits.MaxBytes of their text, per stream.
func (x *httpExchange) tailLocked(o *Observation, f frame, data []byte) (event, bool) {
	c := x.h.c
	resumed := x.ex.Request.Header.Get("Last-Event-ID") != ""
	if x.h.stopped || o.Oversized || o.Kind == KindBatch || resumed && o.Kind == KindResponse {
		// (A response on a stream resumed with Last-Event-ID replays an
		// earlier exchange's answer; on a fresh one it breaks T-HTTP-12,
		// and is judged as check judges it. An event that is no message,
		// or no JSON, breaks T-RPC-1 and is judged too.)
		return event{}, false
	}
	if x.tail >= transport.DefaultMaxEvents || x.tailBytes+int64(len(f.raw)) > c.lim.MaxBytes {
		if !x.tailFull {
			x.tailFull = true
			o.Note = fmt.Sprintf("the stream's messages judged reached the bound (%d bytes, %d events): this one and later ones are observed, not judged", c.lim.MaxBytes, transport.DefaultMaxEvents)
		}
		return event{}, false
	}
	x.tail++
	x.tailBytes += int64(len(f.raw))
	o.Completes = true
	ex := &envelope.Exchange{Transport: envelope.HTTP, Version: x.ex.Version, Request: x.ex.Request,
		Response: &envelope.Response{Status: x.reply.Status, Header: x.reply.Header, Body: f.raw, Messages: [][]byte{data}},
		Note:     fmt.Sprintf("event %d of the %s stream, judged on its own", o.HTTP.Event, x.req.HTTP.Method)}
	if x.inf != nil {
		ex.Note += "; Content-Encoding " + x.coding + ": judged decoded, as the client reads it"
	}
	if x.req.HTTP.Method == http.MethodGet && !resumed {
		// What the session's requests still active offered (see
		// http_tokens.go).
		ex.Offered = x.h.offeredLocked(x.session(), o.Time)
	}
	p := &Pair{Asker: ClientToServer, Exchange: ex, Sent: x.req.Time, Done: o.Time,
		RequestSeq: x.req.Seq, ReplySeq: o.Seq, Tail: true}
	return pairEvent(p), true
}

// session is the session the exchange's stream belongs to: the
// request's, or, for the initialize that opened one, the reply's.
func (x *httpExchange) session() string {
	if sid := x.req.HTTP.Header.Get("Mcp-Session-Id"); sid != "" {
		return sid
	}
	if x.reply != nil {
		return x.reply.Header.Get("Mcp-Session-Id")
	}
	return ""
}

func (x *httpExchange) version() string {
	if x.ex != nil {
		return x.ex.Version
	}
	return ""
}

// end closes the reply: a body is observed whole now, and an exchange
// still open is paired with what came (a stream that ended without an
// answer is judged as such).
func (x *httpExchange) end(failure string) {
	c := x.h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	x.endLocked(failure, "")
}

// endDropped closes a reply the connection broke off (rerr). One that
// had not brought the response the request is owed is the server's
// silence, as check's transport reads it: judged after a liveness probe
// (dropped); else it ends as end ends it.
func (x *httpExchange) endDropped(rerr error) {
	c := x.h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	failure := fmt.Sprintf("the reply broke off: %v", rerr)
	var silent string
	if droppedConn(rerr) {
		// check's transport's words, so a note reads the same in a
		// relay's verdict and in check's.
		silent = fmt.Sprintf("reading the reply: %v (%d bytes read)", rerr, x.text)
		if x.stream {
			silent = fmt.Sprintf("reading the event stream: %v (%s)", rerr, eventsWithout(x.events))
		}
	}
	x.endLocked(failure, silent)
}

// endLocked is end; silent, when set, is the failure of a reply the
// server broke off, judged as silence if the request still waits for
// its response (see endDropped).
func (x *httpExchange) endLocked(failure, silent string) {
	c := x.h.c
	if x.ended {
		return
	}
	x.ended = true
	if r := x.resumes; r != nil {
		defer r.resumedEndLocked(x, failure, silent != "")
	}
	var coding error // the body's coding could not be undone
	if x.inf != nil {
		x.inf.close(x.take)
		coding = x.inf.err
	}
	if ce := (*envelope.CodingError)(nil); errors.As(coding, &ce) && ce.Corrupt() && x.malformed == "" {
		// Bytes no client can decode in the coding they name: the
		// server's finding (HTTP1006), as check's transport has it
		// (review rev58: relayed, not judged, and the gate passed).
		x.malformed = ce.Error()
	}
	var notDecoded string
	switch {
	case coding != nil && x.malformed != "":
		// Judged, as no message: the note says why.
		notDecoded = coding.Error() + ": relayed; no client can read it"
	case coding != nil && !errors.Is(coding, envelope.ErrDecodedTooLarge):
		// Neither the client nor the judge can read such a body.
		notDecoded = coding.Error() + ": relayed, not judged"
		if failure == "" {
			failure = notDecoded
		}
	}
	if x.stream {
		// Ended as check's transport records it: the server closed the
		// stream and every byte of it was read and kept. Not one the
		// relay stopped reading (its bounds, the client gone), one the
		// server broke off, or one whose coding could not be undone:
		// only a stream so ended tells that no bound of the checker's
		// cut its response off.
		x.reply.Ended = failure == "" && silent == "" && coding == nil && x.text <= c.lim.MaxBytes && x.malformed == ""
		if failure == clientGone && x.method == "subscriptions/listen" && x.answer == nil && x.kept > 0 {
			// A client ends its listen stream itself, as check's look at
			// one ends: what came on it is the exchange, judged as check
			// judges it (not ended by the server, so no verdict of its
			// end); left unjudged, a bad acknowledgment passed the
			// relay's gate (review rev33). A stream the client left
			// before any message came is not judged: the acknowledgment
			// may have been on its way (review rev35).
			failure = ""
		}
	}
	var evs []event
	var reply *Observation
	if !x.stream {
		over := x.text > c.lim.MaxBytes
		var raw []byte
		if x.text > 0 && notDecoded == "" {
			raw = x.body
		}
		reply = c.observeLocked(ServerToClient, raw, x.size, over)
		reply.HTTP = x.metaCopy()
		reply.HTTP.Failure = failure
		switch {
		case notDecoded != "":
			reply.Note = notDecoded
		case coding != nil:
			reply.Note = coding.Error() + ": relayed whole, not judged"
		}
		if x.frozen() && failure == "" {
			x.lateLocked(reply, envelope.Response{Status: x.reply.Status, Header: x.reply.Header, Body: raw})
		}
		evs = append(evs, obsEvent(reply))
	}
	if x.stream {
		// The end of a stream is worth a line to a person watching: an
		// SSE stream the server closed, or one cut off.
		reply = c.observeLocked(ServerToClient, nil, 0, false)
		reply.HTTP = x.metaCopy()
		reply.HTTP.Failure = failure
		reply.Note = fmt.Sprintf("end of the stream (%d events)", x.events)
		evs = append(evs, obsEvent(reply))
		// The end answers nothing: a stream is paired with its answer,
		// if one came (the exchange had it, however the stream then
		// ended), else without one.
		reply = x.answer
		if reply != nil {
			failure = ""
		}
	}
	switch {
	case x.frozen():
		// Judged as silent, or being: a probe pairs it.
	case (failure == "" || silent != "") && reply == nil && x.holdLocked():
		x.brokeOff = silent
		// Held for the client to resume it: a stream the server ended,
		// or broke off, after an event id (a client reconnects with
		// Last-Event-ID after either, as check's transport does).
	case silent != "" && x.owedLocked() && (x.stream || !x.wholeJSON()):
		x.freezeLocked(silent, true)
	default:
		if ev, ok := x.pairLocked(failure, reply); ok {
			evs = append(evs, ev)
		}
	}
	c.q.put(evs...)
}

// wholeJSON: a body without a length, which ends when the connection
// does, already holds a whole JSON value when the connection broke: that
// is the reply, as check's transport reads it, however the connection
// then ended.
func (x *httpExchange) wholeJSON() bool {
	return !x.sized && len(bytes.TrimSpace(x.body)) > 0 && gjson.ValidBytes(x.body)
}

// mergeQuery is the query a request goes upstream with: the client's own
// as it came, but the upstream URL's parameters (a server that takes its
// key in the query) replace the client's of the same names, as --header
// replaces the client's headers.
func mergeQuery(client, upstream string) string {
	if client == "" || upstream == "" {
		return client + upstream
	}
	name := func(pair string) string {
		k, _, _ := strings.Cut(pair, "=")
		if u, err := url.QueryUnescape(k); err == nil {
			return u
		}
		return k
	}
	ours := map[string]bool{}
	for pair := range strings.SplitSeq(upstream, "&") {
		ours[name(pair)] = true
	}
	var kept []string
	for pair := range strings.SplitSeq(client, "&") {
		if !ours[name(pair)] {
			kept = append(kept, pair)
		}
	}
	return strings.Join(append(kept, upstream), "&")
}
