package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// Do writes req.Body and a "\n" to the server's stdin, byte for byte,
// then collects what the server writes to stdout, one Messages entry per
// line (without its "\n" or a "\r" before it; every other byte kept).
//
// With wantReply (a request), the exchange ends at the first
// response-shaped line, which is the last of Messages. Without (a
// notification), it waits Limits.Quiet and collects whatever comes: a
// conforming server writes nothing, and then Response is nil. Lines left
// over from before the exchange come first (see Stdio).
//
// Timeout, MaxEvents (lines) and MaxBytes bound the exchange; reaching
// one sets Failure and keeps the lines read. A server that has exited,
// or exits or closes stdout during the exchange, fails it with its exit
// status and the tail of its stderr. A server that does not read its
// stdin fails the exchange at Timeout; if it took only part of the
// request, stdin is out of step and every later exchange fails at once.
// The first exchange with a server just started is timed from when the
// server has read its message, Limits.Start at most after the start.
// Do stops when ctx is done. Exchanges are serialised: a concurrent Do
// waits its turn.
func (s *Stdio) Do(ctx context.Context, req envelope.Request, wantReply bool) envelope.Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	ex := envelope.Exchange{Transport: envelope.Stdio, Request: req}
	deadline := time.Now().Add(s.lim.Timeout)
	select {
	case <-s.stop:
		ex.Failure = "transport closed"
		return ex
	default:
	}
	if s.broken != "" {
		ex.Failure = s.broken
		return ex
	}
	pre := s.waiting()
	open := s.open.state()
	f, werr := s.writeFirst(ctx, req.Body)
	if s.fresh {
		s.awaitRead(ctx)
		deadline = time.Now().Add(s.lim.Timeout)
	}
	switch {
	case werr != nil:
		// Most likely the server is gone; what it wrote before going
		// still belongs in the record, and so does how it went.
		ex.Response, f = s.collect(ctx, deadline, false, "", false, pre)
		if f == "" {
			f = s.deathNote()
		}
		ex.Failure = fmt.Sprintf("writing the request: %v; %s", werr, f)
	case f != "":
		ex.Failure = f
	default:
		id := idKey(gjson.GetBytes(req.Body, "id"))
		wellFormed := wellFormedRequest(req.Body)
		ex.Response, ex.Failure = s.collect(ctx, deadline, wantReply, id, wellFormed, pre)
		if ex.Response != nil {
			ex.Response.Unsent, ex.Response.Again, ex.Response.Copies = s.strays(ex.Response, id)
		}
		if ex.Failure == "" && wantReply && ex.Response != nil {
			last := ex.Response.Messages[len(ex.Response.Messages)-1]
			s.lastTaken = string(last)
			if id != "" && idKey(gjson.GetBytes(last, "id")) == id {
				s.ids.took(id, string(last))
			}
		}
		// The exchange's own clock ran out while the server lives: whether
		// that is silence is for the caller's liveness probe to tell.
		ex.Unanswered = ex.Failure != "" && wantReply && ctx.Err() == nil && !time.Now().Before(deadline) && !s.hasExited()
		if ex.Unanswered && id != "" {
			s.late = remember(s.late, id)
			s.lateForReader(id)
		}
		if ex.Unanswered && !wellFormed && s.lateNull < maxLate {
			// (Any request a server cannot read whole may be refused
			// with id null, AMB-1: one with a readable id too.)
			s.lateNull++
		}
		if ex.Unanswered {
			// Bytes did come: the user needs to hear of them, not only
			// of silence.
			if note := s.open.state().note(open); note != "" {
				ex.Failure += "; " + note
			}
		}
	}
	return ex
}

// strays are the ids of the responses among an exchange's lines that
// name another request than its own (id, its key): those no request
// written to the process carried (unsent), and those naming a request,
// written once, that an earlier exchange took its response for: with
// other content (again), or the same byte for byte (copies).
func (s *Stdio) strays(resp *envelope.Response, id string) (unsent, again, copies []string) {
	if resp == nil {
		return nil, nil, nil
	}
	for _, m := range resp.Messages {
		if !envelope.IsResponse(m) {
			continue
		}
		rid := gjson.GetBytes(m, "id")
		switch k := idKey(rid); {
		case k == "" || k == id:
		case s.ids.unsent(rid):
			unsent = append(unsent, envelope.Compact(rid.Raw))
		default:
			switch s.second(m, rid) {
			case secondOther:
				again = append(again, envelope.Compact(rid.Raw))
			case secondSame:
				copies = append(copies, envelope.Compact(rid.Raw))
			}
		}
	}
	return unsent, again, copies
}

