package checks

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// The common skip reasons, allocated once: most exchanges skip most
// checks, and a lint of a large transcript should not pay for it.
var (
	skipNoReply      = &SkipError{"no reply arrived"}
	skipNotObject    = &SkipError{"the reply is not a JSON object (see RPC1001)"}
	skipNotError     = &SkipError{"the reply is not an error"}
	skipErrNotObj    = &SkipError{"error is not an object (see RPC1005)"}
	skipNoData       = &SkipError{"the error has no data"}
	skipNotResult    = &SkipError{"the reply is not a result"}
	skipNoHTTP       = &SkipError{"not an HTTP exchange"}
	skipNoHTTPRsp    = &SkipError{"no HTTP response arrived"}
	skipSpecOnly     = &SkipError{"not part of the spec contract"}
	skipNoSpecData   = &SkipError{"the code has no spec-defined data in this version"}
	skipNotErrStatus = &SkipError{"the HTTP status is not an error"}
)

// needResponse is the common guard of checks that judge the response.
func needResponse(p *Pass) (*envelope.Message, error) {
	if !p.Reply.Has() {
		return nil, skipNoReply
	}
	return p.Reply.Response, nil
}

// needObject guards checks that read members of the response.
func needObject(p *Pass) (*envelope.Message, error) {
	m, err := needResponse(p)
	if err != nil {
		return nil, err
	}
	if !m.IsObject() {
		return nil, skipNotObject
	}
	return m, nil
}

// needError guards checks that judge an error reply.
func needError(p *Pass) (gjson.Result, error) {
	m, err := needObject(p)
	if err != nil {
		return gjson.Result{}, err
	}
	e := m.Get("error")
	if !e.Exists() {
		return e, skipNotError
	}
	if !e.IsObject() {
		return e, skipErrNotObj
	}
	return e, nil
}

func msgPath(p *Pass, i int) string {
	if len(p.Reply.Messages) == 1 {
		return "reply"
	}
	return fmt.Sprintf("messages[%d]", i)
}

var ReplyIsJSON = &Check{
	ID:       "RPC1001",
	Title:    "Every message is one well-formed JSON object",
	SpecRef:  "T-RPC-1, T-RPC-2, T-RPC-12, T-STDIO-1, T-STDIO-2, T-STDIO-4",
	Severity: MUST,
	Area:     AreaEnvelope,
	Doc: `Every message the server sends (the HTTP body, each SSE event's data,
each stdout line on stdio) must be valid UTF-8 and exactly one JSON object.
A JSON array is a batch, which no covered version has (T-RPC-12); a stdout
line that is not JSON is a banner, a log line, or a fragment of
pretty-printed JSON (T-STDIO-1, T-STDIO-2). A member key repeated in one
object is also a finding: parsers disagree on which value wins, so clients
would read different replies.`,
	Run: func(p *Pass) error {
		if len(p.Reply.Messages) == 0 {
			return Skip("no message arrived")
		}
		if p.Reply.SplitErr != nil {
			p.Failf("reply", "the SSE stream could not be read: %v", p.Reply.SplitErr)
		}
		for i, m := range p.Reply.Messages {
			path := msgPath(p, i)
			switch {
			case m.TooDeep:
				p.Failf(path, "the message nests deeper than %d levels", envelope.MaxDepth)
			case !m.UTF8:
				p.Failf(path, "the message is not valid UTF-8")
			case !m.Valid:
				p.Failf(path, "the message is not valid JSON: %s", Quote(string(m.Raw), quoteN))
			case m.IsArray():
				p.Failf(path, "the message is a JSON array (a batch); each message must be one object")
			case !m.IsObject():
				p.Failf(path, "the message is a JSON %s, not an object", envelope.Kind(m.Root()))
			}
			for _, d := range m.Duplicates {
				p.Failf(d, "key %s appears more than once in its object", Quote(d, quoteN))
			}
		}
		return nil
	},
}

var JSONRPCVersion = &Check{
	ID:       "RPC1002",
	Title:    `Every message has jsonrpc "2.0"`,
	SpecRef:  "T-RPC-1; JSON-RPC §4, §5",
	Severity: MUST,
	Area:     AreaEnvelope,
	Doc: `The jsonrpc member of every message must be exactly the string "2.0":
not absent, not 2.0 as a number, not "2".`,
	Run: func(p *Pass) error {
		n := 0
		for i, m := range p.Reply.Messages {
			if !m.IsObject() {
				continue
			}
			n++
			v := m.Get("jsonrpc")
			if v.Type != gjson.String || v.Str != "2.0" {
				p.Failf(msgPath(p, i)+".jsonrpc", `jsonrpc is %s, want the string "2.0"`, describe(v))
			}
		}
		if n == 0 {
			return Skip("no JSON object arrived")
		}
		return nil
	},
}

