package refserver

import (
	"encoding/base64"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/tidwall/gjson"
)

// A reply is the outcome of one message, before a transport writes it.
type reply struct {
	body      []byte        // the JSON-RPC reply; nil: nothing to send (HTTP 202)
	status    int           // HTTP status of body
	progress  []byte        // notifications/progress to send before body, when asked for
	log       []byte        // notifications/message to send before body, when asked for
	sessionID string        // HTTP: a new 2025-xx session, for the Mcp-Session-Id header
	listen    *subscription // subscriptions/listen: an open stream
	hang      bool          // hang fault: never answer
	crash     bool          // crash fault: drop the transport
}

func (s *Server) fail(m *message, e *rpcError) reply {
	return reply{body: s.errorBody(m, e), status: e.status}
}

func (s *Server) ok(m *message, result any) reply {
	return reply{body: s.resultBody(m, result), status: http.StatusOK}
}

// finish shapes a result for its era: 2026-07-28 results carry resultType
// (T-LIFE-10) and _meta serverInfo (T-LIFE-11); 2025-xx results are as built.
func (s *Server) finish(version string, r map[string]any) map[string]any {
	if version == version2026 {
		r["resultType"] = "complete"
		r["_meta"] = map[string]any{keyServerInfo: s.serverInfo()}
		if _, discover := r["supportedVersions"]; s.fault == faultNoResultType && !discover {
			delete(r, "resultType")
		}
	}
	return r
}

// notified handles a notification: never answered (T-RPC-10), unless the
// notification-reply fault makes the server answer it like a request.
func (s *Server) notified(version string) reply {
	if s.fault != faultNotificationReply {
		return reply{}
	}
	r := wireResponse{JSONRPC: "2.0", ID: []byte("null"), Result: s.finish(version, map[string]any{})}
	return reply{body: encode(r), status: http.StatusOK}
}

// paramsObject rejects params that are present but not an object
// (T-RPC-13). We answer -32602 rather than -32600: the message is a request,
// its params are what is wrong. HTTP 400, as for any malformed request.
func (s *Server) paramsObject(m *message) *rpcError {
	if m.params.Exists() && !m.params.IsObject() {
		return s.invalidParams("invalid params", []problem{{"/params", "must be an object"}}, http.StatusBadRequest)
	}
	return nil
}

// serveModern serves a 2026-07-28 message. h holds the HTTP request
// headers; nil on stdio, which has no headers to check.
//
// Precedence when several things are wrong (the spec sets none, AMB-4):
// params not an object, then missing or mistyped _meta fields (-32602),
// then MCP-Protocol-Version missing or differing from _meta (-32020), then
// a version not served (-32022), then Mcp-Method (-32020), then Mcp-Name
// (-32020, compared only when the body value it mirrors is a string, so a
// malformed tools/call gets its -32602), then the Mcp-Param-* headers of
// a tools/call (-32020, before its arguments are validated), then the
// method itself.
func (s *Server) serveModern(m *message, h http.Header) reply {
	if m.response {
		return s.fail(m, invalidRequest("responses are not accepted in 2026-07-28"))
	}
	if m.notification {
		return s.notified(version2026)
	}
	if e := s.paramsObject(m); e != nil {
		return s.fail(m, e)
	}
	if ps := metaProblems(m.params); len(ps) > 0 {
		return s.fail(m, s.invalidParams("invalid params", ps, http.StatusBadRequest))
	}
	requested := member(member(m.params, "_meta"), keyProtocolVersion).Str
	if h != nil {
		if e := s.checkHeader(h, "MCP-Protocol-Version", requested); e != nil {
			return s.fail(m, e)
		}
	}
	if requested != version2026 {
		return s.fail(m, s.unsupportedVersion(requested))
	}
	if h != nil {
		if e := s.checkHeader(h, "Mcp-Method", m.method); e != nil {
			return s.fail(m, e)
		}
		if e := s.checkName(h, m); e != nil {
			return s.fail(m, e)
		}
		if e := s.checkParams(h, m); e != nil {
			return s.fail(m, e)
		}
	}
	if e := s.metaLogLevel(m); e != nil {
		return s.fail(m, e)
	}
	return s.dispatch(m, version2026)
}

