package checks

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
)

var ResultType = &Check{
	ID:       "PRO1002",
	Title:    "A 2026-07-28 result has a valid resultType",
	SpecRef:  "T-LIFE-10, T-LIFE-11, T-LIFE-12, T-LIFE-13, T-MRTR-1, T-MRTR-2, T-MRTR-3, T-MRTR-4, T-TOOL-12",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `In 2026-07-28 every result carries resultType: "complete", or
"input_required" (values an advertised extension defines are out of this
check's reach and warn). input_required may answer only tools/call,
prompts/get and resources/read (T-MRTR-1); it carries inputRequests or
requestState (T-MRTR-2); each input request is a bare elicitation/create,
sampling/createMessage or roots/list object without jsonrpc or id
(T-MRTR-2), and asks only for what this request's clientCapabilities
declared, URL-mode elicitation only when elicitation.url was, a form
only when elicitation is {} or declares form, sampling with tools only
when sampling.tools was: a
capability declared on an earlier request does not count (T-MRTR-3,
T-LIFE-12; the server answers -32021 instead, T-LIFE-13); caching hints
on it warn (T-MRTR-4).
Another resultType string warns: an extension the server advertises may
define it, which its capabilities do not show; it fails where the run's
facts show capabilities that advertise no extension at all (neither
extensions nor experimental holds a member), and where the request's
clientCapabilities name none, since a server then falls back to core
behaviour (T-LIFE-17). A result whose _meta carries
no io.modelcontextprotocol/serverInfo (name and version) warns
(T-LIFE-11, a SHOULD).`,
	Run: func(p *Pass) error {
		if p.Expect.Version != envelope.V20260728 {
			return Skip("resultType exists only in 2026-07-28")
		}
		if p.Expect.Condition == expect.CondLegacyInitialize {
			return Skip("a served initialize answers with legacy semantics (T-COMPAT-2)")
		}
		m, err := needObject(p)
		if err != nil {
			return err
		}
		r := m.Get("result")
		if !r.IsObject() {
			return Skip("the reply is not a result object")
		}
		if readAs0326(p, m) {
			return Skip("served as 2025-03-26, as a request without MCP-Protocol-Version may be read (T-HTTP-8): no resultType is owed")
		}
		rt := r.Get("resultType")
		switch {
		case !rt.Exists():
			p.Failf("result.resultType", "resultType is missing (T-LIFE-10)")
		case rt.Type != gjson.String:
			p.Failf("result.resultType", `resultType is %s, want "complete" or "input_required" (T-LIFE-10)`, describe(rt))
		case rt.Str != "complete" && rt.Str != "input_required" && advertisesNoExtension(p.Expect.Facts):
			p.Failf("result.resultType", `resultType is %s: not "complete" or "input_required", and the server advertises no extension that could define it (T-LIFE-10)`, describe(rt))
		case rt.Str != "complete" && rt.Str != "input_required" && noExtension(p.Expect.Request.Get(envelope.MetaPath(envelope.MetaClientCapabilities))):
			p.Failf("result.resultType", `resultType is %s: not "complete" or "input_required", and the request's clientCapabilities name no extension, so the server falls back to core behaviour (T-LIFE-17)`, describe(rt))
		case rt.Str != "complete" && rt.Str != "input_required":
			// An extension the server advertises may define more values
			// (T-LIFE-10); which ones, its capabilities do not say.
			p.Warnf("result.resultType", `resultType is %s: not "complete" or "input_required"; valid only if an advertised extension defines it (T-LIFE-10)`, describe(rt))
		case rt.Str == "input_required" && envelope.NameField(p.Expect.Method) == "":
			p.Failf("result.resultType", "input_required answers %s; only tools/call, prompts/get and resources/read may (T-MRTR-1)", Quote(p.Expect.Method, quoteN))
		case rt.Str == "input_required":
			judgeInputRequired(p, r)
		}
		if si := r.Get("_meta." + envelope.JoinPath("", "io.modelcontextprotocol/serverInfo")); !si.Get("name").Exists() || !si.Get("version").Exists() {
			p.Warnf("result._meta", "the result's _meta carries no io.modelcontextprotocol/serverInfo with name and version (T-LIFE-11)")
		}
		return nil
	},
}

// advertisesNoExtension: the server's capabilities are known and name no
// extension, in extensions or experimental, that could define a value the
// spec does not.
func advertisesNoExtension(f *expect.Facts) bool {
	_, known := f.Declares("extensions")
	return known && !hasMembers(f.Capability("extensions")) && !hasMembers(f.Capability("experimental"))
}

// noExtension: caps, a capabilities object, names no extension in
// extensions or experimental. Absent capabilities name nothing known.
func noExtension(caps gjson.Result) bool {
	return caps.IsObject() && !hasMembers(caps.Get("extensions")) && !hasMembers(caps.Get("experimental"))
}

// hasMembers: v is an object with at least one member. (ForEach stops at
// the first; on anything but an object or array it calls nothing.)
func hasMembers(v gjson.Result) bool { return v.IsObject() && envelope.NonEmpty(v) }

