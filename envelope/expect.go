package envelope

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// A Condition is what a request provokes, as far as the protocol fixes
// the reply.
type Condition string

const (
	CondParseError         Condition = "parse error"
	CondInvalidRequest     Condition = "invalid request"
	CondBatch              Condition = "batch"
	CondNotification       Condition = "notification"
	CondResponsePosted     Condition = "response sent to the server"
	CondHTTPMethod         Condition = "http method other than POST"
	CondUnknownMethod      Condition = "unknown method"
	CondLegacyInitialize   Condition = "legacy initialize"
	CondHeaderMismatch     Condition = "header mismatch"
	CondUnsupportedVersion Condition = "unsupported protocol version"
	CondMissingMeta        Condition = "missing _meta field"
	CondCall               Condition = "method call"
)

// Meta keys of 2026-07-28 requests (digest T-LIFE-7).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// An Expectation says what a conforming reply to one request must be.
// Live runs, the proxy and lint all judge through it, so a request is
// understood the same way wherever it comes from.
type Expectation struct {
	Condition Condition
	Detail    string // the exact malformation, e.g. "method is missing"
	// Codes are the acceptable error codes, preferred first. Empty: no
	// code is fixed (any error, or a result, may be right).
	Codes []int
	// ErrorRequired: a result is wrong; the request must be refused.
	ErrorRequired bool
	// NoReply: nothing may answer (a notification).
	NoReply bool
	// ToolRefusal: the request calls a tool with arguments its own
	// inputSchema forbids; the tool must refuse (T-TOOL-8).
	ToolRefusal bool
	// Status lists acceptable HTTP statuses, preferred first; empty: open.
	Status []int
	// StatusMust: the spec fixes Status (rather than the contract
	// preferring it), so another 4xx is a breach, not a warning.
	StatusMust bool
	// Ambiguity names the spec ambiguity (AMB-…) or UNSPEC rule that
	// makes any deviation (a result, another status, another code) a
	// warning rather than a failure: the reaction itself is open.
	Ambiguity string
	// CodeAmbiguity makes only a code outside Codes a warning: the request
	// must still be refused as Status says (a SHOULD-level code).
	CodeAmbiguity string
	// WarnCodes are codes that are defensible but not the literal reading:
	// they warn, where another code outside Codes fails.
	WarnCodes []int

	Version       string // protocol version the reply is judged against
	VersionSource string // "declared", "header", "_meta", "initialize" or "default"
	Method        string // the request's method, when readable
	HasID         bool   // the request has an id member
	IDReadable    bool   // the id is a string or an integer (a valid RequestId)
	IDOptional    bool   // the reply may also leave the id out (or null it)
	IDLenient     bool   // leaving the id out only warns (the reaction is open)
	// AnyCode: the spec names no code for the condition; any error code
	// that is in the table passes.
	AnyCode bool
	// Secrets are the headers a live run adds from --header (credentials,
	// typically). They are not part of the recorded request; a reply that
	// echoes one is a finding that must not quote it.
	Secrets []Secret
	// BodyOptional: the rejection may come without a body (T-HTTP-14's
	// 403), so no response message is not a finding.
	BodyOptional bool
	// OutputSchema is the called tool's outputSchema, when a live run
	// calls a real tool with valid arguments (T-TOOL-10).
	OutputSchema []byte
	ID           gjson.Result
	// Quote is the condition's single value that a reply may quote (within
	// the contract's bound): the requested version, the received header.
	Quote   string
	Request Message
}

// A Secret is a header value given on the command line.
type Secret struct{ Name, Value string }

