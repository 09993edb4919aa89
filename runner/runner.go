// Package runner drives a live run: it negotiates the protocol version
// with a target, fires each fixture in its own exchange, judges every
// reply with the checks, and hands the verdicts to a sink. It owns the
// protocol choreography (handshake, sessions, standard headers); the
// transport only moves bytes.
package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/schema"
)

// A Conn sends one request and returns what came back. Implementations
// bound every exchange in time and bytes and never fail for the server's
// misbehaviour: that goes into Exchange.Failure.
type Conn interface {
	Do(ctx context.Context, req envelope.Request, wantReply bool) envelope.Exchange
}

// A Target is the server under test: an HTTP endpoint, or a process the
// runner talks to over stdio.
type Target interface {
	Transport() string
	Conn() Conn
	// Died reports whether the server has died, with what it left
	// (exit status, stderr tail). HTTP targets never die.
	Died() (bool, string)
	// Restart brings a dead server back for the next fixture.
	Restart(ctx context.Context) error
	Close() error
}

// Options configure a run.
type Options struct {
	// Protocol is "auto" or a version to use without probing.
	Protocol string
	Fixtures []*fixtures.Fixture
	// CallTools runs the fixtures that are off by default because they
	// make the server act: CallReadOnly calls the tools that declare
	// readOnlyHint, CallAll every tool. Empty calls none.
	CallTools string
	Contract  *envelope.Contract
	Schemas   checks.SchemaValidator
	Checks    []*checks.Check
	// Secrets are the headers added to every request from --header: a
	// reply that echoes one is a finding (never quoted).
	Secrets []envelope.Secret
	// Deadline bounds the whole run; fixtures not reached by then get
	// error verdicts, so the report is complete.
	Deadline time.Duration
	// Progress, when set, hears each fixture start and finish, from any
	// goroutine.
	Progress Progress
	// Parallel bounds the exchanges in flight at once; 0 or 1 sends the
	// fixtures one after another, in corpus order. Whatever it is, the
	// sink sees every fixture's output in corpus order.
	Parallel int
}

// A Progress follows a run fixture by fixture (a progress line).
type Progress interface {
	Started(fixture string)
	Finished(fixture string)
}

// Values of Options.CallTools.
const (
	CallReadOnly = "readonly"
	CallAll      = "all"
)

// A Sink receives the run as it happens.
type Sink interface {
	// Facts says what the server declared, as soon as the run has learned
	// it (again when it learns more): every exchange after is judged with
	// them, and a transcript records them so lint judges the same way.
	Facts(*expect.Facts)
	Exchange(Judged) error
	Note(string)
}

// Judged is one exchange and its verdicts. Exchange is nil for a fixture
// that was not sent (it does not apply, or the run ran out of time);
// Verdicts is nil for an exchange of a negotiation that failed, which is
// recorded but not judged.
type Judged struct {
	Fixture  string
	Exchange *envelope.Exchange
	// Override is the fixture's, as the judge applied it (recorded with
	// the exchange).
	Override *expect.Override
	// Expect is the expectation the exchange was judged against; nil
	// when it was not sent.
	Expect   *expect.Expectation
	Verdicts []checks.Verdict
	// Unjudged says why an exchange the run recorded was not judged (a
	// negotiation that failed); Verdicts is then nil.
	Unjudged string
	// Duration is the wall time the exchange took, its liveness probe and
	// judging included (in a concurrent run, beside other exchanges).
	Duration time.Duration
}

// ErrInterrupted is the cause a caller cancels a run's context with to
// stop it early (a signal): fixtures not yet judged are skipped as not
// run, not reported as errors, and what arrived before is judged.
var ErrInterrupted = errors.New("the run was interrupted")

// interrupted reports whether ctx was cancelled with ErrInterrupted.
func interrupted(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrInterrupted) }

// ErrNotDriven means the target could not be driven at all: it did not
// start, is unreachable, or no protocol version could be negotiated.
var ErrNotDriven = errors.New("target could not be driven")

// Result says how the run went, for the report's header.
type Result struct {
	Version    string // the protocol version judged
	Negotiated string // how it was chosen
	// Facts are what the server declared (nil when nothing was negotiated).
	Facts *expect.Facts
}

// WithDeadline is ctx bounded by the run's --deadline d, its cause
// naming the flag: a run cut short says why, not only "context deadline
// exceeded".
func WithDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("the run's --deadline of %s passed: %w", d, context.DeadlineExceeded))
}

// Hurry makes a stdio target's shutdown short once deadline (from now;
// 0: none) passes or ctx ends (an interrupt): a server that ignores its
// stdin closing and SIGTERM is not waited for its full grace then. ctx
// is the caller's, which outlives the run: one that ends with the run
// would hurry every shutdown.
func Hurry(ctx context.Context, t Target, deadline time.Duration) {
	if st, ok := t.(*StdioTarget); ok {
		st.hurryAt(ctx, deadline)
	}
}