// inputNeeds maps an input request's method to the client capability it
// needs (T-MRTR-3).
var inputNeeds = map[string]string{"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}

// judgeInputRequired judges an input_required result against the rules of
// T-MRTR-2..4 and the capabilities the request declared.
func judgeInputRequired(p *Pass, r gjson.Result) {
	reqs, state := r.Get("inputRequests"), r.Get("requestState")
	if !reqs.Exists() && !state.Exists() {
		p.Failf("result", "an input_required result with neither inputRequests nor requestState (T-MRTR-2)")
	}
	declared := p.Expect.Request.Get(envelope.MetaPath(envelope.MetaClientCapabilities))
	reqs.ForEach(func(k, v gjson.Result) bool {
		path := envelope.JoinPath("result.inputRequests", k.Str)
		method := v.Get("method").Str
		need, ok := inputNeeds[method]
		switch {
		case !ok:
			p.Failf(path+".method", "input request %s is not elicitation/create, sampling/createMessage or roots/list (T-MRTR-2)", Quote(method, quoteN))
			return true
		case v.Get("jsonrpc").Exists() || v.Get("id").Exists():
			p.Failf(path, "input request %s carries jsonrpc or id; it is a bare {method, params} object (T-MRTR-2)", Quote(method, quoteN))
		}
		switch {
		case !declared.Get(need).Exists():
			p.Failf(path, "input request %s needs the %s capability, which the request did not declare (T-MRTR-3)", Quote(method, quoteN), need)
		default:
			if gap, at := capabilityGap(method, v.Get("params"), declared); gap != "" {
				p.Failf(path+".params."+at, "input request %s asks for %s, which the request did not declare (T-MRTR-3)", Quote(method, quoteN), gap)
			}
		}
		return true
	})
	for _, k := range []string{"ttlMs", "cacheScope"} {
		if r.Get(k).Exists() {
			p.Warnf("result."+k, "an input_required result carries %s; it is not cacheable (T-MRTR-4)", k)
		}
	}
}

var ServerMessages = &Check{
	ID:       "PRO1003",
	Title:    "Messages around the response keep the request's rules",
	SpecRef:  "T-RPC-3, T-RPC-4, T-RPC-11, T-LIFE-3, T-LIFE-4, T-LIFE-15, T-STDIO-5, T-HTTP-17, T-PROG-1, T-LOG-1, T-LOG-2",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `Messages the server sends besides the response (on an SSE stream or
stdout) are notifications, which carry no id (T-RPC-11), or, in 2025-xx
only, requests to the client with a string or integer id (T-RPC-3), no
two of which share an id (T-RPC-4): within one reply, and across the SSE
streams of one HTTP session, where the same id on a later stream's
request fails, unless it comes in the same event (its SSE id and data)
given again, which is the same request (without a session, or across
stdio exchanges, the checker does not follow the server's ids). They
are judged against the rules the request and the server's own
declarations set, not only for form:

- In 2026-07-28 the server sends no JSON-RPC requests at all (T-LIFE-15,
  T-STDIO-5); in 2025-xx it asks for sampling, elicitation or roots only
  when the client declared that capability (T-LIFE-4; the checker
  declares none), and an elicitation mode or sampling with tools only
  when it declared that too (elicitation.form or {}, elicitation.url,
  sampling.tools); in 2025-11-25 it sends tasks/list or tasks/cancel
  only to a client that declared tasks.list or tasks.cancel, tasks/get
  or tasks/result only to one that declared tasks, and
  notifications/elicitation/complete only to one that declared
  elicitation.url (no URL elicitation can have been asked of any other).
  What a SHOULD binds warns: a 2025-11-25 sampling or elicitation request
  augmented with a task, to a client that declared no task support for
  it (the tasks page, Capability Negotiation), and includeContext other
  than "none" to one that declared no sampling.context.
- In 2025-xx a request or notification of a method MCP defines only in
  another version (tasks/* and notifications/elicitation/complete in
  2025-06-18, elicitation/create in 2025-03-26) fails: both sides stay
  within the negotiated version (T-LIFE-4). A method no version defines
  is an extension's and is not judged, nor is this in 2026-07-28 (its
  tasks are an extension's), nor where the version is the checker's
  guess (no declaration, facts or header named it).
- A 2025-xx request other than ping on the reply to initialize warns:
  the client cannot have sent notifications/initialized yet, and until
  it does the server SHOULD NOT send one (T-LIFE-3). (Requests later in
  the session are not judged so: the relay of a live check sends
  notifications/initialized at once.)
- In a session that negotiated 2025-03-26 using only negotiated
  capabilities and version is a SHOULD (T-V0326-5): these warn there.
- A sampling request's tool turns (2025-11-25's sampling page, Message
  Content Constraints): a user message holding a tool_result holds only
  tool results, and an assistant message with tool_use is followed by a
  user message with a result for each tool use's id; messages that end
  on the tool use only warn.
- notifications/progress names the progressToken the request gave, its
  progress rises strictly, and none follows the response (T-PROG-1),
  except a task-augmented request's answered with its task (2025-11-25):
  the token serves the task's lifetime, so its progress goes on. On
  stdio, a token the client offered to more than one request of the pipe
  (a relay's client may) names them all: progress that falls or comes
  after the response may be the other's, so it only warns there.
- notifications/message in 2026-07-28 comes only for a request whose
  _meta sets logLevel, and at or above that level (T-LOG-2); in 2025-xx
  only from a server that declared the logging capability (T-LOG-1).
- List-change and resource-update notifications come only from a server
  that declared the matching listChanged or resources.subscribe (2025-xx,
  T-LIFE-4); in 2026-07-28 only on a subscriptions/listen stream, as does
  its acknowledgment (T-HTTP-17, T-STDIO-5, T-SUB-2); on stdio, whose
  stdout every exchange shares, one tagged with a subscriptionId is such
  a stream's, unless the run knew the listen requests sent on the pipe
  and none carried that id (T-META-3).
- The notifications of a subscriptions/listen stream (2026-07-28) are
  PRO1009's to judge; on stdio only those tagged with the listen's own
  id are the stream's, and the rest are judged here as on any exchange
  (an untagged list change fails T-STDIO-5).

A message after the response on a POST's stream warns: the stream
SHOULD end with the response (T-HTTP-15; T-HTTP-17 in 2026-07-28).

A progress or log notification that names another request fails on a
POST's own SSE stream in 2026-07-28 (T-HTTP-17, MUST) and warns before
(T-HTTP-15: they SHOULD relate to the request, and another request in
flight, of the session or of any client a stateless server serves, may
own what they name). On stdio other requests
may be in flight, so it only warns there; progress for a token another
request on the pipe offered and that is still in flight (the run knew
the offers: one the checker gave up on at --timeout, say) is that
request's, and no finding. It fails when it is progress for a
token no request of the run offered at all, or a 2026-07-28 log message
below the lowest logLevel any request on the pipe had set (or when none
had set one): that fails wherever the run knew what its requests asked
for (check, send and wrap, and the "offered", "logAsked" and "logFloor"
of their transcripts' stdio exchanges). Progress
for a token no request of an HTTP session offered fails too where the
run knew them all (check's sessions, which are its alone, and the
"offered" of their transcripts' exchanges). What the server declared is known in live runs
and in transcripts that carry the run's facts; without them the
declaration rules are not judged.`,
	Run: func(p *Pass) error {
		x := p.Expect
		respAt := -1
		for i := range p.Reply.Messages {
			if &p.Reply.Messages[i] == p.Reply.Response {
				respAt = i
			}
		}
		// On a POST's own stream every message concerns the request; on
		// stdio other requests may be in flight.
		scoped := expect.Want{Level: expect.Must, Rule: "T-HTTP-17"}
		if x.Version != envelope.V20260728 {
			// Before 2026-07-28 they only SHOULD relate to it, and another
			// request in flight may own what they name: in the session,
			// or, without one, of any client a stateless server serves.
			scoped = expect.Want{Level: expect.Should, Rule: "T-HTTP-15"}
		}
		switch {
		case x.Condition == expect.CondEndOfInput:
			// No request is in flight after stdin closed, unless one the
			// checker gave up on (--timeout): the server may still work
			// on it (review rev51: the reason said "another request").
			scoped = expect.Want{Level: expect.Open, Rule: "after stdin closed, only a request the checker gave up on may still be in flight"}
		case p.Exchange.Transport == envelope.Stdio:
			scoped = expect.Want{Level: expect.Open, Rule: "on stdio another request may be in flight"}
		}
		token := x.Request.Get("params._meta.progressToken")
		// A task-augmented request answered with its task (2025-11-25)
		// has not completed: its progressToken MUST serve the task's
		// whole lifetime (progress page, Behavior Requirements), so
		// progress after that answer is the task's, not a late one.
		taskLives := respAt >= 0 && envelope.TaskLives(x.Version, x.Request.Get("params.task"), p.Reply.Messages[respAt].Get("result.task"))
		progress := map[string]string{} // token → the last progress, as written
		// A token the client offered to more than one request on the
		// pipe names them all: progress for it may be another's, so its
		// order and its timing say nothing of this request's (the
		// client's breach is CLI1003's).
		shared := p.Exchange.Transport == envelope.Stdio && offeredTwice(p.Exchange.Offered, token)
		notOurs := expect.Want{Level: expect.Open, Rule: "the client offered the token to another request on the pipe too, whose progress it may be"}
		listen := x.Method == "subscriptions/listen" && x.Version == envelope.V20260728
		seen := map[string]bool{} // the server's request ids (T-RPC-4)
		n, after := 0, -1
		for i, m := range p.Reply.Messages {
			if !m.IsObject() || !m.Get("method").Exists() {
				continue
			}
			n++
			if respAt >= 0 && i > respAt && after < 0 {
				after = i
			}
			path := msgPath(p, i)
			id := m.Get("id")
			method := m.Get("method").Str
			if id.Exists() {
				judgeServerRequest(p, path, method, id, m.Get("params"))
				if k := envelope.IDKey(id); k != "" {
					switch {
					case seen[k]:
						p.Failf(path+".id", "the server's request %s reuses id %s of an earlier request of its own (T-RPC-4)", Quote(method, quoteN), clip(id.Raw))
					case reusedRequest(p, k):
						p.Failf(path+".id", "the server's request %s reuses id %s of a request of its own on an earlier stream of this session (T-RPC-4)", Quote(method, quoteN), clip(id.Raw))
					}
					seen[k] = true
				}
				continue
			}
			if listen && (p.Exchange.Transport != envelope.Stdio || ownTag(x.Request.Get("id"), m)) {
				continue // PRO1009's
			}
			if x.Version != envelope.V20260728 && undefinedHere(p, path, method) {
				continue
			}
			switch method {
			case "notifications/elicitation/complete":
				judgeElicitationComplete(p, path, method)
			case "notifications/progress":
				tok := m.Get("params.progressToken")
				switch {
				case tok.Type != gjson.String && !(tok.Type == gjson.Number && envelope.IsInteger(tok.Raw)):
					// Whatever else is in flight, this names no request.
					p.Failf(path+".params.progressToken", "progress notification whose progressToken is %s, want a string or an integer (T-PROG-1)", describe(tok))
				case respAt >= 0 && i > respAt && envelope.SameToken(token, tok) && !taskLives && shared:
					p.Deviate(notOurs, path, "progress notification after the response; progress stops when the request completes (T-PROG-1)")
				case respAt >= 0 && i > respAt && envelope.SameToken(token, tok) && !taskLives:
					p.Failf(path, "progress notification after the response; progress stops when the request completes (T-PROG-1)")
				case envelope.SameToken(token, tok):
				case x.Request.IsArray() && namesToken(batchTokens(x), tok):
					// A batch's requests each offer their own (2025-03-26).
				case unoffered(p.Exchange, tok):
					// Every request on the pipe is known, and none gave it.
					where := "sent to the server"
					if p.Exchange.Transport == envelope.HTTP {
						where = "of the session"
					}
					p.Failf(path+".params.progressToken", "progress for token %s, which no request %s still active offered (T-PROG-1)", clip(tok.Raw), where)
				case p.Exchange.Transport == envelope.Stdio && p.Exchange.Offered != nil && namesToken(p.Exchange.Offered, tok):
					// Another request on the pipe, still active, offered
					// it (one the checker gave up on at --timeout, say):
					// its progress, rightly sent on the one pipe (review
					// rev95: it warned on the exchange of stdin's end and
					// on the liveness probe of the very request). On an
					// HTTP stream its messages SHOULD concern its own
					// request (T-HTTP-15): that warns below.
				case !token.Exists() && p.Exchange.Transport == envelope.HTTP && p.Exchange.Request.HTTPMethod() == http.MethodGet:
					// A GET stream offers no token: progress on it names
					// a request in flight, which the stream's messages
					// SHOULD leave alone; the token may well be valid.
					p.Deviate(expect.Want{Level: min(scoped.Level, expect.Should), Rule: "T-HTTP-12"}, path+".params.progressToken",
						"progress for token %s on the GET stream, whose messages SHOULD be unrelated to the client's requests in flight", clip(tok.Raw))
				case !token.Exists():
					p.Deviate(scoped, path+".params.progressToken", "progress for token %s, but the request gave no progressToken (T-PROG-1)", clip(tok.Raw))
				default:
					p.Deviate(scoped, path+".params.progressToken", "progress for token %s, but the request gave %s (T-PROG-1)", clip(tok.Raw), clip(token.Raw))
				}
				if pr := m.Get("params.progress"); pr.Type != gjson.Number {
					p.Failf(path+".params.progress", "progress is %s, want a number (T-PROG-1)", describe(pr))
				} else {
					if last, seen := progress[tok.Raw]; seen && compareNumbers(pr.Raw, last) <= 0 {
						if shared && envelope.SameToken(token, tok) {
							p.Deviate(notOurs, path+".params.progress", "progress %s does not rise above the previous %s (T-PROG-1)", clip(pr.Raw), clip(last))
						} else {
							p.Failf(path+".params.progress", "progress %s does not rise above the previous %s (T-PROG-1)", clip(pr.Raw), clip(last))
						}
					}
					progress[tok.Raw] = pr.Raw
				}
			case "notifications/message":
				judgeLogMessage(p, scoped, path, m)
			case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed",
				"notifications/resources/updated", "notifications/subscriptions/acknowledged":
				judgeSubscribed(p, path, method, m)
			}
		}
		if after >= 0 && p.Exchange.Transport == envelope.HTTP && p.Exchange.Request.HTTPMethod() == "POST" {
			// The response ends the POST's stream: what follows reaches a
			// client that may have stopped reading.
			rule := "T-HTTP-15"
			if x.Version == envelope.V20260728 {
				rule = "T-HTTP-17"
			}
			p.Deviate(expect.Want{Level: expect.Should, Rule: rule}, msgPath(p, after), "%s follows the response on the POST's stream, which should end with the response", Quote(p.Reply.Messages[after].Get("method").Str, quoteN))
		}
		if n == 0 {
			return Skip("no notification or server request arrived")
		}
		return nil
	},
}

// readAs0326: m is a result without resultType to a 2026-07-28 request
// that lacked its MCP-Protocol-Version header, from a server that may
// read such a request as 2025-03-26 (T-HTTP-8): it served it so, and a
// result of that era owes 2026-07-28's shape nothing.
func readAs0326(p *Pass, m *envelope.Message) bool {
	return p.Expect.Error.Rule == expect.HeaderMissingRule && m.Get("result").IsObject() && !m.Get("result.resultType").Exists()
}

// unoffered: ex is an exchange whose run knew every progress token its
// requests on the pipe, or in the HTTP session, offered (see
// envelope.Exchange.Offered), and tok is none of them.
func unoffered(ex *envelope.Exchange, tok gjson.Result) bool {
	return ex.Offered != nil && !namesToken(ex.Offered, tok)
}

// offeredTwice: the run's requests on the pipe offered tok more than
// once (offered as Exchange.Offered, tok the request's own).
func offeredTwice(offered []string, tok gjson.Result) bool {
	if !tok.Exists() {
		return false
	}
	n := 0
	for _, t := range offered {
		if envelope.SameID(gjson.Parse(t), tok) {
			if n++; n > 1 {
				return true
			}
		}
	}
	return false
}

// batchTokens are the tokens a batch's requests offer.
func batchTokens(x *expect.Expectation) []string {
	toks, _ := envelope.OfferedTokens(x.Request.JSON())
	return toks
}

// namesToken: tok is one of toks (raw JSON), as the id rules compare.
func namesToken(toks []string, tok gjson.Result) bool {
	return slices.ContainsFunc(toks, func(t string) bool { return envelope.SameID(gjson.Parse(t), tok) })
}

// ownTag: m carries the subscriptionId of the listen request whose id is
// id, so on stdio it belongs to that stream.
func ownTag(id gjson.Result, m envelope.Message) bool {
	sub := m.Get(envelope.JoinPath("params._meta", envelope.MetaSubscriptionID))
	return sub.Exists() && envelope.SameID(id, sub)
}

// compareNumbers compares two JSON numbers as the decimals they spell
// (-1, 0, +1): a float64 reading would make 9007199254740993 equal to
// 9007199254740992, and 1e400 to 2e400, where the schema sets no
// precision. It reads the texts in place, allocating nothing; a text
// that is no JSON number is compared as its float64.
func compareNumbers(a, b string) int {
	x, okA := readDecimal(a)
	y, okB := readDecimal(b)
	if !okA || !okB {
		fa, _ := strconv.ParseFloat(a, 64)
		fb, _ := strconv.ParseFloat(b, 64)
		return cmp.Compare(fa, fb)
	}
	sign := 1
	switch {
	case x.zero() && y.zero():
		return 0
	case x.neg != y.neg || x.zero() || y.zero():
		// Different signs, or one is zero: the signs alone order them.
		return cmp.Compare(x.signum(), y.signum())
	case x.neg:
		sign = -1
	}
	if x.point != y.point {
		return sign * cmp.Compare(x.point, y.point)
	}
	for i := 0; i < x.n || i < y.n; i++ {
		// Past its last significant digit a number has zeros.
		if c := cmp.Compare(x.digit(i), y.digit(i)); c != 0 {
			return sign * c
		}
	}
	return 0
}

// A decimal is a JSON number's text read as ±0.d₁d₂…dₙ × 10^point, its
// significant digits d (no leading or trailing zero) standing in text
// around the decimal point at dot.
type decimal struct {
	text  string
	neg   bool
	start int   // where d₁ stands in text
	dot   int   // where the '.' stands in text, or -1
	n     int   // how many significant digits
	point int64 // the decimal exponent of 0.d₁…
}

func (d decimal) zero() bool { return d.n == 0 }

func (d decimal) signum() int {
	switch {
	case d.zero():
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// digit is dᵢ₊₁ as a byte, or '0' past the last.
func (d decimal) digit(i int) byte {
	if i >= d.n {
		return '0'
	}
	at := d.start + i
	if d.dot >= 0 && d.start < d.dot && at >= d.dot {
		at++ // the digits run on past the point
	}
	return d.text[at]
}

// readDecimal reads s, a JSON number (RFC 8259 §6), as a decimal; false
// when it is none. Its exponent is held within ±2^50, far past any
// number a reply of the checker's bounds could write.
func readDecimal(s string) (decimal, bool) {
	d := decimal{text: s, dot: -1}
	i := 0
	if i < len(s) && s[i] == '-' {
		d.neg = true
		i++
	}
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intEnd := i
	if intEnd == intStart {
		return d, false
	}
	fracEnd := intEnd
	if i < len(s) && s[i] == '.' {
		d.dot = i
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d.dot+1 {
			return d, false
		}
		fracEnd = i
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return d, false
		}
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if exp < 1<<50 {
				exp = exp*10 + int64(s[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	// The digits, the point skipped: positions [intStart, fracEnd).
	isDigit := func(at int) bool { return at != d.dot }
	first, last := -1, -1
	for at := intStart; at < fracEnd; at++ {
		if isDigit(at) && s[at] != '0' {
			if first < 0 {
				first = at
			}
			last = at
		}
	}
	if first < 0 {
		return d, true // zero
	}
	// 0.d₁… × 10^point: point counts the integer digits from d₁ on
	// (negative when d₁ stands after the point, past its zeros).
	var point int64
	if first < intEnd {
		point = int64(intEnd - first)
	} else {
		point = -int64(first - d.dot - 1)
	}
	d.point = point + exp
	d.start = first
	d.n = last - first + 1
	if d.dot >= 0 && first < d.dot && last > d.dot {
		d.n-- // the point between them is no digit
	}
	return d, true
}

// clientNeeds maps a request a server sends the client (2025-xx) to the
// client capability it needs (T-LIFE-4). A task the server asks about
// can only be the client's if the client declared tasks (a
// task-augmented sampling or elicitation, tasks.requests), and listing
// and cancelling them have capabilities of their own.
var clientNeeds = map[string]string{
	"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots",
	"tasks/get": "tasks", "tasks/result": "tasks", "tasks/list": "tasks.list", "tasks/cancel": "tasks.cancel",
}

// serverSent lists the methods of the messages a 2025-xx server sends
// besides its response, as each version defines them (ServerRequest and
// ServerNotification of its schema).
var serverSent = func() map[string][]string {
	v0326 := []string{"notifications/cancelled", "notifications/progress", "notifications/message",
		"notifications/resources/updated", "notifications/resources/list_changed",
		"notifications/prompts/list_changed", "notifications/tools/list_changed",
		"ping", "sampling/createMessage", "roots/list"}
	v0618 := append(slices.Clip(v0326), "elicitation/create")
	v1125 := append(slices.Clip(v0618), "notifications/elicitation/complete", "notifications/tasks/status",
		"tasks/get", "tasks/result", "tasks/cancel", "tasks/list")
	return map[string][]string{envelope.V20250326: v0326, envelope.V20250618: v0618, envelope.V20251125: v1125}
}()

// sentByAnyVersion: method is a message some version of MCP has a server
// send (2026-07-28's acknowledgment of a listen included).
func sentByAnyVersion(method string) bool {
	return slices.Contains(serverSent[envelope.V20251125], method) || method == "notifications/subscriptions/acknowledged"
}

// undefinedHere reports a message, sent by a server in a 2025-xx session,
// of a method MCP defines only in other versions (tasks/* or
// notifications/elicitation/complete in 2025-06-18): both sides stay
// within the negotiated version (T-LIFE-4; T-V0326-5's SHOULD in
// 2025-03-26). A method no version defines is an extension's, and not
// judged; nor is any in 2026-07-28, where the core tasks became an
// extension's. A version the checker only guessed judges nothing.
func undefinedHere(p *Pass, path, method string) bool {
	x := p.Expect
	v := messagesVersion(p)
	if f := x.Facts; f != nil && f.Spoken == envelope.V20250326 {
		v = envelope.V20250326
	}
	defined, ok := serverSent[v]
	if !ok || x.VersionSource == "default" || !sentByAnyVersion(method) || slices.Contains(defined, method) {
		return false
	}
	undeclaredUse(p)(path, "the server sent %s, which %s, the negotiated version, does not define; both sides stay within the negotiated version (T-LIFE-4)", Quote(method, quoteN), v)
	return true
}

// judgeServerRequest judges a request the server sent the client.
func judgeServerRequest(p *Pass, path, method string, id, params gjson.Result) {
	x := p.Expect
	switch {
	case id.Type != gjson.String && !(id.Type == gjson.Number && envelope.IsInteger(id.Raw)):
		p.Failf(path+".id", "the server's request %s has id %s; a request id is a string or an integer (T-RPC-3)", Quote(method, quoteN), describe(id))
	case x.Version == envelope.V20260728:
		p.Failf(path, "the server sent a request (%s) in 2026-07-28 (T-LIFE-15)", Quote(method, quoteN))
	case strings.HasPrefix(method, "notifications/"):
		p.Failf(path+".id", "notification %s carries an id (T-RPC-11)", Quote(method, quoteN))
	default:
		if undefinedHere(p, path, method) {
			return
		}
		need := clientNeeds[method]
		caps, known := clientCaps(x)
		if x.Method == "initialize" && method != "ping" && (need == "" || !known || caps.Get(need).Exists()) {
			// On the initialize's own reply the client cannot have sent
			// notifications/initialized yet (review rev71). (A request
			// of a capability the client lacks fails T-LIFE-4 below.)
			p.Warnf(path, "the server sent %s with its answer to initialize, before the client's notifications/initialized; until then it SHOULD NOT send requests other than ping (T-LIFE-3)", Quote(method, quoteN))
		}
		if method == "sampling/createMessage" {
			samplingToolTurns(p, path+".params.messages", params.Get("messages"))
		}
		if need == "" || !known {
			return
		}
		switch {
		case !caps.Get(need).Exists():
			undeclaredUse(p)(path, "the server sent %s, but the client declared no %s capability (T-LIFE-4)", Quote(method, quoteN), need)
		case x.Version == envelope.V20250618:
			// No elicitation modes nor sampling tools yet: a request that
			// uses them is the schema's to judge, no capability's.
		default:
			if gap, at := capabilityGap(method, params, caps); gap != "" {
				undeclaredUse(p)(path+".params."+at, "the server sent %s asking for %s, which the client did not declare (T-LIFE-4)", Quote(method, quoteN), gap)
			} else if gap, at, why := capabilityShould(x.Version, method, params, caps); gap != "" {
				p.Warnf(path+".params."+at, "the server sent %s asking for %s, which the client did not declare: %s", Quote(method, quoteN), gap, why)
			}
		}
	}
}

// clientCaps are the capabilities the client declared: while its
// initialize is answered, that request's own, else the facts' (review rev54: a
// relay's or a transcript's first exchange is judged before the facts
// learn them, and a server's sampling request sent before its
// InitializeResult went unjudged).
func clientCaps(x *expect.Expectation) (gjson.Result, bool) {
	if x.Method == "initialize" {
		// This initialize's own, and only: facts an earlier client's
		// initialize taught are not this one's (review rev58); one that
		// declares none (it must) tells nothing (review rev59).
		c := x.Request.Get("params.capabilities")
		return c, c.IsObject()
	}
	if f := x.Facts; f != nil && f.ClientCapabilities != nil {
		return gjson.ParseBytes(f.ClientCapabilities), true
	}
	return gjson.Result{}, false
}

// judgeElicitationComplete judges notifications/elicitation/complete
// (2025-11-25): it ends a URL-mode elicitation, which a server asks only
// of a client that declared elicitation.url (T-LIFE-4): from one that did
// not, it completes nothing the client could have been asked.
func judgeElicitationComplete(p *Pass, path, method string) {
	caps, known := clientCaps(p.Expect)
	if !known {
		return
	}
	if !elicitationModeDeclared(caps.Get("elicitation"), "url") {
		undeclaredUse(p)(path, "the server sent %s, but the client declared no elicitation.url capability, so no URL elicitation can have been asked of it (T-LIFE-4)", Quote(method, quoteN))
	}
}

// samplingToolTurns judges a sampling request's tool turns (2025-11-25,
// sampling page, Message Content Constraints; review rev66): a user
// message that holds a tool_result holds only tool results, and an
// assistant message with tool_use blocks is followed by a user message
// of the results, one for each tool use's id, before any other message.
// (A request that ends on the tool use warns: the turns it asks for
// stop before their results, which the rule's "followed by" does not
// settle.)
func samplingToolTurns(p *Pass, path string, msgs gjson.Result) {
	if !msgs.IsArray() {
		return // the schema's
	}
	blocks := func(m gjson.Result) []gjson.Result {
		c := m.Get("content")
		if c.IsArray() {
			return c.Array()
		}
		return []gjson.Result{c}
	}
	list := msgs.Array()
	for i, m := range list {
		at := path + "." + strconv.Itoa(i)
		role := m.Get("role").Str
		results, other := 0, 0
		var uses []string
		for _, b := range blocks(m) {
			switch b.Get("type").Str {
			case "tool_result":
				results++
			case "tool_use":
				uses = append(uses, b.Get("id").Str)
			default:
				other++
			}
		}
		if role == "user" && results > 0 && other+len(uses) > 0 {
			p.Failf(at+".content", "a user message that holds a tool_result holds only tool results; this one holds %d other block(s) (sampling, Message Content Constraints)", other+len(uses))
		}
		if role != "assistant" || len(uses) == 0 {
			continue
		}
		if i+1 == len(list) {
			p.Warnf(at, "the messages end on an assistant message with tool_use, which is followed by a user message of its tool results (sampling, Tool Use and Result Balance)")
			continue
		}
		next := list[i+1]
		answered := map[string]bool{}
		for _, b := range blocks(next) {
			if b.Get("type").Str == "tool_result" {
				answered[b.Get("toolUseId").Str] = true
			}
		}
		var missing []string
		for _, id := range uses {
			if !answered[id] {
				missing = append(missing, strconv.Quote(id))
			}
		}
		switch {
		case next.Get("role").Str != "user":
			p.Failf(path+"."+strconv.Itoa(i+1), "an assistant message with tool_use is followed by a user message of its tool results before any other message; this one's role is %s (sampling, Tool Use and Result Balance)", Quote(next.Get("role").Str, quoteN))
		case len(missing) > 0:
			p.Failf(path+"."+strconv.Itoa(i+1), "an assistant message with tool_use is followed by a user message with a tool_result for each tool use before any other message; missing the result of %s (sampling, Tool Use and Result Balance)", strings.Join(missing, ", "))
		}
	}
}

// capabilityGap is the part of a capability that a request to the client
// uses and caps (the client's declared capabilities) lacks, and the member
// of params that uses it; "" when none: an elicitation's mode (form unless
// it names url; elicitation declared as {} means form), and tools in a
// sampling request (sampling.tools).
func capabilityGap(method string, params, caps gjson.Result) (gap, at string) {
	switch method {
	case "elicitation/create":
		mode := params.Get("mode").Str
		if mode == "" {
			mode = "form"
		}
		if !elicitationModeDeclared(caps.Get("elicitation"), mode) {
			return "elicitation." + mode, "mode"
		}
	case "sampling/createMessage":
		for _, k := range []string{"tools", "toolChoice"} {
			if params.Get(k).Exists() && !caps.Get("sampling.tools").Exists() {
				return "sampling.tools", k
			}
		}
	}
	return "", ""
}

// capabilityShould is what capabilityGap is for the uses of a client's
// capability that a SHOULD binds (review rev49): a 2025-11-25 request
// augmented with a task, to a client that declared no task support for
// it ("if capabilities.tasks is not defined, the peer SHOULD NOT attempt
// to create tasks"), and a sampling request's includeContext other than
// "none" to a client that declared no sampling.context ("servers SHOULD
// only use includeContext: none"). why names the rule.
func capabilityShould(version, method string, params, caps gjson.Result) (gap, at, why string) {
	if t := params.Get("task"); t.IsObject() && version == envelope.V20251125 {
		need := map[string]string{"elicitation/create": "tasks.requests.elicitation.create", "sampling/createMessage": "tasks.requests.sampling.createMessage"}[method]
		if need != "" && !expect.DeclaredIn(caps, need) {
			return need, "task", "a requestor SHOULD augment a request with a task only where the receiver declared it (the tasks page, Capability Negotiation)"
		}
	}
	if c := params.Get("includeContext"); method == "sampling/createMessage" && version != envelope.V20250618 && c.Type == gjson.String && c.Str != "none" && !caps.Get("sampling.context").Exists() {
		return "sampling.context", "includeContext", "without it a server SHOULD only use includeContext \"none\" (ClientCapabilities.sampling.context)"
	}
	return "", "", ""
}

// elicitationModeDeclared: the elicitation capability decl allows mode.
// An empty object predates modes and means form.
func elicitationModeDeclared(decl gjson.Result, mode string) bool {
	empty := !decl.Get("form").Exists() && !decl.Get("url").Exists()
	return decl.Get(mode).IsObject() || mode == "form" && empty && decl.IsObject()
}

func judgeLogMessage(p *Pass, scoped expect.Want, path string, m envelope.Message) {
	x := p.Expect
	if l := m.Get("params.level"); l.Type != gjson.String || !envelope.ValidLogLevel(l.Str) {
		p.Failf(path+".params.level", "log level %s is not one of the eight levels (T-LOG-1)", describe(l))
	}
	if x.Version != envelope.V20260728 {
		if declared, known := declares(p, "logging"); known && !declared {
			p.Failf(path, "a log message from a server that did not declare the logging capability (T-LOG-1)")
		}
		return
	}
	want := x.Request.Get(envelope.MetaPath(envelope.MetaLogLevel))
	got := m.Get("params.level").Str
	// Where the run knew what its requests on the pipe asked for, a
	// message below the lowest level any of them set is no request's.
	ex := p.Exchange
	pipeKnown := ex.Transport == envelope.Stdio && ex.Offered != nil && ex.Listens != nil
	if !want.Exists() {
		if pipeKnown && ex.LogFloor == "" {
			p.Failf(path, "a log message, though no request on the pipe set a logLevel in its _meta (T-LOG-2)")
			return
		}
		if pipeKnown && below(got, ex.LogFloor) {
			p.Failf(path+".params.level", "a %s message, though no request on the pipe asked for a level below %s (T-LOG-2)", Quote(got, quoteN), Quote(ex.LogFloor, quoteN))
			return
		}
		p.Deviate(scoped, path, "a log message for a request whose _meta sets no logLevel (T-LOG-2)")
		return
	}
	if below(got, want.Str) {
		if pipeKnown && below(got, ex.LogFloor) {
			p.Failf(path+".params.level", "a %s message for a request that asked for %s and above, and no request on the pipe asked for a level below %s (T-LOG-2)", Quote(got, quoteN), Quote(want.Str, quoteN), Quote(ex.LogFloor, quoteN))
			return
		}
		p.Deviate(scoped, path+".params.level", "a %s message for a request that asked for %s and above (T-LOG-2)", Quote(got, quoteN), Quote(want.Str, quoteN))
	}
}

// below reports whether log level got ranks below level floor; false
// when either is no level.
func below(got, floor string) bool {
	gr, ok := envelope.LogLevelRank(got)
	fr, ok2 := envelope.LogLevelRank(floor)
	return ok && ok2 && gr < fr
}

// judgeSubscribed judges a notification a client gets only by asking:
// a list change or a resource update, and in 2026-07-28 a listen's
// acknowledgment. In 2026-07-28 they come only on a subscriptions/listen
// stream (T-SUB-2: no type the client did not opt into); in 2025-xx only
// from a server that declared the capability (T-LIFE-4).
func judgeSubscribed(p *Pass, path, method string, m envelope.Message) {
	x := p.Expect
	if x.Version == envelope.V20260728 {
		if tag := m.Get(envelope.JoinPath("params._meta", envelope.MetaSubscriptionID)); p.Exchange.Transport == envelope.Stdio && tag.Exists() {
			// stdout is shared: a listen stream's, tagged as T-STDIO-5
			// asks; where the run knew the listen requests on the pipe,
			// a tag naming none of them is no stream's (T-META-3).
			ex := p.Exchange
			if ex.Offered != nil && ex.Listens != nil && !slices.ContainsFunc(ex.Listens, func(l string) bool { return envelope.SameID(gjson.Parse(l), tag) }) {
				p.Failf(path, "%s tagged with subscriptionId %s, which no subscriptions/listen request on the pipe carried; 2026-07-28 sends it only on a listen stream, tagged with that request's id (T-STDIO-5, T-META-3, T-SUB-2)", Quote(method, quoteN), clip(tag.Raw))
			}
			return
		}
		if p.Exchange.Transport == envelope.Stdio {
			// On stdout, shared by every exchange, only the tag says
			// whose it is (a listen request's own traffic included).
			p.Failf(path, "%s without _meta %s; on stdio 2026-07-28 sends it only on a subscriptions/listen stream, tagged with it (T-STDIO-5, T-SUB-2)", Quote(method, quoteN), envelope.MetaSubscriptionID)
			return
		}
		p.Failf(path, "%s on the stream of %s; 2026-07-28 sends it only on a subscriptions/listen stream (T-HTTP-17, T-SUB-2)", Quote(method, quoteN), Quote(x.Method, quoteN))
		return
	}
	capability := ""
	switch method {
	case "notifications/resources/updated":
		capability = "resources.subscribe"
	case "notifications/subscriptions/acknowledged":
		return // no method of 2025-xx
	default:
		capability = strings.TrimSuffix(strings.TrimPrefix(method, "notifications/"), "/list_changed") + ".listChanged"
	}
	if declared, known := declares(p, capability); known && !declared {
		undeclaredUse(p)(path, "%s from a server that did not declare %s (T-LIFE-4)", Quote(method, quoteN), capability)
	}
}

// declares reports whether the server declared the capability at path:
// as the run's facts know it, else, for an initialize the server served,
// as its own result declares it (lint of a transcript without facts: the
// messages before that result are bound by what it declares).
func declares(p *Pass, path string) (declared, known bool) {
	x := p.Expect
	if declared, known = x.Facts.Declares(path); known || x.Method != "initialize" || p.Reply == nil || p.Reply.Response == nil {
		return declared, known
	}
	caps := p.Reply.Response.Get("result.capabilities")
	if !caps.IsObject() {
		return false, false
	}
	return expect.DeclaredIn(caps, path), true
}

// undeclaredUse reports a capability used without its declaration: a
// MUST (T-LIFE-4), a SHOULD in a session that negotiated 2025-03-26
// (T-V0326-5), which warns.
func undeclaredUse(p *Pass) func(path, format string, args ...any) {
	if f := p.Expect.Facts; f != nil && f.Spoken == envelope.V20250326 {
		return p.Warnf
	}
	return p.Failf
}

var SchemaValid = &Check{
	ID:       "SCH1001",
	Title:    "The reply matches the protocol schema",
	SpecRef:  "T-RPC-*, T-LIFE-1, T-LIFE-8, T-TOOL-2, T-TOOL-9, T-CACHE-1, T-CACHE-2, T-V0326-4",
	Severity: MUST,
	Area:     AreaSchema,
	Doc: `The reply validates against the checker's schema of the negotiated
version: the response envelope, the error object with the data shapes the
spec defines, and the result type of the method called (server/discover,
initialize, tools/list, tools/call, …). Each failure is reported once per
instance location, distilled. Image and audio data and resource blobs
are Base64 (the schema's "byte"), in either alphabet, padded or not, line
breaks allowed: the spec names no alphabet, so any a reader may take
passes (DESIGN, receiver latitude). A fractional ttlMs warns: the JSON
Schema says integer and schema.ts says number (AMB-18); a negative one
fails. A server that speaks 2025-03-26 is held to the checker's schema
of that version, whose types it keeps (T-V0326-4): what 2025-06-18 added
(structuredContent, outputSchema, title fields, _meta on most types) is
neither required nor judged where it appears, as the official 2025-03-26
schema leaves such members free, while a content block of a type
2025-03-26 does not define (resource_link) warns: the official schema
rejects it, but where the 2025-06-18 schema finds nothing wrong, the
server only used what a later version defines, which 2025-03-26 forbids
as a SHOULD (T-V0326-5). With --schema
FILE the reply is validated against a schema the user supplies instead,
whatever the version; but an official schema file, recognised by the
types it defines, judges only exchanges of its own version: one of
another version skips, naming both.`,
	Run: func(p *Pass) error {
		if p.Schemas == nil {
			return Skip("no schema validator configured")
		}
		spoken0326 := p.Expect.Facts != nil && p.Expect.Facts.Spoken == envelope.V20250326
		if gap := schemaGap(p.Schemas, envelope.V20250326); spoken0326 && gap != "" {
			return Skip("the server speaks 2025-03-26, " + gap)
		}
		if p.Expect.NoReply.Set() {
			return Skip("nothing may answer this message (see RPC1007)")
		}
		m, err := needObject(p)
		if err != nil {
			return err
		}
		served0326 := readAs0326(p, m)
		if gap := schemaGap(p.Schemas, envelope.V20250326); !spoken0326 && served0326 && gap != "" {
			return Skip("served as 2025-03-26, as a request without MCP-Protocol-Version may be read (T-HTTP-8), " + gap)
		}
		version := p.Expect.Version
		switch {
		case spoken0326 || served0326:
			// Held to 2025-03-26's own schema (a --schema file of another
			// version has skipped above).
			version = envelope.V20250326
		case p.Expect.Condition == expect.CondLegacyInitialize && m.Get("result").Exists():
			// A dual-era server served initialize: the reply is of the
			// legacy era it switched to (T-COMPAT-2).
			version = envelope.V20251125
			if v := m.Get("result.protocolVersion").Str; envelope.KnownVersion(v) && v != envelope.V20260728 {
				version = v
			}
		}
		if gap := schemaGap(p.Schemas, version); gap != "" {
			return Skip("the exchange is of " + version + ", " + gap)
		}
		method := p.Expect.Method
		if envelope.AsksTask(&p.Expect.Request) {
			// A task-augmented call may be answered with the task it
			// created (2025-11-25 tasks).
			method = schema.TaskAugmented(method)
		}
		if rt := m.Get("result.resultType"); version == envelope.V20260728 && rt.Type == gjson.String && rt.Str != "complete" && rt.Str != "input_required" {
			// A resultType an extension defines has that extension's
			// shape: judge the envelope only (PRO1002 warns about it).
			method = ""
		}
		entries, err := p.Schemas.ValidateReply(version, method, faithfulID(p, m))
		if err != nil {
			return err
		}
		later, err := laterOnly(p, version, method, m, entries)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if later[e.Location] {
				for _, pr := range e.Problems {
					p.Deviate(expect.Want{Level: expect.Should, Rule: "T-V0326-5"}, pointerPath(e.Location),
						"%s; 2025-06-18 defines it, and 2025-03-26 asks a server to stay within the negotiated version only as a SHOULD (T-V0326-5)", pr)
				}
				continue
			}
			if ttl := m.Get("result.ttlMs"); e.Location == "/result/ttlMs" && ttl.Type == gjson.Number && ttl.Num >= 0 && !strings.HasPrefix(ttl.Raw, "-") &&
				!envelope.IsInteger(ttl.Raw) && len(e.Problems) == 1 {
				// A fraction, and nothing else wrong with it: the
				// TypeScript's number allows it (a user's schema may bound
				// it further, which stays a failure).
				p.Warnf(pointerPath(e.Location), "ttlMs is %s, not an integer: the JSON Schema and prose say integer, schema.ts says number (AMB-18)", clip(ttl.Raw))
				continue
			}
			if ttl := m.Get("result.ttlMs"); e.Location == "/result/ttlMs" && ttl.Type == gjson.Number && strings.HasPrefix(ttl.Raw, "-") && !envelope.IsInteger(ttl.Raw) {
				// The validator names the fraction first; the fault no
				// reading forgives is the sign (a person who makes it an
				// integer would still fail).
				p.Deviate(expect.Want{Level: expect.Must, Rule: "T-CACHE-2"}, pointerPath(e.Location), "ttlMs is %s: negative, which neither reading allows (a fraction is only AMB-18's question)", clip(ttl.Raw))
				continue
			}
			for _, pr := range e.Problems {
				rule := ""
				if _, ours := p.Schemas.(protocolSchemas); ours {
					rule = schemaRule(m, p.Expect.Method, method, e.Location, pr)
				}
				p.Deviate(expect.Want{Level: expect.Must, Rule: rule}, pointerPath(e.Location), "%s", pr)
			}
		}
		return nil
	},
}

// laterOnly names the locations of a 2025-03-26 reply whose problems
// under the checker's own 2025-03-26 schema are only what 2025-06-18
// added (a resource_link content block): the 2025-06-18 schema finds
// nothing in the member the problem is about. A server of 2025-03-26 using what a later version
// defines breaks a SHOULD of its version, not a MUST (T-V0326-5). Nil
// for any other version, or a user's --schema, which is held as given.
func laterOnly(p *Pass, version, method string, m *envelope.Message, entries []envelope.DistilledEntry) (map[string]bool, error) {
	if _, ours := p.Schemas.(protocolSchemas); !ours || version != envelope.V20250326 || len(entries) == 0 {
		return nil, nil
	}
	newer, err := p.Schemas.ValidateReply(envelope.V20250618, method, faithfulID(p, m))
	if err != nil {
		return nil, err
	}
	later := map[string]bool{}
	for _, e := range entries {
		// The member a problem is about, and everything in it: a block
		// of a later type that breaks that type's own rules (a
		// resource_link without its name) is no mere later type.
		block := e.Location[:max(strings.LastIndexByte(e.Location, '/'), 0)]
		if !slices.ContainsFunc(newer, func(n envelope.DistilledEntry) bool {
			return n.Location == block || strings.HasPrefix(n.Location, block+"/")
		}) {
			later[e.Location] = true
		}
	}
	return later, nil
}

// schemaRule names the rule of the digest a problem the checker's own
// schema found at loc breaks, so the coverage table counts it against
// that rule alone; "" where the location does not tell which of SCH1001's
// rules it is (then none of them passes on this reply, rather than a
// guess). called is the method the request named, validated the one
// whose result type the reply was held to ("" for the envelope alone,
// another for a task-augmented call). A user's --schema may ask more than
// the spec: its problems name no rule.
func schemaRule(m *envelope.Message, called, validated, loc, problem string) string {
	missing := func(names ...string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return problem == schema.MissingProperty(n) })
	}
	wrongType := strings.HasPrefix(problem, "got ")
	switch {
	case loc == "/jsonrpc" || loc == "" && missing("jsonrpc"):
		return "T-RPC-1"
	case loc == "/id" && m.Get("error").Exists():
		return "T-RPC-9"
	case loc == "/id":
		return "T-RPC-5"
	case loc == "/error" && (wrongType || missing("code", "message")), loc == "/error/code", loc == "/error/message":
		return "T-RPC-8"
	case strings.HasPrefix(loc, "/error/data"):
		switch m.Get("error.code").Int() {
		case envelope.CodeMissingClientCap:
			return "T-ERR-13"
		case envelope.CodeUnsupportedVer:
			return "T-ERR-14"
		case envelope.CodeURLElicitation:
			return "T-ERR-7"
		}
		return ""
	case loc == "/result" && wrongType:
		return "T-RPC-7"
	case loc == "/result/resultType" || loc == "/result" && missing("resultType"):
		return "T-LIFE-10"
	case loc == "/result/ttlMs" || loc == "/result/cacheScope":
		return "T-CACHE-2"
	case loc == "/result" && missing("ttlMs", "cacheScope"):
		return "T-CACHE-1"
	case validated != called || loc != "/result" && !strings.HasPrefix(loc, "/result/"):
		return ""
	case loc == "/result/nextCursor":
		return "T-PAGE-2" // an opaque string, or absent at the end
	}
	// An answer that asks for input is an InputRequiredResult whatever the
	// method, and T-MRTR-2 owes its shape; the method's own rule is about
	// the result it serves once it has what it asked for.
	if m.Get("result.resultType").String() == "input_required" && envelope.NameField(called) != "" {
		return "T-MRTR-2"
	}
	// The shape of a result the digest gives a rule of its own.
	switch called {
	case "ping":
		return "T-LIFE-5"
	case "tools/list":
		return "T-TOOL-2"
	case "tools/call":
		return "T-TOOL-9"
	case "initialize":
		return "T-LIFE-1"
	case "server/discover":
		return "T-LIFE-8"
	case "resources/read":
		return "T-RES-4"
	case "completion/complete":
		if loc == "/result/completion/values" {
			return "T-COMP-1" // at most 100 (the schema's maxItems)
		}
	}
	return ""
}

// faithfulID is the reply's JSON text to validate. When the request's id
// was one JSON-RPC allows and MCP forbids (1.5, null) and the reply echoes
// it exactly, the echo is right (RPC1004 and PRO1001 judge it), not a
// schema failure of the reply: it is validated with a valid id in place.
func faithfulID(p *Pass, m *envelope.Message) []byte {
	body := m.JSON()
	got := m.Get("id")
	for _, want := range p.Expect.ID.Echo {
		if want.Type == gjson.String || want.Type == gjson.Number && envelope.IsInteger(want.Raw) || !envelope.SameID(want, got) {
			continue
		}
		at := gjson.GetBytes(body, "id")
		if at.Index <= 0 || at.Index+len(at.Raw) > len(body) {
			return body
		}
		out := make([]byte, 0, len(body))
		out = append(out, body[:at.Index]...)
		out = append(out, '0')
		return append(out, body[at.Index+len(at.Raw):]...)
	}
	return body
}

// pointerPath shows a JSON Pointer the way other findings show paths.
func pointerPath(ptr string) string {
	if ptr == "" {
		return "reply"
	}
	return ptr
}

var ToolRefusal = &Check{
	ID:       "PRO1004",
	Title:    "A tool refuses arguments its inputSchema forbids",
	SpecRef:  "T-TOOL-8, AMB-2; tools page, Security Considerations: servers MUST validate all tool inputs",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `A fixture that calls a real tool with arguments violating the tool's own
inputSchema (wrong type, missing required property, extra property where
additionalProperties is false, a value outside an enum) must be refused,
not run: the tools page's Security Considerations say servers MUST
validate all tool inputs (in every version; the digest does not list
it), and the tool's own inputSchema is what its inputs are valid
against. How it refuses is T-TOOL-8's, a SHOULD. From 2025-11-25 the tools page asks for a tool execution error: a
result with isError true (pass); -32602 only warns, because the 2026-07-28
schema.ts and its example contradict the tools page (AMB-2). In 2025-06-18
either form passes; in 2026-07-28 so do -32021 (the tool needs a client
capability the client lacks, T-LIFE-13) and -32020 (a header fault), as
no order between the faults is set (AMB-4), and an input_required result
is not judged: the tool has not run, and a later round would show whether
it refuses. Nor is a task-augmented call answered with the task it
created (a CreateTaskResult, 2025-11-25): the task's outcome, which
tasks/result gives, would show whether the tool refused. -32603 says the tool failed inside, having run on the input,
unless its words are a validator's, or refuse an argument by name however they
are wrapped ("Tool execution failed: query is required"; then the
arguments were refused: a warning, as for any other code; ERR1002
judges the code); only where its
words read as a crash inside the server's code ("Cannot read properties
of undefined", a traceback, a panic) does it fail; an upstream call's
failure ("getaddrinfo ENOTFOUND", "status code 502") warns, as the server
may call upstream before it validates (a token, a schema fetched first),
which the checker cannot see, and the checker's own network may be what
failed; words that tell neither ("Internal error": a framework may so
answer a validation exception) warn. An isError
result whose text reads as the tool's own failure after it ran (an
upstream call that failed: "API error: getaddrinfo EAI_AGAIN", "fetch
failed", "502 Bad Gateway"; a crash: "Cannot read properties of
undefined") and says nothing of the arguments (no word of a refusal, no
argument named) warns: the tool may have run on them, which the checker
cannot see. Any other isError result passes. A result
that is not an error means the tool ran on
input it declared invalid: a failure; only a warning where the one fault
is a null for an argument the schema lets be absent, which servers
commonly read as absent (models send such nulls), or where the only
fault is keys a closed schema does not declare, at the top or in a
nested object whose schema says so plainly: zod writes
additionalProperties false for objects it strips of unknown keys, at
every level, and pydantic ignores extras in every model, or values pydantic's default lax mode converts
to the declared type ("2" for an integer, "yes" or 1 for a boolean): such
a server validated and ran the tool on what its schema allows, missing
only the form T-TOOL-8 (a SHOULD) asks.`,
	Run: func(p *Pass) error {
		t := p.Expect.Tool
		if t == nil || !t.Refusal.Set() {
			return Skip("not a schema-violating tool call")
		}
		m, err := needObject(p)
		if err != nil {
			return err
		}
		if e := m.Get("error"); e.Exists() {
			code := m.Get("error.code").Int()
			switch {
			case code == envelope.CodeInternalError:
				if sure, doubt := paramsRefusal(p, e); sure || doubt {
					// Its words show the arguments refused, not run on: the
					// MUST is kept, the form (T-TOOL-8) and the code are
					// not (ERR1002 judges the code).
					p.Warnf("error.code", "the refusal has code -32603, in a validator's words; want an isError result or -32602 (T-TOOL-8)")
					break
				}
				msg := e.Get("message").Str
				words := msg + " " + e.Get("data").Raw
				if argumentRefusal.MatchString(e.Get("data").Raw) {
					// Its data speaks of a refusal (a validator's
					// exception in a traceback, say): the arguments may
					// have been refused before the tool ran.
					p.Warnf("error.code", "the refusal has code -32603, and its data speaks of a refusal of the arguments; want an isError result or -32602 (T-TOOL-8)")
					break
				}
				if !ranStrongly.MatchString(words) && argumentRefusal.MatchString(msg) && (namesProblem(msg, t.Problems) || namesArgument(msg, p.Expect.Request.Get("params.arguments"))) {
					// Its message refuses an argument by name, wrapped in
					// a framework's words at most ("Tool execution failed:
					// query is required"), and names no upstream's or
					// crash's failure: the arguments were read and
					// refused, as an isError text that says so.
					p.Warnf("error.code", "the refusal has code -32603, and its message refuses an argument by name; want an isError result or -32602 (T-TOOL-8)")
					break
				}
				if crashWords.MatchString(words) {
					// Its words are a crash inside the server's code: it
					// ran on the input instead of validating it.
					p.Deviate(t.Refusal, "error.code", "the tool failed inside (-32603, %s) instead of refusing arguments its inputSchema forbids; want an isError result or -32602", Quote(e.Get("message").Str, quoteN))
					break
				}
				if ranWords.MatchString(words) {
					// Its words are a call upstream that failed: the tool
					// may have run on the input, or the server may call
					// upstream before it validates (a token, a schema),
					// which the checker cannot see (review rev70: a server
					// the checker's network kept from its API).
					p.Warnf("error.code", "the call failed upstream (-32603, %s) on arguments its inputSchema forbids: the tool may have run on them, or the server called upstream before it validates, which the checker cannot see; want an isError result or -32602 (T-TOOL-8)", Quote(e.Get("message").Str, quoteN))
					break
				}
				// Words that tell neither ("Internal error"): a framework
				// may answer a validation exception so, or the tool may
				// have run and failed; the checker cannot see which.
				p.Warnf("error.code", "the refusal has code -32603 and says %s, which tells neither a refusal of the arguments nor the tool's own failure: the tool may have run on arguments its inputSchema forbids; want an isError result or -32602 (T-TOOL-8)", Quote(e.Get("message").Str, quoteN))
			case code == envelope.CodeMethodNotFound && t.TaskRefused:
				// The call's task and the tool's taskSupport disagree:
				// -32601 is T-TASK-1's (or T-TASK-2's) refusal, as right as
				// one for the arguments.
			case code == envelope.CodeMissingClientCap && p.Expect.Version == envelope.V20260728:
				// The tool needs a capability the client did not declare
				// (T-LIFE-13, MUST): a refusal too, and no order between
				// the two faults is set (AMB-4). ERR1002 judges the code.
			case code == envelope.CodeHeaderMismatch && p.Expect.Version == envelope.V20260728:
				// Refused on its headers before the arguments (AMB-4);
				// ERR1002 judges whether a header was wrong.
			case code != envelope.CodeInvalidParams:
				// Refused, as it must be; the form is a SHOULD (T-TOOL-8).
				p.Warnf("error.code", "the refusal has code %d, want an isError result or -32602 (T-TOOL-8)", code)
			case p.Expect.Version != envelope.V20250618:
				p.Warnf("error.code", "refused with -32602; since 2025-11-25 the tools page asks for an isError result, though schema.ts and its example give -32602 (AMB-2)")
			}
			return nil
		}
		if m.Get("result.resultType").Str == "input_required" && p.Expect.Version == envelope.V20260728 {
			// The tool asks for input first (T-MRTR-2) and has not run:
			// whether it refuses the arguments comes in a later round, past
			// this exchange.
			return Skip("the tool asked for input (input_required) before running; a later round would show whether it refuses the arguments")
		}
		if r := m.Get("result"); envelope.CreatedTask(&p.Expect.Request, r) {
			// A CreateTaskResult (2025-11-25 tasks): the server took the
			// call as a task, and its outcome, a refusal of the arguments
			// or not, comes by tasks/result, past this exchange.
			return Skip("the server created a task for the call (CreateTaskResult); whether the tool refuses the arguments shows only in the task's result (tasks/result)")
		}
		if m.Get("result.isError").Type != gjson.True {
			want := "an isError result"
			if p.Expect.Version == envelope.V20250618 {
				want = "a refusal: an isError result or -32602"
			}
			p.Deviate(t.Refusal, "result", "tool %s ran on arguments its inputSchema forbids (%s); servers validate tool inputs, want %s", Quote(t.Name, quoteN), schema.FirstProblem(t.Problems), want)
			return nil
		}
		if text, ok := toolFailureText(m.Get("result.content"), p.Expect.Request.Get("params.arguments")); ok {
			// isError is also how a tool that ran reports its own failure:
			// an upstream's or a crash's words, with nothing of the
			// arguments, read as that.
			p.Warnf("result.content", "the isError result says %s, a failure of the tool's own work and nothing of the arguments its inputSchema forbids (%s): the tool may have run on them (T-TOOL-8)", Quote(text, quoteN), schema.FirstProblem(t.Problems))
		}
		return nil
	},
}

// toolFailureText is the text of an isError result's content that reads
// as the tool's own failure after it ran (see ranWords), when none of
// the content speaks of the arguments: in a refusal's words, or naming
// one of them. A text that shows neither (C# SDK's "An error occurred
// invoking 'search'.") says nothing either way.
func toolFailureText(content, args gjson.Result) (string, bool) {
	var ran string
	for _, c := range content.Array() {
		if c.Get("type").Str != "text" {
			continue
		}
		text := c.Get("text").Str
		if argumentRefusal.MatchString(text) || namesArgument(text, args) {
			if !crashed(text) || validationMessage.MatchString(text) {
				return "", false
			}
			// A crash's own words ("Cannot read properties of undefined
			// (reading 'params')", "keyValidator._parse is not a
			// function") tell the tool ran, whatever member or
			// identifier they name, unless a validator's phrase says it
			// refused (review rev70).
			if ran == "" {
				ran = text
			}
			continue
		}
		if ran == "" && ranWords.MatchString(text) {
			ran = text
		}
	}
	return ran, ran != ""
}

var ExitsAtEOF = &Check{
	ID:       "PRO1011",
	Title:    "A 2026 stdio server exits when its stdin closes",
	SpecRef:  "T-STDIO-6",
	Severity: SHOULD,
	Area:     AreaProtocol,
	Doc: `After the last fixture the checker closes the server's stdin, as a
client ending the session does, and waits 5 s for the process to exit
(the exchange session/stdin-closed; the digest's test of "promptly"
says "e.g. 5 s"; wrap judges by the same 5 s, and skips where its
--grace is shorter or it passed a signal on meanwhile). A 2026-07-28 server SHOULD
exit promptly once stdin reaches EOF (T-STDIO-6): one still running when
the wait runs out warns, and is stopped with SIGTERM. The 2025 versions
describe only the client's side of the shutdown (close stdin, wait, then
signal), so there the check skips. So it does where the run stopped
waiting before the grace ran out (its deadline, an interrupt): that says
nothing of the server. What the server writes on stdout after its stdin
closed is judged as any line is (RPC1001: a goodbye banner breaks
T-STDIO-2).`,
	Run: func(p *Pass) error {
		ex := p.Exchange
		switch {
		case !ex.EndsInput():
			return SkipError("not the end of a stdio server's input")
		case p.Expect.Version != envelope.V20260728:
			return SkipError("the 2025 versions describe only the client's side of the shutdown (T-STDIO-6)")
		case ex.Lingered:
			p.Warnf("server", "%s; a 2026-07-28 server SHOULD exit promptly once its stdin reaches EOF (T-STDIO-6)", ex.Note)
		case !ex.Exited:
			return SkipError("the run stopped waiting for the server's exit before the grace ran out")
		}
		return nil
	},
}

// graceRule names the rule a death that left nothing owed breaks: an
// invalid cursor is handled gracefully (T-PAGE-3, a SHOULD); any other
// message, robustness alone (review rev73: every message cited the
// cursors' rule).
func graceRule(x *expect.Expectation) string {
	if x.Request.Get("params.cursor").Exists() {
		return ", where an invalid cursor SHOULD be handled gracefully (T-PAGE-3)"
	}
	return " (robustness: no rule asks a server to exit on a message)"
}

var Survives = &Check{
	ID:       "PRO1005",
	Title:    "The server survives every message",
	SpecRef:  "T-STDIO-1; T-PAGE-3 (an invalid cursor handled gracefully); robustness",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `Whatever a client sends, the server answers or ignores it as the rules
say; it never dies. A stdio server that exits while handling a message is
reported against that message, with its exit status and the tail of its
stderr, and is restarted for the next fixture. A death on a message
that is owed no reply (a notification, a posted response) only warns:
it leaves no MUST unmet (T-PAGE-3's SHOULD for a cursor, robustness
for any other message). So does a death after
the server wrote, whole, the response the request owed (its id, a
result or an error): nothing owed is missing, and that response is
judged by the other checks as any other; a death before it fails. A
batch is the exception
where the spec leaves the whole reaction open (AMB-7: every version but
2025-03-26, which has batches, T-V0326-1, and refuses one it does not
support with a JSON-RPC error, never a crash): a server that closes its
stdio link on one reacted, and that only warns.`,
	JudgesFailures: true,
	Run: func(p *Pass) error {
		d := p.Exchange.Died
		switch x := p.Expect; {
		case d == "":
		case x.Condition == expect.CondBatch && x.Reply.Level == expect.Open && x.Facts.Speaks() != envelope.V20250326:
			p.Warnf("server", "the server died on a batch: %s; the reaction to a batch is unspecified (AMB-7), but exiting ends the session", d)
		case x.Condition == expect.CondNotification || x.Condition == expect.CondResponsePosted:
			// A notification or a posted response owes nothing back: no
			// MUST is left unmet by an exit, only robustness.
			p.Warnf("server", "the server died on a message that is owed no reply: %s; exiting ends the session%s", d, graceRule(x))
		case p.Reply != nil && wroteResponse(x, p.Reply.Reply):
			// The response came before the exit: no MUST is left unmet
			// (the exchange's other checks judge it), only robustness.
			p.Warnf("server", "the server died after writing its response: %s; nothing owed is missing, but exiting ends the session%s", d, graceRule(x))
		default:
			p.Failf("server", "the server died: %s", d)
		}
		return nil
	},
}

// reusedRequest: the id key k of a request in the reply is one a
// request of the server's on an earlier stream of the session used, in
// another event (Streams.Reused, review rev88).
func reusedRequest(p *Pass, k string) bool {
	for _, r := range p.Reused {
		if r.Request && envelope.IDKey(gjson.Parse(r.ID)) == k {
			return true
		}
	}
	return false
}
