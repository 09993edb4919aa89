package runner

import (
	"encoding/json"
	"slices"

	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/schema"
)

// targetedArgs makes arguments for one of the targeted argument kinds
// from a tool's inputSchema: valid arguments (where they can be made)
// with one kind of fault put in. ok is false when the schema has nothing
// that kind can break. Only the schema's own top-level properties and
// their direct children are read: a schema that hides them behind $ref
// or composition is left to the general violations generator.
func targetedArgs(input []byte, kind string) (json.RawMessage, bool) {
	var root map[string]any
	if json.Unmarshal(input, &root) != nil {
		return nil, false
	}
	props, _ := root["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	args := map[string]any{}
	if valid, err := schema.GenerateValid(input); err == nil {
		_ = json.Unmarshal(valid, &args)
	}
	prop := func(n string) map[string]any { m, _ := props[n].(map[string]any); return m }
	switch kind {
	case fixtures.ArgsMulti:
		// A missing required property, up to three of the wrong type and
		// an unknown one: locations at the root and under it, so that the
		// order and de-duplication of data.errors show.
		broken, changed := 0, map[string]bool{}
		for _, req := range requiredOf(root) {
			if _, present := args[req]; present {
				delete(args, req)
				changed[req] = true
				broken++
				break
			}
		}
		for _, n := range names {
			if w, ok := wrongType(prop(n)); ok && !changed[n] && broken < 4 {
				args[n] = w
				broken++
			}
		}
		if closed(root) {
			args["wymcp_extra"] = "x"
			broken++
		}
		if broken < 2 {
			return nil, false
		}
	case fixtures.ArgsNested:
		for _, n := range names {
			p := prop(n)
			inner, _ := p["properties"].(map[string]any)
			if typeOf(p) != "object" || len(inner) == 0 {
				continue
			}
			innerNames := make([]string, 0, len(inner))
			for k := range inner {
				innerNames = append(innerNames, k)
			}
			slices.Sort(innerNames)
			for _, k := range innerNames {
				ip, _ := inner[k].(map[string]any)
				if w, ok := wrongType(ip); ok {
					obj, _ := args[n].(map[string]any)
					if obj == nil {
						obj = map[string]any{}
					}
					obj[k] = w
					args[n] = obj
					return marshal(args)
				}
			}
		}
		return nil, false
	case fixtures.ArgsArray:
		for _, n := range names {
			p := prop(n)
			items, _ := p["items"].(map[string]any)
			if typeOf(p) != "array" || items == nil {
				continue
			}
			if w, ok := wrongType(items); ok {
				args[n] = []any{w}
				return marshal(args)
			}
		}
		return nil, false
	case fixtures.ArgsEnum:
		for _, n := range names {
			p := prop(n)
			if c, ok := p["const"]; ok {
				args[n] = outside([]any{c})
				return marshal(args)
			}
			if e, ok := p["enum"].([]any); ok && len(e) > 0 {
				args[n] = outside(e)
				return marshal(args)
			}
		}
		return nil, false
	case fixtures.ArgsExtra:
		if !closed(root) {
			return nil, false
		}
		args["wymcp_extra"] = "x"
	case fixtures.ArgsFormat:
		for _, n := range names {
			p := prop(n)
			f, _ := p["format"].(string)
			if typeOf(p) != "string" || !slices.Contains(breakableFormats, f) || p["pattern"] != nil || p["enum"] != nil || p["const"] != nil {
				continue
			}
			v := "wymcp not a " + f
			if max, ok := p["maxLength"].(float64); ok && float64(len(v)) > max {
				continue
			}
			if min, ok := p["minLength"].(float64); ok && float64(len(v)) < min {
				continue
			}
			args[n] = v
			return marshal(args)
		}
		return nil, false
	default:
		return nil, false
	}
	return marshal(args)
}

// breakableFormats are formats no text with spaces satisfies.
var breakableFormats = []string{"email", "idn-email", "date", "date-time", "time", "uri", "uri-reference", "iri", "uuid", "ipv4", "ipv6", "hostname", "idn-hostname", "duration"}

func marshal(v map[string]any) (json.RawMessage, bool) {
	b, err := json.Marshal(v)
	return b, err == nil
}

// typeOf is a schema's single type name, "" when it has none or several.
func typeOf(s map[string]any) string {
	t, _ := s["type"].(string)
	return t
}

// wrongType is a value of a JSON type the schema does not allow; ok is
// false for a schema without a type (anything goes).
func wrongType(s map[string]any) (any, bool) {
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				types = append(types, str)
			}
		}
	}
	if len(types) == 0 {
		return nil, false
	}
	allows := func(t string) bool {
		return slices.Contains(types, t) || (t == "integer" && slices.Contains(types, "number"))
	}
	for _, c := range []struct {
		t string
		v any
	}{{"string", "wymcp-wrong-type"}, {"integer", 42}, {"boolean", true}, {"object", map[string]any{}}, {"array", []any{}}} {
		if !allows(c.t) {
			return c.v, true
		}
	}
	return nil, false
}

// outside is a value none of allowed equals.
func outside(allowed []any) any {
	for _, c := range []any{"wymcp-not-allowed", 987654321.0, false} {
		in := false
		for _, a := range allowed {
			if a == c {
				in = true
			}
		}
		if !in {
			return c
		}
	}
	return map[string]any{"wymcp": true}
}

func closed(s map[string]any) bool {
	return s["additionalProperties"] == false || s["unevaluatedProperties"] == false
}

func requiredOf(s map[string]any) []string {
	var out []string
	if rs, ok := s["required"].([]any); ok {
		for _, r := range rs {
			if str, ok := r.(string); ok {
				out = append(out, str)
			}
		}
	}
	slices.Sort(out)
	return out
}