// ended: the last line is a response.
func ended(msgs [][]byte) bool {
	return len(msgs) > 0 && envelope.IsResponse(msgs[len(msgs)-1])
}

// waiting takes the lines the server wrote before the request about to
// be written (MaxEvents at most): they cannot be its reply.
func (s *Stdio) waiting() []line {
	var pre []line
	for len(pre) < s.lim.MaxEvents {
		select {
		case ln, ok := <-s.lines:
			if !ok {
				return pre
			}
			pre = append(pre, ln)
		default:
			return pre
		}
	}
	return pre
}

// idKey is the key of an id of any JSON type but null: envelope.IDKey's
// for a string or a number; for true, false, an array or an object (ids
// JSON-RPC forbids, which fixtures send), its JSON compacted. A reply
// that names such a request, again, is known as that request's too.
func idKey(id gjson.Result) string {
	if k := envelope.IDKey(id); k != "" || !id.Exists() || id.Type == gjson.Null {
		return k
	}
	return "j" + envelope.Compact(id.Raw)
}

// wellFormedRequest: body is one request a server can read whole: a
// JSON object with jsonrpc "2.0", a method string, an id MCP allows and
// params, if any, an object. Such a request is never owed a refusal
// with id null. (A body that is no valid JSON text, its syntax or its
// UTF-8, which encoding/json lets pass, is owed a parse error, review
// rev87.)
func wellFormedRequest(body []byte) bool {
	m := gjson.ParseBytes(body)
	p := m.Get("params")
	return m.IsObject() && m.Get("jsonrpc").Str == "2.0" && m.Get("method").Type == gjson.String &&
		echoable(idKey(m.Get("id"))) && (!p.Exists() || p.IsObject()) && json.Valid(body) && utf8.Valid(body)
}

// echoable: a request id key (see idKey) of an id MCP allows, a string
// or an integer: "" is none or null, an "n" key of a fraction and a "j"
// key (an object, an array, a boolean) are ids MCP forbids.
func echoable(k string) bool {
	return strings.HasPrefix(k, "s") || strings.HasPrefix(k, "n") && envelope.IsInteger(k[1:])
}

// maxLate bounds the ids remembered as owed a late reply, and the
// responses remembered as taken.
const maxLate = 1024

// remember adds id to a bounded set of ids, started afresh when full.
func remember(set map[string]bool, id string) map[string]bool {
	if set == nil || len(set) >= maxLate {
		set = map[string]bool{}
	}
	set[id] = true
	return set
}

// TakeLate returns the late replies exchanges read since the last call
// and left out of their Messages: responses whose id names a request
// that timed out (Do's own, or one declared with Owe). The caller knows
// which request each answers; the exchange it came in is not that one.
func (s *Stdio) TakeLate() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	late := s.lateLines
	s.lateLines = nil
	return late
}

// TakeIfLate keeps data, a line Receive returned, among the late replies
// (see TakeLate) when it is a response naming a request that timed out
// (Do's own, or one declared with Owe), and says whether it did: a
// reader of the pipe's lines outside Do (a multiplexed run) that owns
// no request of that id takes it for none of its own, as Do takes it
// for no later exchange's (review rev82).
func (s *Stdio) TakeIfLate(data []byte) bool {
	if !envelope.IsResponse(data) {
		return false
	}
	k := idKey(gjson.GetBytes(data, "id"))
	if k == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.cameLate[k] {
		return false
	}
	delete(s.cameLate, k)
	if len(s.lateLines) < s.lim.MaxEvents {
		s.lateLines = append(s.lateLines, data)
	}
	return true
}

