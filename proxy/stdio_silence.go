package proxy

import (
	"fmt"
	"slices"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// What the stdio relay knows of requests after their turn: a silence it
// judged (the reply may still come), and the replies it paired (a
// second one may come). check judges both on the same pipe (RPC1006:
// silence within --timeout from a live server, and two responses to one
// request); the relay judges them alike, from the traffic alone.

// Bounds on what is kept of requests past their turn: a server that
// answers everything twice, or a client that sends without end, must
// not grow the relay.
const (
	maxLate          = maxWaiting
	maxAnswered      = 256
	maxAnsweredBytes = 16 << 20
)

// A silenced request: its silence was judged, and its reply, if it
// comes, is relayed and named, and completes nothing.
type silenced struct {
	key    string
	seq    uint64
	method string
}

// An answer is a client request the server answered, kept to judge a
// second response to it as check does.
type answer struct {
	key      string
	seq      uint64
	replySeq uint64
	method   string
	sent     time.Time
	// ex is the request's exchange without its reply, which was judged
	// when it came; reply is the response it took, to tell a copy of it.
	ex    *envelope.Exchange
	reply []byte
	later int // the responses that came after reply
	size  int64
}

// silenceable: a request whose silence can be told from its bytes and
// judged: owed a reply it can be told by (an id), not cancelled, and
// with nothing in its way (a reply already over the bound, a request
// that shared its id with another).
func silenceable(w *waiting) bool {
	return owed(w) && !w.cancelled && !w.over
}

// owed: a request with an id, owed one reply that names it, and the
// only one waiting with that id.
func owed(w *waiting) bool {
	return !w.quiet && !w.oversized && !w.ambiguous && w.method != "" && w.key != "" && w.key != batchKey
}

// aliveLocked takes in that the server answered request seq at at: it
// lives. A request past its deadline is then judged silent at once; one
// sent before seq, once its deadline passes. While the server waits on
// the client (see standsLocked) nothing is judged: the clock stands.
func (r *stdioRelay) aliveLocked(seq uint64, at time.Time) []event {
	var evs []event
	for _, c := range slices.Clone(r.client.list) {
		if !silenceable(c) {
			continue
		}
		switch {
		case !at.Before(c.deadline) && r.standSince.IsZero():
			why := fmt.Sprintf("the server answered #%d after that", seq)
			if c.alive != 0 {
				why = fmt.Sprintf("the server answered a later request (#%d)", c.alive)
			}
			evs = append(evs, r.silentLocked(c, why))
		case seq > c.seq && c.alive == 0:
			c.alive = seq
		}
	}
	r.armLocked()
	return evs
}

// silentLocked closes c as a request the server left unanswered: no
// failure, so the judge reads its silence (RPC1006), with what the
// server wrote for it meanwhile, as check's exchange holds it.
func (r *stdioRelay) silentLocked(c *waiting, why string) event {
	r.client.take(c)
	delete(r.guessed, c)
	if len(c.besides) > 0 {
		c.ex.Response = &envelope.Response{Messages: c.besides, Unsent: c.unsent}
		r.offeredLocked(c)
	}
	if c.ex.Version == "" {
		c.ex.Version = r.version
	}
	since := ""
	if c.progressed {
		since = " of its last progress notification"
	}
	c.ex.Note = envelope.JoinNotes(fmt.Sprintf("no response within %v%s; %s, so it is alive and left this request unanswered", r.lim.Timeout, since, why), c.ex.Note)
	if len(r.late) >= maxLate {
		r.late = r.late[1:]
	}
	r.late = append(r.late, silenced{key: c.key, seq: c.seq, method: c.method})
	return pairEvent(&Pair{Asker: ClientToServer, Exchange: c.ex, Method: c.method, Sent: c.sent, Done: r.now(), RequestSeq: c.seq})
}

// armLocked sets the timer to the first deadline of a request the
// server is known to live past; it runs only while one is owed.
func (r *stdioRelay) armLocked() {
	if r.closed {
		return
	}
	var next time.Time
	if r.standSince.IsZero() {
		for _, c := range r.client.list {
			if silenceable(c) && c.alive != 0 && (next.IsZero() || c.deadline.Before(next)) {
				next = c.deadline
			}
		}
	}
	if next.IsZero() {
		if r.timer != nil {
			r.timer.Stop()
		}
		return
	}
	d := max(next.Sub(r.now()), time.Millisecond)
	if r.timer == nil {
		r.timer = time.AfterFunc(d, r.tick)
		return
	}
	r.timer.Reset(d)
}

// tick judges the requests whose deadline passed after the server
// answered a later one.
func (r *stdioRelay) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if r.standSince.IsZero() {
		now := r.now()
		for _, c := range slices.Clone(r.client.list) {
			if silenceable(c) && c.alive != 0 && !now.Before(c.deadline) {
				r.q.put(r.silentLocked(c, fmt.Sprintf("the server answered a later request (#%d)", c.alive)))
			}
		}
	}
	r.armLocked()
}

