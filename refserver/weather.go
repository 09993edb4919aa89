package refserver

import (
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
)

// weatherTool is the third tool: read-only, with parameters it marks
// x-mcp-header, a string and an integer, so that a 2026-07-28 client
// mirrors them as Mcp-Param-Region and Mcp-Param-Days (T-HDR-4) and the
// server has headers to check (T-HDR-4..6).
func weatherTool() map[string]any {
	return map[string]any{
		"name":        "weather",
		"title":       "Weather forecast",
		"description": "Returns the forecast of a region for the coming days.",
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"region": map[string]any{"type": "string", "minLength": 1, "maxLength": 64, "x-mcp-header": "Region"},
				"days":   map[string]any{"type": "integer", "minimum": 1, "maximum": 7, "x-mcp-header": "Days"},
			},
			"required":             []string{"region"},
			"additionalProperties": false,
		},
		"outputSchema": map[string]any{
			"type":       "object",
			"properties": map[string]any{"forecast": map[string]any{"type": "string"}},
			"required":   []string{"forecast"},
		},
		"annotations": map[string]any{"readOnlyHint": true},
	}
}

// weatherParams are the weather tool's x-mcp-header parameters: argument
// name and header name, as its inputSchema marks them.
var weatherParams = [...]struct{ arg, header string }{{"region", "Region"}, {"days", "Days"}}

func (s *Server) callWeather(m *message, version string, args gjson.Result) reply {
	const loc = "/params/arguments"
	var ps []problem
	if closedExtra(args, []string{"region", "days"}) {
		ps = append(ps, problem{loc, "has an unexpected property"})
	}
	switch r := member(args, "region"); {
	case !r.Exists():
		ps = append(ps, problem{loc, `missing property "region"`})
	case r.Type != gjson.String:
		ps = append(ps, problem{loc + "/region", "must be a string"})
	case r.Str == "" || len([]rune(r.Str)) > 64:
		ps = append(ps, problem{loc + "/region", "must be 1 to 64 characters"})
	}
	days := int64(1)
	if d := member(args, "days"); d.Exists() {
		n, p := safeInteger(d)
		switch {
		case p != "":
			ps = append(ps, problem{loc + "/days", p})
		case n < 1 || n > 7:
			ps = append(ps, problem{loc + "/days", "must be 1 to 7"})
		default:
			days = n
		}
	}
	if len(ps) > 0 {
		return s.refuseArguments(m, version, ps)
	}
	// The region is not quoted back: a result carries no request value
	// it does not need.
	forecast := "sunny for " + strconv.FormatInt(days, 10) + " day(s)"
	return s.ok(m, s.toolResult(version, map[string]any{
		"content":           []any{textContent(`{"forecast":"` + forecast + `"}`)},
		"structuredContent": map[string]any{"forecast": forecast},
	}))
}

// checkParams checks the Mcp-Param-* headers of a 2026-07-28 tools/call
// of the weather tool against the arguments they mirror (T-HDR-4): a
// non-null argument needs its header, holding printable ASCII only
// (T-HDR-6), equal to the argument after decoding the Base64 sentinel
// (T-HDR-3); integers compare as numbers, so 42.0 matches 42 (T-HDR-5).
// A null or absent argument needs no header. An argument of a type no
// header mirrors (an object, a fraction) is left to argument validation.
// Mcp-Param-* headers no parameter names are ignored (AMB-11).
func (s *Server) checkParams(h http.Header, m *message) *rpcError {
	if m.method != "tools/call" || member(m.params, "name").Str != "weather" || s.fault == faultUncheckedParam {
		return nil
	}
	args := member(m.params, "arguments")
	for _, p := range weatherParams {
		v := member(args, p.arg)
		var want string
		switch v.Type {
		case gjson.String:
			want = v.Str
		case gjson.Number, gjson.True, gjson.False:
			want = v.Raw
		default: // absent, null, or no header's kind
			continue
		}
		name := "Mcp-Param-" + p.header
		value, raw, e := s.headerValue(h, name, want, true)
		if e != nil {
			return e
		}
		if !sameParam(v, value) {
			return s.headerError("header "+name+" does not match the body", name, want, &raw)
		}
	}
	return nil
}

// sameParam compares a header's decoded value with the argument it
// mirrors: numbers by value (T-HDR-5), the rest as text.
func sameParam(v gjson.Result, header string) bool {
	switch v.Type {
	case gjson.String:
		return header == v.Str
	case gjson.Number:
		n, err := strconv.ParseFloat(header, 64)
		return err == nil && n == v.Num
	}
	return header == v.Raw
}