// Expect reads a request and says what a conforming reply must be.
func Expect(ex *Exchange) Expectation {
	req := Parse(ex.Request.Body)
	e := Expectation{Request: req}
	e.Version, e.VersionSource = inferVersion(ex, req)
	http := ex.Transport == HTTP

	if http && ex.Request.HTTPMethod() != "POST" {
		e.Condition = CondHTTPMethod
		e.Detail = ex.Request.HTTPMethod() + " on the endpoint"
		switch {
		case e.Version == V20260728:
			e.Status = []int{405} // T-HTTP-13 (SHOULD)
			e.Ambiguity = "T-HTTP-13 is a SHOULD"
		case ex.Request.HTTPMethod() == "GET":
			e.Status = []int{200, 405} // T-HTTP-12: an SSE stream, or 405
		}
		return e
	}
	switch {
	case len(ex.Request.Body) == 0 && ex.Transport == Stdio:
		e = e.reject(CondParseError, "the line is empty", CodeParseError)
		e.Ambiguity = "an empty stdio line carries no message; ignoring it is fair"
		return e
	case len(ex.Request.Body) == 0:
		return e.reject(CondParseError, "the body is empty", CodeParseError)
	case !req.UTF8:
		// JSON text must be UTF-8 (T-RPC-2), but that binds the sender;
		// RFC 8259 §8.2 leaves a receiver's handling of invalid strings
		// open, so a server that decodes leniently is not wrong for sure.
		e = e.reject(CondParseError, "the body is not valid UTF-8", CodeParseError, CodeInvalidRequest)
		e.Ambiguity = "T-RPC-2 binds the sender; RFC 8259 §8.2 leaves a receiver's handling of invalid UTF-8 open"
		if req.Valid {
			// The id is readable to a lenient decoder: echoing it is right,
			// leaving it out (a strict parse error) is right too.
			if id := req.Get("id"); id.Type == gjson.String || id.Type == gjson.Number && IsInteger(id.Raw) {
				e.HasID, e.IDReadable, e.IDOptional, e.ID = true, true, true, id
			}
		}
		return e
	case !req.Valid:
		return e.reject(CondParseError, "the body is not valid JSON", CodeParseError)
	case req.IsArray():
		e = e.reject(CondBatch, "the body is a JSON array (batch)", CodeInvalidRequest)
		e.Ambiguity = "AMB-7: the reaction to a batch is unspecified"
		return e
	case !req.IsObject():
		return e.reject(CondInvalidRequest, "the body is not a JSON object", CodeInvalidRequest)
	}

	id := req.Get("id")
	e.HasID = id.Exists()
	e.IDReadable = id.Type == gjson.String || (id.Type == gjson.Number && IsInteger(id.Raw))
	if e.IDReadable {
		e.ID = id
	}
	method := req.Get("method")
	if method.Type == gjson.String {
		e.Method = method.Str
	}

	switch {
	case !method.Exists() && (req.Get("result").Exists() || req.Get("error").Exists()):
		e.Condition, e.Detail = CondResponsePosted, "the body is a JSON-RPC response"
		if e.Version == V20260728 {
			e.Status, e.ErrorRequired = []int{400}, true
			e.Ambiguity = "T-HTTP-3: the reaction to a posted response is unspecified"
		} else {
			e.Status, e.NoReply = []int{202}, true // T-HTTP-4
		}
		return e
	case req.Get("jsonrpc").Type != gjson.String || req.Get("jsonrpc").Str != "2.0":
		return e.reject(CondInvalidRequest, `jsonrpc is not "2.0"`, CodeInvalidRequest)
	case !method.Exists():
		return e.reject(CondInvalidRequest, "method is missing", CodeInvalidRequest)
	case method.Type != gjson.String:
		return e.reject(CondInvalidRequest, "method is not a string", CodeInvalidRequest)
	case e.HasID && !e.IDReadable:
		return e.reject(CondInvalidRequest, "id is "+Kind(id)+", not a string or integer", CodeInvalidRequest)
	}

	if !e.HasID {
		e.Condition, e.NoReply = CondNotification, true
		if http {
			e.Status = []int{202} // T-HTTP-4
		}
		return e
	}
	if p := req.Get("params"); p.Exists() && !p.IsObject() {
		e = e.reject(CondInvalidRequest, "params is "+Kind(p)+", not an object", CodeInvalidRequest, CodeInvalidParams)
		e.Ambiguity = "T-RPC-13: -32600 and -32602 are both defensible"
		return e
	}

	if e.Version == V20260728 {
		if done := e.modern(ex, req, http); done {
			return e
		}
	} else if http && e.Method != "initialize" {
		if hv := HeaderGet(ex.Request.Header, "Mcp-Protocol-Version"); hv != "" && !KnownVersion(hv) && !slices.Contains(historicVersions, hv) {
			// T-HTTP-7 fixes the status (400), not the code. An older MCP
			// version the server may still serve is not judged.
			e = e.reject(CondUnsupportedVersion, "MCP-Protocol-Version is not a protocol version")
			e.Quote, e.StatusMust = hv, true
			return e
		}
	}

	if !slices.Contains(Methods(e.Version), e.Method) {
		if e.Version == V20260728 && e.Method == "initialize" {
			// A modern-only server refuses it with a code of its choosing
			// (T-LIFE-14); a dual-era server may serve it and switch to
			// legacy semantics (T-COMPAT-2). Neither is fixed from outside.
			e.Condition, e.Detail = CondLegacyInitialize, "initialize was removed in 2026-07-28"
			e.Ambiguity = "T-LIFE-14, T-COMPAT-2: refused with any code, or served by a dual-era server"
			return e
		}
		e.Condition, e.Detail, e.ErrorRequired = CondUnknownMethod, "method "+shortQuote(e.Method)+" is not defined in "+e.Version, true
		e.Codes = []int{CodeMethodNotFound}
		if !(e.Version == V20260728 && slices.Contains(removed20260728, e.Method)) {
			// The request alone cannot tell an unknown method from one an
			// extension the server advertises defines (T-LIFE-17); a
			// fixture that invented the method clears this.
			e.Ambiguity = "T-LIFE-17: an extension the server advertises may define the method"
		}
		if http && e.Version == V20260728 {
			e.Status, e.StatusMust = []int{404}, true // T-HTTP-9
		}
		return e
	}
	e.Condition = CondCall
	return e
}

