package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// How an anyOf or oneOf that no branch satisfied is distilled.
//
// A branch is ruled out when the value has the wrong JSON type for it, or
// when a const or enum at the value itself or at one of its members
// rejects it (a discriminator such as type, resultType, method or mode).
// A const or enum failure that every branch shares (jsonrpc must be
// "2.0") discriminates nothing: it is reported as it is and rules nothing
// out.
//   - One branch left: that branch's problems are reported, as if it were
//     the only schema.
//   - None left: the shared failures, plus one problem at the
//     discriminator listing the values the branches allow there; or, when
//     every branch wanted another JSON type, one problem listing the
//     types; otherwise "does not match any of the allowed shapes".
//   - Several left: those that miss a required member are ruled out too.
//     One left: its problems. None left and each missed exactly one
//     member: "missing property 'a' or 'b'". Otherwise the problems every
//     remaining branch reports (fixing them is needed whichever shape was
//     meant), or, when they share none, "does not match any of the
//     allowed shapes".

// branch is one failed alternative with its leaf errors (wrappers
// flattened; nested alternatives count as leaves).
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
	bs := make([]branch, len(e.Causes))
	for i, c := range e.Causes {
		bs[i] = branch{err: c, leaves: leavesOf(c, nil)}
	}
	shared := sharedValueFailures(bs, at)
	var survivors, byType, byValue []branch
	for _, b := range bs {
		switch {
		case b.typeMismatchAt(at):
			byType = append(byType, b)
		case b.discriminatedAt(at, shared):
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
		d.noneMatched(at, byType, byValue, shared)
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
		rest = survivors
	}
	if !d.addCommon(rest) {
		d.add(at, problemNoShape)
	}
}

// noneMatched reports alternatives that were all ruled out by type or by a
// discriminator value.
func (d *distiller) noneMatched(at []string, byType, byValue []branch, shared map[string]leafProblem) {
	for _, lp := range shared {
		d.add(lp.loc, lp.problems...)
	}
	if len(byValue) > 0 {
		if loc, values, ok := commonDiscriminator(at, byValue, shared); ok {
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

// addCommon adds the problems every branch reports and says whether there
// were any.
func (d *distiller) addCommon(bs []branch) bool {
	var common map[string]map[string]struct{}
	for _, b := range bs {
		sub := distiller{byLoc: map[string]map[string]struct{}{}}
		sub.walk(b.err)
		if common == nil {
			common = sub.byLoc
			continue
		}
		for loc, set := range common {
			other := sub.byLoc[loc]
			for p := range set {
				if _, ok := other[p]; !ok {
					delete(set, p)
				}
			}
			if len(set) == 0 {
				delete(common, loc)
			}
		}
	}
	for loc, set := range common {
		for p := range set {
			d.addAt(loc, p)
		}
	}
	return len(common) > 0
}

// leafProblem is a leaf error rendered: where and what.
type leafProblem struct {
	loc      []string
	problems []string
}

// valueKey identifies a const or enum failure by location and message.
func valueKey(l *jsonschema.ValidationError) string {
	return pointer(l.InstanceLocation) + "\x00" + strings.Join(problemsOf(l.ErrorKind), "\x00")
}

// sharedValueFailures finds the const and enum failures, at the value or a
// direct member, that every branch has alike.
func sharedValueFailures(bs []branch, at []string) map[string]leafProblem {
	if len(bs) < 2 {
		return nil
	}
	counts := map[string]int{}
	first := map[string]leafProblem{}
	for _, b := range bs {
		seen := map[string]bool{}
		for _, l := range b.leaves {
			if !isValueKind(l.ErrorKind) || !atOrChild(l.InstanceLocation, at) {
				continue
			}
			k := valueKey(l)
			if seen[k] {
				continue
			}
			seen[k] = true
			counts[k]++
			if _, ok := first[k]; !ok {
				first[k] = leafProblem{loc: l.InstanceLocation, problems: problemsOf(l.ErrorKind)}
			}
		}
	}
	out := map[string]leafProblem{}
	for k, n := range counts {
		if n == len(bs) {
			out[k] = first[k]
		}
	}
	return out
}

func (b branch) typeMismatchAt(at []string) bool {
	for _, l := range b.leaves {
		if _, ok := l.ErrorKind.(*kind.Type); ok && slices.Equal(l.InstanceLocation, at) {
			return true
		}
	}
	return false
}

// discriminatedAt reports a const or enum failure, not shared by every
// branch, at the value or at one of its direct members.
func (b branch) discriminatedAt(at []string, shared map[string]leafProblem) bool {
	for _, l := range b.leaves {
		if isValueKind(l.ErrorKind) && atOrChild(l.InstanceLocation, at) {
			if _, ok := shared[valueKey(l)]; !ok {
				return true
			}
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

// commonDiscriminator finds a location where every branch's const or
// enum failed (shared failures aside) and the union of the values the
// branches allow there.
func commonDiscriminator(at []string, bs []branch, shared map[string]leafProblem) ([]string, []any, bool) {
	var candidates [][]string
	for _, l := range bs[0].leaves {
		if _, isShared := shared[valueKey(l)]; isValueKind(l.ErrorKind) && atOrChild(l.InstanceLocation, at) && !isShared {
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
