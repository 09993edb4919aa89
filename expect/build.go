package expect

import (
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// Build says what a conforming reply to ex's request is, from the request
// as it went on the wire, the facts the server declared (nil: unknown)
// and a fixture's override (nil: none). It is the only place an
// Expectation is made.
//
// Where RFC 8259, RFC 9110 or the spec let a receiver read the request in
// more than one way (duplicate member names, a byte order mark, an id
// spelled 1.0, a repeated header, a Base64 alphabet), each reading gets
// its own expectation and the result keeps only what holds under all of
// them: a server that picked an allowed reading is never failed for it.
func Build(ex *envelope.Exchange, f *Facts, o *Override) *Expectation {
	f = f.inSessionOf(ex)
	if ex.Response != nil {
		// A list the server says changed while it answered no longer
		// says what exists: the call may have been served by the new
		// one (review rev40).
		f = f.forgetChanged(ex.Response)
	}
	if o.Empty() && legacyDiscover(ex, f) {
		// Judged as the run judges its own probe to such a server.
		alt := *ex
		alt.Version = envelope.V20251125
		return Build(&alt, f, LegacyDiscover(LegacyDiscoverCondition))
	}
	if o.Empty() && legacyPing(ex, f) {
		// Judged as the legacy client's ping it may be (see legacyPing).
		alt := *ex
		alt.Version = envelope.V20251125
		return Build(&alt, f, LegacyPing())
	}
	// Most requests have one reading: held here, not allocated.
	var one [1]reading
	rs := readings(one[:0], ex)
	e := build(ex, rs[0], f)
	for _, r := range rs[1:] {
		e = merge(e, build(ex, r, f), r.why)
	}
	if len(rs) == 1 && e.Method == "ping" && e.Version != envelope.V20260728 && e.Condition == CondCall && pingOwed(ex, e, f) {
		// A 2025-xx ping gets a prompt, empty result (T-LIFE-5): an
		// error says the server does not keep the liveness check every
		// peer may rely on. Over HTTP only an answer the server made as
		// JSON-RPC (a 2xx) says so: a refusal of the HTTP request may be
		// its transport's (credentials, headers, a session).
		e.Served, e.ServedAsJSONRPC = must("T-LIFE-5: a ping gets an empty result"), ex.Transport == envelope.HTTP
	}
	if e.Served.Level > Should && e.VersionHeaderAbsent(ex) {
		// T-HTTP-7: a request after initialisation without its
		// MCP-Protocol-Version is no error by itself, but the server
		// only SHOULD read it as 2025-03-26: a ping so refused warns.
		// (What a refusal on the header may lose, the id, and the code
		// and status it may carry, the checks read from the reply: a
		// reply that read the body owes what any does.)
		e.Served, e.ServedAsJSONRPC = should(VersionHeaderAbsentRule), false
	}
	o.apply(e)
	if o.Empty() && f.EndedByClient(ex) {
		// What the run's session/reuse-after-delete is held to, for a
		// relay's client that did the same.
		EndedByClient().apply(e)
	}
	if c := e.Request.Get("params.cursor"); e.Page.Empty() && c.Type == gjson.String {
		// A page the traffic showed the listing's earlier pages of (lint,
		// a relay): judged by them as the run's own pages are.
		e.Page = f.Listing(e.Method, c.Str, envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id"))
	}
	e.bigID()
	if v := legacyReading(ex, e, rs[0].body); v != "" {
		alt := *ex
		alt.Version = v
		l := build(&alt, rs[0], f)
		for _, r := range rs[1:] {
			l = merge(l, build(&alt, r, f), r.why)
		}
		switch l.Condition {
		case CondCall:
			// T-LIFE-6: no reaction is set for a request before
			// initialize; an error with any code, or serving it, are both
			// defensible. A request the 2025 rules refuse for what it is
			// (an invalid one) keeps its refusal.
			l.Error, l.Code, l.AnyCode = open(LegacyWhy), open(LegacyWhy), true
		case CondUnknownMethod:
			// A method of 2026-07-28 alone (server/discover): read as a
			// 2025 request it is refused, whatever extensions may define;
			// a result for it comes from no 2025 reading.
			l.Error = must("T-ERR-3")
		}
		o.apply(l)
		l.bigID()
		e.Legacy, e.LegacyReason = l, LegacyWhy
	}
	return answered(e, ex, f)
}

// Answered is e, built before ex's reply came, with what the reply
// changes: the readings it opens (a 404 in the run's own session, see
// SessionMayHaveEnded), and the lists its own list_changed
// notifications say changed, which no longer say what exists (e is then
// built again, with o, from what is left). Build applies them itself; a
// live run, which builds the expectation before it sends, applies them
// once the reply is in, so that check judges an exchange as lint judges
// its record.
func Answered(e *Expectation, ex *envelope.Exchange, f *Facts, o *Override) *Expectation {
	if e == nil {
		return e
	}
	g := f.inSessionOf(ex)
	if ex.Response != nil && g != nil && g.forgetChanged(ex.Response) != g {
		// (Review rev63: check judged a call by the tool list the server
		// had just said changed, where lint of its record did not.)
		return Build(ex, f, o)
	}
	if e.Legacy != nil || !SessionMayHaveEnded(ex, e, g) {
		return e
	}
	c := *e
	return answered(&c, ex, g)
}

func answered(e *Expectation, ex *envelope.Exchange, f *Facts) *Expectation {
	if e.Legacy == nil && SessionMayHaveEnded(ex, e, f) {
		e.Legacy, e.LegacyReason = e.endedReading(), EndedWhy
	}
	return e
}

// legacyPing: ex is a ping with no _meta on a 2026-07-28 stdio pipe,
// served with a result. A legacy client may ping before it initializes
// (the 2025 lifecycle lets it), and a server that serves both eras
// (T-COMPAT-2) may answer it as such, with {}; a modern-only server
// refuses it (T-LIFE-7). Which the server is, nothing the checker knows
// tells (supportedVersions lists the versions a client may name in
// _meta): the official Go SDK's client pings so at 2026-07-28, and three
// fails of 2026 rules were a guess held as certain (review rev42).
func legacyPing(ex *envelope.Exchange, f *Facts) bool {
	if ex.Transport != envelope.Stdio || ex.Response == nil || (ex.Version != envelope.V20260728 && (ex.Version != "" || f == nil || f.Version != envelope.V20260728)) {
		return false
	}
	req := envelope.Parse(ex.Request.Body)
	if req.Get("method").Str != "ping" || req.Get("params._meta").Exists() {
		return false
	}
	r := envelope.ReadReply(ex.Response, envelope.ReadOptions{IDs: []gjson.Result{req.Get("id")}})
	return r.Response != nil && r.Response.Get("result").IsObject()
}

// LegacyDiscoverCondition is the condition of a server/discover judged
// as a legacy server's answer where nothing else named its version.
const LegacyDiscoverCondition = "server/discover answered as only a legacy server answers it (T-COMPAT-4), and no initialize or declaration named the server's version"

// legacyDiscover: ex is a server/discover that asks for 2026-07-28 and
// names that version only in itself (no declared version, no facts of the server's version: a relay
// or lint before any initialize), and its reply marks a legacy server
// (T-COMPAT-4: any error but a modern server's -32022, -32020 or -32021,
// or an HTTP refusal without a JSON-RPC error). Its 2026-07-28 rules
// would be a guess about the server held as certain.
func legacyDiscover(ex *envelope.Exchange, f *Facts) bool {
	// Every exchange Build sees comes here: the request is parsed again
	// only where no version is known.
	if ex.Version != "" || f != nil && f.Version != "" || ex.Response == nil {
		return false
	}
	req := envelope.Parse(ex.Request.Body)
	if req.Get("method").Str != "server/discover" {
		return false
	}
	if v, _ := requestVersion(ex, req); v != envelope.V20260728 {
		// Another version asked (a checker's probe of an unsupported
		// one) is no dual-era client's probe for the server's era.
		return false
	}
	r := envelope.ReadReply(ex.Response, envelope.ReadOptions{IDs: []gjson.Result{req.Get("id")}})
	if r.Response == nil {
		return ex.Transport == envelope.HTTP && ex.Response.Status >= 400 && ex.Response.Status < 500
	}
	code := r.Response.Get("error.code")
	if code.Type != gjson.Number {
		return false // a result, or an error no era's rules let pass
	}
	switch code.Int() {
	case envelope.CodeUnsupportedVer, envelope.CodeHeaderMismatch, envelope.CodeMissingClientCap:
		return false
	}
	return true
}

// VersionHeaderAbsentRule is why a 2025 request without its version
// header is owed service all the same.
const VersionHeaderAbsentRule = "T-HTTP-7: a request without MCP-Protocol-Version is read as 2025-03-26, not refused"

// VersionHeaderAbsent: ex's request, a 2025-06-18 or 2025-11-25 one over
// HTTP after initialisation (not initialize itself, see afterInit),
// carries no MCP-Protocol-Version header, to a server that speaks a
// version with the header (2025-03-26 has none, T-V0326-2). T-HTTP-7
// makes that no error by itself: the server SHOULD read it as 2025-03-26.
func (e *Expectation) VersionHeaderAbsent(ex *envelope.Exchange) bool {
	return ex.Transport == envelope.HTTP && (e.Version == envelope.V20250618 || e.Version == envelope.V20251125) &&
		e.Method != "initialize" && e.Method != "" && e.Facts.Speaks() != envelope.V20250326 &&
		ex.Request.HTTPMethod() == "POST" && envelope.HeaderGet(ex.Request.Header, "Mcp-Protocol-Version") == "" && afterInit(ex, e.Facts)
}

// afterInit: the request goes where an initialize went before: in a
// session (it names one), or to a server known to keep none.
func afterInit(ex *envelope.Exchange, f *Facts) bool {
	if envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id") != "" {
		return true
	}
	issued, known := f.Sessions()
	return known && !issued
}

// EndedWhy is why a 404 in the run's own session is judged as the end of
// that session too.
const EndedWhy = "the server may end a session at any time (T-SESS-5), and then answers a request in it 404 (T-SESS-3): the request's own condition was not judged"

// SessionMayHaveEnded: a 2025-xx request over HTTP in a session the run
// holds (the server issued it, and it was not ended by the run) was
// answered 404, which T-SESS-3 makes the answer of a session the server
// ended, as it may at any time (T-SESS-5), with what a session refusal
// carries: no JSON-RPC error, -32600, or a server error of
// -32000..-32099 ("Session not found"). A code that names something of
// the request (-32603 for a parse error, -32601) is no session's
// refusal, and gets no such reading. (The reply is read only to spare
// every other exchange a second reading.)
func SessionMayHaveEnded(ex *envelope.Exchange, e *Expectation, f *Facts) bool {
	return e.Condition != CondSession && e.Method != "initialize" && SessionRefusal(ex, e.Version, f)
}

// SessionRefusal: a 2025-xx request over HTTP in a session the run holds
// was answered 404 with what a session refusal carries (see
// SessionMayHaveEnded), whatever the request, and the session was not
// seen to serve a request right after (SessionLive).
func SessionRefusal(ex *envelope.Exchange, version string, f *Facts) bool {
	if ex.Transport != envelope.HTTP || ex.Response == nil || ex.Response.Status != 404 || version == envelope.V20260728 ||
		f == nil || !f.Session || ex.SessionLive {
		return false
	}
	if c := gjson.GetBytes(ex.Response.Body, "error.code"); c.Exists() {
		if n := c.Int(); c.Type != gjson.Number || n != envelope.CodeInvalidRequest && (n < -32099 || n > -32000) {
			return false
		}
	}
	held, known := f.SessionHeld(envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id"))
	return known && held
}

// endedReading is e read as a request in a session the server ended: it
// is refused, with any code, 404, before its body is read.
func (e *Expectation) endedReading() *Expectation {
	l := *e
	l.Legacy, l.LegacyReason = nil, ""
	l.Condition, l.Detail = CondSession, "a request in a session the server may have ended"
	l.Error, l.Codes, l.Code, l.AnyCode, l.AlsoCodes, l.AlsoWhy, l.ReadCodes = must("T-SESS-3"), nil, Want{}, true, nil, "", nil
	l.Status, l.StatusWant, l.ReadStatus = []int{404}, must("T-SESS-3"), nil
	l.Served, l.ServedExcept, l.ServedAsJSONRPC = Want{}, nil, false
	l.Tool, l.ParamsSound = nil, false
	l.ID.Lost = Want{}
	return &l
}

// bigID: RFC 8259 §6 lets a receiver limit the numbers it reads, so one
// that cannot hold an id beyond 2^53 may refuse the message as unreadable
// (-32700) or its id as invalid (-32600), as it may lose the id (ID.Lost
// warns too). Set after a fixture's overrides, which fix the code of the
// request's own condition, not a receiver's limits.
func (e *Expectation) bigID() {
	if len(e.ID.Echo) == 0 || !e.ID.Rounded.Set() {
		return
	}
	e.also("RFC 8259 §6: a receiver may limit the numbers it reads, and refuse an id beyond 2^53", envelope.CodeParseError, envelope.CodeInvalidRequest)
}

// also adds codes a defensible reading of the request names beside the
// literal one, and why: each reading that applies keeps its codes and
// its reason.
func (e *Expectation) also(why string, codes ...int) {
	for _, c := range codes {
		if !slices.Contains(e.Codes, c) && !slices.Contains(e.AlsoCodes, c) {
			e.AlsoCodes = append(e.AlsoCodes, c)
		}
	}
	switch {
	case why == "":
	case e.AlsoWhy == "":
		e.AlsoWhy = why
	case !strings.Contains(e.AlsoWhy, why):
		e.AlsoWhy += "; " + why
	}
}

// LegacyWhy is why a request is judged under its legacy reading too.
const LegacyWhy = "a server that serves 2025-xx clients too may read a stdio request that names no version as a 2025-xx request sent before initialize (T-COMPAT-2, T-LIFE-6)"

// legacyReading is the version of a second reading of a 2026-07-28
// request: on stdio, to a server that declared it serves 2025-xx clients
// too, a request whose _meta names no protocol version carries nothing of
// the stateless era (no header either). A 2025-xx client's request sent
// before initialize looks the same, and T-LIFE-6 sets no reaction to it:
// the server may serve it in its newest 2025-xx version. "" when there is
// no such reading.
func legacyReading(ex *envelope.Exchange, e *Expectation, req envelope.Message) string {
	if e.Version != envelope.V20260728 || ex.Transport != envelope.Stdio || !e.Facts.servesLegacy() ||
		e.Method == "" || e.Method == "initialize" || !req.Get("id").Exists() ||
		req.Get(envelope.MetaPath(envelope.MetaProtocolVersion)).Exists() {
		return ""
	}
	newest := ""
	for _, v := range e.Facts.Supported {
		if v != envelope.V20260728 && envelope.KnownVersion(v) && v > newest {
			newest = v
		}
	}
	return newest
}

// A reading is one way a receiver may read the request.
type reading struct {
	body   envelope.Message
	header http.Header
	// reject: the receiver refuses the body as malformed JSON.
	reject bool
	// strictInt: only a digit string is an integer id; 1.0 and 1e2 are not.
	strictInt bool
	// b64 is how a Base64 sentinel is decoded: AMB-10 names neither its
	// alphabet nor its padding.
	b64 envelope.Base64Reading
	why string
}

// readings appends the readings of the request to dst.
func readings(dst []reading, ex *envelope.Exchange) []reading {
	base := reading{body: envelope.Parse(ex.Request.Body), header: ex.Request.Header}
	rs := append(dst, base)
	m := base.body
	if m.BOM {
		rs = append(rs, reading{reject: true, header: base.header,
			why: "RFC 8259 §8.1: a receiver may ignore a byte order mark or refuse the text"})
	}
	if len(m.Duplicates) > 0 {
		two := m.Readings()
		why := "RFC 8259 §4: with duplicate member names a receiver may keep either value, or refuse the object"
		rs[0].body = two[0]
		rs = append(rs, reading{body: two[1], header: base.header, why: why},
			reading{reject: true, header: base.header, why: why})
	}
	if why := limitReading(ex.Request.Body, m); why != "" {
		// RFC 8259 §8.2, §9: a receiver may set limits on nesting, on
		// the range of numbers and on string contents; a server that
		// refuses the text at its limit is right, and may not have read
		// the id.
		rs = append(rs, reading{reject: true, header: base.header, why: why})
	}
	if id := rs[0].body.Get("id"); id.Type == gjson.Number && envelope.IsInteger(id.Raw) && !envelope.PlainInteger(id.Raw) {
		rs = append(rs, reading{body: rs[0].body, header: base.header, strictInt: true,
			why: "an integer spelled " + id.Raw + " is an integer in value (JSON Schema), but a receiver may refuse it as an id"})
	}
	if ex.Transport == envelope.HTTP {
		for _, h := range headerReadings(base.header) {
			rs = append(rs, reading{body: rs[0].body, header: h,
				why: "RFC 9110 §5.3: a repeated header may be read as its first, its last or its joined values"})
		}
		urlSafe, unpadded := sentinels(base.header)
		if urlSafe {
			rs = append(rs, reading{body: rs[0].body, header: base.header, b64: envelope.Base64Reading{URLSafe: true},
				why: "AMB-10: the Base64 alphabet of the sentinel is not named"})
		}
		if unpadded {
			rs = append(rs, reading{body: rs[0].body, header: base.header, b64: envelope.Base64Reading{Padded: true},
				why: "AMB-10: whether the Base64 of the sentinel is padded is not named"})
		}
	}
	return rs
}

// limitDepth is the nesting beyond which a receiver's own limit is a fair
// reason to refuse a text: far above any real MCP message, and below the
// limits common JSON parsers set (serde_json's 128, for one).
const limitDepth = 64

// limitReading says why a receiver may refuse the body at one of its own
// limits (RFC 8259 §8.2, §9), "" when none applies: deep nesting, a
// number no float64 holds, an unpaired surrogate escape in a string.
func limitReading(raw []byte, m envelope.Message) string {
	if !m.Valid {
		if envelope.Depth(raw) > limitDepth {
			return "RFC 8259 §9: a receiver may limit the nesting depth it accepts"
		}
		return ""
	}
	return limitText(m.Root().Raw)
}

// limitText reads the tokens of a valid JSON text, without parsing it
// into values (a request of 100,000 members is read once): nesting
// deeper than limitDepth, else the first number no float64 holds, or
// string with an unpaired surrogate, keys included, is a limit a
// receiver may set. The depth is measured in the same pass, as
// envelope.Depth would (brackets stand outside strings alone in a valid
// text); FuzzLimitReading holds the two to the reading of each apart.
func limitText(t string) string {
	depth, limit := 0, ""
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '{' || c == '[':
			if depth++; depth > limitDepth {
				return "RFC 8259 §9: a receiver may limit the nesting depth it accepts"
			}
		case c == '}' || c == ']':
			depth--
		case limit != "":
			// Only the depth is still read: a string is skipped whole.
			if c == '"' {
				i = envelope.StringEnd(t, i)
			}
		case c == '"':
			j, escaped := i+1, false
			for {
				j += quoteOrEscape(t[j:]) // the text is valid: the string ends
				if t[j] == '"' {
					break
				}
				j, escaped = j+2, true
			}
			if escaped && loneSurrogate(t[i:j+1]) {
				limit = "RFC 8259 §8.2: a string with an unpaired surrogate may be refused"
			}
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j, exp := i+1, false
			for j < len(t) && strings.IndexByte("0123456789+-.eE", t[j]) >= 0 {
				exp = exp || t[j] == 'e' || t[j] == 'E'
				j++
			}
			// Without an exponent, a number of fewer characters than
			// float64's largest has digits is within its range.
			if (exp || j-i > maxPlainNumber) && !parses(t[i:j]) {
				limit = "RFC 8259 §9: a receiver may limit the range of numbers it accepts"
			}
			i = j - 1
		}
	}
	return limit
}

