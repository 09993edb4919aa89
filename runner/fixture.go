package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
)

// DeadlinePassed is the could-not-judge reason of a fixture the run's
// deadline left unsent: a report, and a baseline written from the run,
// tell by it a run the deadline cut short.
const DeadlinePassed = "the run's deadline passed before this fixture"

// fixture runs one fixture: builds its request for the negotiated
// version, sends it on a fresh id space, and judges the reply.
func (l *lane) fixture(ctx context.Context, f *fixtures.Fixture) error {
	r := l.r
	if p := r.o.Progress; p != nil {
		p.Started(f.ID)
		defer p.Finished(f.ID)
	}
	if ok, why := f.Applies(r.sess.version, r.t.Transport()); !ok {
		return l.skipAll(f.ID, why)
	}
	if f.Off && r.o.CallTools == "" {
		return l.skipAll(f.ID, "off by default: it makes the server act (run with --call-tools)")
	}
	if interrupted(ctx) {
		return l.skipAll(f.ID, "not run: the run was interrupted")
	}
	if err := ctx.Err(); err != nil {
		return l.notSent(f.ID, DeadlinePassed)
	}
	variants, why := l.variants(f)
	if why != "" {
		return l.skipAll(f.ID, why)
	}
	for i, v := range variants {
		v.ctx.ID = r.requestID(f, i)
		l.last = nil
		if err := l.fireStaged(ctx, f, v); err != nil || l.deferred {
			return err
		}
		if f.Retry == "" || l.last == nil {
			continue
		}
		// The second round's id is the block's next after the
		// variants' own (T-MRTR-10: a new id), short of the last, the
		// staged session's initialize.
		k := len(variants) + i
		if k >= r.blockWidth(f)-1 {
			continue
		}
		first := l.last
		rv, ok := l.retry(f, v, first, r.requestID(f, k))
		if !ok {
			continue
		}
		if f.Retry == fixtures.RetryTamper || f.Retry == fixtures.RetryReplay {
			// The control first: the same second round with the state as
			// issued, declining; the tampered (or replayed) one only if
			// that completed the call, so that its refusal can be the
			// state's doing (see controls). The control takes the
			// block's next id after the retries'.
			c := 2*len(variants) + i
			if c >= r.blockWidth(f)-1 {
				continue
			}
			cv, ok := l.round(f, fixtures.RetryDecline, v, first, r.requestID(f, c))
			if !ok {
				continue
			}
			cv.suffix = strings.TrimSuffix(cv.suffix, "retry") + "control"
			l.last = nil
			if err := l.fireStaged(ctx, f, cv); err != nil || l.deferred {
				return err
			}
			if ok, why := controls(l.last, r.facts); !ok {
				l.out.Note(fmt.Sprintf("%s: the control round (declined, the state as issued) did not complete the call: %s; the %s state is not sent, as nothing could tell its refusal from the control's (T-MRTR-5, T-MRTR-6)", variantID(f, v), why, f.Retry+"ed"))
				continue
			}
		}
		if err := l.fireStaged(ctx, f, rv); err != nil || l.deferred {
			return err
		}
	}
	return nil
}

