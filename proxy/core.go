package proxy

import (
	"fmt"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// Default limits, used for every Limits field left zero.
const (
	DefaultMaxBytes = 4 << 20
	DefaultQuiet    = 300 * time.Millisecond
	DefaultGrace    = 5 * time.Second
	// DefaultTimeout is check's --timeout: a relay judges a live
	// server's silence by the same bound.
	DefaultTimeout = 10 * time.Second
	// drainWait bounds how long closing a relay waits for its Observer.
	drainWait = 3 * time.Second
)

// Limits bound what a relay keeps. They never bound what it forwards:
// every byte goes on.
type Limits struct {
	// MaxBytes bounds one message kept for observation (a stdio line, an
	// HTTP body, an SSE event) and the reply kept for one exchange.
	// Larger ones are forwarded whole and observed cut, not judged.
	MaxBytes int64
	// Quiet is how long a stdio notification waits for a reply that
	// should not come before it is paired with none, and how long a
	// POST's event stream is read on past its response, as check reads
	// it, before the exchange is judged with what came (the stream's end
	// comes first if sooner). Relaying never waits for it.
	Quiet time.Duration
	// Grace is how long a wrapped server gets to exit after its stdin
	// closes, and again after SIGTERM, before it is stopped harder.
	Grace time.Duration
	// Timeout is how long a client's request may go unanswered before
	// its silence can be judged, as check's --timeout bounds an
	// exchange: past it, a server shown alive left the request
	// unanswered, a finding (RPC1006). On stdio the traffic shows it (a
	// later request answered, or any after the bound); over HTTP the
	// relay asks with a liveness probe of its own, as check does. The
	// relay never cuts the request: the client waits as long as it
	// likes, and a reply that comes later is still relayed.
	Timeout time.Duration
	// Exit is the wait after a wrapped server's stdin closed that judges
	// whether it exited promptly (T-STDIO-6, PRO1011): check's
	// (transport.DefaultExit) unless set, whatever Grace is.
	Exit time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.Quiet <= 0 {
		l.Quiet = DefaultQuiet
	}
	if l.Grace <= 0 {
		l.Grace = DefaultGrace
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.Exit <= 0 {
		l.Exit = transport.DefaultExit
	}
	return l
}

// core is what both relays share: the order of passage, the queue to
// the Observer, and the server's requests waiting for the client. Its
// methods that end in "Locked" need mu held; the relays hold it while
// they observe one message, so a message and the pair it completes are
// queued together and in order.
type core struct {
	mu     sync.Mutex
	lim    Limits
	now    func() time.Time
	q      *queue
	seq    uint64
	server ledger // the server's requests, waiting for the client
}

func newCore(o Observer, lim Limits, now func() time.Time) *core {
	if now == nil {
		now = time.Now
	}
	return &core{lim: lim.withDefaults(), now: now, q: newQueue(o)}
}

// observeLocked builds the observation of one frame.
func (c *core) observeLocked(dir Direction, raw []byte, size int64, oversized bool) *Observation {
	c.seq++
	o := &Observation{Seq: c.seq, Dir: dir, Time: c.now(), Raw: raw, Size: size, Oversized: oversized}
	if oversized {
		o.Kind, o.Method, o.ID = classifyCut(raw)
		o.Note = fmt.Sprintf("larger than the %d-byte bound (%d bytes): relayed whole, not judged", c.lim.MaxBytes, size)
	} else if raw != nil {
		var valid bool
		o.Kind, o.Method, o.ID, valid = classify(raw)
		if !valid && o.Kind != KindOther {
			o.Note = "not valid JSON"
		}
	}
	return o
}

// observeFrameLocked builds the observation of one stdio line.
func (c *core) observeFrameLocked(dir Direction, f frame) *Observation {
	o := c.observeLocked(dir, f.raw, f.size, f.oversized)
	if f.open && o.Note == "" {
		o.Note = "no newline at the end: the stream ended first"
	}
	return o
}

// serverRequestLocked keeps a request the server sent in a session, to
// pair it with the client's response in that session.
func (c *core) serverRequestLocked(o *Observation, transport, version, session string) []event {
	w := &waiting{key: idKey(o.ID), id: o.ID, session: session, method: o.Method, seq: o.Seq, sent: o.Time, oversized: o.Oversized,
		ex: &envelope.Exchange{Transport: transport, Version: version, Request: envelope.Request{Body: o.Raw}}}
	evs := []event{obsEvent(o)}
	if old, why := c.server.add(w); old != nil {
		evs = append(evs, c.failLocked(ServerToClient, old, why))
	}
	return evs
}

// clientResponseLocked pairs a response the client sent in a session
// with the server's request w it answers there (nil: it answers none).
// p is the pair it completes; nil also when the request's pair was given
// already, to an answer the server's HTTP layer refused (waiting.given).
// w.cancelled: the server had cancelled that request, which held nothing
// up after that (see ledger.cancelIn).
func (c *core) clientResponseLocked(o *Observation, session string) (w *waiting, p *Pair) {
	w = c.server.matchIn(session, o.ID, idlessError(o))
	if w == nil {
		o.Note = "answers no request of the server's"
		return nil, nil
	}
	if w.given {
		o.Note = "answers again the server's request whose first answer the server's HTTP layer refused"
		return w, nil
	}
	o.Completes = true
	w.ex.Response = &envelope.Response{Messages: [][]byte{o.Raw}, Truncated: o.Oversized}
	return w, &Pair{Asker: ServerToClient, Exchange: w.ex, Method: w.method, Sent: w.sent, Done: o.Time,
		RequestSeq: w.seq, ReplySeq: o.Seq, Oversized: w.oversized || o.Oversized}
}

// failLocked closes a waiting request that no reply will complete.
func (c *core) failLocked(asker Direction, w *waiting, why string) event {
	w.ex.Failure = why
	return pairEvent(&Pair{Asker: asker, Exchange: w.ex, Method: w.method, Sent: w.sent, Done: c.now(), RequestSeq: w.seq, Oversized: w.oversized})
}

// negotiated reads the protocol version an initialize result agreed on.
func negotiated(reply []byte) string {
	if v := gjson.GetBytes(reply, "result.protocolVersion"); v.Type == gjson.String && envelope.KnownVersion(v.Str) {
		return v.Str
	}
	return ""
}