// quoteOrEscape is strings.IndexAny(s, `"\`), without the set IndexAny
// makes on every call: limitText asks it for every string of every
// request.
func quoteOrEscape(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			return i
		}
	}
	return -1
}

// maxPlainNumber is the longest number text without an exponent that
// surely lies within float64's range (about 1.8e308): under 10^307 in
// magnitude, and no closer to zero than 10^-306.
const maxPlainNumber = 308

func parses(num string) bool {
	_, err := strconv.ParseFloat(num, 64)
	return err == nil
}

// loneSurrogate finds a \uD800-\uDFFF escape not part of a pair in a raw
// JSON string.
func loneSurrogate(raw string) bool {
	for i := 0; i+5 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // another escape: skip its character
			continue
		}
		r, err := strconv.ParseUint(raw[i+2:i+6], 16, 32)
		if err != nil {
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if lo, err := strconv.ParseUint(raw[i+8:i+12], 16, 32); err == nil && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11
					continue
				}
			}
			return true
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		}
		i += 5
	}
	return false
}

// headerReadings returns the other readings of the MCP headers a request
// repeats (under one name, or under names that differ only in case): the
// base reading takes the first value; these take the last, and all of
// them joined with ", " (RFC 9110 §5.3).
func headerReadings(h http.Header) []http.Header {
	if !repeatsMCPHeader(h) {
		return nil
	}
	return repeatedReadings(h)
}

// repeatedReadings are headerReadings, found the long way.
func repeatedReadings(h http.Header) []http.Header {
	repeated := map[string][]string{}
	keys := slices.Sorted(maps.Keys(h)) // a name sent in two spellings: a stable order
	for _, k := range keys {
		vs := h[k]
		if lk := strings.ToLower(k); mcpHeader(k) {
			repeated[lk] = append(repeated[lk], vs...)
		}
	}
	var last, joined http.Header
	for lk, vs := range repeated {
		if len(vs) < 2 {
			continue
		}
		if last == nil {
			last, joined = h.Clone(), h.Clone()
		}
		for _, x := range []http.Header{last, joined} {
			for k := range x {
				if strings.EqualFold(k, lk) {
					delete(x, k)
				}
			}
		}
		ck := http.CanonicalHeaderKey(lk)
		last[ck] = []string{vs[len(vs)-1]}
		joined[ck] = []string{strings.Join(vs, ", ")}
	}
	if last == nil {
		return nil
	}
	return []http.Header{last, joined}
}

// repeatsMCPHeader: some MCP header may have two values or more, under
// one name or under names that differ only in case. Most requests repeat
// none, and need no other reading of their headers; past a few MCP
// headers the answer is yes, and headerReadings sorts them out.
func repeatsMCPHeader(h http.Header) bool {
	var names [8]string
	mcp := names[:0]
	for k, vs := range h {
		if !mcpHeader(k) || len(vs) == 0 {
			continue
		}
		if len(vs) > 1 || len(mcp) == len(names) {
			return true
		}
		for _, seen := range mcp {
			if strings.EqualFold(seen, k) {
				return true
			}
		}
		mcp = append(mcp, k)
	}
	return false
}

// mcpHeader: a header whose repeated values have readings of their own.
func mcpHeader(name string) bool {
	_, param := envelope.ParamHeader(name)
	return param || strings.EqualFold(name, "mcp-protocol-version") || strings.EqualFold(name, "mcp-method") || strings.EqualFold(name, "mcp-name")
}

// sentinels: an MCP header the server decodes (Mcp-Name, Mcp-Param-*)
// holds a Base64 sentinel with a - or _ (urlSafe), and one that is
// unpadded; the headers are read once for both.
func sentinels(h http.Header) (urlSafe, unpadded bool) {
	for k, vs := range h {
		if _, param := envelope.ParamHeader(k); !param && !strings.EqualFold(k, "Mcp-Name") {
			continue
		}
		for _, v := range vs {
			if strings.HasPrefix(v, envelope.Base64Marker) {
				urlSafe = urlSafe || strings.ContainsAny(v, "-_")
				unpadded = unpadded || envelope.Unpadded(v)
			}
		}
	}
	return urlSafe, unpadded
}

func build(ex *envelope.Exchange, rd reading, f *Facts) *Expectation {
	e := buildAs(ex, rd, f)
	if v, _ := requestVersion(ex, rd.body); v != "" && v != e.Version && !f.Serves(v) {
		// The request names a version the server has not declared it
		// serves, and is judged as another: -32022 refuses it rightly in
		// any version (DESIGN, Versions), with the 400 the version's
		// refusal takes (T-HTTP-7, T-HTTP-10).
		e.ReadCodes = append(e.ReadCodes, envelope.CodeUnsupportedVer)
		if ex.Transport == envelope.HTTP {
			e.ReadStatus = append(e.ReadStatus, 400)
		}
	}
	return e
}

