package refserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// JSON-RPC 2.0 and MCP error codes the server uses.
const (
	codeParse            = -32700
	codeInvalidRequest   = -32600
	codeMethodNotFound   = -32601
	codeInvalidParams    = -32602
	codeInternal         = -32603
	codeResourceNotFound = -32002 // 2025-xx resource not found (T-ERR-6)
	codeMissingCap       = -32021 // 2026-07-28 MissingRequiredClientCapability
	codeHeaderMismatch   = -32020 // 2026-07-28 HeaderMismatch
	codeUnsupported      = -32022 // 2026-07-28 UnsupportedProtocolVersion
)

// quoteBound is the contract's quote bound: the most bytes of a request
// value a reply may carry.
const quoteBound = 64

// maxMessage bounds a request body (HTTP) or line (stdio), so a hostile
// client cannot make the server buffer without limit.
const maxMessage = 1 << 20

// A message is one incoming JSON-RPC message, read from its raw bytes with
// gjson: member names match case-sensitively and an absent member is told
// apart from null, which encoding/json into structs would blur.
type message struct {
	id           json.RawMessage // raw id bytes when present and readable, else nil
	method       string
	params       gjson.Result // zero Result when absent
	notification bool         // a valid method and no id: never answered
	response     bool         // a JSON-RPC response (no method): clients may POST these in 2025-xx
}

// An rpcError is a JSON-RPC error on its way out, with the HTTP status it
// travels with.
type rpcError struct {
	code    int
	message string
	data    any // nil, or a map whose keys come from the contract vocabulary
	status  int // HTTP status; stdio ignores it
	noID    bool
}

// An errorEntry is one element of data.errors: a JSON Pointer into the
// request and the problems found there.
type errorEntry struct {
	Location string   `json:"location"`
	Problems []string `json:"problems"`
}

// A problem is one validation finding before distillation.
type problem struct{ location, text string }

type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

// parse reads one message. On failure it still returns the message with
// whatever id could be read, so the error reply can carry it.
func (s *Server) parse(body []byte) (*message, *rpcError) {
	// RFC 8259 JSON text is UTF-8; json.Valid alone accepts stray bytes
	// inside strings.
	var cause string
	switch {
	case !utf8.Valid(body):
		cause = "message is not valid utf-8"
	case !json.Valid(body):
		cause = "message is not valid json"
	}
	if cause != "" {
		if s.fault == faultParseAsInvalid {
			return &message{}, invalidRequest(cause)
		}
		return &message{}, &rpcError{code: codeParse, message: "parse error: " + cause, status: 400}
	}
	text := bytes.TrimLeft(body, " \t\r\n")
	switch text[0] {
	case '[':
		return &message{}, invalidRequest("batches are not supported")
	case '{':
	default:
		return &message{}, invalidRequest("message is not a json object")
	}
	root := gjson.ParseBytes(text)
	m := &message{}
	if id := member(root, "id"); id.Exists() {
		if !readableID(id) {
			return m, invalidRequest("id must be a string or an integer")
		}
		m.id = json.RawMessage(id.Raw)
	}
	if v := member(root, "jsonrpc"); v.Type != gjson.String || v.Str != "2.0" {
		return m, invalidRequest(`jsonrpc must be "2.0"`)
	}
	method := member(root, "method")
	switch {
	case !method.Exists() && m.id != nil && (member(root, "result").Exists() || member(root, "error").Exists()):
		m.response = true
		return m, nil
	case !method.Exists():
		return m, invalidRequest("method is missing")
	case method.Type != gjson.String:
		return m, invalidRequest("method must be a string")
	}
	m.method = method.Str
	m.params = member(root, "params")
	m.notification = m.id == nil
	return m, nil
}

func invalidRequest(msg string) *rpcError {
	return &rpcError{code: codeInvalidRequest, message: msg, status: 400}
}

// readableID reports whether id has a type MCP allows: a string, or a
// number written as an integer. 1.5, 1.0 and 1e3 are refused, so that an id
// is never rewritten: what is echoed is the token exactly as sent.
func readableID(id gjson.Result) bool {
	switch id.Type {
	case gjson.String:
		return true
	case gjson.Number:
		return !strings.ContainsAny(id.Raw, ".eE")
	}
	return false
}

