package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A Violation is a set of tool arguments that breaks the tool's
// inputSchema on purpose, to see how a server reports invalid arguments
// (T-TOOL-8).
type Violation struct {
	Name string          // stable, e.g. "wrong-type/count"
	Args json.RawMessage // a JSON object
	Why  string          // one line: what rule the arguments break
}

// maxGenerateDepth bounds how deep generation follows a schema.
const maxGenerateDepth = 32

// GenerateValid produces tool arguments that satisfy a simple input
// schema: objects with their required members, strings (with length,
// format, and a pattern a handful of candidates satisfy), integers and
// numbers within their bounds and multipleOf, booleans, null, enums and
// consts, arrays with their minimum of items, local $refs, and the first
// alternative of an anyOf or oneOf that works. The result is checked by
// validating it; what it cannot satisfy is an error naming the cause.
func GenerateValid(inputSchema []byte) (json.RawMessage, error) {
	doc, err := parseSchemaDoc(inputSchema)
	if err != nil {
		return nil, fmt.Errorf("generate arguments: %w", err)
	}
	g := generator{root: doc}
	v, err := g.value(doc, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("generate arguments: %w", err)
	}
	ts, err := CompileToolSchema(inputSchema, Versions()[0])
	if err != nil {
		return nil, fmt.Errorf("generate arguments: %w", err)
	}
	es, err := ts.valid(v)
	if err != nil {
		return nil, fmt.Errorf("generate arguments: %w", err)
	}
	if es != nil {
		return nil, fmt.Errorf("generate arguments: the schema wants more than this generator knows (%s)", FirstProblem(es))
	}
	return json.Marshal(v)
}

// GenerateViolations derives arguments that violate an input schema, one
// rule each: every required property missing, every typed property with
// a value of another JSON type, every property with an enum or const
// given a value outside it, and an unknown property where
// additionalProperties (or unevaluatedProperties) is false. The other
// properties come from GenerateValid's arguments, or are left out when
// those cannot be made. A schema that is not an object schema gives nil.
func GenerateViolations(inputSchema []byte) []Violation {
	doc, err := parseSchemaDoc(inputSchema)
	if err != nil {
		return nil
	}
	g := generator{root: doc}
	root, ok := g.resolve(doc).(map[string]any)
	if !ok {
		return nil
	}
	base := map[string]any{}
	if v, err := g.value(doc, 0, 0); err == nil {
		if m, ok := v.(map[string]any); ok {
			base = m
		}
	}
	props, _ := root["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)

	var out []Violation
	add := func(name string, args map[string]any, why string) {
		raw, err := json.Marshal(args)
		if err == nil {
			out = append(out, Violation{Name: name, Args: raw, Why: why})
		}
	}
	for _, r := range stringList(root["required"]) {
		args := cloneMap(base)
		delete(args, r)
		add("missing-required/"+r, args, "required property "+quote(r)+" is missing")
	}
	for _, n := range names {
		ps, _ := g.resolve(props[n]).(map[string]any)
		types := typeList(ps)
		if len(types) == 0 {
			continue
		}
		wrong, ok := wrongTypeValue(types)
		if !ok {
			continue
		}
		args := cloneMap(base)
		args[n] = wrong
		add("wrong-type/"+n, args, fmt.Sprintf("property %s is %s, the schema wants %s", quote(n), jsonType(wrong), strings.Join(types, " or ")))
	}
	for _, n := range names {
		ps, _ := g.resolve(props[n]).(map[string]any)
		allowed, ok := enumOf(ps)
		if !ok {
			continue
		}
		outside, ok := outsideEnum(allowed)
		if !ok {
			continue
		}
		args := cloneMap(base)
		args[n] = outside
		why := fmt.Sprintf("property %s is not one of its %d allowed values", quote(n), len(allowed))
		if len(allowed) == 1 {
			why = fmt.Sprintf("property %s is not its one allowed value", quote(n))
		}
		add("out-of-enum/"+n, args, why)
	}
	if root["additionalProperties"] == false || root["unevaluatedProperties"] == false {
		if extra, ok := extraName(root); ok {
			args := cloneMap(base)
			args[extra] = "x"
			add("extra-property", args, "property "+quote(extra)+" is not allowed: the schema closes the object")
		}
	}
	return out
}

// generator builds values for one schema document.
type generator struct {
	root any
}

// resolve follows local $refs ("#..." JSON Pointers into the document).
func (g generator) resolve(s any) any {
	for range maxGenerateDepth {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return s
		}
		target, ok := lookupPointer(g.root, strings.TrimPrefix(ref, "#"))
		if !ok {
			return s
		}
		s = target
	}
	return s
}

func lookupPointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// value generates a value for schema s; variant asks for a different
// value than variant 0 where the schema allows (for unique items).
func (g generator) value(s any, depth, variant int) (any, error) {
	if depth > maxGenerateDepth {
		return nil, errors.New("schema nested too deep to generate")
	}
	s = g.resolve(s)
	switch s := s.(type) {
	case bool:
		if !s {
			return nil, errors.New("a false schema accepts nothing")
		}
		return variantString("x", variant), nil
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			return nil, fmt.Errorf("cannot follow $ref %s", quote(ref))
		}
		if c, ok := s["const"]; ok {
			return c, nil
		}
		if e, ok := s["enum"].([]any); ok {
			if len(e) == 0 {
				return nil, errors.New("an empty enum accepts nothing")
			}
			return e[variant%len(e)], nil
		}
		if all, ok := s["allOf"].([]any); ok {
			return g.value(g.mergeAllOf(s, all), depth+1, variant)
		}
		for _, kw := range []string{"anyOf", "oneOf"} {
			alts, ok := s[kw].([]any)
			if !ok {
				continue
			}
			// Each alternative is tried together with the keywords
			// beside it (a typed object whose oneOf names the required
			// members); the first that generates wins.
			rest := cloneMap(s)
			delete(rest, kw)
			var firstErr error
			for _, a := range alts {
				v, err := g.value(g.mergeAllOf(rest, []any{a}), depth+1, variant)
				if err == nil {
					return v, nil
				}
				firstErr = cmpErr(firstErr, err)
			}
			return nil, firstErr
		}
		switch pickType(s) {
		case "object":
			return g.object(s, depth)
		case "array":
			return g.array(s, depth)
		case "string":
			return stringValue(s, variant)
		case "integer":
			return numberValue(s, true, variant)
		case "number":
			return numberValue(s, false, variant)
		case "boolean":
			return variant%2 == 0, nil
		case "null":
			return nil, nil
		}
		return variantString("x", variant), nil
	}
	return nil, errors.New("not a schema")
}

func cmpErr(have, next error) error {
	if have != nil {
		return have
	}
	return next
}

