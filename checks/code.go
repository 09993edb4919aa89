package checks

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// needCode guards checks that read an integer error code.
func needCode(p *Pass) (gjson.Result, int, error) {
	e, err := needError(p)
	if err != nil {
		return e, 0, err
	}
	c := p.Reply.Response.Get("error.code")
	if c.Type != gjson.Number || !envelope.IsInteger(c.Raw) {
		return e, 0, Skip("error.code is not an integer (see RPC1005)")
	}
	// A code far outside every table (4294934528, a wrapped -32768) is
	// still judged: it is in no table and fits no condition.
	return e, int(c.Int()), nil
}

var CodeInTable = &Check{
	ID:       "ERR1001",
	Title:    "The error code is in the version's code table",
	SpecRef:  "T-ERR-1..T-ERR-11; digest §3.3; contract clause 1",
	Severity: MUST,
	Area:     AreaCode,
	Doc: `The code comes from the error-code table of the negotiated version:
the JSON-RPC codes -32700 and -32600..-32603, plus the codes that version
defines (2025-06-18: -32002; 2025-11-25: -32002, -32042; 2026-07-28: -32020,
-32021, -32022), plus the codes a contract file declares.

Codes a version forbids fail: in 2026-07-28 -32002, -32042 and any code in
-32023..-32099 (T-ERR-8, T-ERR-10). The JSON-RPC reserved range
-32100..-32768 outside the table fails under the strict contract and warns
under --contract spec (T-ERR-11). The legacy range -32000..-32019 is
implementation-defined and warns: in 2026-07-28 by T-ERR-9, before it only
under the strict contract, since JSON-RPC gives the range to servers'
own errors and T-ERR-9 is 2026-07-28's. Under the strict contract any
other code (0, 1, -1, 2025-xx's -32020..-32099, …) fails: declare it in a
contract file if it is yours. Under --contract spec such application codes
pass.`,
	Run: func(p *Pass) error {
		_, code, err := needCode(p)
		if err != nil {
			return err
		}
		if readCode(p, code) || code == envelope.CodeUnsupportedVer && versionRefused(p) {
			// The code some reading of the request calls for is in that
			// reading's table; and -32022 for a version the server does
			// not serve is right in any version (DESIGN, Versions): a
			// server that serves 2026-07-28 alone refuses a legacy
			// initialize so (T-LIFE-14), whose version's table lacks it.
			return nil
		}
		cls, _ := envelope.ClassifyCode(p.Expect.Version, code, p.Contract.Codes)
		switch cls {
		case envelope.CodeForbidden:
			rule := "T-ERR-8"
			if code == envelope.CodeResourceNotFound || code == envelope.CodeURLElicitation {
				rule = "T-ERR-10"
			}
			p.Deviate(expect.Want{Level: expect.Must, Rule: rule}, "error.code", "code %d is forbidden in %s", code, p.Expect.Version)
		case envelope.CodeReserved:
			// The strict contract fails it; the spec warns. Before
			// 2026-07-28 no rule of the digest speaks to the range:
			// JSON-RPC's own text is the rule broken.
			rule := "JSON-RPC §5.1"
			if p.Expect.Version == envelope.V20260728 {
				rule = "T-ERR-11"
			}
			p.contractOr(expect.Want{Level: expect.Should, Rule: rule}, "error.code", "code %d lies in the range JSON-RPC reserves for pre-defined errors", code)
		case envelope.CodeLegacy:
			switch {
			case p.Expect.Version == envelope.V20260728:
				p.Deviate(expect.Want{Level: expect.Should, Rule: "T-ERR-9"}, "error.code", "code %d is in the legacy range -32000..-32019, which receivers give no shared meaning", code)
			case p.Contract.IsStrict():
				// Before 2026-07-28 the range is JSON-RPC's own for
				// implementation-defined server errors: only the contract
				// asks for the table, and its legacy range warns. No rule
				// of the spec is broken, so the coverage table holds none
				// of this check's rules unjudged for it (the TypeScript
				// SDK's transport refuses with -32000).
				p.Deviate(expect.Want{Level: expect.Should, Rule: ContractRule}, "error.code", "code %d is an implementation-defined server error, not in the %s or the contract (declare it in a contract file if it is yours)", code, tableName(p.Expect))
			}
		case envelope.CodeServerRange, envelope.CodeUnlisted:
			if p.Contract.IsStrict() {
				p.Contractf(false, "error.code", "code %d is not in the %s or the contract", code, tableName(p.Expect))
			}
		}
		return nil
	},
}

// invalidParamsName recognises a reply that calls the condition by the
// protocol's own name for a client's mistake (JSON-RPC's "Invalid
// params", its -32602, MCP's unknown tool): -32603 then hides it behind
// "internal error", and the client cannot know to fix its call. "Invalid
// argument(s)" alone is no such name: it is what an operating system or
// a library says of a failed call (EINVAL, "invalid arguments passed to
// sqlite3_bind_text"), and a validator's words (validationMessage); the
// MCP schema's "Invalid arguments for tool …" is.
var invalidParamsName = regexp.MustCompile(`(?i)invalid (request )?params\b|invalid arguments for tool\b|invalid request parameters|-32602`)

// unknownNameRE is how a reply names the unknown-tool or unknown-prompt
// condition, its kind captured: fastmcp's and the Python SDK's "Unknown
// prompt" (review rev46), "No such tool", Kotlin's "Prompt not found:
// nope" and rmcp's "tool not found" (review rev74). It names the
// request's own fault only where the request names a thing of that
// kind: see unknownNamed.
var unknownNameRE = regexp.MustCompile(`(?i)(?:unknown|no such) (tool|prompt)|\b(tool|prompt) not found`)

// unknownNameAtRE is the TypeScript SDK's and Kotlin's "Tool x not
// found", "Prompt 'x' not found": the word between is read as the name
// (quotes trimmed), and it names the condition only when it is the name
// the request gave ("Prompt template not found" is another matter).
var unknownNameAtRE = regexp.MustCompile(`(?i)\b(tool|prompt) (\S+) not found`)

// unknownNamed is the kind ("tool", "prompt") of the unknown thing msg
// says the request named, "" when it says none: the words must name the
// kind the request names (a tools/call's tool; a prompts/get's prompt, or
// a completion's ref/prompt), and the facts must not list the name, or a
// tool's backend relaying "Unknown prompt 'summarizer'" and a listed
// prompt's template failing on an "unknown prompt partial" would read as
// the client's mistake (review rev50).
func unknownNamed(x *expect.Expectation, msg string) string {
	var kind, said string
	if m := unknownNameRE.FindStringSubmatch(msg); m != nil {
		kind = strings.ToLower(m[1] + m[2])
	} else if m := unknownNameAtRE.FindStringSubmatch(msg); m != nil {
		kind, said = strings.ToLower(m[1]), strings.Trim(m[2], "'\"`“”‘’")
	} else {
		return ""
	}
	var name gjson.Result
	switch {
	case kind == "tool" && x.Method == "tools/call":
		name = x.Request.Get("params.name")
	case kind == "prompt" && x.Method == "prompts/get":
		name = x.Request.Get("params.name")
	case kind == "prompt" && x.Method == "completion/complete" && x.Request.Get("params.ref.type").Str == "ref/prompt":
		name = x.Request.Get("params.ref.name")
	default:
		return ""
	}
	// (By kind: a prompt of the name is no tool of it, review rev53.)
	if name.Type == gjson.String && (kind == "tool" && x.Facts.Tool(name.Str) != nil || kind == "prompt" && x.Facts.Prompt(name.Str) != nil) {
		return ""
	}
	if said != "" && (name.Type != gjson.String || said != name.Str) {
		return ""
	}
	return kind
}

