package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// settle is how long the relay reads a server's stdout and stderr after
// it exited: the last lines trail the exit, and a grandchild that kept
// the pipes must not keep the relay. While a write to the client is
// under way (a slow client reading the server's last words, the rest
// still in the pipe) it waits on, up to maxSettle: what the server wrote
// before it went is the client's.
const settle = 500 * time.Millisecond

// maxSettle bounds that wait, whatever the client's pace.
const maxSettle = 30 * time.Second

// flow tells whether a write of the server's output to the client is
// under way.
type flow struct {
	writing atomic.Int32
}

func (f *flow) writer(w io.Writer) io.Writer { return flowWriter{w, f} }

type flowWriter struct {
	w io.Writer
	f *flow
}

func (w flowWriter) Write(b []byte) (int, error) {
	w.f.writing.Add(1)
	defer w.f.writing.Add(-1)
	return w.w.Write(b)
}

// Stdio starts a server command and relays its stdio: what the client
// writes to Stdin goes to the server's stdin, what the server writes to
// its stdout goes to Stdout, byte for byte and as soon as it is read,
// and the server's stderr goes to Stderr unchanged. Each line in either
// direction is observed once it has been forwarded.
type Stdio struct {
	Argv []string
	Env  []string // nil: the relay's own environment
	Dir  string   // "": the relay's working directory

	Stdin  io.Reader // the client's writes
	Stdout io.Writer // the client reads this
	Stderr io.Writer // the server's stderr

	// Signals are forwarded to the server's process group (SIGINT and
	// SIGTERM, typically) until it exits. Nil forwards none.
	Signals <-chan os.Signal

	Limits   Limits
	Observer Observer
	Now      func() time.Time // nil: time.Now

	// maxSettle replaces the package's bound when set: the tests wait
	// seconds, not half a minute.
	maxSettle time.Duration
}

// A Result is how a relayed session ended.
type Result struct {
	// ExitCode is the server's exit status, or 128+N when signal N ended
	// it, as a shell reports it: the relay exits with it.
	ExitCode int
	// Exit says how the server ended: "exit status 0", "signal: terminated".
	Exit string
	// Notes say what the relay saw happen at the end: who closed first,
	// whether the server had to be stopped.
	Notes []string
	Stats Stats
	// Lagged: the Observer was still busy when the relay gave up waiting
	// for it; its last deliveries may be missing.
	Lagged bool
}

// stdioRelay is one run of Stdio.
type stdioRelay struct {
	*core
	client  ledger // the client's requests, waiting for the server
	version string // negotiated by initialize, for the exchanges after it
	// offers are the progress tokens (raw JSON) of the client's requests
	// still active, request by request, in order: waiting for their
	// reply, judged silent (the reply may yet come), or answered with a
	// task whose token lives on (see offer). A request answered leaves
	// it: progress for its token after that names no active request
	// (T-PROG-1). unknown: one could not be read (a message too large to
	// read, more than envelope.MaxOffered tokens active), and an
	// exchange says nothing of them (see envelope.Exchange.Offered).
	offers  []*offer
	unknown bool
	// logFloor and listens are what else the client's requests asked the
	// server to send (envelope.PipeAsks); known where offers are.
	logFloor string
	listens  []string
	// looks are the exchanges of requests answered within Limits.Quiet
	// whose token a late progress notification may still name (see
	// lookLocked).
	looks []*look
	// held are the lines that are no JSON-RPC message the server wrote
	// while no request of the client's waited (a startup banner, a log
	// line after a reply), and progress then that named no request
	// active (see besidesLocked), heldSize their bytes: they join the next
	// request's reply, as check's transport takes the lines written
	// before a request into its exchange, so that T-STDIO-2 is judged
	// the same way here.
	held     [][]byte
	heldSize int64
	// eof is the exchange of the end of the server's input, once the
	// client closed its end while the server ran (see endInputLocked):
	// what the server writes after that and no request's exchange takes,
	// and what was held then, is its reply, judged as check judges the
	// lines after it closes stdin (T-STDIO-2, T-STDIO-6).
	eof *waiting
	// timer judges a silence when its deadline passes (see armLocked);
	// closed stops it for good at the session's end.
	timer  *time.Timer
	closed bool
	// late are the requests judged silent, whose reply may yet come;
	// answers the requests answered, with their reply, for a second
	// response; answersSize their bytes (see stdio_silence.go).
	late        []silenced
	answers     []*answer
	answersSize int64
	// sent are the id keys of the client's requests; sentFull: more
	// than it holds, or one could not be read, so an id is no longer
	// known to be unsent.
	sent     map[string]bool
	sentFull bool
	// standSince is when the clocks of the client's requests stopped,
	// the server waiting on the client (zero: they run; see
	// clockLocked).
	standSince time.Time
	// guessed marks, for a waiting request, which of its besides were
	// given to it by guess (see besidesLocked), in order; a request not
	// in it has none.
	guessed map[*waiting][]bool
}

