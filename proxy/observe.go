package proxy

import (
	"bytes"
	"net/http"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// Direction is the way a message travelled.
type Direction uint8

const (
	ClientToServer Direction = iota + 1
	ServerToClient
)

func (d Direction) String() string {
	switch d {
	case ClientToServer:
		return "client→server"
	case ServerToClient:
		return "server→client"
	}
	return "unknown"
}

// Kind is what a message is, read from its bytes.
type Kind uint8

const (
	// KindNone: no message, only HTTP (a GET or DELETE, a reply head,
	// a 202 with an empty body).
	KindNone Kind = iota
	KindRequest
	KindNotification
	KindResponse // no method, and an id, a result or an error
	KindBatch    // a JSON array
	KindOther    // not a JSON-RPC message: not JSON, not an object, no method nor result nor error
)

func (k Kind) String() string {
	return [...]string{"http", "request", "notification", "response", "batch", "other"}[k]
}

// An Observation is one message as it passed the relay.
type Observation struct {
	Seq  uint64 // order of passing, from 1, shared by both directions
	Dir  Direction
	Time time.Time
	// Raw is the message: one stdio line (without its "\n" or a "\r"
	// before it), one HTTP body that is not a stream, one SSE event's
	// data, decoded from the reply's Content-Encoding. At most
	// Limits.MaxBytes of it; see Oversized.
	Raw []byte
	// Size is the message's length on the wire, even when Raw was cut.
	Size int64
	// Oversized: the message exceeded Limits.MaxBytes. It was forwarded
	// whole; Raw holds its first MaxBytes bytes and it is not judged.
	Oversized bool
	Kind      Kind
	Method    string // of a request or notification
	ID        string // the id's raw JSON, of a request or response ("" if none)
	// HTTP is nil on stdio.
	HTTP *HTTPMeta
	// Completes: this message ends an exchange, and the Pair follows it
	// in the same delivery order, right after, unless Later.
	Completes bool
	// Later: the message is the response on a POST's event stream, which
	// is read on past it (as check reads it): its Pair follows once the
	// stream ends, Limits.Quiet after it or at a bound, or when the
	// relay closes, and the stream's later messages (and other traffic)
	// are delivered between. On stdio, the response to a request that
	// offered a progress token, whose Pair follows Limits.Quiet after it
	// (or when the relay closes), late progress for the token joining
	// it. The client has the answer at once.
	Later bool
	// Answers is, on stdio, the Seq of the client request a response
	// answers (over HTTP, HTTP.Request says it); 0 when it answers none.
	Answers uint64
	// Note says something the bytes alone do not: "no newline at the
	// end", "reply to no pending request".
	Note string
}

// HTTPMeta is the HTTP side of an observation.
type HTTPMeta struct {
	Request uint64 // the Seq of the client request this belongs to
	Method  string // the client request's HTTP method
	Path    string // its path and query, as the client sent them
	// Endpoint: the path is the MCP endpoint's (the upstream URL's).
	// Traffic to other paths (OAuth discovery, say) is relayed and
	// observed, never paired nor judged.
	Endpoint bool
	Status   int         // server→client: the status; 0 from the client
	Header   http.Header // the request's or the reply's, secrets redacted
	// Event numbers an SSE event in its stream, from 1; 0 otherwise.
	Event int
	// Stream: the reply is a text/event-stream (on the head, and on
	// each event).
	Stream bool
	// Failure: the exchange ended in a failure, not a reply (the server
	// was unreachable, the client went away).
	Failure string
}

// A Pair is a request matched with what answered it.
type Pair struct {
	// Asker is who sent the request: ClientToServer for the client's
	// requests (judged as the server's replies are), ServerToClient for
	// the server's own requests (sampling, elicitation, roots), answered
	// by the client.
	Asker Direction
	// Exchange is the request and its reply. For the client's requests
	// over HTTP, Request is the HTTP request (method, headers, body) and
	// Response the HTTP reply (status, headers, the body as relayed; the
	// messages of an SSE stream up to the response and those that came
	// within Limits.Quiet after it, the body cut at the last whole event
	// taken in; for a Tail pair, one event of a GET stream). A reply with a
	// Content-Encoding is held decoded, as the client reads it, without
	// the Content-Encoding and Content-Length that described the coded
	// bytes, and a Note says so. On stdio and for the
	// server's requests, Request.Body is the request message and
	// Response.Messages the answer (nil Response: none came). Headers
	// hold "<redacted>" for secrets. Failure says why no reply completed
	// it; Response.Truncated that it exceeded the byte bound, or that a
	// POST's stream met check's event bound before its response, and is
	// not to be judged.
	Exchange *envelope.Exchange
	Method   string // the request's JSON-RPC method, if readable
	Sent     time.Time
	Done     time.Time
	// Oversized: the request or its reply exceeded Limits.MaxBytes. Both
	// were relayed whole; the exchange holds their beginnings, and is not
	// to be judged.
	Oversized bool
	// RequestSeq and ReplySeq are the Observations of the request and
	// of the message that completed the pair (0 when none did).
	RequestSeq, ReplySeq uint64
	// Unreached: no connection to the server could be had (refused, no
	// such host, a failed TLS handshake): the request never reached it,
	// and the client got the proxy's own 502. Nothing of the server's
	// was seen; the exchange could not be judged.
	Unreached bool
	// Tail: the pair judges a message that came on a GET stream after
	// the stream's head completed the request's own pair, or, on stdio,
	// a later response to a request whose reply was judged already (its
	// Exchange holds that response alone, with Response.Answered). It
	// does not end the request again.
	Tail bool
}

// An Observer receives what a relay sees. Its methods are called from
// one goroutine, in the order things passed, never on the forwarding
// path: an Observer may take its time (judge, print, record) without
// slowing the traffic, but what it misses while far behind is dropped
// (see Stats).
type Observer interface {
	Message(Observation)
	Exchange(Pair)
}

// Stats counts what a relay passed and what its Observer missed.
type Stats struct {
	Messages [3]int64 // indexed by Direction
	Bytes    [3]int64 // message bytes relayed, by Direction
	Pairs    int64
	// DroppedMessages and DroppedPairs were not delivered: the Observer
	// was too far behind.
	DroppedMessages, DroppedPairs int64
	// Unanswered counts requests that never got a reply (closed as
	// failed pairs).
	Unanswered int64
}

// classify reads what a message is, without changing it. Bytes that
// are not valid JSON but read as a message up to the fault (a raw
// control character in a string, a missing brace) are taken for that
// message, so that they are paired and judged malformed rather than
// passed over; valid says which.
func classify(raw []byte) (k Kind, method, id string, valid bool) {
	if envelope.TooDeep(raw) || !gjson.ValidBytes(raw) {
		k, method, id = classifyCut(raw)
		return k, method, id, false
	}
	k, method, id = classifyValid(raw)
	return k, method, id, true
}

func classifyValid(raw []byte) (Kind, string, string) {
	v := gjson.ParseBytes(raw)
	switch {
	case v.IsArray():
		return KindBatch, "", ""
	case !v.IsObject():
		return KindOther, "", ""
	}
	var m [4]gjson.Result // method, id, result, error
	envelope.Members(v, []string{"method", "id", "result", "error"}, m[:])
	id := m[1].Raw
	switch {
	case m[0].Exists() && m[1].Exists():
		return KindRequest, m[0].Str, id
	case m[0].Exists():
		return KindNotification, m[0].Str, ""
	case m[1].Exists() || m[2].Exists() || m[3].Exists():
		// Shaped as a response, well formed or not: it answers something.
		return KindResponse, "", id
	}
	return KindOther, "", id
}

// classifyCut guesses what the beginning of a message too large to
// keep is, from the members that come before the cut (gjson reads a
// prefix without validating it). The guess only serves to pair the
// message; it is never judged.
func classifyCut(prefix []byte) (Kind, string, string) {
	if len(prefix) == 0 || envelope.TooDeep(prefix) {
		return KindOther, "", ""
	}
	t := bytes.TrimLeft(prefix, " \t\r\n")
	if len(t) == 0 {
		return KindOther, "", ""
	}
	switch t[0] {
	case '[':
		return KindBatch, "", ""
	case '{':
	default:
		return KindOther, "", ""
	}
	var m [2]gjson.Result // method, id
	m[0], m[1] = gjson.GetBytes(prefix, "method"), gjson.GetBytes(prefix, "id")
	switch {
	case m[0].Exists() && m[1].Exists():
		return KindRequest, m[0].Str, m[1].Raw
	case m[0].Exists():
		return KindNotification, m[0].Str, ""
	case m[1].Exists():
		return KindResponse, "", m[1].Raw
	}
	return KindOther, "", ""
}
