package schema

import (
	"fmt"

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
	dynamic := map[string][]*jsonschema.Schema{} // $dynamicAnchor name → its subschemas
	var recursive []*jsonschema.Schema           // subschemas with $recursiveAnchor
	seen := map[*jsonschema.Schema]bool{}
	todo := []*jsonschema.Schema{root}
	for len(todo) > 0 {
		s := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if s == nil || seen[s] {
			continue
		}
		seen[s] = true
		if s.DynamicAnchor != "" {
			dynamic[s.DynamicAnchor] = append(dynamic[s.DynamicAnchor], s)
		}
		if s.RecursiveAnchor {
			recursive = append(recursive, s)
		}
		todo = append(todo, subschemas(s)...)
		if s.DynamicRef != nil {
			todo = append(todo, s.DynamicRef.Ref)
		}
		if s.RecursiveRef != nil {
			todo = append(todo, s.RecursiveRef)
		}
	}

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