// An offer is the progress tokens one request of the client's offered
// (a batch's, all of its requests').
type offer struct {
	seq  uint64 // the request's Observation
	toks []string
	// lives: a 2025-11-25 task-augmented request answered with its task:
	// its token serves the task's whole lifetime (progress page,
	// Behavior Requirements; checks' taskLives), so it stays offered.
	lives bool
}

// offerLocked notes the progress tokens a client's message offers.
func (r *stdioRelay) offerLocked(o *Observation) {
	toks, ok := envelope.OfferedTokens(o.Raw)
	logFloor, listens := envelope.PipeAsks(o.Raw)
	n := len(toks)
	for _, f := range r.offers {
		n += len(f.toks)
	}
	switch {
	case r.unknown:
	case o.Oversized || !ok || n > envelope.MaxOffered || len(r.listens)+len(listens) > envelope.MaxOffered:
		r.unknown, r.offers, r.listens = true, nil, nil
	default:
		if len(toks) > 0 {
			r.offers = append(r.offers, &offer{seq: o.Seq, toks: toks})
		}
		r.logFloor = envelope.MoreVerbose(r.logFloor, logFloor)
		r.listens = append(r.listens, listens...)
	}
}

// closeOfferLocked takes in that the request at seq was answered: its
// tokens are offered no more, unless lives (see offer).
func (r *stdioRelay) closeOfferLocked(seq uint64, lives bool) {
	i := slices.IndexFunc(r.offers, func(f *offer) bool { return f.seq == seq })
	switch {
	case i < 0:
	case lives:
		r.offers[i].lives = true
	default:
		r.offers = slices.Delete(r.offers, i, i+1)
	}
}

// offeredNowLocked: tok is a token a request still active offered.
func (r *stdioRelay) offeredNowLocked(tok gjson.Result) bool {
	return slices.ContainsFunc(r.offers, func(f *offer) bool {
		return slices.ContainsFunc(f.toks, func(t string) bool { return envelope.SameToken(gjson.Parse(t), tok) })
	})
}