// waitsOn: a request of the server's that makes it wait on the client
// (sampling, elicitation, roots), still owed an answer. A ping does not:
// a client answers it at once, it is not the server waiting on the
// user. One the server cancelled is owed none.
func waitsOn(w *waiting) bool {
	return !w.quiet && !w.cancelled && w.method != "ping"
}

// clockLocked takes in a change at at to the server's requests open:
// while one it waits on is (waitsOn), the clocks of the client's
// requests stand; when the last closes (the client answered it, or the
// server cancelled it), each waiting request's deadline moves on by the
// time its clock stood, from the first such request opened or its own
// clock's start (sent, or its last progress), whichever is later. The
// clock is not started again from the answer: a request the server
// answered at once moves it by that moment only, or a server that asks
// the client something every few seconds would never be judged.
func (r *stdioRelay) clockLocked(at time.Time) {
	stands := slices.ContainsFunc(r.server.list, waitsOn)
	switch {
	case stands && r.standSince.IsZero():
		r.standSince = at
	case !stands && !r.standSince.IsZero():
		for _, c := range r.client.list {
			// deadline-Timeout is when its clock (re)started, moved on
			// already by the times it stood before.
			from := c.deadline.Add(-r.lim.Timeout)
			if r.standSince.After(from) {
				from = r.standSince
			}
			// One whose time was up before the clock stood is owed
			// nothing more.
			if !c.quiet && c.deadline.After(r.standSince) && at.After(from) {
				c.deadline = c.deadline.Add(at.Sub(from))
			}
		}
		r.standSince = time.Time{}
	}
	r.armLocked()
}

// serverCancelLocked takes in the server's notifications/cancelled for
// a request of its own: the client owes it no answer (a receiver
// should not answer a cancelled request), so the server no longer waits
// on it, and the clocks run again. It stays paired: an answer the client
// sent anyway still closes it.
func (r *stdioRelay) serverCancelLocked(o *Observation) {
	if r.server.cancelIn("", o) != nil {
		r.clockLocked(o.Time)
	}
}

// progressLocked starts the clock again for the request a progress
// notification names by its token: the spec lets a client reset its
// timeout on progress, and check counts progress as work under way.
func (r *stdioRelay) progressLocked(o *Observation) {
	token := gjson.GetBytes(o.Raw, "params.progressToken")
	if o.Oversized || !token.Exists() {
		return
	}
	for _, c := range r.client.list {
		if !c.quiet && !c.oversized && envelope.SameToken(gjson.GetBytes(c.ex.Request.Body, "params._meta.progressToken"), token) {
			c.deadline, c.progressed = o.Time.Add(r.lim.Timeout), true
			r.armLocked()
			return
		}
	}
}

// cancelLocked notes a client's notifications/cancelled against the
// request it names, still waiting: that one is owed no reply.
func (r *stdioRelay) cancelLocked(o *Observation) {
	if r.client.cancelIn("", o) != nil {
		r.armLocked()
	}
}

// answeredLocked keeps a request the server answered, to judge a second
// response to it.
func (r *stdioRelay) answeredLocked(w *waiting, o *Observation) {
	if !owed(w) || w.over || w.ex.Failure != "" || w.ex.Response == nil || w.ex.Response.Truncated {
		return
	}
	ex := *w.ex
	ex.Response = nil
	a := &answer{key: w.key, seq: w.seq, replySeq: o.Seq, method: w.method, sent: w.sent, ex: &ex, reply: o.Raw,
		size: int64(len(w.ex.Request.Body)) + int64(len(o.Raw))}
	if a.size > maxAnsweredBytes {
		return
	}
	r.answers = slices.DeleteFunc(r.answers, func(b *answer) bool {
		if b.key == a.key {
			r.answersSize -= b.size
			return true
		}
		return false
	})
	for len(r.answers) >= maxAnswered || r.answersSize+a.size > maxAnsweredBytes {
		r.answersSize -= r.answers[0].size
		r.answers = r.answers[1:]
	}
	r.answers = append(r.answers, a)
	r.answersSize += a.size
}