// mergeAllOf folds allOf branches (after resolving) into one object
// schema: properties and required are united, other keywords taken from
// the first branch that has them. The result is verified afterwards.
func (g generator) mergeAllOf(s map[string]any, all []any) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		if k != "allOf" {
			out[k] = v
		}
	}
	props := map[string]any{}
	if p, ok := out["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	required := stringList(out["required"])
	for _, b := range all {
		m, ok := g.resolve(b).(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			switch k {
			case "properties":
				if p, ok := v.(map[string]any); ok {
					for pk, pv := range p {
						if _, have := props[pk]; !have {
							props[pk] = pv
						}
					}
				}
			case "required":
				for _, r := range stringList(v) {
					if !slices.Contains(required, r) {
						required = append(required, r)
					}
				}
			default:
				if _, have := out[k]; !have {
					out[k] = v
				}
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(required) > 0 {
		anyRequired := make([]any, len(required))
		for i, r := range required {
			anyRequired[i] = r
		}
		out["required"] = anyRequired
	}
	return out
}

// pickType chooses the JSON type to generate: the first non-null type
// listed, or one inferred from the keywords present.
func pickType(s map[string]any) string {
	types := typeList(s)
	for _, t := range types {
		if t != "null" {
			return t
		}
	}
	if len(types) > 0 {
		return "null"
	}
	has := func(kws ...string) bool {
		for _, k := range kws {
			if _, ok := s[k]; ok {
				return true
			}
		}
		return false
	}
	switch {
	case has("properties", "required", "additionalProperties", "minProperties"):
		return "object"
	case has("items", "prefixItems", "minItems", "contains"):
		return "array"
	case has("minLength", "maxLength", "pattern", "format"):
		return "string"
	case has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "number"
	}
	return ""
}

func (g generator) object(s map[string]any, depth int) (any, error) {
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	fill := func(name string) error {
		if _, done := out[name]; done {
			return nil
		}
		ps, ok := props[name]
		if !ok {
			ps = true
			if ap, ok := s["additionalProperties"]; ok {
				ps = ap
			}
		}
		v, err := g.value(ps, depth+1, 0)
		if err != nil {
			return fmt.Errorf("property %s: %w", quote(name), err)
		}
		out[name] = v
		return nil
	}
	for _, r := range stringList(s["required"]) {
		if err := fill(r); err != nil {
			return nil, err
		}
	}
	// dependentRequired may pull in more members; two rounds settle
	// chains of the depth real schemas use.
	for range 2 {
		deps, _ := s["dependentRequired"].(map[string]any)
		for name, reqs := range deps {
			if _, present := out[name]; !present {
				continue
			}
			for _, r := range stringList(reqs) {
				if err := fill(r); err != nil {
					return nil, err
				}
			}
		}
	}
	if min, ok := intKeyword(s, "minProperties"); ok && len(out) < min {
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if len(out) >= min {
				break
			}
			if err := fill(n); err != nil {
				return nil, err
			}
		}
		if len(out) < min {
			return nil, fmt.Errorf("cannot reach minProperties %d", min)
		}
	}
	return out, nil
}

func (g generator) array(s map[string]any, depth int) (any, error) {
	min, _ := intKeyword(s, "minItems")
	if max, ok := intKeyword(s, "maxItems"); ok && max < min {
		return nil, fmt.Errorf("minItems %d exceeds maxItems %d", min, max)
	}
	prefix, _ := s["prefixItems"].([]any)
	tuple, isTuple := s["items"].([]any) // draft-07 tuple form
	if isTuple {
		prefix = tuple
	}
	out := []any{}
	for i := range min {
		var item any = true
		switch {
		case i < len(prefix):
			item = prefix[i]
		case !isTuple && s["items"] != nil:
			item = s["items"]
		}
		v, err := g.value(item, depth+1, i)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// formatExamples are values that satisfy the common formats.
func formatExample(format string) string {
	switch format {
	case "date":
		return "2026-01-01"
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "time":
		return "00:00:00Z"
	case "email", "idn-email":
		return "user@example.com"
	case "uri", "iri", "uri-reference", "iri-reference", "url":
		return "https://example.com/"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	case "ipv4":
		return "192.0.2.1"
	case "ipv6":
		return "2001:db8::1"
	case "hostname", "idn-hostname":
		return "example.com"
	case "duration":
		return "P1D"
	}
	return "x"
}

// patternCandidates are tried, after the format example, against a
// pattern; a pattern none of them satisfies is beyond this generator.
func patternCandidates() []string {
	return []string{"x", "a", "abc", "example", "A", "ABC", "0", "1", "123", "a1", "x_1", "a-b", "2026-01-01", "user@example.com", "https://example.com/"}
}

func stringValue(s map[string]any, variant int) (any, error) {
	format, _ := s["format"].(string)
	v := variantString(formatExample(format), variant)
	if p, ok := s["pattern"].(string); ok {
		re, err := compileECMA(p)
		if err != nil {
			return nil, fmt.Errorf("cannot satisfy pattern %s", quote(p))
		}
		found := false
		for _, c := range append([]string{v}, patternCandidates()...) {
			if c = variantString(c, variant); re.MatchString(c) {
				v, found = c, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("cannot satisfy pattern %s", quote(p))
		}
	}
	if min, ok := intKeyword(s, "minLength"); ok && len([]rune(v)) < min {
		v += strings.Repeat("x", min-len([]rune(v)))
	}
	if max, ok := intKeyword(s, "maxLength"); ok && len([]rune(v)) > max {
		v = string([]rune(v)[:max])
	}
	return v, nil
}

func variantString(s string, variant int) string {
	if variant == 0 {
		return s
	}
	return s + strconv.Itoa(variant)
}

// onStep rounds v, a multiple of step reached in float64, to step's own
// decimal places: 3 × 0.1 is 0.30000000000000004 in binary, which a
// validator reading the JSON as a decimal (as JSON Schema does) finds no
// multiple of 0.1.
func onStep(v, step float64) float64 {
	f := strconv.FormatFloat(step, 'f', -1, 64)
	i := strings.IndexByte(f, '.')
	if i < 0 {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', len(f)-i-1, 64), 64)
	if err != nil {
		return v
	}
	return r
}

func numberValue(s map[string]any, integer bool, variant int) (any, error) {
	lo, hi := math.Inf(-1), math.Inf(1)
	loOpen, hiOpen := false, false
	if v, ok := numKeyword(s, "minimum"); ok {
		lo = v
	}
	if v, ok := numKeyword(s, "maximum"); ok {
		hi = v
	}
	if v, ok := numKeyword(s, "exclusiveMinimum"); ok && v >= lo {
		lo, loOpen = v, true
	}
	if v, ok := numKeyword(s, "exclusiveMaximum"); ok && v <= hi {
		hi, hiOpen = v, true
	}
	inside := func(v float64) bool {
		return (v > lo || !loOpen && v == lo) && (v < hi || !hiOpen && v == hi)
	}
	step, stepped := numKeyword(s, "multipleOf")
	if !stepped || step <= 0 {
		step, stepped = 1, integer
	}
	if integer && step != math.Trunc(step) {
		step = 1
	}
	var v float64
	switch {
	case stepped:
		// The smallest multiple of step that is not below the bounds,
		// starting from 0 when 0 is allowed.
		// A quotient within rounding of a whole number is that number:
		// 0.3 / 0.1 is 2.9999999999999996 in binary, and its ceiling
		// would skip 0.3.
		start := math.Max(lo, math.Min(0, hi))
		q := start / step
		k := math.Ceil(q)
		if r := math.Round(q); math.Abs(q-r) < 1e-9*math.Max(1, math.Abs(q)) {
			k = r
		}
		v = onStep(k*step, step)
		if !inside(v) {
			v = onStep((k+1)*step, step)
		}
		v = onStep(v+float64(variant)*step, step)
	case inside(0) && variant == 0:
		v = 0
	case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
		v = lo + (hi-lo)*float64(variant+1)/float64(variant+2)
	case !math.IsInf(lo, 0):
		v = lo + 1 + float64(variant)
	case !math.IsInf(hi, 0):
		v = hi - 1 - float64(variant)
	default:
		v = float64(variant)
	}
	if !inside(v) || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil, errors.New("cannot find a number within the bounds")
	}
	return json.Number(strconv.FormatFloat(v, 'g', -1, 64)), nil
}

func numKeyword(s map[string]any, kw string) (float64, bool) {
	n, ok := s[kw].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func intKeyword(s map[string]any, kw string) (int, bool) {
	f, ok := numKeyword(s, kw)
	if !ok || f < 0 || f > 1<<20 {
		return 0, false
	}
	return int(f), true
}

func typeList(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return stringList(t)
	}
	return nil
}

func stringList(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// wrongTypeValue is a value whose JSON type the type list does not allow.
func wrongTypeValue(types []string) (any, bool) {
	for _, c := range []any{"zz-wrong-type", json.Number("12345"), true, map[string]any{}, []any{}, nil} {
		if !typeAllows(types, jsonType(c)) {
			return c, true
		}
	}
	return nil, false
}

func typeAllows(types []string, t string) bool {
	for _, want := range types {
		if want == t || (want == "number" && t == "integer") {
			return true
		}
	}
	return false
}

// jsonType names the JSON type of a generated value.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func enumOf(s map[string]any) ([]any, bool) {
	if s == nil {
		return nil, false
	}
	if c, ok := s["const"]; ok {
		return []any{c}, true
	}
	e, ok := s["enum"].([]any)
	return e, ok && len(e) > 0
}

// outsideEnum is a value of the enum's own type that the enum lacks, so
// the violation is about the value, not the type.
func outsideEnum(allowed []any) (any, bool) {
	in := func(v any) bool {
		for _, a := range allowed {
			if fmt.Sprint(a) == fmt.Sprint(v) && jsonType(a) == jsonType(v) {
				return true
			}
		}
		return false
	}
	switch jsonType(allowed[0]) {
	case "string":
		for i := 0; ; i++ {
			if v := variantString("zz-not-allowed", i); !in(v) {
				return v, true
			}
		}
	case "integer", "number":
		max := math.Inf(-1)
		for _, a := range allowed {
			if n, ok := a.(json.Number); ok {
				if f, err := n.Float64(); err == nil {
					max = math.Max(max, f)
				}
			}
		}
		if !math.IsInf(max, 0) {
			return json.Number(strconv.FormatFloat(math.Floor(max)+1, 'f', -1, 64)), true
		}
	case "boolean":
		for _, b := range []bool{true, false} {
			if !in(b) {
				return b, true
			}
		}
	}
	return nil, false
}

// extraName is a member name the schema neither lists nor matches with
// patternProperties; false when a few tries find none (a pattern such as
// ".*" admits every name: a schema from a server must not keep the
// checker searching) or when a pattern the checker cannot read might
// admit the name it would pick.
func extraName(s map[string]any) (string, bool) {
	props, _ := s["properties"].(map[string]any)
	patterns, _ := s["patternProperties"].(map[string]any)
	var res []*regexp.Regexp
	for p := range patterns {
		re, err := compileECMA(p)
		if err != nil {
			// A pattern the checker cannot read may match any name.
			return "", false
		}
		res = append(res, re)
	}
	for i := range maxExtraTries {
		name := variantString("zz_unexpected", i)
		if _, listed := props[name]; listed {
			continue
		}
		if !slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(name) }) {
			return name, true
		}
	}
	return "", false
}

// maxExtraTries bounds the names extraName tries.
const maxExtraTries = 64
