// Package envelope reads JSON-RPC 2.0 messages as they travelled on the
// wire and knows what the MCP protocol versions and the error-envelope
// contract require of them. Nothing here does I/O: transports produce
// Exchanges, checks judge them.
package envelope

import (
	"net/http"
	"strings"
)

// Transport names, as they appear in transcripts and fixtures.
const (
	HTTP  = "http"
	Stdio = "stdio"
)

// An Exchange is one request the checker sent (or a client sent, for lint)
// and everything that came back for it.
type Exchange struct {
	Transport string // HTTP or Stdio
	// Version is the protocol version in force for this exchange: the one
	// negotiated, or declared by a transcript. Empty means "infer it from
	// the request" (see Expect).
	Version  string
	Request  Request
	Response *Response // nil: nothing arrived (timeout, or lint's "response": null)
	// Failure says why the exchange could not be completed (timeout, the
	// server died, the reply was too large). Empty when it completed. A
	// failed exchange may still carry a partial Response.
	Failure string
	// Died says the server died during the exchange (a stdio process that
	// exited: its status and stderr tail). It is a finding against the
	// message that killed it, not a failure of the checker.
	Died string
	// Unanswered: the request went out and the exchange ended without a
	// response: its time bound ran out, or the server closed the
	// connection. Whether that is the server's silence (a finding) or the
	// checker's inability to judge depends on whether the server is still
	// alive, which the runner finds out with a liveness probe.
	Unanswered bool
	// Refused: the target refused the connection, so the request never
	// reached it (a server that is not, or no longer, listening).
	Refused bool
	// Note is what the run knows about the exchange beyond its bytes,
	// for the report: "no response within 10s; the server answered a
	// liveness probe".
	Note string
}

// A Request is what was sent: raw body bytes and, for HTTP, the method and
// headers. Bodies are kept byte for byte; nothing is re-encoded.
type Request struct {
	Method string // HTTP method; empty means POST. Unused on stdio.
	// Header holds the headers as sent; read it with HeaderGet, which
	// matches names case-insensitively (a fixture may send odd case).
	Header http.Header
	Body   []byte
}

// A Response is what came back.
type Response struct {
	Status int         // HTTP status; 0 on stdio
	Header http.Header // keys canonical
	Body   []byte      // raw body as received (bounded by the transport)
	// Messages are the JSON-RPC messages the reply carried, in order:
	// the events' data of an SSE stream, or the lines a stdio server wrote
	// while this exchange was open. Nil means "take them from Body" (a
	// JSON body, or an SSE body not yet split, as in lint).
	Messages [][]byte
	// Truncated is set when the transport stopped reading at its byte or
	// event bound; the body is then incomplete.
	Truncated bool
	// Cut: the body ended before its end, because time ran out or the
	// server closed the connection mid-body. It holds what came, which
	// is no message: a JSON body so cut is no reply at all (an SSE
	// stream's complete events still are messages).
	Cut bool
}

// HTTPMethod is the request's HTTP method, POST when unset.
func (r Request) HTTPMethod() string {
	if r.Method == "" {
		return http.MethodPost
	}
	return r.Method
}

// MediaType is a Content-Type value without parameters, lowercased:
// "Application/JSON; charset=utf-8" is "application/json".
func MediaType(v string) string {
	mt, _, _ := strings.Cut(v, ";")
	mt = strings.TrimSpace(mt)
	for i := 0; i < len(mt); i++ {
		if c := mt[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(mt)
		}
	}
	return mt
}

// IsEventStream: a Content-Type naming an SSE stream, read with the
// latitude RFC 9110 gives parameters (an empty one, "text/event-stream;;
// charset=utf-8", is legal where mime.ParseMediaType refuses it).
func IsEventStream(contentType string) bool { return MediaType(contentType) == "text/event-stream" }

// A Secret is a header value given on the command line (--header): a
// credential, typically. It never reaches a transcript or a report.
type Secret struct{ Name, Value string }