// Run starts the server and relays until it has exited and its stdout
// has ended. When the client closes Stdin, the server's stdin is closed
// and the server gets Limits.Grace to exit, then SIGTERM, then SIGKILL
// (a client that closed has nobody left to do it). When ctx ends, the
// server is stopped the same way. Run returns an error only when the
// server could not be started.
//
// A Stdin that never ends leaves one goroutine reading it after Run
// returns; the process is expected to exit then.
func (s *Stdio) Run(ctx context.Context) (Result, error) {
	if len(s.Argv) == 0 {
		return Result{}, errors.New("no server command given")
	}
	p, err := startProcess(s.Argv, s.Env, s.Dir)
	if err != nil {
		return Result{}, err
	}
	r := &stdioRelay{core: newCore(s.Observer, s.Limits, s.Now)}
	lim := r.lim

	var res Result
	note := func(format string, args ...any) { res.Notes = append(res.Notes, fmt.Sprintf(format, args...)) }

	clientClosed := make(chan struct{})
	var clientFirst atomic.Bool // the client closed before the server exited
	go func() {
		defer close(clientClosed)
		r.pump(s.Stdin, p.stdin, r.clientFrame, false)
		select {
		case <-p.exited:
		default:
			clientFirst.Store(true)
			r.mu.Lock()
			r.endInputLocked()
			r.mu.Unlock()
		}
		p.stdin.Close() // the client is done: tell the server, as MCP's shutdown does
	}()
	var out sync.WaitGroup
	var fl flow
	// clientGone is the write to the client's stdout that failed, if one
	// did: the client stopped reading (a closed pipe, EPIPE).
	var clientGone atomic.Pointer[error]
	out.Add(2)
	go func() {
		defer out.Done()
		frame, flush := r.rejoined(r.serverFrame)
		if werr := r.pump(p.stdout, fl.writer(s.Stdout), frame, true); werr != nil {
			clientGone.Store(&werr)
		}
		r.mu.Lock()
		flush()
		r.mu.Unlock()
	}()
	go func() {
		defer out.Done()
		copyAll(fl.writer(s.Stderr), p.stderr)
	}()
	stopSignals := make(chan struct{})
	again := make(chan struct{})
	var forwarded atomic.Int32 // signals passed to the server
	go forwardSignals(s.Signals, p, stopSignals, again, &forwarded)

	// stopping stops the server as MCP's shutdown does, stdin first.
	stopping := func(why string) {
		p.stdin.Close()
		if !p.waitExit(lim.Grace) {
			note("stopping (%s): the server did not exit within %v after its stdin closed; sent SIGTERM", why, lim.Grace)
			p.stop(lim.Grace)
		}
	}
	// How the server took the end of its input, when the client closed
	// first (see endInputLocked): only a wait that ran its whole grace
	// tells, as check's does.
	var exited, lingered bool
	select {
	case <-p.exited:
		exited = true
	case <-clientClosed:
		closedAt, signalled := time.Now(), forwarded.Load()
		// A second signal, or the relay stopped, ends the wait: the
		// person who sent it wants the server stopped now (review
		// rev51: a second Ctrl-C waited out the rest of --grace).
		exited = p.waitExitUnless(lim.Grace, again, ctx.Done())
		took := time.Since(closedAt)
		// Counted before the stop: a signal passed on after the wait
		// changes nothing of what it saw (review rev53).
		passed := forwarded.Load() != signalled
		if !exited {
			note("the server did not exit within %v after its stdin closed; sent SIGTERM", lim.Grace)
			p.stop(lim.Grace)
		}
		// Judged as check judges it (T-STDIO-6, PRO1011), by the same
		// wait, whatever --grace is (review rev51): gone within it is
		// prompt, unless a signal passed on meanwhile, which it may have
		// died of; still running at its end (a signal or not) lingered;
		// a --grace shorter than it tells neither.
		alive := took > lim.Exit || !exited && took >= lim.Exit
		exited, lingered = exited && !alive && !passed, alive
	case <-ctx.Done():
		stopping("the relay was stopped")
	case <-again:
		// The server let the first signal pass (it ignores SIGINT, or
		// takes its time): the person who sent a second one wants it
		// stopped, and the relay does it.
		stopping("a second signal")
	}
	close(stopSignals)
	res.ExitCode, res.Exit = exitStatus(p.waitErr)

	// The server is gone; read what it wrote before going, then let go
	// of pipes a grandchild may still hold.
	outDone := make(chan struct{})
	go func() { out.Wait(); close(outDone) }()
	// A grandchild that keeps writing is read and passed on at once, so
	// no write is under way at a tick for long: the wait ends.
	bound := maxSettle
	if s.maxSettle > 0 {
		bound = s.maxSettle
	}
	deadline := time.Now().Add(bound)
	for waiting := true; waiting; {
		select {
		case <-outDone:
			waiting = false
		case <-time.After(settle):
			// Stopped (ctx), the relay waits no longer than before.
			if ctx.Err() != nil || fl.writing.Load() == 0 || time.Until(deadline) <= settle {
				note("the server's stdout or stderr stayed open after it exited (a child of it holds them); stopped reading")
				waiting = false
			}
		}
	}
	p.stdout.Close()
	p.stderr.Close()
	p.stdin.Close()
	// Closed, the pipes end every read at once; a copy blocked writing
	// to a client that never reads (wrap's stderr, nobody at its end)
	// does not end, and is left behind within the same bound: the
	// summary and the reports are owed, and the process exits anyway.
	select {
	case <-outDone:
	case <-time.After(max(time.Until(deadline), settle/10)):
		note("a write to the client was still under way %v after the server exited; stopped waiting for it", bound)
	}

	if werr := clientGone.Load(); werr != nil {
		note("the client stopped reading (%v); what the server wrote after was read and judged, not delivered", *werr)
	}
	if clientFirst.Load() {
		note("the client closed its end; the server then ended (%s)", res.Exit)
	} else {
		note("the server ended (%s) while the client was connected", res.Exit)
	}
	died := ""
	if !clientFirst.Load() {
		// The server ended while the client was there: a request it
		// left open, the only one, is the message it died on, as check
		// reports a death against the fixture that caused it (PRO1005).
		// With several open, which one is not known.
		died = "the server ended while the client was connected (" + res.Exit + ")"
	}
	r.inputEnded(exited, lingered)
	r.finish(fmt.Sprintf("no reply before the server ended (%s)", res.Exit), died)
	res.Lagged = !r.q.close(drainWait)
	res.Stats = r.q.snapshot()
	return res, nil
}