// member returns obj's member named key, compared exactly. gjson paths
// treat '.', '*' and '?' as syntax, and MCP keys contain dots.
func member(obj gjson.Result, key string) gjson.Result {
	var found gjson.Result
	if !obj.IsObject() {
		return found
	}
	obj.ForEach(func(k, v gjson.Result) bool {
		if k.Str == key {
			found = v
			return false
		}
		return true
	})
	return found
}

// replyID is the id a reply carries: the request's raw id bytes.
func (s *Server) replyID(m *message) json.RawMessage {
	if s.fault == faultWrongID && digitString(m.id) {
		return m.id[1 : len(m.id)-1]
	}
	return m.id
}

// digitString reports whether raw is a JSON string holding a canonical
// decimal integer, such as "7", which the wrong-id fault turns into 7.
func digitString(raw json.RawMessage) bool {
	if len(raw) < 3 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	digits := raw[1 : len(raw)-1]
	if digits[0] == '0' && len(digits) > 1 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (s *Server) resultBody(m *message, result any) []byte {
	return encode(wireResponse{JSONRPC: "2.0", ID: s.replyID(m), Result: result})
}

func (s *Server) errorBody(m *message, e *rpcError) []byte {
	r := wireResponse{JSONRPC: "2.0", Error: &wireError{Code: e.code, Message: e.message, Data: e.data}}
	if m != nil && !e.noID {
		r.ID = s.replyID(m)
	}
	return encode(r)
}

// encode writes v as compact JSON without HTML escaping: a raw id such as
// "<a>" must go back byte for byte, not as "\u003ca\u003e".
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every value encoded here is built by this package from
		// validated input; failing is a bug, not a runtime condition.
		panic(fmt.Sprintf("refserver: encoding a reply: %v", err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// quote makes a request value fit to appear in a reply: control
// characters and invalid bytes escaped, and at most quoteBound bytes
// (longer values keep their first bytes and end in "..."). Under the
// echo-request fault the value is escaped but kept whole.
func (s *Server) quote(v string) string {
	total := 0
	walkEscaped(v, func(piece string) bool { total += len(piece); return true })
	if total <= quoteBound || s.fault == faultEchoRequest {
		var b strings.Builder
		walkEscaped(v, func(piece string) bool { b.WriteString(piece); return true })
		return b.String()
	}
	var b strings.Builder
	walkEscaped(v, func(piece string) bool {
		if b.Len()+len(piece) > quoteBound-len("...") {
			return false
		}
		b.WriteString(piece)
		return true
	})
	return b.String() + "..."
}

// walkEscaped calls fn with v split into printable runes and escapes,
// never splitting an escape, until fn returns false.
func walkEscaped(v string, fn func(piece string) bool) {
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = fmt.Sprintf(`\x%02x`, v[i])
		case unicode.IsControl(r), r == '\u2028', r == '\u2029':
			piece = fmt.Sprintf(`\u%04x`, r)
		default:
			piece = v[i : i+size]
		}
		if !fn(piece) {
			return
		}
		i += size
	}
}

// distill turns validation problems into data.errors: one entry per
// location, locations sorted, each location's problems sorted and
// de-duplicated.
func distill(ps []problem) []errorEntry {
	byLoc := map[string][]string{}
	for _, p := range ps {
		byLoc[p.location] = append(byLoc[p.location], p.text)
	}
	var out []errorEntry
	for _, loc := range slices.Sorted(maps.Keys(byLoc)) {
		probs := byLoc[loc]
		slices.Sort(probs)
		out = append(out, errorEntry{Location: loc, Problems: slices.Compact(probs)})
	}
	return out
}

// invalidParams is the -32602 for a request whose params fail validation:
// the message lists every problem on one line, data.errors holds them
// distilled (or, under the undistilled-errors fault, reversed and doubled).
func (s *Server) invalidParams(what string, ps []problem, status int) *rpcError {
	entries := distill(ps)
	return &rpcError{
		code:    codeInvalidParams,
		message: describe(what, entries),
		data:    map[string]any{"errors": s.errorsValue(entries)},
		status:  status,
	}
}

func (s *Server) errorsValue(entries []errorEntry) []errorEntry {
	if s.fault != faultUndistilledErrors {
		return entries
	}
	var out []errorEntry
	for _, e := range slices.Backward(entries) {
		doubled := append(slices.Clone(e.Problems), e.Problems...)
		out = append(out, errorEntry{e.Location, doubled}, errorEntry{e.Location, doubled})
	}
	return out
}
