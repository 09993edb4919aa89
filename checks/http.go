package checks

import (
	"bytes"
	"github.com/tidwall/gjson"
	"slices"
	"strings"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// needHTTP guards checks that judge the HTTP layer.
func needHTTP(p *Pass) (*envelope.Response, error) {
	if p.Exchange.Transport != envelope.HTTP {
		return nil, skipNoHTTP
	}
	if p.Exchange.Response == nil {
		return nil, skipNoHTTPRsp
	}
	return p.Exchange.Response, nil
}

// namesVersion: a refusal's body may be about the protocol version: it
// speaks of a version or the protocol (a JSON-RPC error's message, or
// the text a server wrote), or says nothing at all, which names no other
// cause (review rev67).
func namesVersion(body []byte) bool {
	b := bytes.ToLower(bytes.TrimSpace(body[:min(len(body), 4096)]))
	return len(b) == 0 || bytes.Contains(b, []byte("version")) || bytes.Contains(b, []byte("protocol")) || bytes.Contains(b, []byte("2025-03-26"))
}

// mediaType is the Content-Type without parameters, lowercased. It runs
// on every HTTP reply, so it avoids mime.ParseMediaType's allocations.
func mediaType(resp *envelope.Response) string {
	return envelope.MediaType(envelope.HeaderGet(resp.Header, "Content-Type"))
}

var ErrorStatusBody = &Check{
	ID:            "HTTP1001",
	Title:         "An HTTP error status carries a JSON-RPC error body",
	SpecRef:       "T-COMPAT-1, T-COMPAT-5, T-HTTP-9; contract",
	Severity:      MUST,
	Area:          AreaHTTP,
	JudgesOutcome: true,
	Doc: `Every 4xx or 5xx answer to a POSTed message carries a JSON-RPC error
as an application/json body (or an SSE stream holding one). The body is what
tells a dual-era client "modern server, fix and retry" from "legacy
server" (T-COMPAT-1), and tells a 2026-07-28 404 for an unknown method from
a wrong URL (T-HTTP-9); a text/plain or empty body tells the client
nothing. A JSON-RPC error body that lacks only its Content-Type warns
(RFC 9110 §8.3 asks senders to label content as a SHOULD; TypeScript SDK
servers before 1.25 so answer). Under --contract spec the statuses the spec ties to a
JSON-RPC body (400 and 404 in 2026-07-28, T-COMPAT-1's refusals for a
protocol reason) fail, and so does any 4xx to a request the server
read (a request object, its headers in order: T-HTTP-5 answers a POSTed
request with its response, which T-HTTP-11 lets come with any 4xx);
a 5xx, and bytes that are no request object (a body parser in front of
the MCP code may refuse them bare), warn, and so does a 2026 400 or 404 where
the spec leaves the reaction itself open (a batch, AMB-7; a posted
response), but not a 404 to a method no version defines, which says the
method is not implemented whether an extension might define it or not
(T-HTTP-9 gives it a -32601 body), except a refusal made on the headers
or the session before the body is read (406, 415, 421, a 2025 session's
400 or 404, a 400 to a body whose Content-Type is not application/json,
or to a POST without Accept or whose Accept leaves out a reply type,
AMB-17), where the spec asks for no body
(T-SESS-2, T-SESS-3); a 2026-07-28 400 for a protocol reason (an
unsupported version, mismatched headers, missing _meta) carries its
JSON-RPC error even when the header alone decided it (T-HTTP-8,
T-COMPAT-1). A status the
HTTP layer sends on its own account (a size or rate limit: 413, 414, 429,
431; authorization: 401 with its OAuth body, and the 403 for an
insufficient scope; a gateway: 502, 503, 504), and
a refusal the spec or the fixture lets come bare (a notification's or a
posted response's, whatever its status, T-HTTP-3, T-HTTP-4; a foreign Origin's 403,
T-HTTP-14; a foreign Host's 4xx, where the refusal and its status are
open, AMB-19: the Python SDK's 421, a host filter's 400; a web server's
400 for headers too large), may come before any
MCP code runs: the strict contract's wish for a JSON-RPC body there only
warns, and --contract spec asks for none. Answers to GET or DELETE are not JSON-RPC exchanges and are
not judged here.`,
	Run: func(p *Pass) error {
		resp, err := needHTTP(p)
		if err != nil {
			return err
		}
		if p.Exchange.Request.HTTPMethod() != "POST" {
			return Skip("not a POST")
		}
		if resp.Status < 400 {
			return skipNotErrStatus
		}
		// A body the spec requires breaks the rule that requires it, not
		// the fixture's (a garbage body's T-RPC-9, which has no id to
		// judge without one).
		// So does the error it left out, where one was due (a parse
		// error's -32700, T-ERR-1).
		// (Named only when there is a finding: most error replies have
		// their body.)
		report := func(path, format string, args ...any) {
			rule := "T-COMPAT-1"
			switch {
			case p.Expect.Version != envelope.V20260728:
				// (T-COMPAT-1 is 2026-07-28's: before it, a read
				// request is owed its response, T-HTTP-5.)
				rule = "T-HTTP-5"
			case resp.Status == 404:
				rule = "T-HTTP-9"
			}
			if x := p.Expect; x.Error.Level == expect.Must && (x.Condition == expect.CondParseError || x.Condition == expect.CondInvalidRequest) {
				rule += ", " + x.Error.Rule
			}
			p.Deviate(expect.Want{Level: expect.Must, Rule: rule}, path, format, args...)
		}
		why := ""
		switch {
		case httpLayer(resp.Status) || scopeRefusal(resp) || mayComeBare(p, resp.Status):
			// The HTTP layer's own statuses, and refusals the spec or
			// the fixture lets come bare, may come before any MCP code
			// runs.
			if !p.Contract.IsStrict() {
				return nil
			}
			// The spec asks for no body here: the warn is the
			// contract's alone, and breaks no rule of the spec.
			report = p.contractWarnf
			why = " (the contract prefers one; the HTTP layer, its limits, its authorization or a proxy, may answer before any MCP code runs)"
			switch {
			case httpLayer(resp.Status) || scopeRefusal(resp):
			case p.Expect.Condition == expect.CondResponsePosted && p.Expect.Version == envelope.V20260728:
				why = " (the contract prefers one; the spec leaves the reaction to a posted response open, T-HTTP-3)"
			case p.Expect.Condition == expect.CondResponsePosted:
				why = " (the contract prefers one; T-HTTP-4 lets the refusal of a posted response come without one)"
			case p.Expect.NoReply.Set():
				why = " (the contract prefers one; T-HTTP-4 lets a notification's refusal come without one)"
			}
		case p.Contract.IsStrict():
			if need, _ := specBody(p, resp.Status); need != bodyMust {
				// The spec asks for no body here, or only as a SHOULD:
				// the finding says which, for the coverage table, which
				// speaks of the spec. A person fixing the server needs
				// to know whose rule this is.
				shouldToo := need == bodyShould
				report = func(path, format string, args ...any) { p.Contractf(shouldToo, path, format, args...) }
				why = " (the strict contract's rule: every rejection carries a JSON-RPC error; the spec alone does not require one here)"
			}
		default:
			switch need, rule := specBody(p, resp.Status); need {
			case bodyNone:
				return nil
			case bodyShould:
				report, why = p.Warnf, rule
			}
		}
		mt := mediaType(resp)
		if mt != "application/json" && mt != "text/event-stream" {
			has := "has Content-Type " + Quote(envelope.HeaderGet(resp.Header, "Content-Type"), quoteN)
			if _, ok := envelope.HeaderValue(resp.Header, "Content-Type"); !ok {
				has = "has no Content-Type"
			}
			isErr := p.Reply.Response != nil && p.Reply.Response.IsObject() && p.Reply.Response.Get("error").IsObject()
			if _, labelled := envelope.HeaderValue(resp.Header, "Content-Type"); !labelled && isErr {
				// The JSON-RPC error the contract and T-COMPAT-1 ask for is
				// there; only its label is missing, which RFC 9110 §8.3
				// asks of a sender as a SHOULD.
				p.Warnf("http.header.Content-Type", "status %d has no Content-Type; the body is a JSON-RPC error, which application/json should label (RFC 9110 §8.3)", resp.Status)
				return nil
			}
			what := "want application/json with a JSON-RPC error"
			if isErr {
				// The body is one: only its label is wrong or missing, and
				// a person fixing the server needs to know which.
				what = "want application/json: the body is a JSON-RPC error"
			}
			report("http.header.Content-Type", "status %d %s, %s%s", resp.Status, has, what, why)
			return nil
		}
		r := p.Reply.Response
		if r == nil || !r.IsObject() || !r.Get("error").IsObject() {
			report("http.body", "status %d has no JSON-RPC error in its body%s", resp.Status, why)
		}
		return nil
	},
}

// What the spec alone asks of a rejection's body (see specBody).
const (
	bodyMust   = iota // T-COMPAT-1's JSON-RPC error: fails without
	bodyShould        // wanted, not required: warns without
	bodyNone          // the spec asks for none
)

// specBody is what the spec alone (--contract spec) asks of the body of
// a rejection the HTTP layer may not have sent on its own, and why when
// it only warns.
func specBody(p *Pass, status int) (need int, why string) {
	x := p.Expect
	switch {
	case x.NoReply.Set() && !protocolRefusal2026(p, status):
		return bodyNone, "" // T-HTTP-4: the refusal of a notification MAY carry a body
	case protocolRefusal2026(p, status):
		// A 2026-07-28 refusal for a protocol reason carries its
		// JSON-RPC error even when the header alone decided it: an
		// unsupported version is -32022 (T-HTTP-8, T-LIFE-9).
		return bodyMust, ""
	case refusedOnHeaders(p) || status == 421 || len(headerValues(p.Exchange.Request.Header, "Accept")) == 0 ||
		x.Condition == expect.CondUnsupportedVersion && x.Version != envelope.V20260728:
		// Refused on its headers or its session before the body is read
		// (T-SESS-2, T-SESS-3, T-HTTP-14; 421, a Host it does not serve;
		// a POST without the Accept T-HTTP-2 requires, AMB-17; a 2025
		// version header the server cannot serve, whose 400 is all
		// T-HTTP-7 fixes): the spec asks for no body there.
		return bodyNone, ""
	case !(x.Version == envelope.V20260728 && (status == 400 || status == 404)) && (status >= 500 || !requestRead(x)):
		// A 5xx without its JSON-RPC body only warns (T-HTTP-11), and
		// so do bytes that are no request object, which a body parser
		// in front of the MCP code (a framework's) may refuse bare. A
		// request it read is answered with its response (T-HTTP-5, a
		// MUST): a bare 4xx to one fails (review rev93: it warned under
		// --contract spec, and the run passed).
		return bodyShould, ""
	case status == 404 && x.Condition == expect.CondUnknownMethod:
		// Whether an extension defines the method (T-LIFE-17) or not,
		// a 404 says it is not implemented, and T-HTTP-9 gives that
		// 404 its -32601 body: a bare one reads as a legacy server's
		// (T-COMPAT-5).
		return bodyMust, ""
	case x.Error.Level == expect.Open:
		// The spec leaves the reaction itself open (a batch, AMB-7; a
		// missing Accept, AMB-17): T-COMPAT-1 ties a JSON-RPC body to a
		// refusal for a protocol reason, which this is not known to be.
		return bodyShould, " (" + x.Error.Rule + ")"
	}
	return bodyMust, ""
}

// requestRead: the request is a JSON-RPC request object a server reads
// (not bytes that fail to parse, an invalid request or a batch).
func requestRead(x *expect.Expectation) bool {
	switch {
	case x.Condition == expect.CondParseError, x.Condition == expect.CondInvalidRequest, x.Condition == expect.CondBatch:
		return false
	case x.ID.Rounded.Set(), x.AnyError, slices.Contains(x.ReadCodes, envelope.CodeParseError), slices.Contains(x.AlsoCodes, envelope.CodeParseError),
		x.Request.Get("id").Type == gjson.Number && !envelope.PlainInteger(x.Request.Get("id").Raw):
		// A body some reading lets a receiver refuse as unreadable (an
		// id beyond 2^53, a byte order mark, a key twice, an id spelled
		// 1e2 or -0: RFC 8259's latitude): its parser may refuse it
		// before any MCP code runs (reviews rev96, rev94).
		return false
	}
	return true
}

// undeclaredMethod: the facts show the method's capability undeclared.
func undeclaredMethod(x *expect.Expectation) bool {
	c := expect.CapabilityOf(x.Method)
	if c == "" {
		return false
	}
	declared, known := x.Facts.Declares(c)
	return known && !declared
}

// mayComeBare: a 4xx refusal the spec or the fixture lets come without
// a JSON-RPC body: one the fixture marks so (a foreign Origin's 403,
// T-HTTP-14; a foreign Host's refusal, whatever 4xx it comes with, as
// the refusal itself is open, AMB-19; nginx's 400 for headers too
// large), and a notification's,
// whose body MAY be a JSON-RPC error (T-HTTP-4), but for a 2026-07-28
// 400 for a protocol reason (the version, the headers, _meta), which
// T-COMPAT-1 ties to one: refusing a notification it does not know is
// no such reason.
func mayComeBare(p *Pass, status int) bool {
	x := p.Expect
	switch {
	case x.NoReply.Set():
		// T-HTTP-4's MAY of a body holds for whatever error status
		// refuses the input (a 5xx says the server failed: HTTP1002's
		// finding, not a body's).
		return !protocolRefusal2026(p, status)
	case x.Condition == expect.CondResponsePosted:
		// A posted response's refusal is a notification's (T-HTTP-3,
		// T-HTTP-4: the body MAY be an error). 2026-07-28 leaves the
		// reaction open: under --contract spec its want of a body warns
		// as for a batch, so that a dual-era client can read it
		// (T-COMPAT-1).
		return x.Version != envelope.V20260728 || p.Contract.IsStrict()
	}
	// A status other than the fixture's says the same refusal where the
	// fixture's own status is only a wish (a foreign Host's 421 or 400
	// where 403 is hoped for, AMB-19): HTTP1002 warns of the status, and
	// the body stays as optional as the fixture made it.
	return status < 500 && x.BodyOptional && (len(x.Status) == 0 || slices.Contains(x.Status, status) || x.StatusWant.Level < expect.Contract)
}

// protocolRefusal2026: a 2026-07-28 400 for a protocol reason, which
// T-COMPAT-1 ties to a JSON-RPC error a dual-era client can read.
func protocolRefusal2026(p *Pass, status int) bool {
	x := p.Expect
	if x.Version != envelope.V20260728 || status != 400 {
		return false
	}
	switch x.Condition {
	case expect.CondHeaderMismatch, expect.CondUnsupportedVersion, expect.CondMissingMeta:
		return true
	case expect.CondNotification:
		// A notification's expectation is its silence: a version it
		// names that the server does not speak is read off the request
		// here (T-LIFE-7's _meta is a request's; a notification without
		// it has no such fault).
		v := x.Request.Get(envelope.MetaPath(envelope.MetaProtocolVersion))
		hv, ok := envelope.HeaderValue(p.Exchange.Request.Header, "MCP-Protocol-Version")
		return v.Exists() && v.Str != envelope.V20260728 || ok && strings.TrimSpace(hv) != envelope.V20260728
	}
	return false
}

// httpLayer: a status the HTTP layer sends on its own account, before
// any MCP code reads the request: a limit on size (413, 414, 431: RFC
// 9110 §15.5.14-15, RFC 6585 §5) or rate (429), a missing authorization
// (401, T-AUTH-1: an OAuth body, RFC 6750), or a gateway's failure (502,
// 503, 504).
func httpLayer(status int) bool {
	switch status {
	case 401, 413, 414, 429, 431, 502, 503, 504:
		return true
	}
	return false
}

// sizeRefused: the HTTP layer refused the request for its size (413,
// 414, 431) before any MCP code read it, as no method's code or echoed
// id contradicts: whatever else the body holds was never looked at, so
// the refusal's code and status are the limit's (DESIGN:
// transport-level rejections). plausible says the request is large
// enough for a limit a server may set (sizeFloor): a limit below it is
// a guess about the server, which only warns.
func sizeRefused(p *Pass) (refused, plausible bool) {
	r := p.Exchange.Response
	if p.Exchange.Transport != envelope.HTTP || r == nil || methodLevel(p) {
		return false, false
	}
	switch r.Status {
	case 413:
		return true, len(p.Exchange.Request.Body) >= sizeFloor
	case 414, 431:
		n := 0
		for k, vs := range p.Exchange.Request.Header {
			for _, v := range vs {
				n += len(k) + len(v) + 4
			}
		}
		return true, n >= headerFloor
	}
	return false, false
}

// sizeFloor and headerFloor are the sizes below which a size limit is
// no plausible reason for a refusal: common limits (a reverse proxy's 1
// MB body, an HTTP server's 8 KB headers) are far above them.
const (
	sizeFloor   = 64 << 10
	headerFloor = 4 << 10
)

// scopeRefusal: a 403 whose challenge says the token's scope falls short
// (T-AUTH-5, RFC 6750 §3.1): the authorization layer's answer, as a
// 401's is, sent before any MCP code runs.
func scopeRefusal(resp *envelope.Response) bool {
	return resp.Status == 403 && strings.Contains(strings.ToLower(strings.Join(envelope.HeaderValues(resp.Header, "WWW-Authenticate"), ", ")), "insufficient_scope")
}

// getRefusedOnHeaders: a GET's refusal that its own headers explain: 403
// to an Origin (T-HTTP-14 lets the server refuse one it does not trust),
// 406 to an Accept that does not take text/event-stream, or a size
// limit. A 406 or 415 to a GET whose headers ask rightly explains
// nothing, and breaks T-HTTP-12.
func getRefusedOnHeaders(p *Pass, st int) bool {
	h := p.Exchange.Request.Header
	switch st {
	case 403:
		return envelope.HeaderGet(h, "Origin") != ""
	case 406:
		return acceptance(headerValues(h, "Accept"), "text/event-stream") == acceptRefused
	case 413, 414, 431:
		return true
	}
	return false
}

var StatusFits = &Check{
	ID:            "HTTP1002",
	Title:         "The HTTP status fits the condition",
	SpecRef:       "T-HTTP-4, T-HTTP-8..T-HTTP-11, T-HTTP-13, AMB-6; contract",
	Severity:      MUST,
	Area:          AreaHTTP,
	JudgesOutcome: true,
	Doc: `Rejections are 400: parse errors, invalid requests, and in 2026-07-28
header mismatches, unsupported versions and missing _meta fields (MUST in
2026-07-28: T-HTTP-8, T-HTTP-10; the strict contract's rule elsewhere,
where the spec is silent, AMB-6). In 2026-07-28 an unknown method is 404
with a JSON-RPC body (T-HTTP-9), and any -32601 may come with 404. A
2025 request without a session, to a server that issued one, refused 404
warns: a server that requires sessions SHOULD answer 400, and a client
reads 404 as the end of its session. A message with an id and no method may
be read as a posted response: in 2025-xx its 202 is that reading's status
(RPC1006 warns of the silence), in 2026-07-28 the reaction is open
(T-HTTP-3) and another status warns. A notification is 202 (T-HTTP-4), or a 4xx
when the server cannot accept it; a 2025-xx notification whose
MCP-Protocol-Version names no version, or one the server declined,
accepted with 202 warns (T-HTTP-7 refuses a request so sent with 400;
whether a notification's POST is such a request is open); no HTTP response at all within --timeout,
from a server that still answers a liveness probe, fails too. A result is
200: a status that carries no body (202, a notification's acceptance;
204; 205) or says the request failed fails, as a client drops the result;
another success status (201, 203) warns, as the spec names no status for
a request's answer (only its Content-Type).

For other method errors on a valid request the spec leaves the status open
(T-HTTP-11): 200 passes and a 4xx warns under the strict contract (which
prefers 200); an error at another success status that carries content
(201, 203) warns, as a client reads it, and one at 202, 204, 205 or a
redirect fails, as a client never sees it. Before 2026-07-28 a 404 whose code (-32601, -32602, -32002)
or echoed id shows the method was answered warns under the strict
contract even in a session, as a client takes any 404 for the end of its
session (T-SESS-3). A 400 that fits a reading the code checks allow
passes here, as ERR1002 already warns of the reading: -32700 or -32600
where ERR1002 allows that code with a warn (a message a receiver may
refuse as unreadable, such as an id beyond 2^53, RFC 8259 §6), and
-32000 for an initialize a server that keeps sessions could not read,
refused as a request outside a session (T-SESS-2).
A request refused on an unserved MCP-Protocol-Version header with a 4xx
no other header explains (a 404) warns under the strict contract
(T-HTTP-7 asks 400, after initialization; a discover probe comes before).
A 5xx for a client's mistake fails under the strict
contract: the client did wrong, not the server; -32603 with a 5xx only
warns. Under --contract spec a 5xx warns unless a MUST fixes the status
(T-HTTP-11 leaves it open, and says only that 5xx is the worse choice).
A request the HTTP layer refused for its size (413, 414, 431, with no
method's code or echoed id) passes whatever its body's condition would
fix: the body was never read. That holds for a request large enough for
a limit a server may set (64 KiB of body, 4 KiB of headers); a smaller
one so refused warns.
A session id the server never issued is refused 404 or 400; another 4xx
warns, as only an ended session's 404 is fixed (AMB-8).
Where a fixture leaves the status open, it is open among 200 and the
4xx: an error response with another 2xx or a 3xx fails everywhere. A
GET answered with a 2xx other than 200 and an event stream warns
(T-HTTP-12's MUST is the stream's Content-Type, or 405). A GET refused by
the layers before the endpoint (401, a 403 for an insufficient scope, a
limit's 413, 414, 429 or 431, a gateway's 502 to 504) passes as a POST
does, and a 404 to a GET naming a session passes where the traffic does
not show whether the server keeps sessions: it may have ended that one.`,
	Run: func(p *Pass) error {
		if x := p.Expect; p.Exchange.Transport == envelope.HTTP && p.Exchange.Response == nil && x.NoReply.Set() && x.HTTPMethod == "POST" {
			// No HTTP response at all, from a server still alive (the
			// exchange would carry the checker's failure otherwise): a
			// POSTed notification is answered 202 (T-HTTP-4).
			note := ""
			if p.Exchange.Note != "" {
				note = ": " + p.Exchange.Note
			}
			p.Deviate(x.StatusWant, "http.status", "no HTTP response to the POSTed %s, want 202%s", x.Condition, note)
			return nil
		}
		resp, err := needHTTP(p)
		if err != nil {
			return err
		}
		st, x := resp.Status, p.Expect
		path := "http.status"
		if x.Condition == expect.CondHTTPMethod {
			switch {
			case httpLayer(st) || scopeRefusal(resp):
				// Refused on its credentials before the method is looked
				// at (401, T-AUTH-1; 403 for a scope, T-AUTH-5), or by
				// the HTTP layer (a limit, a gateway), as a POST may be;
				// HTTP1004 judges the challenge.
			case getRefusedOnHeaders(p, st):
				// Refused on what its headers say (a foreign Origin's
				// 403, T-HTTP-14; an Accept without text/event-stream,
				// AMB-17): other rules fix or leave that status.
			case st == 409 && x.HTTPMethod == "GET" && !slices.Contains(x.Status, st):
				// One stream per session is a server's own limit (the TS
				// SDK's), which a request alone cannot show.
				p.Warnf(path, "GET answered 409: the server refuses another stream; T-HTTP-12 asks for a stream or 405, and a client may hold several")
			case st/100 == 2 && x.HTTPMethod == "GET" && slices.Contains(x.Status, 200) && mediaType(resp) == "text/event-stream" && p.Reply.Responses > 0 && envelope.HeaderGet(p.Exchange.Request.Header, "Last-Event-ID") == "":
				// (T-HTTP-12 binds a server that serves GET streams, 2025
				// clients': one that speaks only 2026-07-28 answers 405,
				// T-HTTP-13, which the status judges.)
				// (A GET that resumes a stream with Last-Event-ID gets the
				// earlier request's messages again, its response among them.)
				p.Failf("http.body", "the GET stream carried %d JSON-RPC response(s); it may carry only requests and notifications (T-HTTP-12)", p.Reply.Responses)
			case x.HTTPMethod == "GET" && st/100 == 2 && st != 200 && st != 204 && slices.Contains(x.Status, 200) && mediaType(resp) == "text/event-stream" && !slices.Contains(x.Status, st):
				// T-HTTP-12's MUST is the stream's Content-Type (or 405);
				// it names no status, and a GET's content comes with 200.
				p.Warnf(path, "GET answered %d with an event stream, want 200 (RFC 9110 §15.3.1); T-HTTP-12 asks only for text/event-stream or 405", st)
			case st == 400 && !slices.Contains(x.Status, st) && strings.TrimSpace(envelope.HeaderGet(p.Exchange.Request.Header, "MCP-Protocol-Version")) == envelope.V20250326 &&
				namesVersion(p.Exchange.Response.Body):
				// (Only a refusal that may be about the version, one that
				// speaks of it or says nothing: the checker sends the header
				// in every 2025-03-26 session, so any other 400 would pass
				// as this one; review rev65, rev67.)
				// The request named 2025-03-26 in a header that version
				// does not have (T-V0326-2; its SDK clients send it all
				// the same): a server of it may refuse the header where it
				// does not expect it, which breaks no rule of the version's
				// for sure (review rev64: mcp-lite).
				p.Deviate(expect.Want{Level: expect.Open, Rule: "T-V0326-2: 2025-03-26 has no MCP-Protocol-Version header"}, path,
					"%s answered 400 to MCP-Protocol-Version: 2025-03-26, a header that version does not define; want %s", x.Detail, codeList(x.Status))
			case len(x.Status) > 0 && !slices.Contains(x.Status, st) && st == 400 && strings.TrimSpace(envelope.HeaderGet(p.Exchange.Request.Header, "MCP-Protocol-Version")) == envelope.V20250326:
				// (The header may be the cause of some 400s: this one's
				// body names another.)
				p.Deviate(x.StatusWant, path, "%s answered %d, want %s (the request carried MCP-Protocol-Version: 2025-03-26, but the refusal names another cause)", x.Detail, st, codeList(x.Status))
			case len(x.Status) > 0 && !slices.Contains(x.Status, st):
				p.Deviate(x.StatusWant, path, "%s answered %d, want %s", x.Detail, st, codeList(x.Status))
			case st == 200 && x.HTTPMethod == "GET" && mediaType(resp) != "text/event-stream" && x.Version == envelope.V20260728:
				// A dual-era server may answer a GET by the 2025 rules or
				// by 2026-07-28's, whose refusal is a SHOULD: the reply
				// breaks either, a MUST of neither for sure.
				p.Warnf("http.header.Content-Type", "GET answered 200 with Content-Type %s: a 2026-07-28 GET SHOULD be refused with 405 (T-HTTP-13), and the 2025 rules a dual-era server may apply want text/event-stream (T-HTTP-12)", Quote(envelope.HeaderGet(resp.Header, "Content-Type"), quoteN))
			case st == 200 && x.HTTPMethod == "GET" && mediaType(resp) != "text/event-stream":
				p.Failf("http.header.Content-Type", "GET answered 200 with Content-Type %s, want text/event-stream (or 405)", Quote(envelope.HeaderGet(resp.Header, "Content-Type"), quoteN))
			}
			return nil
		}
		if x.NoReply.Set() {
			switch {
			case st == 202 && x.VersionRefused.Set():
				p.Deviate(x.VersionRefused, path, "status 202 for a %s whose MCP-Protocol-Version %s the server does not serve; T-HTTP-7 refuses a request so sent with 400", x.Condition, Quote(x.Quote, quoteN))
			case st == 202:
			case st >= 400 && st < 500:
			case st >= 500:
				// T-HTTP-4 asks for an HTTP error status; a 5xx is one, but
				// says the server failed rather than refused.
				p.Warnf(path, "status %d for a %s: the server failed; a refusal is a 4xx (T-HTTP-4)", st, x.Condition)
			default:
				p.Deviate(x.StatusWant, path, "status %d for a %s, want 202 (or a 4xx if it cannot be accepted)", st, x.Condition)
			}
			return nil
		}
		r := p.Reply.Response
		isErr := r != nil && r.IsObject() && r.Get("error").Exists()
		sized, plausible := sizeRefused(p)
		isResult := r != nil && r.IsObject() && r.Get("result").Exists() && !isErr
		code := 0
		if isErr {
			code = int(r.Get("error.code").Int())
		}
		// Codes whose status 2026-07-28 fixes: -32601 is 404 when the
		// method is unknown (T-HTTP-9; -32601 for an unknown tool is a
		// code choice, not an unknown method), and the MCP codes are 400.
		fixed, fixedBy := 0, ""
		// (-32601 to a request a server may read as 2025-03-26, T-HTTP-8,
		// answers it so, and 2025-03-26 fixes no status for it.)
		read0326 := code == envelope.CodeMethodNotFound && (x.Code.Rule == expect.HeaderMissing0326Rule || x.Code.Rule == expect.HeaderMissingRule)
		if isErr && x.Version == envelope.V20260728 && x.Condition != expect.CondLegacyInitialize && !read0326 {
			switch {
			case code == envelope.CodeMethodNotFound && (x.Condition == expect.CondUnknownMethod || x.Condition == expect.CondUndeclared || names404(x.Method) || undeclaredMethod(x)):
				fixed, fixedBy = 404, "T-HTTP-9"
			// The MCP codes' own statuses come before the undeclared
			// method's 404: a server that checks headers, capabilities or
			// the version before it routes refuses for that fault, which
			// the spec lets come first (AMB-4), and the code it chose
			// fixes the status (review rev30).
			case code == envelope.CodeHeaderMismatch:
				fixed, fixedBy = 400, "T-ERR-12, T-HDR-2"
			case code == envelope.CodeMissingClientCap:
				fixed, fixedBy = 400, "T-HTTP-10"
			case code == envelope.CodeUnsupportedVer:
				fixed, fixedBy = 400, "T-HTTP-8"
			case x.Condition == expect.CondUndeclared && code != envelope.CodeInternalError &&
				!slices.Contains(x.Codes, code) && !slices.Contains(x.AlsoCodes, code):
				// Refused, but not for the params (whose reading's codes
				// keep their open status) nor for a failure of its own: the
				// method of a capability the server did not declare,
				// whatever the code says (ERR1002 judges it), is T-HTTP-9's
				// 404.
				fixed, fixedBy = 404, "T-HTTP-9"
			}
		}
		switch {
		case isResult:
			switch {
			case st == 200:
			case st/100 == 2 && st != 202 && st != 204 && st != 205:
				// The spec names no status for a request's answer (T-HTTP-5
				// fixes its Content-Type); a success that carries its
				// content is 200 by RFC 9110, and a client reads another
				// as one.
				p.Deviate(expect.Want{Level: expect.Open, Rule: "RFC 9110 §15.3.1: the spec names no status for a request's answer, and a client reads any success that carries content"}, path, "status %d for a result, want 200", st)
			default:
				// 202 is a notification's acceptance, with no body (T-HTTP-4),
				// 204 and 205 carry none: clients drop the result, as they
				// drop it from a failure status.
				p.Failf(path, "status %d for a result, want 200", st)
			}
		case fixed != 0:
			// The rule that fixes the status is the one broken, not the
			// fixture's (a header the request left out on purpose, T-HDR-1,
			// binds the sender; its refusal was right but for the status).
			if st != fixed {
				// The code's rule, and the expectation's own status rule
				// where it fixes this status too (a version header's
				// T-HTTP-8).
				rule := fixedBy
				if w := x.StatusWant; w.Level == expect.Must && w.Rule != "" && slices.Contains(x.Status, fixed) {
					rule += ", " + w.Rule
				}
				p.Deviate(expect.Want{Level: expect.Must, Rule: rule}, path, "status %d for error %d, want %d (2026-07-28 fixes it)", st, code, fixed)
			}
		case isErr && st/100 == 2 && st != 200 && st != 202 && st != 204 && st != 205:
			// T-HTTP-11 names no status for such an error, and a client
			// reads any success that carries content, as for a result
			// (review rev56: a 201 failed where a 500 only warned).
			p.Deviate(expect.Want{Level: expect.Open, Rule: "RFC 9110 §15.3.1: the spec names no status for this error (T-HTTP-11), and a client reads any success that carries content"}, path, "status %d for an error response, want 200 or a 4xx", st)
		case isErr && st != 200 && st < 400:
			// 202 is a notification's acceptance, with no body (T-HTTP-4),
			// 204 and 205 carry none, and a redirect's body is not read:
			// the client never sees the error.
			p.Failf(path, "status %d for an error response, want 200 or a 4xx", st)
		case isErr && code == envelope.CodeUnsupportedVer && st == 400 && versionRefused(p):
			// A version the server does not serve is refused with 400 in
			// any version (T-HTTP-10; a 2025 version header's, T-HTTP-7),
			// a legacy initialize to a server of 2026-07-28 alone too.
		case isErr && st == 400 && versionHeaderUnserved(p):
			// A version header the server need not serve, refused with
			// the 400 T-HTTP-7 asks (review rev71).
		case isErr && slices.Contains(x.ReadCodes, code) && slices.Contains(x.ReadStatus, st):
			// Right under the reading of the request the code names
			// (params that are no object read as invalid params: a
			// method error's 200).
		case isErr && sized && plausible:
			// The limit's status, whatever the body holds.
		case isErr && sized && (len(x.Status) > 0 && !slices.Contains(x.Status, st)):
			p.Warnf(path, "status %d for %s, a request of %d bytes, which no common size limit refuses; want %s", st, x.Cause(), len(p.Exchange.Request.Body), codeList(x.Status))
		case r == nil && st == 202 && slices.Contains(x.ReadStatus, st):
			// A reading under which the message is no request (a message
			// without method, read as a response) owes nothing but the
			// 202 (T-HTTP-4); RPC1006 warns of the silence once.
		case isErr && st < 500 && x.Condition == expect.CondParseError && x.StatusWant.Level == expect.Open &&
			(!slices.Contains(x.Codes, code) || !p.Contract.IsStrict()):
			// A body whose refusal was open (invalid UTF-8, nesting past a
			// receiver's limit): refused as unreadable, its status is the
			// strict contract's 400 alone, as for any unreadable body (the
			// spec leaves it open, AMB-6); read leniently and answered
			// with another code (ERR1002 warns of the reading), it has
			// that answer's status, a method error's 200 or a 4xx.
		case len(x.Status) > 0 && x.StatusWant.Set():
			want := x.Status[0]
			switch {
			case slices.Contains(x.Status, st):
			case st >= 500:
				p.serverFailedStatus(x.StatusWant.Level == expect.Must, path, "status %d for %s: a client's mistake, want %d", st, x.Cause(), want)
			case x.StatusWant.Level == expect.Contract && st >= 400 && st < 500:
				// The strict contract prefers 400; the spec fixes no status
				// (AMB-6), and any 4xx still says "rejected".
				p.contractWarnf(path, "status %d for %s, the contract wants %d", st, x.Condition, want)
			case x.StatusWant.Level == expect.Contract:
				// A person fixing the server needs to know it is the
				// contract's rule, not the spec's.
				p.Deviate(x.StatusWant, path, "status %d for %s, the contract wants %s (the spec leaves the status open, AMB-6)", st, x.Condition, codeList(x.Status))
			default:
				p.Deviate(x.StatusWant, path, "status %d for %s, want %s", st, x.Cause(), codeList(x.Status))
			}
		case isErr && slices.Contains(x.ReadStatus, st):
			// Right under one reading of the request.
		case isErr && st == 400 && (code == envelope.CodeParseError || code == envelope.CodeInvalidRequest) && slices.Contains(x.AlsoCodes, code):
			// A defensible reading refuses the message as unreadable or
			// invalid (an id beyond 2^53, RFC 8259 §6; initialize params
			// it cannot use; any reading ERR1002 allows with a warn), and
			// such a refusal's status is 400; ERR1002 warns of it once.
		case isErr && initSessionRefusal(p):
			// Refused as a request outside a session: T-SESS-2's 400;
			// ERR1002 warns of the reading once.
		case isErr && st == 404 && methodLevel(p) &&
			x.Version != envelope.V20260728 && envelope.HeaderGet(p.Exchange.Request.Header, "Mcp-Session-Id") != "":
			// The code or the echoed id says the method was answered, not
			// the session refused; a 2025 client takes a 404 for the end
			// of its session all the same and starts a new one (T-SESS-3).
			p.contractWarnf(path, "status 404 for error %d: a 2025 client reads 404 as the end of its session (T-SESS-3); the spec leaves a method error's status open (T-HTTP-11), the contract prefers 200", code)
		case isErr && st != 400 && st/100 == 4 && st != 429 && !headerStatus(st) && versionHeaderRefusal(p):
			// Refused on the version header, as the lost id shows, with
			// a 4xx no other header explains, where such a refusal takes
			// 400 (T-HTTP-7). That rule binds after initialization, and
			// a discover probe comes before it: only the strict
			// contract's warn.
			p.contractWarnf(path, "status %d for a request refused on its MCP-Protocol-Version header: an unsupported version gets 400 (T-HTTP-7)", st)
		case isErr && st == 404 && sessionless(p):
			// Refused for want of a session it requires, at the status
			// a 2025 client reads as the end of its session (T-SESS-3).
			p.Deviate(expect.Want{Level: expect.Should, Rule: "T-SESS-2"}, path, "status 404 for a request without a session, want 400")
		case isErr && refusedOnHeaders(p) && st < 500:
			// A refusal on the request's headers (credentials, Origin,
			// Accept): its status is the transport's to choose.
		case isErr && st == 404 && code == envelope.CodeMethodNotFound && x.Version == envelope.V20260728:
			// Where the code does not fix the status (a method of a
			// capability the server declared, a tool it does not list),
			// -32601 still says the method was not found, and 404 is
			// T-HTTP-9's status for that: never a worse choice than 200
			// (ERR1002 judges the code).
		case isErr && x.AnyStatus:
			if st >= 500 && code != envelope.CodeInternalError {
				p.serverFailedStatus(false, path, "status %d for error %d, a client's mistake: want a 4xx", st, code)
			}
		case isErr:
			switch {
			case st == 200:
			case st >= 500 && code == envelope.CodeInternalError:
				p.Warnf(path, "status %d with -32603: the spec leaves the status open (T-HTTP-11)", st)
			case st >= 500:
				p.serverFailedStatus(false, path, "status %d for error %d, a client's mistake: want 200 or a 4xx", st, code)
			case st >= 400:
				on := "on a valid request"
				if x.Condition != expect.CondCall && x.Condition != "" {
					// (Malformed or invalid params are still a method's
					// error; review rev76: an invalid logLevel was called
					// a valid request.)
					on = "for " + x.Cause()
				}
				p.contractWarnf(path, "status %d for error %d %s: the spec leaves it open (T-HTTP-11), the contract prefers 200", st, code, on)
			}
		}
		return nil
	},
}

var WellFormedHTTP = &Check{
	ID:             "HTTP1006",
	Title:          "A reply is a well-formed HTTP/1.1 message",
	SpecRef:        "RFC 9112 §4, §5, §6.3, §7.1; RFC 9110 §2.2, §5.5, §8.6",
	Severity:       MUST,
	Area:           AreaHTTP,
	JudgesFailures: true,
	Doc: `The reply's start line and header section keep HTTP/1.1's syntax, which
a sender MUST generate (RFC 9110 §2.2): a three-digit status, each header
line a name, a colon and a value without control characters (RFC 9110
§5.5), at most one Content-Length, and that a number (RFC 9110 §8.6; two
that differ make the framing invalid, RFC 9112 §6.3); a chunked body's
chunks each a hex size and a CRLF-ended line, their data as long as the
size says (RFC 9112 §7.1). A reply that breaks them before its response
is no message any client can read, so nothing else of it is judged,
whether check or the relay saw it (a JSON body counts to its last chunk;
an event stream to the event that carries the response, which a client
has dispatched by then), and the server is failed here, not the
checker's run called unable to judge. What RFC 9112 leaves to a
recipient's reading (a bare LF as line end, a repeated Content-Length
with the same value) and the checker's own
limits (a header section past its bound, a chunk line or size past
net/http's: "could not judge") are not findings here, nor is a body the
server cut short.`,
	Run: func(p *Pass) error {
		ex := p.Exchange
		switch {
		case ex.Transport != envelope.HTTP:
			return Skip("not HTTP")
		case ex.Malformed != "":
			p.Failf("http", "the reply is no HTTP/1.1 message a client can read: %s", ex.Malformed)
		case ex.Response == nil || ex.Failure != "" || ex.Died != "" || ex.NotSent:
			return Skip("no reply was read")
		}
		return nil
	},
}

var ReplyContentType = &Check{
	ID:       "HTTP1003",
	Title:    "A reply is application/json or text/event-stream",
	SpecRef:  "T-HTTP-5",
	Severity: MUST,
	Area:     AreaHTTP,
	Doc: `A POSTed request is answered either with Content-Type
application/json holding one JSON object, or with text/event-stream (an SSE
stream). Any other type (text/plain, text/html, none) is a breach, also on
2xx answers, and so are two Content-Type field lines with different media
types (the field is single-valued, RFC 9110 §5.3, and clients read
either; lines that differ only in case or a charset name one type).`,
	Run: func(p *Pass) error {
		resp, err := needHTTP(p)
		if err != nil {
			return err
		}
		if p.Exchange.Request.HTTPMethod() != "POST" || p.Expect.NoReply.Set() {
			return Skip("not a POSTed request")
		}
		if resp.Status >= 400 {
			return Skip("error statuses are judged by HTTP1001")
		}
		if len(resp.Body) == 0 && resp.Messages == nil {
			// No message came, whatever the type says: silence, judged
			// once (RPC1006, DESIGN).
			return Skip("an empty body: no response arrived (see RPC1006)")
		}
		if envelope.HeaderVaries(resp.Header, "Content-Type") {
			cts := envelope.HeaderDistinct(resp.Header, "Content-Type")
			// A single-valued field sent with two values (RFC 9110 §5.3):
			// clients differ on which they read, so none is sure, unless
			// every one names the same media type (its case and a JSON
			// charset change nothing, RFC 9110 §8.3.1, RFC 8259 §11).
			types := map[string]bool{}
			for _, ct := range cts {
				types[envelope.MediaType(ct)] = true
			}
			if len(types) > 1 {
				p.Failf("http.header.Content-Type", "Content-Type is sent %d times with different media types (%s); it is single-valued, and clients may read either", len(cts), Quote(strings.Join(cts, " | "), quoteN))
				return nil
			}
		}
		switch mt := mediaType(resp); mt {
		case "application/json", "text/event-stream":
		default:
			p.Failf("http.header.Content-Type", "Content-Type is %s, want application/json or text/event-stream", Quote(envelope.HeaderGet(resp.Header, "Content-Type"), quoteN))
		}
		return nil
	},
}

// names404 reports whether -32601 to method can only say the method is
// not implemented: it names nothing else that could be missing (a tool,
// a prompt, a resource, a task), so a server that answers it -32601
// itself says T-HTTP-9's 404 applies.
func names404(method string) bool {
	switch method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list",
		"logging/setLevel", "server/discover", "subscriptions/listen", "tasks/list":
		return true
	}
	return false
}

// contractWarnf reports what the strict contract only warns of and the
// spec does not ask: nothing under --contract spec, and under the strict
// contract a warn naming ContractRule, which the coverage table counts
// against no rule of the spec (its message may cite the rule that leaves
// the point open).
func (p *Pass) contractWarnf(path, format string, args ...any) {
	if p.Contract.IsStrict() {
		p.Deviate(expect.Want{Level: expect.Should, Rule: ContractRule}, path, format, args...)
	}
}

// serverFailedStatus reports a 5xx given for a client's mistake: the
// contract's clause, and a MUST's when fixed names the status; under
// --contract spec, with no MUST fixing it, the spec leaves the status
// open (T-HTTP-11) and it warns.
func (p *Pass) serverFailedStatus(fixed bool, path, format string, args ...any) {
	if fixed {
		// The status want's own rule is the one broken.
		p.Deviate(expect.Want{Level: expect.Must, Rule: p.Expect.StatusWant.Rule}, path, format, args...)
		return
	}
	if p.Contract.IsStrict() {
		p.contractOr(expect.Want{Level: expect.Should, Rule: "T-HTTP-11"}, path, format, args...)
		return
	}
	p.Warnf(path, format+" (T-HTTP-11 leaves the status open)", args...)
}
