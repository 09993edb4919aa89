package checks

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// A shape is a JSON container's identity up to the order of its members
// and the spelling of its strings: a hash of its decoded contents, and
// the length of its compact JSON text. A server that puts the request's
// object back under data re-encodes it (keys sorted, escapes changed,
// spaces dropped), so the text no longer matches while the value does.
type shape struct {
	sum   uint64
	n     int
	array bool
	// parts and partN are the members (or elements) of this container
	// that a request's container holds too, and their compact length
	// (see memberSet), when the walk matches against one.
	parts, partN int
	// single: the container holds exactly one member (or element),
	// which is one value put back, judged as a value is, not as
	// structure (review rev74: the Go SDK's {"uri": …} of a
	// resources/read whose params held only the uri); an object's one
	// member counts so only with a name within the quote bound, as
	// member names do (a longer one is the client's text, review rev75).
	single bool
	// keyN is the length of the name of an object's one member.
	keyN int
}

// A memberSet holds the members of the request's objects, each by its
// name and value's shape, and the elements of its arrays, by shape,
// with their compact lengths: a server that puts back the client's
// object less a member, with one more, or with one value changed, or
// part of its array, echoes those (review rev38). fill: the walk adds
// what it meets, else it counts what the set holds.
type memberSet struct {
	m    map[uint64]int
	fill bool
	// vocabulary are the server's own words (see echoScan.vocabulary):
	// an element that is one is not counted (a refusal listing the enum
	// the client chose from).
	vocabulary []string
}

// meet adds, or counts into sh, a member of key k and compact length n;
// v is an array's element.
func (ms *memberSet) meet(sh *shape, k uint64, n int, v *gjson.Result) {
	switch {
	case ms == nil:
	case v != nil && v.Type == gjson.String && slices.Contains(ms.vocabulary, v.Str):
	case ms.fill:
		ms.m[k] = n
	case ms.m[k] == n && n > 0:
		sh.parts++
		sh.partN += n
	}
}

// mix spreads the bits of x (SplitMix64's finalizer), so sums of mixed
// hashes do not cancel.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// hashString is FNV-1a over kind and s, mixed.
func hashString(kind byte, s string) uint64 {
	const prime = 0x100000001b3
	h := (uint64(0xcbf29ce484222325) ^ uint64(kind)) * prime
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * prime
	}
	return mix(h)
}

// shapes computes the shape of v and of every container under it, in
// one pass (each value is read once: the time grows with the size),
// calling visit for each container with the keys and indexes that lead
// to it from v. at is the walk's own stack, shared by every call: visit
// reads it and keeps nothing of it, so a path is joined only for the
// containers it wants (displayPath). A scalar's shape is returned for
// its parent; visit sees containers only.
func shapes(v gjson.Result, at []string, ms *memberSet, visit func(at []string, sh shape)) shape {
	switch {
	case v.IsObject():
		sh := shape{sum: 0x6f, n: 2}
		members := 0
		v.ForEach(func(k, val gjson.Result) bool {
			c := shapes(val, append(at, k.Str), ms, visit)
			// Members are summed: their order does not change the sum.
			mk := mix(hashString('k', k.Str) ^ c.sum)
			sh.sum += mk
			sh.n += len(k.Str) + 3 + c.n
			ms.meet(&sh, mk, len(k.Str)+3+c.n, nil)
			members++
			sh.keyN = len(k.Str)
			return true
		})
		if members > 1 {
			sh.n += members - 1
		}
		sh.single = members == 1
		visit(at, sh)
		return sh
	case v.IsArray():
		sh := shape{sum: 0x61, n: 2, array: true}
		i := 0
		v.ForEach(func(_, val gjson.Result) bool {
			c := shapes(val, append(at, strconv.Itoa(i)), ms, visit)
			sh.sum = mix(sh.sum*0x100000001b3 ^ c.sum)
			sh.n += c.n
			ms.meet(&sh, mix(c.sum^0x656c656d), c.n, &val)
			i++
			return true
		})
		if i > 1 {
			sh.n += i - 1
		}
		sh.single = i == 1
		visit(at, sh)
		return sh
	case v.Type == gjson.String:
		return shape{sum: hashString('s', v.Str), n: len(v.Str) + 2}
	}
	// Numbers, booleans and null by their text: 1 and 1.0 differ, as a
	// copy would not make them.
	return shape{sum: hashString('v', v.Raw), n: len(v.Raw)}
}

