package schema

import (
	"fmt"
	"slices"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxSchemaVisits bounds the work one validation may cost: the number of
// subschemas the validator may visit, every reference followed (the
// schema unfolded; a member's subschema counts once, though items visits
// its own once per element). The bytes, depth and subschema bounds do
// not see it: a reference is a few bytes, and each level of a 4 KB
// schema whose subschemas refer twice to the next level doubles it (2^40
// visits for forty levels, GBs of error tree; review rev29). A visit
// costs about 1.5 µs and 300 bytes when it fails (a
// fan-out of 114,684 visits validated in 0.16 s and 33 MB here). The largest type of the
// official schemas unfolds to 2,037 visits (2026-07-28 ClientRequest;
// TestSchemaVisitsOfficial), a realistic tool schema to a few hundred:
// the bound leaves a margin of 64 times the former.
const maxSchemaVisits = 1 << 17

// schemaVisits counts the subschemas a validation against root may
// visit, with references followed, up to limit:
// it returns limit+1 once the count passes it. It counts paths in the
// graph of the compiled schema, memoized per subschema, never by walking
// them. A reference back into a subschema being counted (a cycle) counts
// once: the validator either stops it as a loop at the same place (a
// RefCycle error) or follows it one level deeper in the instance, where
// the instance's own bounds end it. A $dynamicRef or $recursiveRef counts
// as the largest subschema it may resolve to, since the one it does
// depends on the instance's path.
func schemaVisits(root *jsonschema.Schema, limit uint64) uint64 {
	g := reach(root)
	dynamic, recursive := g.dynamic, g.recursive

	add := func(a, b uint64) uint64 { return min(a+b, limit+1) }
	// The walk is iterative: a --schema file may chain references as deep
	// as it has subschemas.
	const (
		unseen = iota
		open   // on the walk's path: a reference back to it is a cycle
		done
	)
	state := map[*jsonschema.Schema]int{}
	count := map[*jsonschema.Schema]uint64{}
	// of is what an edge to s adds to its parent: its count when done, 1
	// when it closes a cycle.
	of := func(s *jsonschema.Schema) uint64 {
		if state[s] == done {
			return count[s]
		}
		return 1
	}
	type frame struct {
		s    *jsonschema.Schema
		kids []*jsonschema.Schema
		next int
	}
	var stack []frame
	push := func(s *jsonschema.Schema) {
		state[s] = open
		stack = append(stack, frame{s: s, kids: subschemas(s)})
	}
	push(root)
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(f.kids) {
			k := f.kids[f.next]
			f.next++
			if state[k] == unseen {
				push(k)
			}
			continue
		}
		// Every child is done or open: sum them, then the dynamic
		// references' largest targets.
		n := uint64(1)
		for _, k := range f.kids {
			n = add(n, of(k))
		}
		var alts [][]*jsonschema.Schema
		if d := f.s.DynamicRef; d != nil {
			alts = append(alts, append([]*jsonschema.Schema{d.Ref}, dynamic[d.Anchor]...))
		}
		if f.s.RecursiveRef != nil {
			alts = append(alts, append([]*jsonschema.Schema{f.s.RecursiveRef}, recursive...))
		}
		pending := false
		for _, alt := range alts {
			for _, t := range alt {
				if t != nil && state[t] == unseen {
					push(t)
					pending = true
				}
			}
		}
		if pending {
			// (f may have moved: the pushes grew the stack. The targets
			// are counted first, then this frame again.)
			continue
		}
		for _, alt := range alts {
			var most uint64
			for _, t := range alt {
				if t != nil {
					most = max(most, of(t))
				}
			}
			n = add(n, most)
		}
		s := stack[len(stack)-1].s
		count[s], state[s] = n, done
		stack = stack[:len(stack)-1]
	}
	return count[root]
}

// subschemas are the subschemas s applies, at its own place in the
// instance or at its members', $ref and $recursiveRef's static target
// included; $dynamicRef's are schemaVisits' to weigh. Boolean schemas
// count as subschemas too: visiting one is a step.
func subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	one := func(t *jsonschema.Schema) {
		if t != nil {
			out = append(out, t)
		}
	}
	anySchema := func(v any) {
		switch v := v.(type) {
		case *jsonschema.Schema:
			one(v)
		case []*jsonschema.Schema:
			out = append(out, v...)
		}
	}
	one(s.Ref)
	one(s.Not)
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	one(s.If)
	one(s.Then)
	one(s.Else)
	one(s.PropertyNames)
	for _, t := range s.Properties {
		one(t)
	}
	for _, t := range s.PatternProperties {
		one(t)
	}
	anySchema(s.AdditionalProperties)
	for _, v := range s.Dependencies {
		anySchema(v)
	}
	for _, t := range s.DependentSchemas {
		one(t)
	}
	one(s.UnevaluatedProperties)
	one(s.Contains)
	anySchema(s.Items)
	anySchema(s.AdditionalItems)
	out = append(out, s.PrefixItems...)
	one(s.Items2020)
	one(s.UnevaluatedItems)
	one(s.ContentSchema)
	return out
}

