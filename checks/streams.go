package checks

import (
	"bytes"
	"hash/maphash"
	"net/http"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// Streams remembers the SSE event ids the streams of each session used,
// so that a stream can be held to T-HTTP-16 across the session: an id
// names one event of one stream, which is what lets a client resume
// with Last-Event-ID. One exchange shows one stream; this is what the
// earlier exchanges showed.
//
// check, lint and the relays each keep one and give it every exchange
// they judge, in the order they report them (never the order replies
// happened to arrive in): a transcript read in its line order then
// gives lint what the live run knew, and the later exchange of two in
// the report is the one that reused an id.
type Streams struct {
	mu   sync.Mutex
	seed maphash.Seed
	// seen holds a hash of each session and id, and one of the event it
	// named: bounded memory per id whatever its length, and a collision
	// among maxStreamIDs ids is about one chance in 10^7.
	seen map[uint64]uint64
}

// A Reuse is an event id of a stream that an earlier stream of its
// session used. Same: it names the same event there (its type and data,
// which holds a message), given again on a stream that is not a
// resumption; the id still names one message, which is what resumption
// needs. Request: ID is instead the id of a request the server sent on
// the stream, which a request of its own on an earlier stream of the
// session used (T-RPC-4: a requester never uses an id twice in a
// session), unless it is the same event given again (its event id and
// data), which is the same request.
type Reuse struct {
	ID      string
	Same    bool
	Request bool
}

// maxStreamIDs bounds the ids remembered (about 40 MB): past it, a
// stream is still compared with the ids remembered, and adds none.
const maxStreamIDs = 1 << 20

// NewStreams returns an empty memory of streams.
func NewStreams() *Streams {
	return &Streams{seed: maphash.MakeSeed(), seen: map[uint64]uint64{}}
}

// Reused records the event ids of ex's reply stream and returns those
// an earlier stream of its session (or, without a session, of this
// client) used. It returns nil, and records nothing, for anything but an
// SSE reply over HTTP, for a GET that resumes a stream (a resumed stream
// gives its own events again, ids and all), and for a 2026-07-28
// request, whose streams are not resumed.
func (s *Streams) Reused(ex *envelope.Exchange) []Reuse {
	if s == nil || ex == nil || ex.Transport != envelope.HTTP || ex.Response == nil ||
		!envelope.IsEventStream(envelope.HeaderGet(ex.Response.Header, "Content-Type")) ||
		envelope.HeaderGet(ex.Request.Header, "Last-Event-ID") != "" ||
		envelope.HeaderGet(ex.Request.Header, "MCP-Protocol-Version") == envelope.V20260728 {
		return nil
	}
	sess := streamSession(ex.Request.Header, ex.Response.Header)
	var mine map[uint64]uint64
	var reused []Reuse
	r := envelope.NewSSEBodyReader(ex.Response.Body, envelope.MaxSSELine)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if sess != "" {
			// (Without a session, which client a request went to is not
			// known: T-RPC-4 binds one session.)
			if k, ok := s.requestKey(sess, ev.Data); ok {
				// The same request given again is the same event: its id
				// and its data (a replayed stream, as the official Go SDK
				// replays its standalone one to every GET). Under a new
				// event id, or none, the same bytes are a second request
				// (review rev92: ping "p1" on every stream passed).
				var h maphash.Hash
				h.SetSeed(s.seed)
				h.WriteString(ev.ID)
				h.WriteByte(0)
				h.Write(ev.Data)
				msg := h.Sum64()
				if _, dup := mine[k]; !dup {
					if first, ok := s.seen[k]; ok && first != msg {
						reused = append(reused, Reuse{ID: gjson.GetBytes(ev.Data, "id").Raw, Request: true})
					}
					if mine == nil {
						mine = map[uint64]uint64{}
					}
					mine[k] = msg
				}
			}
		}
		if ev.ID == "" {
			continue
		}
		var h maphash.Hash
		h.SetSeed(s.seed)
		h.WriteString(sess)
		h.WriteByte(0)
		h.WriteString(ev.ID)
		k := h.Sum64()
		if _, dup := mine[k]; dup {
			continue // twice on one stream: HTTP1005's own finding
		}
		h.Reset()
		h.WriteString(ev.Name)
		h.WriteByte(0)
		h.Write(ev.Data)
		event := h.Sum64()
		if mine == nil {
			mine = map[uint64]uint64{}
		}
		mine[k] = event
		if first, ok := s.seen[k]; ok {
			// An event without data (a priming event) carries no message
			// to give again: the same id on another stream is only a
			// cursor two streams share, which a client resuming with it
			// cannot tell apart.
			reused = append(reused, Reuse{ID: ev.ID, Same: first == event && len(bytes.TrimSpace(ev.Data)) > 0})
		}
	}
	for k, event := range mine {
		if len(s.seen) >= maxStreamIDs {
			break
		}
		if _, ok := s.seen[k]; !ok {
			s.seen[k] = event
		}
	}
	return reused
}

// requestKey is the memory's key of the id of the request data holds, in
// session sess (apart from the event ids' keys); ok is false when data
// holds no request with an id.
func (s *Streams) requestKey(sess string, data []byte) (uint64, bool) {
	if !bytes.Contains(data, []byte(`"method"`)) {
		return 0, false
	}
	m := gjson.ParseBytes(data)
	id := envelope.IDKey(m.Get("id"))
	if !m.IsObject() || m.Get("method").Type != gjson.String || id == "" {
		return 0, false
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(sess)
	h.WriteByte(1)
	h.WriteString(id)
	return h.Sum64(), true
}

// streamSession names the session a stream belongs to: the one the
// request names, or for an initialize the one its answer issues; ""
// without sessions.
func streamSession(req, resp http.Header) string {
	if sid := envelope.HeaderGet(req, "Mcp-Session-Id"); sid != "" {
		return sid
	}
	return envelope.HeaderGet(resp, "Mcp-Session-Id")
}
