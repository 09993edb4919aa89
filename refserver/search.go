package refserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// searchTool is the second tool: read-only, with a schema that uses what
// the first lacks (a nested object, an array, enum, const, format, closed
// objects at two depths), so that argument fixtures can break each.
// format is an annotation in JSON Schema 2020-12: the tool does not
// assert it, and serves a value that breaks it.
func searchTool() map[string]any {
	return map[string]any{
		"name":        "search",
		"title":       "Search the word list",
		"description": "Returns the words that start with the query.",
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query":   map[string]any{"type": "string", "minLength": 1, "maxLength": 200},
				"mode":    map[string]any{"type": "string", "enum": []string{"exact", "prefix"}},
				"version": map[string]any{"const": 1},
				"limit":   map[string]any{"type": "integer", "minimum": 1, "maximum": 50},
				"fields":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 5},
				"filter": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 10},
						"since": map[string]any{"type": "string", "format": "date"},
					},
					"additionalProperties": false,
				},
				"contact": map[string]any{"type": "string", "format": "email"},
			},
			"required":             []string{"query"},
			"additionalProperties": false,
		},
		"outputSchema": map[string]any{
			"type":       "object",
			"properties": map[string]any{"matches": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
			"required":   []string{"matches"},
		},
		"annotations": map[string]any{"readOnlyHint": true},
	}
}

var words = []string{"alpha", "beta", "delta", "gamma", "kappa", "lambda", "omega", "sigma"}

// searchArguments validates the search tool's arguments against its
// inputSchema, by hand: the server shares no validator with the checker.
// Problems never quote the request; an unexpected property is reported
// at its parent, not by name.
func searchArguments(args gjson.Result) (query, mode string, limit int64, ps []problem) {
	const loc = "/params/arguments"
	known := []string{"query", "mode", "version", "limit", "fields", "filter", "contact"}
	if closedExtra(args, known) {
		ps = append(ps, problem{loc, "has an unexpected property"})
	}
	mode, limit = "prefix", 50
	switch q := member(args, "query"); {
	case !q.Exists():
		ps = append(ps, problem{loc, `missing property "query"`})
	case q.Type != gjson.String:
		ps = append(ps, problem{loc + "/query", "must be a string"})
	case q.Str == "":
		ps = append(ps, problem{loc + "/query", "must not be empty"})
	case len([]rune(q.Str)) > 200:
		ps = append(ps, problem{loc + "/query", "must be at most 200 characters"})
	default:
		query = q.Str
	}
	if v := member(args, "mode"); v.Exists() {
		if v.Type != gjson.String || (v.Str != "exact" && v.Str != "prefix") {
			ps = append(ps, problem{loc + "/mode", `must be one of "exact", "prefix"`})
		} else {
			mode = v.Str
		}
	}
	if v := member(args, "version"); v.Exists() && (v.Type != gjson.Number || v.Num != 1) {
		ps = append(ps, problem{loc + "/version", "must be 1"})
	}
	if v := member(args, "limit"); v.Exists() {
		n, p := safeInteger(v)
		switch {
		case p != "":
			ps = append(ps, problem{loc + "/limit", p})
		case n < 1:
			ps = append(ps, problem{loc + "/limit", "must be >= 1"})
		case n > 50:
			ps = append(ps, problem{loc + "/limit", "must be <= 50"})
		default:
			limit = n
		}
	}
	if fs := member(args, "fields"); fs.Exists() {
		ps = append(ps, stringArray(fs, loc+"/fields", 5)...)
	}
	if f := member(args, "filter"); f.Exists() {
		floc := loc + "/filter"
		if !f.IsObject() {
			ps = append(ps, problem{floc, "must be an object"})
		} else {
			if closedExtra(f, []string{"tags", "since"}) {
				ps = append(ps, problem{floc, "has an unexpected property"})
			}
			if t := member(f, "tags"); t.Exists() {
				ps = append(ps, stringArray(t, floc+"/tags", 10)...)
			}
			if s := member(f, "since"); s.Exists() && s.Type != gjson.String {
				ps = append(ps, problem{floc + "/since", "must be a string"})
			}
		}
	}
	if c := member(args, "contact"); c.Exists() && c.Type != gjson.String {
		ps = append(ps, problem{loc + "/contact", "must be a string"})
	}
	return query, mode, limit, ps
}

// stringArray validates an array of at most max strings.
func stringArray(v gjson.Result, loc string, max int) []problem {
	if !v.IsArray() {
		return []problem{{loc, "must be an array"}}
	}
	var ps []problem
	items := v.Array()
	if len(items) > max {
		ps = append(ps, problem{loc, "must have at most " + itoa(max) + " items"})
	}
	for i, it := range items {
		if it.Type != gjson.String {
			ps = append(ps, problem{loc + "/" + itoa(i), "must be a string"})
		}
	}
	return ps
}

// closedExtra reports whether obj has a member outside known.
func closedExtra(obj gjson.Result, known []string) bool {
	extra := false
	obj.ForEach(func(k, _ gjson.Result) bool {
		extra = !slices.Contains(known, k.Str)
		return !extra
	})
	return extra
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// formatBroken reports whether a value the schema marks with a format
// breaks it (the format-internal fault's trigger).
func formatBroken(args gjson.Result) bool {
	if c := member(args, "contact"); c.Type == gjson.String && !strings.Contains(c.Str, "@") {
		return true
	}
	s := member(member(args, "filter"), "since")
	return s.Type == gjson.String && !dateLike(s.Str)
}

func dateLike(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	return strings.Trim(s[:4]+s[5:7]+s[8:], "0123456789") == ""
}

func (s *Server) callSearch(m *message, version string, args gjson.Result) reply {
	query, mode, limit, ps := searchArguments(args)
	if len(ps) > 0 {
		return s.refuseArguments(m, version, ps)
	}
	if s.fault == faultFormatInternal && formatBroken(args) {
		return s.fail(m, &rpcError{code: codeInternal, message: "internal error", status: http.StatusInternalServerError})
	}
	matches := []string{}
	for _, w := range words {
		if int64(len(matches)) >= limit {
			break
		}
		if w == query || (mode == "prefix" && strings.HasPrefix(w, query)) {
			matches = append(matches, w)
		}
	}
	text, _ := json.Marshal(map[string]any{"matches": matches})
	return s.ok(m, s.toolResult(version, map[string]any{
		"content":           []any{textContent(string(text))},
		"structuredContent": map[string]any{"matches": matches},
	}))
}
