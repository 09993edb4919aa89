// Package envelope reads JSON-RPC 2.0 messages as they travelled on the
// wire and knows what the MCP protocol versions and the error-envelope
// contract require of them. Nothing here does I/O: transports produce
// Exchanges, checks judge them.
package envelope

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Transport names, as they appear in transcripts and fixtures.
const (
	HTTP  = "http"
	Stdio = "stdio"
)

// Liveness names the exchange of the liveness probe sent after fixture's
// request went unanswered: the probe is the run's, not the fixture's, and
// its verdicts judge neither the fixture's rules nor its report line.
func Liveness(fixture string) string { return fixture + livenessSuffix }

// IsLiveness says whether name is a liveness probe's (see Liveness).
func IsLiveness(name string) bool { return strings.HasSuffix(name, livenessSuffix) }

const livenessSuffix = "/liveness"

// LivenessMethod is the request every server of version answers at once:
// server/discover in 2026-07-28 (T-LIFE-8), ping before (T-LIFE-5).
func LivenessMethod(version string) string {
	if version == V20260728 {
		return "server/discover"
	}
	return "ping"
}

// LivenessBody is a LivenessMethod request with the id given as raw
// JSON: check's runner marks and probes a pipe with one, and the relays
// probe a server that left a request unanswered.
func LivenessBody(version string, id []byte) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	if LivenessMethod(version) == "server/discover" {
		return append(b, `,"method":"server/discover","params":{"_meta":{"`+MetaProtocolVersion+`":"`+V20260728+`","`+MetaClientCapabilities+`":{}}}}`...)
	}
	return append(b, `,"method":"ping"}`...)
}

// LivenessFallbackMethod is the method of the probe that asks again
// when LivenessMethod went unanswered: one no server defines, which
// JSON-RPC still owes an answer (-32601, JSON-RPC §5.1). A server that
// answers it is alive, and left its ping (or discover) unanswered
// (review rev73: a server that never answers ping was "could not judge"
// on lifecycle/ping, its probe a ping too).
const LivenessFallbackMethod = "wymcp-check/alive"

// LivenessFallbackBody is a LivenessFallbackMethod request with the id
// given as raw JSON, with the _meta a 2026-07-28 request carries.
func LivenessFallbackBody(version string, id []byte) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	if version == V20260728 {
		return append(b, `,"method":"`+LivenessFallbackMethod+`","params":{"_meta":{"`+MetaProtocolVersion+`":"`+V20260728+`","`+MetaClientCapabilities+`":{}}}}`...)
	}
	return append(b, `,"method":"`+LivenessFallbackMethod+`"}`...)
}

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
	// Malformed says the server's HTTP reply broke HTTP/1.1's message
	// syntax in its start line, header section or chunked framing (before
	// its response), so no client can read it (net/http's cause, with
	// the server's bytes quoted). It is a finding against the server
	// (HTTP1006), not a failure of the checker; Response is then nil.
	Malformed string
	// Unanswered: the request went out and the exchange ended without a
	// response: its time bound ran out, or the server closed the
	// connection. Whether that is the server's silence (a finding) or the
	// checker's inability to judge depends on whether the server is still
	// alive, which the runner finds out with a liveness probe.
	Unanswered bool
	// Refused: the target refused the connection, so the request never
	// reached it (a server that is not, or no longer, listening).
	Refused bool
	// NotSent: the run could not send the fixture at all (its deadline
	// passed, the server could not be started again); Failure says why.
	// Nothing of the server's is judged: one error, the rest skipped.
	NotSent bool
	// Note is what the run knows about the exchange beyond its bytes,
	// for the report: "no response within 10s; the server answered a
	// liveness probe".
	Note string
	// Offered holds, for a stdio exchange of a run, the progress tokens
	// (each as raw JSON) that the run's requests had offered when it was
	// judged, and for an HTTP exchange of a run in a session those its
	// requests in that session had offered (the session is the run's
	// alone); for a relay's exchange, those of the requests still active
	// (a stdio pipe's, or a GET stream's session begun through it): a
	// request answered offers its token no more. nil when that is not
	// known (a transcript that does not say, a request in no session,
	// another relay's exchange). Every
	// request on a pipe shares its stdout, so progress naming another
	// request's token may be that one's; progress naming a token outside
	// this list names no request at all (T-PROG-1). Empty but not nil:
	// none was offered.
	Offered []string
	// LogFloor and Listens say, where Offered is known, what else the
	// run's requests on the pipe had asked the server to send (see
	// PipeAsks): log messages at LogFloor and above ("" none; the lowest
	// level any request set), and a listen stream's notifications (the
	// listen requests' ids, raw JSON). A log message below LogFloor
	// belongs to no request on the pipe (T-LOG-2); a
	// notifications/cancelled naming no listen request ends no listen
	// stream (T-STDIO-8). Listens is nil when that is not known (a
	// recording made before it was recorded), empty when none was sent.
	LogFloor string
	Listens  []string
	// Redacted names the secrets (--header values) its bodies held, each
	// replaced by SecretMarker(name) where it stood: a transcript or a
	// report shows that a secret was echoed, never the secret.
	Redacted []string
	// Exited and Lingered say, for the exchange of the end of a stdio
	// server's input (see EndOfInput), how the process took it: it
	// exited within the checker's wait (transport.Limits.Exit), or
	// still ran when the wait ran out (a 2026-07-28 server SHOULD exit
	// promptly: T-STDIO-6). Neither:
	// not known (the run stopped waiting first).
	Exited, Lingered bool
	// SessionLive says, of a 2025-xx GET answered 404 in the run's own
	// session, that a ping the run sent in that session next was
	// served: the 404 was no end of the session (T-SESS-3), and is
	// judged as the GET's own answer (review rev89).
	SessionLive bool
}

