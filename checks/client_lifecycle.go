package checks

import (
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

var ClientLifecycle = &Check{
	ID:       "CLI1005",
	Title:    "A 2025 client initializes before anything else",
	SpecRef:  "T-LIFE-1, T-LIFE-3, T-LIFE-6",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `In 2025-06-18 and 2025-11-25 the initialize request is the first exchange
of a session (T-LIFE-1): a request or notification before it fails. Until
the server has answered initialize the client sends only pings (a SHOULD
NOT), and once it has, the client sends notifications/initialized before
normal operation; a request before that warns, as the spec states the order
but puts no MUST on it (T-LIFE-1, T-LIFE-3); notifications/initialized sent
with an id is no notification (CLI1011 fails it), so requests after it
still warn. ping is allowed at any time.
Over Streamable HTTP the relay may have started after a session began: a
request naming a session it never saw issued is not judged, and the first
request of sessionless traffic that is not initialize only warns, once
(T-LIFE-6: it may have come before the relay). On stdio, wrap starts the
server and sees the whole session. A client never cancels its initialize
request (2025 cancellation: initialize MUST NOT be cancelled by clients).
A second initialize in a session warns; over HTTP, one that still carries
the old session's id and is answered with a new session id begins that
session, which is judged from its start (one sent after the server
answered 404 on that session is CLI1007's, which fails it). 2026-07-28 has no handshake.`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		if cp.kind != kindRequest && cp.kind != kindNotification {
			return Skip("not a request or notification")
		}
		if !cp.legacy() {
			return skipModern
		}
		c := cp.view.c
		switch {
		case c.lost:
			return skipLost
		case cp.method == "ping":
			return nil
		case cp.method == "notifications/cancelled" && c.initKey != "" && envelope.IDKey(cp.msg.Get("params.requestId")) == c.initKey && !c.initDone:
			// 2025-xx cancellation: the initialize request MUST NOT be
			// cancelled by clients (the SDKs' request timeout does).
			p.Failf("message.params.requestId", "the client cancelled its initialize request, which a client must not (2025 cancellation: initialize is never cancelled)")
			return nil
		case (c.sessionID != "" && !c.fromStart) || cp.view.unknownSession:
			return Skip("the relay did not see this session begin")
		case c.detached:
			return Skip("it lacks the session id (see CLI1007): which session it belongs to is unknown")
		}
		if cp.method == "initialize" && cp.kind == kindRequest {
			if cp.view.carriesGoneSession() {
				return nil // after a 404 on that session: CLI1007 fails it
			}
			if c.initSeq != 0 && c.sessionID != "" && cp.view.headerSession == c.sessionID {
				// (The server may answer it with a new session: then that
				// session begins here, and is judged as one.)
				p.Warnf("method", "a second initialize carrying the id of session %s (the first was %s); initialize is the first exchange of a session, and a new one begins without the old id (T-LIFE-1)", Quote(c.sessionID, quoteN), seqText(c.initSeq))
				return nil
			}
			if c.initSeq != 0 {
				p.Warnf("method", "a second initialize in the same session (the first was %s); initialize is the first exchange of a session (T-LIFE-1)", seqText(c.initSeq))
			}
			return nil
		}
		what := Quote(cp.method, quoteN)
		switch {
		case c.initSeq == 0 && c.initFailed != 0:
			// The handshake came first and failed: the order is kept,
			// the session is not initialized.
			p.Warnf("method", "%s after the server refused initialize (%s) or left it unanswered: nothing was negotiated, so the session is not initialized (T-LIFE-1)", what, seqText(c.initFailed))
		case c.initSeq == 0 && c.fromStart:
			p.Failf("method", "%s before initialize: the initialize request is the first exchange of a session (T-LIFE-1)", what)
		case c.initSeq == 0 && c.msgs == 0:
			p.Warnf("method", "the first message the relay saw is %s, not initialize: the client skipped initialize (T-LIFE-1), or initialized before the relay started (T-LIFE-6)", what)
		case c.initSeq == 0:
			return Skip("the relay did not see this traffic begin")
		case !c.initDone && cp.kind == kindRequest:
			p.Warnf("method", "%s before the server answered initialize: until then a client sends only pings (T-LIFE-1)", what)
		case !c.initDone && cp.method == "notifications/initialized":
			p.Warnf("method", "notifications/initialized before the server answered initialize; it follows a successful initialize (T-LIFE-1)")
		case !c.notified && cp.kind == kindRequest && isNotification(cp.method):
			// A notification method sent with an id (notifications/initialized
			// as a request): CLI1011 fails it, and it is no notification.
			return Skipf("%s is sent as a request (with an id), which CLI1011 judges", what)
		case !c.notified && cp.kind == kindRequest && c.stateless && cp.view.sessionlessInits > 1 && cp.view.sessionlessNotified:
			// Another client without a session may have sent it: the
			// relay cannot tell them apart.
		case !c.notified && cp.kind == kindRequest:
			p.Warnf("method", "%s before notifications/initialized, which the client sends once initialize succeeds, before normal operation (T-LIFE-1, T-LIFE-3)", what)
		}
		return nil
	},
}