// Run negotiates, then runs every fixture. It returns an error wrapping
// ErrNotDriven when nothing could be judged, and a sink's error as is.
func Run(ctx context.Context, t Target, o Options, sink Sink) (Result, error) {
	Hurry(ctx, t, o.Deadline)
	if o.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = WithDeadline(ctx, o.Deadline)
		defer cancel()
	}
	s, res, err := Open(ctx, t, o, sink)
	if err != nil {
		return res, err
	}
	if err := s.r.fireAll(ctx, o.Fixtures); err != nil {
		return res, err
	}
	if lost := s.r.lostWhy(); lost != "" {
		return res, fmt.Errorf("%w: %s; the fixtures after that could not be judged", ErrNotDriven, lost)
	}
	if interrupted(ctx) {
		return res, nil // no new exchange after an interrupt, the session's end included
	}
	return res, s.End(ctx)
}

// A Session is a negotiated conversation with a target, for sending
// fixtures one by one (Run, or send by hand).
type Session struct{ r *run }

// Open negotiates the protocol version and lists the server's tools.
func Open(ctx context.Context, t Target, o Options, sink Sink) (*Session, Result, error) {
	if o.Checks == nil {
		o.Checks = checks.All()
	}
	r := &run{t: t, o: o, sink: sink, tools: &schema.ToolCache{}, streams: checks.NewStreams(), offered: []string{}, literal: literalSet(o.Fixtures)}
	res, err := r.negotiate(ctx)
	if err != nil {
		return nil, res, err
	}
	if err := r.discoverTools(ctx); err != nil {
		return nil, res, err
	}
	res.Facts = r.facts
	return &Session{r}, res, nil
}

// Fire sends one fixture (or its variants) and hands the verdicts to the
// sink. Over stdio with Options.Parallel above 1 it goes as in a
// multiplexed run (see mux), so that it is judged as check judges it by
// default: what the server writes until the marker's reply is the
// request's (a second response too, RPC1006), not only what came up to
// the first response.
func (s *Session) Fire(ctx context.Context, f *fixtures.Fixture) error {
	r := s.r
	// The runner's own requests beside it (a marker, a liveness probe)
	// step over the ids its body writes, as over those of the fixtures
	// Open was given: a marker with the message's id would take its
	// reply (review rev32: send's "id":6 beside a marker 6). A new set,
	// not the old one changed: the runs of an earlier multiplexed fixture
	// share that one under their own locks.
	if ids := literalIDs(f); slices.ContainsFunc(ids, func(id int) bool { return !r.literal[id] }) {
		r.mu.Lock()
		lit := maps.Clone(r.literal)
		for _, id := range ids {
			lit[id] = true
		}
		r.literal = lit
		r.mu.Unlock()
	}
	if r.o.Parallel > 1 && r.t.Transport() == envelope.Stdio && f.Stage == "" && !f.Last {
		return r.multiplexed(ctx, []*fixtures.Fixture{f}, nil)
	}
	return r.main().fixture(ctx, f)
}

// End ends a 2025-xx HTTP session (and judges the reuse of the ended
// session).
func (s *Session) End(ctx context.Context) error { return s.r.endSession(ctx) }

// SessionID is the 2025-xx HTTP session id, "" when there is none.
func (s *Session) SessionID() string { return s.r.sess.sessionID }

// Version is the negotiated protocol version.
func (s *Session) Version() string { return s.r.sess.version }