// pump copies src to dst, a read at a time, and observes the lines in
// it. A line is observed just before the read that ends it is written
// on: the peer cannot act on a line before it has its "\n", so a
// request is always waiting in the ledger before its reply can come,
// and the order of observation is the order of cause. A dst that fails
// (the peer went away) ends the copy, unless drain: then src is read to
// its end, observed and discarded, so that a server whose client stopped
// reading never blocks on a full pipe (as copyAll drains its stderr).
// It returns the first write that failed.
func (r *stdioRelay) pump(src io.Reader, dst io.Writer, frame func(frame), drain bool) (werr error) {
	ls := lineSplitter{max: r.lim.MaxBytes}
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.mu.Lock()
			ls.feed(buf[:n], frame)
			r.mu.Unlock()
			if werr == nil {
				if _, werr = dst.Write(buf[:n]); werr != nil && !drain {
					return werr
				}
			}
		}
		if err != nil {
			r.mu.Lock()
			ls.flush(frame)
			r.mu.Unlock()
			return werr
		}
	}
}

// rejoined passes the server's lines to emit as the checker's transport
// reads stdout (envelope.Rejoiner): a reply pretty-printed over several
// lines is one message, judged and recorded as check would, not a run of
// fragments that leaves its request unanswered. flush gives back a run
// the stream ended in. Both are called with r.mu held.
func (r *stdioRelay) rejoined(emit func(frame)) (feed func(frame), flush func()) {
	j := envelope.NewRejoiner(int(r.lim.MaxBytes))
	flush = func() {
		for _, h := range j.Flush() {
			emit(frame{raw: h, size: int64(len(h))})
		}
	}
	feed = func(f frame) {
		if f.oversized || f.open {
			flush()
			emit(f)
			return
		}
		for _, out := range j.Add(f.raw) {
			emit(frame{raw: out, size: int64(len(out))})
		}
	}
	return feed, flush
}

// clientFrame observes one line from the client. Every line but a
// response (to the server's request) opens an exchange: a request
// waits for its reply, a notification waits Limits.Quiet for a reply
// that should not come, and a line that is no valid message waits for
// the error that answers it.
func (r *stdioRelay) clientFrame(f frame) {
	o := r.observeFrameLocked(ClientToServer, f)
	r.offerLocked(o)
	if o.Kind == KindResponse {
		if _, p := r.clientResponseLocked(o, ""); p != nil {
			r.q.put(obsEvent(o), pairEvent(p))
			r.clockLocked(o.Time)
			return
		}
		r.q.put(obsEvent(o))
		return
	}
	if f.size == 0 {
		o.Note = "empty line"
		r.q.put(obsEvent(o))
		return
	}
	w := &waiting{key: idKey(o.ID), id: o.ID, method: o.Method, seq: o.Seq, sent: o.Time, oversized: o.Oversized,
		deadline: o.Time.Add(r.lim.Timeout),
		ex:       &envelope.Exchange{Transport: envelope.Stdio, Version: r.version, Request: envelope.Request{Body: o.Raw}}}
	switch o.Kind {
	case KindNotification:
		if o.Method == "notifications/cancelled" {
			r.cancelLocked(o)
		}
		w.key, w.quiet = "", true
		time.AfterFunc(r.lim.Quiet, func() { r.quietEnd(w) })
	case KindBatch:
		w.key = batchKey
	}
	if !w.quiet && !w.oversized && r.held != nil {
		// What the server wrote while nothing waited comes before
		// whatever it writes for this request.
		w.besides, w.besidesSize = r.held, r.heldSize
		r.held, r.heldSize = nil, 0
	}
	r.sentLocked(o)
	evs := []event{obsEvent(o)}
	if old, why := r.client.add(w); old != nil {
		evs = append(evs, r.endLocked(old, why))
	}
	r.q.put(evs...)
}