var ClientVersionHeader = &Check{
	ID:       "CLI1006",
	Title:    "A 2025 HTTP client sends the negotiated version header",
	SpecRef:  "T-HTTP-7, T-V0326-2",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `Over Streamable HTTP in 2025-06-18 and 2025-11-25, every HTTP request
after initialization (POST, GET and DELETE, notifications/initialized
included) carries MCP-Protocol-Version with the version the initialize
answer negotiated (T-HTTP-7). A missing value, or one that names no MCP
version, fails; another MCP version than the negotiated one warns: the
transports text makes the header a MUST and its being the negotiated
version a SHOULD (the digest's line condenses the two). A
request in a session the relay did not see begin must still carry the
header (its session id shows initialization is over), with a value that
names an MCP version; which one is not judged. A session that negotiated
2025-03-26, before the header existed, is not judged (T-V0326-2). On an
initialize the header is not regulated; one naming another version than
the body asks for (a dual-era client's 2026-07-28) warns, as a server may
route the request by it. An OPTIONS (a browser's CORS preflight, which
may carry no custom header) or a HEAD is no MCP request: no client check
judges it.`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		if cp.in.Message.Transport != envelope.HTTP {
			return skipNotHTTP
		}
		if !cp.legacy() {
			return Skip("2026-07-28's version header is CLI1009's")
		}
		c := cp.view.c
		hv, present := envelope.HeaderJoined(cp.in.Message.Header, "Mcp-Protocol-Version")
		const path = "http.header.mcp-protocol-version"
		switch {
		case cp.method == "initialize" && cp.kind == kindRequest:
			// Before negotiation the header is not regulated (T-HTTP-7
			// binds requests after initialization), but a server may
			// read one naming another version than the body asks (a
			// dual-era client's 2026-07-28, kept from its probe) as the
			// request's, and refuse it.
			if asked := cp.msg.Get("params.protocolVersion"); present && asked.Type == gjson.String && hv != asked.Str {
				p.Warnf(path, "MCP-Protocol-Version is %s on an initialize that asks for %s; the header is not required before negotiation, but a server may read it as the request's version and refuse it (T-HTTP-7)", Quote(hv, quoteN), Quote(asked.Str, quoteN))
				return nil
			}
			return Skip("initialize negotiates the version")
		case c.initDone && !envelope.KnownVersion(c.version):
			return Skipf("the session negotiated %s, which predates the header (T-V0326-2)", Quote(c.version, quoteN))
		case c.initDone && !present:
			p.Failf(path, "MCP-Protocol-Version is missing; after initialization every request carries the negotiated version %s (T-HTTP-7)", Quote(c.version, quoteN))
		case c.initDone && hv != c.version && !envelope.KnownVersion(hv) && !envelope.HistoricVersion(hv):
			p.Failf(path, "MCP-Protocol-Version is %s, which names no MCP version; the session negotiated %s (T-HTTP-7)", Quote(hv, quoteN), Quote(c.version, quoteN))
		case c.initDone && hv != c.version && c.stateless && slices.Contains(cp.view.sessionlessVersions, hv):
			// Another client without a session negotiated hv, and the
			// relay cannot tell the two apart.
			p.Warnf(path, "MCP-Protocol-Version is %s where the last sessionless initialize negotiated %s; another client without a session negotiated %s, and the relay cannot tell them apart (T-HTTP-7)", Quote(hv, quoteN), Quote(c.version, quoteN), Quote(hv, quoteN))
		case c.initDone && hv != c.version:
			// The header is a MUST; that it names the negotiated version
			// is a SHOULD in the transports text the digest condenses.
			p.Warnf(path, "MCP-Protocol-Version is %s, but the session negotiated %s; the version sent SHOULD be the negotiated one, and a server that does not serve %s refuses it with 400 (T-HTTP-7)", Quote(hv, quoteN), Quote(c.version, quoteN), Quote(hv, quoteN))
		case c.initDone:
		case cp.view.unknownSession || (c.sessionID != "" && !c.fromStart):
			switch {
			case !present:
				p.Failf(path, "MCP-Protocol-Version is missing; the request names session %s, so initialization is over (T-HTTP-7)", Quote(cp.view.headerSession, quoteN))
			case !envelope.KnownVersion(hv) && !envelope.HistoricVersion(hv):
				p.Failf(path, "MCP-Protocol-Version is %s, which names no MCP version (T-HTTP-7)", Quote(hv, quoteN))
			}
		default:
			return Skip("before initialization")
		}
		return nil
	},
}