// reject fills in a condition the server must refuse with one of codes.
func (e Expectation) reject(c Condition, detail string, codes ...int) Expectation {
	e.Condition, e.Detail, e.ErrorRequired, e.Codes = c, detail, true, codes
	e.Status = []int{400}
	return e
}

// modern applies the 2026-07-28 per-request rules: the _meta fields on
// every transport, the standard headers on HTTP. When several faults
// coexist the spec sets no precedence (AMB-4), so every applicable code is
// accepted, the literal reading first.
func (e *Expectation) modern(ex *Exchange, req Message, http bool) bool {
	meta := req.Get("params._meta")
	ver := meta.Get(gjsonKey(MetaProtocolVersion))
	caps := meta.Get(gjsonKey(MetaClientCapabilities))

	var codes []int
	var details []string
	add := func(code int, detail string) {
		if !slices.Contains(codes, code) {
			codes = append(codes, code)
		}
		details = append(details, detail)
	}
	cond := Condition("")
	headerUnserved := false
	set := func(c Condition) {
		if cond == "" {
			cond = c
		}
	}

	if http {
		h := ex.Request.Header
		hv, hasHV := headerValue(h, "Mcp-Protocol-Version")
		switch {
		case !hasHV:
			set(CondHeaderMismatch)
			add(CodeHeaderMismatch, "MCP-Protocol-Version is missing")
		case ver.Type == gjson.String && hv != ver.Str:
			set(CondHeaderMismatch)
			add(CodeHeaderMismatch, "MCP-Protocol-Version differs from _meta")
			e.Quote = hv
			headerUnserved = ver.Str == V20260728
		}
		if mv, ok := headerValue(h, "Mcp-Method"); !ok {
			set(CondHeaderMismatch)
			add(CodeHeaderMismatch, "Mcp-Method is missing")
		} else if mv != e.Method {
			set(CondHeaderMismatch)
			add(CodeHeaderMismatch, "Mcp-Method differs from the body's method")
			e.Quote = mv
		}
		// Mcp-Name mirrors a body value; a body without it is malformed
		// params (-32602), which is not a header fault.
		if field := nameField(e.Method); field != "" && req.Get("params."+field).Type == gjson.String {
			want := req.Get("params." + field)
			nv, ok := headerValue(h, "Mcp-Name")
			switch {
			case !ok:
				set(CondHeaderMismatch)
				add(CodeHeaderMismatch, "Mcp-Name is missing")
			case !validHeaderValue(nv):
				set(CondHeaderMismatch)
				add(CodeHeaderMismatch, "Mcp-Name has invalid characters")
			default:
				got, decoded := DecodeHeaderValue(nv)
				if !decoded || want.Type != gjson.String || got != want.Str {
					set(CondHeaderMismatch)
					add(CodeHeaderMismatch, "Mcp-Name differs from params."+field)
					e.Quote = nv
				}
			}
		}
	}
	switch {
	case !ver.Exists() || ver.Type != gjson.String:
		set(CondMissingMeta)
		add(CodeInvalidParams, "_meta "+MetaProtocolVersion+" is missing")
		if http {
			// AMB-4: the header no longer matches the body either.
			add(CodeHeaderMismatch, "")
		}
	case ver.Str != V20260728:
		set(CondUnsupportedVersion)
		add(CodeUnsupportedVer, "protocol version "+ver.Str+" is not served")
		if e.Quote == "" {
			e.Quote = ver.Str
		}
	}
	if !caps.IsObject() {
		set(CondMissingMeta)
		add(CodeInvalidParams, "_meta "+MetaClientCapabilities+" is missing or not an object")
	}
	if cond == "" {
		return false
	}
	e.Condition, e.ErrorRequired, e.Codes = cond, true, codes
	e.Detail = strings.Join(slices.DeleteFunc(details, func(s string) bool { return s == "" }), "; ")
	if http {
		e.Status, e.StatusMust = []int{400}, true // T-HTTP-8, T-HTTP-10, T-HDR-2
	}
	if len(codes) > 1 {
		// AMB-4: no precedence between the codes; each is accepted. The
		// refusal and its 400 stay MUSTs.
		e.CodeAmbiguity = "AMB-4: no precedence between -32020, -32022 and -32602"
	}
	if headerUnserved {
		// AMB-4: the header names a version the server does not serve
		// while _meta names one it does: -32020 is the literal reading,
		// -32022 defensible.
		e.WarnCodes = append(e.WarnCodes, CodeUnsupportedVer)
	}
	if cond == CondHeaderMismatch && details[0] == "MCP-Protocol-Version is missing" && len(codes) == 1 {
		e.Ambiguity = "T-HTTP-8: a server that deliberately serves pre-2025-06-18 clients may read a missing header as 2025-03-26"
	}
	return true
}