// Owe says the server may yet answer the request body, sent with Send
// and left unanswered: its late reply is not taken for a later
// exchange's, as Do's own timed-out requests are not; nor, for a body
// that is no well-formed request, a late refusal with id null (see
// lateNull; review of this stop: a multiplexed run's liveness probe took
// such a refusal of an earlier request for its own reply, and failed
// RPC1004).
func (s *Stdio) Owe(body []byte) {
	k := idKey(gjson.GetBytes(body, "id"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !wellFormedRequest(body) && s.lateNull < maxLate {
		s.lateNull++
	}
	if k == "" {
		return
	}
	s.late = remember(s.late, k)
	s.lateForReader(k)
}

// writeFirst writes one message as write does, within Timeout; to a
// server that has read nothing yet, within Start and Timeout of its
// start, as it may still be starting. A message that went out whole leaves
// s.fresh as it was, for awaitRead; any other end clears it.
func (s *Stdio) writeFirst(ctx context.Context, body []byte) (failure string, err error) {
	deadline, bound := time.Now().Add(s.lim.Timeout), fmt.Sprintf("within %v", s.lim.Timeout)
	if s.fresh {
		deadline = s.started.Add(s.lim.Start + s.lim.Timeout)
		bound = fmt.Sprintf("within %v of its start", s.lim.Start+s.lim.Timeout)
	}
	// Noted before the write: a server may read a request written in
	// part, or answer one as it comes.
	s.ids.add(body)
	failure, err = s.write(ctx, body, deadline, bound)
	if failure != "" || err != nil {
		s.fresh = false
		s.markReady()
	}
	return failure, err
}

// awaitRead waits, after the first message to a server just started,
// until the server has read all that was written to it (it is up and
// reading), exits, closes its stdin (it never will read), or Limits.Start
// has passed since it started, or ctx ends. The first exchange's clock
// starts after it: a slow start is not silence, and a notification's
// quiet moment must not pass before the server could have answered it.
func (s *Stdio) awaitRead(ctx context.Context) {
	s.fresh = false
	defer s.markReady()
	until := s.started.Add(s.lim.Start)
	poll := time.Millisecond
	for {
		n, ok := unread(s.stdin)
		if !ok || n == 0 || !time.Now().Before(until) || readerGone(s.stdin) {
			return
		}
		t := time.NewTimer(min(poll, time.Until(until)))
		select {
		case <-t.C:
			poll = min(2*poll, 20*time.Millisecond)
			continue
		case <-ctx.Done():
		case <-s.exited:
		case <-s.stop:
		}
		t.Stop()
		return
	}
}

// write sends one request line, giving up at deadline (bound says when
// that is, for the Failure) or when ctx ends: a server that never reads
// its stdin fills the pipe and would block the write forever. It returns
// the Failure for those ends, or the error of a write that failed
// otherwise.
func (s *Stdio) write(ctx context.Context, body []byte, deadline time.Time, bound string) (failure string, err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var n int
	msg := make([]byte, len(body)+1)
	copy(msg, body)
	msg[len(body)] = '\n'
	// A pipe that does not support deadlines (not on Unix) blocks until
	// the server reads or exits.
	_ = s.stdin.SetWriteDeadline(deadline)
	fired := make(chan struct{})
	stopAfter := context.AfterFunc(ctx, func() {
		defer close(fired)
		s.stdin.SetWriteDeadline(time.Unix(1, 0))
	})
	n, err = s.stdin.Write(msg)
	if !stopAfter() {
		<-fired // else it could cut short the next exchange's write
	}
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, os.ErrClosed):
		return "transport closed", nil
	case ctx.Err() != nil:
		s.breakIfPartial(n, len(msg))
		return fmt.Sprintf("cancelled: %v", context.Cause(ctx)), nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.breakIfPartial(n, len(msg))
		return fmt.Sprintf("server did not read its stdin %s (took %d of %d bytes)", bound, n, len(msg)), nil
	}
	return "", err
}

// breakIfPartial marks stdin out of step when a request went out in part:
// whatever the server reads next would be the rest of it.
func (s *Stdio) breakIfPartial(n, total int) {
	if n > 0 && n < total {
		s.broken = fmt.Sprintf("stdin is out of step: an earlier request went out in part (%d of %d bytes)", n, total)
	}
}

