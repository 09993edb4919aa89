package envelope

import (
	"errors"
	"io"
	"slices"

	"github.com/tidwall/gjson"
)

// A Reply is what came back for one exchange, split into JSON-RPC
// messages once. The transport, the judge, the runner and send all read
// replies through ReadReply, so the message send annotates, the one the
// runner learns from and the one the checks judge are always the same.
type Reply struct {
	// Messages are every message that came back, in order.
	Messages []Message
	// Response is the JSON-RPC response to the request: the one whose id
	// is one the request could be read to carry, else the first
	// response-shaped message the run did not know for another request's
	// or none's, else the first it knew so by Response.Unsent or
	// Response.Again (a reply with a wrong or stale id; not for a batch
	// request, and never a copy, Response.Copies), else the first
	// message that is not a JSON object (so a malformed reply is judged,
	// not missed). Nil when none came, and when Response.Answered says
	// the reply was taken in an earlier exchange.
	Response *Message
	// Responses counts response-shaped messages (objects with no
	// "method" member).
	Responses int
	// SplitErr is set when the body could not be read into messages
	// within the checker's bounds: an SSE body that could not be split
	// into events, or a body whose Content-Encoding could not be undone
	// (a *CodingError: an unknown coding, a corrupt body, one that
	// decodes past MaxDecoded). Nothing of such a body is judged.
	SplitErr error
	// Body is the reply's body as the client reads it: its
	// Content-Encoding undone (once, here, for every check), else the
	// body as it came.
	Body []byte
	// LastEventID is the last event id an SSE stream set: a client can
	// resume the stream from it (2025-xx), so a stream that ended without
	// the response may still deliver it.
	LastEventID string
	// one holds Messages when there is one (most replies): the reply and
	// its message in one allocation.
	one [1]Message
}

// Has reports whether a response arrived.
func (r *Reply) Has() bool { return r.Response != nil }

// cachedMessages is how many messages of a reply get a member cache: a
// reply's first messages, and its response, are read by every check;
// the rest of a long stream is read once or twice each, and a cache each
// would make its memory many times the stream's size.
const cachedMessages = 64

// MaxSSELine bounds one SSE line when a recorded body is split.
const MaxSSELine = 16 << 20

// ReadOptions say what ReadReply needs to know of the request.
type ReadOptions struct {
	// IDs are the ids the request can be read to carry; the response is
	// the message that echoes one of them.
	IDs []gjson.Result
	// NotRPC: the request was no JSON-RPC message (a GET or DELETE), so a
	// body is a message only when it means to be one: a plain-text
	// "Method Not Allowed" is no malformed JSON-RPC reply, but a JSON-RPC
	// error body is judged whatever the status. The same holds for the
	// body of any HTTP error status (a 401's OAuth error, a proxy's HTML).
	NotRPC bool
	// Batches: a message may be a batch (2025-03-26 has them, T-V0326-1),
	// whose elements are then read as messages of their own, so the
	// response to a single request is found inside one. Not for a batch
	// request, whose reply is judged as the array it is.
	Batches bool
	// Batch: the request is a batch, whose reply is the array it gets
	// or one refusal of it: a response the run knew for another
	// request's or none's is never read as its reply.
	Batch bool
}

// ReadReply splits a response into messages and finds the reply to the
// request among them.
func ReadReply(resp *Response, o ReadOptions) *Reply {
	r := &Reply{}
	if resp == nil {
		return r
	}
	raw := resp.Messages
	// (resp.Header.Get, without canonicalizing a name that is canonical)
	var ct string
	if vs := resp.Header[canonicalName("Content-Type")]; len(vs) > 0 {
		ct = vs[0]
	}
	sse := IsEventStream(ct)
	var whole *Message // the body read whole, when it was
	r.Body = resp.Body
	if body := resp.Body; (raw == nil || sse) && len(body) > 0 {
		if codings := Codings(resp.Header); codings != nil {
			// A compressed body is judged as the client reads it. One that
			// cannot be read is the checker's limit, not malformed JSON.
			// A body cut short keeps what decoded (judged as cut). Only a
			// recording still coded comes here (the transport and the
			// relay record bodies decoded, within the run's byte bound),
			// and it says no bound: the default one.
			var err error
			body, err = DecodeBody(body, codings, MaxDecoded)
			if err != nil && !((resp.Cut || resp.Truncated) && errors.Is(err, io.ErrUnexpectedEOF)) {
				r.SplitErr = err
				return r
			}
			r.Body = body
		}
		// An SSE body is split here even when the transport split it:
		// the body is what a transcript keeps, so live runs and lint read
		// the same events (and their ids).
		notRPC := o.NotRPC || resp.Status >= 400 || resp.Status == 202
		if notRPC && !sse && !resp.Cut {
			// read once: to tell whether it is meant as a message, and
			// as the message when it is
			m := parseLean(body)
			whole = &m
		}
		switch {
		case sse:
			raw, r.LastEventID, r.SplitErr = SplitSSE(body, MaxSSELine)
		case resp.Cut:
			// The start of a body whose end never came: no message.
		case notRPC && !whole.rpcShaped() && !whole.TooDeep && !(o.Batches && whole.batchOfRPC()):
			// (A body too deep to read is read as a message all the same,
			// so the judge says it could not judge it.)
			// (A 202's body is no message unless it means to be one:
			// Express's sendStatus(202) writes "Accepted", which RPC1007
			// judges as a body the notification should not get.)
		default:
			raw = [][]byte{body}
		}
	}
	// Indexes, not pointers, until the slice stops growing: an append may
	// move it.
	ix := replyIndexes{first: -1, stray: -1, garbage: -1, match: -1}
	if len(raw) == 1 {
		r.Messages = r.one[:0:1]
	} else {
		r.Messages = make([]Message, 0, len(raw))
	}
	for _, b := range raw {
		var m Message
		if whole != nil && len(raw) == 1 {
			m = *whole // raw is the body, read above
		} else {
			m = parseLean(b)
		}
		if elems := batchOf(&m, o); len(elems) > 0 {
			r.Messages = slices.Grow(r.Messages, len(elems))
			body := trimBOM(m.Raw)
			for _, e := range elems {
				raw := []byte(e.Raw)
				if end := e.Index + len(e.Raw); e.Index > 0 && end <= len(body) {
					raw = body[e.Index:end] // the bytes as they came
				}
				em := parseLean(raw)
				em.InBatch = true
				r.read(em, o, resp, &ix)
			}
			continue
		}
		r.read(m, o, resp, &ix)
	}
	switch {
	case resp.Answered:
		// Judged where it came: taking a later response for it would
		// judge the request's reply twice.
	case ix.match >= 0:
		r.Response = &r.Messages[ix.match]
	case ix.first >= 0:
		r.Response = &r.Messages[ix.first]
	case ix.stray >= 0 && !o.Batch:
		r.Response = &r.Messages[ix.stray]
	case ix.garbage >= 0:
		r.Response = &r.Messages[ix.garbage]
	}
	if r.Response != nil {
		r.Response.scan() // the message every check reads most
	}
	return r
}