var ResultXorError = &Check{
	ID:       "RPC1003",
	Title:    "A response has exactly one of result and error",
	SpecRef:  "T-RPC-6; JSON-RPC §5",
	Severity: MUST,
	Area:     AreaEnvelope,
	Doc: `A response carries result or error, never both and never neither. The
published MCP schemas do not enforce this (no additionalProperties: false),
so it is checked in code.`,
	Run: func(p *Pass) error {
		m, err := needObject(p)
		if err != nil {
			return err
		}
		r, e := m.Get("result").Exists(), m.Get("error").Exists()
		switch {
		case r && e:
			p.Failf("reply", "the response has both result and error")
		case !r && !e:
			p.Failf("reply", "the response has neither result nor error")
		}
		return nil
	},
}

var IDEcho = &Check{
	ID:       "RPC1004",
	Title:    "The response id echoes the request id",
	SpecRef:  "T-RPC-5, T-RPC-9, AMB-1; JSON-RPC §5",
	Severity: MUST,
	Area:     AreaEnvelope,
	Doc: `A response carries the id of the request it answers with the same JSON
type and value: the string "7" is not the number 7, 1.5 is not 1, and a
large integer must survive exactly (no float rounding).

When the request's id could not be read (unparseable body, a batch, an id
of a forbidden type such as null, 1.5 or an object), the error's id is
absent or null (AMB-1: JSON-RPC wants null, MCP 2025-11-25 and later allow
leaving it out). Any other id, invented or copied, fails. When the id was
readable, leaving it out fails too: the client cannot match the reply.`,
	Run: func(p *Pass) error {
		m, err := needObject(p)
		if err != nil {
			return err
		}
		got := m.Get("id")
		if p.Expect.IDReadable {
			lost := !got.Exists() || got.Type == gjson.Null
			switch {
			case lost && p.Expect.IDOptional:
			case lost && beyondFloat(p.Expect.ID):
				// RFC 8259 §6 lets a parser limit the range of numbers,
				// and JSON-RPC allows null when the id could not be read.
				p.Warnf("id", "the response has no id for id %s, an integer beyond 2^53 that a parser may not hold (RFC 8259 §6)", clip(p.Expect.ID.Raw))
			case lost && p.Expect.IDLenient:
				p.Warnf("id", "the response has no id; want %s (the server may refuse before reading the body: %s)", clip(p.Expect.ID.Raw), p.Expect.Ambiguity)
			case lost && got.Exists():
				p.Failf("id", "id is null, want %s", describe(p.Expect.ID))
			case lost:
				p.Failf("id", "the response has no id; want %s", clip(p.Expect.ID.Raw))
			case !envelope.SameID(p.Expect.ID, got):
				p.Failf("id", "id is %s, want %s", describe(got), describe(p.Expect.ID))
			}
			return nil
		}
		if got.Exists() && got.Type != gjson.Null {
			// Say why the request had no usable id: a person fixing the
			// server needs the reason, not just the rule.
			why := "the request's id could not be read"
			switch {
			case p.Expect.Condition == envelope.CondBatch:
				why = "the request is a batch, which has no single id"
			case p.Expect.HasID:
				why = "the request's id " + clip(p.Expect.Request.Get("id").Raw) + " is not a valid id (a string or an integer)"
			case p.Expect.Request.IsObject():
				why = "the request has no id"
			}
			p.Deviate("id", "id is %s but %s; want it absent or null", clip(got.Raw), why)
		}
		return nil
	},
}

var ErrorObject = &Check{
	ID:       "RPC1005",
	Title:    "An error is an object with integer code and string message",
	SpecRef:  "T-RPC-8; JSON-RPC §5.1",
	Severity: MUST,
	Area:     AreaEnvelope,
	Doc: `error is an object whose code is an integer (not a string, not 1.5)
and whose message is a string. data is optional.`,
	Run: func(p *Pass) error {
		m, err := needObject(p)
		if err != nil {
			return err
		}
		e := m.Get("error")
		if !e.Exists() {
			return skipNotError
		}
		if !e.IsObject() {
			p.Failf("error", "error is %s, want an object", envelope.Kind(e))
			return nil
		}
		if c := e.Get("code"); c.Type != gjson.Number || !envelope.IsInteger(c.Raw) {
			p.Failf("error.code", "code is %s, want an integer", describe(c))
		}
		if msg := e.Get("message"); msg.Type != gjson.String {
			p.Failf("error.message", "message is %s, want a string", describe(msg))
		}
		return nil
	},
}