// validationMessage recognises a validator's phrases, which a failure
// upstream uses too ("database error: invalid input syntax for type
// uuid", "Stripe API error: Missing required param: amount"): they
// settle a hidden -32602 only with more of a validator's reading (the
// name of one of the call's arguments, a comparison of JSON types).
var validationMessage = regexp.MustCompile(`(?i)invalid (parameters?|arguments?|input|option|enum value)\b|missing required (arguments?|parameters?|params?|property|properties|field)\b|required (property|argument|parameter|field)\b`)

// typeComplaint is a validator's comparison of JSON types ("expected
// number, received string"): a refused argument when the message names
// one of the call's arguments, and otherwise maybe a backend's own
// decoding failure ("backend reply: expected object, got array"). Zod 4
// names an object map "record" and a fixed array "tuple".
// Zod 3's issues dumped as JSON spell the comparison as members
// ("expected": "number", "received": "undefined").
var typeComplaint = regexp.MustCompile(`(?i)expected (a |an )?(string|number|integer|boolean|object|array|null|record|tuple)\b[^.]*\b(got|received)\b|"expected":\s*"(string|number|integer|boolean|object|array|null|record|tuple)",\s*"received":`)

// upstreamWords say the words after them are another system's, relayed:
// a backend's, an upstream server's, an API's. Even a protocol name for
// invalid params is then the upstream's refusal, which the server met as
// a failure of its own (-32603), not its own refusal of the call.
var upstreamWords = regexp.MustCompile(`(?i)\b(upstream|backend|downstream)\b|\b(database|db|sql|api|rpc|grpc|http) error\b|\brpc failed\b|\b(server|service|backend) (replied|returned|responded|said)\b`)

// validationWords are a validator's words that an internal failure may
// use too: with -32603 they only warn.
var validationWords = regexp.MustCompile(`(?i)must be (a|an|of|at)\b|validation (error|failed)`)

// ranStrongly are the words of ranWords that tell a failure after the
// tool ran (an upstream's, a crash's), not the framework's wrapping of
// any error ("execution failed", "request failed").
var ranStrongly = regexp.MustCompile(`(?i)fetch failed|getaddrinfo|EAI_AGAIN|ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|socket hang up|\bAPI error|Bad Gateway|Service Unavailable|Gateway Time-?out|status code [45]\d\d|Failed to make request|` + crashWords.String()[len("(?i)"):])

// crashPhrases are what runtimes write when a handler crashed inside
// the server's own code, in their own case: it ran on the input, where
// an upstream's failure (ranStrongly's other words) may come before the
// server's own validation (a token or a schema fetched first) and only
// shows it when the checker's network cannot reach the upstream.
var crashPhrases = []string{"Cannot read propert", "is not a function", "NullPointerException", "Traceback (most recent call last)", "panic: "}

// crashWords finds crashPhrases in any case.
var crashWords = regexp.MustCompile(`(?i)` + quoteAlternatives(crashPhrases))