// endLocked closes a client request no reply will complete, with what
// the server wrote for it meanwhile (a listen's acknowledgment, a
// progress notification): judged as a reply that ended early is, as the
// HTTP relay keeps what a stream carried before it closed.
func (r *stdioRelay) endLocked(w *waiting, why string) event {
	delete(r.guessed, w)
	if len(w.besides) > 0 {
		w.ex.Response = &envelope.Response{Messages: w.besides, Unsent: w.unsent}
		r.offeredLocked(w)
		if w.ex.Version == "" {
			w.ex.Version = r.version
		}
	}
	ev := r.failLocked(ClientToServer, w, why)
	// What came for it went past the bound: not whole, not judged.
	ev.pair.Oversized = ev.pair.Oversized || w.over
	return ev
}

// offeredLocked gives an exchange what the client's requests asked so
// far, and the progress tokens offered by requests active while it
// waited: those still active, its own, and those a progress line it took
// by guess named while their request was active (spoken). A token whose
// request was answered before is not among them: progress naming it
// names no active request (T-PROG-1). Unknown, it says nothing.
func (r *stdioRelay) offeredLocked(w *waiting) {
	if r.unknown {
		return
	}
	toks := []string{}
	for _, f := range r.offers {
		toks = append(toks, f.toks...)
	}
	if !slices.ContainsFunc(r.offers, func(f *offer) bool { return f.seq == w.seq }) {
		own, _ := envelope.OfferedTokens(w.ex.Request.Body)
		toks = append(toks, own...)
	}
	for _, t := range w.spoken {
		if !slices.Contains(toks, t) {
			toks = append(toks, t)
		}
	}
	w.ex.Offered = toks
	w.ex.LogFloor, w.ex.Listens = r.logFloor, append([]string{}, r.listens...)
}

// lives: the reply o to w is a 2025-11-25 task-augmented request's
// answer with its task (see offer).
func lives(w *waiting, o *Observation) bool {
	return envelope.TaskLives(w.ex.Version, gjson.GetBytes(w.ex.Request.Body, "params.task"), gjson.GetBytes(o.Raw, "result.task"))
}

// A look is an answered request's exchange, held Limits.Quiet after
// its response before it is paired: a progress notification for its
// token in that moment joins it after the response, and PRO1003 judges
// it late (T-PROG-1), as check reads on past a response and the HTTP
// relay past a POST's. Only a request that offered a token is held.
type look struct {
	w    *waiting
	p    *Pair
	size int64
	n    int
}

// lookLocked holds p, w's pair, for its look, when w offered a token
// and its exchange is to be judged; it reports whether it did (then the
// pair follows when the look ends).
func (r *stdioRelay) lookLocked(w *waiting, p *Pair) bool {
	if w.key == batchKey || p.Oversized || w.ex.Failure != "" || !gjson.GetBytes(w.ex.Request.Body, "params._meta.progressToken").Exists() {
		return false
	}
	l := &look{w: w, p: p, n: len(w.ex.Response.Messages)}
	for _, m := range w.ex.Response.Messages {
		l.size += int64(len(m))
	}
	r.looks = append(r.looks, l)
	time.AfterFunc(r.lim.Quiet, func() { r.lookEnd(l) })
	return true
}

// lookEnd pairs an answered request once its look is over.
func (r *stdioRelay) lookEnd(l *look) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.Index(r.looks, l); i >= 0 {
		r.looks = slices.Delete(r.looks, i, i+1)
		r.q.put(pairEvent(l.p))
	}
}

// lateLocked gives a progress notification naming the token of a request
// answered within its look to that request's exchange. It reports
// whether one took it.
func (r *stdioRelay) lateLocked(o *Observation, token gjson.Result) bool {
	for i := len(r.looks) - 1; i >= 0; i-- {
		l := r.looks[i]
		if !envelope.SameToken(gjson.GetBytes(l.w.ex.Request.Body, "params._meta.progressToken"), token) {
			continue
		}
		if o.Oversized || l.size+int64(len(o.Raw)) > r.lim.MaxBytes || l.n >= maxBesides {
			return false // past the bound: not judged, as past check's
		}
		res := l.p.Exchange.Response
		res.Messages = append(res.Messages, o.Raw)
		l.size += int64(len(o.Raw))
		l.n++
		o.Note = fmt.Sprintf("after the response to #%d %s; judged with it", l.w.seq, l.w.method)
		return true
	}
	return false
}