// restart brings a dead stdio server back and redoes the handshake, so
// the next fixture meets the server as the first one did.
func (r *run) restart(ctx context.Context) error {
	if err := r.restartTarget(ctx); err != nil {
		return err
	}
	r.mu.Lock()
	r.staged = false
	r.mu.Unlock()
	if r.sess.version == envelope.V20260728 {
		// No handshake, but a server that started again answers
		// server/discover (T-LIFE-8): one that exits at once (a lock, a
		// port another process holds) would otherwise be sent every
		// later fixture unread, each judged as a death it caused
		// (review rev43).
		ex, _ := r.discover(ctx)
		if ex.Failure != "" {
			if ctx.Err() == nil {
				r.lose("the server died, and started again it did not answer server/discover (" + ex.Failure + ")")
			}
			return fmt.Errorf("server/discover after restart: %s", ex.Failure)
		}
		return nil
	}
	// The version the first handshake agreed on, as a client started
	// again asks for it: a 2025-03-26 session's rules are 2025-06-18's,
	// and a server asked for that would serve another session.
	v := r.sess.spoken()
	body := initializeBody(r.id(), v)
	ex := r.send(ctx, envelope.Request{Header: r.stdHeaders(body), Body: body}, true)
	if ex.Failure != "" {
		if ctx.Err() == nil {
			r.lose("the server died, and started again it did not complete initialize (" + ex.Failure + ")")
		}
		return fmt.Errorf("initialize after restart: %s", ex.Failure)
	}
	note := initializedBody()
	r.send(ctx, envelope.Request{Header: r.stdHeaders(note), Body: note}, false)
	return nil
}

// fire sends one variant of a fixture and judges it.
func (l *lane) fire(ctx context.Context, f *fixtures.Fixture, v variant) error {
	r := l.r
	id := f.ID
	if v.suffix != "" {
		id += "/" + v.suffix
	}
	body, err := fixtures.Expand(f.Body, v.ctx)
	if err != nil {
		return l.notSent(id, fmt.Sprintf("%s: %v", f.File, err))
	}
	o := f.Expect
	if v.body != nil {
		body, o = v.body, v.o
	}
	if r.t.Transport() == envelope.Stdio && bytes.ContainsAny(body, "\r\n") {
		// JSON written over several lines (a user's fixture, pretty
		// printed) is one message: on a pipe it goes as one line, as a
		// client writes it (T-STDIO-1 binds the sender). Lines that are
		// no JSON would reach the server as messages of their own, each
		// answered, and one exchange cannot judge them: not sent.
		var b bytes.Buffer
		if !json.Valid(body) || json.Compact(&b, body) != nil {
			return l.notSent(id, fmt.Sprintf("%s: the body is %d lines that are no one JSON message; on a stdio pipe each line is a message of its own, which one exchange cannot judge: write it on one line", f.File, bytes.Count(body, []byte("\n"))+1))
		}
		body = b.Bytes()
	}
	h := http.Header{}
	if !f.NoStdHeaders {
		h = r.stdHeaders(body)
	} else if r.sess.sessionID != "" {
		h.Set("Mcp-Session-Id", r.sess.sessionID)
	}
	for _, e := range f.Headers {
		// A name may name the tool's x-mcp-header ({{param}}).
		name, err := fixtures.Expand([]byte(e.Name), v.ctx)
		if err != nil {
			return l.notSent(id, fmt.Sprintf("%s: %v", f.File, err))
		}
		if e.Drop {
			envelope.HeaderDel(h, string(name))
			continue
		}
		val, err := fixtures.Expand([]byte(e.Value), v.ctx)
		if err != nil {
			return l.notSent(id, fmt.Sprintf("%s: %v", f.File, err))
		}
		envelope.HeaderDel(h, string(name))
		// Keep the fixture's own spelling of the name: some probe
		// case-insensitivity (T-HTTP-19).
		h[string(name)] = []string{string(val)}
	}
	if r.t.Transport() != envelope.HTTP {
		h = nil
	}
	req := envelope.Request{Method: f.Method, Header: h, Body: body}
	exp := r.expect(req, o)
	if req.Method == "GET" || f.Stream {
		ex := l.openStream(ctx, req)
		if ex.Failure != "" && interrupted(ctx) {
			// As for a POST (below): cut short by the interrupt, not
			// by the server.
			return l.skipAll(id, "not judged: the run was interrupted during this exchange")
		}
		if ex.Unanswered && ex.Response == nil {
			// Nothing came, not even the stream's head: silence, which
			// the liveness probe tells from a server gone, as for any
			// request (a listen stream owes its acknowledgment first).
			var err error
			if ex, err = l.afterSilence(ctx, id, ex, true); err != nil {
				return err
			}
		}
		if req.Method == "GET" && expect.SessionRefusal(&ex, exp.Version, r.facts) {
			live, err := l.sessionLive(ctx, id)
			if err != nil {
				return err
			}
			ex.SessionLive = live
		}
		return l.judge(id, &ex, exp, o)
	}
	// The liveness probe, if one is needed, goes out in the same slot:
	// it is part of judging this exchange.
	release := l.fl.take(r.idKeys(req))
	defer release()
	// The run may have ended while this exchange waited its turn: by an
	// interrupt, which is no failure to judge (as in fixture), or by
	// its deadline.
	if interrupted(ctx) {
		return l.skipAll(id, "not run: the run was interrupted")
	}
	if ctx.Err() != nil {
		return l.notSent(id, DeadlinePassed)
	}
	if l.mux != nil {
		return l.muxed(ctx, id, req, exp, o)
	}
	ex, err := l.sendJudged(ctx, id, req, !exp.NoReply.Set())
	if err != nil {
		return err
	}
	if ex.Failure != "" && interrupted(ctx) {
		// Cut short by the interrupt, not by the server: not judged.
		return l.skipAll(id, "not judged: the run was interrupted during this exchange")
	}
	if !l.renewed && r.sessionEnded(f, &ex, exp) {
		if l.fl != nil {
			l.deferred = true
			return nil
		}
		renewed, err := l.renew(ctx, id, &ex)
		if err != nil {
			return err
		}
		if renewed {
			l.renewed = true
			return l.fire(ctx, f, v)
		}
	}
	return l.judge(id, &ex, exp, o)
}