// collect reads lines until the exchange ends; see Do. id is the key of
// the request's id ("" when it has none); wellFormed, whether the
// request is one a server can read whole (see wellFormedRequest).
func (s *Stdio) collect(ctx context.Context, deadline time.Time, wantReply bool, id string, wellFormed bool, pre []line) (*envelope.Response, string) {
	var c collector
	wait := time.Until(deadline)
	if !wantReply {
		wait = min(wait, s.lim.Quiet)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	exited := s.exited
	var settled <-chan time.Time // set once the exit is seen
	// again is set when a response came naming a request answered
	// already: a server that answers twice sends this request's own
	// reply soon after, while one that answers with a stale id sends no
	// other; after a quiet moment that response is this exchange's.
	var again <-chan time.Time
	var held line // a second response to the exchange before (see take)
	// take handles one line; done says the exchange ends (with failure
	// f). before: the line was waiting before the request was written, so
	// it cannot be its reply.
	take := func(ln line, before bool) (done bool, f string) {
		if f := c.add(ln, s.lim.MaxBytes); f != "" {
			return true, f
		}
		k := ""
		// copied: a response repeating, byte for byte, the one an
		// earlier exchange took for the request it names, written once.
		// It is a second response to that request (see Second): it
		// stays among this exchange's lines, known so, and is judged
		// where it lands (set aside, a server that answers twice passed,
		// the exchange it belongs to judged before it came). Unlike one
		// with other content, it is never this request's reply with a
		// stale id, so this request's own is awaited.
		copied, answered := false, false
		if envelope.IsResponse(ln.data) {
			rid := gjson.GetBytes(ln.data, "id")
			k = idKey(rid)
			var prev string
			prev, answered = s.ids.taken(k)
			if answered && k != id && prev == string(ln.data) {
				if !s.ids.once(rid) {
					// Written more than once (a user's fixtures may
					// reuse an id): whose reply it repeats is not known.
					c.drop(len(ln.data))
					return false, ""
				}
				copied = true
			}
			if string(ln.data) == s.lastTaken && (k != id || k == "") && !copied {
				// The reply the exchange before took, again (a server
				// that answers twice), with an id that names no request
				// (null) or another than the one it was taken for (a
				// stale id): it belongs to no later exchange. One that
				// came before this request was written cannot be its
				// reply; one that came after is held for a quiet moment:
				// if no other response comes, it was this request's after
				// all (a server that answers two requests alike). A
				// notification is owed nothing: the copy is not held
				// against it.
				s.lastTaken = ""
				c.drop(len(ln.data))
				if !before && wantReply {
					held = ln
					if again == nil {
						again = time.After(min(s.lim.Quiet, time.Until(deadline)))
					}
				}
				return false, ""
			}
			if k == "" && wellFormed && s.lateNull > 0 {
				// A response with no id, which this well-formed request
				// does not ask for (its id can be read and echoed), while
				// an earlier request that only such a response can answer
				// is still owed one: that one's late reply, not this
				// exchange's line. (An invalid request's own refusal may
				// say null, AMB-1: taken as its reply, as a server that
				// drops the unreadable ones keeps the count up; review
				// rev86. A notification's exchange keeps it, to be judged
				// there: a server that answers notifications must not pass
				// unseen because it dropped an unreadable request before.)
				s.lateNull--
				c.drop(len(ln.data))
				if len(s.lateLines) < s.lim.MaxEvents {
					s.lateLines = append(s.lateLines, ln.data)
				}
				return false, ""
			}
			if k != "" && k != id && s.late[k] {
				// A late reply to an earlier request that timed out
				// (a server slow to start, say): its id names that
				// request, so it is no line of this exchange's; it
				// is kept for the caller (see TakeLate), and this
				// request's own reply is awaited.
				delete(s.late, k)
				c.drop(len(ln.data))
				if len(s.lateLines) < s.lim.MaxEvents {
					s.lateLines = append(s.lateLines, ln.data)
				}
				return false, ""
			}
		}
		if wantReply && envelope.IsResponse(ln.data) && !before {
			if copied {
				return false, "" // this request's own reply is awaited
			}
			if k != id && answered {
				if again == nil && id != "" {
					// (A request whose id cannot be read is answered
					// with none: such a response is no stale reply to
					// it, only the second of another's.)
					again = time.After(min(s.lim.Quiet, time.Until(deadline)))
				}
				return false, ""
			}
			if k != "" && k != id && (id != "" || s.ids.unsent(gjson.GetBytes(ln.data, "id"))) {
				// A response naming another id, which no earlier request
				// of the pipe had answered: a stray before this request's
				// own reply, or that reply with a wrong id. It ends the
				// exchange only after a quiet moment (again), so a stray
				// takes no later exchange's reply. (To a request whose id
				// cannot be read, an id never written is such a stray too.)
				if again == nil {
					again = time.After(min(s.lim.Quiet, time.Until(deadline)))
				}
				return false, ""
			}
			return true, ""
		}
		if len(c.msgs) >= s.lim.MaxEvents {
			c.truncated = true
			if wantReply {
				return true, fmt.Sprintf("no response in the first %d lines", len(c.msgs))
			}
			return true, fmt.Sprintf("%d lines after a notification; stopped reading", len(c.msgs))
		}
		return false, ""
	}
	for _, ln := range pre {
		if done, f := take(ln, true); done {
			return c.response(), f
		}
	}
	for {
		select {
		case <-again:
			if held.data != nil && !ended(c.msgs) {
				c.add(held, s.lim.MaxBytes)
			}
			return c.response(), ""
		case ln, ok := <-s.lines:
			if !ok {
				return c.response(), s.deathNote()
			}
			if done, f := take(ln, false); done {
				return c.response(), f
			}
		case <-exited:
			// Lines written before the exit may still be in the pipe:
			// read on for a moment before calling it.
			exited = nil
			settled = time.After(settle)
		case <-settled:
			return c.response(), s.deathNote()
		case <-timer.C:
			switch {
			case exited == nil:
				return c.response(), s.deathNote()
			case !wantReply:
				return c.response(), ""
			}
			return c.response(), NoResponse(s.lim.Timeout, len(c.msgs))
		case <-ctx.Done():
			return c.response(), fmt.Sprintf("cancelled: %v", context.Cause(ctx))
		case <-s.stop:
			return c.response(), "transport closed"
		}
	}
}

// NoResponse is the failure of a stdio request left unanswered within
// timeout, after lines lines that were not its response: Do's, and a
// runner's that reads the pipe itself, in one wording.
func NoResponse(timeout time.Duration, lines int) string {
	if lines == 0 {
		return fmt.Sprintf("no response within %v", timeout)
	}
	return fmt.Sprintf("no response within %v: %s", timeout, countWithout(lines, "line"))
}

// A collector gathers one exchange's lines within the byte bound.
type collector struct {
	msgs      [][]byte
	n         int64
	truncated bool
}

func (c *collector) add(ln line, limit int64) string {
	room := limit - c.n
	if ln.cut || int64(len(ln.data)) > room {
		c.msgs = append(c.msgs, ln.data[:min(int64(len(ln.data)), room)])
		c.truncated = true
		return fmt.Sprintf("reply exceeds %d bytes", limit)
	}
	c.msgs = append(c.msgs, ln.data)
	c.n += int64(len(ln.data))
	return ""
}

// drop takes back the last line added, of n bytes.
func (c *collector) drop(n int) {
	c.msgs = c.msgs[:len(c.msgs)-1]
	c.n -= int64(n)
}

// response is nil when no line came, as Exchange.Response documents.
func (c *collector) response() *envelope.Response {
	if len(c.msgs) == 0 {
		return nil
	}
	return &envelope.Response{Messages: c.msgs, Truncated: c.truncated}
}

// deathNote says why the server stopped talking: how it exited, or that
// it closed stdout and lives on, with the tail of its stderr. It waits a
// moment for the exit and the last stderr bytes, which trail the end of
// stdout.
func (s *Stdio) deathNote() string {
	moment, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	var note string
	select {
	case <-s.exited:
		note = fmt.Sprintf("server exited (%v)", exitError(s.waitErr))
	case <-moment.Done():
		note = "server closed its stdout but is still running"
	}
	select {
	case <-s.stderrDone:
	case <-moment.Done():
	}
	if tail := lastWords(s.tail.Bytes(), 512); tail != "" {
		note += "; stderr tail: " + tail
	}
	return note
}

// lastWords is the end of a stderr tail, at most limit bytes, cut at a
// character boundary and trimmed, its lines joined by " ⏎ " on one line:
// a failure is one line wherever it is printed, and the checker's own
// stderr, which writes each line of a message after "wymcp-check: ",
// must not show a line of the server's as one of its own (review rev73:
// a stderr of "starting\nPASSED: …" printed a forged verdict line). The
// other bytes are kept as they are: making them safe to print is the
// reporters' job.
func lastWords(b []byte, limit int) string {
	if len(b) > limit {
		b = b[len(b)-limit:]
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	lines := strings.FieldsFunc(strings.TrimSpace(string(b)), func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), " ⏎ ")
}

// hasExited reports whether the server process has exited.
func (s *Stdio) hasExited() bool {
	exited, _ := s.Exited()
	return exited
}

// Send writes one message line, as Do does, without waiting for any
// reply: a caller that multiplexes requests over the pipe matches the
// lines it reads with Receive. To a server just started, Send returns
// once the server has read the line (see Limits.Start). It returns the
// Failure of a line that could not be written whole ("" when it went
// out).
func (s *Stdio) Send(ctx context.Context, body []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.stop:
		return "transport closed"
	default:
	}
	if s.broken != "" {
		return s.broken
	}
	f, err := s.writeFirst(ctx, body)
	if err != nil {
		return fmt.Sprintf("writing the request: %v; %s", err, s.deathNote())
	}
	if s.fresh {
		s.awaitRead(ctx)
	}
	return f
}

