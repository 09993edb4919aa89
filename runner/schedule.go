package runner

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
)

// A concurrent run sends fixtures side by side over the one negotiated
// session: most of a run's wall time is waiting (a server's latency, a
// stream looked at, a timeout), and waits can overlap. Three things keep
// it honest:
//
//   - Order. Each fixture's output (exchanges, verdicts, notes) is held
//     in a buffer and handed to the sink in corpus order, so a report
//     does not depend on which reply came first.
//   - Ids. Requests in flight at once never share an id where the peer
//     keys its bookkeeping by id (a 2025-xx session, one stdio pipe): a
//     server that maps ids to streams would otherwise send one fixture's
//     reply to another. The corpus's requests take ids of their own
//     (ids.go); a user's fixtures that write one out take turns.
//   - Sequence. Fixtures that depend on order declare it (order: last)
//     and run one after another once the rest is done, before the
//     session ends.

// ahead bounds how many fixtures past the oldest unfinished one may run,
// in multiples of Parallel: a slow first fixture must not let the
// buffered output of all the others grow without end.
const ahead = 4

// streamLookMin is how long a GET stream is looked at, at least, in a
// concurrent run: the look lasts while other fixtures run, up to
// streamLook, and ends when they are done.
const streamLookMin = 100 * time.Millisecond

// streamLookPoll is how often a stream look past its minimum asks
// whether the other fixtures are done.
const streamLookPoll = 5 * time.Millisecond

