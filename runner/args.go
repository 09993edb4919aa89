package runner

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/big"
	"slices"
	"strconv"

	"github.com/wymcp/wymcp-check/envelope"
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

// A paramCall is a call that gives an x-mcp-header parameter a value:
// the arguments, the header's name (after Mcp-Param-), the value a
// conforming client sends in it, and a well-formed value of the same
// kind that differs (T-HDR-4).
type paramCall struct {
	args                 json.RawMessage
	header, value, other string
}

// paramArgs makes arguments for one of the x-mcp-header kinds from a
// tool's inputSchema: valid arguments that hold a value for a top-level
// parameter the schema marks with x-mcp-header (a string first, as the
// spec's own example, then an integer, then a boolean; by name within a
// kind), or, for ArgsParamNull, null there. Only a single-typed string,
// integer or boolean property is taken: the kinds T-HDR-7 allows, whose
// header value the spec fixes. ok is false when none fits.
func paramArgs(input []byte, kind string) (paramCall, bool) {
	var root map[string]any
	if json.Unmarshal(input, &root) != nil {
		return paramCall{}, false
	}
	props, _ := root["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	kinds := []string{"string", "integer", "boolean"}
	if kind == fixtures.ArgsParamInteger {
		kinds = []string{"integer"}
	}
	for _, want := range kinds {
		for _, n := range names {
			p, _ := props[n].(map[string]any)
			h, _ := p["x-mcp-header"].(string)
			if typeOf(p) != want || !envelope.IsToken(h) {
				continue
			}
			if pc, ok := paramValue(root, n, h, kind); ok {
				return pc, true
			}
		}
	}
	return paramCall{}, false
}

// paramValue generates valid arguments that hold property n: the schema
// with n added to required gives them, and what is valid for it is
// valid for the tool's own, which asks less.
func paramValue(root map[string]any, n, header, kind string) (paramCall, bool) {
	withN := maps.Clone(root)
	if req := anyList(root["required"]); !slices.Contains(req, any(n)) {
		// (required holds unique names: a schema with n twice does
		// not compile.)
		withN["required"] = append(slices.Clip(req), n)
	}
	b, err := json.Marshal(withN)
	if err != nil {
		return paramCall{}, false
	}
	valid, err := schema.GenerateValid(b)
	if err != nil {
		return paramCall{}, false
	}
	d := json.NewDecoder(bytes.NewReader(valid))
	d.UseNumber() // an integer's text, not a float's
	var args map[string]any
	if d.Decode(&args) != nil {
		return paramCall{}, false
	}
	pc := paramCall{header: header}
	switch v := args[n].(type) {
	case string:
		if v == "" {
			// An empty header value reads as an absent one to many
			// servers: no probe to build on.
			return paramCall{}, false
		}
		pc.value = envelope.EncodeHeaderValue(v)
		pc.other = "wymcp-other-value"
		if v == pc.other {
			pc.other += "-2"
		}
	case json.Number:
		i, ok := new(big.Int).SetString(v.String(), 10)
		if !ok {
			return paramCall{}, false
		}
		pc.value, pc.other = i.String(), new(big.Int).Add(i, big.NewInt(1)).String()
	case bool:
		pc.value, pc.other = strconv.FormatBool(v), strconv.FormatBool(!v)
	default:
		return paramCall{}, false
	}
	if kind == fixtures.ArgsParamNull {
		args[n] = nil
	}
	out, ok := marshal(args)
	pc.args = out
	return pc, ok
}

// anyList is a JSON array's members, nil for anything else.
func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}