// refusedVersionHeader says why a 2025-xx POST's MCP-Protocol-Version
// names a version T-HTTP-7 refuses with 400, "" when it does not: no
// version at all, or one an initialize asked for and the server
// answered with another (one it supports it answers with that very
// version, T-LIFE-2; review rev54). An older MCP version the server may
// still serve is not judged; the initialize, which carries no such
// header yet, and a 2025-03-26 session (whose version has no such
// header, T-V0326-2) neither.
func (e *Expectation) refusedVersionHeader(rd reading, f *Facts, http bool) (hv, why string) {
	if !http || e.Version == envelope.V20260728 || e.Method == "initialize" || f.Speaks() == envelope.V20250326 {
		return "", ""
	}
	switch hv = envelope.HeaderGet(rd.header, "Mcp-Protocol-Version"); {
	case hv != "" && !envelope.KnownVersion(hv) && !envelope.HistoricVersion(hv):
		return hv, "MCP-Protocol-Version is not a protocol version"
	case hv != "" && hv != e.Version && f.Declines(hv):
		return hv, "MCP-Protocol-Version names a version the server declined at initialize"
	}
	return "", ""
}

// httpMethod sets the statuses a GET or DELETE on the endpoint may get.
func (e *Expectation) httpMethod(ex *envelope.Exchange, f *Facts) {
	if e.Version == envelope.V20260728 && !f.servesLegacy() {
		e.Status, e.StatusWant = []int{405}, should("T-HTTP-13")
		return
	}
	switch e.HTTPMethod {
	case "GET":
		e.Status, e.StatusWant = []int{200, 405}, must("T-HTTP-12")
		// The client's session may have ended (404, T-SESS-3) or not
		// been sent (400, T-SESS-2); only the checker knows its own is
		// live (expect-session: live).
		e.sessionRefusal(ex, f)
		if hv := envelope.HeaderGet(ex.Request.Header, "Mcp-Protocol-Version"); hv != "" && !slices.Contains(e.Status, 400) &&
			(!envelope.KnownVersion(hv) && !envelope.HistoricVersion(hv) || hv != e.Version && !f.Serves(hv)) {
			e.Status = append(e.Status, 400) // T-HTTP-7: a version it does not serve is refused 400
		}
	case "DELETE":
		e.Status, e.StatusWant = []int{200, 202, 204, 405}, open("T-SESS-4: a server may accept the end of a session or refuse it with 405")
		// A server that keeps sessions refuses a DELETE outside one it
		// holds as any other request.
		e.sessionRefusal(ex, f)
	}
	if e.Version == envelope.V20260728 {
		// A server that serves 2025 clients too answers their GET and
		// DELETE by the 2025 rules, which a 2026 request's look does not
		// change.
		if !slices.Contains(e.Status, 405) {
			e.Status = append(e.Status, 405)
		}
		e.StatusWant = open("T-HTTP-13 binds only a server that speaks only 2026-07-28; this one serves 2025 clients too")
	}
}

// sessionRefusal adds the status a server that keeps sessions refuses a
// GET or DELETE outside one it holds with: 404 for a session it does not
// hold (T-SESS-3), 400 without one (T-SESS-2). A dual-era server may keep
// sessions for its 2025 clients.
func (e *Expectation) sessionRefusal(ex *envelope.Exchange, f *Facts) {
	if !f.MayRefuseSession(ex) && e.Version != envelope.V20260728 {
		return
	}
	if envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id") != "" {
		e.Status = append(e.Status, 404)
	} else {
		e.Status = append(e.Status, 400)
	}
}

// buildAs is the expectation of one reading, in the version inferred.
func buildAs(ex *envelope.Exchange, rd reading, f *Facts) *Expectation {
	req := rd.body
	e := &Expectation{Request: req, Facts: f}
	e.Version, e.VersionSource = inferVersion(ex, req, f)
	http := ex.Transport == envelope.HTTP
	if http {
		e.HTTPMethod = ex.Request.HTTPMethod()
	}
	e.Reply = must("JSON-RPC §5: every request is answered")
	e.ID.Other = must("T-RPC-5")
	e.ID.Invented = must("T-RPC-9")

	if ex.EndsInput() {
		// Nothing is owed after the end of input; what the server writes
		// is judged as any line (T-STDIO-2), its exit by PRO1011.
		e.Reply = Want{}
		e.Condition, e.Detail = CondEndOfInput, "the checker closed the server's stdin"
		return e
	}
	if http && e.HTTPMethod != "POST" {
		e.Reply = Want{}
		e.Condition, e.Detail = CondHTTPMethod, e.HTTPMethod+" on the endpoint"
		e.httpMethod(ex, f)
		return e
	}
	raw := ex.Request.Body
	switch {
	case rd.reject:
		e.reject(CondParseError, "refused as malformed: "+rd.why, envelope.CodeParseError, envelope.CodeInvalidRequest)
		return e
	case len(raw) == 0 && ex.Transport == envelope.Stdio:
		e.reject(CondParseError, "the line is empty", envelope.CodeParseError)
		amb := "an empty stdio line carries no message; ignoring it is fair"
		e.Reply, e.Error, e.Code, e.StatusWant = open(amb), open(amb), open(amb), Want{}
		return e
	case len(raw) == 0:
		e.reject(CondParseError, "the body is empty", envelope.CodeParseError)
		// No JSON text at all, a parse error to the letter; an HTTP
		// body of no content (RFC 9110 §6.4) is read by many servers'
		// frameworks as no request object (review rev64: supergateway).
		e.also("an empty HTTP body is no content (RFC 9110 §6.4), which a server may read as no request object rather than as text that fails to parse", envelope.CodeInvalidRequest)
		return e
	case !req.UTF8:
		// JSON text must be UTF-8 (T-RPC-2), but that binds the sender;
		// RFC 8259 §8.2 leaves a receiver's handling of invalid strings
		// open, so a server that decodes leniently is not wrong for sure.
		// The open point is T-ERR-1's (is this a parse error?); naming
		// T-RPC-2 here would hold the server's own UTF-8 to account for
		// what the checker sent.
		e.reject(CondParseError, "the body is not valid UTF-8", envelope.CodeParseError, envelope.CodeInvalidRequest)
		amb := "T-ERR-1 is open here: RFC 8259 §8.2 leaves a receiver's handling of invalid UTF-8 open, and the spec's UTF-8 rule binds the sender"
		e.Error, e.Code, e.StatusWant = open(amb), open(amb), open(amb)
		if req.Valid {
			// The id is readable to a lenient decoder: echoing it is right,
			// leaving it out (a strict parse error) is right too.
			if id := req.Get("id"); id.Type == gjson.String || id.Type == gjson.Number && envelope.IsInteger(id.Raw) {
				e.ID.Echo = []gjson.Result{id}
			}
		}
		return e
	case req.TooDeep:
		// RFC 8259 §9 lets a receiver limit nesting: refusing is as right
		// as serving.
		amb := "RFC 8259 §9: a receiver may limit the nesting depth it accepts"
		e.reject(CondParseError, "the body nests deeper than "+strconv.Itoa(envelope.MaxDepth)+" levels", envelope.CodeParseError, envelope.CodeInvalidRequest, envelope.CodeInvalidParams)
		e.Error, e.Code, e.StatusWant, e.ID.Lost = open(amb), open(amb), open(amb), Want{}
		return e
	case !req.Valid:
		e.reject(CondParseError, "the body is not valid JSON", envelope.CodeParseError)
		return e
	case req.IsArray() && f.Speaks() == envelope.V20250326:
		// 2025-03-26 has batches (T-V0326-1): served or refused with a
		// JSON-RPC error, but never a crash.
		amb := "T-V0326-1: a 2025-03-26 server serves a batch, or refuses one it does not support with an error whose code the spec does not fix"
		e.reject(CondBatch, "the body is a JSON array (batch)", envelope.CodeInvalidRequest)
		e.Reply, e.Error, e.Code, e.ID.Other = open(amb), Want{}, open(amb), open(amb)
		e.Status, e.StatusWant, e.AnyStatus = nil, Want{}, true
		switch owes := owesAnswer(req.Root()); {
		case owes:
			// A 2025-03-26 server MUST support receiving batches, and a
			// request in one is answered like any other (JSON-RPC §6).
			e.Reply = must("T-V0326-1")
		case envelope.NonEmpty(req.Root()):
			// Notifications alone: JSON-RPC §6 returns nothing at all.
			e.Reply = Want{}
		case ex.Transport == envelope.Stdio:
			// An empty batch: JSON-RPC §6 answers it with one error, and
			// stdio has no other reading (review rev34).
			e.Reply = must("T-V0326-1: JSON-RPC §6 answers an empty batch with one error")
		}
		// Over HTTP an empty batch stays open: a 2025-03-26 HTTP server
		// may read it as input of no requests, owed 202 (T-V0326-3).
		return e
	case req.IsArray():
		amb := "AMB-7: the reaction to a batch is unspecified"
		e.reject(CondBatch, "the body is a JSON array (batch)", envelope.CodeInvalidRequest)
		e.Reply, e.Error, e.Code, e.StatusWant, e.ID.Other = open(amb), open(amb), open(amb), open(amb), open(amb)
		return e
	case !req.IsObject():
		e.reject(CondInvalidRequest, "the body is not a JSON object", envelope.CodeInvalidRequest)
		return e
	}

	id := req.Get("id")
	hasID := id.Exists()
	readable := id.Type == gjson.String || id.Type == gjson.Number && envelope.IsInteger(id.Raw) && (!rd.strictInt || envelope.PlainInteger(id.Raw))
	if readable {
		e.ID.Echo = []gjson.Result{id}
		e.ID.Lost = must("T-RPC-9: the id could be read")
		if envelope.BeyondDouble(id) {
			// RFC 8259 §6 lets a receiver limit the range and precision of
			// numbers: an id it rounds or cannot hold is its reading.
			rule := "RFC 8259 §6: a receiver may limit number precision; an integer beyond 2^53 may not survive"
			e.ID.Lost, e.ID.Rounded = should(rule), should(rule)
		}
	}
	method := req.Get("method")
	if method.Type == gjson.String {
		e.Method = method.Str
	}

	switch {
	case !method.Exists() && (req.Get("result").Exists() || req.Get("error").Exists()):
		e.Condition, e.Detail, e.Reply = CondResponsePosted, "the body is a JSON-RPC response", Want{}
		// Its id names a request of the server's, not one of the
		// client's: an error refusing it as no request may echo the id
		// or, as for any invalid request, give null (JSON-RPC §5).
		e.ID.Lost = Want{}
		switch {
		case e.Version == envelope.V20260728 && http:
			amb := "T-HTTP-3: the reaction to a posted response is unspecified"
			e.Status, e.StatusWant, e.Error = []int{400}, open(amb), open(amb)
		case e.Version == envelope.V20260728:
			e.NoReply = open("T-STDIO-4: a 2026-07-28 client writes no responses; the reaction is unspecified")
		case http:
			e.Status, e.StatusWant, e.NoReply = []int{202}, must("T-HTTP-4"), must("T-HTTP-4")
		default:
			e.NoReply = should("JSON-RPC §5: a response answers nothing")
		}
		return e
	case req.Get("jsonrpc").Type != gjson.String || req.Get("jsonrpc").Str != "2.0":
		e.reject(CondInvalidRequest, `jsonrpc is not "2.0"`, envelope.CodeInvalidRequest)
		e.metaMissingToo(req, http)
		e.malformedID()
		return e
	case !method.Exists():
		e.reject(CondInvalidRequest, "method is missing", envelope.CodeInvalidRequest)
		e.metaMissingToo(req, http)
		e.malformedID()
		e.responseReading(hasID, http)
		return e
	case method.Type != gjson.String:
		e.reject(CondInvalidRequest, "method is not a string", envelope.CodeInvalidRequest)
		e.metaMissingToo(req, http)
		e.malformedID()
		if method.Type == gjson.Null {
			// (Decoders that read a null member as absent, go-sdk's and
			// mcp-go's, see no method at all.)
			e.responseReading(hasID, http)
		}
		return e
	case hasID && !readable && (id.Type == gjson.Null || id.Type == gjson.Number):
		// JSON-RPC allows null and fractional ids; MCP forbids them
		// (T-RPC-3). Refusing is right with any code; serving is lenient
		// and only warns, as long as the id comes back exactly.
		what := "null"
		if id.Type == gjson.Number {
			what = "the number " + id.Raw
			if len(id.Raw) > 24 {
				what = "the number " + id.Raw[:20] + "…"
			}
		}
		e.reject(CondInvalidRequest, "id is "+what+", which MCP forbids (T-RPC-3)", envelope.CodeInvalidRequest)
		e.Error, e.Code, e.AnyCode, e.AnyError = should("T-RPC-3: MCP forbids this id, JSON-RPC allows it"), Want{}, true, true
		e.Status, e.StatusWant, e.AnyStatus = nil, Want{}, true // an error reply passes (DESIGN rulings)
		e.ID.Echo = []gjson.Result{id}
		if id.Type == gjson.Null {
			// JSON-RPC §4 discourages a null id because JSON-RPC 1.0
			// reads it as a notification: a server that stays silent
			// (202 over HTTP) read it so.
			e.Reply = open("JSON-RPC §4: a null id is discouraged, as JSON-RPC 1.0 reads it as a notification")
		}
		return e
	case hasID && !readable:
		e.reject(CondInvalidRequest, "id is "+envelope.Kind(id)+", not a string or integer", envelope.CodeInvalidRequest)
		return e
	}

	if !hasID {
		e.Condition, e.Reply, e.NoReply = CondNotification, Want{}, must("T-RPC-10")
		if http {
			e.Status, e.StatusWant = []int{202}, must("T-HTTP-4")
			if hv, why := e.refusedVersionHeader(rd, f, true); why != "" {
				// T-HTTP-7 refuses a request whose version header the
				// server does not serve with 400; whether a notification's
				// POST is such a request (an HTTP request, or only a
				// JSON-RPC one) the spec does not say: accepting it warns
				// (review rev59), refusing it passes as any 4xx does.
				e.Quote, e.VersionRefused = hv, open("T-HTTP-7 refuses a request whose MCP-Protocol-Version the server does not serve ("+why+"); whether a notification's POST is such a request is open")
			}
		}
		return e
	}
	if p := req.Get("params"); p.Exists() && !p.IsObject() {
		amb := "T-RPC-13: -32600 and -32602 are both defensible"
		codes := []int{envelope.CodeInvalidRequest, envelope.CodeInvalidParams}
		if http && e.Version == envelope.V20260728 {
			// Such params carry no _meta: the version header matches no
			// body version, which -32020 refuses as for a _meta left
			// out (AMB-4).
			amb += "; AMB-4: without _meta the header matches no body version (-32020)"
			codes = append(codes, envelope.CodeHeaderMismatch)
		}
		e.reject(CondInvalidRequest, "params is "+envelope.Kind(p)+", not an object", codes...)
		// Read as invalid params of a valid request, a 200 is as right as
		// the 400 of an invalid request.
		e.Error, e.Code, e.StatusWant = open(amb), open(amb), open(amb)
		if e.Version != envelope.V20260728 {
			// (In 2026-07-28 either reading lacks _meta, whose refusal
			// is 400, T-HTTP-10.)
			e.ReadCodes, e.ReadStatus = append(e.ReadCodes, envelope.CodeInvalidParams), append(e.ReadStatus, 200)
		}
		if !p.IsArray() {
			// Params neither object nor array make no JSON-RPC request
			// at all (JSON-RPC §4.2): an Invalid Request's id may go
			// undetected, as for a missing method.
			e.malformedID()
		}
		if e.Version == envelope.V20260728 {
			// Whichever way it is read, the request carries no _meta, and
			// a 2026-07-28 request without its protocol version is refused
			// (T-LIFE-7), as meta/missing is. (A server that serves
			// 2025-xx clients too has the legacy reading.)
			e.Error = must("T-LIFE-7: a 2026-07-28 request without _meta is refused; params that are no object carry none")
		}
		return e
	}

	if e.Version == envelope.V20260728 && e.Method == "initialize" {
		// A legacy client sends initialize without 2026 _meta or headers;
		// what answers it is the server's era to choose (T-LIFE-14,
		// T-COMPAT-2, T-COMPAT-3), not 2026-07-28's request rules.
		e.unknownMethod(http)
		return e
	}
	if e.Version == envelope.V20260728 {
		if e.modern(ex, rd, http) {
			return e
		}
	} else if hv, why := e.refusedVersionHeader(rd, f, http); why != "" {
		// T-HTTP-7 fixes the status (400), not the code.
		e.reject(CondUnsupportedVersion, why)
		e.Quote, e.StatusWant = hv, must("T-HTTP-7")
		e.ID.Lost = Want{} // refused on a header, maybe before the body is read
		return e
	}

	if !slices.Contains(envelope.Methods(e.Version), e.Method) {
		e.unknownMethod(http)
		if http && envelope.HeaderGet(rd.header, "Mcp-Session-Id") != "" {
			e.inLegacySession()
		}
		return e
	}
	e.Condition = CondCall
	if e.Method == "subscriptions/listen" {
		// A listen stream is long-lived: its response comes only when the
		// server tears the subscription down, after this exchange.
		e.Reply = Want{}
	}
	e.call(http)
	if http && hasID && e.Version != envelope.V20260728 && e.Method != "initialize" &&
		envelope.HeaderGet(rd.header, "Mcp-Session-Id") == "" && f.MayRefuseSession(ex) && sessionShaped(ex) {
		// A request without the session the server issued (or, where the
		// facts do not say, refused in words about a session), refused as
		// T-SESS-2 refuses it: what a fixture that leaves the header out
		// says (session/missing-header), traffic shows alike, so a relay
		// and lint judge it as check does (review rev33).
		e.session("none")
	}
	return e
}