// checkVisits refuses a compiled schema whose validation may visit more
// than maxSchemaVisits subschemas.
func checkVisits(sch *jsonschema.Schema) error {
	if n := schemaVisits(sch, maxSchemaVisits); n > maxSchemaVisits {
		return fmt.Errorf("%w: its references make one validation visit more than %d subschemas", ErrSchemaBounds, maxSchemaVisits)
	}
	return nil
}

// A recursion bounds the work a schema whose references recurse may do
// on one instance: schemaVisits counts a cycle once, but a validation
// follows it once per level of the instance, and a cycle that fans out
// (two subschemas at one place both recursing into the same member)
// doubles the work per level: 2^d visits for an instance d levels deep,
// and instances may nest 512 levels (review rev30). It counts the
// visits with the schema unfolded level by level: count(s, k, type) is
// what validating a value of that type with k levels below it against s
// may visit, along one path down the instance (the work over the whole
// instance is that times its size at most). Subschemas at the value's
// own place (allOf, anyOf, $ref…) count at the same level; those of a
// member (properties, items…) one level down, and only for a value of
// the type that has members of that kind, so a JSON-value schema that
// recurses through both objects and arrays grows linearly, not
// twofold. Properties of distinct names are never the same member: the
// largest counts, not their sum, so a tree with left and right children
// grows linearly too. A reference back to a subschema at the same place
// counts once, as in schemaVisits: the validator stops it as a loop.
// Levels are computed as deep as the instances met need, once for all
// of them, and stop where the count passes maxSchemaVisits or stops
// growing (a schema without recursion stops at its own depth).
type recursion struct {
	nodes []recNode
	root  int
	// order is a post-order of the graph of same-place references; pos
	// is each node's place in it. A reference to a node later in order
	// closes a loop in place.
	order []int
	pos   []int

	mu    sync.Mutex
	level int                     // the deepest level counted, -1 before any
	cur   [instanceTypes][]uint64 // the counts at level
	over  bool                    // the root's count at level passes the bound
	still bool                    // level counted as the one before: so are all deeper
}

// Instance types as recursion tells them apart: what members a value has.
const (
	instanceObject = iota
	instanceArray
	instanceOther
	instanceTypes
)

// A recNode is one subschema's references, by how they apply.
type recNode struct {
	here    []int   // at the value's own place
	hereObj []int   // at its place, for an object (dependentSchemas)
	alts    [][]int // at its place, the largest of each ($dynamicRef's targets)
	propMax []int   // at a member of an object, each a distinct one (properties)
	objSum  []int   // at any member of an object
	arrMax  []int   // at an element of an array, each a distinct one (prefixItems)
	arrSum  []int   // at any element of an array
}

// newRecursion indexes the subschemas reachable from root.
func newRecursion(root *jsonschema.Schema) *recursion {
	g := reach(root)
	all, index := g.all, g.index

	r := &recursion{nodes: make([]recNode, len(all)), root: 0, level: -1}
	ids := func(ss ...*jsonschema.Schema) []int {
		var out []int
		for _, s := range ss {
			if s != nil {
				out = append(out, index[s])
			}
		}
		return out
	}
	anyIDs := func(v any) []int {
		switch v := v.(type) {
		case *jsonschema.Schema:
			return ids(v)
		case []*jsonschema.Schema:
			return ids(v...)
		}
		return nil
	}
	for i, s := range all {
		n := &r.nodes[i]
		n.here = ids(append(append(append([]*jsonschema.Schema{s.Ref, s.Not, s.If, s.Then, s.Else, s.ContentSchema}, s.AllOf...), s.AnyOf...), s.OneOf...)...)
		for _, v := range s.Dependencies {
			n.hereObj = append(n.hereObj, anyIDs(v)...)
		}
		for _, t := range s.DependentSchemas {
			n.hereObj = append(n.hereObj, ids(t)...)
		}
		if d := s.DynamicRef; d != nil {
			n.alts = append(n.alts, append(ids(d.Ref), ids(g.dynamic[d.Anchor]...)...))
		}
		if s.RecursiveRef != nil {
			n.alts = append(n.alts, append(ids(s.RecursiveRef), ids(g.recursive...)...))
		}
		for _, t := range s.Properties {
			n.propMax = append(n.propMax, ids(t)...)
		}
		for _, t := range s.PatternProperties {
			n.objSum = append(n.objSum, ids(t)...)
		}
		n.objSum = append(n.objSum, anyIDs(s.AdditionalProperties)...)
		n.objSum = append(n.objSum, ids(s.UnevaluatedProperties, s.PropertyNames)...)
		if items, ok := s.Items.([]*jsonschema.Schema); ok {
			n.arrMax = append(n.arrMax, ids(items...)...)
		} else {
			n.arrSum = append(n.arrSum, anyIDs(s.Items)...)
		}
		n.arrMax = append(n.arrMax, ids(s.PrefixItems...)...)
		n.arrSum = append(n.arrSum, anyIDs(s.AdditionalItems)...)
		n.arrSum = append(n.arrSum, ids(s.Items2020, s.UnevaluatedItems, s.Contains)...)
	}

	// The post-order, iteratively: a --schema file may chain references
	// as deep as it has subschemas.
	r.pos = make([]int, len(all))
	seen := make([]bool, len(all))
	type frame struct {
		node int
		kids []int
		next int
	}
	for start := range all {
		if seen[start] {
			continue
		}
		seen[start] = true
		stack := []frame{{start, r.nodes[start].sameLevel(), 0}}
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next < len(f.kids) {
				k := f.kids[f.next]
				f.next++
				if !seen[k] {
					seen[k] = true
					stack = append(stack, frame{k, r.nodes[k].sameLevel(), 0})
				}
				continue
			}
			r.pos[f.node] = len(r.order)
			r.order = append(r.order, f.node)
			stack = stack[:len(stack)-1]
		}
	}
	return r
}