// fireAll runs the fixtures: one after another when Parallel is 1 or
// less, else concurrently. Either way the stream looks (a GET stream,
// subscriptions/listen) are reported after the other fixtures of their
// stage, in corpus order; the ones sent in a lifecycle stage
// of their own (a connection not yet initialized) are reported after the
// rest, in corpus order: over HTTP they also run after the rest, one
// after another; over stdio, each in a process of its own, they run
// beside the pipe's silence window. The order-dependent ones (order:
// last) run, and are reported, after those, one after another.
func (r *run) fireAll(ctx context.Context, fx []*fixtures.Fixture) error {
	r.reserve(fx...)
	var now, looks, staged, last []*fixtures.Fixture
	for _, f := range fx {
		switch {
		case f.Last:
			last = append(last, f)
		case f.Stage != "":
			staged = append(staged, f)
		case isStream(f):
			looks = append(looks, f)
		default:
			now = append(now, f)
		}
	}
	// The stream looks go after the rest, so that a look, which lasts
	// while the others run, holds back no other fixture's output.
	now = append(now, looks...)
	switch {
	case r.o.Parallel <= 1:
		last = append(append(now, staged...), last...)
	case r.t.Transport() == envelope.Stdio:
		if err := r.multiplexed(ctx, now, staged); err != nil {
			return err
		}
	default:
		// A staged fixture over HTTP opens a session of its own, but a
		// server may keep what a session negotiates beyond it (one
		// server object behind a stateless transport): it goes after
		// the rest, as in sequence.
		deferred, err := r.concurrently(ctx, now)
		if err != nil {
			return err
		}
		// The fixtures a session the server ended refused go again, in a
		// new session, before the staged ones (see renew).
		last = append(append(deferred, staged...), last...)
	}
	for _, f := range last {
		if err := r.main().fixture(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// concurrently runs fx side by side, at most Parallel exchanges in
// flight, and hands each fixture's output to the sink in corpus order.
// It returns, in corpus order, the fixtures that met the end of the
// run's session (see renew): their output is dropped, for they go again.
func (r *run) concurrently(ctx context.Context, fx []*fixtures.Fixture) ([]*fixtures.Fixture, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := r.o.Parallel
	fl := newFlight(n)
	bufs := make([]*buffer, len(fx))
	done := make([]chan struct{}, len(fx))
	deferred := make([]bool, len(fx)) // each written by its fixture's goroutine, before done
	for i := range fx {
		bufs[i], done[i] = &buffer{}, make(chan struct{})
	}
	window := make(chan struct{}, ahead*n)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	order := dispatchOrder(fx, n)
	go func() {
		defer wg.Done()
		defer fl.dispatching(true)
		for k, i := range order {
			f := fx[i]
			if !fl.admit(window, stop) {
				// Nothing more is wanted; the emitter still waits on
				// every fixture it has not seen.
				for _, j := range order[k:] {
					close(done[j])
				}
				return
			}
			wg.Add(1)
			fl.started(f)
			go func() {
				defer wg.Done()
				defer close(done[i])
				defer fl.finished(f)
				l := &lane{r: r, out: bufs[i], fl: fl, mark: time.Now()}
				// A buffer's Exchange never fails: the sink's error comes
				// when the buffer is emptied.
				_ = l.fixture(cctx, f)
				if l.deferred {
					deferred[i], bufs[i].events = true, nil
				}
			}()
		}
	}()
	var err error
	for i := range fx {
		<-done[i]
		if err == nil {
			if err = bufs[i].flush(r); err != nil {
				close(stop)
				cancel()
			}
		}
		bufs[i] = nil
		if err == nil {
			<-window
		}
	}
	wg.Wait()
	var again []*fixtures.Fixture
	for i, d := range deferred {
		if d {
			again = append(again, fx[i])
		}
	}
	return again, err
}

// dispatchOrder is the order in which a concurrent run of n exchanges
// starts fx: the stream looks first, then the rest in corpus order. A
// look lasts at least streamLookMin, and while the others run; begun
// with them, that time passes beside their work, and as the looks are
// reported last (see fireAll) the output waits on none of them. At most
// n-1 looks go early, so that a slot stays free for the rest.
func dispatchOrder(fx []*fixtures.Fixture, n int) []int {
	order := make([]int, 0, len(fx))
	early := map[int]bool{}
	for i, f := range fx {
		if isStream(f) && len(early) < n-1 {
			early[i] = true
			order = append(order, i)
		}
	}
	for i := range fx {
		if !early[i] {
			order = append(order, i)
		}
	}
	return order
}

// multiplexed runs fx over one stdio pipe (see mux): one after another,
// each fixture's silence judged at the end with all the others'. The
// staged fixtures, each in a server process of its own, go meanwhile,
// while the pipe's silence window runs out. The output is handed on in
// corpus order, the staged fixtures' after the rest, as in a run in
// sequence.
func (r *run) multiplexed(ctx context.Context, fx, staged []*fixtures.Fixture) error {
	m := &mux{r: r, markers: map[string]bool{}}
	bufs := make([]*buffer, len(fx))
	for _, i := range r.requestsFirst(fx) {
		f := fx[i]
		bufs[i] = &buffer{}
		l := &lane{r: r, out: bufs[i], mux: m, mark: time.Now()}
		if err := l.fixture(ctx, f); err != nil {
			return err
		}
	}
	// Started only now: a process starting beside the pipe would take
	// the CPU the pipe's server answers with, and its markers are timed.
	aside := r.aside(ctx, staged)
	err := m.settle(ctx)
	sbufs, staled := aside()
	if staled {
		// As after a staged fixture in sequence: a fixture sent after
		// them (order: last) meets a fresh process, handshake included.
		r.mu.Lock()
		r.stale = true
		r.mu.Unlock()
	}
	if err != nil {
		return err
	}
	for i, b := range sbufs {
		// A staged fixture's process that died went beside the pipe's: a
		// server that allows one instance at a time (a lock, a port)
		// dies of that, not of the message. It goes again alone, on the
		// run's own target, as in sequence: a death then is the server's.
		if !b.died() {
			continue
		}
		alone := &buffer{}
		alone.Note(fmt.Sprintf("%s: its server process died beside the others; sent again with no other process running", staged[i].ID))
		if err := (&lane{r: r, out: alone, mark: time.Now()}).fixture(ctx, staged[i]); err != nil {
			return err
		}
		sbufs[i] = alone
	}
	for _, b := range append(bufs, sbufs...) {
		if err := b.flush(r); err != nil {
			return err
		}
	}
	return nil
}

// requestsFirst gives the order a multiplexed run sends fx in: the
// fixtures whose message is malformed as JSON-RPC (a batch, or what its
// expectation reads as a parse error or an invalid request), then the
// other requests, then those that send only notifications, each part in
// corpus order. A server that reads each line through a schema (the
// SDKs' do) drops a malformed one unanswered, and that silence is judged
// only when its --timeout window has run out: sent first, those windows
// open first and close sooner (against server-everything, whose windows
// end the run, about 0.3 s of the 11.6 s). A notification waits a
// quiet moment of its own (nothing answers it, or a reply would have
// come); sent last, those moments pass inside the requests' silence
// window instead of pushing its end back. Fixtures are independent
// unless they say otherwise (as a concurrent HTTP run has them), but a
// notification that moves the session's lifecycle
// (notifications/initialized) keeps its place: a server it unsettles
// shows that to the fixtures after it, as in sequence. The output keeps
// the corpus order either way.
func (r *run) requestsFirst(fx []*fixtures.Fixture) []int {
	var bad, reqs, notes []int
	for i, f := range fx {
		body, ok := r.filled(f)
		switch {
		case ok && movable(body):
			notes = append(notes, i)
		case ok && r.malformed(body):
			bad = append(bad, i)
		default:
			reqs = append(reqs, i)
		}
	}
	return append(append(bad, reqs...), notes...)
}

// filled is f's body filled in for the run's version; false for a
// message that is no POSTed body (a GET) or whose template cannot be
// filled in yet, which counts as a request: it may be answered.
func (r *run) filled(f *fixtures.Fixture) ([]byte, bool) {
	if f.Method != "" && f.Method != "POST" {
		return nil, false
	}
	body, err := fixtures.Expand(f.Body, fixtures.Context{Version: r.sess.version, Spoken: r.sess.spoken()})
	return body, err == nil
}

// malformed: body is a batch or a message its expectation reads as a
// parse error or an invalid request.
func (r *run) malformed(body []byte) bool {
	switch r.expect(envelope.Request{Body: body}, nil).Condition {
	case expect.CondParseError, expect.CondInvalidRequest, expect.CondBatch:
		return true
	}
	return false
}

// movable: body is a notification (or a batch of them) that is not
// notifications/initialized. A body that is not JSON counts as a
// request: it may be answered.
func movable(body []byte) bool {
	if !gjson.ValidBytes(body) || len(requestIDKeys(body)) > 0 {
		return false
	}
	v := gjson.ParseBytes(body)
	if !v.IsArray() {
		return v.Get("method").Str != "notifications/initialized"
	}
	lifecycle := false
	v.ForEach(func(_, m gjson.Result) bool {
		lifecycle = m.Get("method").Str == "notifications/initialized"
		return !lifecycle
	})
	return !lifecycle
}

// aside runs staged stdio fixtures side by side, each on a run of its
// own with a process of its own, as a staged fixture gets in sequence.
// The returned func waits for them and gives their output, in corpus
// order, and whether any of them left its process in a stage's state.
func (r *run) aside(ctx context.Context, staged []*fixtures.Fixture) func() ([]*buffer, bool) {
	bufs := make([]*buffer, len(staged))
	if len(staged) == 0 {
		return func() ([]*buffer, bool) { return nil, false }
	}
	runs := make([]*run, len(staged))
	r.mu.Lock()
	sess := session{version: r.sess.version, wire: r.sess.wire, nextID: r.sess.nextID}
	r.mu.Unlock()
	// A process starting is CPU work (node takes half a second of it):
	// starts side by side slow one another and the pipe's server, whose
	// replies are timed. At most one start per two CPUs goes at once.
	slots := make(chan struct{}, max(min(r.o.Parallel, runtime.NumCPU()/2), 1))
	var wg sync.WaitGroup
	for i, f := range staged {
		bufs[i] = &buffer{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			sr := r.sibling(bufs[i], sess)
			runs[i] = sr
			defer sr.t.Close()
			// A buffer's Exchange never fails: the sink's error comes
			// when the buffer is emptied.
			_ = (&lane{r: sr, out: bufs[i], mark: time.Now()}).fixture(ctx, f)
		}()
	}
	return func() ([]*buffer, bool) {
		wg.Wait()
		return bufs, slices.ContainsFunc(runs, func(sr *run) bool { return sr.stale })
	}
}

// sibling is a run of its own for one staged stdio fixture: the same
// options, version and facts, a target for the same command that starts
// no process until the stage asks for one, and the session sess (its id
// counter where the run's stood when the staged fixtures began, so two
// runs of the same server send the same requests).
func (r *run) sibling(out Sink, sess session) *run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &run{t: r.t.(*StdioTarget).newSibling(), o: r.o, sink: out, sess: sess, facts: r.facts, tools: r.tools, streams: r.streams, blocks: r.blocks, literal: r.literal, offered: []string{}}
}

// A buffer holds one fixture's output until its turn comes.
type buffer struct {
	events []event
}

type event struct {
	judged *Judged
	later  bool // judge it when it goes out
	note   string
	// before goes out ahead of the event (a liveness probe judged for
	// it); instead, when set, goes out in its place (the exchange sent
	// again, alone).
	before, instead []event
	replaced        bool
}

// Facts is never called for a fixture: facts are learned before any
// fixture runs.
func (b *buffer) Facts(*expect.Facts) {}

func (b *buffer) Exchange(j Judged) error {
	b.events = append(b.events, event{judged: &j})
	return nil
}

func (b *buffer) Note(n string) { b.events = append(b.events, event{note: n}) }

// died: a server process died on one of the buffer's exchanges.
func (b *buffer) died() bool { return diedIn(b.events) }

func diedIn(events []event) bool {
	return slices.ContainsFunc(events, func(e event) bool {
		return e.judged != nil && e.judged.Exchange != nil && e.judged.Exchange.Died != "" ||
			diedIn(e.before) || diedIn(e.instead)
	})
}

// later holds an exchange to be judged when it goes out.
func (b *buffer) later(j Judged) { b.events = append(b.events, event{judged: &j, later: true}) }

// flush hands the output on, judging what waited for it.
func (b *buffer) flush(r *run) error { return r.flushEvents(b.events) }

func (r *run) flushEvents(events []event) error {
	for _, e := range events {
		if err := r.flushEvents(e.before); err != nil {
			return err
		}
		if e.replaced {
			if err := r.flushEvents(e.instead); err != nil {
				return err
			}
			continue
		}
		if e.judged == nil {
			r.sink.Note(e.note)
			continue
		}
		if e.later {
			e.judged.Verdicts = r.verdicts(e.judged)
		}
		if err := r.sink.Exchange(*e.judged); err != nil {
			return err
		}
	}
	return nil
}

// A flight is what the fixtures of a concurrent run share: the slots
// that bound the exchanges in flight, the ids in flight, and whether any
// fixture other than a stream look is still at work.
type flight struct {
	slots chan struct{}
	mu    sync.Mutex
	ids   map[string]chan struct{} // id key → closed when the exchange that holds it ends
	// running counts the fixtures at work other than stream looks;
	// waiting says the dispatcher starts no more until output goes out
	// (or has started them all).
	running int
	waiting bool
}

func newFlight(n int) *flight {
	return &flight{slots: make(chan struct{}, n), ids: map[string]chan struct{}{}}
}

// isStream: a fixture that looks at a stream which need not end (a GET
// stream, or a reply such as subscriptions/listen's).
func isStream(f *fixtures.Fixture) bool { return f.Method == "GET" || f.Stream }

// started and finished count the fixtures at work.
func (fl *flight) started(f *fixtures.Fixture) {
	if !isStream(f) {
		fl.mu.Lock()
		fl.running++
		fl.mu.Unlock()
	}
}

func (fl *flight) finished(f *fixtures.Fixture) {
	if !isStream(f) {
		fl.mu.Lock()
		fl.running--
		fl.mu.Unlock()
	}
}

// admit takes a place in the window for one more fixture, saying while
// it waits that it does; false when stop closed first.
func (fl *flight) admit(window chan<- struct{}, stop <-chan struct{}) bool {
	select {
	case window <- struct{}{}:
		return true
	default:
	}
	fl.dispatching(true)
	defer fl.dispatching(false)
	select {
	case window <- struct{}{}:
		return true
	case <-stop:
		return false
	}
}

// dispatching says whether the dispatcher waits (true: it starts nothing
// until output goes out, or it has started everything).
func (fl *flight) dispatching(waiting bool) {
	fl.mu.Lock()
	fl.waiting = waiting
	fl.mu.Unlock()
}

// idle: nothing but stream looks is at work, and nothing is about to be.
func (fl *flight) idle() bool {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.running == 0 && fl.waiting
}

// take waits until none of keys is in flight and a slot is free, then
// holds them; the returned func lets them go. Keys are taken in sorted
// order, so two exchanges never wait on each other. A nil flight (a run
// in sequence) holds nothing.
func (fl *flight) take(keys []string) func() {
	if fl == nil {
		return func() {}
	}
	var held []chan struct{}
	var heldKeys []string
	for _, k := range keys {
		for {
			fl.mu.Lock()
			busy, ok := fl.ids[k]
			if !ok {
				ch := make(chan struct{})
				fl.ids[k] = ch
				fl.mu.Unlock()
				held, heldKeys = append(held, ch), append(heldKeys, k)
				break
			}
			fl.mu.Unlock()
			// The holder's exchange is bounded in time, so this ends.
			<-busy
		}
	}
	fl.slots <- struct{}{}
	return func() {
		<-fl.slots
		fl.mu.Lock()
		defer fl.mu.Unlock()
		for i, k := range heldKeys {
			delete(fl.ids, k)
			close(held[i])
		}
	}
}

// idKeys names the ids a request occupies while it is in flight, where
// the peer keys its bookkeeping by id: in a 2025-xx session over HTTP
// (the SDKs map an id to the stream its reply goes to) and on stdio (one
// pipe, replies matched by id). A 2026-07-28 HTTP request stands alone.
// A body with no readable id occupies "?": on stdio its reply, if any,
// can only be told apart when it is the only one.
func (r *run) idKeys(req envelope.Request) []string {
	if req.Method != "" && req.Method != "POST" {
		return nil
	}
	http := r.t.Transport() == envelope.HTTP
	if http && r.sess.version == envelope.V20260728 {
		return nil
	}
	keys := requestIDKeys(req.Body)
	if http {
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == unreadableID })
	}
	return keys
}