// EndOfInput is the Request.Method of a stdio exchange in which no
// message was written: the checker closed the server's stdin, as a client
// ending the session does, and the reply holds what stdout carried after
// that (which T-STDIO-2 binds as any line), until it ended.
const EndOfInput = "EOF"

// InputEnded records on ex, the end of a stdio server's input, how the
// server took it, in the words check and wrap share: it exited within
// wait, or lingered (still ran when the wait ran out), or neither: the
// wait was cut short, as cut says ("the run stopped waiting").
func (ex *Exchange) InputEnded(exited, lingered bool, wait time.Duration, cut string) {
	ex.Exited, ex.Lingered = exited, lingered && !exited
	switch {
	case ex.Exited:
		ex.Note = fmt.Sprintf("stdin closed; the server exited within %v", wait)
	case ex.Lingered:
		ex.Note = fmt.Sprintf("stdin closed; the server was still running %v after", wait)
	default:
		ex.Note = "stdin closed; the server was still running when " + cut
	}
}

// EndsInput says whether ex is the end of a stdio server's input (see
// EndOfInput).
func (ex *Exchange) EndsInput() bool {
	return ex.Transport == Stdio && ex.Request.Method == EndOfInput
}

// MaxOffered bounds the progress tokens a run or a relay remembers (see
// Exchange.Offered): past it, what was offered is no longer known.
const MaxOffered = 256

// A Request is what was sent: raw body bytes and, for HTTP, the method and
// headers. Bodies are kept byte for byte; nothing is re-encoded.
type Request struct {
	Method string // HTTP method; empty means POST. On stdio, empty or EndOfInput.
	// Header holds the headers as sent; read it with HeaderGet, which
	// matches names case-insensitively (a fixture may send odd case).
	Header http.Header
	Body   []byte
}

// A Response is what came back.
type Response struct {
	Status int         // HTTP status; 0 on stdio
	Header http.Header // keys canonical
	// Body is the body as received (bounded by the transport), its
	// Content-Encoding undone where the transport or the relay read it
	// so; Header then names no Content-Encoding, so it is not undone
	// twice.
	Body []byte
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
	// Resumed counts the GETs with Last-Event-ID by which the checker
	// resumed a POST's stream that ended after an event id without the
	// response (T-HTTP-15): their events follow in Body. Fewer than
	// MaxResumes and still no response: the server refused the GET, or
	// ended the resumed stream with nothing left to resume.
	Resumed int
	// ResumeRefused: the last GET that was to resume the stream was
	// answered with no stream (another status or type): the server
	// refused the resumption, which ended there, whatever the count.
	ResumeRefused bool
	// Ended: an event stream the server closed, read to its end (not cut
	// off by the checker's bounds or look). Recordings made before it was
	// recorded say nothing, and a stream is then not known to have ended.
	Ended bool
	// HeldOpen: an event stream that carried its response and was still
	// open when the checker stopped reading, Limits.Quiet after it (the
	// response SHOULD end the stream: T-HTTP-15, T-HTTP-17). False says
	// nothing of a recording made before it was recorded.
	HeldOpen bool
	// Unsent and Again say, for a stdio exchange of a run, what the run
	// knew of responses among Messages that are not its request's own,
	// by their ids (raw JSON, compacted): Unsent named no request the
	// checker had written to the process, so they answer nothing it sent
	// (T-RPC-5); Again named a request an earlier exchange had already
	// taken another response for, so each is a second response to that
	// one (JSON-RPC §5). Neither is the request's reply while another
	// response came. Copies repeated, byte for byte, the response an
	// earlier exchange had taken for the request they name: second
	// responses too, and never the request's reply. Nil when none came
	// or it is not known.
	Unsent []string
	Again  []string
	Copies []string
	// Answered: the request's response came, and was judged, in an
	// earlier exchange (a relay judges each request when its reply
	// comes), so none of Messages is its reply: a response here that
	// names it is a later one (listed in Again or Copies). False says
	// nothing of a recording made before it was recorded.
	Answered bool
}

// Stray reports whether the run knew a response with the id to be
// another request's or none's (see Unsent, Again and Copies).
func (r *Response) Stray(id gjson.Result) bool {
	unsent, again, copy := r.StrayKind(id)
	return unsent || again || copy
}

