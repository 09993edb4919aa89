package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// A client's request that the server leaves unanswered is judged as
// check judges it (DESIGN, "Silence is a finding"): past Limits.Timeout
// without its response, or when the server closed the connection
// without it, the relay asks the server, on a connection of its own,
// whether it is alive (a liveness probe, as check's runner sends). A
// server that answers the probe left the request unanswered: the
// exchange is paired with no response and no failure, and the judge
// fails it (RPC1006). One that refuses the connection after dropping
// the request went away handling it (PRO1005). One that answers
// nothing cannot be judged. The client's traffic is never touched: it
// waits as long as it likes, and a reply that comes later is relayed.

// livenessID prefixes the ids of the relay's probes: strings no client
// uses, so a server that keys its bookkeeping by id per session (every
// SDK does) never mixes a probe with a client's request.
const livenessID = "wymcp-check-liveness-"

// deathSettle is how long a probe whose connection was cut waits before
// it asks again, as check's runner waits: a server going away closes
// what it holds, and a moment later nothing listens, or it answers.
const deathSettle = 200 * time.Millisecond

// silence is the clock of one request owed a reply. Guarded by c.mu.
type silence struct {
	id    string // idKey of the request's id
	token string // its progress token, raw JSON ("" for none)
	// header and url are the request's as sent to the server: its
	// probe goes with them (its session, version and credentials: it
	// is the same client's server).
	header http.Header
	url    string
	timer  *time.Timer
	gen    int // which timer is current: one stopped may still fire
	// deadline is when the timer fires: Limits.Timeout after the send,
	// or the last progress, pushed back by the time the server's own
	// requests held the session up.
	deadline time.Time
	// cancelled: the client cancelled the request (notifications/
	// cancelled), which is then owed no reply.
	cancelled bool
	// frozen: past --timeout, or dropped with the connection: the
	// exchange is judged as silent (or not at all) once its probe
	// answers, never by a reply that comes later.
	frozen bool
	// late: a response came after the exchange froze; noted: the note
	// saying so was given.
	late, noted bool
}

func newSilence(o *Observation) *silence {
	s := &silence{id: idKey(o.ID)}
	if t := gjson.GetBytes(o.Raw, "params._meta.progressToken"); t.Exists() {
		s.token = strings.Clone(t.Raw)
	}
	return s
}

func (x *httpExchange) frozen() bool { return x.silence != nil && x.silence.frozen }

// owedLocked: the request still waits for the response it is owed, and
// its silence would be judged.
func (x *httpExchange) owedLocked() bool {
	s := x.silence
	return s != nil && !s.frozen && !s.cancelled && !x.paired && x.answer == nil && x.malformed == "" &&
		!x.h.stopped && x.text <= x.h.c.lim.MaxBytes
}

// startClock starts the request's clock as it goes to the server.
func (x *httpExchange) startClock(sent http.Header, url string) {
	c := x.h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if x.silence == nil {
		return
	}
	x.silence.header, x.silence.url = sent.Clone(), url
	x.restartLocked()
}

// restartLocked (re)starts the clock: Limits.Timeout from now.
func (x *httpExchange) restartLocked() {
	s := x.silence
	if !x.owedLocked() || s.url == "" {
		return
	}
	x.armLocked(x.h.c.now().Add(x.h.c.lim.Timeout))
}

// armLocked sets the clock to fire at deadline.
func (x *httpExchange) armLocked(deadline time.Time) {
	s := x.silence
	x.stopClockLocked()
	gen := s.gen
	s.deadline = deadline
	s.timer = time.AfterFunc(max(deadline.Sub(x.h.c.now()), 0), func() { x.fire(gen) })
}

