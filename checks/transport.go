package checks

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

var SessionAndAuth = &Check{
	ID:       "HTTP1004",
	Title:    "Session ids and authorization challenges are well-formed",
	SpecRef:  "T-SESS-1, T-HTTP-18, T-AUTH-1, T-AUTH-2, T-AUTH-4, T-AUTH-5, T-AUTH-6",
	Severity: MUST,
	Area:     AreaHTTP,
	Doc: `HTTP headers that carry protocol state:

- An Mcp-Session-Id a 2025-xx server issues holds visible ASCII only
  (0x21 to 0x7E, T-SESS-1); one shorter than 16 characters warns (it
  SHOULD be globally unique and cryptographically secure). A 2026-07-28
  server mints none (T-HTTP-18, a SHOULD: a warning), unless it served a
  legacy initialize, whose session is judged as a 2025-xx one. Sent on
  two field lines with different values, the single-valued header fails
  (RFC 9110 §5.3): clients differ on which session they keep.
- A 401 is the answer to a missing or invalid token (T-AUTH-1, T-AUTH-6)
  and carries a WWW-Authenticate challenge. MCP authorization names the
  Protected Resource Metadata with resource_metadata (T-AUTH-2); its
  absence warns: 2025-06-18 makes authorization optional, and a server
  that supports it only SHOULD follow the authorization spec (a bearer
  key of its own needs no metadata); later versions may publish it at a
  well-known URI instead, which one exchange cannot show. A scope
  parameter is a SHOULD (T-AUTH-4). Parameters are read as RFC 9110
  writes them: any case, spaces around "=".
- A 403 for an insufficient scope says error="insufficient_scope" with
  the scope needed (T-AUTH-5, a SHOULD since 2025-11-25).`,
	Run: func(p *Pass) error {
		if p.Exchange.Transport != envelope.HTTP || p.Exchange.Response == nil {
			return Skip("no HTTP response")
		}
		resp := p.Exchange.Response
		x := p.Expect
		judged := false
		if raw, ok := envelope.HeaderValue(resp.Header, "Mcp-Session-Id"); ok {
			// (Present and empty is judged too: a client reads it as a
			// session of no id, review rev71.)
			judged = true
			// (The whitespace around a field's value is no part of it,
			// RFC 9110 §5.5.)
			sid := strings.Trim(raw, " \t")
			switch {
			case sid == "":
				p.Failf("http.header.Mcp-Session-Id", "Mcp-Session-Id is empty or holds only whitespace: no session id a client could send back (T-SESS-1)")
			case envelope.HeaderVaries(resp.Header, "Mcp-Session-Id"):
				// A single-valued field sent with two values (RFC 9110
				// §5.3): clients differ on which session they keep.
				p.Failf("http.header.Mcp-Session-Id", "Mcp-Session-Id is sent %d times with different values; a client may keep either session (T-SESS-1)", len(envelope.HeaderDistinct(resp.Header, "Mcp-Session-Id")))
			case x.Version == envelope.V20260728 && x.Condition != expect.CondLegacyInitialize:
				// (A served initialize switches to the legacy era, whose
				// sessions it may start, T-COMPAT-2: judged as one below.)
				p.Warnf("http.header.Mcp-Session-Id", "a 2026-07-28 reply carries Mcp-Session-Id; the version has no sessions (T-HTTP-18)")
			case strings.IndexFunc(sid, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0:
				p.Failf("http.header.Mcp-Session-Id", "Mcp-Session-Id holds characters outside visible ASCII 0x21-0x7E (T-SESS-1)")
			case len(sid) < 16:
				p.Warnf("http.header.Mcp-Session-Id", "Mcp-Session-Id is %d characters: too short to be unique and unguessable (T-SESS-1, SHOULD)", len(sid))
			}
		}
		challenge := strings.Join(envelope.HeaderValues(resp.Header, "WWW-Authenticate"), ", ")
		lower := strings.ToLower(challenge)
		switch resp.Status {
		case 401:
			judged = true
			switch {
			case challenge == "":
				p.Failf("http.header.WWW-Authenticate", "a 401 without a WWW-Authenticate challenge (T-AUTH-1, T-AUTH-2)")
			case !startsChallenge(challenge):
				p.Failf("http.header.WWW-Authenticate", "the 401's WWW-Authenticate holds no challenge: one begins with its auth-scheme, Bearer say (RFC 9110 §11.6.1, §11.3; T-AUTH-1)")
			case !hasAuthParam(challenge, "resource_metadata"):
				if x.Version == envelope.V20250618 {
					// Authorization is optional there, and a server that
					// supports it only SHOULD follow the authorization
					// spec: a bearer key of its own needs no metadata.
					p.Warnf("http.header.WWW-Authenticate", "the 401 challenge does not name resource_metadata, which MCP authorization asks (T-AUTH-2; 2025-06-18 makes authorization optional)")
				} else {
					p.Warnf("http.header.WWW-Authenticate", "the 401 challenge does not name resource_metadata; it must then be at a well-known URI (T-AUTH-2)")
				}
			}
			if challenge != "" && x.Version != envelope.V20250618 && !hasAuthParam(challenge, "scope") {
				p.Warnf("http.header.WWW-Authenticate", "the 401 challenge has no scope parameter (T-AUTH-4, SHOULD)")
			}
		case 403:
			// (T-AUTH-5 came with 2025-11-25's scope challenges; 2025-06-18
			// maps a 403 to insufficient permissions and asks no more:
			// review rev54.)
			if strings.Contains(lower, "insufficient_scope") && x.Version != envelope.V20250618 {
				judged = true
				if !hasAuthParam(challenge, "scope") {
					p.Warnf("http.header.WWW-Authenticate", "an insufficient_scope 403 does not name the scope needed (T-AUTH-5, SHOULD)")
				}
			}
		}
		if !judged {
			return Skip("no session id and no authorization challenge")
		}
		return nil
	},
}

var SSEStream = &Check{
	ID:       "HTTP1005",
	Title:    "An SSE reply stream keeps the transport's rules",
	SpecRef:  "T-HTTP-15, T-HTTP-16, T-HTTP-17",
	Severity: MUST,
	Area:     AreaHTTP,
	Doc: `A reply sent as text/event-stream:

- in 2025 versions its event ids, when used, are unique across all the
  streams of the session (T-HTTP-16, a rule of resumption, which 2026-07-28
  does not have): an id used twice on the stream fails (a block without
  data is no event: its id, the last one again, before a retry say, is
  nothing; an earlier one warns, as it moves a resuming client back), and so does one an
  earlier stream of the session used (the later of the two exchanges in the
  report's order; a GET resuming a stream with Last-Event-ID gives its
  events again, and is not compared). Without a session the rule binds the
  ids of all the streams of one client, whom a server without sessions
  cannot tell from another: an id an earlier stream used warns there. An
  id that comes again with the very event it named, on a new stream that
  resumes nothing, warns: it still names one event (the official Go SDK
  replays its standalone stream to each GET so), and whether a new stream
  may replay another's the spec does not settle; an event without data (a
  priming event) replays no message, so its id on another stream fails as
  any reused id does;
- in 2025-11-25 a stream answering a POST that sets event ids (one the
  client may resume) starts with a priming event, an id and empty data (T-HTTP-15,
  a SHOULD: a warning); not on an initialize answered with an older
  version (2024-11-05), whose session has no such rule;
- in 2026-07-28 the response to a POST carries X-Accel-Buffering: no (T-HTTP-17, a
  SHOULD: a warning), since a buffering proxy would hold back the
  messages that precede the response;
- in 2025-06-18 the server does not close a POST's stream before its
  response (T-HTTP-15, SHOULD NOT: a warning when the response came on
  a stream the checker resumed);
- a POST's stream ends after its response (T-HTTP-15 in 2025 versions,
  T-HTTP-17 in 2026-07-28, both SHOULD: a warning when the server still
  held it open as the checker stopped reading, a short while after the
  response; a client that waits for the end of the stream waits on). A
  recording that does not say whether its stream was held open is not
  judged so.`,
	Run: func(p *Pass) error {
		resp := p.Exchange.Response
		if p.Exchange.Transport != envelope.HTTP || resp == nil || !envelope.IsEventStream(envelope.HeaderGet(resp.Header, "Content-Type")) {
			return Skip("not an SSE reply")
		}
		if resp.Status == http.StatusAccepted && len(p.Reply.Body) == 0 {
			// A 202 carries no stream, whatever its Content-Type says.
			return Skip("a 202 without a body carries no stream")
		}
		r := envelope.NewSSEBodyReader(p.Reply.Body, envelope.MaxSSELine)
		seen := map[string]bool{}
		primed, first := false, true
		last := "" // the last event id the stream set (WHATWG)
		for {
			ev, err := r.Next()
			if err != nil {
				break // the end of what was read; RPC1001 judges a broken stream
			}
			if first && (ev.IDSet || len(ev.Data) > 0) {
				// A block of other fields alone (retry:) dispatches no
				// event: the first event is the first with an id or data.
				first = false
				primed = ev.ID != "" && len(bytes.TrimSpace(ev.Data)) == 0
			}
			if ev.ID == "" {
				if ev.IDSet {
					last = "" // an empty id resets the last event id
				}
				continue
			}
			// Ids serve resumption, a 2025 mechanism (T-HTTP-16);
			// 2026-07-28 streams are not resumed, so an id there binds
			// nothing.
			resumable := p.Expect.Version != envelope.V20260728
			switch {
			case !ev.HasData:
				// A block without data (an id, a retry before the server
				// drops the connection) dispatches no event: its id only
				// sets the last event id, and the same one again changes
				// nothing. An earlier one moves a resuming client back.
				if seen[ev.ID] && ev.ID != last && resumable {
					p.Warnf("http.body", "a block without data sets the last event id back to %s, which an earlier event used: a client resuming from it gets the events after it again (T-HTTP-16 names the ids of events, which this block is not)", Quote(ev.ID, quoteN))
				}
			case seen[ev.ID] && resumable:
				p.Failf("http.body", "SSE event id %s is used twice on one stream (T-HTTP-16)", Quote(ev.ID, quoteN))
			default:
				seen[ev.ID] = true
			}
			last = ev.ID
		}
		if p.Expect.Version != envelope.V20260728 {
			judgeReusedIDs(p, streamSession(p.Exchange.Request.Header, resp.Header) != "")
		}
		// Priming serves resumption: judged on a stream that sets event
		// ids, i.e. one the server lets clients resume, and that answers
		// a POST (T-HTTP-15): a GET stream, resumed or not, is not bound.
		post := p.Exchange.Request.Method == "" || p.Exchange.Request.Method == http.MethodPost
		if post && spokenVersion(p) == envelope.V20251125 && len(seen) > 0 && !primed {
			p.Warnf("http.body", "the stream sets event ids but does not start with a priming event (an id and empty data) (T-HTTP-15, SHOULD)")
		}
		if post && resp.Resumed > 0 && spokenVersion(p) == envelope.V20250618 {
			p.Warnf("http.body", "the server closed the POST's stream before its response, which came on a stream resumed with Last-Event-ID; 2025-06-18 asks it not to close the stream before the response (T-HTTP-15, SHOULD NOT)")
		}
		if post && resp.HeldOpen {
			rule := "T-HTTP-17"
			if p.Expect.Version != envelope.V20260728 {
				rule = "T-HTTP-15"
			}
			p.Warnf("http.body", "the stream stayed open after its response; the response SHOULD end it (%s)", rule)
		}
		if post && p.Expect.Version == envelope.V20260728 && !strings.EqualFold(envelope.HeaderGet(resp.Header, "X-Accel-Buffering"), "no") {
			p.Warnf("http.header.X-Accel-Buffering", "the SSE response lacks X-Accel-Buffering: no (T-HTTP-17, SHOULD)")
		}
		return nil
	},
}

// spokenVersion is the version the exchange's session speaks: an
// initialize's own answer names the one it negotiates (2024-11-05 for a
// client that asked for it); a 2025-xx request without the version
// header is read as 2025-03-26; any other exchange speaks the run's.
func spokenVersion(p *Pass) string {
	if r := p.Reply.Response; p.Expect.Method == "initialize" && r != nil {
		if asked := p.Expect.Request.Get("params.protocolVersion").Str; !envelope.KnownVersion(asked) {
			// A client that asked for a version the checker does not
			// know may not know priming events either: a server that
			// primes only clients of 2025-11-25 or later is right.
			return ""
		}
		if v := r.Get("result.protocolVersion"); v.Type == gjson.String {
			return v.Str
		}
	}
	hv, ok := envelope.HeaderValue(p.Exchange.Request.Header, "MCP-Protocol-Version")
	switch {
	case !ok && p.Exchange.Transport == envelope.HTTP && p.Expect.Version != envelope.V20260728:
		// Without the header (and outside initialize) a 2025-xx server
		// SHOULD assume 2025-03-26 (T-HTTP-7), which has no priming.
		return envelope.V20250326
	case ok && hv != p.Expect.Version && p.Expect.Version != envelope.V20260728 && (envelope.KnownVersion(hv) || envelope.HistoricVersion(hv)):
		// A 2025 request that names another version in its header (a
		// client that sends its own, in a session of another): the
		// server may answer it as that version's (the TypeScript SDK
		// primes by each request's header; review rev72).
		return hv
	}
	return p.Expect.Version
}

// authParams finds the auth-param names of a challenge (RFC 9110 §11.2:
// token BWS "=" BWS value, names case-insensitive).
var authParams = regexp.MustCompile(`(?:^|[\s,])([!#$%&'*+.^_|~0-9A-Za-z-]+)[ \t]*=`)

// hasAuthParam: the challenge carries a parameter of that name. Quoted
// values are skipped, so a name inside one is not counted.
func hasAuthParam(challenge, name string) bool {
	var outside strings.Builder
	quoted := false
	for i := 0; i < len(challenge); i++ {
		c := challenge[i]
		switch {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
			outside.WriteByte(' ')
		case !quoted:
			outside.WriteByte(c)
		}
	}
	for _, m := range authParams.FindAllStringSubmatch(outside.String(), -1) {
		if strings.EqualFold(m[1], name) {
			return true
		}
	}
	return false
}

// judgeReusedIDs judges the event ids this stream shares with earlier
// streams of its session (T-HTTP-16). An id naming another event fails
// in a session; without one it warns, as the rule then binds the streams
// of one client, whom a server without sessions cannot tell apart. An id
// that comes again with the same event, on a new stream that resumes
// nothing, warns: the id still names one event, and whether a server may
// give a stream's events again to a new connection (the official Go SDK
// replays its standalone stream to every GET) the spec does not settle.
func judgeReusedIDs(p *Pass, session bool) {
	var other, same []string
	for _, r := range p.Reused {
		if r.Request {
			continue // PRO1003's (T-RPC-4)
		}
		if r.Same {
			same = append(same, r.ID)
		} else {
			other = append(other, r.ID)
		}
	}
	switch {
	case len(other) > 0 && session:
		p.Failf("http.body", "SSE event id %s names another event than on an earlier stream of this session (%d such id(s)); an id is unique across all streams of a session (T-HTTP-16)", Quote(other[0], quoteN), len(other))
	case len(other) > 0:
		p.Warnf("http.body", "SSE event id %s names another event than on an earlier stream (%d such id(s)); without a session T-HTTP-16 binds the ids of all streams with this client, which a server without sessions cannot tell from another", Quote(other[0], quoteN), len(other))
	case len(same) > 0:
		p.Warnf("http.body", "the stream gives again, with its id %s, an event an earlier stream gave (%d such event(s)) though it resumes nothing; T-HTTP-16 sends each message on one stream, and whether a new stream may replay another's is not settled", Quote(same[0], quoteN), len(same))
	}
}

// startsChallenge: the WWW-Authenticate value begins with a challenge,
// an auth-scheme (a token not followed by "=", which would make it an
// auth-param), after any empty list elements (RFC 9110 §5.6.1, §11.3).
func startsChallenge(v string) bool {
	s := strings.TrimLeft(v, " \t,")
	n := strings.IndexFunc(s, func(r rune) bool { return !envelope.IsTchar(r) })
	if n < 0 {
		n = len(s)
	}
	if n == 0 {
		return false
	}
	rest := strings.TrimLeft(s[n:], " \t")
	return rest == "" || rest[0] != '='
}