var ClientSessionHeader = &Check{
	ID:       "CLI1007",
	Title:    "A 2025 HTTP client sends the session id it was issued",
	SpecRef:  "T-SESS-1, T-SESS-2, T-SESS-3",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `When the server issues an Mcp-Session-Id with its initialize answer
(T-SESS-1), a client using Streamable HTTP includes it on all of its later
HTTP requests (the transport's Session Management, item 2: a MUST on the
client, whose server side is T-SESS-2). A request other than initialize
without it fails, unless the server also answered an initialize without a
session id (the request may belong to that sessionless one). A session id
the relay never saw issued is not judged (it started mid-session); one the
client itself ended with a DELETE warns, as the server may only answer 404
(T-SESS-3). Once the server answered 404 to a POST carrying the
session's id, the session is gone (not when the 404 answers the request
itself, a result or an error only its method gives, such as -32601 so
mapped; nor a GET's 404, which says the server offers no stream there) and the client MUST start a new one with
an initialize without a session id (transports, Session Management): an
initialize that still carries the dead id fails; another request carrying
it warns, as it may have been sent before the client read the 404. While
a new session's initialize awaits its answer (a
re-initialize after a 404, a second client) that session has no id yet: a
ping or an answer to the server without a session id then is not judged
(but an answer to a request the server sent in a session it issued is
that session's, whose client left out its id: it fails),
and another message without one warns, as it may be the new session's
(CLI1005 judges its order) or another session's that lacks its id. An
OPTIONS (a browser's CORS preflight, which may carry no custom header) or
a HEAD is no MCP request and is not judged. 2026-07-28 has no sessions.`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		if cp.in.Message.Transport != envelope.HTTP {
			return skipNotHTTP
		}
		if !cp.legacy() {
			return skipModern
		}
		const path = "http.header.mcp-session-id"
		v := cp.view
		if cp.method == "initialize" && cp.kind == kindRequest {
			if v.carriesGoneSession() {
				p.Failf(path, "the initialize carries Mcp-Session-Id %s, though the server answered %s in that session with 404; after a 404 the client starts a new session with an initialize without a session id (transports, Session Management; T-SESS-3)", Quote(v.headerSession, quoteN), seqText(v.c.gone))
			}
			return nil // a new session begins
		}
		if all := envelope.HeaderValues(cp.in.Message.Header, "Mcp-Session-Id"); len(all) > 1 {
			// Two field lines are one list (RFC 9110 §5.3): no session id.
			joined, _ := envelope.HeaderJoined(cp.in.Message.Header, "Mcp-Session-Id")
			p.Failf(path, "Mcp-Session-Id is sent %d times (%s); a request carries the one id its session was issued (T-SESS-2)", len(all), Quote(joined, quoteN))
			return nil
		}
		if sid := v.headerSession; sid != "" {
			switch {
			case v.unknownSession:
				return Skipf("the relay did not see the server issue session %s", Quote(sid, quoteN))
			case v.c.ended != 0:
				p.Warnf(path, "the client ended session %s with DELETE (%s) and still uses it; it starts a new session with initialize instead (T-SESS-3)", Quote(sid, quoteN), seqText(v.c.ended))
			case v.c.gone != 0:
				// Sent after the relay saw the 404, but perhaps before
				// the client read it (requests run concurrently).
				p.Warnf(path, "the server answered %s in session %s with 404, so the session is gone, and the client starts a new one with initialize instead (transports, Session Management; T-SESS-3); the request may have been sent before the client read the 404", seqText(v.c.gone), Quote(sid, quoteN))
			}
			return nil
		}
		switch {
		case len(v.issued) == 0:
			return Skip("the server issued no session id")
		case v.sessionless:
			return Skip("an initialize was also answered without a session id: the request may belong to that session")
		case v.handshake && (cp.kind == kindResponse || cp.kind == kindRequest && cp.method == "ping"):
			// A new session's handshake is under way (a re-initialize
			// after a 404, another client): until its answer it has no
			// id to send, and a ping, or an answer to the server's
			// request, is what a handshake allows (T-LIFE-1).
			return Skip("a ping or an answer while a new session's initialize awaits its answer: that session has no id yet")
		case v.handshake:
			p.Warnf(path, "Mcp-Session-Id is missing while an initialize (%s) awaits its answer: the message may be that new session's, which has no id yet (CLI1005 judges its order), or one of %s's, which lacks its id (T-SESS-2)", seqText(v.c.initSeq), sessionList(quoteAll(v.issued)))
			return nil
		}
		p.Failf(path, "Mcp-Session-Id is missing; the server issued %s, which the client sends on every later request (T-SESS-1, T-SESS-2)", sessionList(quoteAll(v.issued)))
		return nil
	},
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Quote(s, quoteN)
	}
	return out
}