// muxed sends one exchange of a stdio run through its multiplexer.
func (l *lane) muxed(ctx context.Context, id string, req envelope.Request, exp *expect.Expectation, o *expect.Override) error {
	m := l.mux
	wantReply := !exp.NoReply.Set()
	m.doubts = nil
	ex, pd, err := m.exchange(ctx, l, id, req, wantReply)
	if err != nil {
		return err
	}
	if st, ok := l.r.t.(*StdioTarget); ok {
		l.r.keepLate(st, &ex)
	}
	// probed: the marker went unanswered too, and the usual probe tells
	// silence from a server that stopped answering. Its rows go out
	// apart from the exchange's, which a resend would not replace: such
	// an exchange takes no doubt (see doubtSet).
	probed := pd == nil && ex.Unanswered
	if pd == nil {
		if ex, err = l.afterSilence(ctx, id, ex, wantReply); err != nil {
			return err
		}
		if ex.Failure != "" && ex.Died == "" && len(m.pending) > 0 && !interrupted(ctx) {
			// It stopped answering while earlier requests were still
			// open: one of them may have hung it. This one goes again,
			// alone, with them (see probe).
			pd = &pend{name: id, req: req, notification: !wantReply, ambiguous: true, stalled: true}
		}
	}
	if ex.Failure != "" && interrupted(ctx) {
		// Cut short by the interrupt, not by the server: not judged.
		return l.skipAll(id, "not judged: the run was interrupted during this exchange")
	}
	if err := l.judge(id, &ex, exp, o); err != nil {
		return err
	}
	b := l.out.(*buffer)
	at := len(b.events) - 1
	m.last, m.lastProc = b.events[at].judged.Exchange, m.exProc
	m.own(m.last, l.r.idKeysStdio(req))
	if pd != nil {
		pd.exp, pd.o, pd.buf, pd.at, pd.ex = exp, o, b, at, m.last
		m.pending = append(m.pending, pd)
		m.lastPend = pd
	} else if !probed {
		// Ready to go again should a notification in doubt land in it
		// (see doubtSet).
		m.lastPend = &pend{name: id, req: req, keys: l.r.idKeysStdio(req), notification: !wantReply, exp: exp, o: o, buf: b, at: at, ex: m.last}
	} else {
		m.lastPend = nil
	}
	if !probed && ex.Died == "" && (ex.Failure == "" || pd != nil) {
		for _, d := range m.doubts {
			m.land(m.lastPend, d)
		}
	}
	return nil
}