// A Received is what Receive found.
type Received int

const (
	Line     Received = iota // a line arrived
	Quiet                    // nothing before the deadline
	Gone                     // stdout ended or the server exited; why says how
	Canceled                 // ctx ended or the transport closed
)

// Receive returns the next line the server writes to stdout, waiting
// until deadline at most (a deadline already past takes only a line that
// is waiting). A line longer than MaxBytes comes cut, with cut set.
func (s *Stdio) Receive(ctx context.Context, deadline time.Time) (data []byte, cut bool, what Received, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A line already waiting comes first, whatever the deadline.
	select {
	case ln, ok := <-s.lines:
		if ok {
			s.received(ln.data)
			return ln.data, ln.cut, Line, ""
		}
		return nil, false, Gone, s.deathNote()
	default:
	}
	timer := time.NewTimer(max(time.Until(deadline), 0))
	defer timer.Stop()
	exited := s.exited
	var settled <-chan time.Time
	for {
		select {
		case ln, ok := <-s.lines:
			if !ok {
				return nil, false, Gone, s.deathNote()
			}
			s.received(ln.data)
			return ln.data, ln.cut, Line, ""
		case <-exited:
			exited = nil
			settled = time.After(settle)
		case <-settled:
			return nil, false, Gone, s.deathNote()
		case <-timer.C:
			if exited == nil {
				return nil, false, Gone, s.deathNote()
			}
			return nil, false, Quiet, ""
		case <-ctx.Done():
			return nil, false, Canceled, fmt.Sprintf("cancelled: %v", context.Cause(ctx))
		case <-s.stop:
			return nil, false, Canceled, "transport closed"
		}
	}
}

// received notes a line Receive hands over: a response whose id was owed
// (see Owe) has come, so a later line with that id is no late reply.
func (s *Stdio) received(data []byte) {
	if !envelope.IsResponse(data) {
		return
	}
	if k := idKey(gjson.GetBytes(data, "id")); s.late[k] {
		delete(s.late, k)
		s.cameLate = remember(s.cameLate, k)
	}
}

// Unterminated says what the server has written to stdout since its last
// newline, if anything: bytes that are no message (yet), for the failure
// of a request that got no response, as Do words it. "" when every byte
// read so far ended a line.
func (s *Stdio) Unterminated() string { return s.open.state().note(openState{}) }

// Limits are the bounds the transport applies, defaults filled in.
func (s *Stdio) Limits() Limits { return s.lim }