// sessionShaped: ex's reply is a 400 that shows no reading of the body (no
// method's code, no parse error's): the form of T-SESS-2's refusal. A
// reply that read the request is judged as the request's own.
func sessionShaped(ex *envelope.Exchange) bool {
	if ex.Response == nil || ex.Response.Status != 400 {
		return false
	}
	code := gjson.GetBytes(ex.Response.Body, "error.code")
	switch code.Int() {
	case envelope.CodeMethodNotFound, envelope.CodeInvalidParams, envelope.CodeResourceNotFound, envelope.CodeParseError:
		return !code.Exists()
	}
	return true
}

// pingOwed: nothing but the ping itself can explain a refusal of it.
// Before the traffic shows an initialize answered (no facts), the ping
// may precede it, where no server reaction is set (T-LIFE-6). Over HTTP
// a server that relies on sessions refuses any request outside one it
// holds (T-SESS-2, T-SESS-3), a ping too: the ping is owed its result
// only where the server keeps no sessions or the request names one it
// is known to hold.
func pingOwed(ex *envelope.Exchange, e *Expectation, f *Facts) bool {
	if id := e.Request.Get("id"); envelope.BeyondDouble(id) {
		return false // a receiver may refuse an id it cannot hold (bigID)
	}
	if f == nil {
		return false
	}
	if ex.Transport != envelope.HTTP {
		return true
	}
	switch issued, known := f.Sessions(); {
	case !known:
		// A server that keeps sessions may refuse it first.
		return !namesSession(ex)
	case !issued:
		return true
	}
	held, known := f.SessionHeld(envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id"))
	return held && known
}

// malformedID: the request is no valid JSON-RPC 2.0 request object, yet
// its id reads. JSON-RPC §5 gives such an Invalid Request a null id ("an
// error in detecting the id ... e.g. Invalid Request") and MCP excepts
// "malformed input" from echoing it (T-RPC-9, AMB-1): whether the id of
// a message that is not a request was read is the server's reading, so
// a null or absent id only warns; an id other than the request's still fails.
func (e *Expectation) malformedID() {
	if len(e.ID.Echo) > 0 && e.ID.Lost.Level > Open {
		e.ID.Lost = open("AMB-1: JSON-RPC §5 gives an Invalid Request a null id, and MCP excepts malformed input from the echo (T-RPC-9); echoing the readable id lets the client match the error")
	}
}

// responseReading: a message with an id and no method is no request, and
// no response either (it has neither result nor error); a peer that tells
// the two apart by method alone reads it as a malformed response, which
// nothing answers (over HTTP in 2025-xx, a posted response's 202,
// T-HTTP-4; in 2026-07-28 the reaction to a posted response is open,
// T-HTTP-3, and a 202 is no answer of it). JSON-RPC §5.1 reads it as an
// Invalid Request: silence only warns.
func (e *Expectation) responseReading(hasID, http bool) {
	if !hasID {
		return
	}
	e.Reply = should("a message with an id and no method is read as an invalid request (JSON-RPC §5.1: -32600) or as an invalid response, which nothing answers")
	switch {
	case http && e.Version == envelope.V20260728:
		e.StatusWant = open("T-HTTP-3: read as a posted response, whose reaction is unspecified")
	case http:
		e.ReadStatus = append(e.ReadStatus, 202)
	}
}

// reject fills in a condition the server must refuse with one of codes.
func (e *Expectation) reject(c Condition, detail string, codes ...int) {
	e.Condition, e.Detail = c, detail
	// The digest's rule for the condition, where it has one: a wrong
	// answer breaks that rule, not the one the request broke on purpose
	// (an array id breaks T-RPC-3, which binds the sender; answering it
	// -32700 breaks T-ERR-2).
	rule := "JSON-RPC §5.1"
	switch c {
	case CondParseError:
		rule = "T-ERR-1"
	case CondInvalidRequest:
		rule = "T-ERR-2"
	}
	e.Error = must(rule)
	e.Codes = codes
	if len(codes) > 0 {
		e.Code = must(rule)
	}
	// The spec fixes no status for these outside 2026-07-28's own
	// conditions (AMB-6); the strict contract wants 400.
	e.Status, e.StatusWant = []int{400}, contract("contract: a rejection is 400")
}

// eitherFault is why a request with two faults may be answered for
// either: AMB-4 settles it for 2026-07-28; no 2025 page orders them.
func eitherFault(version string) string {
	if version == envelope.V20260728 {
		return "AMB-4: either fault may be answered"
	}
	return "the spec orders neither fault first: either may be answered"
}

// metaMissingToo: a 2026-07-28 invalid request that also lacks its _meta
// protocol version has a second fault, the missing _meta (T-LIFE-7:
// -32602), and over HTTP a version header that matches no body version
// (-32020): the spec orders neither fault first (AMB-4), so their codes
// are right as well.
func (e *Expectation) metaMissingToo(req envelope.Message, http bool) {
	if e.Version != envelope.V20260728 || req.Get(envelope.MetaPath(envelope.MetaProtocolVersion)).Exists() {
		return
	}
	e.Codes = append(e.Codes, envelope.CodeInvalidParams)
	if http {
		e.Codes = append(e.Codes, envelope.CodeHeaderMismatch)
	}
	e.Detail += "; the request also lacks _meta (AMB-4: either fault may be answered)"
}

// unknownMethod: a method the version does not define.
func (e *Expectation) unknownMethod(http bool) {
	if e.Version == envelope.V20260728 && e.Method == "initialize" {
		// A modern-only server refuses it with a code of its choosing
		// (T-LIFE-14); a dual-era server may serve it and switch to legacy
		// semantics (T-COMPAT-2). Neither is fixed from outside.
		// T-LIFE-14, T-COMPAT-2: refused with any code and status (a
		// modern-only HTTP server refuses it with 400 under its header
		// rules, T-COMPAT-3), or served.
		e.Condition, e.Detail = CondLegacyInitialize, "initialize was removed in 2026-07-28"
		e.AnyStatus = true
		return
	}
	e.Condition, e.Detail = CondUnknownMethod, "method "+shortQuote(e.Method)+" is not defined in "+e.Version
	e.Error, e.Codes, e.Code = must("T-ERR-3"), []int{envelope.CodeMethodNotFound}, must("T-ERR-3")
	if http && e.Version == envelope.V20260728 {
		e.Status, e.StatusWant = []int{404}, must("T-HTTP-9")
	}
	switch {
	case e.Version == envelope.V20260728 && envelope.Removed2026(e.Method):
		// T-LIFE-16 is descriptive: a server that still serves the old
		// method is lenient (a warn of it); if it refuses, -32601 (and
		// 404) are fixed by T-ERR-3 (and T-HTTP-9), the MUSTs a wrong
		// code breaks: a description is never failed.
		e.Error = should("T-LIFE-16: 2026-07-28 removed " + shortQuote(e.Method))
		e.Code = must("T-ERR-3")
		if e.StatusWant.Set() {
			e.StatusWant = must("T-HTTP-9")
		}
	case e.extensionsOpen():
		// The request alone cannot tell an unknown method from one an
		// extension the server advertises defines (T-LIFE-17).
		amb := "T-LIFE-17: an extension the server advertises may define the method"
		e.Error, e.Code, e.StatusWant = open(amb), open(amb), soften(e.StatusWant, amb)
	}
}

// inLegacySession softens the unknown method of a 2026-07-28 request (its
// _meta says so) sent over HTTP in a session a legacy initialize opened:
// initialize switched that session to the legacy era (T-COMPAT-2), where
// the method is unknown, but a 2026-07-28 server SHOULD ignore
// Mcp-Session-Id (T-HTTP-18) and may serve the request statelessly. Both
// readings hold. (On stdio T-COMPAT-2 names the process, which has no
// session to ignore.)
func (e *Expectation) inLegacySession() {
	if e.Version == envelope.V20260728 || !slices.Contains(envelope.Methods(envelope.V20260728), e.Method) ||
		e.Request.Get(envelope.MetaPath(envelope.MetaProtocolVersion)).Str != envelope.V20260728 {
		return
	}
	amb := "T-COMPAT-2, T-HTTP-18: a dual-era server may hold the session a legacy initialize opened to that era, or serve a 2026-07-28 request in it statelessly, ignoring the session"
	e.Error, e.Code, e.StatusWant = soften(e.Error, amb), soften(e.Code, amb), soften(e.StatusWant, amb)
}

// extensionsOpen: the server may have extensions that define methods:
// its capabilities are unknown, or declare extensions (2026-07-28) or
// experimental features (2025-xx).
func (e *Expectation) extensionsOpen() bool {
	key := "experimental"
	if e.Version == envelope.V20260728 {
		key = "extensions"
	}
	declared, known := e.Facts.Declares(key)
	return !known || declared
}

// CapabilityOf is the server capability a method needs (T-ERR-3,
// T-LIFE-4); "" for methods every server has.
func CapabilityOf(method string) string {
	switch method {
	case "tools/list", "tools/call":
		return "tools"
	case "prompts/list", "prompts/get":
		return "prompts"
	case "resources/list", "resources/templates/list", "resources/read":
		return "resources"
	case "resources/subscribe", "resources/unsubscribe":
		return "resources.subscribe"
	case "tasks/get", "tasks/result":
		return "tasks"
	case "tasks/list":
		// 2025-11-25 declares these two one by one (ServerCapabilities).
		return "tasks.list"
	case "tasks/cancel":
		return "tasks.cancel"
	case "completion/complete":
		return "completions"
	case "logging/setLevel":
		return "logging"
	}
	return ""
}

// logLevels are the levels of T-LOG-1 and T-LOG-3.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// call refines a well-formed method call with what the request and the
// facts fix: undeclared capabilities, unknown tools, arguments the tool's
// own schema forbids, bad log levels.
func (e *Expectation) call(http bool) {
	req := &e.Request
	if c := CapabilityOf(e.Method); c != "" {
		if declared, known := e.Facts.Declares(c); known && !declared {
			e.Condition, e.Detail = CondUndeclared, "the server did not declare the "+c+" capability"
			e.Codes = []int{envelope.CodeMethodNotFound}
			if e.Version == envelope.V20260728 {
				// The schema's MethodNotFoundError text counts such a
				// method as one the server does not implement, so a
				// refusal is -32601, at T-HTTP-9's 404 (the status
				// HTTP1002 ties to that code). Serving it only warns:
				// the text is descriptive, the MUSTs (JSON-RPC's, T-HTTP-9)
				// bind a method the server does not implement, and one
				// that answers it (an SDK that routes every list method,
				// the official go-sdk among them) implements it.
				e.Error, e.Code = should("T-ERR-3"), must("T-ERR-3")
				if req.Get("params.cursor").Exists() {
					// A server that implements the method refuses a cursor
					// it never gave as such (T-PAGE-3): that reading's code.
					e.also("the server may implement the method it did not declare, and refuse the cursor (T-PAGE-1)", envelope.CodeInvalidParams)
				}
			} else {
				// T-COMP-2 names -32601 for completion alone; the other
				// features' pages name no code, only the capability rule.
				// Serving it warns: T-LIFE-4's MUST is that the server
				// offers only what it advertises, and whether answering a
				// client that asks anyway is offering is not settled (the
				// digest's test of T-LIFE-4 is what the server initiates).
				// Servers whose SDK answers every list method (an empty
				// list) would otherwise fail for a request they never
				// invited.
				code := "T-LIFE-4"
				if c == "completions" {
					code = "T-COMP-2, T-LIFE-4"
				}
				e.Error, e.Code = should("T-LIFE-4"), should(code)
			}
			// The params may be at fault too: the spec orders neither
			// fault first (AMB-4 in 2026-07-28; no 2025 page orders
			// them either), so the params' code is right as well,
			// with the status it may come with.
			// A server without a capability has no tool, prompt or
			// resource of that kind: one the request names (a completion's
			// prompt too) is unknown to it, a params fault as certain as a
			// missing member, answered with its own code (-32602, or a
			// 2025 resource's -32002).
			probe := Expectation{Version: e.Version, Method: e.Method, Request: e.Request, Facts: e.Facts.holdsNone()}
			probe.params(req)
			if len(probe.Codes) > 0 {
				e.Codes = union(e.Codes, probe.Codes)
				e.Detail += "; " + probe.Detail + " (" + eitherFault(e.Version) + ")"
			}
			if t := req.Get("params.taskId"); strings.HasPrefix(e.Method, "tasks/") && t.Exists() {
				// So is the task the request names, to a server that does
				// not declare what it asks: an unknown taskId is -32602
				// (T-TASK-3; review rev49).
				e.Codes = union(e.Codes, []int{envelope.CodeInvalidParams})
				e.Detail += "; task " + valueText(t) + " may be unknown to it (T-TASK-3; " + eitherFault(e.Version) + ")"
			}
			return
		}
	}
	e.params(req)
	switch e.Method {
	case "initialize":
		e.initialize(req)
	case "subscriptions/listen":
		// The response ends the subscription: it may come long after
		// the checker stops reading (T-SUB-4).
		e.Reply, e.Stream = Want{}, true
	}
	if declared, known := e.Facts.Declares("logging"); e.Version == envelope.V20260728 && (declared || !known) {
		// (A server that declared no logging sends no log messages: the
		// logging page's rule on the level is not its to keep.)
		if l := req.Get(envelope.MetaPath(envelope.MetaLogLevel)); l.Exists() && (l.Type != gjson.String || !slices.Contains(logLevels, l.Str)) {
			e.invalidParams("_meta logLevel "+valueText(l)+" is not a log level", should("T-LOG-3"))
		}
	}
}

// params refines a call by what its params fix: unknown tools and
// prompts, arguments a tool's own schema forbids, missing arguments.
func (e *Expectation) params(req *envelope.Message) {
	switch e.Method {
	case "tools/call":
		e.toolCall(req)
	case "prompts/get":
		e.getPrompt(req)
	case "resources/read":
		e.readResource(req)
	case "completion/complete":
		e.complete(req)
	case "logging/setLevel":
		if l := req.Get("params.level"); l.Type != gjson.String || !slices.Contains(logLevels, l.Str) {
			e.invalidParams("level "+valueText(l)+" is not a log level", should("T-LOG-1"))
		}
	}
}

func (e *Expectation) invalidParams(detail string, w Want) {
	e.Condition, e.Detail = CondInvalidParams, detail
	e.Error, e.Codes, e.Code = w, []int{envelope.CodeInvalidParams}, w
}

func (e *Expectation) toolCall(req *envelope.Message) {
	name, args := req.Get("params.name"), req.Get("params.arguments")
	switch {
	case name.Type != gjson.String:
		e.Condition, e.Detail = CondMalformedCall, "params.name is "+envelope.Kind(name)+", not a string"
	case args.Exists() && !args.IsObject():
		e.Condition, e.Detail = CondMalformedCall, "params.arguments is "+envelope.Kind(args)+", not an object"
	case e.Version == envelope.V20260728 && req.Get("params.inputResponses").Exists() && !req.Get("params.inputResponses").IsObject():
		// T-MRTR-7: the retry's responses are a map; the code is not
		// pinned (AMB-12), -32602 the natural one.
		e.Condition, e.Detail = CondMalformedCall, "params.inputResponses is "+envelope.Kind(req.Get("params.inputResponses"))+", not an object (T-MRTR-7)"
	}
	if e.Condition == CondMalformedCall {
		e.Error, e.Codes, e.Code = should("T-TOOL-7"), []int{envelope.CodeInvalidParams}, open("T-TOOL-7 does not pin the code")
		// A server that decodes the whole request into its types before
		// it dispatches finds the request itself unreadable: -32600, and
		// that refusal's 400, are its reading (ERR1002 warns of it once).
		e.also("a server that decodes params into the method's types before dispatch refuses a field of the wrong JSON type as an invalid request", envelope.CodeInvalidRequest)
		return
	}
	f := e.Facts
	t := f.Tool(name.Str)
	if t == nil {
		if f != nil && f.ToolsListed {
			e.Condition, e.Detail = CondUnknownTool, "the server lists no tool "+shortQuote(name.Str)
			e.Error, e.Codes, e.Code = should("T-TOOL-6"), []int{envelope.CodeInvalidParams}, should("T-TOOL-6")
		}
		return
	}
	in := []byte("{}")
	if args.Exists() {
		in = []byte(args.Raw)
	}
	support, withTask := gjson.GetBytes(t.Raw, "execution.taskSupport").Str, envelope.AsksTask(req)
	if t := req.Get("params.task"); e.Version == envelope.V20251125 && t.Exists() && !withTask {
		// A task that is no TaskMetadata object ("task": null) asks for
		// no task, and is malformed params as much: a refusal with
		// -32602 is right under that reading (review rev50).
		e.ReadCodes = append(e.ReadCodes, envelope.CodeInvalidParams)
	}
	taskRequired := e.Version == envelope.V20251125 && support == "required" && !withTask
	taskForbidden := e.Version == envelope.V20251125 && withTask && (support == "" || support == "forbidden")
	if taskForbidden && !t.Rejects(in, e.Version) {
		// T-TASK-2 asks -32601 of a task-augmented call of a tool that
		// does not take tasks. A server that does not declare
		// task-augmented tools/call at all processes the request normally
		// and ignores the task (the tasks page's capability negotiation),
		// so there its result is as right as the refusal: nothing is
		// expected of whether it errs, only of the code if it does.
		e.Condition, e.Detail = CondTaskForbidden, "tool "+shortQuote(name.Str)+" does not declare task support and the call carries a task"
		e.Error, e.Codes, e.Code = should("T-TASK-2"), []int{envelope.CodeMethodNotFound}, should("T-TASK-2")
		if declared, known := f.Declares("tasks.requests.tools.call"); !known || !declared {
			e.Error = Want{}
		}
		// A tool run so returns its own result, held to its
		// outputSchema (T-TOOL-10) like any other.
		e.Tool = &ToolCall{Name: t.Name, TaskRefused: true, Judged: true, OutputSchema: t.Output}
		return
	}
	if taskRequired && !t.Rejects(in, e.Version) {
		// T-TASK-1: such a tool does not run without a task; the tasks
		// page's protocol errors name -32600 for the same case (AMB-14).
		// With arguments its schema forbids as well, either fault may be
		// answered first: the call is judged as a refusal below, and
		// -32601 is one more right form of it.
		e.Condition, e.Detail = CondTaskRequired, "tool "+shortQuote(name.Str)+" declares taskSupport \"required\" and the call carries no task"
		e.Error, e.Codes, e.Code = must("T-TASK-1"), []int{envelope.CodeMethodNotFound}, must("T-TASK-1")
		e.also("AMB-14: the tasks page's protocol errors give -32600 for a task-required request without a task", envelope.CodeInvalidRequest)
		if declared, known := f.Declares("tasks.requests.tools.call"); known && !declared {
			// Without tasks.requests.tools.call a client MUST NOT use
			// tasks on the server's tools, whatever taskSupport says
			// (the tasks page, Tool-Level Negotiation): the server's two
			// declarations disagree, so serving the call and refusing it
			// by the tool's own word both hold, and neither fails.
			amb := "the server declares no tasks.requests.tools.call, so clients disregard taskSupport (T-TASK-1 binds a server that does)"
			e.Error, e.Code = open(amb), open(amb)
		}
		return
	}
	e.Tool = &ToolCall{Name: t.Name, TaskRefused: taskRequired || taskForbidden}
	probs, agree, err := t.CheckArgs(in, e.Version)
	e.Tool.Judged = err == nil
	if err != nil || !agree {
		// SCH1002 judges a schema that does not compile; arguments beyond
		// the validator's bounds, or that 2025-06-18's two readings judge
		// apart (AMB-15), make running the tool and refusing it both right.
		return
	}
	if len(probs) > 0 {
		e.Tool.Refusal, e.Tool.Problems = must("T-TOOL-8; tools page: servers MUST validate tool inputs"), probs
		if w, ok := t.lenient(args, e.Version); ok {
			e.Tool.Refusal = w
		}
		return
	}
	e.Tool.OutputSchema = t.Output
	e.ParamsSound = true
	// T-TOOL-13: a failure inside the tool (an API down, a rule of the
	// business) comes back as a result with isError. Only -32603 and codes
	// outside the version's table say that much: each other code of the
	// table names a condition of its own.
	e.Detail = "tool " + shortQuote(t.Name) + " with arguments its inputSchema accepts"
	e.Served, e.ServedAsJSONRPC = should("T-TOOL-13: a failure inside the tool comes back as a result with isError, not a JSON-RPC error"), true
	for _, r := range envelope.CodeTable(e.Version) {
		if r.Code != envelope.CodeInternalError {
			e.ServedExcept = append(e.ServedExcept, r.Code)
		}
	}
}

// lenient is how sure a refusal of args, which the tool's inputSchema
// rejects, is owed, where a validating server may read them so that the
// schema accepts them and run the tool on that reading; ok is false when
// no such reading exists.
func (t *Tool) lenient(args gjson.Result, version string) (w Want, ok bool) {
	if bare, dropped := withoutNulls(args); dropped && !t.Rejects(bare, version) {
		// Only nulls are wrong: a client (a model, often) sent null
		// for arguments it meant to leave out, and a server that reads
		// null as absent ran what the schema allows.
		return open("a null argument is widely read as an absent one; the inputSchema forbids the null (T-TOOL-8)"), true
	}
	input := gjson.GetBytes(t.Raw, "inputSchema")
	if bare, dropped := withoutUndeclared(args, input); dropped && !t.Rejects(bare, version) {
		// Only arguments the schema does not declare are wrong, and
		// the schema closes the object: servers validating with zod
		// (whose JSON Schema says additionalProperties false) or
		// pydantic drop unknown keys and run the tool on the rest,
		// which the schema allows. Such a server did validate; only
		// the form T-TOOL-8 asks for is missed.
		return should("T-TOOL-8: the only fault is arguments the inputSchema does not declare, which many servers drop before running the tool"), true
	}
	if conv, converted := coerced(args, input); converted && !t.Rejects(conv, version) {
		// Only values a lax validator converts are wrong ("2" for an
		// integer, "true" for a boolean): pydantic, the Python SDK's
		// validator, converts them by default and runs the tool on
		// values the schema allows. Such a server did validate.
		return should("T-TOOL-8: the only fault is values a lax validator (pydantic's default) converts to the declared type"), true
	}
	return Want{}, false
}

// SurelyRefused: a validating server refuses args, whatever reading it
// takes. The schema rejects them (Rejects), and no lenient reading a
// validating server may take (nulls as absent, undeclared keys dropped,
// lax conversion) turns them into arguments it accepts and would run the
// tool on. Only such arguments may go to a tool that may be destructive.
func (t *Tool) SurelyRefused(args []byte, version string) bool {
	if !t.Rejects(args, version) {
		return false
	}
	_, runs := t.lenient(gjson.ParseBytes(args), version)
	return !runs
}

// withoutNulls is the arguments object args without its members whose
// value is null; ok is false when it has none.
func withoutNulls(args gjson.Result) (out []byte, ok bool) {
	return keepMembers(args, func(_ string, v gjson.Result) bool { return v.Type != gjson.Null })
}

// keepMembers is the object obj with only the members keep keeps;
// dropped tells whether any went.
func keepMembers(obj gjson.Result, keep func(name string, v gjson.Result) bool) (out []byte, dropped bool) {
	out = append(out, '{')
	obj.ForEach(func(k, v gjson.Result) bool {
		if !keep(k.Str, v) {
			dropped = true
			return true
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, k.Raw...), ':'), v.Raw...)
		return true
	})
	return append(out, '}'), dropped
}

