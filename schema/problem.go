package schema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// quoteBound is the most runes of one value a problem or location token
// may carry. A reply is untrusted: a garbage property name must not come
// back whole through the distiller (the contract's default quote bound).
const quoteBound = 64

// maxValueList bounds a rendered list of allowed values; longer lists are
// summarised by their count.
const maxValueList = 96

// Problem strings. They are short, lowercase, one line and without a
// trailing period, and they never carry more than quoteBound runes of any
// one value.
const (
	problemNoShape      = "does not match any of the allowed shapes"
	problemManyShapes   = "matches more than one of the allowed shapes"
	problemNotAllowed   = "not allowed"
	problemExcluded     = "matches a shape that is not allowed"
	problemContent      = "content does not match its schema"
	problemNoContains   = "does not contain a matching item"
	problemRefCycle     = "schema reference cycle"
	problemNotJSONValue = "not a json value"
)

// quote renders s in single quotes, control characters escaped, cut at
// quoteBound runes with a trailing ellipsis.
func quote(s string) string {
	return "'" + clip(s) + "'"
}

// clip escapes control characters and quotes and cuts s at quoteBound runes.
func clip(s string) string { return bound(s, true) }

// bound cuts s at quoteBound runes with an ellipsis and escapes what would
// break a one-line message: control characters, and with quotes set, the
// quote and backslash.
func bound(s string, quotes bool) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == quoteBound {
			b.WriteString("…")
			break
		}
		n++
		switch {
		case quotes && (r == '\'' || r == '\\'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// display renders a schema-side value (a const, an enum member) for a
// problem: strings quoted, other scalars as JSON.
func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case nil:
		return "null"
	case map[string]any, []any:
		return ""
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return clip(string(b))
	}
}

// oneOfValues renders "must be one of …" for the allowed values, or a
// count when the list would be long or holds objects and arrays.
func oneOfValues(want []any) string {
	if len(want) == 1 {
		if d := display(want[0]); d != "" {
			return "must be " + d
		}
		return "must equal the allowed value"
	}
	parts := make([]string, 0, len(want))
	size := 0
	for _, w := range want {
		d := display(w)
		if d == "" {
			return fmt.Sprintf("must be one of the %d allowed values", len(want))
		}
		size += len(d) + 2
		parts = append(parts, d)
	}
	if size > maxValueList {
		return fmt.Sprintf("must be one of the %d allowed values", len(want))
	}
	return "must be one of " + strings.Join(parts, ", ")
}

// ratString renders a schema bound without float noise.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return clip(r.Num().String())
	}
	s := strings.TrimRight(r.FloatString(9), "0")
	return clip(strings.TrimSuffix(s, "."))
}

// plural picks the noun form for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// problemsOf states why one leaf error rejected the value. Composite
// kinds (anyOf, oneOf, additionalProperties, wrappers) are handled by the
// distiller and never reach here. Kinds this package does not know (a
// custom vocabulary) are named by their keyword only, because their own
// messages may quote the instance.
func problemsOf(k jsonschema.ErrorKind) []string {
	switch k := k.(type) {
	case *kind.Type:
		return []string{fmt.Sprintf("got %s, want %s", k.Got, strings.Join(k.Want, " or "))}
	case *kind.Const:
		return []string{oneOfValues([]any{k.Want})}
	case *kind.Enum:
		return []string{oneOfValues(k.Want)}
	case *kind.Required:
		out := make([]string, len(k.Missing))
		for i, m := range k.Missing {
			out[i] = MissingProperty(m)
		}
		return out
	case *kind.Dependency:
		return requires(k.Prop, k.Missing)
	case *kind.DependentRequired:
		return requires(k.Prop, k.Missing)
	case *kind.FalseSchema:
		return []string{problemNotAllowed}
	case *kind.Not:
		return []string{problemExcluded}
	case *kind.Format:
		if k.Want == formatBase64 {
			return []string{"not Base64 in either alphabet"}
		}
		return []string{"not a valid " + clip(k.Want)}
	case *kind.MinProperties:
		return []string{fmt.Sprintf("got %d %s, want at least %d", k.Got, plural(k.Got, "property", "properties"), k.Want)}
	case *kind.MaxProperties:
		return []string{fmt.Sprintf("got %d %s, want at most %d", k.Got, plural(k.Got, "property", "properties"), k.Want)}
	case *kind.MinItems:
		return []string{fmt.Sprintf("got %d %s, want at least %d", k.Got, plural(k.Got, "item", "items"), k.Want)}
	case *kind.MaxItems:
		return []string{fmt.Sprintf("got %d %s, want at most %d", k.Got, plural(k.Got, "item", "items"), k.Want)}
	case *kind.AdditionalItems:
		return []string{fmt.Sprintf("%d more %s than allowed", k.Count, plural(k.Count, "item", "items"))}
	case *kind.MinLength:
		return []string{fmt.Sprintf("got %d %s, want at least %d", k.Got, plural(k.Got, "character", "characters"), k.Want)}
	case *kind.MaxLength:
		return []string{fmt.Sprintf("got %d %s, want at most %d", k.Got, plural(k.Got, "character", "characters"), k.Want)}
	case *kind.Pattern:
		return []string{"does not match pattern " + quote(k.Want)}
	case *kind.Minimum:
		return []string{"must be >= " + ratString(k.Want)}
	case *kind.Maximum:
		return []string{"must be <= " + ratString(k.Want)}
	case *kind.ExclusiveMinimum:
		return []string{"must be > " + ratString(k.Want)}
	case *kind.ExclusiveMaximum:
		return []string{"must be < " + ratString(k.Want)}
	case *kind.MultipleOf:
		return []string{"must be a multiple of " + ratString(k.Want)}
	case *kind.UniqueItems:
		return []string{fmt.Sprintf("items %d and %d are equal", k.Duplicates[0], k.Duplicates[1])}
	case *kind.PropertyNames:
		// jsonschema/v6 v6.0.3 stores this failure's instance location
		// without copying it, so a nested one can be reported at a
		// sibling's location; the name itself is right.
		return []string{"invalid property name " + quote(k.Property)}
	case *kind.Contains:
		return []string{problemNoContains}
	case *kind.MinContains:
		return []string{fmt.Sprintf("got %d matching items, want at least %d", len(k.Got), k.Want)}
	case *kind.MaxContains:
		return []string{fmt.Sprintf("got %d matching items, want at most %d", len(k.Got), k.Want)}
	case *kind.ContentEncoding:
		return []string{"not valid " + clip(k.Want)}
	case *kind.ContentMediaType:
		return []string{"not valid " + clip(k.Want)}
	case *kind.ContentSchema:
		return []string{problemContent}
	case *kind.RefCycle:
		return []string{problemRefCycle}
	case *kind.InvalidJsonValue:
		return []string{problemNotJSONValue}
	}
	if kw := k.KeywordPath(); len(kw) > 0 {
		return []string{"fails " + quote(kw[len(kw)-1])}
	}
	return []string{"does not match the schema"}
}

// MissingProperty is the problem a distilled entry gives for a required
// member name its location lacks. A check that leaves a member to another
// check matches its absence with it, so the wording lives in one place.
func MissingProperty(name string) string { return "missing property " + quote(name) }

func requires(prop string, missing []string) []string {
	out := make([]string, len(missing))
	for i, m := range missing {
		out[i] = "property " + quote(prop) + " requires " + quote(m)
	}
	return out
}