// unreadableID is the key of a request whose id cannot be read.
const unreadableID = "?"

// requestIDKeys reads the ids a body carries: one for a request, one per
// element of a batch, none for a notification; sorted, without repeats.
func requestIDKeys(body []byte) []string {
	body = trimBOM(body)
	var keys []string
	if envelope.TooDeep(body) {
		return []string{unreadableID}
	}
	if !gjson.ValidBytes(body) {
		// A lenient reader may still find the id of a body that is not
		// quite JSON (invalid UTF-8 in a value, a truncated tail), and
		// answer with it.
		keys = append(keys, unreadableID)
		if id := gjson.GetBytes(body, "id"); id.Type == gjson.String || id.Type == gjson.Number {
			body = fmt.Appendf(nil, `{"id":%s}`, id.Raw)
		} else {
			return keys
		}
	}
	v := gjson.ParseBytes(body)
	add := func(m gjson.Result) {
		if !m.IsObject() {
			keys = append(keys, unreadableID)
			return
		}
		id := m.Get("id")
		switch {
		case !id.Exists():
		case id.Type == gjson.String:
			keys = append(keys, envelope.IDKey(id))
		case id.Type == gjson.Number:
			keys = append(keys, envelope.IDKey(id))
			if !envelope.IsInteger(id.Raw) || envelope.BeyondDouble(id) {
				// An id MCP forbids (1.5), or one a receiver may not hold:
				// it may be refused with a null id as unreadable.
				keys = append(keys, unreadableID)
			}
		default:
			keys = append(keys, unreadableID)
		}
		if id.Exists() && invalidRequest(m) {
			// No request object by JSON-RPC: its id may go undetected,
			// and the error come with a null one (AMB-1), so it is owed
			// an id-less reply as much as its own.
			keys = append(keys, unreadableID)
		}
	}
	switch {
	case v.IsArray():
		n := 0
		v.ForEach(func(_, m gjson.Result) bool {
			add(m)
			n++
			return true
		})
		if n == 0 {
			keys = append(keys, unreadableID)
		}
	default:
		add(v)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// invalidRequest: m is no JSON-RPC 2.0 request object (jsonrpc not
// "2.0", method missing or not a string, params neither object nor
// array), the requests expect.Build lets a server answer with a null id.
func invalidRequest(m gjson.Result) bool {
	params := m.Get("params")
	return m.Get("jsonrpc").Str != "2.0" || m.Get("jsonrpc").Type != gjson.String ||
		m.Get("method").Type != gjson.String ||
		params.Exists() && !params.IsObject() && !params.IsArray()
}

// trimBOM drops a leading UTF-8 byte order mark, which a receiver may
// ignore (RFC 8259 §8.1).
func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		return b[3:]
	}
	return b
}