// coerced is the arguments object args with each top-level value a lax
// validator converts to its property's declared type converted, in the
// forms pydantic's lax mode reads (pydantic 2): a string holding a
// decimal number where the type is number (an exponent too) or integer
// (digits, or a decimal with a zero fraction; no exponent), spaces
// around it trimmed; a string of truth ("true", "no", "1", as written)
// or the numbers 0 and 1 where it is boolean. A property held to const
// or enum (pydantic's Literal and Enum, which convert nothing) keeps its
// value. ok is false when nothing was converted.
func coerced(args, schema gjson.Result) (out []byte, ok bool) {
	if !args.IsObject() {
		return nil, false
	}
	props := schema.Get("properties")
	property := func(name string) (p gjson.Result) {
		props.ForEach(func(k, v gjson.Result) bool {
			if k.Str == name {
				p = v
				return false
			}
			return true
		})
		return p
	}
	out = append(out, '{')
	args.ForEach(func(k, v gjson.Result) bool {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(out, k.Raw...), ':')
		if conv := laxConvert(v, property(k.Str)); conv != "" {
			ok = true
			out = append(out, conv...)
		} else {
			out = append(out, v.Raw...)
		}
		return true
	})
	return append(out, '}'), ok
}

// laxConvert is v as a lax validator converts it for the property schema
// prop (JSON text), or "" when it converts nothing: a value of an allowed
// type stays as it is.
func laxConvert(v gjson.Result, prop gjson.Result) string {
	if !prop.IsObject() || prop.Get("const").Exists() || prop.Get("enum").Exists() {
		return ""
	}
	var types []string
	if t := prop.Get("type"); t.IsArray() {
		for _, x := range t.Array() {
			types = append(types, x.Str)
		}
	} else {
		types = append(types, t.Str)
	}
	has := func(t string) bool { return slices.Contains(types, t) }
	switch {
	case v.Type == gjson.String && !has("string") && (has("number") || has("integer")):
		n := strings.TrimSpace(v.Str)
		if n == "" || !gjson.Valid(n) || gjson.Parse(n).Type != gjson.Number {
			return ""
		}
		if !has("number") && strings.ContainsAny(n, "eE") {
			return "" // pydantic reads no exponent as an integer
		}
		return n
	case v.Type == gjson.String && !has("string") && has("boolean"):
		switch strings.ToLower(v.Str) {
		case "true", "t", "yes", "y", "on", "1":
			return "true"
		case "false", "f", "no", "n", "off", "0":
			return "false"
		}
	case v.Type == gjson.Number && !has("number") && !has("integer") && has("boolean"):
		switch v.Raw {
		case "1":
			return "true"
		case "0":
			return "false"
		}
	}
	return ""
}

