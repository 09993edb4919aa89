package proxy

import (
	"slices"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// maxWaiting bounds the requests waiting for a reply in one direction:
// a side that sends requests and never gets answers must not grow the
// relay's memory. The oldest is given up beyond it.
const maxWaiting = 1024

// A waiting request, until its reply comes.
type waiting struct {
	key string // idKey of its id
	id  string // its id as sent (raw JSON; "" for none)
	// session is the Mcp-Session-Id it travelled in ("" on stdio and
	// where there is none): ids are the sender's per session (every SDK
	// counts a session's requests from 0), so a reply answers only a
	// request of its own session, and two sessions may wait on one id.
	session string
	method  string
	seq     uint64
	sent    time.Time
	ex      *envelope.Exchange
	// quiet: a notification (stdio), which waits only to catch a reply
	// that should not come.
	quiet bool
	// oversized: the request exceeded the byte bound; its exchange is
	// not judged.
	oversized bool
	// ambiguous: it took the id of a request still waiting, so a reply
	// with that id answers either: its exchange is not judged.
	ambiguous bool
	// besides are the server's notifications and requests that came
	// while it waited and concern it (stdio), in order, and their size:
	// they go before the response in its reply, as a POST's stream
	// carries them, so the checks judge them as check's do.
	besides     [][]byte
	besidesSize int64
	// over: what the server wrote while it waited went past the byte
	// bound (one line over it, or all of them together), so its reply
	// is not whole and cannot be judged (stdio), as check's transport
	// gives up on a reply that exceeds it.
	over bool
	// deadline is when a client request's silence may be judged (stdio):
	// Limits.Timeout after it went or after its last progress, pushed
	// back by the time its clock stood while the server waited on the
	// client (see clockLocked).
	deadline time.Time
	// alive is the number of a request sent after this one that the
	// server answered (0: none yet): the server lives, and past deadline
	// it left this one unanswered.
	alive uint64
	// progressed: its deadline was moved by a progress notification.
	progressed bool
	// cancelled: its sender cancelled it (notifications/cancelled, see
	// cancelIn); no reply is owed, so its silence is no finding.
	cancelled bool
	// given: the server's request waits again after the server's HTTP
	// layer refused the POST of the client's answer (a 401 before a
	// token refresh, a 400 of a malformed body): its pair was given to
	// that answer, and the next completes none, but the session's
	// clocks stand for it as they did.
	given bool
	// unsent are the ids (compacted) of responses among besides that
	// name no request the client sent (stdio): its reply lists them, as
	// check's does (envelope.Response.Unsent), and they are judged.
	unsent []string
	// spoken are the progress tokens (raw JSON) of other requests,
	// still active then, that progress among besides named (stdio; see
	// stdioRelay.offeredLocked).
	spoken []string
}

// idKey names a request id given raw ("" for none, or for an id that is
// neither a string nor a number: the replies to them carry a null id or
// none).
func idKey(raw string) string {
	if raw == "" {
		return ""
	}
	return envelope.IDKey(gjson.Parse(raw))
}

// A ledger holds the requests of one direction waiting for replies, in
// the order they were sent.
type ledger struct {
	list []*waiting
}

// add puts w in the ledger. It returns a request it gave up for it: the
// oldest, when too many wait, or an earlier one with the same id, whose
// reply can no longer be told from w's.
func (l *ledger) add(w *waiting) (dropped *waiting, why string) {
	// (A batch's key names no id: two batches in flight share it, and
	// neither reuses the other's ids; review rev90.)
	if w.key != "" && w.key != batchKey {
		for i, o := range l.list {
			if o.key == w.key && o.session == w.session && !o.quiet {
				l.list = append(l.list[:i], l.list[i+1:]...)
				if o.given {
					// Its pair was given; the id is the new one's now.
					break
				}
				dropped, why = o, "a later request reused its id before the reply; the reply cannot be attributed"
				w.ambiguous = true
				break
			}
		}
	}
	if dropped == nil && len(l.list) >= maxWaiting {
		if !l.list[0].given {
			dropped, why = l.list[0], "more than 1024 requests were waiting for replies; the oldest was given up"
		}
		l.list = l.list[1:]
	}
	l.list = append(l.list, w)
	return dropped, why
}

// match finds and removes the request a reply with id answers: the one
// with the same id; else one with the id's value in the other type;
// else, when only one request waits, that one (a reply that mangled the
// id still answers it, and is judged for that). A reply with no
// readable id answers what its kind fits before the order of sending: an
// error, a request whose id could not be read (a malformed line, a null
// id, a line that is no JSON whatever id it seems to hold), else a batch
// refused whole; a result, a request with such an id
// (a malformed line gets no result); and only then the oldest of what
// had no readable id, notifications included (a server that answers one
// is wrong, and is judged for it). Taking the notification first failed a
// right -32700 to the line after it as the notification's reply.
func (l *ledger) match(id string, isError bool) *waiting {
	key := idKey(id)
	if v := gjson.Parse(id); key == "" && (v.IsObject() || v.IsArray() || v.IsBool()) {
		// An id of a type MCP forbids, echoed: the request sent with it,
		// before any whose id could not be read (a null one's).
		for i, w := range l.list {
			if !w.quiet && w.id != "" && envelope.SameText([]byte(w.id), []byte(v.Raw)) {
				return l.remove(i)
			}
		}
	}
	if key == "" {
		for i, w := range l.list {
			if !w.quiet && (w.key == "" && (isError || w.method != "") || isError && unreadable(w)) {
				return l.remove(i)
			}
		}
		if i := l.find(batchKey, false); isError && i >= 0 {
			return l.remove(i)
		}
	}
	if i := l.find(key, key == ""); i >= 0 {
		return l.remove(i)
	}
	if i := l.find(envelope.OtherTypeKey(key), false); key != "" && i >= 0 {
		return l.remove(i)
	}
	if len(l.list) == 1 && !l.list[0].quiet {
		return l.remove(0)
	}
	return nil
}

// matchIn is match among the requests of one session: a reply in
// another session's traffic answers none of them.
func (l *ledger) matchIn(session, id string, isError bool) *waiting {
	in := ledger{list: make([]*waiting, 0, len(l.list))}
	for _, w := range l.list {
		if w.session == session {
			in.list = append(in.list, w)
		}
	}
	w := in.match(id, isError)
	if w != nil {
		l.take(w)
	}
	return w
}

// idlessError reports whether o is a reply with no readable id that is
// an error, the one case match reads its kind in: a reply with an id is
// not read again.
func idlessError(o *Observation) bool {
	return idKey(o.ID) == "" && gjson.GetBytes(o.Raw, "error").Exists()
}

// unreadable: w's request is no valid JSON, so its receiver could not
// read the id the observer salvaged from it (a line cut short, say): its
// error comes with a null id. Asked only when a null-id error arrives.
func unreadable(w *waiting) bool {
	return w.ex != nil && !w.oversized && !gjson.ValidBytes(w.ex.Request.Body)
}

// batchKey is the key of a batch a client sent (2025-03-26): a batch
// has no id of its own.
const batchKey = "["

// matchBatch finds and removes the batch a batch reply answers: the first
// waiting batch one of whose requests' ids the reply names, else the
// first waiting batch (a reply that names none of them is still judged
// as that batch's).
func (l *ledger) matchBatch(reply []byte) *waiting {
	ids := map[string]bool{}
	gjson.ParseBytes(reply).ForEach(func(_, m gjson.Result) bool {
		if k := envelope.IDKey(m.Get("id")); k != "" {
			ids[k] = true
		}
		return true
	})
	first := -1
	for i, w := range l.list {
		if w.key != batchKey || w.quiet {
			continue
		}
		if first < 0 {
			first = i
		}
		named := false
		gjson.ParseBytes(w.ex.Request.Body).ForEach(func(_, m gjson.Result) bool {
			named = ids[envelope.IDKey(m.Get("id"))] && m.Get("method").Exists()
			return !named
		})
		if named {
			return l.remove(i)
		}
	}
	if first >= 0 {
		return l.remove(first)
	}
	return nil
}

// find returns the index of the first request with key; quiet ones
// (notifications) count only when quietToo.
func (l *ledger) find(key string, quietToo bool) int {
	for i, w := range l.list {
		if w.key == key && (!w.quiet || quietToo) {
			return i
		}
	}
	return -1
}

func (l *ledger) remove(i int) *waiting {
	w := l.list[i]
	l.list = append(l.list[:i], l.list[i+1:]...)
	return w
}

// take removes w if it still waits.
func (l *ledger) take(w *waiting) bool {
	for i, o := range l.list {
		if o == w {
			l.remove(i)
			return true
		}
	}
	return false
}

// drain removes and returns every waiting request.
func (l *ledger) drain() []*waiting {
	out := l.list
	l.list = nil
	return out
}

// drainOwed removes every waiting request and returns those still owed
// a reply. One its sender cancelled, and no reply answered, ended as the
// cancellation asked: nothing failed, and nothing is left to judge. One
// whose pair was given (given) was judged with its answer.
func (l *ledger) drainOwed() []*waiting {
	return slices.DeleteFunc(l.drain(), func(w *waiting) bool { return w.cancelled || w.given })
}

// waitingIn reports whether a request of session waits for its reply.
func (l *ledger) waitingIn(session string) bool {
	for _, w := range l.list {
		// (A ping, a keep-alive the client answers at once, holds up
		// nothing: the clocks run while it waits; nor does a request
		// its sender cancelled, which is owed nothing.)
		if w.session == session && !w.quiet && !w.cancelled && w.method != "ping" {
			return true
		}
	}
	return false
}

// cancelIn marks the request of session that the notifications/cancelled
// o names (params.requestId), and returns it: nil when o names none
// waiting that was not cancelled already, or no readable id. A cancelled
// request is owed no reply (its receiver SHOULD NOT answer it), so no
// clock waits on it (waitingIn, waitsOn), and unanswered it ends with
// nothing to say (drainOwed). It stays in the ledger all the same: the
// cancellation and the reply may cross, and a reply sent anyway still
// answers its request, which the sender then ignores, as the spec has
// it; it is no stray, and no fault of the asker's.
func (l *ledger) cancelIn(session string, o *Observation) *waiting {
	if o.Oversized {
		return nil
	}
	k := idKey(gjson.GetBytes(o.Raw, "params.requestId").Raw)
	if k == "" {
		return nil
	}
	for _, w := range l.list {
		if w.key == k && w.session == session && !w.quiet && !w.cancelled {
			w.cancelled = true
			return w
		}
	}
	return nil
}
