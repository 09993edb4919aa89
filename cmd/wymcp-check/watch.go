package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/proxy"
	"github.com/wymcp/wymcp-check/report"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transcript"
)

// relayOptions are the flags proxy and wrap share.
type relayOptions struct {
	MaxBytes int64
	Timeout  time.Duration
	Record   string
	Log      string
	Report   string
	Format   string
	Contract string
	Schema   string
	FailOn   string
	Color    string
	Verbose  bool
	// changed says whether the user set a flag (--format beside a
	// --report FORMAT=PATH).
	changed func(name string) bool
}

func addRelayFlags(cmd *cobra.Command, o *relayOptions) {
	f := cmd.Flags()
	f.Int64Var(&o.MaxBytes, "max-bytes", proxy.DefaultMaxBytes, "bound on one message kept for judging; larger ones are relayed whole, not judged")
	f.DurationVar(&o.Timeout, "timeout", proxy.DefaultTimeout, "how long a request may wait for its reply before a server that answers others is judged to have left it unanswered (RPC1006); the client still waits as long as it likes")
	f.StringVar(&o.Record, "record", "", "write every judged exchange to `FILE` as a transcript (lint reads it; secrets redacted)")
	f.StringVar(&o.Log, "log", "", "write the per-message lines and the summary to `FILE` instead")
	f.StringVar(&o.Report, "report", "", "at the end, write a report of every judged exchange to `FILE` in the --format, or FORMAT=PATH as check's --report takes it (html=r.html, junit=r.xml)")
	addEnum(cmd, &o.Format, "format", "json", "format of --report", report.Formats()...)
	f.StringVar(&o.Contract, "contract", "strict", "the error-envelope contract: strict, spec, or a contract `FILE`")
	f.StringVar(&o.Schema, "schema", "builtin", "protocol schema: builtin, off, or a schema `FILE`")
	addEnum(cmd, &o.FailOn, "fail-on", "fail", "what fails the gate: fail = any fail or error; warn = warnings too", "fail", "warn")
	addEnum(cmd, &o.Color, "color", "auto", "color the per-message lines", "auto", "always", "never")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "show each message's body and HTTP headers")
}

// watchOutput is where a relay's lines go: a file with --log, else the
// stream given (stdout for proxy; stderr for wrap, whose stdout is the
// protocol). Writes are serialised so a line is never torn by another
// writer on the same stream (a wrapped server's stderr).
type watchOutput struct {
	mu    sync.Mutex
	w     io.Writer
	color bool
	close func() error
}

func (o *watchOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.w.Write(p)
}

// openRelay opens what a relay writes, the lines (--log, else def),
// --record and --report, and the watcher that judges the traffic. It
// checks every flag first, and opens the files so that a failure
// destroys none (see outFiles): a --report that cannot be opened, or a
// --contract that cannot be read, leaves an earlier log and recording
// as they were. The returned func closes --record and --report and
// writes the report's end.
func openRelay(s *streams, o *relayOptions, red *proxy.Redactor, def io.Writer, tty bool, target string) (_ *watchOutput, _ *watcher, _ func(notes []string) error, err error) {
	var format, path string
	if o.Report != "" {
		if format, path, err = relayReport(o); err != nil {
			return nil, nil, nil, err
		}
	}
	// A file written twice, or written over while it is read, is refused
	// with or without --report (--log c.json --contract c.json emptied
	// the contract before it was read).
	var writes []flagPath
	for _, w := range []flagPath{{"--report", path}, {"--record", o.Record}, {"--log", o.Log}} {
		if w.path != "" {
			writes = append(writes, w)
		}
	}
	if err := checkWrites(writes, fileReads(flagPath{"--contract", o.Contract}, flagPath{"--schema", o.Schema})); err != nil {
		return nil, nil, nil, err
	}
	files := &outFiles{}
	defer func() {
		if err != nil {
			files.abandon()
		}
	}()
	out := &watchOutput{w: def, color: s.colorFor(o.Color, tty), close: func() error { return nil }}
	if o.Log != "" {
		f, err := files.open(o.Log)
		if err != nil {
			return nil, nil, nil, &usageError{fmt.Errorf("--log: %w", err)}
		}
		out = &watchOutput{w: f, color: o.Color == "always", close: f.Close}
	}
	w, err := newWatcher(o, out, red)
	if err != nil {
		return nil, nil, nil, err
	}
	var record *os.File
	if o.Record != "" {
		if record, err = files.open(o.Record); err != nil {
			return nil, nil, nil, &usageError{fmt.Errorf("--record: %w", err)}
		}
	}
	if o.Report != "" {
		ro := &reportOptions{Format: format, Output: path, Contract: o.Contract, FailOn: o.FailOn, Color: "never", Verbose: o.Verbose, Schema: o.Schema,
			writes: writes[1:] /* --record, --log */, mainFlag: "--report", files: files}
		// (open empties the batch's files once the report is open, or
		// closes them all.)
		if w.ss, err = ro.open(s, report.Meta{Target: target, Protocol: "per exchange (negotiated in the session, or read from the request)"}); err != nil {
			files = nil
			return nil, nil, nil, err
		}
	} else if err := files.commit(); err != nil {
		return nil, nil, nil, &usageError{err}
	}
	var closers []func() error
	if record != nil {
		w.record = record
		closers = append(closers, record.Close)
		// How the relay judges, so that lint of the recording judges alike.
		if err := transcript.WriteRun(record, transcript.Run{Contract: o.Contract, Schema: o.Schema}); err != nil {
			record.Close()
			out.close()
			if w.ss != nil {
				w.ss.closeAll()
			}
			return nil, nil, nil, fmt.Errorf("--record %s: %w", o.Record, err)
		}
	}
	return out, w, func(notes []string) error {
		var first error
		for _, c := range closers {
			if err := c(); err != nil && first == nil {
				first = fmt.Errorf("--record: %w", err)
			}
		}
		if w.ss != nil {
			w.mu.Lock()
			for _, n := range notes {
				w.ss.note(n)
			}
			w.ss.sum.Aborted = w.neverReachedLocked()
			ss := w.ss
			w.mu.Unlock()
			if err := ss.finish(); err != nil && !errors.Is(err, errFindings) && first == nil {
				first = err
			}
		}
		return first
	}, nil
}