// strayLocked takes a response whose id names no request waiting but
// one past its turn: the late reply to a request judged silent (relayed
// and named, as check's late reply is), or a later response to one
// already answered, judged as check judges a second response to a
// request an earlier exchange took the response of (RPC1006, once per
// response), in an exchange of that request with this response alone,
// which ends nothing again (Tail). The request's reply was judged when
// it came: the exchange says so (Answered), or the judge would take the
// later response for the reply, and judge the request's answer twice.
// It reports whether it took o. Taken by the only request waiting, as a
// reply with a mangled id is, it would fail that one and leave its own
// reply to answer nothing.
func (r *stdioRelay) strayLocked(o *Observation) ([]event, bool) {
	key := idKey(o.ID)
	other := envelope.OtherTypeKey(key)
	if key == "" || r.client.find(key, false) >= 0 || r.client.find(other, false) >= 0 {
		return nil, false
	}
	named := func(k string) bool { return k == key || k == other }
	if i := slices.IndexFunc(r.late, func(s silenced) bool { return named(s.key) }); i >= 0 {
		s := r.late[i]
		r.late = slices.Delete(r.late, i, i+1)
		r.closeOfferLocked(s.seq, r.version == envelope.V20251125 && gjson.GetBytes(o.Raw, "result.task").IsObject())
		o.Note = fmt.Sprintf("the reply to #%d %s, past --timeout: its silence was judged then", s.seq, s.method)
		return append([]event{obsEvent(o)}, r.aliveLocked(s.seq, o.Time)...), true
	}
	i := slices.IndexFunc(r.answers, func(a *answer) bool { return named(a.key) })
	if i < 0 {
		return nil, false
	}
	a := r.answers[i]
	a.later++
	ex := *a.ex
	resp := &envelope.Response{Messages: [][]byte{o.Raw}, Truncated: o.Oversized, Answered: true}
	// As check's transport tells a second response: the same bytes
	// again, or other content.
	if id := envelope.Compact(o.ID); !o.Oversized && string(o.Raw) == string(a.reply) {
		resp.Copies = []string{id}
	} else {
		resp.Again = []string{id}
	}
	ex.Response = resp
	o.Completes = true
	o.Note = fmt.Sprintf("%s response to #%d %s, answered by #%d", ordinal(a.later+1), a.seq, a.method, a.replySeq)
	ex.Note = o.Note + "; its response was judged then"
	p := &Pair{Asker: ClientToServer, Exchange: &ex, Method: a.method, Sent: a.sent, Done: o.Time,
		RequestSeq: a.seq, ReplySeq: o.Seq, Oversized: o.Oversized, Tail: true}
	return append([]event{obsEvent(o), pairEvent(p)}, r.aliveLocked(a.seq, o.Time)...), true
}

// ordinal names the nth response to a request, n ≥ 2, as a note
// reads it: "a second", "a third", "the 21st".
func ordinal(n int) string {
	switch n {
	case 2:
		return "a second"
	case 3:
		return "a third"
	}
	suffix := "th"
	switch n % 10 {
	case 1:
		suffix = "st"
	case 2:
		suffix = "nd"
	case 3:
		suffix = "rd"
	}
	if n%100/10 == 1 {
		suffix = "th"
	}
	return fmt.Sprintf("the %d%s", n, suffix)
}

// maxSent bounds the ids of the client's requests kept (see sent).
const maxSent = 1 << 14

// sentLocked notes the ids a client's message carries: a request's,
// a batch's requests'.
func (r *stdioRelay) sentLocked(o *Observation) {
	if r.sentFull {
		return
	}
	var ids []string
	switch {
	case o.Oversized:
		// Its id may be past the cut: what was sent is no longer known.
		r.sentFull = true
		return
	case o.Kind == KindBatch:
		gjson.ParseBytes(o.Raw).ForEach(func(_, e gjson.Result) bool {
			ids = append(ids, e.Get("id").Raw)
			return true
		})
	default:
		ids = append(ids, o.ID)
	}
	for _, id := range ids {
		if k := idKey(id); k != "" {
			if r.sent == nil {
				r.sent = map[string]bool{}
			}
			if len(r.sent) >= maxSent {
				r.sentFull, r.sent = true, nil
				return
			}
			r.sent[k] = true
		}
	}
}

// unsentLocked takes a response that answers nothing waiting and names
// an id no request of the client's carried: it answers no request at
// all (T-RPC-5). It joins the reply of the latest request waiting, listed
// as unsent, and that exchange judges it (RPC1006), as check judges such
// a line in the exchange open when it comes. It reports whether it took
// o; with none waiting it only passes, as before, unless the client
// closed its end: then the end of input takes it (see eof).
func (r *stdioRelay) unsentLocked(o *Observation) bool {
	key := idKey(o.ID)
	if key == "" || o.Oversized || r.sentFull || r.sent[key] || r.sent[envelope.OtherTypeKey(key)] {
		return false
	}
	var w *waiting
	n := 0
	for _, c := range r.client.list {
		if c.quiet || c.oversized {
			continue
		}
		n++
		if w == nil || c.seq > w.seq {
			w = c
		}
	}
	if w == nil && r.eof != nil {
		// After the client closed its end: the end of input's, listed
		// as unsent, as check's exchange there lists it.
		o.Note = "names no request the client sent"
		r.eofKeepLocked(o, envelope.Compact(o.ID))
		return true
	}
	if w == nil {
		return false
	}
	o.Note = fmt.Sprintf("names no request the client sent; judged with #%d's reply", w.seq)
	// Given to the latest of several by guess, it is dropped if it does
	// not fit, as besidesLocked drops such a line.
	if !r.keepLocked(w, o.Raw, false, n == 1, envelope.Compact(o.ID)) && n > 1 {
		o.Note = fmt.Sprintf("names no request the client sent; past --max-bytes in #%d's reply, the latest waiting, and not judged", w.seq)
	}
	return true
}
