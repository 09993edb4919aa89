package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/wymcp/wymcp-check/envelope"
)

// maxUnexpected is how many unexpected property names one location lists
// before the rest are counted: a garbage object may carry thousands.
const maxUnexpected = 3

// Distill turns a validation failure into one entry per instance location
// (a JSON Pointer, root ""), locations sorted byte-wise, each location's
// problems de-duplicated and sorted byte-wise.
//
// Only leaf causes become problems: the wrapper nodes of the library's
// error tree ($ref, allOf, the root, groups) say nothing of their own and
// are dropped, so no entry merely points at a deeper one.
//
// An anyOf or oneOf that no branch satisfied is reported as follows.
// A branch is ruled out when the value has the wrong JSON type for it, or
// when a const or enum at the value itself or at one of its members (a
// discriminator such as type, resultType, method or mode) rejects it.
//   - one branch left: that branch's own problems are reported, as if it
//     were the only schema;
//   - several left: those that miss a required member are ruled out too;
//     if one is left, its problems are reported; if each branch missed just
//     one member, "missing property 'a' or 'b'";
//   - none left, all ruled out by the same discriminator: one problem at
//     the discriminator listing the allowed values; all by type: one
//     problem listing the allowed types;
//   - otherwise one problem at the value: "does not match any of the
//     allowed shapes".
//
// A oneOf that several branches satisfied is "matches more than one of the
// allowed shapes". A nil err gives nil; an error that is not a
// *jsonschema.ValidationError gives one entry at the root.
func Distill(err error) []envelope.DistilledEntry {
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []envelope.DistilledEntry{{Location: "", Problems: []string{oneLine(err.Error())}}}
	}
	d := distiller{byLoc: map[string]map[string]struct{}{}}
	d.walk(verr)
	return d.entries()
}

type distiller struct {
	byLoc map[string]map[string]struct{}
}

func (d *distiller) add(loc []string, problems ...string) {
	p := pointer(loc)
	set := d.byLoc[p]
	if set == nil {
		set = map[string]struct{}{}
		d.byLoc[p] = set
	}
	for _, pr := range problems {
		set[pr] = struct{}{}
	}
}

func (d *distiller) entries() []envelope.DistilledEntry {
	out := make([]envelope.DistilledEntry, 0, len(d.byLoc))
	for loc, set := range d.byLoc {
		probs := make([]string, 0, len(set))
		for p := range set {
			probs = append(probs, p)
		}
		slices.Sort(probs)
		out = append(out, envelope.DistilledEntry{Location: loc, Problems: probs})
	}
	slices.SortFunc(out, func(a, b envelope.DistilledEntry) int { return strings.Compare(a.Location, b.Location) })
	return out
}

// isWrapper reports kinds that only group their causes.
func isWrapper(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		return true
	}
	return false
}

func (d *distiller) walk(e *jsonschema.ValidationError) {
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf:
		d.alternatives(e)
	case *kind.OneOf:
		if len(k.Subschemas) > 0 {
			d.add(e.InstanceLocation, problemManyShapes)
			return
		}
		d.alternatives(e)
	case *kind.AdditionalProperties:
		d.unexpected(e.InstanceLocation, k.Properties)
	default:
		if !isWrapper(k) {
			d.add(e.InstanceLocation, problemsOf(k)...)
			return
		}
		if len(e.Causes) == 0 {
			d.add(e.InstanceLocation, "does not match the schema")
		}
		for _, c := range e.Causes {
			d.walk(c)
		}
	}
}

// unexpected reports additional properties at the object that holds them,
// naming a few and counting the rest.
func (d *distiller) unexpected(loc []string, names []string) {
	names = slices.Clone(names)
	slices.Sort(names)
	for i, n := range names {
		if i == maxUnexpected {
			rest := len(names) - maxUnexpected
			d.add(loc, fmt.Sprintf("%d more unexpected %s", rest, plural(rest, "property", "properties")))
			break
		}
		d.add(loc, "unexpected property "+quote(n))
	}
}

// branch is one failed alternative of an anyOf or oneOf with its leaf
// errors (wrappers flattened; nested alternatives count as leaves).
type branch struct {
	err    *jsonschema.ValidationError
	leaves []*jsonschema.ValidationError
}

func leavesOf(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if isWrapper(e.ErrorKind) && len(e.Causes) > 0 {
		for _, c := range e.Causes {
			out = leavesOf(c, out)
		}
		return out
	}
	return append(out, e)
}