// withoutUndeclared is the arguments object args without the members its
// inputSchema does not declare (in properties, or by a patternProperties
// pattern), where the schema closes the object with additionalProperties
// false and declares keys nowhere else; and so, below it, for every
// declared member's object and every element of an array whose schema
// gives one items schema: zod strips unknown keys from each object it
// parses, and pydantic ignores extras in each model, not only at the
// top. ok is false when no member went.
func withoutUndeclared(args, schema gjson.Result) (out []byte, ok bool) {
	if !args.IsObject() {
		return nil, false
	}
	return stripUndeclared(nil, args, schema)
}

// stripUndeclared appends v to out without the members withoutUndeclared
// drops; dropped tells whether any went. Its depth is v's, which the
// parser bounds (envelope.MaxDepth).
func stripUndeclared(out []byte, v, schema gjson.Result) (_ []byte, dropped bool) {
	if !schema.IsObject() || !plainKeys(schema) {
		// The schema may declare (or constrain) keys elsewhere than
		// properties: which are undeclared is not plain to see, and
		// dropping a declared one would hide its wrong value.
		return append(out, v.Raw...), false
	}
	switch {
	case v.IsObject():
		closed := schema.Get("additionalProperties").Type == gjson.False
		props, patterns := schema.Get("properties"), schema.Get("patternProperties")
		out = append(out, '{')
		n := 0
		v.ForEach(func(k, val gjson.Result) bool {
			sub, declared := property(props, k.Str)
			if !declared {
				declared = matchesPattern(patterns, k.Str)
			}
			if closed && !declared {
				dropped = true
				return true
			}
			if n++; n > 1 {
				out = append(out, ',')
			}
			out = append(append(out, k.Raw...), ':')
			if sub.Exists() {
				var d bool
				out, d = stripUndeclared(out, val, sub)
				dropped = dropped || d
			} else {
				out = append(out, val.Raw...)
			}
			return true
		})
		return append(out, '}'), dropped
	case v.IsArray():
		items := schema.Get("items")
		if !items.IsObject() || schema.Get("prefixItems").Exists() || schema.Get("contains").Exists() ||
			schema.Get("unevaluatedItems").Exists() || schema.Get("additionalItems").Exists() {
			// One schema does not govern every element (a tuple's
			// prefixItems, contains): which element a member is
			// undeclared in is not plain to see.
			return append(out, v.Raw...), false
		}
		out = append(out, '[')
		n := 0
		v.ForEach(func(_, e gjson.Result) bool {
			if n++; n > 1 {
				out = append(out, ',')
			}
			var d bool
			out, d = stripUndeclared(out, e, items)
			dropped = dropped || d
			return true
		})
		return append(out, ']'), dropped
	}
	return append(out, v.Raw...), false
}

// plainKeys: schema declares an object's keys only in properties and
// patternProperties; these others may declare or constrain them too.
func plainKeys(schema gjson.Result) bool {
	for _, k := range [...]string{"allOf", "anyOf", "oneOf", "not", "$ref", "$dynamicRef", "if", "then", "else",
		"dependentSchemas", "dependencies", "propertyNames", "unevaluatedProperties"} {
		if schema.Get(k).Exists() {
			return false
		}
	}
	return true
}

// property is the schema properties gives name (the first, as a
// validator reads a duplicate), and whether it gives one.
func property(props gjson.Result, name string) (sub gjson.Result, ok bool) {
	props.ForEach(func(k, v gjson.Result) bool {
		if k.Str == name {
			sub, ok = v, true
		}
		return !ok
	})
	return sub, ok
}

// matchesPattern: a patternProperties pattern matches name; a pattern Go
// cannot read may, and counts as matching.
func matchesPattern(patterns gjson.Result, name string) bool {
	found := false
	patterns.ForEach(func(k, _ gjson.Result) bool {
		re, err := regexp.Compile(k.Str)
		found = err != nil || re.MatchString(name)
		return !found
	})
	return found
}

// modernRules are the rules a 2026-07-28 per-request fault breaks, by what
// they fix: that it is refused, its code, its HTTP status. Each want names
// the faults' own rules, so a breach counts against the rule that set it
// (a header mismatch answered 200 breaks T-HDR-2, not T-LIFE-9).
type modernRules struct{ refusal, code, status string }