// writeWithin writes text, giving up after d: a terminal or pipe nobody
// reads must not keep the command from exiting.
func writeWithin(w io.Writer, text string, d time.Duration) {
	done := make(chan struct{})
	go func() {
		io.WriteString(w, text)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// palette colors the lines; its colors print plain when color is off.
type palette struct {
	ok, warn, fail, err, dim, in, out *color.Color
}

func newPalette(on bool) palette {
	mk := func(a ...color.Attribute) *color.Color { return report.Color(on, a...) }
	return palette{ok: mk(color.FgGreen), warn: mk(color.FgYellow), fail: mk(color.FgRed, color.Bold),
		err: mk(color.FgMagenta, color.Bold), dim: mk(color.Faint), in: mk(color.FgCyan), out: mk(color.FgBlue)}
}

// A watcher is the relays' Observer for a person at a terminal: it
// judges the server's reply to each client request, prints a line per
// message with the verdict, and records and reports the exchanges. Its
// methods run on the relay's delivery goroutine; mu guards what the
// command reads at the end.
type watcher struct {
	mu sync.Mutex
	// facts are what the server declared in the traffic so far
	// (initialize, server/discover, a whole tools/list): every later reply
	// is judged with them, as a check run judges with its own.
	facts    *expect.Facts
	out      io.Writer
	pal      palette
	verbose  bool
	red      *proxy.Redactor
	contract *envelope.Contract
	schemas  checks.SchemaValidator
	tools    schema.ToolCache // a client lists tools again and again
	// streams are the SSE event ids of the replies judged so far, in the
	// order they are judged and recorded (as lint reads the recording).
	streams *checks.Streams
	record  io.Writer          // nil: no --record
	ss      *session           // nil: no --report
	held    *proxy.Observation // a message that completes a pair, printed with its verdict
	// later are answers on POST streams whose pairs come later (the
	// stream is read on past them), printed with their verdicts then;
	// closedEarly the client requests they closed, by number, and
	// whether the client had cancelled each then.
	later       []*proxy.Observation
	closedEarly map[uint64]bool
	// heldClient are the verdicts of a held client message (its answer
	// to a server request), printed with it.
	heldClient []checks.Verdict
	// client judges what the client sends; lastSeq is the last message
	// delivered, to notice the ones the relay dropped.
	client  *clientJudge
	lastSeq uint64

	// inflight are the client's requests awaiting their answer, and
	// cancelled those of them it cancelled with notifications/cancelled,
	// by session and id: no reply is owed to these (the receiver SHOULD
	// NOT answer, T-STDIO-7). An entry goes when its exchange is judged,
	// so an id used again is a new request; both maps are emptied if
	// they reach maxCancelled, which only forgets cancellations.
	inflight  map[string]bool
	cancelled map[string]bool
	// keys names the requests in inflight by their message number, for
	// an answer that passes before its exchange is judged.
	keys map[uint64]string

	server    tallies // exchanges judged, and how
	cTally    tallies // client messages judged, and how
	notJudged int
	// unreached counts the exchanges whose request never reached the
	// server (the proxy answered 502 itself), first saying why; reached
	// whether any exchange had the server's part.
	unreached      int
	unreachedFirst string
	reached        bool
	maxBytes       int64 // --max-bytes, for the notes of what it kept from judging
	verdicts       report.Summary
	failures       []string // --record and --report write errors, once each
}

// newWatcher loads the contract and schemas the judge needs.
func newWatcher(o *relayOptions, out *watchOutput, red *proxy.Redactor) (*watcher, error) {
	c, err := envelope.LoadContract(o.Contract)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--contract: %w", err)}
	}
	sv, err := (&reportOptions{Schema: o.Schema}).validator()
	if err != nil {
		return nil, err
	}
	return &watcher{out: out, pal: newPalette(out.color), verbose: o.Verbose, red: red, contract: c, schemas: sv, maxBytes: o.MaxBytes,
		client: newClientJudge(o.Schema, checks.All()), streams: checks.NewStreams()}, nil
}

// judge judges the server's reply to one client request. It is the one
// place the relays call the judge: the exchange is what the client sent
// and what the server answered, and what the reply must be is derived
// from that request, as for check, send and lint. The secrets seen on
// the way (--header, the client's Authorization) go to the echo checks,
// which never quote them.
func (w *watcher) judge(fixture string, ex *envelope.Exchange, ov *expect.Override) ([]checks.Verdict, *expect.Expectation) {
	exp := expect.Build(ex, w.facts, ov)
	return checks.Judge(checks.Input{Fixture: fixture, Exchange: ex, Expect: exp, Contract: w.contract, Schemas: w.schemas, Secrets: w.red.Secrets(), ToolCache: &w.tools, Reused: w.streams.Reused(ex)}, checks.All()), exp
}

// maxCancelled bounds the cancellations remembered.
const maxCancelled = 4096

// cancelKey names a request by its session (HTTP) and id, compared as
// ids are (the string "5" written with an escape is "5"); "" for a
// message without a usable id.
func cancelKey(h http.Header, id gjson.Result) string {
	k := envelope.IDKey(id)
	if k == "" {
		return ""
	}
	return envelope.HeaderGet(h, "Mcp-Session-Id") + "\x00" + k
}

func observedHeader(o *proxy.Observation) http.Header {
	if o.HTTP != nil {
		return o.HTTP.Header
	}
	return nil
}

// noteClient tracks the client's requests in flight and the ones among
// them it cancels.
func (w *watcher) noteClient(o *proxy.Observation) {
	if o.Dir != proxy.ClientToServer || o.Oversized {
		return
	}
	if w.inflight == nil || len(w.inflight) >= maxCancelled || len(w.keys) >= maxCancelled {
		w.inflight, w.cancelled, w.keys = map[string]bool{}, map[string]bool{}, map[uint64]string{}
	}
	switch {
	case o.Kind == proxy.KindRequest:
		if k := cancelKey(observedHeader(o), gjson.GetBytes(o.Raw, "id")); k != "" {
			w.inflight[k] = true
			w.keys[o.Seq] = k
		}
	case o.Method == "notifications/cancelled":
		// Only a request still awaiting its answer is cancelled: a
		// cancellation of one answered already, or never sent, binds
		// nothing that comes later.
		if k := cancelKey(observedHeader(o), gjson.GetBytes(o.Raw, "params.requestId")); k != "" && w.inflight[k] {
			w.cancelled[k] = true
		}
	}
}

// settle ends the tracking of a request whose exchange is judged; true
// when the client had cancelled it.
func (w *watcher) settle(ex *envelope.Exchange) bool {
	return w.settleKey(cancelKey(ex.Request.Header, gjson.GetBytes(ex.Request.Body, "id")))
}

// settleSeq is settle for the request numbered seq, whose answer passed.
func (w *watcher) settleSeq(seq uint64) bool {
	k, ok := w.keys[seq]
	if !ok {
		return false
	}
	delete(w.keys, seq)
	return w.settleKey(k)
}

func (w *watcher) settleKey(k string) bool {
	if k == "" {
		return false
	}
	cancelled := w.cancelled[k]
	delete(w.inflight, k)
	delete(w.cancelled, k)
	return cancelled
}

// override is what the relay knows of an exchange beyond its bytes: a
// request the client cancelled is owed no reply. The transcript carries
// it, so lint judges the exchange the same way.
func override(cancelled bool) *expect.Override {
	if !cancelled {
		return nil
	}
	ov := &expect.Override{}
	_ = ov.Set("expect-reply", "false") // a constant line of the vocabulary
	return ov
}

// learn takes in what an exchange declares about the server, and records
// the new facts, so lint of the recording judges what follows with them.
func (w *watcher) learn(ex *envelope.Exchange) string {
	return w.setFacts(w.facts.Learn(ex))
}

// setFacts makes f the facts later replies are judged with, and records
// them when they changed.
func (w *watcher) setFacts(f *expect.Facts) string {
	if f == w.facts {
		return ""
	}
	w.facts = f
	if w.record != nil {
		// The facts quote the server's words (a tool's description),
		// which may echo a credential: scrubbed like every body.
		var line bytes.Buffer
		err := transcript.WriteFacts(&line, f)
		if err == nil {
			_, err = w.record.Write(w.red.Scrub(line.Bytes()))
		}
		if err != nil {
			return w.failOnce("--record: " + err.Error())
		}
	}
	return ""
}

// Message and Exchange build their text under mu and write it after:
// only the delivery goroutine writes, so lines keep their order, and an
// output nobody reads blocks that goroutine alone, never the summary.

func (w *watcher) Message(o proxy.Observation) {
	w.mu.Lock()
	text := w.flushHeld() + w.lost(o.Seq)
	var vs []checks.Verdict
	switch {
	case o.Dir == proxy.ClientToServer:
		w.noteClient(&o)
		if t := clientTraffic(&o); t != nil {
			vs = w.client.take(t, w.facts)
			text += w.traffic(t)
			text += w.keepClient(t.Fixture, vs)
		}
	case o.Kind == proxy.KindNotification && !o.Oversized:
		// A list the server says changed is no longer known in full.
		text += w.setFacts(w.facts.Forget(o.Method))
	case o.Kind == proxy.KindRequest || o.Kind == proxy.KindBatch || o.Kind == proxy.KindOther:
		if t := serverRequestTraffic(&o); t != nil {
			w.client.take(t, w.facts)
			text += w.traffic(t)
		}
	}
	switch {
	case o.Completes && o.Later:
		text += w.holdLater(&o)
	case o.Completes:
		w.held, w.heldClient = &o, vs
	default:
		text += w.line(&o, w.clientTally(vs)) + w.body(&o) + w.findings(vs)
	}
	w.mu.Unlock()
	w.print(text)
}

// maxLater bounds the answers held for their pairs; beyond it the
// oldest is printed without its verdict (its pair was dropped).
const maxLater = 256

// holdLater holds an answer whose pair comes later. The client has the
// answer now, and may go on at once: its request is closed for the
// client's judge now, not when the exchange is judged.
func (w *watcher) holdLater(o *proxy.Observation) string {
	var text string
	if t := answeredTraffic(o); t != nil {
		w.client.take(t, w.facts)
		text += w.traffic(t)
		if w.closedEarly == nil || len(w.closedEarly) >= maxCancelled {
			w.closedEarly = map[uint64]bool{}
		}
		// A cancellation the client sends after the answer binds nothing.
		w.closedEarly[t.Request] = w.settleSeq(t.Request)
	}
	if len(w.later) >= maxLater {
		text += w.line(w.later[0], "") + w.body(w.later[0])
		w.later = w.later[1:]
	}
	w.later = append(w.later, o)
	return text
}

// takeEarly reports whether request seq was closed when its answer
// passed, and sets *cancelled to what was known then; it forgets seq.
func takeEarly(early map[uint64]bool, seq uint64, cancelled *bool) bool {
	c, ok := early[seq]
	if ok {
		delete(early, seq)
		*cancelled = c
	}
	return ok
}

// takeLater returns the held answer seq, if any, and stops holding it.
func (w *watcher) takeLater(seq uint64) *proxy.Observation {
	for i, o := range w.later {
		if o.Seq == seq {
			w.later = slices.Delete(w.later, i, i+1)
			return o
		}
	}
	return nil
}

// lost notes the messages the relay dropped before seq (its queue was
// full): the client's session history has a hole from here on.
func (w *watcher) lost(seq uint64) string {
	n := int64(seq) - int64(w.lastSeq) - 1
	w.lastSeq = max(w.lastSeq, seq)
	if n <= 0 {
		return ""
	}
	t := &transcript.Traffic{Kind: transcript.TrafficLost, Lost: n}
	w.client.take(t, w.facts)
	return w.traffic(t)
}

// traffic records one event of the traffic for lint to replay; it
// returns the line of a write error, once.
func (w *watcher) traffic(t *transcript.Traffic) string {
	if w.record == nil {
		return ""
	}
	c := *t
	if c.Body != nil {
		c.Body = w.red.Scrub(c.Body)
	}
	if err := transcript.WriteTraffic(w.record, &c); err != nil {
		return w.failOnce("--record: " + err.Error())
	}
	return ""
}

// clientTally counts the verdicts of one client message and names its
// outcome for its line: nothing when all is well (the line stays as it
// was), else WARN or FAIL with the count.
func (w *watcher) clientTally(vs []checks.Verdict) string {
	if vs == nil {
		return ""
	}
	if out, clean := w.count(&w.cTally, vs); !clean {
		return out
	}
	return ""
}

// keepClient reports a client message's verdicts (--report).
func (w *watcher) keepClient(fixture string, vs []checks.Verdict) string {
	if w.ss == nil || vs == nil {
		return ""
	}
	if err := w.ss.exchange(&report.Result{Fixture: fixture, Verdicts: vs}); err != nil {
		return w.failOnce("--report: " + err.Error())
	}
	return ""
}

// flushHeld returns a held line without its latency: its pair was lost
// (the Observer fell behind and the relay dropped it).
func (w *watcher) flushHeld() string {
	if w.held == nil {
		return ""
	}
	text := w.line(w.held, w.clientTally(w.heldClient)) + w.body(w.held) + w.findings(w.heldClient)
	w.held, w.heldClient = nil, nil
	return text
}

func (w *watcher) Exchange(p proxy.Pair) {
	w.mu.Lock()
	text := w.exchange(p)
	w.mu.Unlock()
	w.print(text)
}

func (w *watcher) exchange(p proxy.Pair) string {
	var reply *proxy.Observation
	var replyClient []checks.Verdict
	if w.held != nil && w.held.Seq == p.ReplySeq {
		reply, replyClient, w.held, w.heldClient = w.held, w.heldClient, nil, nil
	}
	if ex := p.Exchange; !p.Unreached && (ex.Response != nil || ex.Died != "" || ex.Unanswered || ex.Malformed != "" || p.Asker == proxy.ServerToClient) {
		w.reached = true // the server had the request, or asked its own
	}
	var b strings.Builder
	b.WriteString(w.flushHeld())
	if reply == nil && p.ReplySeq != 0 {
		reply = w.takeLater(p.ReplySeq)
	}
	fixture := pairName(p)
	ex := p.Exchange
	cancelled := false
	switch {
	case p.Asker != proxy.ClientToServer || p.Tail:
		// A server's request is closed by the client's answer; a GET
		// stream's message judged after its head closes nothing.
	case takeEarly(w.closedEarly, p.RequestSeq, &cancelled):
		// Closed when its answer passed.
	default:
		delete(w.keys, p.RequestSeq)
		cancelled = w.settle(ex)
		// The client's request is no longer awaiting its answer; the
		// session learns what the answer says (the version, the session).
		t := closedTraffic(p, reply)
		w.client.take(t, w.facts)
		b.WriteString(w.traffic(t))
	}
	if cancelled && reply == nil && ex.Failure != "" && (ex.Response == nil || ex.Transport == envelope.Stdio) {
		// The client cancelled it, and no reply is owed (T-STDIO-7):
		// that none came before the session ended is no failure to
		// judge, but the reply the cancellation asked for. (On stdio
		// what came meanwhile is whole lines, a listen's acknowledgment
		// say, judged with it; an HTTP body cut short is not.)
		c := *ex
		c.Failure = ""
		ex = &c
	}
	switch {
	case p.Asker == proxy.ServerToClient:
		// The client's answer was judged as it passed (the client checks).
		if reply != nil {
			suffix := w.pal.dim.Sprint(latency(p))
			if v := w.clientTally(replyClient); v != "" {
				suffix += "  " + v
			}
			b.WriteString(w.line(reply, suffix) + w.body(reply) + w.findings(replyClient))
		} else {
			fmt.Fprintf(&b, "%s %s %s: %s\n", stamp(p.Done), w.pal.warn.Sprint("✗"), report.Sanitize(fixture+" (the server's request)"), report.Sanitize(ex.Failure))
		}
	case p.Oversized:
		// The checker's own bound, not the server's fault: "could not
		// judge", an error, as check and send give a reply over
		// --max-bytes (DESIGN), so a gate does not pass what was never
		// read. What was kept is recorded with the failure, and lint
		// judges it alike.
		c := *ex
		c.Failure = envelope.JoinNotes(fmt.Sprintf("the request or its reply is larger than --max-bytes (%d bytes): relayed whole, not judged (a higher --max-bytes judges it)", w.maxBytes), ex.Failure)
		ov := override(cancelled)
		vs, exp := w.judge(fixture, &c, ov)
		verdict := w.tally(vs)
		if reply != nil {
			b.WriteString(w.line(reply, w.pal.dim.Sprint(latency(p))+"  "+verdict) + w.body(reply))
		} else {
			fmt.Fprintf(&b, "%s   %s: over --max-bytes  %s\n", stamp(p.Done), report.Sanitize(fixture), verdict)
		}
		b.WriteString(w.findings(vs))
		b.WriteString(w.keep(fixture, &c, ov, exp, vs))
	case p.Unreached:
		// The proxy could not connect to the server: the request never
		// reached it, and the client got the proxy's own 502. That is
		// no exchange of the server's to pass: it could not be judged,
		// an error, as check gives an exchange it could not drive
		// (DESIGN: never a pass), and it fails the gate. A run in which
		// no request reached the server ends as check's does with an
		// unreachable target (see neverReached).
		if w.unreached++; w.unreachedFirst == "" {
			w.unreachedFirst = ex.Failure
		}
		ov := override(cancelled)
		vs, exp := w.judge(fixture, ex, ov)
		verdict := w.tally(vs)
		fmt.Fprintf(&b, "%s %s %s: no reply: %s  %s\n", stamp(p.Done), w.pal.warn.Sprint("✗"), report.Sanitize(fixture), report.Sanitize(ex.Failure), verdict)
		b.WriteString(w.findings(vs))
		b.WriteString(w.keep(fixture, ex, ov, exp, vs))
	case ex.Failure != "" && ex.Died == "" && !ex.Unanswered && (ex.Response == nil || !ex.Response.Truncated):
		// No reply came, for a reason the relay knows (the client went
		// away, the server ended or could not be reached), or the one
		// that came cannot be told to be this request's (the client gave
		// two requests one id): nothing of the server's to judge. (A
		// server that died on the request is judged: PRO1005; one that
		// answered neither the request nor the relay's liveness probe,
		// Unanswered, could not be judged: an error, as in check; so is
		// a stream the relay stopped reading at check's bounds before
		// its answer, Truncated.)
		w.notJudged++
		what := "no reply"
		switch {
		case reply != nil:
			what = "not judged"
		case cancelled:
			// The client cancelled it: no reply is owed (review rev72:
			// it read as a reply lost).
			what = "cancelled by the client, no reply owed"
		}
		fmt.Fprintf(&b, "%s %s %s: %s: %s\n", stamp(p.Done), w.pal.warn.Sprint("✗"), report.Sanitize(fixture), what, report.Sanitize(ex.Failure))
		if reply != nil {
			b.WriteString(w.line(reply, "") + w.body(reply))
		}
	default:
		ov := override(cancelled)
		vs, exp := w.judge(fixture, ex, ov)
		verdict := w.tally(vs)
		switch {
		case reply != nil:
			b.WriteString(w.line(reply, w.pal.dim.Sprint(latency(p))+"  "+verdict) + w.body(reply))
		case verdict != w.pal.ok.Sprint("ok") || w.verbose:
			// A notification nothing answered, or a stream that ended
			// without the answer: the verdict stands on its own line.
			fmt.Fprintf(&b, "%s   %s: %s  %s\n", stamp(p.Done), report.Sanitize(fixture), noReplyText(ex), verdict)
		}
		b.WriteString(w.findings(vs))
		b.WriteString(w.keep(fixture, ex, ov, exp, vs))
		b.WriteString(w.learn(ex))
	}
	return b.String()
}

func noReplyText(ex *envelope.Exchange) string {
	switch {
	case ex.Response == nil:
		return "no reply"
	case ex.Response.Cut:
		// Still open, or broken off, when its silence was judged; the
		// finding's note says which.
		return "no answer in the reply"
	case ex.Transport == envelope.Stdio:
		// What the server wrote while it waited, none its response.
		return "no response among the lines that came"
	}
	return "the stream ended without the answer"
}

// tally counts the verdicts of one exchange and names its outcome.
func (w *watcher) tally(vs []checks.Verdict) string {
	out, _ := w.count(&w.server, vs)
	return out
}

// tallies count the messages of one side judged, and how.
type tallies struct{ judged, clean, warned, failed int }

// count adds one message's verdicts to t and names its outcome; clean:
// nothing failed or warned.
func (w *watcher) count(t *tallies, vs []checks.Verdict) (out string, clean bool) {
	var s report.Summary
	for _, v := range vs {
		s.Add(v)
		w.verdicts.Add(v)
	}
	t.judged++
	switch {
	case s.Fail > 0 || s.Error > 0:
		t.failed++
		return w.pal.fail.Sprintf("FAIL %d", s.Fail+s.Error), false
	case s.Warn > 0:
		t.warned++
		return w.pal.warn.Sprintf("WARN %d", s.Warn), false
	}
	t.clean++
	return w.pal.ok.Sprint("ok"), true
}

// findings lists what failed, warned or could not be judged beneath
// the line, with the offending path. (Passes and skips are counted in
// the summary and listed by --report with -v.)
func (w *watcher) findings(vs []checks.Verdict) string {
	var b strings.Builder
	for _, v := range vs {
		switch v.Status {
		case checks.StatusFail, checks.StatusWarn:
			for _, f := range v.Findings {
				label := w.pal.fail.Sprint("fail")
				if f.Status == checks.StatusWarn {
					label = w.pal.warn.Sprint("warn")
				}
				fmt.Fprintf(&b, "      %s %-8s %s: %s\n", label, v.Check.ID, report.Sanitize(f.Path), report.Sanitize(f.Message))
			}
		case checks.StatusError:
			fmt.Fprintf(&b, "      %s %-8s could not judge: %s\n", w.pal.err.Sprint("error"), v.Check.ID, report.Sanitize(v.Reason))
		}
	}
	return b.String()
}

// keep records and reports one judged exchange; it returns the line
// of a write error, once per kind.
func (w *watcher) keep(fixture string, ex *envelope.Exchange, ov *expect.Override, exp *expect.Expectation, vs []checks.Verdict) string {
	var text string
	if w.record != nil {
		if err := transcript.Write(w.record, fixture, w.scrubbed(ex), ov); err != nil {
			text += w.failOnce("--record: " + err.Error())
		}
	}
	if w.ss != nil {
		if err := w.ss.exchange(&report.Result{Fixture: fixture, Exchange: ex, Expect: exp, Verdicts: vs}); err != nil {
			text += w.failOnce("--report: " + err.Error())
		}
	}
	return text
}

// scrubbed is a copy of ex with the secrets that passed taken out of
// its bodies (its headers are redacted already): a transcript is shared.
func (w *watcher) scrubbed(ex *envelope.Exchange) *envelope.Exchange {
	return envelope.ScrubExchange(ex, w.red.Secrets())
}

func (w *watcher) failOnce(msg string) string {
	if slices.Contains(w.failures, msg) {
		return ""
	}
	w.failures = append(w.failures, msg)
	return w.pal.err.Sprint("error") + " " + report.Sanitize(msg) + "\n"
}

func (w *watcher) print(s string) {
	if s != "" {
		io.WriteString(w.out, s)
	}
}

// line is one message as a person reads it: time, direction, its place
// in the order, what it is, its size; suffix adds latency and verdict.
func (w *watcher) line(o *proxy.Observation, suffix string) string {
	arrow := w.pal.out.Sprint("→")
	if o.Dir == proxy.ServerToClient {
		arrow = w.pal.in.Sprint("←")
	}
	var parts []string
	if h := o.HTTP; h != nil {
		if o.Dir == proxy.ClientToServer {
			parts = append(parts, h.Method)
			if !h.Endpoint {
				parts = append(parts, h.Path)
			}
		} else {
			switch {
			case h.Event > 0:
				// Which stream: a POST's, or the GET stream's.
				parts = append(parts, fmt.Sprintf("event %d of #%d:", h.Event, h.Request))
			case h.Stream && o.Note == "":
				parts = append(parts, fmt.Sprintf("%d event stream", h.Status))
			case h.Stream:
				parts = append(parts, fmt.Sprintf("stream of #%d:", h.Request))
			default:
				parts = append(parts, fmt.Sprint(h.Status))
				if o.Size == 0 {
					parts = append(parts, "(no body)")
				}
			}
		}
	}
	if d := describeMessage(o); d != "" {
		parts = append(parts, d)
	}
	// Traffic is made safe before color is added: the colors' own
	// escapes must reach the terminal, the traffic's must not.
	text := report.Sanitize(strings.Join(parts, " "))
	if o.Size > 0 {
		text += " " + w.pal.dim.Sprint("("+size(o.Size)+")")
	}
	switch {
	case o.Note != "" && o.Kind == proxy.KindNone && o.Size == 0:
		text += " " + w.pal.dim.Sprint(report.Sanitize(o.Note))
	case o.Note != "":
		text += w.pal.dim.Sprint(" — " + report.Sanitize(o.Note))
	}
	if h := o.HTTP; h != nil && h.Failure != "" {
		text += " " + w.pal.warn.Sprint("— "+report.Sanitize(h.Failure))
	}
	if suffix != "" {
		text += "  " + suffix
	}
	return fmt.Sprintf("%s %s %s %s\n", stamp(o.Time), arrow, w.pal.dim.Sprintf("#%d", o.Seq), text)
}

// describeMessage names a message: its method and id, or what answered.
func describeMessage(o *proxy.Observation) string {
	switch o.Kind {
	case proxy.KindRequest:
		return o.Method + " id " + clip(o.ID, 40)
	case proxy.KindNotification:
		return o.Method
	case proxy.KindResponse:
		if o.Oversized {
			return "response id " + clip(o.ID, 40)
		}
		if c := gjson.GetBytes(o.Raw, "error.code"); c.Exists() {
			return "error " + clip(c.Raw, 12) + " id " + clip(o.ID, 40)
		}
		return "result id " + clip(o.ID, 40)
	case proxy.KindBatch:
		return "batch"
	case proxy.KindOther:
		if len(o.Raw) == 0 && !o.Oversized {
			return ""
		}
		return "not a JSON-RPC message"
	}
	return ""
}

// body shows the message and its HTTP headers with -v: secrets taken
// out, terminal escapes escaped, long bodies cut.
func (w *watcher) body(o *proxy.Observation) string {
	if !w.verbose {
		return ""
	}
	var b strings.Builder
	if h := o.HTTP; h != nil && h.Event == 0 && (o.Dir == proxy.ClientToServer || h.Status != 0) {
		mark := ">"
		if o.Dir == proxy.ServerToClient {
			mark = "<"
		}
		writeHeaders(&b, "      "+mark+" ", h.Header)
	}
	if len(o.Raw) > 0 {
		raw := w.red.Scrub(o.Raw)
		cut := ""
		if len(raw) > 4096 {
			raw, cut = raw[:4096], w.pal.dim.Sprintf(" … (%s more)", size(int64(len(raw)-4096)))
		}
		fmt.Fprintf(&b, "      %s%s\n", report.Sanitize(string(raw)), cut)
	}
	return b.String()
}

// pairName names an exchange in reports and transcripts: the client's
// message number and its method (or HTTP method).
func pairName(p proxy.Pair) string {
	m := p.Method
	if m == "" {
		m = p.Exchange.Request.Method
	}
	if m == "" {
		m = "message"
	}
	return fmt.Sprintf("#%d %s", p.RequestSeq, m)
}

func latency(p proxy.Pair) string {
	d := p.Done.Sub(p.Sent)
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return d.Round(100 * time.Millisecond).String()
}

func stamp(t time.Time) string { return t.Format("15:04:05.000") }

func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// summary is the closing lines: what passed, what was judged and how.
func (w *watcher) summary(st proxy.Stats, notes []string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	b.WriteString(w.flushHeld())
	for _, o := range w.later {
		// Their pairs were dropped: the output fell behind.
		b.WriteString(w.line(o, "") + w.body(o))
	}
	w.later = nil
	c2s, s2c := st.Messages[proxy.ClientToServer], st.Messages[proxy.ServerToClient]
	verdict := w.pal.ok.Sprint("ok")
	switch {
	case w.server.failed+w.cTally.failed > 0:
		verdict = w.pal.fail.Sprintf("%d FAIL", w.server.failed+w.cTally.failed)
	case w.server.warned+w.cTally.warned > 0:
		verdict = w.pal.warn.Sprintf("%d WARN", w.server.warned+w.cTally.warned)
	}
	fmt.Fprintf(&b, "\nsummary: %d messages (%d client→server, %d server→client, %s); %d exchanges judged: %d ok, %d warn, %d fail; %d client messages judged: %d ok, %d warn, %d fail → %s\n",
		c2s+s2c, c2s, s2c, size(st.Bytes[proxy.ClientToServer]+st.Bytes[proxy.ServerToClient]),
		w.server.judged, w.server.clean, w.server.warned, w.server.failed, w.cTally.judged, w.cTally.clean, w.cTally.warned, w.cTally.failed, verdict)
	v := w.verdicts
	fmt.Fprintf(&b, "verdicts: %d pass, %d fail, %d warn, %d skip, %d error\n", v.Pass, v.Fail, v.Warn, v.Skip, v.Error)
	if why := w.neverReachedLocked(); why != "" {
		fmt.Fprintf(&b, "note: %s\n", report.Sanitize(why))
	} else if w.unreached > 0 {
		fmt.Fprintf(&b, "note: %d request(s) never reached the server (the proxy answered 502 itself): could not judge\n", w.unreached)
	}
	if st.Unanswered > 0 || w.notJudged > 0 {
		fmt.Fprintf(&b, "note: %d request(s) got no reply; %d exchange(s) not judged (no reply)\n", st.Unanswered, w.notJudged)
	}
	if d := st.DroppedMessages + st.DroppedPairs; d > 0 {
		fmt.Fprintf(&b, "note: %d message(s) and %d exchange(s) not shown nor judged: this output fell behind the traffic (the traffic itself was relayed whole)\n", st.DroppedMessages, st.DroppedPairs)
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "note: %s\n", report.Sanitize(n))
	}
	return b.String()
}

