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
// An anyOf or oneOf that no branch satisfied is reduced to the branch
// that was meant, or to what every candidate branch agrees on (see
// alternatives.go for the rules): never every branch's errors.
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
	d.addAt(pointer(loc), problems...)
}

// addAt adds problems at a location already rendered as a pointer.
func (d *distiller) addAt(ptr string, problems ...string) {
	set := d.byLoc[ptr]
	if set == nil {
		set = map[string]struct{}{}
		d.byLoc[ptr] = set
	}
	for _, p := range problems {
		set[p] = struct{}{}
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

// prefixEntries moves entries under the JSON Pointer prefix.
func prefixEntries(prefix string, es []envelope.DistilledEntry) []envelope.DistilledEntry {
	for i := range es {
		es[i].Location = prefix + es[i].Location
	}
	return es
}

// mergeEntries combines two distilled lists into one, keeping the
// distilled form: one entry per location, sorted, problems de-duplicated
// and sorted.
func mergeEntries(a, b []envelope.DistilledEntry) []envelope.DistilledEntry {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	d := distiller{byLoc: map[string]map[string]struct{}{}}
	for _, es := range [][]envelope.DistilledEntry{a, b} {
		for _, e := range es {
			d.addAt(e.Location, e.Problems...)
		}
	}
	return d.entries()
}