func (d *distiller) alternatives(e *jsonschema.ValidationError) {
	at := e.InstanceLocation
	var survivors, byType, byValue []branch
	for _, c := range e.Causes {
		b := branch{err: c, leaves: leavesOf(c, nil)}
		switch {
		case b.typeMismatchAt(at):
			byType = append(byType, b)
		case b.discriminatedAt(at):
			byValue = append(byValue, b)
		default:
			survivors = append(survivors, b)
		}
	}
	switch len(survivors) {
	case 1:
		d.walk(survivors[0].err)
		return
	case 0:
		d.noneMatched(at, byType, byValue)
		return
	}
	var rest []branch
	for _, b := range survivors {
		if !b.missesMemberAt(at) {
			rest = append(rest, b)
		}
	}
	if len(rest) == 1 {
		d.walk(rest[0].err)
		return
	}
	if len(rest) == 0 {
		if names, ok := singleMissing(survivors, at); ok {
			d.add(at, "missing property "+strings.Join(names, " or "))
			return
		}
	}
	d.add(at, problemNoShape)
}

// noneMatched reports alternatives that were all ruled out by type or by a
// discriminator value.
func (d *distiller) noneMatched(at []string, byType, byValue []branch) {
	if len(byValue) > 0 {
		if loc, values, ok := commonDiscriminator(at, byValue); ok {
			d.add(loc, oneOfValues(values))
			return
		}
		d.add(at, problemNoShape)
		return
	}
	var got string
	var want []string
	for _, b := range byType {
		for _, l := range b.leaves {
			if t, ok := l.ErrorKind.(*kind.Type); ok && slices.Equal(l.InstanceLocation, at) {
				got = t.Got
				for _, w := range t.Want {
					if !slices.Contains(want, w) {
						want = append(want, w)
					}
				}
			}
		}
	}
	if got == "" {
		d.add(at, problemNoShape)
		return
	}
	d.add(at, fmt.Sprintf("got %s, want %s", got, strings.Join(want, " or ")))
}

func (b branch) typeMismatchAt(at []string) bool {
	for _, l := range b.leaves {
		if _, ok := l.ErrorKind.(*kind.Type); ok && slices.Equal(l.InstanceLocation, at) {
			return true
		}
	}
	return false
}

// discriminatedAt reports a const or enum failure at the value or at one
// of its direct members.
func (b branch) discriminatedAt(at []string) bool {
	for _, l := range b.leaves {
		if isValueKind(l.ErrorKind) && atOrChild(l.InstanceLocation, at) {
			return true
		}
	}
	return false
}

func (b branch) missesMemberAt(at []string) bool {
	for _, l := range b.leaves {
		if _, ok := l.ErrorKind.(*kind.Required); ok && slices.Equal(l.InstanceLocation, at) {
			return true
		}
	}
	return false
}

func isValueKind(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.Const, *kind.Enum:
		return true
	}
	return false
}

func atOrChild(loc, at []string) bool {
	if len(loc) != len(at) && len(loc) != len(at)+1 {
		return false
	}
	return slices.Equal(loc[:len(at)], at)
}

// commonDiscriminator finds the location where every branch's const or
// enum failed and the union of the values the branches allow there.
func commonDiscriminator(at []string, bs []branch) ([]string, []any, bool) {
	var candidates [][]string
	for _, l := range bs[0].leaves {
		if isValueKind(l.ErrorKind) && atOrChild(l.InstanceLocation, at) {
			candidates = append(candidates, l.InstanceLocation)
		}
	}
	for _, loc := range candidates {
		var values []any
		ok := true
		for _, b := range bs {
			found := false
			for _, l := range b.leaves {
				if !slices.Equal(l.InstanceLocation, loc) {
					continue
				}
				switch k := l.ErrorKind.(type) {
				case *kind.Const:
					values = appendValue(values, k.Want)
					found = true
				case *kind.Enum:
					for _, w := range k.Want {
						values = appendValue(values, w)
					}
					found = true
				}
			}
			if !found {
				ok = false
				break
			}
		}
		if ok {
			return loc, values, true
		}
	}
	return nil, nil, false
}

func appendValue(values []any, v any) []any {
	for _, have := range values {
		if fmt.Sprint(have) == fmt.Sprint(v) {
			return values
		}
	}
	return append(values, v)
}

// singleMissing reports whether every branch failed only for want of one
// member, and which members, in branch order.
func singleMissing(bs []branch, at []string) ([]string, bool) {
	var names []string
	for _, b := range bs {
		if len(b.leaves) != 1 {
			return nil, false
		}
		r, ok := b.leaves[0].ErrorKind.(*kind.Required)
		if !ok || len(r.Missing) != 1 || !slices.Equal(b.leaves[0].InstanceLocation, at) {
			return nil, false
		}
		q := quote(r.Missing[0])
		if !slices.Contains(names, q) {
			names = append(names, q)
		}
	}
	return names, len(names) > 0
}

// pointer renders an instance location as a JSON Pointer. A token longer
// than quoteBound runes is cut, and control characters are escaped: the
// location comes from untrusted input and must stay short and one line.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = clipToken(t)
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

func clipToken(t string) string {
	if len(t) <= quoteBound && isPlain(t) {
		return t
	}
	return bound(t, false)
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// oneLine keeps the first line of a message, lowercased and bounded.
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return clip(strings.ToLower(s))
}