var (
	httpVersionHeader = modernRules{"T-HTTP-8, T-HDR-2", "T-ERR-12, T-HTTP-8", "T-HTTP-8, T-HDR-2"}
	// A value in the Base64 sentinel's form that mismatches (an
	// uppercase marker, a payload of another name) breaks T-HDR-2 and
	// no more that is sure: a server that served it may have decoded
	// what it must not (T-HDR-3), or compare no header at all.
	standardHeader  = modernRules{"T-HDR-2", "T-ERR-12, T-HDR-2", "T-HDR-2"}
	versionUnserved = modernRules{"T-LIFE-9", "T-ERR-14, T-LIFE-9", "T-HTTP-8, T-LIFE-9"}
	metaMissing     = modernRules{"T-LIFE-7", "T-LIFE-7, T-HTTP-10", "T-HTTP-10, T-LIFE-7"}

	// An Mcp-Param-* header missing or differing for a non-null argument
	// breaks T-HDR-4; one with invalid characters T-HDR-6.
	paramHeader        = modernRules{"T-HDR-4", "T-ERR-12, T-HDR-4", "T-HDR-4"}
	paramHeaderInvalid = modernRules{"T-HDR-6", "T-ERR-12, T-HDR-6", "T-HDR-6"}
)

// unlistedName is the tool, prompt or resource the request calls for by
// a name the server's own listing lacks ("tool \"x\""), or "" when the
// facts do not show it is unknown. A resource is unknown only where the
// server listed its resources and templates to the end and has no
// template (review rev91: AMB-4 was applied to tools and prompts alone).
func (e *Expectation) unlistedName(req *envelope.Message) string {
	f := e.Facts
	if f == nil {
		return ""
	}
	if uri := req.Get("params.uri"); e.Method == "resources/read" && uri.Type == gjson.String {
		if f.ResourcesListed && f.TemplatesListed && len(f.Templates) == 0 && !slices.Contains(f.Resources, uri.Str) {
			return "resource " + shortQuote(uri.Str)
		}
		return ""
	}
	name := req.Get("params.name")
	if name.Type != gjson.String {
		return ""
	}
	switch {
	case e.Method == "tools/call" && f.ToolsListed && f.Tool(name.Str) == nil:
		return "tool " + shortQuote(name.Str)
	case e.Method == "prompts/get" && f.PromptsListed && f.prompt(name.Str) == nil:
		return "prompt " + shortQuote(name.Str)
	}
	return ""
}