// quietEnd pairs a notification with no reply, as it should be, once
// its quiet time is over.
func (r *stdioRelay) quietEnd(w *waiting) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client.take(w) {
		r.q.put(pairEvent(&Pair{Asker: ClientToServer, Exchange: w.ex, Method: w.method, Sent: w.sent, Done: r.now(), RequestSeq: w.seq}))
	}
}

// serverFrame observes one line from the server.
func (r *stdioRelay) serverFrame(f frame) {
	o := r.observeFrameLocked(ServerToClient, f)
	switch o.Kind {
	case KindRequest:
		r.besidesLocked(o)
		r.q.put(r.serverRequestLocked(o, envelope.Stdio, r.version, "")...)
		r.clockLocked(o.Time)
		return
	case KindResponse, KindBatch:
	case KindNotification:
		switch o.Method {
		case "notifications/progress":
			r.progressLocked(o)
		case "notifications/cancelled":
			r.serverCancelLocked(o)
		}
		r.besidesLocked(o)
		r.q.put(obsEvent(o))
		return
	default:
		if o.Note == "" {
			o.Note = "not a JSON-RPC message; stdout carries only messages"
		}
		if len(bytes.TrimSpace(o.Raw)) > 0 && !r.besidesLocked(o) {
			r.holdLocked(o)
		}
		r.q.put(obsEvent(o))
		return
	}
	var w *waiting
	if o.Kind == KindBatch {
		w = r.client.matchBatch(o.Raw)
	} else {
		if evs, ok := r.strayLocked(o); ok {
			r.q.put(evs...)
			return
		}
		w = r.client.match(o.ID, idlessError(o))
	}
	if w == nil {
		if o.Kind == KindResponse && r.unsentLocked(o) {
			r.q.put(obsEvent(o))
			return
		}
		if !gjson.ValidBytes(o.Raw) {
			// Shaped as a reply, and no JSON (a write cut short): like
			// any line that is no message, it joins a waiting request's
			// reply, or the next one's, where T-STDIO-2 judges it
			// (review rev41).
			if !r.besidesLocked(o) {
				r.holdLocked(o)
			}
			r.q.put(obsEvent(o))
			return
		}
		if o.Note == "" {
			o.Note = "answers no request waiting for a reply"
		}
		r.q.put(obsEvent(o))
		return
	}
	if w.method == "initialize" {
		if v := negotiated(o.Raw); v != "" {
			r.version = v
		}
	} else if w.ex.Version == "" {
		// Sent before initialize was answered (a client that does not
		// wait), answered after: the version is in force by now.
		w.ex.Version = r.version
	}
	if w.quiet && o.Note == "" {
		o.Note = "a reply to a notification"
	}
	o.Completes, o.Answers = true, w.seq
	// The lines written while it waited and the response are its reply,
	// bounded as check's transport bounds one: past the bound it is not
	// whole, and cannot be judged (the judge says so: an error).
	over := o.Oversized || w.over || !w.quiet && !r.roomLocked(w, int64(len(o.Raw)))
	delete(r.guessed, w)
	w.ex.Response = &envelope.Response{Messages: append(w.besides, o.Raw), Truncated: over, Unsent: w.unsent}
	r.offeredLocked(w)
	// Answered, it is active no more (unless its task lives on).
	r.closeOfferLocked(w.seq, lives(w, o))
	if w.ambiguous {
		// The client's fault (two requests, one id): judging the reply as
		// this request's would blame the server for it.
		w.ex.Failure = "its id was the id of an earlier request still waiting: the reply cannot be attributed"
	}
	p := &Pair{Asker: ClientToServer, Exchange: w.ex, Method: w.method, Sent: w.sent, Done: o.Time,
		RequestSeq: w.seq, ReplySeq: o.Seq, Oversized: w.oversized || over}
	// Its pair follows now, or when its look ends (Later).
	o.Later = !w.quiet && !lives(w, o) && r.lookLocked(w, p)
	evs := []event{obsEvent(o)}
	if !o.Later {
		evs = append(evs, pairEvent(p))
	}
	if !w.quiet {
		// The server has answered a later message: notifications sent
		// before it had their turn and got no reply, as they should.
		var passed []*waiting
		for _, n := range r.client.list {
			if n.quiet && n.seq < w.seq {
				passed = append(passed, n)
			}
		}
		for _, n := range passed {
			r.client.take(n)
			evs = append(evs, pairEvent(&Pair{Asker: ClientToServer, Exchange: n.ex, Method: n.method, Sent: n.sent, Done: o.Time, RequestSeq: n.seq}))
		}
		r.answeredLocked(w, o)
		evs = append(evs, r.aliveLocked(w.seq, o.Time)...)
	}
	r.q.put(evs...)
}

