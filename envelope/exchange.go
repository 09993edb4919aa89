// Package envelope reads JSON-RPC 2.0 messages as they travelled on the
// wire and knows what the MCP protocol versions and the error-envelope
// contract require of them. Nothing here does I/O: transports produce
// Exchanges, checks judge them.
package envelope

import (
	"bytes"
	"net/http"
	"slices"
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
	// Redacted names the secrets (--header values) its bodies held, each
	// replaced by SecretMarker(name) where it stood: a transcript or a
	// report shows that a secret was echoed, never the secret.
	Redacted []string
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

// SecretMarker is what a secret's value becomes where it is shown or
// recorded: it names the header, never the value.
func SecretMarker(name string) string { return "<redacted:" + http.CanonicalHeaderKey(name) + ">" }

// MarkedSecrets are the secrets a scrubbed exchange names, their values
// the markers that stand for them: judged with these, a recorded echo
// of a secret fails as the live one did.
func MarkedSecrets(names []string) []Secret {
	out := make([]Secret, 0, len(names))
	for _, n := range names {
		out = append(out, Secret{Name: n, Value: SecretMarker(n)})
	}
	return out
}

// ScrubSecrets returns b with every secret's value replaced by its
// marker, the longest first (a token inside its "Bearer token" goes with
// it), and the names of those it held whose echo is judged (EchoedSecret
// bytes or more); b itself when it held none. Values shorter than
// minSecret are left: they would mangle ordinary text and protect
// nothing.
func ScrubSecrets(b []byte, secrets []Secret) ([]byte, []string) {
	var names []string
	if len(secrets) == 0 || len(b) == 0 {
		return b, nil
	}
	sorted := slices.Clone(secrets)
	slices.SortStableFunc(sorted, func(x, y Secret) int { return len(y.Value) - len(x.Value) })
	for _, s := range sorted {
		if len(s.Value) < minSecret || !bytes.Contains(b, []byte(s.Value)) {
			continue
		}
		b = bytes.ReplaceAll(b, []byte(s.Value), []byte(SecretMarker(s.Name)))
		if n := http.CanonicalHeaderKey(s.Name); len(s.Value) >= EchoedSecret && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return b, names
}

// minSecret is the shortest value ScrubSecrets takes out.
const minSecret = 4

// EchoedSecret is the shortest secret whose echo in a reply is a
// finding (ERR4001): a shorter one turns up in ordinary text.
const EchoedSecret = 8

// ScrubExchange is a copy of ex with the secrets taken out of its bodies
// and their names in Redacted; ex itself when its bodies hold none.
func ScrubExchange(ex *Exchange, secrets []Secret) *Exchange {
	if len(secrets) == 0 {
		return ex
	}
	c := *ex
	var names, got []string
	c.Request.Body, names = ScrubSecrets(ex.Request.Body, secrets)
	if r := ex.Response; r != nil {
		rc := *r
		rc.Body, got = ScrubSecrets(r.Body, secrets)
		names = append(names, got...)
		rc.Messages = nil
		for _, m := range r.Messages {
			m, got = ScrubSecrets(m, secrets)
			rc.Messages = append(rc.Messages, m)
			names = append(names, got...)
		}
		c.Response = &rc
	}
	if len(names) == 0 {
		return ex
	}
	names = append(names, ex.Redacted...)
	slices.Sort(names)
	c.Redacted = slices.Compact(names)
	return &c
}
