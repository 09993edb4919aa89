package runner

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/transport"
)

// StdioTarget is a server process spoken to over stdio. When it dies,
// Restart starts a new one from the same command.
type StdioTarget struct {
	argv []string
	lim  transport.Limits
	mu   sync.Mutex
	p    *transport.Stdio
	// aside is shared by a target and its siblings (the staged fixtures'
	// processes). A server that allows one instance at a time (a lock,
	// a port) dies at a start beside another: a sibling's death is sent
	// again alone (see run.multiplexed); the pipe's own restart waits for
	// the siblings to end, and a sibling's start for the pipe's process
	// to be up, so that the pipe's is not the one that dies.
	aside   *aside
	sibling bool
	holds   bool // a sibling holds aside.mu
}

// An aside is what a target shares with its siblings: a sibling holds mu
// shared from its first start to its Close, and the target takes it to
// start a process; main is the target's process.
type aside struct {
	mu    sync.RWMutex
	mainM sync.Mutex
	main  *transport.Stdio
	// hurry is closed once the run is out of time (see hurryAt).
	hurry     chan struct{}
	hurryOnce sync.Once
}

// hurryAt makes the target's closes, and its siblings', short once the
// run's deadline (from now) passes or ctx (the caller's: an interrupt)
// ends: a server that ignores its stdin's end and SIGTERM held the
// reports back two grace periods a process, one process after another,
// past --deadline.
func (t *StdioTarget) hurryAt(ctx context.Context, deadline time.Duration) {
	a := t.aside
	hurry := func() { a.hurryOnce.Do(func() { close(a.hurry) }) }
	context.AfterFunc(ctx, hurry)
	if deadline > 0 {
		time.AfterFunc(deadline, hurry)
	}
}

// mainUp waits until the target's process has read its first message (or
// never will), or ctx ends.
func (a *aside) mainUp(ctx context.Context) {
	a.mainM.Lock()
	p := a.main
	a.mainM.Unlock()
	if p == nil {
		return
	}
	select {
	case <-p.Ready():
	case <-ctx.Done():
	}
}

// StartStdio starts the server. An error means it could not start at all.
func StartStdio(ctx context.Context, argv []string, lim transport.Limits) (*StdioTarget, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: no command to start", ErrNotDriven)
	}
	a := &aside{hurry: make(chan struct{})}
	lim.Hurry = a.hurry // every process of the target and its siblings
	t := &StdioTarget{argv: argv, lim: lim, aside: a}
	if err := t.Restart(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *StdioTarget) Transport() string { return envelope.Stdio }

func (t *StdioTarget) Conn() Conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	return stdioConn{t.p}
}

// Died reports an exited process with its status and stderr tail, or
// one that closed its stdout and lives on.
func (t *StdioTarget) Died() (bool, string) {
	t.mu.Lock()
	p := t.p
	t.mu.Unlock()
	if p == nil {
		return false, "" // a sibling not started yet
	}
	exited, err := p.Exited()
	if !exited && p.Mute() {
		// Closed its stdout and lives on: no later request can be
		// answered, as after an exit.
		return true, "the server closed its stdout but is still running"
	}
	if !exited {
		return false, ""
	}
	status := "exit status 0"
	if err != nil {
		status = err.Error()
	}
	tail := strings.TrimSpace(string(p.Stderr()))
	if len(tail) > 400 {
		tail = "…" + tail[len(tail)-400:]
	}
	if tail == "" {
		return true, status + "; stderr empty"
	}
	return true, fmt.Sprintf("%s; stderr tail: %q", status, tail)
}

// unpromptedWait is the least time a process started for
// exitsUnprompted is given to exit with no input: a server that cannot
// start (a lock, a port, a start-up failure) goes in that time, or in
// twice the time the process that died lived, whichever is longer (a
// server behind npx or a container refuses its start after it has
// started: review rev85, a refusal after 1.5 s failed PRO1005); one
// that stays up past it is held to the deaths of the messages it reads.
const unpromptedWait = time.Second

// exitsUnprompted starts a process of the target's command, writes it
// nothing, and says how it exited if it did within its wait (see
// unpromptedWait): a
// server that does not stay up with no input at all, whose death on a
// message is not known to be the message's (review rev62: a staged
// fixture's process that exited before reading was failed PRO1005).
// A sibling's target says nothing: another instance runs beside it, and
// a server that allows one at a time exits of that.
func (t *StdioTarget) exitsUnprompted(ctx context.Context) (string, bool) {
	if t.sibling || ctx.Err() != nil {
		return "", false
	}
	wait := unpromptedWait
	if dead := t.proc(); dead != nil {
		// Its life as seen now, from its start to just after its death
		// was noted. (Bounded by the exchange's own: a process that
		// lived longer read its message.)
		wait = max(wait, min(2*time.Since(dead.Started()), t.lim.Timeout))
	}
	p, err := transport.StartStdio(context.WithoutCancel(ctx), t.argv, nil, "", t.lim)
	if err != nil {
		return "", false
	}
	defer p.Close()
	stop := time.NewTimer(wait)
	defer stop.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if exited, err := p.Exited(); exited {
			if err == nil {
				return "exit status 0", true
			}
			return err.Error(), true
		}
		select {
		case <-tick.C:
		case <-stop.C:
			return "", false
		case <-ctx.Done():
			return "", false
		}
	}
}

// sibling is a target for the same command with no process yet: its
// first Restart starts one.
func (t *StdioTarget) newSibling() *StdioTarget {
	return &StdioTarget{argv: t.argv, lim: t.lim, aside: t.aside, sibling: true}
}

// Restart shuts down the current process, if any, and starts a new one.
func (t *StdioTarget) Restart(ctx context.Context) error {
	if ctx.Err() != nil {
		// Past the run's deadline no server is started: each start, and
		// the close of the one before, costs seconds the run no longer
		// has (a server that ignores SIGTERM holds its close for two
		// grace periods).
		return fmt.Errorf("not restarted: %v", context.Cause(ctx))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.sibling && !t.holds:
		t.aside.mu.RLock()
		t.holds = true
		t.aside.mainUp(ctx)
	case !t.sibling:
		t.aside.mu.Lock()
		defer t.aside.mu.Unlock()
	}
	if t.p != nil {
		t.p.Close()
		// The close may have waited out grace periods: the deadline can
		// have passed meanwhile.
		if ctx.Err() != nil {
			return fmt.Errorf("not restarted: %v", context.Cause(ctx))
		}
	}
	// The process outlives the request context of a single fixture: it is
	// ended by Close, not by a context.
	p, err := transport.StartStdio(context.WithoutCancel(ctx), t.argv, nil, "", t.lim)
	if err != nil {
		return fmt.Errorf("%w: starting %s: %v", ErrNotDriven, t.argv[0], err)
	}
	t.p = p
	if !t.sibling {
		t.aside.mainM.Lock()
		t.aside.main = p
		t.aside.mainM.Unlock()
	}
	return nil
}

// Close shuts the server down as the spec says: close stdin, wait,
// SIGTERM, SIGKILL.
func (t *StdioTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer func() {
		if t.holds {
			t.aside.mu.RUnlock()
			t.holds = false
		}
	}()
	if t.p == nil {
		return nil
	}
	return t.p.Close()
}

// EndInput ends the current process's input and reads what follows (see
// transport.Stdio.EndInput); ok is false when there is no process to end.
func (t *StdioTarget) EndInput(ctx context.Context) (ex envelope.Exchange, ok bool) {
	p := t.proc()
	if p == nil {
		return ex, false
	}
	return p.EndInput(ctx)
}

type stdioConn struct{ p *transport.Stdio }

func (c stdioConn) Do(ctx context.Context, req envelope.Request, wantReply bool) envelope.Exchange {
	return c.p.Do(ctx, req, wantReply)
}

