package refserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The add tool's argument bound, 2^53 - 1: each argument is exact in a
// float64 (what most JSON readers use), and any sum is exact in int64.
const maxSafeInt = 1<<53 - 1

// addTool is the first tool the server offers.
func addTool() map[string]any {
	integer := map[string]any{"type": "integer", "minimum": -maxSafeInt, "maximum": maxSafeInt}
	return map[string]any{
		"name":        "add",
		"title":       "Add two integers",
		"description": "Returns the sum of two integers.",
		"inputSchema": map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"a": integer, "b": integer},
			"required":             []string{"a", "b"},
			"additionalProperties": false,
		},
		"outputSchema": map[string]any{
			"type":       "object",
			"properties": map[string]any{"sum": map[string]any{"type": "integer"}},
			"required":   []string{"sum"},
		},
		"annotations": map[string]any{"readOnlyHint": true},
	}
}

func (s *Server) listTools(m *message, version string) reply {
	// There is one page, so no cursor was ever issued (T-PAGE-1).
	return s.listPage(m, version, "tools", []any{addTool(), askTool(), searchTool(), weatherTool()})
}

func (s *Server) callTool(m *message, version string) reply {
	name := member(m.params, "name")
	ps := nameProblems(m.params, name)
	args := member(m.params, "arguments")
	if args.Exists() && !args.IsObject() {
		ps = append(ps, problem{"/params/arguments", "must be an object"})
	}
	// The 2026-07-28 retry members (T-MRTR-7): malformed ones are
	// malformed whichever tool is called.
	if ir := member(m.params, "inputResponses"); ir.Exists() && !ir.IsObject() {
		ps = append(ps, problem{"/params/inputResponses", "must be an object"})
	}
	if rs := member(m.params, "requestState"); rs.Exists() && rs.Type != gjson.String {
		ps = append(ps, problem{"/params/requestState", "must be a string"})
	}
	if len(ps) > 0 { // malformed tools/call (T-TOOL-7)
		return s.fail(m, s.invalidParams("invalid tools/call params", ps, http.StatusOK))
	}
	switch name.Str {
	case "add":
	case "ask":
		return s.callAsk(m, version, args)
	case "search":
		return s.callSearch(m, version, args)
	case "weather":
		return s.callWeather(m, version, args)
	default:
		return s.fail(m, s.unknownTool(name.Str))
	}
	a, b, ps := addArguments(args)
	if len(ps) > 0 {
		return s.refuseArguments(m, version, ps)
	}
	switch s.fault {
	case faultHang:
		return reply{hang: true}
	case faultCrash:
		return reply{crash: true}
	}
	sum := strconv.FormatInt(a+b, 10)
	rep := s.ok(m, s.toolResult(version, map[string]any{
		"content":           []any{textContent(`{"sum":` + sum + `}`)},
		"structuredContent": map[string]any{"sum": a + b},
	}))
	rep.progress = s.progress(m)
	rep.log = s.logMessage(m, version)
	return rep
}

// refuseArguments refuses arguments that break a tool's inputSchema.
// 2025-06-18 lists invalid arguments as a protocol error; later versions
// want a tool execution error the model can read (T-TOOL-8).
func (s *Server) refuseArguments(m *message, version string, ps []problem) reply {
	if version == version2025Jun {
		return s.fail(m, s.invalidParams("invalid arguments", ps, http.StatusOK))
	}
	return s.ok(m, s.toolResult(version, map[string]any{
		"content": []any{textContent(describe("invalid arguments", distill(ps)))},
		"isError": true,
	}))
}

func (s *Server) toolResult(version string, r map[string]any) map[string]any {
	r = s.finish(version, r)
	return r
}

func textContent(text string) map[string]any {
	return map[string]any{"type": "text", "text": text}
}

func (s *Server) unknownTool(name string) *rpcError {
	e := &rpcError{code: codeInvalidParams, message: `unknown tool "` + s.quote(name) + `"`, status: http.StatusOK}
	switch s.fault {
	case faultCodeZero:
		e.code = 0
	case faultProseData:
		e.data = map[string]any{"detail": "The tool you asked for does not exist."}
	case faultGenericMessage:
		e.message = "Invalid params"
		e.data = map[string]any{"errors": []errorEntry{{Location: "/params/name", Problems: []string{"unknown tool"}}}}
	}
	return e
}

// inOrder is what a reply sends, in the order the server sends it: the
// log message and the progress notification (when asked for) before the
// response. Nil entries are nothing to send.
func (s *Server) inOrder(rep reply) [][]byte {
	if s.fault == faultProgressAfter {
		return [][]byte{rep.log, rep.body, rep.progress}
	}
	return [][]byte{rep.log, rep.progress, rep.body}
}