// neverReached says why the server was never reached, when no request
// of the run reached it and some tried: the target could not be driven
// (exit 3), as check's unreachable target. "" otherwise.
func (w *watcher) neverReached() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.neverReachedLocked()
}

func (w *watcher) neverReachedLocked() string {
	if w.reached || w.unreached == 0 {
		return ""
	}
	return fmt.Sprintf("no request reached the server: %d request(s), each answered 502 by the proxy; %s", w.unreached, w.unreachedFirst)
}

// gate reports whether the judged exchanges fail the gate.
func (w *watcher) gate(failOnWarn bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.verdicts.Gate(failOnWarn)
}

// relayReport is the format and path of proxy's and wrap's --report:
// FORMAT=PATH as check takes it (with FORMAT one of the report formats),
// else a FILE written in the --format. Before, html=r.html wrote JSON
// to a file of that name. A --format set beside a FORMAT= that differs
// is a usage error: which one was meant cannot be told.
func relayReport(o *relayOptions) (format, path string, err error) {
	f, p, ok := strings.Cut(o.Report, "=")
	if !ok || !slices.Contains(report.Formats(), f) {
		return o.Format, o.Report, nil
	}
	out, err := parseReportSpec(o.Report)
	switch {
	case err != nil:
		return "", "", err
	case out.path == "":
		return "", "", usagef("--report %q: want %s=PATH", o.Report, f)
	case o.changed != nil && o.changed("format") && o.Format != f:
		return "", "", usagef("--report %q and --format %s name two formats for one report: give one", o.Report, o.Format)
	}
	return f, p, nil
}