// batchOf is the elements of a batch the options read message by
// message (none for any other message).
func batchOf(m *Message, o ReadOptions) []gjson.Result {
	if !o.Batches || !m.IsArray() {
		return nil
	}
	return m.root.Array()
}

// replyIndexes are where the messages a reply may be read as stand (-1:
// none): the one echoing the request's id, the first response-shaped one
// the run did not know for a stray, the first such stray, the first
// message that is no object.
type replyIndexes struct{ match, first, stray, garbage int }

// read appends one message to the reply, keeping the indexes of those
// it may be read as (see replyIndexes).
func (r *Reply) read(m Message, o ReadOptions, resp *Response, ix *replyIndexes) {
	if len(r.Messages) < cachedMessages {
		m.scan()
	}
	r.Messages = append(r.Messages, m)
	i := len(r.Messages) - 1
	if !m.IsObject() {
		if ix.garbage < 0 {
			ix.garbage = i
		}
		return
	}
	if m.Get("method").Exists() {
		return // a notification or a server request
	}
	r.Responses++
	id := m.Get("id")
	if ix.first < 0 {
		switch unsent, again, copy := resp.StrayKind(id); {
		case copy:
			// The response another request took, again: never this
			// one's reply.
		case unsent || again:
			if ix.stray < 0 {
				ix.stray = i
			}
		default:
			ix.first = i
		}
	}
	if ix.match < 0 {
		for _, want := range o.IDs {
			if SameID(want, id) {
				ix.match = i
				break
			}
		}
	}
}

// rpcShaped: a body that means to be a JSON-RPC message: an object with a
// jsonrpc member, or an error object with a code, as a 405's JSON-RPC
// error body has. {"error":"invalid_token"} (OAuth) is not one.
func (m *Message) rpcShaped() bool {
	return m.Valid && rpcValue(m.root)
}

func rpcValue(v gjson.Result) bool {
	return v.IsObject() && (v.Get("jsonrpc").Exists() || v.Get("error").IsObject() && v.Get("error.code").Exists())
}

// batchOfRPC: a batch whose elements all mean to be JSON-RPC messages,
// as a 2025-03-26 server's error body may be.
func (m *Message) batchOfRPC() bool {
	if !m.IsArray() {
		return false
	}
	n := 0
	ok := true
	m.root.ForEach(func(_, e gjson.Result) bool {
		n++
		ok = rpcValue(e)
		return ok
	})
	return ok && n > 0
}

// IsResponse reports whether msg ends an exchange: a JSON object with no
// "method" member (a result or an error, whatever its id says), or a JSON
// array (a batch reply, which the checks then judge). A request or a
// notification does not, nor does anything that is not JSON, nor a bare
// JSON scalar: none of those is an answer, and the server may still send
// one. Transports stop reading at it.
func IsResponse(msg []byte) bool {
	msg = trimBOM(msg)
	if TooDeep(msg) || !gjson.ValidBytes(msg) {
		return false
	}
	r := gjson.ParseBytes(msg)
	switch {
	case r.IsObject():
		return !r.Get("method").Exists()
	case r.IsArray():
		// A batch answers when it holds a response, or holds nothing (an
		// empty one is judged as such); one of the server's own
		// notifications and requests (2025-03-26) answers nothing.
		n, answers := 0, false
		r.ForEach(func(_, e gjson.Result) bool {
			n++
			answers = !e.IsObject() || !e.Get("method").Exists()
			return !answers
		})
		return n == 0 || answers
	}
	return false
}