func (x *httpExchange) stopClockLocked() {
	s := x.silence
	if s == nil {
		return
	}
	s.gen++
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// fire: Limits.Timeout passed without the response.
func (x *httpExchange) fire(gen int) {
	c := x.h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != x.silence.gen || !x.owedLocked() {
		return
	}
	if x.held {
		// Its stream ended after an event id, and the client did not
		// resume it within --timeout: judged as the stream ended (a
		// 2025-xx server may deliver the response on a resumed stream,
		// which RPC1006 then warns of). One the server broke off is
		// probed as a dropped connection is: a server that went away
		// died on it (PRO1005).
		x.held = false
		if x.brokeOff != "" {
			x.heldProbe = true
			x.freezeLocked(x.brokeOff, true)
			return
		}
		if ev, ok := x.pairLocked("", nil); ok {
			c.q.put(ev)
		}
		return
	}
	if c.server.waitingIn(x.session()) {
		// The server waits for the client (sampling, elicitation): the
		// request may rightly wait for that answer, which pushes its
		// clock back (extendSessionLocked).
		return
	}
	var failure string
	d := c.lim.Timeout
	switch {
	// check's transport's words, so a note reads alike in both.
	case x.reply == nil:
		failure = fmt.Sprintf("no reply within %s", d)
	case x.stream:
		failure = fmt.Sprintf("no response within %s: %s", d, eventsWithout(x.events))
	default:
		failure = fmt.Sprintf("reply incomplete after %s (%d bytes read)", d, x.text)
	}
	x.freezeLocked(failure, false)
}

// extendSessionLocked pushes back the clocks of the requests of a
// session by held, the time a request of the server's there stood open
// until the client answered it: a request may rightly wait on that
// answer, and its clock stood meanwhile. Not a restart: a server that
// asks again and again (a keep-alive) must not keep a silence from
// being judged. A clock that ran out meanwhile (fire let it be, the
// server waiting) fires now, if the push does not cover it.
func (h *HTTP) extendSessionLocked(session string, held time.Duration) {
	for x := range h.open {
		if s := x.silence; s != nil && x.session() == session && x.owedLocked() && s.url != "" && !s.deadline.IsZero() {
			x.armLocked(s.deadline.Add(held))
		}
	}
}

// progressLocked starts again the clock of the request a progress
// notification names (by its token, in its session): the server is
// working on it.
func (h *HTTP) progressLocked(session string, msg []byte) {
	token := gjson.GetBytes(msg, "params.progressToken")
	if !token.Exists() {
		return
	}
	for x := range h.open {
		if s := x.silence; s != nil && s.token != "" && x.session() == session && envelope.SameID(gjson.Parse(s.token), token) {
			x.restartLocked()
		}
	}
}

// cancelLocked notes a request the client cancelled in a session: it is
// owed no reply (the watcher judges it so), and its silence is none.
func (h *HTTP) cancelLocked(session string, msg []byte) {
	k := envelope.IDKey(gjson.GetBytes(msg, "params.requestId"))
	if k == "" {
		return
	}
	for x := range h.open {
		if s := x.silence; s != nil && s.id == k && !x.paired && x.req.HTTP.Header.Get("Mcp-Session-Id") == session {
			s.cancelled = true
			x.stopClockLocked()
		}
	}
}

// dropped ends an exchange whose connection the server closed before
// any reply head. unanswered: the request was written whole, and the
// connection then ended (EOF, reset), which check's transport reads as
// a reply withheld.
func (x *httpExchange) dropped(failure string, unanswered bool) {
	c := x.h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case x.frozen():
		// Already past --timeout: its probe judges it.
	case unanswered && x.owedLocked():
		x.freezeLocked(failure, true)
	default:
		if ev, ok := x.failLocked(failure); ok {
			c.q.put(ev)
		}
		if r := x.resumes; r != nil {
			r.resumedEndLocked(x, failure, false)
		}
	}
}

// freezeLocked takes the exchange as it stands, the reply so far cut
// there as check's transport cuts it, and probes the server's liveness
// to judge it. drop: the server closed the connection.
func (x *httpExchange) freezeLocked(failure string, drop bool) {
	h, s := x.h, x.silence
	x.stopClockLocked()
	s.frozen = true
	var resp *envelope.Response
	if x.reply != nil {
		r := *x.reply
		r.Body, r.Messages, r.Cut = bytes.Clone(x.body), slices.Clone(x.reply.Messages), true
		resp = &r
	}
	if drop {
		// A death is pinned on the request only when it was the one
		// open: with others, which one the server died of is not known
		// (check and wrap judge none then). Those dropped a moment
		// before it were open when the server went away too.
		now := h.c.now()
		x.alone = h.lastDrop.IsZero() || now.Sub(h.lastDrop) > time.Second
		h.lastDrop = now
		for y := range h.open {
			if y != x && y.silence != nil && !y.paired && (y.owedLocked() || y.frozen() || y.held) {
				x.alone = false
			}
		}
	}
	h.probeN++
	version := x.probeVersion()
	spec := probeSpec{url: s.url, header: probeHeader(s.header, version), body: probeBody(version, fmt.Sprint(livenessID, h.probeN))}
	// Close cancels the probe and waits for it; it has not run yet (the
	// relay is not stopped: owedLocked), so the wait counts this one.
	h.probes.Add(1)
	go x.judgeSilence(spec, resp, failure, drop)
}