// nameField is the params member Mcp-Name mirrors for a method (T-HDR-1).
func nameField(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

// headerValue reads a header whatever the case of its name (T-HTTP-19).
// Keys are matched case-insensitively, not only in canonical form: a
// fixture may send a name in odd case on purpose.
func headerValue(h http.Header, name string) (string, bool) {
	if vs, ok := h[http.CanonicalHeaderKey(name)]; ok && len(vs) > 0 {
		return vs[0], true
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0], true
		}
	}
	return "", false
}

// HeaderGet reads a header whatever the case of its name; "" if absent.
func HeaderGet(h http.Header, name string) string {
	v, _ := headerValue(h, name)
	return v
}

// validHeaderValue rejects control characters and raw non-ASCII bytes,
// which a 2026-07-28 client must have Base64-encoded (T-HDR-3).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// DecodeHeaderValue undoes the Base64 sentinel of T-HDR-3. The markers are
// lowercase and case-sensitive; anything else is the literal value. The
// second result is false when the sentinel's payload does not decode.
func DecodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		// AMB-10 names neither alphabet nor padding: accept unpadded too.
		if b, err = base64.RawStdEncoding.DecodeString(inner); err != nil {
			return "", false
		}
	}
	return string(b), true
}

// shortQuote quotes a request value for a Detail line: cut to 40
// characters, escaped, so a 4 KB canary does not flood a report.
func shortQuote(s string) string {
	if r := []rune(s); len(r) > 40 {
		return strconv.QuoteToGraphic(string(r[:40])) + "…"
	}
	return strconv.QuoteToGraphic(s)
}