var ClientStandardHeaders = &Check{
	ID:       "CLI1008",
	Title:    "A 2026 HTTP client's standard headers match the body",
	SpecRef:  "T-HDR-1, T-HDR-2, T-HDR-3, T-HDR-4, T-HDR-5, T-HTTP-19, AMB-5, AMB-10",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `In 2026-07-28 every request POST carries Mcp-Method equal to the body's
method, and tools/call and prompts/get carry Mcp-Name equal to params.name,
resources/read equal to params.uri (T-HDR-1). Header names are compared
case-insensitively, values case-sensitively (T-HTTP-19). A value that is not
plain header-safe ASCII (non-ASCII, control characters, leading or trailing
space, or a literal that looks like the sentinel) is sent Base64-encoded as
=?base64?…?= (T-HDR-3): sent plain it fails, and an encoded value must
decode to the body's. Parameters a listed tool marks with x-mcp-header go as
Mcp-Param-Name headers, strings as they are, integers in decimal (another
spelling of the same number warns: servers compare numerically, T-HDR-5),
booleans as true or false (T-HDR-4), whenever the
argument is present and not null. A Base64 payload only the URL-safe
alphabet decodes warns (AMB-10: no alphabet is named). Header rules for
notification POSTs are undefined (AMB-5): a notification is judged only for
a header that contradicts its body, and that warns.`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		if cp.in.Message.Transport != envelope.HTTP {
			return skipNotHTTP
		}
		if cp.kind != kindRequest && cp.kind != kindNotification {
			return Skip("not a request or notification")
		}
		if cp.version != envelope.V20260728 {
			return skipLegacy
		}
		h := cp.in.Message.Header
		mm, ok := envelope.HeaderJoined(h, "Mcp-Method")
		if cp.kind == kindNotification {
			if ok && mm != cp.method {
				p.Warnf("http.header.mcp-method", "Mcp-Method is %s, the body's method is %s (AMB-5: header rules for notification POSTs are undefined)", Quote(mm, quoteN), Quote(cp.method, quoteN))
			}
			return nil
		}
		switch {
		case !ok:
			p.Failf("http.header.mcp-method", "Mcp-Method is missing; every 2026-07-28 request POST names its method (T-HDR-1)")
		case mm != cp.method:
			p.Failf("http.header.mcp-method", "Mcp-Method is %s, the body's method is %s; values are case-sensitive (T-HDR-1, T-HTTP-19)", Quote(mm, quoteN), Quote(cp.method, quoteN))
		}
		if field := envelope.NameField(cp.method); field != "" {
			if v := cp.msg.Get("params." + field); v.Type == gjson.String {
				headerMirrors(p, h, "Mcp-Name", "params."+field, v.Str)
			}
		}
		if cp.method == "tools/call" {
			paramHeaders(p, cp)
		}
		return nil
	},
}