var OneReply = &Check{
	ID:       "RPC1006",
	Title:    "A request with an id gets exactly one response",
	SpecRef:  "T-RPC-5, T-HTTP-5; JSON-RPC §5",
	Severity: MUST,
	Area:     AreaEnvelope,
	Doc: `Every request that carries an id (or that is malformed, so the server
must report the error) is answered by exactly one response: not silence,
not two responses.`,
	Run: func(p *Pass) error {
		if p.Expect.NoReply {
			return Skip("the request is a notification")
		}
		if p.Expect.Condition == envelope.CondHTTPMethod {
			return Skip("not a JSON-RPC request")
		}
		switch n := p.Reply.Responses; {
		case n == 0 && !p.Reply.Has() && p.Expect.BodyOptional && p.Exchange.Response != nil && slices.Contains(p.Expect.Status, p.Exchange.Response.Status):
			// A rejection the spec lets go without a body (T-HTTP-14);
			// the strict contract's body rule is HTTP1001's.
		case n == 0 && !p.Reply.Has():
			p.Deviate("reply", "no response arrived for the request")
		case n > 1:
			p.Failf("reply", "%d responses arrived for one request", n)
		}
		return nil
	},
}

var NotificationNoReply = &Check{
	ID:       "RPC1007",
	Title:    "A notification gets no response",
	SpecRef:  "T-RPC-10, T-HTTP-4; JSON-RPC §4.1",
	Severity: MUST,
	Area:     AreaEnvelope,
	Doc: `A message without an id is a notification, and the receiver never
answers it, not even with an error. On stdio nothing is written in reply;
on HTTP the answer is 202 Accepted with an empty body (or, when the server
cannot accept it, an HTTP error whose body, if any, is an id-less error).`,
	Run: func(p *Pass) error {
		if !p.Expect.NoReply {
			return Skip("the request expects a response")
		}
		resp := p.Exchange.Response
		if resp == nil {
			return nil
		}
		if p.Exchange.Transport == envelope.HTTP && resp.Status == 202 && len(resp.Body) > 0 {
			p.Failf("http.body", "202 for a notification has a %d-byte body, want it empty", len(resp.Body))
		}
		for i, m := range p.Reply.Messages {
			if !m.IsObject() || m.Get("method").Exists() {
				continue
			}
			if id := m.Get("id"); id.Exists() && id.Type != gjson.Null {
				p.Failf(msgPath(p, i), "the notification was answered with a response (id %s)", clip(id.Raw))
			} else if m.Get("result").Exists() || p.Exchange.Transport == envelope.Stdio {
				p.Failf(msgPath(p, i), "the notification was answered with a response")
			}
		}
		return nil
	},
}

var ResultObject = &Check{
	ID:       "RPC1008",
	Title:    "A result is a JSON object",
	SpecRef:  "T-RPC-7",
	Severity: MUST,
	Area:     AreaEnvelope,
	Doc: `result is always an object, also for empty results ({} in 2025-xx,
{"resultType":"complete"} in 2026-07-28): never null, a string or an array.`,
	Run: func(p *Pass) error {
		m, err := needObject(p)
		if err != nil {
			return err
		}
		r := m.Get("result")
		if !r.Exists() {
			return skipNotResult
		}
		if !r.IsObject() {
			p.Failf("result", "result is %s, want an object", envelope.Kind(r))
		}
		return nil
	},
}

// clip shows raw JSON as it was sent, cut to the quoting bound; JSON
// text has no raw control characters, but a cut may still need marking.
func clip(raw string) string {
	if r := []rune(raw); len(r) > quoteN {
		raw = string(r[:quoteN]) + "…"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, raw)
}

// beyondFloat: an integer id that a float64 cannot hold exactly.
func beyondFloat(id gjson.Result) bool {
	if id.Type != gjson.Number {
		return false
	}
	digits := strings.TrimPrefix(id.Raw, "-")
	return len(digits) > 15 && (id.Num >= 1<<53 || id.Num <= -(1<<53))
}

// describe names a value's type and, for scalars, its text.
func describe(v gjson.Result) string {
	switch k := envelope.Kind(v); k {
	case "absent", "null", "object", "array":
		return k
	default:
		return k + " " + clip(v.Raw)
	}
}
