package expect

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// A HeaderDecl is one x-mcp-header of a tool's inputSchema (2026-07-28):
// where it stands, on which property, and how it was reached. PRO1010
// judges each (T-HDR-7, T-HDR-8); ParamArgs asks headers only of a tool
// whose declarations are all valid, as a conforming client drops any
// other tool.
type HeaderDecl struct {
	At     string       // the property's path, from the path given
	Prop   gjson.Result // the property's schema
	Typed  gjson.Result // Prop, or the schema its local $ref names (LocalRef)
	Kind   int          // the kind of value Typed gives (HeaderKind)
	Value  gjson.Result // the x-mcp-header value
	Direct bool         // reached from the root through properties alone
}

// Named: the value is a non-empty HTTP token, a header name.
func (d HeaderDecl) Named() bool {
	return d.Value.Type == gjson.String && d.Value.Str != "" && envelope.IsToken(d.Value.Str)
}

// HeaderDecls lists the x-mcp-header declarations of schema in document
// order, path naming the schema for the declarations' At.
func HeaderDecls(schema gjson.Result, path string) []HeaderDecl {
	var out []HeaderDecl
	var walk func(s gjson.Result, at string, direct bool)
	walk = func(s gjson.Result, at string, direct bool) {
		if !s.IsObject() {
			return
		}
		s.ForEach(func(k, v gjson.Result) bool {
			switch {
			case k.Str == "x-mcp-header":
				typed := LocalRef(schema, s)
				out = append(out, HeaderDecl{At: at, Prop: s, Typed: typed, Kind: HeaderKind(schema, typed), Value: v, Direct: direct})
			case k.Str == "properties" && v.IsObject():
				v.ForEach(func(name, sub gjson.Result) bool {
					walk(sub, envelope.JoinPath(at+".properties", name.Str), direct)
					return true
				})
			case schemaMaps[k.Str] && v.IsObject():
				v.ForEach(func(name, sub gjson.Result) bool {
					walk(sub, envelope.JoinPath(envelope.JoinPath(at, k.Str), name.Str), false)
					return true
				})
			case !subschemas[k.Str]:
				// A value (default, examples, const, enum) or an unknown
				// keyword: what it holds is data, not a schema, and an
				// "x-mcp-header" key in it annotates nothing.
			case v.IsObject():
				walk(v, envelope.JoinPath(at, k.Str), false)
			case v.IsArray():
				for i, it := range v.Array() {
					walk(it, at+"."+k.Str+"."+strconv.Itoa(i), false)
				}
			}
			return true
		})
	}
	walk(schema, path, true)
	return out
}

// headersInvalid: an x-mcp-header of schema breaks T-HDR-7 (no token,
// not reached through properties alone, used twice case-insensitively,
// or on a property of no single integer, string or boolean type): the
// tool is invalid, and a conforming HTTP client drops it.
func headersInvalid(schema gjson.Result) bool {
	seen := map[string]bool{}
	for _, d := range HeaderDecls(schema, "") {
		name := strings.ToLower(d.Value.Str)
		if !d.Named() || !d.Direct || seen[name] || d.Kind == HeaderOther {
			return true
		}
		seen[name] = true
	}
	return false
}

// HeadersInvalid: the tool's x-mcp-header declarations break T-HDR-7
// (see headersInvalid), so a conforming HTTP client of 2026-07-28 drops
// it from its list and never calls it.
func (t *Tool) HeadersInvalid() bool {
	return t != nil && t.Input != nil && headersInvalid(gjson.ParseBytes(t.Input))
}

// subschemas are the keywords (JSON Schema 2020-12 and draft-07) whose
// value is a schema or an array of schemas; schemaMaps those whose value
// maps names to schemas (besides properties). Only these hold annotations
// such as x-mcp-header.
var (
	subschemas = map[string]bool{
		"additionalProperties": true, "items": true, "prefixItems": true, "additionalItems": true,
		"contains": true, "allOf": true, "anyOf": true, "oneOf": true, "not": true,
		"if": true, "then": true, "else": true, "propertyNames": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "contentSchema": true,
	}
	schemaMaps = map[string]bool{
		"$defs": true, "definitions": true, "patternProperties": true,
		"dependentSchemas": true, "dependencies": true,
	}
)