// EncodeHeaderValue applies the Base64 sentinel of T-HDR-3 where a value
// cannot travel as plain header text: non-ASCII, control characters,
// leading or trailing space or tab, or a literal that looks like the
// sentinel itself.
func EncodeHeaderValue(v string) string {
	plain := strings.TrimLeft(v, " \t") == v && strings.TrimRight(v, " \t") == v &&
		!strings.HasPrefix(v, "=?base64?")
	for i := 0; plain && i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f {
			plain = false
		}
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// inferVersion picks the version a reply is judged against: the one the
// exchange declares, else what the request says of itself.
func inferVersion(ex *Exchange, req Message) (string, string) {
	if ex.Version != "" {
		return ex.Version, "declared"
	}
	if req.Get("params._meta." + gjsonKey(MetaProtocolVersion)).Exists() {
		return V20260728, "_meta" // only the stateless era carries it
	}
	if hv := HeaderGet(ex.Request.Header, "Mcp-Protocol-Version"); KnownVersion(hv) {
		return hv, "header"
	}
	if req.Get("method").Str == "initialize" {
		if v := req.Get("params.protocolVersion").Str; KnownVersion(v) && v != V20260728 {
			return v, "initialize"
		}
	}
	return V20251125, "default"
}

// gjsonKey escapes a literal key for a gjson path.
func gjsonKey(k string) string { return JoinPath("", k) }

// removed20260728 are the methods 2026-07-28 removed (T-LIFE-16): a
// modern-only server treats them as unknown, whatever its extensions.
var removed20260728 = []string{"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
	"notifications/initialized", "notifications/roots/list_changed", "notifications/elicitation/complete"}

// historicVersions are MCP versions before the covered ones; a server may
// still serve them (T-HTTP-7), so a header naming one is not a fault.
var historicVersions = []string{"2024-11-05", "2025-03-26"}

var (
	methods20260728 = buildMethods(V20260728)
	methods20251125 = buildMethods(V20251125)
	methods20250618 = buildMethods(V20250618)
)

// Methods lists the client-to-server methods and notifications a version
// defines (requests whose absence from a server is -32601). The result is
// shared: do not modify it.
func Methods(version string) []string {
	switch version {
	case V20260728:
		return methods20260728
	case V20250618:
		return methods20250618
	}
	return methods20251125
}

func buildMethods(version string) []string {
	common := []string{
		"tools/list", "tools/call", "resources/list", "resources/templates/list",
		"resources/read", "prompts/list", "prompts/get", "completion/complete",
		"notifications/cancelled",
	}
	switch version {
	case V20260728:
		return append(common, "server/discover", "subscriptions/listen")
	case V20250618:
		return append(common, "initialize", "ping", "notifications/initialized",
			"notifications/progress", "notifications/roots/list_changed",
			"resources/subscribe", "resources/unsubscribe", "logging/setLevel")
	default:
		return append(common, "initialize", "ping", "notifications/initialized",
			"notifications/progress", "notifications/roots/list_changed",
			"resources/subscribe", "resources/unsubscribe", "logging/setLevel",
			"tasks/get", "tasks/result", "tasks/cancel", "tasks/list")
	}
}