// quoteAlternatives is the expression matching any of the literal
// phrases.
func quoteAlternatives(phrases []string) string {
	q := make([]string, len(phrases))
	for i, p := range phrases {
		q[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(q, "|")
}

// crashed: text holds one of crashPhrases as runtimes write it (or its
// first letter lowercased), found without a regular expression: a tool's
// text may be long, and most hold a refusal's word (review rev77: the
// expression cost lint a quarter of its time on recorded traffic).
func crashed(text string) bool {
	for _, p := range crashForms {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// crashForms are crashPhrases, and those that begin with a capital with
// it lowercased ("cannot read propert").
var crashForms = func() []string {
	out := slices.Clone(crashPhrases)
	for _, p := range crashPhrases {
		if l := strings.ToLower(p[:1]) + p[1:]; l != p {
			out = append(out, l)
		}
	}
	return out
}()

// ranWords are what a tool says when it ran and failed on its own
// account: a call upstream that failed, a crash inside its code. With
// them, an isError text reads as the tool having run on the arguments.
var ranWords = regexp.MustCompile(ranStrongly.String() + `|request failed|execution failed`)

// argumentRefusal are what a refusal of a call's arguments says in some
// words (a validator's, a schema's, a hand-written check's); with them an
// isError text may be a refusal whatever else it says. (Inside a word
// too: "IllegalArgumentException", "fieldIsRequired"; a crash's words
// that name an identifier holding one, "keyValidator._parse is not a
// function", read as a crash first, toolFailureText.)
var argumentRefusal = regexp.MustCompile(`(?i)invalid|validat|requir|missing|expected|must be|must not|schema|not allowed|unexpected|unrecogni[sz]ed|additional propert|enum|argument|param|out of range|cannot be empty|is empty|not an? (valid )?(number|string|integer|boolean|array|object)`)

// refusesMethodItself: msg says the method itself is not implemented or
// not supported, not something about its params (review rev65: "completion
// of argument name … is not implemented" is about an argument): the
// whole message is such words ("Not implemented", Python's
// "NotImplementedError", "Unsupported method: x"), or they follow the
// method's name, its last segment or its capability's as their subject
// ("setLevel: not implemented", "Logging is not supported"), or it says
// so as unknownMethodMessage does, naming the method.
func refusesMethodItself(msg, method string) bool {
	m := strings.ToLower(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(msg), ".!")))
	if refusalAlone.MatchString(m) {
		return true
	}
	method = strings.ToLower(method)
	head, tail, _ := strings.Cut(method, "/")
	if i := strings.LastIndexByte(method, '/'); i >= 0 {
		tail = method[i+1:]
	}
	names := []string{method, tail, head}
	for _, name := range names {
		if name == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(strings.TrimPrefix(strings.TrimPrefix(m, "the "), "method "), strings.Trim(name, `"'`)); ok && refusalAfterName.MatchString(rest) {
			return true
		}
	}
	if sm := refusalThenName.FindStringSubmatch(m); sm != nil && slices.Contains(names, strings.Trim(sm[1], `"'`)) {
		return true // "Not implemented: setLevel"
	}
	return strings.Contains(m, method) && unknownMethodMessage.MatchString(m) && !strings.Contains(m, " of ")
}

// refusalAlone is a message that is only the words of a method not
// implemented or not supported.
var refusalAlone = regexp.MustCompile(`^(?:(?:method\s+)?not\s+(?:implemented|supported|available)|notimplemented(?:error|exception)?|unsupported(?:\s+method)?(?::\s*\S+)?|method\s+unsupported|not\s+implemented\s+error|method\s+not\s+found|unknown\s+method|no\s+such\s+method)$`)

// refusalThenName is a refusal and then the name it refuses: "Not
// implemented: setLevel", "Unknown method: logging/setLevel".
var refusalThenName = regexp.MustCompile(`^(?:not\s+(?:implemented|supported|available)|unsupported|unknown\s+method|method\s+not\s+found|no\s+such\s+method)\s*:\s*(\S+)$`)

// refusalAfterName is what follows a name that refuses it: ": not
// implemented", " is not supported", " not available".
var refusalAfterName = regexp.MustCompile(`^["']?(?:\s+(?:method|capability|feature|support))?\s*(?::\s*|\s+(?:is|are)\s+|\s+)(?:not\s+(?:implemented|supported|available|enabled)|unsupported|unavailable|disabled)$`)

// unknownMethodMessage recognises a reply that says the method is not
// there, which settles whether an extension might define it.
var unknownMethodMessage = regexp.MustCompile(`(?i)method not found|unknown method|no such method|method .*(not found|not supported|unsupported|does not exist|not implemented)|not implemented`)

// tableName names the code table an error is judged by: the version's,
// and for a server that speaks 2025-03-26 (judged by 2025-06-18's rules)
// both, so the report does not name a version the server never spoke.
func tableName(x *expect.Expectation) string {
	if sp := x.Facts.Speaks(); sp != "" && sp != x.Version {
		return x.Version + " code table (whose rules judge this " + sp + " server)"
	}
	return x.Version + " code table"
}

var CodeFits = &Check{
	ID:            "ERR1002",
	Title:         "The error code fits the condition",
	SpecRef:       "T-ERR-1..T-ERR-5, T-ERR-8, T-ERR-12..T-ERR-14, T-LIFE-8; contract clause 1",
	Severity:      MUST,
	Area:          AreaCode,
	JudgesOutcome: true,
	Doc: `The code must name the condition the request provoked: bytes that are
not JSON are -32700; valid JSON that is not a request is -32600; an unknown
method is -32601 (from a request alone an unknown method may belong to an
extension the server advertises, T-LIFE-17: another code then warns, unless
the reply itself calls the method unknown; so for a method of a
capability the server did not declare, whose code 2025's pages leave to
a SHOULD, unless the reply calls it unknown or not implemented); in
2026-07-28 a header
mismatch is -32020, an unsupported
protocol version -32022 and a missing _meta field -32602. Where the spec
admits two codes (params that are not an object: -32600 or -32602; several
faults at once, AMB-4) any of them passes; where the spec leaves the
reaction open (a batch, AMB-7) a different code warns.

For an ordinary method call the request alone does not fix the code, but
some codes are wrong whatever the server knows: -32700 for a request that
is valid JSON (unless a reading of it, such as a byte order mark or a
duplicate name, may be refused as malformed; it fails T-ERR-1, or for an
invalid request T-ERR-2, and for params that are no object the strict
contract fails it while the spec, which leaves that code open, warns:
T-RPC-13; for an id JSON-RPC allows and MCP forbids, 1.5 or null, any
error reply passes, -32700 too and under either contract, as a decoder
may fail to hold such an id, DESIGN's ruling); -32603 (internal error)
when the reply itself says the params were invalid (that is -32602, a
client mistake the client can fix): by the protocol's name for it, or in
a validator's words about the call's own arguments. A validator's words
that fit a failure upstream too ("API error: invalid parameter
'max_tokens'", or "invalid argument", which an operating system prints
for a failed call, or "invalid arguments passed to sqlite3_bind_text", a
library's), and any words relayed from another system ("upstream
server replied: Invalid params"), only warn, and not at all when the
listed tool's inputSchema accepts the arguments; -32020 when every header matches the
body (an Accept or Content-Type the transport refuses, or an Mcp-Param-*
header no listed tool parameter names, may be what it names: the spec
gives servers no rule for either). -32022 is right for any version the server does not serve: it
fails only when the server itself declared the version served (in
server/discover, or in the error's own data.supported). What the run's
facts fix (the tool called does not exist: -32602, a SHOULD) is judged at
their level; where they contradict the refusal (-32601 for a method of a
capability the server declared, or for a 2026-07-28 subscriptions/listen
from a server that declared list or update notifications, which travel
on listen streams alone; a listed resource refused as missing),
it warns: the checker cannot see why the server says otherwise now;
-32601 for server/discover fails where the run speaks 2026-07-28 with
the server, which then implements it (T-LIFE-8). Where a fixture leaves the code open (a refusal on a header,
a second initialize) or asks for it only as a SHOULD (a malformed
tools/call, T-TOOL-7), the codes its own words, the request or the
server's declarations deny still fail: -32022 for a version the server
says it serves, and -32603 for what the reply itself calls invalid
params; -32020 when every standard header matches the body warns there
(another header refused may be read as malformed). A request refused on
its headers before its body was read (a 406 for its Accept, a 403 for
its Origin, with no method's code and no echoed id) is not held to the
code of its method: an unknown or undeclared one was never looked at.
Nor is one the HTTP layer refused for its size (413, 414, 431): whatever
its body holds, a missing _meta too, was never read; that holds for a
request large enough for a limit a server may set (64 KiB of body, 4 KiB
of headers), and a smaller one so refused warns. -32600 for a request
whose params name what the server lacks (an unknown tool, prompt or
resource), or lack what its listing requires (a prompt's required
argument), or hold arguments a tool's listed inputSchema forbids (but a
task-required tool called without a task, AMB-14), fails even where that
condition's own code is a SHOULD: the request object is valid, and
-32600 says it is not (T-ERR-2). So does -32603 whose own words call the
fault an unknown tool or prompt (T-ERR-5).`,
	Run: func(p *Pass) error {
		e, code, err := needCode(p)
		if err != nil {
			return err
		}
		x := p.Expect
		sized, plausible := sizeRefused(p)
		switch {
		case slices.Contains(x.Codes, code):
			return nil
		case sized && plausible:
			// Refused for its size before the body was read: the code is
			// the limit's, not the condition's the body holds.
			return nil
		case sized:
			// A limit below any common one is a guess about the server:
			// the body may well have been read.
			p.Warnf("error.code", "code %d with status %d for %s, a request of %d bytes, which no common size limit refuses; want %s", code, p.Exchange.Response.Status, x.Cause(), len(p.Exchange.Request.Body), codeList(x.Codes))
			return nil
		case (x.Condition == expect.CondUndeclared || x.Condition == expect.CondUnknownMethod) && headersExplain(p) && !methodLevel(p) &&
			!unknownMethodMessage.MatchString(p.Reply.Response.Get("error.message").Str):
			// Refused on what its own headers say (an Accept, an Origin,
			// credentials) before the body was read: the method, and the
			// capability behind it, were never looked at (DESIGN:
			// transport-level rejections), so the code is the refusal's,
			// not the method's. A status alone shows no such thing.
			return nil
		case initSessionRefusal(p):
			p.Deviate(expect.Want{Level: expect.Open, Rule: x.Code.Rule}, "error.code", "code %d for %s, refused as a request outside a session, %s; want %s", code, x.Cause(), initSessionWhy, codeList(x.Codes))
			return nil
		case readCode(p, code):
			return nil // right under one reading of the request
		case code == envelope.CodeUnsupportedVer && versionRefused(p):
			// DESIGN, Versions: -32022 whose supported list lacks the
			// version asked for is right whatever else the request holds:
			// a server that does not serve the version reads nothing else.
			return nil
		case code == envelope.CodeMissingClientCap && capabilityRefused(p):
			// T-LIFE-13 (MUST): a request that needs a client capability
			// the request did not declare gets -32021, and no order is
			// set between that fault and the request's others (AMB-4).
			// ERR3004 judges that the capabilities named were missing.
			return nil
		case code == envelope.CodeParseError && x.ID.Rounded.Set() && len(x.ID.Echo) > 0 && envelope.SameID(x.ID.Echo[0], p.Reply.Response.Get("id")):
			// A receiver that could not hold the id would not echo it:
			// this one read the request, which is no parse error.
			p.Failf("error.code", "code -32700 (parse error) for a request whose id the reply echoes exactly: the server read it")
			return nil
		case slices.Contains(x.AlsoCodes, code) && len(x.Codes) == 0:
			// The request fixes no code of its own: the code is defensible,
			// but the serving it stands for was the literal reading.
			p.Deviate(expect.Want{Level: expect.Open, Rule: x.AlsoWhy}, "error.code", "code %d for %s is defensible, but the literal reading serves it", code, x.Cause())
			return nil
		case slices.Contains(x.AlsoCodes, code):
			p.Deviate(expect.Want{Level: expect.Open, Rule: x.AlsoWhy}, "error.code", "code %d for %s is defensible, but the literal reading is %s", code, x.Cause(), codeList(x.Codes))
			return nil
		case code == envelope.CodeParseError && x.Request.Valid && x.Request.UTF8 && x.Condition != expect.CondBatch && !refusedOnHeaders(p):
			// Whatever else is open about the request, bytes that parse
			// are never a parse error (unless a reading of them refuses
			// them, above). A batch is the exception: the reaction to one
			// is open (AMB-7), and a server that reads one message per
			// body may fail to read an array at all; so is a refusal on
			// the headers, made before the body is read.
			//
			// The code fits no condition of the request (the contract),
			// and the spec fails it (T-ERR-1: -32700 is for bytes that
			// are not JSON), save for an invalid request, which gets what
			// a wrong code gets there: a MUST (T-ERR-2), or a warn where
			// the spec leaves the code open (T-RPC-13's params that are no
			// object; its probe warns on another code). Never the rule
			// the request broke on purpose (T-RPC-3 for an array id).
			// Elsewhere the code's own want only chooses among plausible
			// codes (a SHOULD for an unknown tool), none of them -32700.
			if x.AnyError {
				// An id MCP forbids and JSON-RPC allows: any error reply
				// passes (DESIGN rulings), and a decoder that cannot hold
				// the id may well call the request unparseable; the
				// contract holds it to no other code (-32602 and -32603
				// pass as well).
				return nil
			}
			spec := expect.Want{Level: expect.Must, Rule: "T-ERR-1"}
			if x.Condition == expect.CondInvalidRequest && x.Code.Set() {
				spec = x.Code
			}
			p.contractOr(spec, "error.code", "code -32700 (parse error) for a request that is valid JSON")
			return nil
		case x.AnyCode && code == envelope.CodeInternalError:
			// The spec names no code for the condition; a code the
			// server's own words deny is still wrong.
			hiddenInvalidParams(p, e)
			return nil
		case x.AnyCode && code == envelope.CodeUnsupportedVer && !(isCall(x.Condition) && x.Version == envelope.V20260728):
			// (A request that is no call, an id MCP forbids say: the
			// version it names is still one the server declared.)
			if v := sentVersion(p); v != "" && (x.Facts.Serves(v) || envelope.Lists(e.Get("data.supported"), v)) && !combinedVersionHeader(p) {
				p.Failf("error.code", "code -32022 (unsupported version) for %s, a version the server says it serves", Quote(v, quoteN))
			}
			return nil
		case x.AnyCode && !(isCall(x.Condition) && x.Version == envelope.V20260728):
			return nil
		}
		if isCall(x.Condition) && x.Version == envelope.V20260728 {
			// (Under an open code too: these codes deny what the request
			// and the server's own declarations show.)
			// Some codes are wrong for a valid request whatever else is
			// known; each is judged from what the server itself declared.
			switch {
			case code == envelope.CodeUnsupportedVer:
				if v := sentVersion(p); v != "" && (x.Facts.Serves(v) || envelope.Lists(e.Get("data.supported"), v)) && !combinedVersionHeader(p) {
					p.Failf("error.code", "code -32022 (unsupported version) for %s, a version the server says it serves", Quote(v, quoteN))
				}
				// Otherwise the server does not serve the version asked
				// for, and -32022 is right for any version.
				return nil
			case code == envelope.CodeHeaderMismatch && p.Exchange.Transport == envelope.Stdio:
				p.Failf("error.code", "code -32020 (header mismatch) on stdio, which has no headers (T-ERR-8)")
				return nil
			case code == envelope.CodeHeaderMismatch && !headersInDoubt(p) && (x.Method != "tools/call" || x.Tool != nil || !paramBound(p)):
				// A tools/call's Mcp-Param-* headers (T-HDR-4) are known
				// from the tool the server listed; without the tool, the
				// request alone cannot show them.
				if x.AnyCode {
					// A fixture that leaves the code open refuses another
					// header (an Origin, a size), which a server may call
					// malformed (T-ERR-12): the standard headers match, so
					// it only warns.
					p.Warnf("error.code", "code -32020 (header mismatch) though every standard header matches the body; the request is refused for another header, which -32020 names only as malformed")
					return nil
				}
				p.Failf("error.code", "code -32020 (header mismatch) though every standard header matches the body")
				return nil
			}
		}
		if x.AnyCode {
			return nil // the spec names no code for the condition
		}
		if x.Method == "server/discover" && x.Version != envelope.V20260728 && x.Condition == expect.CondUnknownMethod && refusedOnHeaders(p) && !methodLevel(p) {
			// A 2026-07-28 probe to a server the facts show legacy (a
			// relay that saw a 2025 session first), refused outside a
			// session on its header: the code is the session refusal's,
			// not an unknown method's (T-SESS-2, T-COMPAT-4).
			return nil
		}
		if len(x.Codes) > 0 && x.Code.Set() {
			if msg := p.Reply.Response.Get("error.message").Str; x.Condition == expect.CondUnknownMethod && unknownMethodMessage.MatchString(msg) ||
				x.Condition == expect.CondUndeclared && x.Code.Level >= expect.Should && refusesMethodItself(msg, x.Method) {
				// (A fixture that leaves the code open, an ambiguity of
				// its own, keeps it open.)
				// The server itself says the method is unknown, so no
				// extension defines it: the code must be -32601. So for a
				// method of a capability it did not declare, refused as
				// one it does not implement ("Not implemented"): where
				// the code is left to a SHOULD, its own words fix the
				// kind (review rev64: mcp-lite's -32603 only warned).
				p.Failf("error.code", "code %d for a method the reply itself calls unknown or not implemented, want -32601", code)
				return nil
			}
			if code == envelope.CodeInternalError && slices.Contains(x.Codes, envelope.CodeInvalidParams) {
				if sure, _ := paramsRefusal(p, e); sure {
					// The code is left to the server, but not one its own
					// words deny (T-ERR-4), as under an open code.
					hiddenInvalidParams(p, e)
					return nil
				}
			}
			if code == envelope.CodeInvalidRequest && (x.Condition == expect.CondUnknownTool || x.Condition == expect.CondUnknownName || x.Declared) &&
				!(refusedOnHeaders(p) && !methodLevel(p)) && !sessionRefusal(p) {
				// The params name what the server lacks, in a valid
				// request object (a refusal on its headers or its session
				// aside, which never read it): -32600 is JSON-RPC's code for one that
				// is not (T-ERR-2), a code of the wrong kind, which fails
				// whatever level the condition's own code has (digest
				// §3.1: only a choice between plausible codes warns).
				p.Failf("error.code", "code -32600 (invalid request) for %s, a valid request object, want %s (T-ERR-2)", x.Cause(), codeList(x.Codes))
				return nil
			}
			p.Deviate(x.Code, "error.code", "code %d for %s, want %s", code, x.Cause(), codeList(x.Codes))
			return nil
		}
		if x.Condition != expect.CondCall || refusedOnHeaders(p) {
			return nil
		}
		switch c := expect.CapabilityOf(x.Method); {
		case code == envelope.CodeInvalidRequest && x.Tool != nil && x.Tool.Refusal.Set() && !x.Tool.TaskRefused && !sessionRefusal(p):
			// The arguments break the tool's listed inputSchema in a valid
			// request object: -32602 or a result with isError (AMB-2)
			// answer that, -32600 is of the wrong kind (T-ERR-2), as for an
			// unknown tool (review rev46). (A task-required tool called
			// without a task may take -32600, AMB-14: TaskRefused.)
			p.Failf("error.code", "code -32600 (invalid request) for arguments tool %s's inputSchema forbids, in a valid request object; want -32602 or a result with isError (T-ERR-2)", Quote(x.Tool.Name, quoteN))
		case code == envelope.CodeInvalidRequest:
			p.Warnf("error.code", "code -32600 (invalid request) for a well-formed request object")
		case code == envelope.CodeInternalError:
			hiddenInvalidParams(p, e)
		case code == envelope.CodeMethodNotFound && x.Method == "server/discover" && x.Version == envelope.V20260728 && x.Facts != nil && x.Facts.Version == envelope.V20260728:
			// Every 2026-07-28 server implements it (T-LIFE-8, MUST), and
			// the run speaks 2026-07-28 with this server (negotiated, or
			// forced with --protocol). A probe of a server whose version
			// is not known is what a 2025 server rightly refuses so.
			p.Failf("error.code", "code -32601 (method not found) for server/discover, which every 2026-07-28 server implements (T-LIFE-8)")
		case code == envelope.CodeMethodNotFound && c != "" && declaredCap(x.Facts, c) && (x.Tool == nil || !x.Tool.TaskRefused):
			// The server's own declaration says it implements the method;
			// the checker cannot see why it says otherwise now.
			p.Warnf("error.code", "code -32601 (method not found) for %s, though the server declared the %s capability (T-ERR-3)", Quote(x.Method, quoteN), c)
		case code == envelope.CodeMethodNotFound && x.Method == "subscriptions/listen" && x.Version == envelope.V20260728 && listenDeclared(x.Facts) != "":
			// In 2026-07-28 a server's list and update notifications
			// travel on listen streams alone: its declaration that it
			// sends them says it implements subscriptions/listen (review
			// rev48).
			p.Warnf("error.code", "code -32601 (method not found) for subscriptions/listen, though the server declared %s, whose notifications travel only on a listen stream (T-ERR-3)", listenDeclared(x.Facts))
		case x.Method == "resources/read" && x.ParamsSound && (code == envelope.CodeResourceNotFound || x.Version == envelope.V20260728 && code == envelope.CodeInvalidParams):
			// The resource may have gone since it was listed: a doubt,
			// not a finding the checker can be sure of.
			p.Warnf("error.code", "code %d refuses a resource the server listed as missing (T-RES-1)", code)
		}
		return nil
	},
}

// listenDeclared is the first capability the facts show the server
// declared whose notifications a 2026-07-28 server sends on a listen
// stream (see listenCapabilities), "" when none.
func listenDeclared(f *expect.Facts) string {
	for _, l := range listenCapabilities {
		if declaredCap(f, l.capability) {
			return l.capability
		}
	}
	return ""
}

// declaredCap: the facts show the server declared capability c.
func declaredCap(f *expect.Facts, c string) bool {
	declared, known := f.Declares(c)
	return known && declared
}

// hiddenInvalidParams judges a -32603 whose reply reads as a refusal of
// the call's parameters, which is -32602 (T-ERR-4): sure when it names
// the condition by its protocol name or reads as a validator's refusal of
// the call's own arguments; only a doubt when its words fit a failure
// upstream too, or when the listed tool's schema accepts the arguments
// (the server may still judge them by rules of its own).
func hiddenInvalidParams(p *Pass, e gjson.Result) {
	sure, doubt := paramsRefusal(p, e)
	accepted := p.Expect.ParamsSound
	// The rule broken is the code's (T-ERR-4: invalid params are -32602;
	// T-ERR-5: -32603 is for a failure inside the server, and an unknown
	// tool is the client's mistake), not the fixture's, which may ask the
	// code only as a SHOULD (T-TOOL-7).
	what, rule := refusedAs(p.Expect, e)
	switch {
	case sure && !accepted:
		p.Deviate(expect.Want{Level: expect.Must, Rule: rule}, "error.code", "code -32603 (internal error) for what the reply itself calls %s; want -32602", what)
	case sure:
		p.Deviate(expect.Want{Level: expect.Should, Rule: rule}, "error.code", "code -32603 (internal error) for what the reply calls %s, though the run's facts show the params valid: if the server refused them by rules of its own, want -32602", what)
	case !accepted && doubt:
		p.Deviate(expect.Want{Level: expect.Should, Rule: "T-ERR-4"}, "error.code", "code -32603 (internal error) with a validator's words in its message: if the call's parameters were wrong, want -32602")
	}
}

// refusedAs names what a -32603 reply calls the fault, for a finding,
// and the rule its code breaks.
func refusedAs(x *expect.Expectation, e gjson.Result) (what, rule string) {
	if kind := unknownNamed(x, e.Get("message").Str); kind != "" {
		return "an unknown " + kind + " (a client's mistake, not the server's failure)", "T-ERR-5"
	}
	return "invalid params", "T-ERR-4"
}

// paramsRefusal reads an error's words as a refusal of the call's
// parameters: sure when they name the condition by its protocol name or
// read as a validator's refusal of the call's own arguments, and are not
// relayed from another system (or, under the strict contract, whose
// vocabulary gives data.errors to validation failures, when data.errors
// is there); a doubt when they only sound like a validator's, or are
// another system's.
func paramsRefusal(p *Pass, e gjson.Result) (sure, doubt bool) {
	msg := e.Get("message").Str
	args := p.Expect.Request.Get("params.arguments")
	if !args.Exists() {
		// A method without arguments (logging/setLevel, completion/complete):
		// its params are what a validator refuses, by their names.
		args = p.Expect.Request.Get("params")
	}
	validator := validationMessage.MatchString(msg)
	typed := typeComplaint.MatchString(msg)
	named := invalidParamsName.MatchString(msg) || unknownNamed(p.Expect, msg) != ""
	// A zod dump is read issue by issue (zodIssuesAbout), not by the
	// words it is made of, which name any path, the request's or not.
	dump := isZodDump(msg)
	// One complaint that a value is absent, naming a member the request
	// holds (namesArgument knows only those), is about another object
	// than the request's: a backend's reply with a member of that name.
	absentHeld := receivedUndefined.MatchString(msg) && len(typeComplaint.FindAllStringIndex(msg, -1)) == 1
	words := !dump && (validator || typed) && (namesArgument(msg, args) && !absentHeld || validator && typed)
	sure = p.Contract.IsStrict() && e.Get("data.errors").Exists() ||
		!upstreamWords.MatchString(msg) && !ranWords.MatchString(msg) && (named || dump && zodIssuesAbout(p, msg) || words)
	return sure, named || validator || typed || validationWords.MatchString(msg)
}

// zodIssuesAbout: msg is zod's issues dumped as JSON (a TypeScript SDK
// before zod 4 answers a missing field so: [{"code":"invalid_type",
// "path":["a"],...}]) and an issue's path names what the request holds
// or owes, as the request holds it: a member of its params or arguments
// (or those objects themselves), or one the called tool's inputSchema
// requires. A dump about other paths (a backend's reply the server
// parsed, review rev35), or one whose "received" the request's value
// there contradicts (undefined for a member it holds, review rev37), may
// be the server's own failure.
func zodIssuesAbout(p *Pass, msg string) bool {
	if !isZodDump(msg) {
		return false
	}
	req := p.Expect.Request
	var required []string
	if t := p.Expect.Facts.Tool(req.Get("params.name").Str); t != nil && p.Expect.Method == "tools/call" {
		required = t.Required()
	}
	about := false
	gjson.Parse(msg).ForEach(func(_, issue gjson.Result) bool {
		if !issue.Get("code").Exists() {
			return true
		}
		received := issue.Get("received").Str
		path := issue.Get("path").Array()
		// A path from "params" is the request's own, parsed against its
		// method's schema: a member it lacks there is one it owes.
		ofParams := len(path) > 0 && path[0].Str == "params"
		base := []string{"params", "params.arguments"}
		if ofParams {
			path, base = path[1:], base[:1]
		}
		if len(path) > 0 && path[0].Str == "arguments" && req.Get("params.arguments").Exists() {
			path, base = path[1:], []string{"params.arguments"}
		}
		// The request's value the whole path names (a nested member, an
		// item), and the object that would hold it.
		var at, parents []gjson.Result
		switch {
		case len(path) == 0 && (ofParams || len(base) == 1):
			// The params, or the arguments, themselves.
			at = []gjson.Result{req.Get(base[len(base)-1])}
		case len(path) == 0 || path[0].Type != gjson.String:
			return true
		default:
			k, parent := "", ""
			for i, seg := range path {
				if seg.Type != gjson.String && seg.Type != gjson.Number {
					return true
				}
				if i == len(path)-1 {
					parent = k
				}
				k = envelope.JoinPath(k, seg.String())
			}
			for _, b := range base {
				at = append(at, req.Get(b+"."+k))
				if parent != "" {
					parents = append(parents, req.Get(b+"."+parent))
				}
			}
		}
		held := slices.ContainsFunc(at, func(v gjson.Result) bool { return v.Exists() })
		switch {
		case held:
			about = slices.ContainsFunc(at, func(v gjson.Result) bool { return v.Exists() && zodReceived(v, received) })
		case received != "" && received != "undefined":
		case len(path) > 1:
			// Lacked inside an object the request holds: its own.
			about = slices.ContainsFunc(parents, func(v gjson.Result) bool { return v.IsObject() })
		default:
			// Lacked: a member the request owes, if its params' schema
			// or the tool's inputSchema asks for it.
			about = ofParams || len(path) > 0 && slices.Contains(required, path[0].Str)
		}
		return !about
	})
	return about
}

// isZodDump: msg is a JSON array of issues with paths, as zod 3's error
// prints itself.
func isZodDump(msg string) bool {
	return strings.HasPrefix(msg, "[") && strings.Contains(msg, `"path"`)
}

// receivedUndefined is a type complaint about a value that is absent.
var receivedUndefined = regexp.MustCompile(`(?i)\b(got|received)\b\W{0,3}undefined\b`)

// zodReceived: zod's "received" (its parsed type) does not contradict
// the request's value v, which is there.
func zodReceived(v gjson.Result, received string) bool {
	switch received {
	case "", "unknown":
		return true
	case "undefined":
		return false
	case "number", "integer", "float", "nan", "bigint":
		return v.Type == gjson.Number
	}
	return !jsonTypeNames[received] || received == envelope.Kind(v)
}

// isCall: the request is a well-formed call of a defined method, whatever
// the facts then say of it.
func isCall(c expect.Condition) bool {
	switch c {
	case expect.CondCall, expect.CondUnknownTool, expect.CondMalformedCall, expect.CondInvalidParams, expect.CondUndeclared:
		return true
	}
	return false
}

// readCode: code is one a reading of the request calls for, and the
// reply does not deny it: a -32022 whose own data.supported lists the
// version the request named says the version is served after all.
func readCode(p *Pass, code int) bool {
	if !slices.Contains(p.Expect.ReadCodes, code) {
		return false
	}
	if code != envelope.CodeUnsupportedVer {
		return true
	}
	v := sentVersion(p)
	if v == "" {
		v = envelope.HeaderGet(p.Exchange.Request.Header, "Mcp-Protocol-Version")
	}
	return !envelope.Lists(p.Reply.Response.Get("error.data.supported"), v)
}

// versionRefused: the reply refuses the version the request asked for
// (_meta's, else the header's) with a data.supported list that lacks it,
// and the run's facts do not show the server serving it.
func versionRefused(p *Pass) bool {
	v := sentVersion(p)
	if v == "" {
		v = envelope.HeaderGet(p.Exchange.Request.Header, "Mcp-Protocol-Version")
	}
	supported := p.Reply.Response.Get("error.data.supported")
	return v != "" && supported.IsArray() && !envelope.Lists(supported, v) && !p.Expect.Facts.Serves(v)
}

// capabilityRefused: a 2026-07-28 refusal naming, in
// data.requiredCapabilities, a capability the request did not declare.
func capabilityRefused(p *Pass) bool {
	if p.Expect.Version != envelope.V20260728 {
		return false
	}
	rc := p.Reply.Response.Get("error.data.requiredCapabilities")
	declared := p.Expect.Request.Get(envelope.MetaPath(envelope.MetaClientCapabilities))
	for _, leaf := range leafPaths(rc, "") {
		if !declared.IsObject() || !declared.Get(leaf).Exists() {
			return true
		}
	}
	return false
}

// sentVersion is the protocol version the request asked for: _meta's,
// or an initialize's own.
func sentVersion(p *Pass) string {
	if v := p.Expect.Request.Get(envelope.MetaPath(envelope.MetaProtocolVersion)); v.Exists() {
		return v.Str
	}
	if p.Expect.Method == "initialize" {
		return p.Expect.Request.Get("params.protocolVersion").Str
	}
	return ""
}

// combinedVersionHeader: the request repeats MCP-Protocol-Version, whose
// field lines a receiver may read combined into one list (RFC 9110 §5.3;
// DESIGN: receiver latitude), a value no server serves: -32022 answers
// that reading.
func combinedVersionHeader(p *Pass) bool {
	_, ok := combinedHeader(p.Exchange.Request.Header, "Mcp-Protocol-Version")
	return ok
}

// combinedHeader is the value of a header sent on several field lines as
// a receiver may combine them (RFC 9110 §5.3); ok is false for one line.
func combinedHeader(h http.Header, name string) (string, bool) {
	vs := envelope.HeaderValues(h, name)
	if len(vs) < 2 {
		return "", false
	}
	return strings.Join(vs, ", "), true
}

func codeList(codes []int) string {
	var b strings.Builder
	for i, c := range codes {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString(strconv.Itoa(c))
	}
	return b.String()
}

var Refused = &Check{
	ID:            "PRO1001",
	Title:         "A request is refused or served as the protocol says",
	SpecRef:       "T-ERR-1..T-ERR-3, T-LIFE-5, T-LIFE-7, T-LIFE-9, T-HDR-2, T-HTTP-8, T-TASK-1, T-TASK-2, T-MRTR-5, T-MRTR-6",
	Severity:      MUST,
	Area:          AreaProtocol,
	JudgesOutcome: true,
	Doc: `Garbage, invalid requests, unknown methods, and in 2026-07-28 header
mismatches, unsupported versions and missing _meta fields must be refused
with an error response, not served with a result; so must, in 2025-11-25,
a call without a task to a tool that declares taskSupport "required"
(T-TASK-1: -32601; -32600 warns, AMB-14), an isError result included.
How sure that is comes
from the expectation: a MUST fails (the refusals above); a SHOULD warns
(an unknown tool, T-TOOL-6; a malformed tools/call, T-TOOL-7; an invalid
cursor, T-PAGE-1; a task-augmented call of a tool whose taskSupport is
absent or "forbidden", T-TASK-2, unless the server does not declare
task-augmented tools/call, which then runs it ignoring the task; a method of a capability a 2025-xx server did not
declare); where the spec lets a server serve the request anyway (a
missing MCP-Protocol-Version header read as 2025-03-26 by a server that
serves such clients; an id JSON-RPC allows and MCP forbids, echoed
exactly) a result only warns. A missing header has no 2025-03-26 reading
when the method is 2026-07-28's alone (server/discover) or the result
carries resultType: served so, it fails. A request with a foreign
Origin served by a server on loopback fails (T-HTTP-14: DNS rebinding),
and by a remote one warns, as the spec does not say what an invalid
Origin is (AMB-19); a foreign Host served only warns (AMB-19 names
Origin, not Host). Where the spec sets no code for a refusal (a
tampered requestState, malformed inputResponses, AMB-12), any error
refuses it (ERR1002 judges its code) and a result warns. A second round
whose requestState the server did not issue for it (2026-07-28: the
state changed in one character, T-MRTR-5, or issued for the same tool
called with other arguments, T-MRTR-6) is refused by an error of any
code or by a fresh input_required that asks again; a complete result
warns: the server may have used the state, but one may leave state
unprotected where tampering can do nothing worse than fail the request
(T-MRTR-5), and binding it to the request is a SHOULD (T-MRTR-6). A
2026-07-28 input_required answer to a tools/call, prompts/get or
resources/read due a refusal for what it names (an unknown tool, prompt
or resource, arguments that do not fit) is not judged: the server asks
for input before it looks, served nothing, and only a later round would
show the refusal.

The other way round: a valid request a fixture only spells another way
the spec allows (header names in lowercase, T-HTTP-19) must be served: a
JSON-RPC error or an HTTP error status fails, but 429 and 503, which
say the server is busy, warn. So must a 2025-xx ping (T-LIFE-5: a
prompt, empty result) once the traffic shows an initialize answered
(before, T-LIFE-6 sets no reaction): on stdio, to a server without
sessions, or in a session the server is known to hold (outside one, a
server that relies on sessions refuses it as any request, T-SESS-2).
Over HTTP only an answer the server made as JSON-RPC (a 2xx) is judged
so: an HTTP refusal may be its transport's (credentials, headers). A
ping whose id is beyond 2^53 may be refused (RFC 8259 §6).

A listed tool called with arguments its inputSchema accepts SHOULD be
served (T-TOOL-13): a failure inside the tool (an API down, a missing
key, a rule of the business) comes back as a result with isError, so a
JSON-RPC error warns. Only -32603 and codes outside the version's table
say that much: every other code of the table names a condition of its
own (-32042, a URL the user must visit; -32021, a capability the client
lacks; -32602, arguments the server refuses by a rule of its own, which
ERR1002 judges, as it does a -32603 whose words call it a refusal of the
params). Over HTTP only a 2xx answer is judged so.

A 2025 request after initialisation without MCP-Protocol-Version,
refused 400 on that header (no method's code, no echoed id), warns:
T-HTTP-7 makes the missing header no error by itself, and the server
SHOULD read the request as 2025-03-26. A reply that read the body is
judged as any other.`,
	Run: func(p *Pass) error {
		x := p.Expect
		if headerlessRefused(p) {
			p.Warnf("error", "%s was refused on its missing MCP-Protocol-Version header; a server SHOULD read such a request as 2025-03-26 (T-HTTP-7)", x.Cause())
			return nil
		}
		if x.Served.Set() && !x.Error.Set() {
			// (A request the expectation says must be refused all the
			// same, a method of a capability the server did not declare
			// say, is judged as that refusal.)
			return mustServe(p)
		}
		if !x.Error.Set() {
			return Skip("the request may be served")
		}
		m, err := needObject(p)
		if err != nil {
			return err
		}
		if m.Get("result").Exists() && !m.Get("error").Exists() {
			if x.Error.Rule == expect.HeaderMissingRule && m.Get("result.resultType").Exists() {
				// resultType is 2026-07-28's alone: the server served the
				// request as 2026-07-28, not as the 2025-03-26 it may read
				// a missing header as (T-HTTP-8).
				p.Failf("result", "%s was served as 2026-07-28 (the result carries resultType), want -32020 and 400 (T-HTTP-8)", x.Cause())
				return nil
			}
			if x.StateRefused {
				// A fresh input_required asks again without using the
				// state: a refusal of it as right as an error.
				if m.Get("result.resultType").Str == "input_required" || m.Get("result.isError").Type == gjson.True {
					// (A tool's error result refuses it too: the tool
					// failed, and nothing says it used the state.)
					return nil
				}
				p.Deviate(x.Error, "result", "%s was served with a complete result, want an error or a fresh input_required", x.Cause())
				return nil
			}
			if inputFirst(x, m) {
				// Asked for input before the lookup (T-MRTR-1 lets these
				// methods): it served nothing, and whether it refuses the
				// name or arguments comes in a later round, past this
				// exchange (review rev30).
				return Skip("the server asked for input (input_required) first; a later round would show whether it refuses the request")
			}
			p.Deviate(x.Error, "result", "%s was served with a result, want an error", x.Cause())
		}
		return nil
	},
}

// inputFirst: a 2026-07-28 input_required result answers a tools/call,
// prompts/get or resources/read the expectation wants refused for what it
// names (a tool, prompt or resource the server lacks, arguments that do
// not fit), which the server may only look at once the input it asks for
// came. A refusal for the request's own form (a header, the version) is
// not put off so.
func inputFirst(x *expect.Expectation, m *envelope.Message) bool {
	switch x.Condition {
	case expect.CondUnknownName, expect.CondUnknownTool, expect.CondInvalidParams:
	default:
		return false
	}
	field := envelope.NameField(x.Method)
	return x.Version == envelope.V20260728 && field != "" &&
		x.Request.Get("params."+field).Type == gjson.String &&
		m.Get("result.resultType").Str == "input_required"
}

// headerlessRefused: a 2025 request without its MCP-Protocol-Version
// header (see expect's VersionHeaderAbsent) refused 400 on its headers,
// as nothing in the reply shows the body was read (no method's code, no
// echoed id).
func headerlessRefused(p *Pass) bool {
	r := p.Exchange.Response
	// (A request the session explains the refusal of, one outside the
	// session, is that refusal's.)
	return r != nil && r.Status == 400 && p.Expect.Condition != expect.CondSession && p.Expect.VersionHeaderAbsent(p.Exchange) && !methodLevel(p) &&
		p.Reply.Response != nil && p.Reply.Response.Get("error").Exists()
}

// mustServe judges a reply to a request the expectation says must be
// served (Expectation.Served).
func mustServe(p *Pass) error {
	x := p.Expect
	r := p.Exchange.Response
	if r == nil {
		return Skip("no reply arrived (see RPC1006)")
	}
	if p.Exchange.Transport == envelope.HTTP && r.Status >= 300 && x.ServedAsJSONRPC {
		return Skip("refused over HTTP, maybe by its transport (credentials, headers, a session), before the request was handled")
	}
	if p.Exchange.Transport == envelope.HTTP && (r.Status == 429 || r.Status == 503) {
		p.Warnf("http.status", "status %d says the server is busy: whether it serves %s is not seen", r.Status, x.Cause())
		return nil
	}
	if p.Reply.Response != nil && p.Reply.Response.IsObject() {
		if e := p.Reply.Response.Get("error"); e.Exists() {
			if c := e.Get("code"); c.Type == gjson.Number && slices.Contains(x.ServedExcept, int(c.Int())) {
				return Skipf("code %s names a condition of its own, not a failure in serving %s", c.Raw, x.Cause())
			}
			if x.Tool != nil {
				if sure, _ := paramsRefusal(p, e); sure {
					return Skip("the reply calls it a refusal of the call's params, not a failure inside the tool: ERR1002 judges its code")
				}
			}
			p.Deviate(x.Served, "error", "%s was refused (code %s: %s), want it served", x.Cause(), clip(e.Get("code").Raw), Quote(e.Get("message").Str, quoteN))
			return nil
		}
		if p.Reply.Response.Get("result").Exists() {
			return nil
		}
	}
	if p.Exchange.Transport == envelope.HTTP && r.Status >= 400 {
		p.Deviate(x.Served, "http.status", "%s was refused with status %d, want it served", x.Cause(), r.Status)
		return nil
	}
	// Neither a result nor an error: whether the request was served is
	// not seen (RPC1001 judges what came instead).
	return Skip("the reply holds no JSON-RPC response (see RPC1001)")
}

// namesProblem: msg names, as a word of its own, a member the call's
// arguments were found wrong at (the last step of a location) or
// missing ("missing property 'query'"). Only read beside words of a
// refusal, so a short name ("a") is taken as one.
func namesProblem(msg string, problems []envelope.DistilledEntry) bool {
	for _, e := range problems {
		names := []string{e.Location[strings.LastIndex(e.Location, "/")+1:]}
		for _, pr := range e.Problems {
			if rest, ok := strings.CutPrefix(pr, "missing property "); ok {
				for _, m := range quotedName.FindAllStringSubmatch(rest, -1) {
					names = append(names, m[1])
				}
			}
		}
		for _, n := range names {
			n = strings.ReplaceAll(strings.ReplaceAll(n, "~1", "/"), "~0", "~")
			if n == "" {
				continue
			}
			q := regexp.QuoteMeta(n)
			// A short name ("a") is an English word too: it counts only
			// as the subject of a refusal ("a is required") or quoted.
			pat := `(?i)(^|[^\pL\pN_])` + q + `\s+(is|are|must|should|was|has|cannot)\b|['"\x60]` + q + `['"\x60]`
			if utf8.RuneCountInString(n) >= 4 {
				pat = `(?i)(^|[^\pL\pN_])` + q + `($|[^\pL\pN_])`
			}
			if regexp.MustCompile(pat).MatchString(msg) {
				return true
			}
		}
	}
	return false
}

// quotedName is a name a distilled problem quotes.
var quotedName = regexp.MustCompile(`'([^']*)'`)

// namesArgument: msg names one of the call's arguments as a validator
// does: in a path ("arguments.a", "/a"), in quotes, after "argument",
// "parameter", "property" or "field", or leading the message ("a: …");
// a name of four letters or more that is no JSON type's also as a whole
// word ("amount expected number"). A short name standing as a word ("to")
// is the message's own English.
func namesArgument(msg string, args gjson.Result) bool {
	found := false
	args.ForEach(func(k, _ gjson.Result) bool {
		if k.Str == "" || k.Str == "_meta" {
			return true
		}
		n := regexp.QuoteMeta(k.Str)
		const end = `($|[^\pL\pN_])`
		pat := `(?i)(^` + n + `\s*:|[./]` + n + end + `|['"\x60]` + n + `['"\x60]|(^|[^\pL\pN_])(argument|parameter|param|property|field)s?\s+` + n + end + `)`
		if utf8.RuneCountInString(k.Str) >= 4 && !jsonTypeNames[strings.ToLower(k.Str)] {
			pat = `(?i)(^|[^\pL\pN_])` + n + end
		}
		re, err := regexp.Compile(pat)
		found = err == nil && re.MatchString(msg)
		return !found
	})
	return found
}

// jsonTypeNames are the words a type complaint is made of.
var jsonTypeNames = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "object": true, "array": true, "null": true}

// headersExplain: the request's own headers give its refusal a cause a
// server sees before it reads the body: credentials (401), an Origin
// (403), an Accept that leaves out a reply type or is missing (406, or
// 400), a Content-Type other than JSON (415, or 400), a size (413, 414,
// 431), or a version header the server does not serve (400).
func headersExplain(p *Pass) bool {
	r := p.Exchange.Response
	if p.Exchange.Transport != envelope.HTTP || r == nil {
		return false
	}
	h := p.Exchange.Request.Header
	acceptWrong := acceptLacking(h)
	typeWrong := envelope.MediaType(envelope.HeaderGet(h, "Content-Type")) != "application/json"
	switch r.Status {
	case 401, 413, 414, 431:
		return true
	case 403:
		return envelope.HeaderGet(h, "Origin") != "" || scopeRefusal(r)
	case 406:
		return acceptWrong
	case 415:
		return typeWrong
	case 400:
		return acceptWrong || typeWrong || versionHeaderRefusal(p) || p.Expect.VersionHeaderAbsent(p.Exchange)
	}
	return false
}

// acceptLacking: the request's Accept is not the one a client must send,
// listing both reply types by name (T-HTTP-2): missing, narrower, or a
// wildcard; a refusal may be its (AMB-17).
func acceptLacking(h http.Header) bool {
	accept := headerValues(h, "Accept")
	return acceptance(accept, "application/json") != acceptListed || acceptance(accept, "text/event-stream") != acceptListed
}

// headersInDoubt: the request carries a header -32020 may fairly name
// though the standard ones match the body: an Accept or Content-Type the
// transport does not accept (T-HTTP-2, T-HTTP-6, AMB-17), or an
// Mcp-Param-* header no listed tool parameter names (AMB-11).
func headersInDoubt(p *Pass) bool {
	h := p.Exchange.Request.Header
	accept := headerValues(h, "Accept") // read as CLI1010 reads a client's
	if acceptance(accept, "application/json") == acceptRefused || acceptance(accept, "text/event-stream") == acceptRefused {
		return true
	}
	if envelope.MediaType(envelope.HeaderGet(h, "Content-Type")) != "application/json" {
		return true
	}
	var named []string
	if p.Expect.Method == "tools/call" {
		for _, pa := range p.Expect.Facts.Tool(p.Expect.Request.Get("params.name").Str).ParamArgs(p.Expect.Request.Get("params.arguments")) {
			named = append(named, strings.ToLower(pa.Header))
		}
	}
	for k := range h {
		if name, ok := envelope.ParamHeader(k); ok && !slices.Contains(named, strings.ToLower(name)) {
			return true
		}
	}
	return false
}

// paramBound reports whether a tools/call could be bound to Mcp-Param-*
// headers the checker cannot see without the tool's schema: it carries
// such a header, or an argument with a value. With neither, no header
// can be missing or differ (T-HDR-4: a null or absent value requires no
// header), so -32020 has nothing to mean.
func paramBound(p *Pass) bool {
	for k := range p.Exchange.Request.Header {
		if _, ok := envelope.ParamHeader(k); ok {
			return true
		}
	}
	bound := false
	p.Expect.Request.Get("params.arguments").ForEach(func(_, v gjson.Result) bool {
		bound = v.Type != gjson.Null
		return !bound
	})
	return bound
}