type run struct {
	t    Target
	o    Options
	sink Sink
	sess session
	// probedPing: a liveness probe's ping was answered in this run;
	// fallbackDead: the fallback probe (LivenessFallbackMethod) went
	// unanswered. Either says the fallback tells nothing more, and it
	// is not sent again: a server that hangs costs each silent fixture
	// one probe's wait, not two (review rev75). Guarded by mu.
	probedPing, fallbackDead bool
	// facts are what the server declared; nil until negotiated. Built
	// once per thing learned, then shared read-only by every expectation.
	facts *expect.Facts
	// mu guards what concurrent fixtures change: stale, the id counter
	// and replies.
	mu sync.Mutex
	// replies are the responses a multiplexed stdio run's exchanges, its
	// markers and its liveness probes took, by id key (bounded): the same
	// response again, from a server that answers twice, belongs to no
	// later exchange (as the transport drops it in a run in sequence).
	replies map[string]string
	// own are the id keys of the runner's markers and liveness probes
	// (bounded): their replies, however late, are no fixture's.
	own map[string]bool
	// late are the late replies the stdio transport left out of the
	// exchanges they arrived in (their ids name requests that timed
	// out), until a request's liveness probe claims its own (lateReply).
	// Bounded; guarded by mu.
	late [][]byte
	// stale: a stdio exchange failed and the server did not answer a
	// liveness probe, so a late reply could land in the next fixture's
	// exchange; restart before it.
	stale bool
	// staged: the stdio process is a staged fixture's fresh one (see
	// enterStage), not the run's session; restart makes it one again.
	staged bool
	// fresh: the stdio process has seen no initialize (a staged
	// fixture's fresh stage), so a ping is no probe of its life: a
	// server may leave every request before initialize unanswered
	// (T-LIFE-6). Guarded by mu.
	fresh bool
	// lost says why the target stopped being drivable mid-run (a stdio
	// server that could not be started again, an HTTP server that stopped
	// accepting connections): the run is then not complete, as a run
	// that could not start is not (exit 3). Guarded by mu.
	lost string
	// cut are the fixtures the server left unanswered over HTTP before
	// nothing answered the liveness probe (the connection refused):
	// in flight when it went away, so one of them may have stopped it.
	// Guarded by mu.
	cut []string
	// tools compiles each tool schema the replies list once per run: a
	// run lists tools again and again (a fixture's tools/list, the
	// envelope fixtures that carry one).
	tools *schema.ToolCache
	// streams are the SSE event ids of the exchanges judged so far, given
	// each exchange as it is judged, in report order (as lint reads a
	// transcript).
	streams *checks.Streams
	// blocks are the fixtures' request ids (see ids.go); guarded by mu
	// until set.
	blocks *idBlocks
	// literal are the ids that fixtures write as
	// numbers instead of {{id}}: the runner's own ids step over them, or
	// a marker in flight beside such a fixture would take its reply.
	// Set when the run is made, before the negotiation; only read after.
	literal map[int]bool
	// offered are the progress tokens (raw JSON) the run's stdio
	// requests offered, in the order sent; nil once more than
	// envelope.MaxOffered were (then no exchange says what was offered).
	// Guarded by mu.
	offered []string
	// logFloor and listens are what else the run's stdio requests asked
	// the server to send (envelope.PipeAsks); known where offered is.
	// Guarded by mu.
	logFloor string
	listens  []string
	// pipeOffers are the stdio requests behind offered, logFloor and
	// listens, in order; one a run in sequence saw answered (answered)
	// asks nothing more once it was judged, and is dropped when the next
	// request goes (review rev76: a refused logLevel "verbose" and the
	// tokens of requests long answered made every later unasked log or
	// stale progress a warn, "another request may be in flight", with
	// nothing else in flight). Guarded by mu.
	pipeOffers []pipeOffer
	// sessOffered are, by HTTP session id, the progress tokens (raw
	// JSON) the run's requests in that session offered: the session is
	// the run's alone, so they are all its requests offered. A nil entry
	// is a session whose tokens are no longer known (past
	// envelope.MaxOffered, or one no transcript can carry); past
	// maxSessOffered sessions, new ones are not followed. Guarded by mu.
	sessOffered map[string][]string
	// renewals counts the sessions the run began after the server ended
	// its own (see renew).
	renewals int
}

// session is what the handshake established.
type session struct {
	version string // whose rules the run judges by
	// wire is the version the server negotiated, where it differs from
	// version (2025-03-26, judged under 2025-06-18's rules; --protocol
	// forcing another): the version header carries it (T-HTTP-7), as a
	// client of that session sends it.
	wire      string
	sessionID string // 2025-xx HTTP
	nextID    int
}

// expect builds the one expectation of an exchange about to be sent:
// from the request, the facts the run learned and the fixture's override.
func (r *run) expect(req envelope.Request, o *expect.Override) *expect.Expectation {
	return expect.Build(&envelope.Exchange{Transport: r.t.Transport(), Version: r.sess.version, Request: req}, r.facts, o)
}

// spoken is the version the session speaks on the wire.
func (s *session) spoken() string {
	if s.wire != "" {
		return s.wire
	}
	return s.version
}

// A lane is the path one fixture's output takes: straight to the run's
// sink, or into a buffer that a concurrent run empties in corpus order.
type lane struct {
	r    *run
	out  Sink
	fl   *flight   // nil in a run in sequence
	mux  *mux      // a stdio run's multiplexer; nil: one exchange at a time
	mark time.Time // when the lane's last output went out, or it began
	// renewed: the lane began a new session for its fixture once; a 404
	// the fixture gets in that one too is judged, not chased again.
	renewed bool
	// deferred: the server ended the run's session under this lane's
	// fixture, in a concurrent run; the fixture goes again, whole, in a
	// new session once nothing else is in flight (see renew).
	deferred bool
	// last is the exchange the lane judged last: a second round (a
	// fixture's retry) is built from its reply.
	last *envelope.Exchange
}