// sameLevel are the node's references at the value's own place.
func (n *recNode) sameLevel() []int {
	out := append(append([]int{}, n.here...), n.hereObj...)
	for _, alt := range n.alts {
		out = append(out, alt...)
	}
	return out
}

// step counts the next level from the one before (none at level 0: a
// value with no levels below it has no members).
func (r *recursion) step() {
	limit := uint64(maxSchemaVisits)
	add := func(a, b uint64) uint64 { return min(a+b, limit+1) }
	below := func(j int) uint64 { // a member's count: of its largest type
		if r.level < 0 {
			return 0
		}
		return max(r.cur[instanceObject][j], r.cur[instanceArray][j], r.cur[instanceOther][j])
	}
	var next [instanceTypes][]uint64
	for t := range next {
		next[t] = make([]uint64, len(r.nodes))
	}
	for _, i := range r.order {
		n := &r.nodes[i]
		for t := range instanceTypes {
			here := func(j int) uint64 {
				if r.pos[j] < r.pos[i] {
					return next[t][j]
				}
				return 1 // a loop in place
			}
			c := uint64(1)
			for _, j := range n.here {
				c = add(c, here(j))
			}
			for _, alt := range n.alts {
				var most uint64
				for _, j := range alt {
					most = max(most, here(j))
				}
				c = add(c, most)
			}
			members := func(distinct, any []int) {
				var most uint64
				for _, j := range distinct {
					most = max(most, below(j))
				}
				c = add(c, most)
				for _, j := range any {
					c = add(c, below(j))
				}
			}
			switch t {
			case instanceObject:
				for _, j := range n.hereObj {
					c = add(c, here(j))
				}
				members(n.propMax, n.objSum)
			case instanceArray:
				members(n.arrMax, n.arrSum)
			}
			next[t][i] = c
		}
	}
	r.still = r.level >= 0
	for t := range next {
		r.still = r.still && slices.Equal(next[t], r.cur[t])
	}
	r.level++
	r.cur = next
	r.over = max(next[instanceObject][r.root], next[instanceArray][r.root], next[instanceOther][r.root]) > limit
}

// allows reports whether validating an instance nested depth levels deep
// (envelope.Depth) stays within maxSchemaVisits. Safe for concurrent
// use; a nil recursion, of no schema, allows any.
func (r *recursion) allows(depth int) bool {
	if r == nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.level < depth && !r.over && !r.still {
		r.step()
	}
	if r.over {
		return depth < r.level
	}
	return true
}

// A graph is the subschemas reachable from a root, every reference
// followed: the one walk schemaVisits and newRecursion share.
type graph struct {
	all       []*jsonschema.Schema // the root first
	index     map[*jsonschema.Schema]int
	dynamic   map[string][]*jsonschema.Schema // $dynamicAnchor name → the subschemas that hold it
	recursive []*jsonschema.Schema            // the subschemas with $recursiveAnchor
}

func reach(root *jsonschema.Schema) graph {
	g := graph{index: map[*jsonschema.Schema]int{}, dynamic: map[string][]*jsonschema.Schema{}}
	add := func(s *jsonschema.Schema) {
		if _, ok := g.index[s]; s != nil && !ok {
			g.index[s] = len(g.all)
			g.all = append(g.all, s)
		}
	}
	add(root)
	for i := 0; i < len(g.all); i++ {
		s := g.all[i]
		if s.DynamicAnchor != "" {
			g.dynamic[s.DynamicAnchor] = append(g.dynamic[s.DynamicAnchor], s)
		}
		if s.RecursiveAnchor {
			g.recursive = append(g.recursive, s)
		}
		for _, t := range subschemas(s) {
			add(t)
		}
		if s.DynamicRef != nil {
			add(s.DynamicRef.Ref)
		}
		add(s.RecursiveRef)
	}
	return g
}

// checkDepth refuses, as beyond the checker's bounds, an instance deeper
// than sch's recursion lets it validate within maxSchemaVisits.
func checkDepth(r *recursion, depth int) error {
	if r.allows(depth) {
		return nil
	}
	return fmt.Errorf("%w: a value nested %d levels deep, where the schema's recursion would make its validation visit more than %d subschemas", ErrBeyondBounds, depth, maxSchemaVisits)
}