// headerMirrors judges a header that carries a body value, encoded with
// the Base64 sentinel where the value needs it (T-HDR-3).
func headerMirrors(p *Pass, h http.Header, name, bodyPath, want string) {
	path := "http.header." + strings.ToLower(name)
	hv, ok := envelope.HeaderJoined(h, name)
	if !ok {
		p.Failf(path, "%s is missing; it mirrors %s (T-HDR-1, T-HDR-4)", name, bodyPath)
		return
	}
	if hv == want && envelope.SentinelShaped(want) {
		// A value that itself looks like the sentinel goes encoded, or
		// a server decodes it (T-HDR-3): its Base64 reading is beside
		// the point.
		p.Failf(path, "%s is sent plain, but %s %s looks like the Base64 sentinel: it goes as =?base64?…?= (T-HDR-3)", name, bodyPath, Quote(want, quoteN))
		return
	}
	if envelope.SentinelShaped(hv) && len(hv) >= len(envelope.Base64Marker+"?=") {
		got, ok := envelope.DecodeHeaderValue(hv, envelope.Base64Reading{})
		if !ok {
			if got, ok = envelope.DecodeHeaderValue(hv, envelope.Base64Reading{URLSafe: true}); !ok {
				p.Failf(path, "%s's Base64 payload does not decode (T-HDR-3)", name)
				return
			}
			p.Warnf(path, "%s is Base64 in the URL-safe alphabet; the spec names none and its examples use the standard one (AMB-10)", name)
		} else if envelope.Unpadded(hv) {
			p.Warnf(path, "%s is Base64 without its padding; the spec names none and its examples pad, so a server may refuse it (AMB-10)", name)
		}
		if got != want {
			p.Failf(path, "%s decodes to %s, but %s is %s (T-HDR-2, T-HDR-3)", name, Quote(got, quoteN), bodyPath, Quote(want, quoteN))
		}
		return
	}
	switch {
	case envelope.EncodeHeaderValue(want) != want:
		p.Failf(path, "%s is sent plain, but %s %s is not plain header-safe ASCII: it goes as =?base64?…?= (T-HDR-3)", name, bodyPath, Quote(want, quoteN))
	case !envelope.ValidHeaderValue(hv):
		p.Failf(path, "%s holds characters a header cannot carry plain (T-HDR-3)", name)
	case hv != want:
		p.Failf(path, "%s is %s, but %s is %s (T-HDR-1, T-HDR-4)", name, Quote(hv, quoteN), bodyPath, Quote(want, quoteN))
	}
}

// paramHeaders judges the Mcp-Param-* headers a listed tool's
// x-mcp-header properties ask for (T-HDR-4).
func paramHeaders(p *Pass, cp *clientPass) {
	for _, pa := range cp.in.Facts.Tool(cp.msg.Get("params.name").Str).ParamArgs(cp.msg.Get("params.arguments")) {
		v, bodyPath := pa.Value, "params.arguments."+strings.Join(pa.Path, ".")
		name := "Mcp-Param-" + pa.Header
		switch v.Type {
		case gjson.String:
			headerMirrors(p, cp.in.Message.Header, name, bodyPath, v.Str)
		case gjson.True, gjson.False:
			headerMirrors(p, cp.in.Message.Header, name, bodyPath, v.Raw)
		case gjson.Number:
			path := "http.header." + strings.ToLower(name)
			hv, ok := envelope.HeaderJoined(cp.in.Message.Header, name)
			switch {
			case !ok:
				p.Failf(path, "%s is missing; it mirrors %s (T-HDR-4)", name, bodyPath)
			case !sameNumber(hv, v.Raw):
				p.Failf(path, "%s is %s, but %s is %s (T-HDR-4, T-HDR-5)", name, Quote(hv, quoteN), bodyPath, idText(v.Raw))
			case decimalText(v.Raw) != "" && strings.TrimSpace(hv) != decimalText(v.Raw):
				// The same number in another spelling (42.0, 4.2e1): a
				// server compares numerically (T-HDR-5, a SHOULD), but an
				// integer goes as its decimal text.
				p.Deviate(expect.Want{Level: expect.Should, Rule: "T-HDR-4: an integer goes as its decimal text, though servers are asked to compare numbers by value"}, path, "%s is %s, the same number as %s %s in another spelling", name, Quote(hv, quoteN), bodyPath, v.Raw)
			}
		}
	}
}