// StrayKind says which of Unsent, Again and Copies names id; none for a
// null or absent id. An id both Again and Copies name is Again's: by id
// alone, a line with it may be the one with other content, which may be
// the reply (a server that answers twice, and with a stale id).
func (r *Response) StrayKind(id gjson.Result) (unsent, again, copy bool) {
	if r == nil || len(r.Unsent) == 0 && len(r.Again) == 0 && len(r.Copies) == 0 || !id.Exists() || id.Type == gjson.Null {
		return false, false, false
	}
	// By value: a recording may spell an id otherwise ("x\u003cy").
	named := func(s string) bool { return SameValue(gjson.Parse(s), id) }
	again = slices.ContainsFunc(r.Again, named)
	return slices.ContainsFunc(r.Unsent, named), again, !again && slices.ContainsFunc(r.Copies, named)
}

// MaxResumes is how many times the checker resumes one POST's stream, as
// a client follows a server that answers on resumed streams (T-HTTP-15).
const MaxResumes = 3

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
// it), and the secrets it held; b itself when it held none. A value a
// JSON string holds escaped ("sk\/live", "\u0073k") is found and
// replaced too: the string is decoded, scrubbed and written anew. Values
// that cannot be credentials (see scrubbable) are left: they would
// mangle ordinary text and protect nothing.
func ScrubSecrets(b []byte, secrets []Secret) ([]byte, []Secret) {
	if len(secrets) == 0 || len(b) == 0 {
		return b, nil
	}
	sorted := scrubbable(secrets)
	var found []Secret
	note := func(s Secret) {
		if !slices.Contains(found, s) {
			found = append(found, s)
		}
	}
	for _, s := range sorted {
		if bytes.Contains(b, []byte(s.Value)) {
			b = bytes.ReplaceAll(b, []byte(s.Value), []byte(SecretMarker(s.Name)))
			note(s)
		}
	}
	if bytes.IndexByte(b, '\\') >= 0 {
		b = scrubEscaped(b, sorted, note)
	}
	return b, found
}

// scrubEscaped rewrites the JSON string tokens of b whose decoded text
// holds a secret; a token that does not decode is left as it is.
func scrubEscaped(b []byte, secrets []Secret, note func(Secret)) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		j := stringEnd(b, i)
		if j < 0 {
			break
		}
		if bytes.IndexByte(b[i:j], '\\') >= 0 {
			if rep, ok := scrubString(b[i:j+1], true, secrets, note); ok {
				out = append(append(out, b[last:i]...), rep...)
				last = j + 1
			}
		}
		i = j
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// minSecret is the shortest value ScrubSecrets takes out.
const minSecret = 4

// EchoedSecret is the shortest secret whose echo in a reply is a
// finding (ERR4001): a shorter one turns up in ordinary text.
const EchoedSecret = 8

// ScrubExchange is a copy of ex with the secrets taken out of its bodies
// and header values, and the names of those whose echo is judged
// (EchoedSecret bytes or more) in Redacted; ex itself when it holds none.
func ScrubExchange(ex *Exchange, secrets []Secret) *Exchange {
	if len(secrets) == 0 {
		return ex
	}
	c := *ex
	var found, got []Secret
	c.Request.Body, found = ScrubBody(ex.Request.Body, secrets)
	c.Request.Header, got = scrubHeader(ex.Request.Header, secrets)
	found = append(found, got...)
	if r := ex.Response; r != nil {
		rc := *r
		rc.Body, got = ScrubBody(r.Body, secrets)
		found = append(found, got...)
		rc.Header, got = scrubHeader(r.Header, secrets)
		found = append(found, got...)
		rc.Messages = nil
		for _, m := range r.Messages {
			m, got = ScrubBody(m, secrets)
			rc.Messages = append(rc.Messages, m)
			found = append(found, got...)
		}
		c.Response = &rc
	}
	if len(found) == 0 {
		return ex
	}
	names := slices.Clone(ex.Redacted)
	for _, s := range found {
		if len(s.Value) >= EchoedSecret {
			names = append(names, http.CanonicalHeaderKey(s.Name))
		}
	}
	slices.Sort(names)
	c.Redacted = slices.Compact(names)
	return &c
}

// scrubHeader is h with the secrets taken out of its values (a copy when
// any held one), and the secrets found. A header whose value is no
// credential (NoCredential) keeps it.
func scrubHeader(h http.Header, secrets []Secret) (http.Header, []Secret) {
	var out http.Header
	var found []Secret
	for k, vs := range h {
		if NoCredential(k) {
			continue
		}
		for i, v := range vs {
			sv, got := ScrubSecrets([]byte(v), secrets)
			if got == nil {
				continue
			}
			if out == nil {
				out = h.Clone()
			}
			out[k][i] = string(sv)
			found = append(found, got...)
		}
	}
	if out == nil {
		return h, nil
	}
	return out, found
}

// JoinNotes joins two notes of an exchange (Exchange.Note) with "; ",
// either of them possibly empty.
func JoinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