// displayPath is the display path of the value reached from path by the
// keys and indexes of at, as walk writes it (an index is a key of digits,
// which JoinPath leaves as it is).
func displayPath(path string, at []string) string {
	for _, k := range at {
		path = envelope.JoinPath(path, k)
	}
	return path
}

// containerSet holds the request's containers by shape: the compact
// length of each sum. A request has a few containers, looked up in a
// list; past smallSet of them a map takes over, so a hostile request of
// 100,000 objects costs linear time.
type containerSet struct {
	few  []shape
	many map[uint64]int
}

const smallSet = 16

func (cs *containerSet) add(sh shape) {
	if cs.many == nil {
		for i := range cs.few {
			if cs.few[i].sum == sh.sum {
				cs.few[i].n = sh.n // the last one of a sum wins, as in a map
				return
			}
		}
		if len(cs.few) < smallSet {
			cs.few = append(cs.few, sh)
			return
		}
		cs.many = make(map[uint64]int, 2*smallSet)
		for _, f := range cs.few {
			cs.many[f.sum] = f.n
		}
	}
	cs.many[sh.sum] = sh.n
}

// holds: a container of the request has sh's sum and compact length.
func (cs *containerSet) holds(sh shape) bool {
	if cs.many != nil {
		n, ok := cs.many[sh.sum]
		return ok && n == sh.n
	}
	for _, f := range cs.few {
		if f.sum == sh.sum {
			return f.n == sh.n
		}
	}
	return false
}

// structures finds the request's containers put back under data whole:
// each counts as a whole request value, its compact text toward the quote
// bound. It returns the paths of the outermost ones, whose strings are
// not counted again as whole values.
func (s *echoScan) structures(data gjson.Result, path string) paths {
	if !data.IsObject() && !data.IsArray() {
		return nil
	}
	// The walks' stack of names: one after the other, in one list (the
	// Scratch's, when the pass has one).
	var stack []string
	if sc := s.p.scratch; sc != nil {
		if sc.path == nil {
			sc.path = make([]string, 0, 16)
		}
		stack = sc.path[:0]
	} else {
		stack = make([]string, 0, 16)
	}
	if !s.containersDone {
		s.containersDone = true
		s.members = memberSet{m: map[uint64]int{}, fill: true, vocabulary: s.ownValues()}
		shapes(parsedRequest(s.p).Root(), stack, &s.members, func(_ []string, sh shape) {
			if sh.n >= minPiece {
				s.containers.add(sh)
			}
		})
		s.members.fill = false
	}
	bound := s.p.Contract.QuoteBound
	var found []string
	var shs []shape
	shapes(data, stack, &s.members, func(at []string, sh shape) {
		// Two or more of a request container's members (or elements),
		// over the bound, are the client's structure, as a text written
		// out again is (see reserialised); one is one value, and so is a
		// request container of one put back whole (its value is judged
		// as values are).
		if s.containers.holds(sh) && (!sh.single || sh.keyN > bound) || sh.parts > 1 && sh.partN > bound {
			p := displayPath(path, at)
			// Children are visited first: a parent found later
			// replaces them.
			for len(found) > 0 && strings.HasPrefix(found[len(found)-1], p+".") {
				found, shs = found[:len(found)-1], shs[:len(shs)-1]
			}
			found, shs = append(found, p), append(shs, sh)
		}
	})
	if len(found) == 0 {
		return nil
	}
	out := make(paths, len(found))
	for i, p := range found {
		out[p] = true
		sh := shs[i]
		// Keyed by the value, as a string is: the same object echoed
		// twice is one value.
		s.markValue("\x00" + strconv.FormatUint(sh.sum, 16))
		s.paths = append(s.paths, p)
		kind, part := "object", "members"
		if sh.array {
			kind, part = "array", "elements"
		}
		switch {
		case !s.containers.holds(sh):
			s.p.Failf(p, "%d %s of the request's %s are echoed as structure (%d characters of it), over the quote bound of %d", sh.parts, part, kind, sh.partN, bound)
			s.failed = append(s.failed, p)
		case sh.n > bound:
			s.p.Failf(p, "the request's %s of %d characters is echoed whole as structure, over the quote bound of %d", kind, sh.n, bound)
			s.failed = append(s.failed, p)
		}
	}
	return out
}

// paths is a set of display paths.
type paths map[string]bool

// holds: path is one of the set or lies under one, read by its prefixes
// (a lookup per level, whatever the size of the set).
func (ps paths) holds(path string) bool {
	if len(ps) == 0 {
		return false
	}
	for p := path; ; {
		if ps[p] {
			return true
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}