// with joins the rules of two faults the request has at once.
func (m modernRules) with(o modernRules) modernRules {
	join := func(a, b string) string {
		ids := strings.Split(a, ", ")
		for _, id := range strings.Split(b, ", ") {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		return strings.TrimPrefix(strings.Join(ids, ", "), ", ")
	}
	return modernRules{join(m.refusal, o.refusal), join(m.code, o.code), join(m.status, o.status)}
}

// modern applies the 2026-07-28 per-request rules: the _meta fields on
// every transport, the standard headers on HTTP. When several faults
// coexist the spec sets no precedence (AMB-4), so every applicable code
// is accepted, the literal reading first. It reports whether the request
// must be refused.
func (e *Expectation) modern(ex *envelope.Exchange, rd reading, http bool) bool {
	req := &rd.body
	ver := req.Get(envelope.MetaPath(envelope.MetaProtocolVersion))
	caps := req.Get(envelope.MetaPath(envelope.MetaClientCapabilities))

	var codes []int
	var details []string
	add := func(code int, detail string) {
		if !slices.Contains(codes, code) {
			codes = append(codes, code)
		}
		if detail != "" {
			details = append(details, detail)
		}
	}
	cond := Condition("")
	headerUnserved, onlyHeaderMissing := false, false
	// headerMethodUnserved: Mcp-Method names a method the server does not
	// implement (T-HTTP-9: 404 and -32601).
	headerMethodUnserved := false
	// preBody: a fault a server can see on the headers alone, so it may
	// refuse before reading the body, and then has no id to echo (DESIGN:
	// transport-level rejections).
	preBody := false
	var cited modernRules // the rules of every fault found
	set := func(c Condition, r modernRules) {
		if cond == "" {
			cond = c
		}
		cited = cited.with(r)
	}

	if http {
		h := rd.header
		hv, hasHV := envelope.HeaderValue(h, "Mcp-Protocol-Version")
		hv = trimOWS(hv)
		// A header naming a version the server cannot serve can be refused
		// on the header alone, before the body is read.
		preBody = !hasHV || !envelope.KnownVersion(hv)
		switch {
		case !hasHV:
			set(CondHeaderMismatch, httpVersionHeader)
			add(envelope.CodeHeaderMismatch, "MCP-Protocol-Version is missing")
			onlyHeaderMissing = true
		case ver.Type == gjson.String && hv != ver.Str:
			set(CondHeaderMismatch, httpVersionHeader)
			add(envelope.CodeHeaderMismatch, "MCP-Protocol-Version differs from _meta")
			e.Quote = hv
			headerUnserved = ver.Str == envelope.V20260728
		}
		if mv, ok := envelope.HeaderValue(h, "Mcp-Method"); !ok {
			set(CondHeaderMismatch, standardHeader)
			add(envelope.CodeHeaderMismatch, "Mcp-Method is missing")
			preBody = true
		} else if mv = trimOWS(mv); mv != e.Method {
			set(CondHeaderMismatch, standardHeader)
			add(envelope.CodeHeaderMismatch, "Mcp-Method differs from the body's method")
			e.Quote = mv
			headerMethodUnserved = !slices.Contains(envelope.Methods(envelope.V20260728), mv)
			if c := CapabilityOf(mv); c != "" {
				if declared, known := e.Facts.Declares(c); known && !declared {
					headerMethodUnserved = true
				}
			}
		}
		// Mcp-Name mirrors a body value; a body without it is malformed
		// params (-32602), which is not a header fault. But the header is
		// required on these methods (T-HDR-1), and a missing required
		// header, or one whose value the body does not hold, gets -32020
		// (T-HDR-2, a MUST): the request has two faults and the spec
		// orders neither first (AMB-4: accept either), so -32020 is as
		// right as -32602, under any code a fixture names for the body's
		// fault.
		if field := envelope.NameField(e.Method); field != "" && req.Get("params."+field).Type != gjson.String {
			e.ReadCodes = append(e.ReadCodes, envelope.CodeHeaderMismatch)
		} else if field != "" {
			want := req.Get("params." + field)
			nv, ok := envelope.HeaderValue(h, "Mcp-Name")
			nv = trimOWS(nv)
			switch {
			case !ok:
				set(CondHeaderMismatch, standardHeader)
				add(envelope.CodeHeaderMismatch, "Mcp-Name is missing")
				preBody = true
			case !envelope.ValidHeaderValue(nv):
				set(CondHeaderMismatch, standardHeader)
				add(envelope.CodeHeaderMismatch, "Mcp-Name has invalid characters")
				preBody = true
			default:
				got, decoded := envelope.DecodeHeaderValue(nv, rd.b64)
				if !decoded || got != want.Str {
					set(CondHeaderMismatch, standardHeader)
					add(envelope.CodeHeaderMismatch, "Mcp-Name differs from params."+field)
					e.Quote = nv
					// A sentinel that decodes to nothing is visible on the
					// header alone, as invalid characters are (review
					// rev91: its refusal without an id failed RPC1004).
					preBody = preBody || !decoded
				} else if strings.ContainsRune(nv, '\t') {
					// A tab is legal in an HTTP field value, but a control
					// character T-HDR-3 has the client encode: a server
					// may take it for an invalid character and refuse it
					// (T-HDR-2), as it may read it as the name.
					e.ReadCodes = append(e.ReadCodes, envelope.CodeHeaderMismatch)
					e.ReadStatus = append(e.ReadStatus, 400)
				}
			}
		}
		if e.Method == "tools/call" {
			faults, numeric := paramHeaderFaults(e.Facts, req, h, rd.b64)
			for _, pf := range faults {
				set(CondHeaderMismatch, pf.rules)
				add(envelope.CodeHeaderMismatch, pf.detail)
				if pf.invalid {
					// As for Mcp-Name: a server may refuse invalid
					// characters in any Mcp-* header before it reads the
					// body that says which tool the header mirrors.
					preBody = true
				}
			}
			if numeric {
				// T-HDR-5 (SHOULD): 42.0 for 42 should be accepted; a
				// server comparing text refuses it, which only warns.
				e.also("T-HDR-5: integer headers SHOULD compare as numbers", envelope.CodeHeaderMismatch)
			}
		}
		if len(codes) > 1 || len(details) > 1 {
			onlyHeaderMissing = false
		}
	}
	switch {
	case !ver.Exists():
		set(CondMissingMeta, metaMissing)
		add(envelope.CodeInvalidParams, "_meta "+envelope.MetaProtocolVersion+" is missing")
		if http {
			add(envelope.CodeHeaderMismatch, "") // AMB-4: the header no longer matches the body either
		}
		onlyHeaderMissing = false
	case ver.Type != gjson.String || ver.Str == "":
		// Present, and no version string (null, a number, an empty
		// string): malformed params (-32602, as T-LIFE-7 has a missing
		// one refused) as much as a version the server does not know
		// (-32022, T-LIFE-9; a Go server reads null as ""): either
		// reading is defensible, and either code passes (review rev48).
		what := envelope.Kind(ver)
		if ver.Type == gjson.String {
			what = "an empty string"
		}
		set(CondMissingMeta, metaMissing)
		add(envelope.CodeInvalidParams, "_meta "+envelope.MetaProtocolVersion+" is "+what+", not a version string")
		add(envelope.CodeUnsupportedVer, "")
		if http {
			add(envelope.CodeHeaderMismatch, "") // AMB-4: the header matches no body version either
		}
		onlyHeaderMissing = false
	case ver.Str != envelope.V20260728:
		set(CondUnsupportedVersion, versionUnserved)
		add(envelope.CodeUnsupportedVer, "protocol version "+ver.Str+" is not served")
		if e.Quote == "" {
			e.Quote = ver.Str
		}
		onlyHeaderMissing = false
	}
	if !caps.IsObject() {
		set(CondMissingMeta, metaMissing)
		add(envelope.CodeInvalidParams, "_meta "+envelope.MetaClientCapabilities+" is missing or not an object")
		onlyHeaderMissing = false
	}
	if cond == "" {
		return false
	}
	e.Condition, e.Codes, e.Detail = cond, codes, strings.Join(details, "; ")
	e.Error, e.Code = must(cited.refusal), must(cited.code)
	if http {
		e.Status, e.StatusWant = []int{400}, must(cited.status)
		if caps.Exists() && !caps.IsObject() && len(details) == 1 {
			// The 400 is for a request missing a required field: one
			// present with the wrong type is invalid params, whose status
			// the spec leaves open. The -32602 stays a MUST.
			e.StatusWant = open("T-HTTP-10 names missing _meta fields; a client capabilities value of the wrong type is invalid params, whose HTTP status is open (T-HTTP-11, AMB-6)")
		}
	}
	if c := CapabilityOf(e.Method); c != "" {
		if declared, known := e.Facts.Declares(c); known && !declared {
			// The method is of a capability the server did not declare
			// too (T-ERR-3): a server that dispatches on the method first
			// refuses it so, and the spec orders neither fault first
			// (AMB-4).
			// (-32601 with its 404, never the other fault's code with it.)
			e.ReadCodes = append(e.ReadCodes, envelope.CodeMethodNotFound)
			e.Detail += "; the server did not declare the " + c + " capability (AMB-4: either fault may be answered)"
			if http {
				e.ReadStatus = append(e.ReadStatus, 404)
			}
		}
	}
	if headerMethodUnserved {
		// A server that routes on Mcp-Method finds no such method, and
		// answers it as T-HTTP-9 asks (404, -32601) before it reads the
		// body whose method the header should mirror: both rules are
		// MUSTs, and the spec orders neither first (AMB-4).
		e.ReadCodes = append(e.ReadCodes, envelope.CodeMethodNotFound)
		e.Detail += "; Mcp-Method names a method the server does not implement, which T-HTTP-9 answers 404 and -32601 (AMB-4: either fault may be answered)"
		if http {
			e.ReadStatus = append(e.ReadStatus, 404)
		}
	}
	if what := e.unlistedName(req); what != "" {
		// The request names a tool, prompt or resource the server does
		// not list too (T-TOOL-6, T-PROMPT-1, T-RES-1): a server that looks the name up
		// first answers -32602, with the status a method error may have
		// (T-HTTP-11: 200 or a 4xx), and the spec orders neither fault
		// first (AMB-4).
		e.ReadCodes = append(e.ReadCodes, envelope.CodeInvalidParams)
		e.Detail += "; the server lists no " + what + " (AMB-4: either fault may be answered)"
		if http {
			e.ReadStatus = append(e.ReadStatus, 200, 400, 404)
		}
	}
	// AMB-4: no precedence between the codes (each in Codes is right);
	// a code none of the faults names is still wrong (-32600 for a
	// request JSON-RPC finds valid).
	if headerUnserved {
		// AMB-4: the header names a version the server does not serve
		// while _meta names one it does: -32020 is the literal reading,
		// -32022 defensible.
		e.also("AMB-4: the header names a version the server does not serve", envelope.CodeUnsupportedVer)
	}
	// Whether the server deliberately serves pre-2025-06-18 clients its
	// facts cannot show: server/discover lists the versions a request's
	// _meta may name, which 2025-03-26 never is (the reference server
	// lists 2026-07-28 alone and serves 2025-03-26 through initialize).
	if onlyHeaderMissing && slices.Contains(envelope.Methods(envelope.V20250618), e.Method) {
		// (A method only 2026-07-28 defines, server/discover say, has no
		// 2025-03-26 reading: served, it was served as 2026-07-28.)
		e.Error, e.Code, e.StatusWant = open(HeaderMissingRule), open(HeaderMissingRule), open(HeaderMissingRule)
	} else if onlyHeaderMissing {
		// A server that serves 2025-03-26 may read the request
		// so (T-HTTP-8); a method that version lacks is then unknown
		// (-32601), and the request comes before any initialize, where
		// any error is defensible (T-LIFE-6), at the status a 2025
		// error may have (200 or a 4xx: T-HTTP-9's 404, the 400 of a
		// refusal). Which reading the server took its code alone may not
		// show: a code neither names warns.
		e.ReadCodes = append(e.ReadCodes, envelope.CodeMethodNotFound)
		e.ReadStatus = append(e.ReadStatus, 404, 400, 200)
		e.Code, e.StatusWant = should(HeaderMissing0326Rule), soften(e.StatusWant, HeaderMissing0326Rule)
	}
	if preBody {
		e.ID.Lost = Want{}
	}
	return true
}

// HeaderMissingRule is why a 2026-07-28 request without its version
// header may be served: as 2025-03-26, which a result of that era shows.
const HeaderMissingRule = "T-HTTP-8: a server that deliberately serves pre-2025-06-18 clients may read a missing header as 2025-03-26"

// HeaderMissing0326Rule is why such a request for a method 2025-03-26
// lacks may get any error: read as 2025-03-26 it comes before
// initialize.
const HeaderMissing0326Rule = "T-HTTP-8, T-LIFE-6: a server that serves 2025-03-26 may read a missing header so, and then the request comes before initialize, where any error is defensible"

// A paramFault is one Mcp-Param-* header a tools/call gets wrong: what,
// and the rules it breaks.
type paramFault struct {
	detail  string
	rules   modernRules
	invalid bool // visible on the header alone: invalid characters, a sentinel that decodes to nothing
}

// paramHeaderFaults judges the Mcp-Param-* headers of a tools/call
// against the x-mcp-header properties of the tool the server listed
// (T-HDR-4): a non-null argument needs its header, with the same value,
// in characters a header may carry (T-HDR-6: raw non-ASCII and control
// characters are invalid, T-HDR-3 has a client encode them); a null or
// absent one needs none. Nil when the tool is not known.
func paramHeaderFaults(f *Facts, req *envelope.Message, h http.Header, b64 envelope.Base64Reading) (out []paramFault, numeric bool) {
	for _, pa := range f.Tool(req.Get("params.name").Str).ParamArgs(req.Get("params.arguments")) {
		arg := shortQuote(strings.Join(pa.Path, "."))
		name := "Mcp-Param-" + pa.Header
		hv, ok := envelope.HeaderValue(h, name)
		if !ok {
			out = append(out, paramFault{detail: name + " is missing for argument " + arg, rules: paramHeader})
			continue
		}
		if !envelope.ValidHeaderValue(trimOWS(hv)) {
			// Whatever it would decode to: a server MUST refuse it
			// (T-HDR-6), even where its bytes spell the argument.
			out = append(out, paramFault{detail: name + " has invalid characters", rules: paramHeaderInvalid, invalid: true})
			continue
		}
		v := pa.Value
		got, decoded := envelope.DecodeHeaderValue(trimOWS(hv), b64)
		want := v.Raw
		if v.Type == gjson.String {
			want = v.Str
		}
		same := decoded && got == want
		if !same && v.Type == gjson.Number && decoded {
			// T-HDR-5: integers compare as numbers (42 and 42.0), a SHOULD
			// the checker does not hold against a server either way.
			a, err1 := strconv.ParseFloat(got, 64)
			b, err2 := strconv.ParseFloat(want, 64)
			same = err1 == nil && err2 == nil && a == b
			numeric = numeric || same
		}
		if !same {
			out = append(out, paramFault{detail: name + " differs from argument " + arg, rules: paramHeader, invalid: !decoded})
		}
	}
	return out, numeric
}

// trimOWS drops the optional whitespace RFC 9110 §5.5 excludes from a
// field value.
func trimOWS(v string) string { return strings.Trim(v, " \t") }

// inferVersion picks the version a reply is judged against: the one the
// exchange declares, else the negotiated one, else what the request says
// of itself.
func inferVersion(ex *envelope.Exchange, req envelope.Message, f *Facts) (string, string) {
	if ex.Version != "" {
		return ex.Version, "declared"
	}
	if f != nil && f.Version != "" {
		// Facts shared by many clients (a proxy before a server without
		// sessions) name one version; a request that names another the
		// server serves speaks that one.
		v, how := requestVersion(ex, req)
		switch {
		case v != "" && v != f.Version && f.Serves(v):
			return v, how
		case v == envelope.V20260728 && how == "_meta" && f.Version != envelope.V20260728 &&
			(f.Session || ex.Transport == envelope.HTTP) && envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id") == "":
			// The facts are a 2025 client's (a relay that saw one first);
			// a request outside every session that names 2026-07-28 in
			// its _meta, which only that era carries, is a modern
			// client's, judged by its own version. Over HTTP every
			// request of a server without sessions stands alone (both
			// eras may be served on one endpoint, T-COMPAT-2); on stdio
			// without a session the pipe is the one client's.
			return v, how
		}
		return f.Version, "facts"
	}
	if req.Get(envelope.MetaPath(envelope.MetaProtocolVersion)).Exists() {
		return envelope.V20260728, "_meta" // only the stateless era carries it
	}
	if hv := envelope.HeaderGet(ex.Request.Header, "Mcp-Protocol-Version"); envelope.KnownVersion(hv) {
		return hv, "header"
	}
	if req.Get("method").Str == "initialize" {
		if v := req.Get("params.protocolVersion").Str; envelope.KnownVersion(v) && v != envelope.V20260728 {
			return v, "initialize"
		}
	}
	return envelope.V20251125, "default"
}

// requestVersion is the version a request names itself: its _meta
// protocol version (2026-07-28's stateless era), else its
// MCP-Protocol-Version header; "" when it names none the checker knows.
//
// A 2026-07-28 header over a _meta that names an older version is a
// 2026-07-28 request: both carriers are that era's (a 2025 request has
// no _meta version), and their mismatch is the condition the server
// answers (T-HTTP-8, -32020 from the 2026 table), not a 2025 request.
func requestVersion(ex *envelope.Exchange, req envelope.Message) (string, string) {
	hv := envelope.HeaderGet(ex.Request.Header, "Mcp-Protocol-Version")
	if v := req.Get(envelope.MetaPath(envelope.MetaProtocolVersion)).Str; envelope.KnownVersion(v) {
		if hv == envelope.V20260728 && v != hv {
			return hv, "header"
		}
		return v, "_meta"
	}
	if envelope.KnownVersion(hv) {
		return hv, "header"
	}
	return "", ""
}

// valueText shows a request value for a Detail line: a string quoted
// once (not its JSON text quoted again), any other value by its kind.
func valueText(v gjson.Result) string {
	if v.Type == gjson.String {
		return shortQuote(v.Str)
	}
	return envelope.Kind(v)
}

// shortQuote quotes a request value for a Detail line: cut to 40
// characters, escaped, so a 4 KB canary does not flood a report.
func shortQuote(s string) string {
	if !utf8.ValidString(s) {
		// (Cut as runes, each invalid byte one U+FFFD, as before.)
		if r := []rune(s); len(r) > 40 {
			return strconv.QuoteToGraphic(string(r[:40])) + "…"
		}
		return strconv.QuoteToGraphic(s)
	}
	// Valid text is cut at its 40th rune in place: a rune slice of a
	// long name is an allocation per request that names it.
	n := 0
	for i := range s {
		if n == 40 {
			return strconv.QuoteToGraphic(s[:i]) + "…"
		}
		n++
	}
	return strconv.QuoteToGraphic(s)
}

// merge keeps what holds under both readings a and b of one request.
func merge(a, b *Expectation, why string) *Expectation {
	if a.Condition != b.Condition {
		a.Detail += "; or, read otherwise, " + string(b.Condition) + " (" + why + ")"
	}
	a.Reply = weaker(a.Reply, b.Reply)
	a.NoReply = weaker(a.NoReply, b.NoReply)
	a.Error = weaker(a.Error, b.Error)
	a.ReadCodes = union(union(a.ReadCodes, a.Codes), union(b.ReadCodes, b.Codes))
	a.ReadStatus = union(union(a.ReadStatus, a.Status), union(b.ReadStatus, b.Status))
	if !a.Code.Set() || !b.Code.Set() {
		a.Codes, a.Code, a.AlsoCodes = nil, Want{}, nil
	} else {
		a.Codes, a.Code = union(a.Codes, b.Codes), weaker(a.Code, b.Code)
		a.also(b.AlsoWhy, b.AlsoCodes...) // each reading keeps its reason
	}
	if !a.StatusWant.Set() || !b.StatusWant.Set() {
		a.Status, a.StatusWant = nil, Want{}
	} else {
		a.Status, a.StatusWant = union(a.Status, b.Status), weaker(a.StatusWant, b.StatusWant)
	}
	a.EmptyContents = weaker(a.EmptyContents, b.EmptyContents)
	a.Served, a.ServedExcept = weaker(a.Served, b.Served), union(a.ServedExcept, b.ServedExcept)
	a.ParamsSound = a.ParamsSound && b.ParamsSound
	a.Declared = a.Declared && b.Declared
	a.StateRefused = a.StateRefused || b.StateRefused
	a.BodyOptional = a.BodyOptional || b.BodyOptional
	a.AnyCode = a.AnyCode || b.AnyCode
	a.AnyStatus = a.AnyStatus || b.AnyStatus
	for _, id := range b.ID.Echo {
		if !slices.ContainsFunc(a.ID.Echo, func(x gjson.Result) bool { return envelope.SameID(x, id) }) {
			a.ID.Echo = append(a.ID.Echo, id)
		}
	}
	a.ID.Lost, a.ID.Other, a.ID.Invented = weaker(a.ID.Lost, b.ID.Lost), weaker(a.ID.Other, b.ID.Other), weaker(a.ID.Invented, b.ID.Invented)
	if !a.ID.Rounded.Set() {
		a.ID.Rounded = b.ID.Rounded
	}
	if a.Tool == nil || b.Tool == nil {
		a.Tool = nil
	} else {
		a.Tool.Refusal = weaker(a.Tool.Refusal, b.Tool.Refusal)
	}
	if a.Quote == "" {
		a.Quote = b.Quote
	}
	return a
}

// union is a and the members of b it lacks, in order.
func union(a, b []int) []int {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// owesAnswer says whether a batch holds an element JSON-RPC §6 answers:
// a request with an id, or an element that is no valid message (it gets
// an error). Notifications alone are owed nothing.
func owesAnswer(batch gjson.Result) bool {
	owes := false
	batch.ForEach(func(_, m gjson.Result) bool {
		notification := m.IsObject() && !m.Get("id").Exists() && m.Get("jsonrpc").Str == "2.0" && m.Get("method").Type == gjson.String
		owes = !notification
		return !owes
	})
	return owes
}