// streamLook is how long a GET stream is read: an open SSE stream is the
// expected answer (T-HTTP-12), and it need not ever end.
const streamLook = time.Second

// openStream sends a GET and reads what the stream carries for a moment.
// A stream still open when the look ends is what a conforming server
// does, so that is not a failure of the exchange. The look's clock starts
// when the reply begins to arrive: the wait for it is the exchange's own
// (--timeout), so a server slow to open its stream is not cut off before
// it answers, which left such a stream "could not judge" (and the run's
// verdict with it) to the machine's speed. In a concurrent run the look
// lasts while the other fixtures run (at least streamLookMin, at most
// streamLook): what the stream carries meanwhile is what it is looked at
// for, and it costs no time of its own.
func (l *lane) openStream(ctx context.Context, req envelope.Request) envelope.Exchange {
	r := l.r
	release := l.fl.take(r.idKeys(req))
	defer release()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opened := make(chan struct{})
	var once sync.Once
	sctx = httptrace.WithClientTrace(sctx, &httptrace.ClientTrace{
		GotFirstResponseByte: func() { once.Do(func() { close(opened) }) },
	})
	stop := make(chan struct{})
	var cut atomic.Bool // the look, not the server, ended the exchange
	go func() {
		select {
		case <-opened:
		case <-stop:
			return
		}
		look := time.NewTimer(streamLook)
		defer look.Stop()
		var poll <-chan time.Time // nil in sequence: the whole look
		t := time.NewTimer(streamLookMin)
		defer t.Stop()
		if l.fl != nil {
			poll = t.C
		}
		for {
			select {
			case <-look.C:
				cut.Store(true)
				cancel()
				return
			case <-poll:
				if l.fl.idle() {
					cut.Store(true)
					cancel()
					return
				}
				t.Reset(streamLookPoll)
			case <-stop:
				return
			}
		}
	}()
	ex := r.send(sctx, req, false)
	close(stop)
	sse := ex.Response != nil && ex.Response.Status/100 == 2 && envelope.IsEventStream(ex.Response.Header.Get("Content-Type"))
	switch {
	case sse && ex.Failure != "" && ctx.Err() == nil:
		// The look ended the stream on the checker's side: what came is
		// the exchange, whatever 2xx opened it (mcp-go answers 202;
		// HTTP1002 judges the status).
		ex.Failure = ""
	case cut.Load() && ctx.Err() == nil:
		// The look is for an open event stream; this reply was another
		// (a 405, a JSON body) still arriving when the look ended it, a
		// limit of the checker's, not the server's. A GET is safe to
		// repeat: it is read again whole, within --timeout.
		ex = r.send(ctx, req, false)
	}
	return ex
}

// sessionLive asks the run's session, whose server just answered a GET
// in it 404 (as in a session it ended, T-SESS-3), whether it still
// serves: a ping in it, judged as the fixture's liveness probe. Served,
// the 404 was the GET's own answer, which T-HTTP-12 does not allow
// (review rev89: an Express app that routes only POST warned, as a
// session the server might have ended).
func (l *lane) sessionLive(ctx context.Context, fixture string) (bool, error) {
	r := l.r
	body := r.markerBody(r.ownID())
	ex := r.send(ctx, envelope.Request{Header: r.stdHeaders(body), Body: body}, true)
	if ex.Failure != "" || ex.Response == nil {
		return false, nil
	}
	if err := l.judge(envelope.Liveness(fixture), &ex, nil, nil); err != nil {
		return false, err
	}
	rep := r.expect(envelope.Request{Body: body}, nil).ReadReply(ex.Response)
	return ex.Response.Status/100 == 2 && rep != nil && rep.Response != nil && rep.Response.Get("result").IsObject(), nil
}