// main is the lane of the run's own exchanges (negotiation, setup, the
// session's end): nothing else is in flight then.
func (r *run) main() *lane { return &lane{r: r, out: r.sink, mark: time.Now()} }

// emit hands one exchange's output on, timed from the lane's last.
func (l *lane) emit(j Judged) error {
	l.stamp(&j)
	return l.out.Exchange(j)
}

// stamp times an exchange from the lane's last output.
func (l *lane) stamp(j *Judged) {
	now := time.Now()
	j.Duration, l.mark = now.Sub(l.mark), now
}

// judge judges one exchange of the run's own with its expectation.
func (r *run) judge(fixture string, ex *envelope.Exchange, exp *expect.Expectation, o *expect.Override) error {
	return r.main().judge(fixture, ex, exp, o)
}

// sendJudged sends one exchange of the run's own; see lane.sendJudged.
func (r *run) sendJudged(ctx context.Context, fixture string, req envelope.Request, wantReply bool) (envelope.Exchange, error) {
	return r.main().sendJudged(ctx, fixture, req, wantReply)
}

// judge judges one exchange with its expectation and hands it on.
func (l *lane) judge(fixture string, ex *envelope.Exchange, exp *expect.Expectation, o *expect.Override) error {
	r := l.r
	r.knowOffered(ex)
	l.last = ex
	if exp == nil {
		exp = expect.Build(ex, r.facts, o)
	} else {
		exp = expect.Answered(exp, ex, r.facts, o)
	}
	j := Judged{Fixture: fixture, Exchange: ex, Override: o, Expect: exp}
	if b, ok := l.out.(*buffer); ok {
		// Judged when its turn to go out comes, one exchange at a time:
		// judging is CPU work, and it must not starve the reads of the
		// exchanges still in flight, which are timed.
		l.stamp(&j)
		b.later(j)
		return nil
	}
	j.Verdicts = r.verdicts(&j)
	return l.emit(j)
}

// verdicts judges an exchange with the checks of the run.
func (r *run) verdicts(j *Judged) []checks.Verdict {
	return checks.Judge(checks.Input{Fixture: j.Fixture, Exchange: j.Exchange, Expect: j.Expect, Contract: r.o.Contract, Schemas: r.o.Schemas, Secrets: r.o.Secrets, ToolCache: r.tools, Reused: r.streams.Reused(j.Exchange)}, r.o.Checks)
}

// skipAll reports a fixture that does not apply: every check skips.
func (l *lane) skipAll(fixture, reason string) error {
	vs := make([]checks.Verdict, 0, len(l.r.o.Checks))
	for _, c := range l.r.o.Checks {
		vs = append(vs, checks.Verdict{Fixture: fixture, Check: c, Status: checks.StatusSkip, Reason: reason})
	}
	return l.emit(Judged{Fixture: fixture, Verdicts: vs})
}

// notSent reports a fixture the checker could not send: one error, the
// other checks skip (an error is what the checker could not do, counted
// once).
func (l *lane) notSent(fixture, reason string) error {
	return l.emit(Judged{Fixture: fixture, Verdicts: checks.NotSent(fixture, reason, l.r.o.Checks)})
}

// lose notes that the target stopped being drivable; the first reason
// stands until the target answers again (found). What stands when the
// fixtures are done makes the run not driven.
func (r *run) lose(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost == "" {
		r.lost = why
	}
}

// found forgets a loss: the target answered since.
func (r *run) found() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost = ""
}

func (r *run) lostWhy() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost == "" || len(r.cut) == 0 {
		return r.lost
	}
	if len(r.cut) == 1 {
		return fmt.Sprintf("%s, after it left %s unanswered: that request may have stopped it", r.lost, r.cut[0])
	}
	cut := slices.Sorted(slices.Values(r.cut))
	if len(cut) > maxCut {
		cut = append(cut[:maxCut], "…")
	}
	return fmt.Sprintf("%s, after it left unanswered %s: one of them may have stopped it (run each alone: --parallel 1 --run ID)", r.lost, strings.Join(cut, ", "))
}

// deathSettle is how long a cut liveness probe waits before it asks
// again (see afterSilence).
const deathSettle = 200 * time.Millisecond

// maxCut bounds the fixtures a lost target's reason names.
const maxCut = 8

// noteCut keeps a fixture the server left unanswered before it stopped
// accepting connections.
func (r *run) noteCut(fixture string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cut) <= maxCut {
		r.cut = append(r.cut, fixture)
	}
}

// restartTarget starts the target afresh (a new stdio process), noting a
// target that cannot be started any more.
func (r *run) restartTarget(ctx context.Context) error {
	err := r.t.Restart(ctx)
	if errors.Is(err, ErrNotDriven) {
		r.lose("the server died and could not be started again (" + err.Error() + ")")
	}
	return err
}