// LocalRef is the schema a property without a type of its own names
// with a local $ref ("#/$defs/X", "#/definitions/X"), followed a few
// steps (a loop ends there); prop itself when it has a type, names no
// local reference, or one that does not resolve (then the kind is read
// as typed through $ref).
func LocalRef(root, prop gjson.Result) gjson.Result {
	for range 8 {
		ref := prop.Get("$ref")
		if prop.Get("type").Exists() || ref.Type != gjson.String || !strings.HasPrefix(ref.Str, "#/") {
			return prop
		}
		var path []string
		for _, seg := range strings.Split(ref.Str[2:], "/") {
			// JSON Pointer (RFC 6901): ~1 is "/", ~0 is "~".
			path = append(path, strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~"))
		}
		target := root
		for _, seg := range path {
			target = target.Get(gjson.Escape(seg))
		}
		if !target.IsObject() {
			return prop
		}
		prop = target
	}
	return prop
}

// Kinds of property an x-mcp-header may sit on.
const (
	HeaderScalar   = iota // type string, integer or boolean
	HeaderNullable        // one of them or null, or an enum or const of them
	HeaderRef             // typed through $ref alone
	HeaderComposed        // typed through anyOf, oneOf or allOf of one such kind
	HeaderOther
)

// HeaderKind reads the type a property gives its value, as T-HDR-7
// sorts them; root is the schema its local $refs resolve in.
func HeaderKind(root, prop gjson.Result) int {
	return headerKind(root, prop, 0)
}

// maxComposition bounds how deep headerKind follows compositions and the
// references in them (a loop of references ends there): deeper, a client
// must resolve much to see the type, which warns.
const maxComposition = 8

func headerKind(root, prop gjson.Result, depth int) int {
	scalar := func(t string) bool { return t == "string" || t == "integer" || t == "boolean" }
	t := prop.Get("type")
	switch {
	case t.Type == gjson.String && scalar(t.Str):
		return HeaderScalar
	case t.IsArray():
		// One scalar type, and null beside it: a nullable property.
		kinds, null := 0, false
		for _, e := range t.Array() {
			switch {
			case scalar(e.Str):
				kinds++
			case e.Str == "null":
				null = true
			default:
				return HeaderOther
			}
		}
		switch {
		case kinds == 1 && null:
			return HeaderNullable
		case kinds == 1 && len(t.Array()) == 1:
			return HeaderScalar // ["string"] is "string"
		}
	case !t.Exists() && prop.Get("$ref").Exists():
		// The type stands elsewhere in the schema: the property may be
		// a scalar, which a client must resolve the reference to see.
		return HeaderRef
	case !t.Exists() && (prop.Get("anyOf").Exists() || prop.Get("oneOf").Exists() || prop.Get("allOf").Exists()):
		if depth >= maxComposition {
			return HeaderComposed
		}
		return composedKind(root, prop, depth)
	case !t.Exists():
		// An enum or const of one scalar type (and null).
		vals := prop.Get("enum").Array()
		if c := prop.Get("const"); c.Exists() {
			vals = append(vals, c)
		}
		kind := ""
		for _, v := range vals {
			k := ""
			switch {
			case v.Type == gjson.Null:
				continue
			case v.Type == gjson.String:
				k = "string"
			case v.Type == gjson.True, v.Type == gjson.False:
				k = "boolean"
			case v.Type == gjson.Number && envelope.IsInteger(v.Raw):
				k = "integer"
			default:
				return HeaderOther
			}
			if kind != "" && k != kind {
				return HeaderOther
			}
			kind = k
		}
		if kind != "" {
			return HeaderNullable
		}
	}
	return HeaderOther
}

// composedKind reads a property typed by composition alone, as schema
// generators write an optional parameter ({"anyOf":[{"type":"string"},
// {"type":"null"}]}, Pydantic's Optional[str]) or a reference with
// siblings ({"allOf":[{"$ref":…}]}, Pydantic before 2.9): one member of
// one scalar kind, beside null members in anyOf or oneOf, a member's
// local $ref followed. Beside null it is nullable, as
// "type":["string","null"] is; else a client must resolve the
// composition to see the scalar.
func composedKind(root, prop gjson.Result, depth int) int {
	anyOf, oneOf, allOf := prop.Get("anyOf"), prop.Get("oneOf"), prop.Get("allOf")
	var members []gjson.Result
	switch {
	case anyOf.Exists() && oneOf.Exists(), (anyOf.Exists() || oneOf.Exists()) && allOf.Exists():
		return HeaderOther
	case allOf.IsArray() && len(allOf.Array()) == 1:
		members = allOf.Array()
	case anyOf.IsArray():
		members = anyOf.Array()
	case oneOf.IsArray():
		members = oneOf.Array()
	default:
		return HeaderOther
	}
	kind, null := -1, false
	for _, m := range members {
		if m.Get("type").Str == "null" && !allOf.Exists() {
			null = true
			continue
		}
		if kind != -1 {
			return HeaderOther // two members that are not null: no one type
		}
		// A member typed through a local $ref is read where it points (a
		// reference to an object is no scalar, wrapped or not).
		kind = headerKind(root, LocalRef(root, m), depth+1)
	}
	switch {
	case kind == -1 || kind == HeaderOther:
		return HeaderOther
	case null && (kind == HeaderScalar || kind == HeaderNullable):
		return HeaderNullable
	}
	return HeaderComposed
}