// metaProblems lists what is missing or mistyped in params._meta
// (T-LIFE-7): both protocol fields are required on every request.
func metaProblems(params gjson.Result) []problem {
	if !params.Exists() {
		return []problem{{"", `missing property "params"`}}
	}
	meta := member(params, "_meta")
	switch {
	case !meta.Exists():
		return []problem{{"/params", `missing property "_meta"`}}
	case !meta.IsObject():
		return []problem{{"/params/_meta", "must be an object"}}
	}
	var ps []problem
	switch v := member(meta, keyProtocolVersion); {
	case !v.Exists():
		ps = append(ps, problem{"/params/_meta", `missing property "` + keyProtocolVersion + `"`})
	case v.Type != gjson.String:
		ps = append(ps, problem{"/params/_meta/" + pointerToken(keyProtocolVersion), "must be a string"})
	}
	switch c := member(meta, keyClientCaps); {
	case !c.Exists():
		ps = append(ps, problem{"/params/_meta", `missing property "` + keyClientCaps + `"`})
	case !c.IsObject():
		ps = append(ps, problem{"/params/_meta/" + pointerToken(keyClientCaps), "must be an object"})
	}
	return ps
}

// pointerToken escapes a member name for a JSON Pointer (RFC 6901).
func pointerToken(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

func (s *Server) unsupportedVersion(requested string) *rpcError {
	q := s.quote(requested)
	data := map[string]any{"supported": []string{version2026}, "requested": q}
	if s.fault == faultWrongVersionData {
		data["requested"] = version2026
	}
	return &rpcError{
		code:    codeUnsupported,
		message: `unsupported protocol version "` + q + `"`,
		data:    data,
		status:  http.StatusBadRequest,
	}
}

// checkHeader checks that the standard header name is present, holds only
// printable ASCII, and equals want (T-HTTP-8, T-HDR-1, T-HDR-2).
func (s *Server) checkHeader(h http.Header, name, want string) *rpcError {
	value, raw, e := s.headerValue(h, name, want, false)
	if e == nil && value != want {
		e = s.headerError("header "+name+" does not match the body", name, want, &raw)
	}
	return e
}

// headerValue reads a standard header: its value (with sentinel set, a
// =?base64?…?= value decoded, T-HDR-3) and the raw text, or the -32020 for
// a header that is missing, has invalid characters or does not decode.
// want is what the body calls for, for the error's data.
func (s *Server) headerValue(h http.Header, name, want string, sentinel bool) (value, raw string, e *rpcError) {
	vals := h[textproto.CanonicalMIMEHeaderKey(name)]
	if len(vals) == 0 {
		return "", "", s.headerError("missing header "+name, name, want, nil)
	}
	raw = vals[0]
	if !printableASCII(raw) {
		return "", raw, s.headerError("header "+name+" has characters outside printable ascii", name, want, &raw)
	}
	const open, end = "=?base64?", "?="
	if !sentinel || !strings.HasPrefix(raw, open) || !strings.HasSuffix(raw, end) || len(raw) < len(open+end) {
		return raw, raw, nil
	}
	decoded, err := base64.StdEncoding.DecodeString(raw[len(open) : len(raw)-len(end)])
	if err != nil {
		return "", raw, s.headerError("header "+name+" has an undecodable base64 value", name, want, &raw)
	}
	return string(decoded), raw, nil
}

// checkName checks Mcp-Name for the methods that require it (T-HDR-1).
func (s *Server) checkName(h http.Header, m *message) *rpcError {
	var field string
	switch m.method {
	case "tools/call", "prompts/get":
		field = "name"
	case "resources/read":
		field = "uri"
	default:
		return nil
	}
	want := member(m.params, field)
	if want.Type != gjson.String {
		return nil // malformed body: the method answers -32602
	}
	value, raw, e := s.headerValue(h, "Mcp-Name", want.Str, true)
	if e == nil && value != want.Str && s.fault != faultUncheckedName {
		e = s.headerError("header Mcp-Name does not match the body", "Mcp-Name", want.Str, &raw)
	}
	return e
}

func printableASCII(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// headerError is the -32020 HeaderMismatch. data names the header, the
// value the body calls for and the value received, each within the quote
// bound; received is absent when the header was.
func (s *Server) headerError(msg, name, want string, got *string) *rpcError {
	data := map[string]any{"header": name, "expected": s.quote(want)}
	if got != nil {
		data["received"] = s.quote(*got)
	}
	status := http.StatusBadRequest
	if s.fault == faultWrongStatus {
		status = http.StatusOK
	}
	return &rpcError{code: codeHeaderMismatch, message: msg, data: data, status: status}
}

// initialize is the 2025-xx handshake (T-LIFE-1, T-LIFE-2). It returns the
// negotiated version, or "" when no session starts.
func (s *Server) initialize(m *message) (reply, string) {
	if m.notification {
		return s.notified(version2025Nov), ""
	}
	if e := s.paramsObject(m); e != nil {
		return s.fail(m, e), ""
	}
	var ps []problem
	switch v := member(m.params, "protocolVersion"); {
	case !m.params.Exists():
		ps = append(ps, problem{"", `missing property "params"`})
	case !v.Exists():
		ps = append(ps, problem{"/params", `missing property "protocolVersion"`})
	case v.Type != gjson.String:
		ps = append(ps, problem{"/params/protocolVersion", "must be a string"})
	}
	if len(ps) > 0 {
		e := s.invalidParams("invalid params", ps, http.StatusOK)
		if s.fault == faultInitCodeZero {
			e.code = 0
		}
		return s.fail(m, e), ""
	}
	// A version we do not speak still gets a result, naming our newest
	// 2025 version (T-LIFE-2); 2026-07-28 needs no handshake.
	version := member(m.params, "protocolVersion").Str
	if s.only0326 {
		version = version2025Mar
	}
	if version != version2025Jun && version != version2025Nov && version != version2025Mar {
		if s.fault == faultInitRefusesVersion {
			// The lifecycle page's error example (AMB-3), not its rule.
			return s.fail(m, &rpcError{code: codeInvalidParams, message: "unsupported protocol version",
				data:   map[string]any{"supported": []string{version2025Nov, version2025Jun}, "requested": s.quote(version)},
				status: http.StatusOK}), ""
		}
		version = version2025Nov
	}
	return s.ok(m, map[string]any{
		"protocolVersion": version,
		"capabilities":    s.capabilities(version),
		"serverInfo":      s.serverInfo(),
	}), version
}

// initializeAgain refuses an initialize inside a session that already
// has one: the spec defines no second handshake.
func (s *Server) initializeAgain(m *message) reply {
	if m.notification {
		return s.notified(version2025Nov)
	}
	// A method error of a valid request: HTTP 200, like the others.
	e := &rpcError{code: codeInvalidRequest, message: "the session is already initialized", status: http.StatusOK}
	if s.fault == faultInitCodeZero {
		e.code = 0
	}
	return s.fail(m, e)
}

// serveLegacy serves a message inside a 2025-xx session.
func (s *Server) serveLegacy(m *message, version string) reply {
	if m.response {
		return reply{} // accepted and ignored: we never send requests
	}
	if m.notification {
		return s.notified(version)
	}
	if e := s.paramsObject(m); e != nil {
		return s.fail(m, e)
	}
	return s.dispatch(m, version)
}

// removedIn2026 are the methods 2026-07-28 dropped (T-LIFE-16); they are
// unknown methods there, with a message that says why.
func removedIn2026(method string) bool {
	switch method {
	case "ping", "initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
		"tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return true
	}
	return false
}

// dispatch runs a validated request of the given version.
func (s *Server) dispatch(m *message, version string) reply {
	switch {
	case m.method == "server/discover" && version == version2026 && !s.only0326:
		res := map[string]any{
			"supportedVersions": []string{version2026},
			"capabilities":      s.capabilities(version),
			"ttlMs":             300000,
			"cacheScope":        "public",
		}
		if s.fault == faultDiscoverNoVersions {
			delete(res, "supportedVersions")
		}
		return s.ok(m, s.finish(version, res))
	case m.method == "ping" && version != version2026:
		return s.ok(m, map[string]any{})
	case m.method == "tools/list":
		return s.listTools(m, version)
	case m.method == "tools/call":
		return s.callTool(m, version)
	case m.method == "prompts/list":
		return s.listPrompts(m, version)
	case m.method == "prompts/get":
		return s.getPrompt(m, version)
	case m.method == "resources/list":
		return s.listResources(m, version)
	case m.method == "resources/templates/list":
		return s.listTemplates(m, version)
	case m.method == "resources/read":
		return s.readResource(m, version)
	case m.method == "completion/complete":
		return s.complete(m, version)
	case m.method == "logging/setLevel" && version != version2026:
		return s.setLevel(m, version)
	case m.method == "subscriptions/listen" && version == version2026:
		return s.listen(m, version)
	}
	return s.fail(m, s.unknownMethod(m.method, version))
}

func (s *Server) unknownMethod(method, version string) *rpcError {
	e := &rpcError{code: codeMethodNotFound, message: `unknown method "` + s.quote(method) + `"`, status: http.StatusOK}
	if version == version2026 {
		e.status = http.StatusNotFound // T-HTTP-9
		if removedIn2026(method) {
			e.message = `method "` + method + `" was removed in 2026-07-28`
		}
	}
	switch s.fault {
	case faultWrongCode:
		e.code = codeInternal
	case faultMultilineMessage:
		e.message += "\nsee the server documentation for the methods it serves"
	case faultUnknownDataKey:
		e.data = map[string]any{"stack": "refserver.dispatch:1"}
	case faultMissingID:
		e.noID = true
	}
	return e
}