// judgeSilence probes the server and pairs the frozen exchange.
func (x *httpExchange) judgeSilence(spec probeSpec, resp *envelope.Response, failure string, drop bool) {
	h, c := x.h, x.h.c
	defer h.probes.Done()
	res := h.liveness(spec)
	c.mu.Lock()
	defer c.mu.Unlock()
	if x.paired || h.stopped {
		return
	}
	var note, died string
	switch {
	case res.alive && x.heldProbe:
		// A stream broken off after an event id that the client did not
		// resume, from a live server: judged as a stream that ended so
		// (a 2025-xx server may deliver the response on a resumed
		// stream, which RPC1006 warns of).
		x.silence.frozen = false
		if ev, ok := x.pairLocked("", nil); ok {
			c.q.put(ev)
		}
		return
	case res.alive:
		left := "left this request unanswered"
		if resp != nil && len(resp.Body) > 0 && !x.stream {
			// A JSON body begun and never finished: the server answered,
			// in part.
			left = "left its reply unfinished"
		}
		note = failure + "; the server answered a liveness probe, so it is alive and " + left
		failure = ""
	case x.silence.late:
		// Its response came, past --timeout: the server is alive, and
		// silence within --timeout is the finding, as check has it.
		note = failure + "; its response came later, past --timeout (so the server is alive, and slower than --timeout)"
		failure = ""
	case res.refused && drop && x.alone:
		// It dropped the request, then nothing listened: the server went
		// away handling it, a finding against the request (PRO1005), as
		// check reports it.
		failure += "; the server did not answer a liveness probe either"
		died = "it left the request unanswered, then stopped accepting connections (" + res.failure + ")"
	case res.refused && drop:
		failure += "; then the server stopped accepting connections, with other requests of the client's open: which one it died of is not known"
	default:
		// Neither the request nor the probe answered: the checker could
		// not judge (an error, as check and send give it).
		failure += "; the server did not answer a liveness probe either"
		x.ex.Unanswered = true
	}
	x.paired = true
	delete(h.open, x)
	ex := x.ex
	ex.Response, ex.Failure, ex.Died, ex.Note = resp, failure, died, note
	if x.inf != nil && failure == "" && resp != nil {
		ex.Note = envelope.JoinNotes(ex.Note, "Content-Encoding "+x.coding+": judged decoded, as the client reads it")
	}
	c.q.put(pairEvent(&Pair{Asker: ClientToServer, Exchange: ex, Method: x.method, Sent: x.req.Time, Done: c.now(), RequestSeq: x.req.Seq}))
}

// lateLocked notes a response that came for a frozen exchange: it was
// relayed, and the exchange was (or is being) judged without it. r is
// the reply it came in, for what a session learns from it.
func (x *httpExchange) lateLocked(o *Observation, r envelope.Response) {
	s := x.silence
	if o.Kind != KindResponse || s.noted {
		return
	}
	s.noted, s.late = true, true
	o.Note = envelope.JoinNotes(fmt.Sprintf("answers #%d past --timeout, judged then", x.req.Seq), o.Note)
	x.remember(&r)
}

// probeVersion is the protocol version the request speaks, which picks
// the probe: its header, else its session's, else its _meta's.
func (x *httpExchange) probeVersion() string {
	if v := strings.TrimSpace(x.silence.header.Get("Mcp-Protocol-Version")); envelope.KnownVersion(v) {
		return v
	}
	if x.ex.Version != "" {
		return x.ex.Version
	}
	if gjson.GetBytes(x.ex.Request.Body, envelope.MetaPath(envelope.MetaProtocolVersion)).Str == envelope.V20260728 {
		return envelope.V20260728
	}
	return ""
}

// probeBody is a request every server of the version answers at once,
// as check's runner sends, with a string id of the relay's own.
func probeBody(version, id string) []byte {
	return envelope.LivenessBody(version, strconv.AppendQuote(nil, id))
}

// probeHeader is the header of a probe: the stuck request's, as sent to
// the server (session, version, credentials, --header), less what
// described its body, and asking for no content coding.
func probeHeader(sent http.Header, version string) http.Header {
	h := sent.Clone()
	for _, k := range []string{"Content-Length", "Content-Encoding", "Accept-Encoding", "Mcp-Method", "Mcp-Name", "Last-Event-ID"} {
		envelope.HeaderDel(h, k)
	}
	for k := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-Param-") {
			delete(h, k)
		}
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if version != "" && envelope.HeaderGet(h, "Mcp-Protocol-Version") == "" {
		h.Set("Mcp-Protocol-Version", version)
	}
	if version == envelope.V20260728 {
		h.Set("Mcp-Method", "server/discover")
	}
	return h
}