// maxBesides bounds the server's messages kept for one client request
// (as the transport's MaxEvents bounds the lines of one exchange).
const maxBesides = 1000

// besidesLocked keeps a notification or request of the server's with the
// client's request it concerns: a progress notification with the request
// that offered its token, anything else with the latest request waiting
// for a reply. On one pipe nothing says which request the server meant;
// the checks know that on stdio another request may be in flight, and
// judge only what holds whichever it was. With none waiting, it concerns
// no request of the client's and is only observed; besidesLocked then
// returns false.
//
// Only what surely is a request's counts toward its bound: progress that
// names its token, and anything while it is the only request waiting (as
// check's transport reads every line into the one exchange open). A line
// given to the latest of several by guess that does not fit is dropped
// from its reply (relayed as always), and never makes that reply
// unjudgeable: it may well be another request's.
func (r *stdioRelay) besidesLocked(o *Observation) bool {
	if o.Raw == nil && !o.Oversized {
		return true // nothing to keep
	}
	var w *waiting
	token := gjson.GetBytes(o.Raw, "params.progressToken")
	progress := o.Method == "notifications/progress" && token.Exists()
	sure, n := false, 0
	for _, c := range r.client.list {
		if c.quiet || c.oversized {
			continue
		}
		n++
		if !sure && progress && envelope.SameToken(gjson.GetBytes(c.ex.Request.Body, "params._meta.progressToken"), token) {
			w, sure = c, true
		}
		if !sure && (w == nil || c.seq > w.seq) {
			w = c
		}
	}
	if !sure && progress && r.lateLocked(o, token) {
		// Its request was answered a moment ago: it is that one's.
		return true
	}
	if w == nil {
		if progress && !o.Oversized && !r.unknown && !r.offeredNowLocked(token) {
			// No request active offered its token (its request was
			// answered before its look ended, or none offered it): it
			// names no request (T-PROG-1), and is judged so with the
			// next request's reply, which does not list the token.
			o.Note = "names no request active"
			r.holdLocked(o)
			return true
		}
		if r.eof != nil {
			// The client closed its end: what the server writes now
			// is the end of input's (see eof).
			r.eofKeepLocked(o, "")
			return true
		}
		// A line over the bound is not judged, waiting or not.
		return o.Oversized
	}
	if progress && !sure && !r.unknown && r.offeredNowLocked(token) && !slices.Contains(w.spoken, token.Raw) {
		// Named while its request was active: w's exchange lists it,
		// though that request may be answered by the time w is.
		w.spoken = append(w.spoken, token.Raw)
	}
	r.keepLocked(w, o.Raw, o.Oversized, sure || n == 1, "")
	return true
}

// keepLocked adds line to w's reply, sure to be w's or given to it by
// guess (see besidesLocked); unsent is the id of a response to no request
// sent (see unsentLocked). A sure line that cannot fit within the bound,
// even with every guessed one dropped, puts the reply over it: it
// exceeds what check reads of one, and cannot be judged (kept, the rest
// would be judged as if whole). A guessed one that does not fit is
// dropped. It reports whether line was kept.
func (r *stdioRelay) keepLocked(w *waiting, line []byte, oversized, sure bool, unsent string) bool {
	switch {
	case !sure && (oversized || w.besidesSize+int64(len(line)) > r.lim.MaxBytes):
		return false
	case oversized || !r.roomLocked(w, int64(len(line))):
		w.over = true
		return false
	case len(w.besides) >= maxBesides:
		return false
	}
	if g, ok := r.guessed[w]; ok || !sure {
		if !ok {
			g = make([]bool, len(w.besides))
		}
		if r.guessed == nil {
			r.guessed = map[*waiting][]bool{}
		}
		r.guessed[w] = append(g, !sure)
	}
	w.besides = append(w.besides, line)
	w.besidesSize += int64(len(line))
	if unsent != "" {
		w.unsent = append(w.unsent, unsent)
	}
	return true
}