// decimalText is an integral JSON number written as decimal text (42 for
// 42.0 or 4.2e1), "" for a number that is no integer.
func decimalText(raw string) string {
	f, _, err := big.ParseFloat(raw, 10, 2048, big.ToNearestEven)
	if err != nil || f.MantExp(nil) > 1024 {
		return "" // (1e999999999 is no header's integer, nor a buffer's)
	}
	i, acc := f.Int(nil)
	if acc != big.Exact {
		return ""
	}
	return i.String()
}

// plainNumber is a JSON number without its sign and leading zeros.
var plainNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// sameNumber compares a header's decimal text with a JSON number by
// value (T-HDR-5: 42 and 42.0 match, and so do 02 and +2, which every
// integer reader takes for 2 though JSON spells neither; review rev23).
// Only the whole text is a number: "+-2" or "2,3" is no spelling of one,
// though a lenient reader takes the number it starts with (review rev24).
func sameNumber(header, raw string) bool {
	h := strings.TrimSpace(header)
	sign := ""
	switch {
	case strings.HasPrefix(h, "+"):
		h = h[1:]
	case strings.HasPrefix(h, "-"):
		sign, h = "-", h[1:]
	}
	if d := strings.TrimLeft(h, "0"); d != h {
		if d == "" || d[0] < '0' || d[0] > '9' {
			d = "0" + d // 0, 0.5, 0e1
		}
		h = d
	}
	if !plainNumber.MatchString(h) {
		return false
	}
	return envelope.SameID(gjson.Parse(sign+h), gjson.Parse(raw))
}

var ClientModernMeta = &Check{
	ID:       "CLI1009",
	Title:    "A 2026 client request carries its version and capabilities",
	SpecRef:  "T-LIFE-7, T-HTTP-8, AMB-5",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `In 2026-07-28 there is no handshake: every request carries, in
params._meta, io.modelcontextprotocol/protocolVersion (a string) and
io.modelcontextprotocol/clientCapabilities (an object; {} declares none)
(T-LIFE-7). Over Streamable HTTP every request POST also carries
MCP-Protocol-Version equal to that _meta version (T-HTTP-8). A message is
judged as 2026-07-28 when its _meta or its header says so, or when the
client spoke 2026-07-28 before in the session. Notifications are not
judged: the spec defines no header rules for notification POSTs (AMB-5)
and asks _meta of requests only.`,
	Run: func(p *Pass) error {
		cp, err := needClientRequest(p)
		if err != nil {
			return err
		}
		if cp.version != envelope.V20260728 {
			return skipLegacy
		}
		m := &cp.msg
		pv := m.Get(envelope.MetaPath(envelope.MetaProtocolVersion))
		caps := m.Get(envelope.MetaPath(envelope.MetaClientCapabilities))
		switch {
		case !pv.Exists():
			p.Failf("params._meta", "_meta lacks %s; every 2026-07-28 request names its version (T-LIFE-7)", envelope.MetaProtocolVersion)
		case pv.Type != gjson.String:
			p.Failf("params._meta", "_meta %s is %s, not a string (T-LIFE-7)", envelope.MetaProtocolVersion, envelope.Kind(pv))
		}
		switch {
		case !caps.Exists():
			p.Failf("params._meta", "_meta lacks %s; every 2026-07-28 request declares the client's capabilities, {} for none (T-LIFE-7)", envelope.MetaClientCapabilities)
		case !caps.IsObject():
			p.Failf("params._meta", "_meta %s is %s, not an object (T-LIFE-7)", envelope.MetaClientCapabilities, envelope.Kind(caps))
		}
		if cp.in.Message.Transport != envelope.HTTP {
			return nil
		}
		const path = "http.header.mcp-protocol-version"
		hv, ok := envelope.HeaderJoined(cp.in.Message.Header, "Mcp-Protocol-Version")
		switch {
		case !ok:
			p.Failf(path, "MCP-Protocol-Version is missing; every 2026-07-28 request POST carries it (T-HTTP-8)")
		case pv.Type == gjson.String && hv != pv.Str:
			p.Failf(path, "MCP-Protocol-Version is %s, but _meta says %s (T-HTTP-8)", Quote(hv, quoteN), Quote(pv.Str, quoteN))
		}
		return nil
	},
}