type probeSpec struct {
	url    string
	header http.Header
	body   []byte
}

// probeResult: alive, the server answered; refused, nothing listened
// (failure says how the probe ended).
type probeResult struct {
	alive, refused bool
	failure        string
}

// liveness probes the server as check's runner does after a silence,
// within Limits.Timeout (or until Close).
func (h *HTTP) liveness(s probeSpec) probeResult {
	ctx, cancel := context.WithTimeout(h.pctx, h.c.lim.Timeout)
	defer cancel()
	res, cut := h.livenessOnce(ctx, s)
	if !res.alive && cut && ctx.Err() == nil {
		t := time.NewTimer(deathSettle)
		select {
		case <-t.C:
			res, _ = h.livenessOnce(ctx, s)
		case <-ctx.Done():
			t.Stop()
		}
	}
	return res
}

// livenessOnce probes in the request's session, and, when that gets no
// HTTP reply at all, outside it: the session may be what went silent,
// and any HTTP answer there shows the server alive. cut: the in-session
// probe's connection was closed or reset, not refused.
func (h *HTTP) livenessOnce(ctx context.Context, s probeSpec) (probeResult, bool) {
	a := h.probe(ctx, s.url, s.header, s.body)
	if a.answered || a.replied {
		return probeResult{alive: a.answered, failure: a.failure}, false
	}
	if envelope.HeaderGet(s.header, "Mcp-Session-Id") != "" {
		out := s.header.Clone()
		envelope.HeaderDel(out, "Mcp-Session-Id")
		if b := h.probe(ctx, s.url, out, s.body); b.replied && b.failure == "" {
			return probeResult{alive: true}, false
		}
	}
	return probeResult{refused: a.refused, failure: a.failure}, a.cut
}

// probeAnswer is what one probe got. answered: a JSON-RPC response
// object; replied: an HTTP reply head; failure: how it ended otherwise.
type probeAnswer struct {
	answered, replied, refused, cut bool
	failure                         string
}

func (h *HTTP) probe(ctx context.Context, url string, hdr http.Header, body []byte) (a probeAnswer) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		a.failure = fmt.Sprintf("cannot build the probe: %v", err)
		return a
	}
	req.Header = hdr.Clone()
	resp, err := h.rt.RoundTrip(req)
	if err != nil {
		a.failure = h.probeFailure(ctx, fmt.Sprintf("request failed: %v", err))
		a.refused = errors.Is(err, syscall.ECONNREFUSED)
		a.cut = !a.refused && ctx.Err() == nil && droppedConn(err)
		return a
	}
	defer resp.Body.Close()
	a.replied = true
	max := h.c.lim.MaxBytes
	var r io.Reader = io.LimitReader(resp.Body, max)
	if codings := envelope.Codings(resp.Header); codings != nil {
		d, err := envelope.NewDecoder(r, codings)
		if err != nil {
			a.failure = err.Error()
			return a
		}
		r = io.LimitReader(d, max)
	}
	if envelope.IsEventStream(resp.Header.Get("Content-Type")) {
		sr := envelope.NewSSEReader(r, int(max)+1)
		for {
			ev, err := sr.Next()
			if err != nil {
				if err != io.EOF {
					a.failure = h.probeFailure(ctx, fmt.Sprintf("reading the event stream: %v", err))
				}
				return a
			}
			if ev.IsMessage() && responseObject(ev.Data) {
				a.answered = true
				return a
			}
		}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		a.failure = h.probeFailure(ctx, fmt.Sprintf("reading the reply: %v", err))
		return a
	}
	a.answered = responseObject(data)
	return a
}

func (h *HTTP) probeFailure(ctx context.Context, onError string) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("no reply within %s", h.c.lim.Timeout)
	}
	return onError
}

// responseObject: msg is one JSON-RPC response (a result or an error).
func responseObject(msg []byte) bool {
	t := bytes.TrimSpace(bytes.TrimPrefix(msg, []byte("\ufeff")))
	return envelope.IsResponse(t) && gjson.ParseBytes(t).IsObject()
}

// droppedConn: the connection ended under a request or its reply, as a
// server that closes or resets it ends it.
func droppedConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

func eventsWithout(n int) string {
	if n == 1 {
		return "1 event without a response"
	}
	return fmt.Sprintf("%d events without a response", n)
}