// maxSessOffered bounds the HTTP sessions whose offered tokens a run
// follows.
const maxSessOffered = 1024

// offer notes the progress tokens a stdio request (or batch) offers,
// before it is written: the server may answer with progress at once.
// Over HTTP it notes them by the session the request names.
func (r *run) offer(req envelope.Request) {
	if r.t.Transport() != envelope.Stdio {
		r.offerInSession(req)
		return
	}
	toks, ok := envelope.OfferedTokens(req.Body)
	logFloor, listens := envelope.PipeAsks(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneAnsweredLocked()
	if ok && len(toks) == 0 && logFloor == "" && len(listens) == 0 {
		return
	}
	switch {
	case r.offered == nil:
	case !ok || len(r.offered)+len(toks) > envelope.MaxOffered || len(r.listens)+len(listens) > envelope.MaxOffered:
		r.offered, r.listens, r.pipeOffers = nil, nil, nil
	default:
		r.offered = append(r.offered, toks...)
		r.logFloor = envelope.MoreVerbose(r.logFloor, logFloor)
		r.listens = append(r.listens, listens...)
		r.pipeOffers = append(r.pipeOffers, pipeOffer{key: singleIDKey(req.Body), toks: toks, floor: logFloor, listens: listens})
	}
}

// A pipeOffer is what one stdio request offered (progress tokens) and
// asked (a log level, a listen); key is its id key ("" for a batch).
type pipeOffer struct {
	key      string
	toks     []string
	floor    string
	listens  []string
	answered bool
}

// singleIDKey is the id key of a body that is one request ("" else).
func singleIDKey(body []byte) string {
	m := gjson.ParseBytes(body)
	if !m.IsObject() || !m.Get("method").Exists() {
		return ""
	}
	return envelope.IDKey(m.Get("id"))
}

// answeredOffer marks the offer of req answered when ex, an exchange of
// a run in sequence, took its response: it asks nothing more once
// judged (see pipeOffers).
func (r *run) answeredOffer(req envelope.Request, ex *envelope.Exchange) {
	if r.t.Transport() != envelope.Stdio || ex.Failure != "" || ex.Response == nil {
		return
	}
	key := singleIDKey(req.Body)
	if key == "" {
		return
	}
	answered := false
	for _, m := range ex.Response.Messages {
		if envelope.IsResponse(m) && envelope.IDKey(gjson.GetBytes(m, "id")) == key {
			answered = true
			break
		}
	}
	if !answered {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answeredLocked(key)
}

// answeredLocked marks the offer of the request with id key answered:
// dropped at the next request's (see pruneAnsweredLocked).
func (r *run) answeredLocked(key string) {
	for i := len(r.pipeOffers) - 1; i >= 0; i-- {
		if r.pipeOffers[i].key == key {
			r.pipeOffers[i].answered = true
			return
		}
	}
}

// pruneAnsweredLocked drops the answered offers and sums what the rest
// offered and asked.
func (r *run) pruneAnsweredLocked() {
	if r.offered == nil || !slices.ContainsFunc(r.pipeOffers, func(o pipeOffer) bool { return o.answered }) {
		return
	}
	r.pipeOffers = slices.DeleteFunc(r.pipeOffers, func(o pipeOffer) bool { return o.answered })
	r.offered, r.logFloor, r.listens = []string{}, "", nil
	for _, o := range r.pipeOffers {
		r.offered = append(r.offered, o.toks...)
		r.logFloor = envelope.MoreVerbose(r.logFloor, o.floor)
		r.listens = append(r.listens, o.listens...)
	}
}

// offerInSession is offer for an HTTP request in a session.
func (r *run) offerInSession(req envelope.Request) {
	sid := envelope.HeaderGet(req.Header, "Mcp-Session-Id")
	if sid == "" {
		return
	}
	toks, ok := envelope.OfferedTokens(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessOffered == nil {
		r.sessOffered = map[string][]string{}
	}
	have, seen := r.sessOffered[sid]
	switch {
	case !seen && len(r.sessOffered) >= maxSessOffered:
	case seen && have == nil:
	case !ok || len(have)+len(toks) > envelope.MaxOffered:
		r.sessOffered[sid] = nil
	default:
		r.sessOffered[sid] = append(append([]string{}, have...), toks...)
	}
}

// knowOffered gives a stdio exchange the tokens offered so far, which
// PRO1003 judges its progress notifications by (see envelope.Exchange),
// and an HTTP exchange in a session those offered in that session.
func (r *run) knowOffered(ex *envelope.Exchange) {
	if ex.Offered != nil {
		return
	}
	if ex.Transport != envelope.Stdio {
		sid := envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id")
		r.mu.Lock()
		defer r.mu.Unlock()
		if toks := r.sessOffered[sid]; sid != "" && toks != nil {
			ex.Offered = slices.Clone(toks)
		}
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.offered != nil {
		ex.Offered = slices.Clone(r.offered)
		ex.LogFloor, ex.Listens = r.logFloor, append([]string{}, r.listens...)
	}
}

// send performs one exchange and notes a death of the server.
func (r *run) send(ctx context.Context, req envelope.Request, wantReply bool) envelope.Exchange {
	r.offer(req)
	ex := r.t.Conn().Do(ctx, req, wantReply)
	r.answeredOffer(req, &ex)
	switch {
	case ex.Refused && ctx.Err() == nil:
		r.lose("the server stopped accepting connections (" + ex.Failure + ")")
	case ex.Response != nil:
		r.found() // reachable again: a passing refusal lost nothing
	}
	ex.Version = r.sess.version
	if died, why := r.t.Died(); died {
		ex.Died = why
		r.mu.Lock()
		staged := r.staged
		r.mu.Unlock()
		if st, ok := r.t.(*StdioTarget); ok && staged && ex.Response == nil {
			// A staged fixture's fresh process that died writing
			// nothing: if a process of the server exits with no input
			// at all, the death is not known to be this message's.
			if how, alone := st.exitsUnprompted(ctx); alone {
				ex.Died, ex.Unanswered = "", false
				ex.Failure = fmt.Sprintf("the server could not be kept running: it died here (%s), and a process of it started with no input exits on its own too (%s), so the death is not known to be this message's", why, how)
			}
		}
	}
	if st, ok := r.t.(*StdioTarget); ok {
		r.keepLate(st, &ex)
		if ex.Response != nil && wantReply {
			// Known again wherever the same comes once more (see
			// repeated): a second response, never another's reply.
			keys := requestIDKeys(req.Body)
			for _, d := range ex.Response.Messages {
				if k, ok := responseKey(d); ok && slices.Contains(keys, k) {
					r.took(k, d)
				}
			}
		}
	}
	if ex.Failure != "" && r.t.Transport() == envelope.Stdio {
		r.mu.Lock()
		r.stale = true
		r.mu.Unlock()
	}
	return ex
}

// sendJudged is send for a fixture: when the exchange timed out, a
// liveness probe tells the server's silence (a finding, RPC1006) from a
// server that stopped answering at all (the checker could not judge).
// The probe is an exchange of its own, judged and recorded.
func (l *lane) sendJudged(ctx context.Context, fixture string, req envelope.Request, wantReply bool) (envelope.Exchange, error) {
	ex := l.r.send(ctx, req, wantReply)
	return l.afterSilence(ctx, fixture, ex, wantReply)
}

// afterSilence probes a server that left a request unanswered; see
// sendJudged.
func (l *lane) afterSilence(ctx context.Context, fixture string, ex envelope.Exchange, wantReply bool) (envelope.Exchange, error) {
	r := l.r
	if !ex.Unanswered || ex.Died != "" || ctx.Err() != nil {
		return ex, nil
	}
	if !wantReply && r.t.Transport() != envelope.HTTP {
		return ex, nil // a notification on stdio is owed no answer at all
	}
	probe, alive := r.liveness(ctx, fixture)
	if !alive && probe.Unanswered && !probe.Refused && probe.Response == nil && r.t.Transport() == envelope.HTTP &&
		!strings.HasPrefix(probe.Failure, "no reply within") && ctx.Err() == nil {
		// The probe's connection was cut, not refused: a server going
		// away still closes what it holds. A moment later nothing
		// listens, or it answers: ask once more, so a death is told the
		// same way every run.
		select {
		case <-time.After(deathSettle):
			probe, alive = r.liveness(ctx, fixture)
		case <-ctx.Done():
		}
	}
	late := r.lateReply(&ex, &probe, nil)
	if probe.Failure == "" {
		// A probe that got nothing would be a second error for one
		// fixture's failure: the fixture's own note says it.
		if err := l.judge(envelope.Liveness(fixture), &probe, nil, nil); err != nil {
			return ex, err
		}
	}
	if late {
		r.mu.Lock()
		r.stale = false // the server is in step: each reply came with its id
		r.mu.Unlock()
		return ex, nil
	}
	if alive {
		left := "left this request unanswered"
		if rp := ex.Response; rp != nil && rp.Cut && len(rp.Body) > 0 && !envelope.IsEventStream(rp.Header.Get("Content-Type")) {
			// A JSON body begun and never finished: the server answered,
			// in part.
			left = "left its reply unfinished"
		}
		ex.Note = envelope.JoinNotes(ex.Failure+"; the server answered a liveness probe, so it is alive and "+left, ex.Note)
		ex.Failure, ex.Unanswered = "", false
		r.mu.Lock()
		r.stale = false // the server is in step: its probe reply matched
		r.mu.Unlock()
	} else {
		ex.Failure += r.unansweredProbe(ex.Failure)
		if probe.Refused {
			// The request got no answer, and then nothing listened: the
			// server went away while handling it. Alone in
			// flight (a run in sequence), this request is why (PRO1005);
			// beside others, the run's reason names them all.
			r.noteCut(fixture)
			if l.fl == nil {
				ex.Died = "it left the request unanswered, then stopped accepting connections (" + probe.Failure + ")"
			}
		}
	}
	return ex, nil
}

// unansweredProbe is what a failure adds when the liveness probe got no
// answer either: on stdio, bytes the server wrote without their newline
// may be why (no reply can be read past them), and the failure names
// them if it has not yet.
func (r *run) unansweredProbe(failure string) string {
	if st, ok := r.t.(*StdioTarget); ok {
		if p := st.proc(); p != nil {
			if u := p.Unterminated(); u != "" {
				if strings.Contains(failure, u) {
					return "; a liveness probe's reply could not be read past them either"
				}
				return "; " + u + "; a liveness probe's reply could not be read past them either"
			}
		}
	}
	return "; the server did not answer a liveness probe either"
}

// keepLate takes the late replies the transport left out of ex, to be
// claimed by the requests they name (lateReply), and notes those that
// answer no request of the checker's own (a marker, a probe): they came
// during ex, and are not its.
func (r *run) keepLate(st *StdioTarget, ex *envelope.Exchange) {
	p := st.proc()
	if p == nil {
		return
	}
	late := p.TakeLate()
	if len(late) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, d := range late {
		id := gjson.GetBytes(d, "id")
		if r.own[envelope.IDKey(id)] {
			continue // a marker's or a probe's
		}
		ids = append(ids, id.Raw)
		if len(r.late) >= maxReplies {
			r.late = r.late[1:]
		}
		r.late = append(r.late, d)
	}
	if len(ids) > 0 {
		ex.Note = envelope.JoinNotes(ex.Note, fmt.Sprintf("a late reply to an earlier request that timed out (id %s) arrived during this exchange; it is not this exchange's", strings.Join(ids, ", ")))
	}
}

// lateReply takes from a liveness probe's lines (and from the late
// replies other exchanges left out) the responses whose id names ex's
// request, notes on ex that one came past its --timeout, and says whether
// there were any. Over stdio a
// probe goes out on the pipe the request went out on, right after its
// --timeout: a reply that names the request is that request's, however
// late (the probe's own reply is the one with its id), and the request
// was answered, not left silent. sent, when not nil, tells whether an id
// key was sent once only on the process (a multiplexed run's count); a
// key sent more than once names no request for sure.
func (r *run) lateReply(ex, probe *envelope.Exchange, sent func(string) bool) bool {
	if r.t.Transport() != envelope.Stdio || ex.Died != "" {
		return false
	}
	keys := slices.DeleteFunc(requestIDKeys(ex.Request.Body), func(k string) bool { return k == unreadableID })
	var mine, rest [][]byte
	r.mu.Lock()
	r.late = slices.DeleteFunc(r.late, func(d []byte) bool {
		if k, ok := responseKey(d); ok && slices.Contains(keys, k) && (sent == nil || sent(k)) {
			mine = append(mine, d)
			return true
		}
		return false
	})
	r.mu.Unlock()
	for _, d := range mine {
		k, _ := responseKey(d)
		r.took(k, d)
	}
	if probe.Response == nil {
		probe.Response = &envelope.Response{}
	}
	for _, d := range probe.Response.Messages {
		if k, ok := responseKey(d); ok && slices.Contains(keys, k) && (sent == nil || sent(k)) {
			mine = append(mine, d)
			r.took(k, d)
			continue
		}
		rest = append(rest, d)
	}
	probe.Response.Messages = rest
	if len(mine) == 0 {
		if len(rest) == 0 && !probe.Response.Truncated {
			probe.Response = nil
		}
		return false
	}
	if len(rest) == 0 && !probe.Response.Truncated {
		probe.Response = nil
	}
	// Its response is its own, not the probe's nor a later exchange's;
	// but it came past --timeout, and silence within --timeout is the
	// finding (DESIGN, Silence is a finding), as for a tool that runs
	// longer: the note says it came, and when.
	ex.Note = envelope.JoinNotes(ex.Failure+"; its response came later, while a liveness probe was out (so the server is alive, and slower than --timeout)", ex.Note)
	ex.Failure, ex.Unanswered = "", false
	return true
}

// liveness sends a request every server of the version answers at once:
// ping in 2025-xx (T-LIFE-5), server/discover in 2026-07-28 (T-LIFE-8),
// with an integer id of the runner's own (see markerBody).
func (r *run) liveness(ctx context.Context, fixture string) (envelope.Exchange, bool) {
	id := r.ownID()
	body := r.markerBody(id)
	r.mu.Lock()
	fresh := r.fresh
	r.mu.Unlock()
	if fresh && r.sess.version != envelope.V20260728 {
		// Only an initialize is owed an answer here; answered, the
		// process is alive, and left the fixture's request unanswered.
		// (The stage's process is not used again: see fireStaged.)
		body = initializeBody(id, r.sess.spoken())
	}
	req := envelope.Request{Header: r.stdHeaders(body), Body: body}
	ex := r.send(ctx, req, true)
	r.mu.Lock()
	r.probedPing = r.probedPing || !fresh && ex.Failure == "" && ex.Response != nil
	tryFallback := !r.probedPing && !r.fallbackDead
	r.mu.Unlock()
	if tryFallback && !fresh && ex.Unanswered && ex.Response == nil && !ex.Refused && ex.Died == "" && ctx.Err() == nil {
		// The probe's own method may be what the server leaves
		// unanswered (a server that never answers ping): a method it
		// does not know, which it owes an error, asks again.
		fb := envelope.LivenessFallbackBody(r.sess.version, strconv.AppendInt(nil, int64(r.ownID()), 10))
		freq := envelope.Request{Header: r.stdHeaders(fb), Body: fb}
		fex := r.send(ctx, freq, true)
		if fex.Failure == "" && fex.Response != nil {
			req, ex = freq, fex
		} else if fex.Unanswered && fex.Response == nil && ctx.Err() == nil {
			r.mu.Lock()
			r.fallbackDead = true
			r.mu.Unlock()
		}
	}
	rep := r.expect(req, nil).ReadReply(ex.Response)
	if resp := ex.Response; resp != nil && resp.Resumed > 0 && resp.Status/100 == 2 {
		// The server answered the probe with a stream that set an event
		// id, and its resumption brought nothing: it is there and
		// serving HTTP, and the responses it does not deliver are its
		// own silence, not a server gone away.
		return ex, true
	}
	if alive := ex.Failure == "" && rep.Has() && rep.Response.IsObject(); alive || r.t.Transport() != envelope.HTTP || ex.Response != nil {
		return ex, alive
	}
	if h := req.Header; envelope.HeaderGet(h, "Mcp-Session-Id") != "" {
		// The session may be what went silent (one the client ended,
		// whose requests a server leaves hanging): whether the server
		// still answers shows outside it, where any HTTP answer, a
		// refusal of the session-less request too, is one.
		h = h.Clone()
		h.Del("Mcp-Session-Id")
		if out := r.send(ctx, envelope.Request{Header: h, Body: body}, true); out.Failure == "" && out.Response != nil {
			return out, true
		}
	}
	return ex, false
}

// stdHeaders are the headers a conforming client sends for a request of
// the negotiated version (digest HDR26 / SESSION25).
func (r *run) stdHeaders(body []byte) http.Header {
	h := http.Header{}
	if r.t.Transport() != envelope.HTTP {
		return h
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	switch r.sess.version {
	case envelope.V20260728:
		h.Set("MCP-Protocol-Version", envelope.V20260728)
		m := envelope.Parse(body)
		if method := m.Get("method"); method.Type.String() == "String" {
			h.Set("Mcp-Method", method.Str)
			if f := envelope.NameField(method.Str); f != "" {
				if name := m.Get("params." + f); name.Type == gjson.String {
					h.Set("Mcp-Name", envelope.EncodeHeaderValue(name.Str))
				}
			}
			if method.Str == "tools/call" {
				r.paramHeaders(h, &m)
			}
		}
	case "":
	default:
		h.Set("MCP-Protocol-Version", r.sess.spoken())
		if r.sess.sessionID != "" {
			h.Set("Mcp-Session-Id", r.sess.sessionID)
		}
	}
	return h
}

// paramHeaders mirrors the arguments a tool marks with x-mcp-header into
// Mcp-Param-* headers, as a conforming 2026-07-28 client does (T-HDR-4):
// strings as they are (Base64 sentinel when needed), integers in
// decimal, booleans as true or false; null or absent sends nothing.
func (r *run) paramHeaders(h http.Header, m *envelope.Message) {
	for _, pa := range r.facts.Tool(m.Get("params.name").Str).ParamArgs(m.Get("params.arguments")) {
		v := pa.Value
		switch {
		case v.Type == gjson.String:
			h.Set("Mcp-Param-"+pa.Header, envelope.EncodeHeaderValue(v.Str))
		case v.Type == gjson.Number && envelope.IsInteger(v.Raw):
			h.Set("Mcp-Param-"+pa.Header, v.Raw)
		case v.Type == gjson.True, v.Type == gjson.False:
			h.Set("Mcp-Param-"+pa.Header, v.Raw)
		}
	}
}

func errorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotDriven}, args...)...)
}