// roomLocked makes room in w's reply for n more bytes that surely are
// its own, by dropping the lines given to it by guess, the latest
// first. It reports false when what is surely its own does not fit.
func (r *stdioRelay) roomLocked(w *waiting, n int64) bool {
	g := r.guessed[w]
	for i := len(g) - 1; i >= 0 && w.besidesSize+n > r.lim.MaxBytes; i-- {
		if !g[i] {
			continue
		}
		line := w.besides[i]
		w.besides = slices.Delete(w.besides, i, i+1)
		g = slices.Delete(g, i, i+1)
		w.besidesSize -= int64(len(line))
		if v := gjson.ParseBytes(line); !v.Get("method").Exists() {
			if k := slices.Index(w.unsent, envelope.Compact(v.Get("id").Raw)); k >= 0 {
				w.unsent = slices.Delete(w.unsent, k, k+1)
				if len(w.unsent) == 0 {
					w.unsent = nil
				}
			}
		}
	}
	if g != nil {
		r.guessed[w] = g
	}
	return w.besidesSize+n <= r.lim.MaxBytes
}

// holdLocked keeps a line that is no JSON-RPC message (or progress that
// names no request active), written while no request waited, for the
// next request's reply (see held): judged there, as check judges a
// startup banner (T-STDIO-2), within the bounds of what is kept for one
// request.
func (r *stdioRelay) holdLocked(o *Observation) {
	if r.eof != nil {
		r.eofKeepLocked(o, "")
		return
	}
	if len(r.held) >= maxBesides || r.heldSize+int64(len(o.Raw)) > r.lim.MaxBytes {
		return
	}
	r.held = append(r.held, o.Raw)
	r.heldSize += int64(len(o.Raw))
	o.Note += " (judged with the next request's reply, or with the end of input if none comes)"
}

// finish closes every exchange still open at the end of the session.
func (r *stdioRelay) finish(why, died string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
	var evs []event
	// The answered requests held for their look are paired first, in
	// the order they were answered.
	for _, l := range r.looks {
		evs = append(evs, pairEvent(l.p))
	}
	r.looks = nil
	open := r.client.drain()
	requests := 0
	for _, w := range open {
		if !w.quiet {
			requests++
		}
	}
	for _, w := range open {
		if w.quiet {
			// Its quiet time was cut short, but nothing answered it.
			evs = append(evs, pairEvent(&Pair{Asker: ClientToServer, Exchange: w.ex, Method: w.method, Sent: w.sent, Done: r.now(), RequestSeq: w.seq}))
			continue
		}
		if died != "" && requests == 1 {
			w.ex.Died = died
		}
		evs = append(evs, r.endLocked(w, why))
	}
	// The end of input follows the requests sent before it, as check
	// judges it after its last fixture.
	evs = append(evs, r.eofPairLocked(r.now())...)
	for _, w := range r.server.drainOwed() {
		evs = append(evs, r.failLocked(ServerToClient, w, "the client never answered before the session ended"))
	}
	for _, e := range evs {
		r.q.put(e)
	}
}

// copyAll copies src to dst until src ends; a dst that fails is given
// up, and src is drained so that the server never blocks on it.
func copyAll(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && dst != nil {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				dst = nil
			}
		}
		if err != nil {
			return
		}
	}
}

// forwardSignals passes each signal on to the server's process group
// until stop closes, and closes again at the second.
func forwardSignals(sigs <-chan os.Signal, p *process, stop <-chan struct{}, again chan<- struct{}, forwarded *atomic.Int32) {
	if sigs == nil {
		return
	}
	for n := 1; ; n++ {
		select {
		case sig := <-sigs:
			if s, ok := sig.(syscall.Signal); ok {
				forwarded.Add(1)
				p.signal(s)
			}
			if n == 2 {
				close(again)
			}
		case <-stop:
			return
		}
	}
}

// exitStatus reads how a process ended, the way a shell reports it.
func exitStatus(err error) (int, string) {
	if err == nil {
		return 0, "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), ee.String()
		}
		return ee.ExitCode(), ee.String()
	}
	return 1, err.Error()
}