// StderrTail is the end of what the current server process wrote to
// stderr (at most n bytes), for the report: servers log there, and the
// spec lets them (T-STDIO-3), so it is information, not a verdict.
func (t *StdioTarget) StderrTail(n int) string {
	t.mu.Lock()
	p := t.p
	t.mu.Unlock()
	if p == nil {
		return ""
	}
	b := p.Stderr()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// proc is the current server process.
func (t *StdioTarget) proc() *transport.Stdio {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.p
}

// A mux sends a stdio run's fixtures over the one pipe without waiting
// out each request's silence. After each request it writes a marker (a
// ping, or server/discover in 2026-07-28, with an id of its own): what
// the server writes before the marker's reply belongs to the request,
// the first response-shaped line being its response, as a stdio server
// answers its input in order. A request the marker overtook is pending:
// its --timeout window goes on while the next fixtures run, and all the
// windows are judged together at the end, with one liveness probe for
// every request left unanswered.
//
// A response whose id names one pending request (every request of a run
// has an id of its own), come within that request's window, is its reply
// wherever it arrives. Where a line could misattribute, the exchange is
// sent again at the end, to a fresh process (its id is spent on the
// first): alone after a response-shaped line that arrives outside any
// open exchange (a late reply) and could belong to a pending request;
// beside the others first after a death of the server while requests
// were pending (any of them may have caused it: see resend). A line that arrives between exchanges follows the exchange
// before it: it cannot belong to a request not yet written.
type mux struct {
	r       *run
	pending []*pend
	// markers are the id keys of every marker written: a late reply to
	// one is dropped wherever it arrives.
	markers map[string]bool
	// last is the exchange lines between exchanges follow, lastProc the
	// process it went to, exProc that of the exchange last opened.
	last             *envelope.Exchange
	lastProc, exProc *transport.Stdio
	// early are second responses to requests of the transport's own
	// exchanges (see Stdio.Second) that came on a process before any
	// buffered exchange of its own: the next exchange on it takes them,
	// known so, as a run in sequence has them among the lines waiting
	// before a request.
	early []early
	// sent counts the requests written to proc by id key: a reply whose
	// id was sent once names its request for sure (every request of a
	// run has an id of its own, but a user's fixtures may write one out).
	sent map[string]int
	// owner is the exchange that took its response, by the id key of
	// its request (one written once to proc): another response naming
	// that key, wherever it arrives, is a second response to it, judged
	// there (RPC1006), and no reply of the exchange open when it came.
	owner map[string]*envelope.Exchange
	proc  *transport.Stdio
	// rtt is how long the last exchange whose marker was answered took
	// from its send to the marker's reply: a server's pace, which sets
	// how soon a marker is nudged (see exchange).
	rtt time.Duration
	// order is the place each id key (a request's, a marker's) was
	// written to proc in, seq the last place given.
	order map[string]int
	seq   int
	// resending: the ambiguous requests are being sent again (resend);
	// what is ambiguous once more goes alone.
	resending bool
	// lastPend is the last exchange buffered (m.last), ready to be
	// pending; doubts are the notifications the exchange now open met
	// that requests open beside it may own, and landed the exchanges
	// such notifications landed in (see doubt).
	lastPend *pend
	doubts   []*doubtSet
	landed   []*pend
}

// A doubtSet is one notification that named no request (line), come
// while requests were open beside the exchange it landed in: any of
// them may own it. answered are those of them the server answered, so
// at work. When there are any, and the exchange it landed in is judged
// otherwise with it than without it, they go again alone (resolve),
// where it lands beside its cause as in a run in sequence; so does the
// exchange it landed in, when the server answered it. One left silent
// does not go again (sending it again would wait its silence out once
// more): it is judged without the line when a request that may own it
// has the line again, alone (unland), and with it when none has. Else
// the line stays where it landed: a request left silent is judged
// silent, and a line judged alike wherever it lands (a log line of a
// server that declared logging) costs nothing to leave.
type doubtSet struct {
	line     []byte
	answered []*pend
	// inside: it came within the exchange it landed in (not after it,
	// following it), so that exchange's silence counts it (see
	// pend.lines).
	inside bool
}

// An early line is a second response come on p before an exchange of
// its own (see mux.early).
type early struct {
	p    *transport.Stdio
	data []byte
}

// takeEarly takes the early lines of p, and drops those of processes
// gone.
func (m *mux) takeEarly(p *transport.Stdio) [][]byte {
	var out [][]byte
	for _, e := range m.early {
		if e.p == p {
			out = append(out, e.data)
		}
	}
	m.early = nil
	return out
}

// A pend is a request whose window was still open when the run went on.
type pend struct {
	name string
	req  envelope.Request
	keys []string
	// deadline is when its silence is judged: --timeout after the
	// later of its send and the last response the server wrote while it
	// was pending (see heard).
	deadline time.Time
	heard    int // the responses that pushed deadline back
	seq      int // its place in the order messages were written in
	exp      *expect.Expectation
	o        *expect.Override
	ex       *envelope.Exchange // as buffered, judged at the end
	buf      *buffer
	at       int // its event in buf
	// ambiguous: a stray line could be its reply, or the server died
	// while it was pending: it is sent again (see settle).
	ambiguous bool
	// voided: the server died, or was started again, while it was
	// pending; stalled: the server stopped answering anything while it
	// was. A request only voided goes again beside the others (resend);
	// one stalled goes alone: side by side, each would wait for a
	// server that hangs again.
	voided, stalled bool
	// notification: it is a notification, sent again alone because an
	// id-less line it got may have been a pending request's.
	notification bool
	// doubts are the notifications that named no request and came
	// while it was open, beside another exchange; landed, those that
	// came in its own exchange (see doubtSet); moved, those of landed
	// that its request, left silent, is judged without if a request
	// that may own them has them again, alone (see unland).
	doubts, landed, moved []*doubtSet
	// invalid are lines that are no JSON, which may have been its reply
	// (see flag).
	invalid [][]byte
	// lines are the lines its silence counted when it went pending
	// (see transport.NoResponse), timeout the window it was given.
	lines   int
	timeout time.Duration
}

// markerMethod is the method of markerBody's request.
func markerMethod(r *run) string { return envelope.LivenessMethod(r.sess.version) }

// markerBody is a request every server of the version answers at once.
// Its id, as the liveness probe's, is an integer of the runner's own
// count: every server reads one, where some choke on a string id (die
// or hang on it), and a marker that kills the server would pin its
// death on the fixture it follows.
func (r *run) markerBody(id int) []byte {
	return envelope.LivenessBody(r.sess.version, strconv.AppendInt(nil, int64(id), 10))
}

// responseKey is the id key of a response-shaped line ("?" when it has
// no readable id); ok false when the line is no response. A batch that
// holds one response (2025-03-26 lets a server answer inside one,
// T-V0326-1) has that response's key: the batch is its request's reply,
// judged as such.
func responseKey(line []byte) (string, bool) {
	if !envelope.IsResponse(line) {
		return "", false
	}
	m := envelope.Parse(line)
	if m.IsArray() {
		var one gjson.Result
		n := 0
		m.Root().ForEach(func(_, e gjson.Result) bool {
			if !e.IsObject() || !e.Get("method").Exists() {
				one, n = e, n+1
			}
			return n < 2
		})
		if n == 1 && one.IsObject() {
			if k := envelope.IDKey(one.Get("id")); k != "" {
				return k, true
			}
		}
		return unreadableID, true
	}
	if !m.IsObject() {
		return unreadableID, true
	}
	if k := envelope.IDKey(m.Get("id")); k != "" {
		return k, true
	}
	return unreadableID, true
}

// marker reports whether a line is the reply to a marker still owed
// one, and takes that marker off the list: a later line with its id (a
// server that answers a notification with the last id it read) is no
// marker's reply (the same reply again is dropped before: see repeated).
func (m *mux) marker(data []byte) bool {
	k, ok := responseKey(data)
	if !ok {
		return false
	}
	if !m.markers[k] {
		return false
	}
	m.markerAnswered(k, data)
	return true
}

// markerAnswered takes a marker off the list of those owed a reply, and
// keeps its reply.
func (m *mux) markerAnswered(k string, data []byte) {
	delete(m.markers, k)
	m.r.took(k, data)
}

// maxReplies bounds the responses a run keeps to know them again.
const maxReplies = 4096

// took keeps the response data an exchange took, under its id key k.
func (r *run) took(k string, data []byte) {
	if k == unreadableID {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.replies == nil || len(r.replies) >= maxReplies {
		r.replies = map[string]string{}
	}
	r.replies[k] = string(data)
	// Its offer asks nothing more. An exchange of a multiplexed run
	// knows what was offered when it ended, so one this request's
	// window overlapped still counts it (review rev84: in a multiplexed
	// run every level ever asked stayed the pipe's, and a log message no
	// request asked for only warned for the rest of the run).
	r.answeredLocked(k)
}

// repeated reports whether a line repeats a response an exchange took:
// a server that answers twice.
func (r *run) repeated(data []byte) bool {
	k, ok := responseKey(data)
	if !ok || k == unreadableID {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, seen := r.replies[k]
	return seen && prev == string(data)
}

// stray handles a response-shaped line or notification that arrived
// outside any open exchange: it follows the last exchange, and flags the
// pending requests whose late reply it could be.
func (m *mux) stray(p *transport.Stdio, data []byte) {
	m.heard(data)
	if p == m.proc && m.secondReply(data) {
		// (A process started since the last request was written knows
		// none of the owners, which are the process before's.)
		return
	}
	// A second response to a request of the transport's own exchanges,
	// the same again or another (see secondID), is judged where it
	// lands, as in a run in sequence: it answers no marker or pending
	// request.
	second, copy := secondID(p, data)
	if second == "" && (m.repeat(data) || m.marker(data) || m.answer(data) || m.progress(data) || m.flag(data)) {
		// A marker's reply, a pending request's reply, or a line that
		// may be one (that request is sent again alone): no part of
		// another exchange.
		return
	}
	if second == "" && p.TakeIfLate(data) {
		// A late reply to a request of the transport's own that timed out
		// (a setup listing, say): its id names that request, so the last
		// exchange must not take it for its reply (review rev82); the
		// next exchange notes it (keepLate).
		return
	}
	if second != "" && (m.last == nil || m.lastProc != p) {
		// A second response to a request of the transport's own
		// exchanges (the negotiation's, a probe's) on a process no
		// buffered exchange went to yet: the next exchange on it takes
		// it, as in a run in sequence (see early).
		if len(m.early) < p.Limits().MaxEvents {
			m.early = append(m.early, early{p, data})
		}
		return
	}
	if lp := m.lastPend; m.last != nil && m.lastProc == p && lp != nil {
		if d := m.doubt(data, lp); d != nil {
			m.land(lp, d)
		}
	}
	if m.last != nil && m.attach(m.last, data) {
		if u := unsentID(p, data); u != "" {
			m.last.Response.Unsent = append(m.last.Response.Unsent, u)
		}
		if second != "" {
			noteSecond(m.last.Response, second, copy)
		}
	}
}

// attach adds a line to a buffered exchange's, within the exchange's
// bound of lines and twice its bound of bytes (room for a second
// response beside a reply at the bound), and says whether it did: a
// server repeating lines without end must not grow the run.
func (m *mux) attach(ex *envelope.Exchange, data []byte) bool {
	if m.proc == nil {
		return false
	}
	if ex.Response == nil {
		ex.Response = &envelope.Response{}
	}
	lim := m.proc.Limits()
	size := int64(len(data))
	for _, d := range ex.Response.Messages {
		size += int64(len(d))
	}
	if len(ex.Response.Messages) >= lim.MaxEvents || size > 2*lim.MaxBytes {
		return false
	}
	ex.Response.Messages = append(ex.Response.Messages, data)
	return true
}

// repeat reports whether a line repeats a response an exchange took
// (see repeated) while no pending request was written with its id: a
// user's fixtures may write an id twice, and the later request's reply
// may be alike to the earlier one's (the same error to two methods).
// Such a line is left to answer (the id written once on this process:
// the pending request's reply) or to flag (written twice: either's, and
// that request goes again, alone).
func (m *mux) repeat(data []byte) bool {
	if !m.r.repeated(data) {
		return false
	}
	k, _ := responseKey(data)
	return !slices.ContainsFunc(m.pending, func(p *pend) bool { return slices.Contains(p.keys, k) })
}

// ownedSecond is the id (compacted) of a response line on p naming a
// multiplexed request that took its response (see owner), and whether it
// repeats that response byte for byte; "" when it names none.
func (m *mux) ownedSecond(p *transport.Stdio, data []byte) (id string, copy bool) {
	k, ok := responseKey(data)
	if p != m.proc || !ok || k == unreadableID || m.owner[k] == nil {
		return "", false
	}
	return envelope.Compact(gjson.GetBytes(data, "id").Raw), m.r.repeated(data)
}

// secondReply gives a response that names an answered request (see owner) to
// that request's exchange, and says whether it did.
func (m *mux) secondReply(data []byte) bool {
	k, ok := responseKey(data)
	if !ok || k == unreadableID {
		return false
	}
	ex := m.owner[k]
	if ex == nil {
		return false
	}
	m.attach(ex, data)
	return true
}

// own notes ex, buffered, as the owner of the keys of its request that
// its lines answer (see owner).
func (m *mux) own(ex *envelope.Exchange, keys []string) {
	if ex.Response == nil || m.owner == nil {
		return
	}
	for _, d := range ex.Response.Messages {
		if k, ok := responseKey(d); ok && k != unreadableID && slices.Contains(keys, k) && m.sent[k] == 1 {
			m.owner[k] = ex
		}
	}
}

// unsentID is the id (compacted) of a response line that names no
// request written to p; "" when it names one, or that is not known.
func unsentID(p *transport.Stdio, data []byte) string {
	if p == nil || !p.Unsent(data) {
		return ""
	}
	return envelope.Compact(gjson.GetBytes(data, "id").Raw)
}

// secondID is the id (compacted) of a response line that the transport
// knows for a second response to a request of its own exchanges (see
// Stdio.Second), and whether it repeats the first byte for byte; ""
// when it is not one.
func secondID(p *transport.Stdio, data []byte) (id string, copy bool) {
	if p == nil {
		return "", false
	}
	second, copy := p.Second(data)
	if !second {
		return "", false
	}
	return envelope.Compact(gjson.GetBytes(data, "id").Raw), copy
}

// secondOf reports whether the transport knows a response line for a
// second response (see Stdio.Second).
func secondOf(p *transport.Stdio, data []byte) bool {
	second, _ := p.Second(data)
	return second
}

// noteSecond lists id on resp as a second response's: among Copies when
// it repeats the first byte for byte, else among Again.
func noteSecond(resp *envelope.Response, id string, copy bool) {
	if copy {
		resp.Copies = append(resp.Copies, id)
	} else {
		resp.Again = append(resp.Again, id)
	}
}

// late reports whether a line read for a notification is a late reply
// to a marker or to a pending request (its id names one), flagging that
// request to be sent again alone, or a pending request's progress. A reply with no readable id stays the
// notification's: it is what a server answering a notification sends
// (see exchange for one that a pending request may own as well).
func (m *mux) late(data []byte) bool {
	if m.repeat(data) || m.marker(data) || m.progress(data) {
		return true
	}
	k, ok := responseKey(data)
	if !ok || k == unreadableID {
		return false
	}
	return m.answer(data) || m.flag(data)
}

// owesIDless reports whether a pending request can be answered only
// without an id: its own id could not be read. (One already to be sent
// again counts too: its late reply may still come.)
func (m *mux) owesIDless() bool {
	return slices.ContainsFunc(m.pending, func(p *pend) bool { return slices.Contains(p.keys, unreadableID) })
}

// count notes the id keys of a request written to p.
func (m *mux) count(p *transport.Stdio, keys []string) int {
	if p != m.proc {
		m.sent, m.proc, m.order, m.owner = map[string]int{}, p, map[string]int{}, map[string]*envelope.Exchange{}
	}
	for _, k := range keys {
		m.sent[k]++
		if m.sent[k] > 1 {
			// Written again (a user's fixtures may reuse an id): a
			// response naming it no longer names one request for sure.
			delete(m.owner, k)
		}
	}
	return m.queued(keys...)
}

// queued gives the messages with the id keys the next place in the
// order they were written to the process in (see heard).
func (m *mux) queued(keys ...string) int {
	if m.order == nil {
		m.order = map[string]int{}
	}
	m.seq++
	for _, k := range keys {
		if k != unreadableID {
			m.order[k] = m.seq
		}
	}
	return m.seq
}

// ahead reports whether a response answers a message written before the
// one at place seq: progress through the queue ahead of it.
func (m *mux) ahead(data []byte, seq int) bool {
	k, ok := responseKey(data)
	if !ok || m.r.repeated(data) {
		return false
	}
	at, ok := m.order[k]
	return ok && at < seq
}

// answer gives a pending request the reply that names it: a response
// with the id only that request was sent with on this process, whenever
// it comes (an id that names a request identifies its reply even after
// its timeout; one past its silence window is noted so). Taken as the
// reply of whatever exchange was open, it would fail that one and leave
// its own silent. A reply whose id more than one request was sent with
// is left to flag; one to a request that goes again alone is dropped (it
// is no other exchange's).
func (m *mux) answer(data []byte) bool {
	k, ok := responseKey(data)
	if !ok || k == unreadableID || m.sent[k] != 1 || m.proc != m.r.t.(*StdioTarget).proc() {
		return false
	}
	now := time.Now()
	for i, p := range m.pending {
		if !slices.Contains(p.keys, k) {
			continue
		}
		if p.ambiguous {
			// It goes again, alone: its reply here, named by its id, is
			// no other exchange's.
			return true
		}
		for _, d := range p.doubts {
			d.answered = append(d.answered, p)
		}
		if now.After(p.deadline) {
			// Its response is its own, not a later exchange's; but it
			// came past --timeout, and silence within --timeout is the
			// finding (DESIGN, Silence is a finding), as in a run in
			// sequence (lateReply): the note says it came.
			p.ex.Note = envelope.JoinNotes(p.ex.Failure+"; its response came later (so the server is alive, and slower than --timeout)", p.ex.Note)
		} else {
			if p.ex.Response == nil {
				p.ex.Response = &envelope.Response{}
			}
			p.ex.Response.Messages = append(p.ex.Response.Messages, data)
		}
		p.ex.Failure, p.ex.Unanswered = "", false
		m.pending = slices.Delete(m.pending, i, i+1)
		m.r.took(k, data)
		if m.owner != nil {
			m.owner[k] = p.ex
		}
		return true
	}
	return false
}

// progress gives a pending request a progress notification that names
// the token it offered: it is that request's wherever it arrives, as its
// reply is (a run in sequence reads it in the request's own exchange).
// Progress for any other token stays where it arrives.
func (m *mux) progress(data []byte) bool {
	if gjson.GetBytes(data, "method").Str != "notifications/progress" {
		return false
	}
	tok := gjson.GetBytes(data, "params.progressToken")
	if !tok.Exists() {
		return false
	}
	for _, p := range m.pending {
		if p.ambiguous || p.notification || p.ex == nil || !envelope.SameToken(gjson.GetBytes(p.req.Body, "params._meta.progressToken"), tok) {
			continue
		}
		// (A flood stays where it arrives, within that exchange's bound.)
		return m.attach(p.ex, data)
	}
	return false
}

// doubt notes the pending requests a notification could belong to,
// when it names none of its own (see ownNotification) of the request of
// at, the exchange it landed in (the one open, or the one it follows),
// and returns the doubt (nil when there is none). A server working on
// several requests writes what it says of any of them on the one pipe:
// one that names no request (progress with a null token, a log line, a
// list change) lands in whichever exchange is open, so which fixture a
// finding on it failed varied from run to run. Each request it may be
// from that is answered goes again alone, with the exchange it landed
// in, where it lands beside its cause, as in a run in sequence.
func (m *mux) doubt(data []byte, at *pend) *doubtSet {
	if ownNotification(data, at.req.Body) {
		return nil
	}
	var d *doubtSet
	for _, p := range m.pending {
		if p != at && !p.notification && !p.ambiguous && p.ex != nil {
			if d == nil {
				d = &doubtSet{line: data}
			}
			p.doubts = append(p.doubts, d)
		}
	}
	return d
}

// land notes that the exchange of p took a notification in doubt d.
func (m *mux) land(p *pend, d *doubtSet) {
	if len(p.landed) == 0 {
		m.landed = append(m.landed, p)
	}
	p.landed = append(p.landed, d)
}

// resolve puts among the pending requests, to go again alone, each
// request a notification in doubt may be from that was answered, where
// the notification tells in the verdicts of the exchange it landed in
// (see doubtSet); and that exchange too, unless it is still pending, as
// the server left it silent so far. It returns those left so: each is
// judged without such lines that a request has again, alone (unland).
func (m *mux) resolve() []*pend {
	again := func(p *pend) {
		p.ambiguous = true
		if !slices.Contains(m.pending, p) {
			m.pending = append(m.pending, p)
		}
	}
	var silent []*pend
	for _, x := range m.landed {
		var lines [][]byte
		var answered []*pend
		var moved []*doubtSet
		for _, d := range x.landed {
			if len(d.answered) > 0 {
				lines, answered, moved = append(lines, d.line), append(answered, d.answered...), append(moved, d)
			}
		}
		if len(lines) == 0 || !m.tells(x, lines) {
			continue
		}
		for _, p := range answered {
			again(p)
		}
		switch {
		case !slices.Contains(m.pending, x):
			again(x)
		case !x.ambiguous:
			// Silent so far: it waits for the probe, not for its
			// silence once more.
			x.moved = moved
			silent = append(silent, x)
		}
	}
	m.landed = nil
	return silent
}

// unland judges each exchange of xs (see resolve) without the lines in
// doubt that a request they may be from had again when it went alone:
// they were that request's, as in a run in sequence. A line no such
// request had again stays where it landed. An exchange that went again
// itself (the server stopped answering) is left to its new try.
func (m *mux) unland(xs []*pend) {
	// had are the lines of each request's try alone not yet matched to
	// a line in doubt: one line again answers for one line in doubt.
	had := map[*pend][][]byte{}
	for _, x := range xs {
		if x.ambiguous || x.ex == nil || x.ex.Response == nil {
			continue
		}
		msgs := x.ex.Response.Messages
		inside := 0
		for _, d := range x.moved {
			i := slices.IndexFunc(msgs, func(b []byte) bool { return bytes.Equal(b, d.line) })
			if i < 0 {
				continue
			}
			owned := false
			for _, p := range d.answered {
				if _, ok := had[p]; !ok {
					had[p] = triedLines(p)
				}
				if j := slices.IndexFunc(had[p], func(b []byte) bool { return bytes.Equal(b, d.line) }); j >= 0 {
					had[p] = slices.Delete(had[p], j, j+1)
					owned = true
					break
				}
			}
			if !owned {
				continue
			}
			msgs = slices.Delete(slices.Clone(msgs), i, i+1)
			if d.inside {
				inside++
			}
		}
		x.moved = nil
		if len(msgs) == len(x.ex.Response.Messages) {
			continue
		}
		resp := *x.ex.Response
		resp.Messages = msgs
		x.ex.Response = &resp
		if len(msgs) == 0 && !resp.Truncated && len(resp.Again)+len(resp.Copies)+len(resp.Unsent) == 0 {
			x.ex.Response = nil // nothing of its own came, as the transport says it
		}
		if inside > 0 {
			// Its silence counted them: it is told without them.
			was, is := transport.NoResponse(x.timeout, x.lines), transport.NoResponse(x.timeout, x.lines-inside)
			if rest, ok := strings.CutPrefix(x.ex.Failure, was); ok {
				x.ex.Failure = is + rest
			}
			if rest, ok := strings.CutPrefix(x.ex.Note, was); ok {
				x.ex.Note = is + rest
			}
		}
	}
}

// triedLines are the lines the exchanges of p's try alone got (see
// again); none when it did not go again.
func triedLines(p *pend) [][]byte {
	ev := p.buf.events[p.at]
	if !ev.replaced {
		return [][]byte{}
	}
	var out [][]byte
	var walk func([]event)
	walk = func(evs []event) {
		for _, e := range evs {
			walk(e.before)
			walk(e.instead)
			if j := e.judged; j != nil && j.Exchange != nil && j.Exchange.Response != nil {
				out = append(out, j.Exchange.Response.Messages...)
			}
		}
	}
	walk(ev.instead)
	if out == nil {
		out = [][]byte{}
	}
	return out
}

// tells reports whether the exchange of x is judged otherwise with the
// lines than without them: only then does where they land change a
// verdict. (What cannot be judged so goes again, to be sure.) An
// exchange still pending is judged as the server's answer to a probe
// would leave it, alive: silent, its failure a note (see probe).
func (m *mux) tells(x *pend, lines [][]byte) bool {
	j := x.buf.events[x.at].judged
	if j == nil || j.Exchange == nil || j.Exchange.Response == nil || j.Expect == nil {
		return true
	}
	with := *j
	ex, resp := *j.Exchange, *j.Exchange.Response
	if slices.Contains(m.pending, x) {
		ex.Failure, ex.Unanswered = "", false
		answered := ex
		with.Exchange = &answered
	}
	resp.Messages = slices.DeleteFunc(slices.Clone(resp.Messages), func(d []byte) bool {
		return slices.ContainsFunc(lines, func(l []byte) bool { return bytes.Equal(l, d) })
	})
	ex.Response = &resp
	without := *j
	without.Exchange = &ex
	return !sameVerdicts(m.r.verdicts(&with), m.r.verdicts(&without))
}

// sameVerdicts: a and b give each check the same findings (a pass and
// a skip say nothing either way: a check with no line to judge skips).
func sameVerdicts(a, b []checks.Verdict) bool {
	clean := func(s checks.Status) bool { return s == checks.StatusPass || s == checks.StatusSkip }
	return slices.EqualFunc(a, b, func(x, y checks.Verdict) bool {
		return x.Check == y.Check && (x.Status == y.Status || clean(x.Status) && clean(y.Status)) && slices.Equal(x.Findings, y.Findings)
	})
}

// ownNotification reports whether data is no notification, or one that
// names the request req as its own: progress on the token it offered, a
// cancellation of it, or a tag with its id (a subscriptions/listen
// stream's); also one tagged for another listen stream, which its tag
// attributes wherever it lands.
func ownNotification(data, req []byte) bool {
	msg := gjson.ParseBytes(data)
	if !msg.IsObject() || msg.Get("id").Exists() || msg.Get("method").Type != gjson.String {
		return true
	}
	if msg.Get(envelope.JoinPath("params._meta", envelope.MetaSubscriptionID)).Exists() {
		return true
	}
	r := gjson.ParseBytes(req)
	switch msg.Get("method").Str {
	case "notifications/progress":
		return envelope.SameToken(r.Get("params._meta.progressToken"), msg.Get("params.progressToken"))
	case "notifications/cancelled":
		// (gjson reads what is absent as null: a notification sent
		// names no request of its own.)
		id := r.Get("id")
		return id.Exists() && msg.Get("params.requestId").Exists() && envelope.SameID(id, msg.Get("params.requestId"))
	}
	return false
}

// flag marks the pending requests a response-shaped line could answer,
// and says whether there were any. The line is then no exchange's, as
// it may be a reply that goes again; one that is no JSON at all (a cut
// or interleaved write) is kept by the first of them, whose try alone
// is judged with it: a try alone gives a clean reply, and the line was
// lost (review rev41).
func (m *mux) flag(data []byte) bool { return m.flagKeeping(data, true) }

// flagKeeping is flag; keep says the line is no exchange's yet (false
// where an exchange holds it already).
func (m *mux) flagKeeping(data []byte, keep bool) bool {
	k, ok := responseKey(data)
	if !ok {
		return false
	}
	any := false
	for _, p := range m.pending {
		if k == unreadableID || slices.Contains(p.keys, k) {
			if keep && !any && !gjson.ValidBytes(data) && len(p.invalid) < maxKeptInvalid {
				p.invalid = append(p.invalid, data)
			}
			p.ambiguous, any = true, true
		}
	}
	return any
}

// maxKeptInvalid bounds the lines that are no JSON a pending request
// keeps (see flag): a server writing them without end costs the bound.
const maxKeptInvalid = 8

// heard notes a line the server wrote. A response (not one it wrote
// before) to a message written ahead of a pending request is progress
// through the queue in front of that request, so its silence window
// starts again. A server that answers in order, slowly, works through a
// queue the checker itself filled (requests, markers): a request is not
// silent while the server answers the ones before it. Silence is the
// server's quiet on what stands ahead of a request, not the time since
// its send. A response to a message written after it (a server that
// handles messages side by side) pushes nothing back: the request was
// not waiting behind that one. Each pending request is pushed back at
// most MaxEvents times, so a server writing responses without end cannot
// keep a silence from being judged.
func (m *mux) heard(data []byte) {
	if m.proc == nil {
		return
	}
	lim := m.proc.Limits()
	until := time.Now().Add(lim.Timeout)
	for _, p := range m.pending {
		if p.heard < lim.MaxEvents && until.After(p.deadline) && m.ahead(data, p.seq) {
			p.heard++
			p.deadline = until
		}
	}
}

// drain takes the lines waiting before a request is written: they
// cannot belong to it.
func (m *mux) drain(ctx context.Context, p *transport.Stdio) {
	for range p.Limits().MaxEvents {
		data, _, what, _ := p.Receive(ctx, time.Now())
		if what != transport.Line {
			return
		}
		m.stray(p, data)
	}
}

// exchange sends one request of a fixture. It returns the exchange and,
// when the marker overtook the request, a pend to register once the
// exchange is buffered.
func (m *mux) exchange(ctx context.Context, l *lane, name string, req envelope.Request, wantReply bool) (envelope.Exchange, *pend, error) {
	r := m.r
	p := r.t.(*StdioTarget).proc()
	m.drain(ctx, p)
	m.exProc = p
	early := m.takeEarly(p) // lines of this exchange, come before it
	if !wantReply {
		// A notification waits its quiet moment, as in a run in
		// sequence: nothing may answer it, and a server that handles
		// messages side by side may answer it (wrongly) after it
		// answered a marker sent later, so a marker cannot end its
		// window (TestMultiplexedLateNotificationReply).
		ex := r.send(ctx, req, false)
		idless := false
		if ex.Response != nil {
			for _, d := range ex.Response.Messages {
				m.heard(d)
			}
			ex.Response.Messages = slices.DeleteFunc(ex.Response.Messages, func(d []byte) bool {
				if id, copy := m.ownedSecond(p, d); id != "" {
					// A second response to a multiplexed request, or
					// this notification's wrong answer naming it: on one
					// pipe nothing tells which, so it stays here, known
					// so, and RPC1007 says both, as in a run in sequence.
					noteSecond(ex.Response, id, copy)
					return false
				}
				if id, _ := secondID(p, d); id != "" {
					return false // the same, for a request of the transport's own exchanges (listed by it)
				}
				if m.late(d) {
					return true
				}
				// In the order the lines came: a request's reply after
				// it ends that request's claim.
				if dd := m.doubt(d, &pend{req: req}); dd != nil {
					m.doubts = append(m.doubts, dd)
				}
				return false
			})
			for _, d := range ex.Response.Messages {
				if k, ok := responseKey(d); ok && k == unreadableID && m.owesIDless() {
					// The notification's wrong answer, or the late reply
					// of a pending request that can only be answered
					// without an id: both go again, alone.
					idless = m.flagKeeping(d, false) || idless
				}
			}
			if len(ex.Response.Messages) == 0 && !ex.Response.Truncated {
				ex.Response = nil // nothing of its own came, as the transport says it
			}
		}
		if len(early) > 0 {
			if ex.Response == nil {
				ex.Response = &envelope.Response{}
			}
			ex.Response.Messages = append(early, ex.Response.Messages...)
			for _, d := range early {
				if id, copy := secondID(p, d); id != "" {
					noteSecond(ex.Response, id, copy)
				}
			}
		}
		if ex.Died != "" {
			// Any request still open may have caused it, or the
			// notification did: as after a request, they go again.
			m.died(&ex)
			return ex, nil, nil
		}
		if idless {
			// It goes again; what it met that is no JSON is judged with
			// the try alone (see flag).
			var invalid [][]byte
			if ex.Response != nil {
				for _, d := range ex.Response.Messages {
					if !gjson.ValidBytes(d) && len(invalid) < maxKeptInvalid {
						invalid = append(invalid, d)
					}
				}
			}
			return ex, &pend{name: name, req: req, notification: true, ambiguous: true, invalid: invalid}, nil
		}
		return ex, nil, nil
	}
	lim := p.Limits()
	ex := envelope.Exchange{Transport: envelope.Stdio, Version: r.sess.version, Request: req}
	r.offer(req)
	if f := p.Send(ctx, req.Body); f != "" {
		ex.Failure = f
		m.died(&ex)
		return ex, nil, nil
	}
	seq := m.count(p, r.idKeysStdio(req))
	// Timed from here: Send waits for a server just started (after a
	// restart without handshake, 2026-07-28) to read the line.
	start := time.Now()
	deadline := start.Add(lim.Timeout)
	// Some servers read a line that fails to parse and leave the rest of
	// what arrived with it unread until more comes: if the marker's reply
	// is slow, another marker nudges them, and the reply to any of this
	// request's markers counts.
	mine := map[string]bool{}
	nudge, every := func() bool {
		id := r.ownID()
		k := envelope.IntIDKey(id)
		m.markers[k], mine[k] = true, true
		m.queued(k)
		body := r.markerBody(id)
		// Its reply may come late, when an exchange of the transport's
		// own (a liveness probe, a fixture sent again) is open: it is no
		// reply of that exchange's. (Owed before it goes, so that the
		// transport knows its reply, and a blank line after it, however
		// soon they come.)
		p.Owe(body)
		return p.Send(ctx, body) == ""
	}, markNudge
	// At the server's pace: each nudge is one more message a server that
	// answers in order must work through before the next request's, and
	// nudges at a fast server's pace pile up before a slow one (0.4 s a
	// message: the queue outgrew --timeout within a few fixtures). A
	// quarter of the timeout at most, so that a server that stalls after
	// a slow exchange is still nudged within the window.
	every = min(max(every, 2*m.rtt), max(lim.Timeout/4, markNudge))
	marked := nudge()
	next := start.Add(every)
	var msgs [][]byte
	var size int64
	answered, truncated := false, false
	keys := r.idKeysStdio(req)
	var unsent []string // the ids of its lines that name no request written
	// held is a response, with other content, naming a request an
	// earlier exchange took its response for: a second response to that
	// one (see owner) if this request's own comes, else this request's
	// reply with a stale id (RPC1004), as in a run in sequence. Its own
	// may come after the marker's reply (a server that handles requests
	// side by side), so held is taken only after a quiet moment, as long
	// as a run in sequence waits (Limits.Quiet) from heldAt.
	var held []byte
	var heldAt time.Time
	// seconds are its lines known as second responses to requests
	// answered outside the multiplexed exchanges (see second).
	var seconds envelope.Response
	// takeHeld takes held as this request's reply.
	takeHeld := func() {
		msgs = append(msgs, held)
		size += int64(len(held))
		if id, copy := secondID(p, held); id != "" {
			noteSecond(&seconds, id, copy) // known so, as a run in sequence knows it
		}
		held, answered = nil, true
	}
	// second gives a second response to the exchange that took its
	// request's response (see owner); one to a request answered outside
	// the multiplexed exchanges (the negotiation, a liveness probe: the
	// transport knows it, see secondID) stays among this exchange's
	// lines, known as one, as in a run in sequence.
	var keep func([]byte) bool
	second := func(data []byte) {
		if !m.secondReply(data) && keep(data) {
			if id, copy := secondID(p, data); id != "" {
				noteSecond(&seconds, id, copy)
			}
		}
	}
	// past counts the messages kept past the response, before the
	// marker's reply: the server may have written them for the marker,
	// which it read after this request.
	past := 0
	finish := func(failure string) envelope.Exchange {
		if past > 0 && marked {
			what, it := "1 message past the response came", "it"
			if past > 1 {
				what, it = fmt.Sprintf("%d messages past the response came", past), "them"
			}
			ex.Note = envelope.JoinNotes(ex.Note, what+" before the reply to the checker's own "+markerMethod(r)+", written after this request: the server may have written "+it+" for that "+markerMethod(r))
		}
		if held != nil {
			second(held) // its request's, as nothing took it here
			held = nil
		}
		if len(msgs) > 0 {
			ex.Response = &envelope.Response{Messages: msgs, Truncated: truncated, Unsent: unsent, Again: seconds.Again, Copies: seconds.Copies}
		}
		ex.Failure = failure
		// As a run in sequence notes it: a server found dead when the
		// exchange ends died handling it.
		if died, why := r.t.Died(); died {
			ex.Died = why
			m.died(&ex)
		}
		return ex
	}
	// keep holds a line that is not the reply (one past the response, a
	// second response to another request), within the exchange's
	// bounds, and says whether it did: a server that goes on writing
	// until the marker's reply must not grow the run without end.
	keep = func(data []byte) bool {
		if len(msgs) >= lim.MaxEvents || size+int64(len(data)) > lim.MaxBytes {
			truncated = true
			return false
		}
		msgs = append(msgs, data)
		size += int64(len(data))
		if u := unsentID(p, data); u != "" {
			unsent = append(unsent, u)
		}
		return true
	}
	for _, d := range early {
		second(d)
	}
	var grace time.Time // set once a marker's reply came first
	heard := 0          // the responses that pushed deadline back
	pending := func() (envelope.Exchange, *pend, error) {
		ex = finish(transport.NoResponse(lim.Timeout, len(msgs)))
		ex.Unanswered = true
		return ex, &pend{name: name, req: req, keys: keys, deadline: deadline, seq: seq, lines: len(msgs), timeout: lim.Timeout}, nil
	}
	for {
		until := deadline
		switch {
		case !grace.IsZero():
			until = grace
		case marked && !answered && next.Before(deadline):
			until = next
		}
		data, cut, what, why := p.Receive(ctx, until)
		if what == transport.Line {
			// The server is writing, so not stalled: a nudge waits for a
			// quiet as long as the one before it; and a response is
			// progress through the queue, so the silence window starts
			// again (see heard), up to MaxEvents times.
			next = time.Now().Add(every)
			if heard < lim.MaxEvents && m.ahead(data, seq) {
				heard++
				deadline = maxTime(deadline, time.Now().Add(lim.Timeout))
			}
			m.heard(data)
		}
		if what == transport.Quiet && until.Before(deadline) {
			if !grace.IsZero() {
				if held != nil {
					takeHeld() // nothing else came: this request's, stale id and all
					return finish(""), nil, nil
				}
				return pending()
			}
			every *= 2
			next = time.Now().Add(every)
			nudge()
			continue
		}
		switch what {
		case transport.Gone:
			ex = finish(why)
			m.died(&ex)
			return ex, nil, nil
		case transport.Canceled:
			return finish(why), nil, nil
		case transport.Quiet:
			if held != nil {
				takeHeld() // nothing else came: this request's, stale id and all
				if !grace.IsZero() {
					return finish(""), nil, nil // and the marker's reply came
				}
			}
			if answered {
				// The response came; the marker's reply did not: the
				// stream may be out of step, so the next fixture meets a
				// fresh server.
				m.stale()
				return finish(""), nil, nil
			}
			ex = finish(transport.NoResponse(lim.Timeout, len(msgs)))
			ex.Unanswered = true
			// The liveness probe goes next, on this pipe: the request's
			// reply, should it come now, is not the probe's.
			p.Owe(req.Body)
			return ex, nil, nil
		}
		if k, ok := responseKey(data); ok && k != unreadableID && !slices.Contains(keys, k) && (m.owner[k] != nil || secondOf(p, data)) {
			// A response naming a request an earlier exchange took its
			// response for: past this request's own, or the same again,
			// it is a second response to that one; before it, it waits
			// to see whether this request's own comes (see held).
			if answered || held != nil || m.r.repeated(data) {
				second(data)
			} else {
				held, heldAt = data, time.Now()
				if !grace.IsZero() {
					grace = minTime(maxTime(grace, heldAt.Add(lim.Quiet)), deadline)
				}
			}
			continue
		}
		if k, _ := responseKey(data); m.r.repeated(data) && (answered || !slices.Contains(keys, k)) {
			if answered && slices.Contains(keys, k) {
				// This request's own response again, before the marker's
				// reply: the server answered it twice (RPC1006).
				keep(data)
			}
			continue // else an earlier exchange's response, again
		}
		// (One alike to an earlier request's response, with this
		// request's id and none before it, is its reply, as in a run in
		// sequence: a user's fixtures may write an id twice.)
		if k, ok := responseKey(data); ok && mine[k] {
			m.markerAnswered(k, data)
			m.rtt = time.Since(start)
			switch {
			case answered:
				return finish(""), nil, nil
			case grace.IsZero():
				// A server may answer a request after a later ping when
				// it handles requests asynchronously: give the reply a
				// moment, in proportion to the ping's, before the
				// request goes pending (or takes held: see there).
				grace = time.Now().Add(max(markGrace, 2*time.Since(start)))
				if held != nil {
					grace = maxTime(grace, heldAt.Add(lim.Quiet))
				}
				grace = minTime(grace, deadline)
			}
			continue
		}
		if m.marker(data) {
			continue // an earlier request's nudge, answered late
		}
		if m.answer(data) || m.progress(data) {
			continue // a pending request's reply, in its window, or its progress
		}
		if k, ok := responseKey(data); ok && !slices.Contains(keys, k) && p.TakeIfLate(data) {
			// A late reply to a request of the transport's own that timed
			// out (a setup listing, say): its id names that request, so it
			// is no reply of this one's (review rev82); keepLate notes it.
			continue
		}
		if d := m.doubt(data, &pend{req: req}); d != nil {
			// Kept here for this try; it may go again (see doubtSet).
			d.inside = !answered
			m.doubts = append(m.doubts, d)
		}
		if k, ok := responseKey(data); ok && k == unreadableID && !answered && m.owesIDless() {
			// An id-less reply while a request that can only be answered
			// without an id is pending: it may be that request's late
			// reply, or this one's with a wrong id. Both go again, alone;
			// a line that is no JSON is judged with this one's try (see
			// flag).
			m.flagKeeping(data, false)
			ex, pd, err := pending()
			pd.ambiguous = true
			if !gjson.ValidBytes(data) && len(pd.invalid) < maxKeptInvalid {
				pd.invalid = append(pd.invalid, data)
			}
			return ex, pd, err
		}
		if answered {
			// Past the response: it follows the exchange, and may be a
			// pending request's late reply.
			if !m.flag(data) && keep(data) && !envelope.IsResponse(data) {
				past++
			}
			continue
		}
		room := lim.MaxBytes - size
		if cut || int64(len(data)) > room {
			msgs = append(msgs, data[:min(int64(len(data)), room)])
			size += min(int64(len(data)), room)
			truncated = true
			m.stale()
			return finish(fmt.Sprintf("reply exceeds %d bytes", lim.MaxBytes)), nil, nil
		}
		msgs = append(msgs, data)
		size += int64(len(data))
		if u := unsentID(p, data); u != "" {
			unsent = append(unsent, u)
		}
		if envelope.IsResponse(data) {
			answered = true
			if held != nil {
				second(held) // this request had a response of its own
				held = nil
			}
			if k, _ := responseKey(data); slices.Contains(keys, k) {
				r.took(k, data)
			}
			if !marked || !grace.IsZero() {
				return finish(""), nil, nil
			}
			continue
		}
		if len(msgs) >= lim.MaxEvents {
			truncated = true
			m.stale()
			return finish(fmt.Sprintf("no response in the first %d lines", len(msgs))), nil, nil
		}
	}
}

// markGrace is the least time a request's reply is awaited after the
// marker's reply came first.
const markGrace = 25 * time.Millisecond

// markNudge is how long a marker's reply is awaited before another
// marker nudges the server; it doubles each time.
const markNudge = 10 * time.Millisecond

// died notes a death: the exchange's own, and a suspicion on every
// pending request, any of which may have caused it.
func (m *mux) died(ex *envelope.Exchange) {
	if died, why := m.r.t.Died(); died {
		ex.Died = why
	}
	m.stale()
	m.voidPending()
}

// stale makes the next fixture restart the server.
func (m *mux) stale() {
	m.r.mu.Lock()
	m.r.stale = true
	m.r.mu.Unlock()
}

// idKeysStdio are the id keys of a request on stdio.
func (r *run) idKeysStdio(req envelope.Request) []string { return requestIDKeys(req.Body) }

// settle waits out the pending windows, then judges what stayed silent
// (one liveness probe for all) and sends the rest again: those a death
// or a restart voided side by side (resend), the others alone (again).
func (m *mux) settle(ctx context.Context) error {
	r := m.r
	if len(m.pending) == 0 {
		return nil
	}
	until := func() time.Time {
		u := time.Time{}
		for _, p := range m.pending {
			u = maxTime(u, p.deadline)
		}
		return u
	}
	if died, _ := r.t.Died(); died {
		// Dead before the windows ran out: any open request may have
		// killed it, so each goes again, as after a death mid-run.
		m.voidPending()
	} else {
		proc := r.t.(*StdioTarget).proc()
		// Until every window has closed, or no request waits for its
		// reply (an ambiguous one goes again anyway).
		for ctx.Err() == nil && slices.ContainsFunc(m.pending, func(p *pend) bool { return !p.ambiguous }) {
			// (A response pushes the windows back: see heard.)
			data, _, what, _ := proc.Receive(ctx, until())
			if what != transport.Line {
				if what == transport.Gone {
					m.voidPending()
				}
				break
			}
			m.stray(proc, data)
		}
	}
	if ctx.Err() != nil {
		for _, p := range m.pending {
			p.ex.Failure, p.ex.Unanswered = fmt.Sprintf("cancelled: %v", context.Cause(ctx)), false
		}
		return nil
	}
	moved := m.resolve()
	var silent []*pend
	for _, p := range m.pending {
		if !p.ambiguous {
			silent = append(silent, p)
		}
	}
	if len(silent) > 0 {
		if err := m.probe(ctx, silent); err != nil {
			return err
		}
	}
	// Sent again to the process that read them, their ids would be used
	// twice in its session (T-RPC-4), and a server still working on one
	// may refuse it as a duplicate: they go again to a fresh process.
	var beside, alone []*pend
	for _, p := range m.pending {
		switch {
		case !p.ambiguous:
		case p.voided && !p.stalled && !m.resending:
			beside = append(beside, p)
		default:
			alone = append(alone, p)
		}
	}
	if len(beside)+len(alone) == 0 {
		return nil
	}
	m.stale()
	if len(beside) == 1 {
		alone, beside = append(alone, beside...), nil
	}
	for _, p := range alone {
		if err := m.again(ctx, p); err != nil {
			return err
		}
	}
	if len(beside) > 0 {
		if err := m.resend(ctx, beside); err != nil {
			return err
		}
	}
	m.unland(moved)
	return nil
}

// resend sends the requests a death or a restart voided (open when the
// server died, of another message or of one of them) again to a fresh
// process, as the run sent them first: each followed by its marker,
// their windows open side by side and judged together (settle). Each
// sent alone, in turn, waited a whole --timeout of its own when it
// stayed silent: the go-sdk server, which exits on some malformed
// lines, left two such requests, and its run took two windows in a row.
// A request that overtook its marker again is pending as before; one
// the server dies on in flight is judged so; what is in doubt again (the
// server died or hung while they were open, a line that could be
// theirs) goes again alone (again), as before this pass.
func (m *mux) resend(ctx context.Context, redo []*pend) error {
	m.pending = nil
	m.resending = true
	defer func() { m.resending = false }()
	bufs := make([]*buffer, len(redo))
	for i, p := range redo {
		bufs[i] = &buffer{}
		l := &lane{r: m.r, out: bufs[i], mux: m, mark: time.Now()}
		ok, err := l.revive(ctx, p.name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := l.muxed(ctx, p.name, p.req, p.exp, p.o); err != nil {
			return err
		}
	}
	if err := m.settle(ctx); err != nil {
		return err
	}
	for i, p := range redo {
		p.buf.events[p.at].instead, p.buf.events[p.at].replaced = bufs[i].events, true
	}
	return nil
}

// probe sends one liveness probe for every silent request, judged for
// each as its own probe would have been.
func (m *mux) probe(ctx context.Context, silent []*pend) error {
	r := m.r
	if proc := r.t.(*StdioTarget).proc(); proc != nil {
		for _, p := range silent {
			proc.Owe(p.req.Body) // a late reply is not the probe's
		}
	}
	probe, alive := r.liveness(ctx, silent[0].name)
	// A reply that came while the probe was out, with the id only a
	// silent request was sent with, is that request's (late) reply.
	answered := map[*pend]bool{}
	for _, p := range silent {
		answered[p] = r.lateReply(p.ex, &probe, func(k string) bool { return m.sent[k] == 1 })
	}
	if !alive && probe.Failure != "" {
		// The server stopped answering anything (hung, or gone deaf to
		// the pipe) while requests were open: one of them may have hung
		// it, or a request sent after them. Which is not known, so each
		// goes again, alone, to a fresh process (see settle): the one
		// that hangs it again is the one not judged, and the rest are.
		for _, p := range silent {
			if !answered[p] {
				p.ambiguous, p.stalled = true, true
			}
		}
		return nil
	}
	for _, p := range silent {
		if probe.Failure == "" { // (see afterSilence)
			pr := probe
			ev := &p.buf.events[p.at]
			lb := &buffer{}
			l := &lane{r: r, out: lb, mark: time.Now()}
			if err := l.judge(envelope.Liveness(p.name), &pr, nil, nil); err != nil {
				return err
			}
			ev.before = append(ev.before, lb.events...)
		}
		if answered[p] {
			continue
		}
		if alive {
			p.ex.Note = envelope.JoinNotes(p.ex.Failure+"; the server answered a liveness probe, so it is alive and left this request unanswered", p.ex.Note)
			p.ex.Failure, p.ex.Unanswered = "", false
		} else {
			p.ex.Failure += r.unansweredProbe(p.ex.Failure)
			m.stale()
		}
	}
	return nil
}

// again sends a pending request once more, alone, on a server in step
// (settle has one started), and puts what that gives in place of the
// first try.
func (m *mux) again(ctx context.Context, p *pend) error {
	r := m.r
	r.mu.Lock()
	stale := r.stale
	r.stale = false
	r.mu.Unlock()
	nb := &buffer{}
	l := &lane{r: r, out: nb, mark: time.Now()}
	if died, _ := r.t.Died(); died || stale {
		if err := r.restart(ctx); err != nil {
			if err := l.notSent(p.name, "the server could not be restarted: "+err.Error()); err != nil {
				return err
			}
			p.buf.events[p.at].instead, p.buf.events[p.at].replaced = nb.events, true
			return nil
		}
	}
	ex, err := l.sendJudged(ctx, p.name, p.req, !p.notification)
	if err != nil {
		return err
	}
	if p.ex != nil && p.ex.Response != nil {
		// Its first try's own lines that are no JSON go with it too.
		for _, d := range p.ex.Response.Messages {
			if !gjson.ValidBytes(d) && len(p.invalid) < maxKeptInvalid && !slices.ContainsFunc(p.invalid, func(b []byte) bool { return bytes.Equal(b, d) }) {
				p.invalid = append(p.invalid, d)
			}
		}
	}
	if ex.Response != nil {
		// (A line the try alone met again, a banner each process
		// writes, is judged once.)
		p.invalid = slices.DeleteFunc(p.invalid, func(d []byte) bool {
			return slices.ContainsFunc(ex.Response.Messages, func(m []byte) bool { return bytes.Equal(m, d) })
		})
	}
	if len(p.invalid) > 0 {
		// What the first try met that may have been its reply, and is
		// no JSON: judged here, where it may belong, not lost.
		if ex.Response == nil {
			ex.Response = &envelope.Response{}
		}
		ex.Response.Messages = append(slices.Clone(p.invalid), ex.Response.Messages...)
		ex.Note = envelope.JoinNotes(fmt.Sprintf("its first try, beside other requests, met %d line(s) that are no JSON, which may have been its reply (or another's of that moment); they are judged here, ahead of the reply it got alone", len(p.invalid)), ex.Note)
	}

	if err := l.judge(p.name, &ex, p.exp, p.o); err != nil {
		return err
	}
	p.buf.events[p.at].instead, p.buf.events[p.at].replaced = nb.events, true
	return nil
}

// restarted voids the pending windows: their server is gone, and so is
// whatever it would have answered; they are sent again (see settle).
func (m *mux) restarted() { m.voidPending() }

// voidPending marks every pending request voided: its process died or
// was replaced while its window was open.
func (m *mux) voidPending() {
	for _, p := range m.pending {
		p.ambiguous, p.voided = true, true
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