// logMessage is the notifications/message a 2026-07-28 tools/call of the
// add tool sends when its _meta asks for log messages: one at the level
// asked for, which is at or above it (T-LOG-2). Without a logLevel, or
// in 2025-xx (where the checker never sets a level), none.
func (s *Server) logMessage(m *message, version string) []byte {
	l := member(member(m.params, "_meta"), keyLogLevel)
	if version != version2026 || l.Type != gjson.String || !slices.Contains(logLevels, l.Str) {
		return nil
	}
	level := l.Str
	if s.fault == faultLogBelowLevel {
		level = "debug"
	}
	return encode(map[string]any{
		"jsonrpc": "2.0",
		"method":  "notifications/message",
		"params":  map[string]any{"level": level, "logger": "add", "data": "adding two integers"},
	})
}

// progress is the notifications/progress for a request that asked for it
// with a string or integer progressToken, or nil.
func (s *Server) progress(m *message) []byte {
	token := member(member(m.params, "_meta"), "progressToken")
	if !token.Exists() || !readableID(token) {
		return nil
	}
	echo := json.RawMessage(token.Raw)
	if s.fault == faultProgressTokenString && token.Type == gjson.Number {
		// The classic SDK slip: the token read into a string map key.
		echo, _ = json.Marshal(token.Raw)
	}
	return encode(map[string]any{
		"jsonrpc": "2.0",
		"method":  "notifications/progress",
		"params":  map[string]any{"progressToken": echo, "progress": 1, "total": 1},
	})
}

// addArguments validates the add tool's arguments against its inputSchema;
// absent arguments are validated as {}. Problems never quote the request:
// an unexpected property is reported at its parent, not by name.
func addArguments(args gjson.Result) (a, b int64, ps []problem) {
	const loc = "/params/arguments"
	extra := false
	args.ForEach(func(k, _ gjson.Result) bool {
		extra = extra || (k.Str != "a" && k.Str != "b")
		return true
	})
	if extra {
		ps = append(ps, problem{loc, `has properties other than "a" and "b"`})
	}
	var vals [2]int64
	for i, name := range []string{"a", "b"} {
		v := member(args, name)
		if !v.Exists() {
			ps = append(ps, problem{loc, `missing property "` + name + `"`})
			continue
		}
		n, p := safeInteger(v)
		if p != "" {
			ps = append(ps, problem{loc + "/" + name, p})
		}
		vals[i] = n
	}
	return vals[0], vals[1], ps
}

// safeInteger reads v as a JSON Schema integer within ±maxSafeInt, exactly:
// 1.0 and 1e2 are integers, 1.5 and 1e-1 are not, and no digit string
// is ever converted through a float.
func safeInteger(v gjson.Result) (int64, string) {
	if v.Type != gjson.Number {
		return 0, "must be an integer"
	}
	raw := v.Raw
	neg := strings.HasPrefix(raw, "-")
	raw = strings.TrimPrefix(raw, "-")
	mant, exp, _ := strings.Cut(strings.ToLower(raw), "e")
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	scale := -len(frac)
	if exp != "" {
		e, err := strconv.Atoi(exp)
		if err != nil { // an exponent beyond int: only its sign matters
			if digits == "" {
				return 0, ""
			}
			if strings.HasPrefix(exp, "-") {
				return 0, "must be an integer"
			}
			return 0, bound(neg)
		}
		scale += e
	}
	if digits == "" {
		return 0, "" // zero, however written
	}
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		scale++
	}
	if scale < 0 {
		return 0, "must be an integer"
	}
	if len(digits)+scale > 16 { // beyond 2^53 whatever the digits
		return 0, bound(neg)
	}
	n, _ := strconv.ParseInt(digits+strings.Repeat("0", scale), 10, 64)
	if n > maxSafeInt {
		return 0, bound(neg)
	}
	if neg {
		n = -n
	}
	return n, ""
}

func bound(neg bool) string {
	if neg {
		return "must be >= " + strconv.Itoa(-maxSafeInt)
	}
	return "must be <= " + strconv.Itoa(maxSafeInt)
}

// describe renders distilled problems as one line: what, then each
// location and problem.
func describe(what string, entries []errorEntry) string {
	var parts []string
	for _, e := range entries {
		for _, p := range e.Problems {
			parts = append(parts, strings.TrimSpace(e.Location+" "+p))
		}
	}
	return what + ": " + strings.Join(parts, "; ")
}

// nameProblems are what is wrong with a request that names what it asks
// for in params.name (tools/call, prompts/get).
func nameProblems(params, name gjson.Result) []problem {
	switch {
	case !params.Exists():
		return []problem{{"", `missing property "params"`}}
	case !name.Exists():
		return []problem{{"/params", `missing property "name"`}}
	case name.Type != gjson.String:
		return []problem{{"/params/name", "must be a string"}}
	}
	return nil
}
