package checks

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

var Distilled = &Check{
	ID:       "ERR5001",
	Title:    "Validation errors are distilled",
	SpecRef:  "contract: distilled validation errors",
	Severity: MUST,
	Area:     AreaDistilled,
	Doc: `When error.data.errors is present it is distilled: an array with one
entry per instance location, each entry an object with "location" (a JSON
Pointer into the request, "" for the root) and "problems" (non-empty
strings, each one line, no duplicates); entries sorted by location, no
location twice; no entry that only restates a problem its parent or a
deeper entry already states. A contract file may rename the two members.

An undistilled validator tree for one garbage message measured 2353 bytes
against 435 distilled: the rest is noise a client and a calling model
must wade through. Strict contract only.`,
	Run: func(p *Pass) error {
		if !p.Contract.IsStrict() {
			return skipSpecOnly
		}
		_, d, err := needData(p)
		if err != nil {
			return err
		}
		errs := d.Get("errors")
		if !errs.Exists() {
			return Skip("the error has no data.errors")
		}
		if !errs.IsArray() {
			p.Failf("error.data.errors", "errors is %s, want an array of {%s, %s}", envelope.Kind(errs), p.Contract.LocationKey, p.Contract.ProblemsKey)
			return nil
		}
		judgeDistilled(p, errs)
		return nil
	},
}

func judgeDistilled(p *Pass, errs gjson.Result) {
	lk, pk := p.Contract.LocationKey, p.Contract.ProblemsKey
	var entries []envelope.DistilledEntry
	prev := ""
	for i, e := range errs.Array() {
		path := "error.data.errors." + strconv.Itoa(i)
		if !e.IsObject() {
			p.Failf(path, "entry is %s, want {%s, %s}", envelope.Kind(e), lk, pk)
			continue
		}
		loc, probs := e.Get(envelope.JoinPath("", lk)), e.Get(envelope.JoinPath("", pk))
		if loc.Type != gjson.String || (loc.Str != "" && !strings.HasPrefix(loc.Str, "/")) {
			p.Failf(envelope.JoinPath(path, lk), "%s is %s, want a JSON Pointer", lk, describe(loc))
			continue
		}
		if !probs.IsArray() || len(probs.Array()) == 0 {
			p.Failf(envelope.JoinPath(path, pk), "%s is %s, want a non-empty array of strings", pk, envelope.Kind(probs))
			continue
		}
		ent := envelope.DistilledEntry{Location: loc.Str}
		seenProb := map[string]bool{}
		for j, pr := range probs.Array() {
			pp := envelope.JoinPath(path, pk) + "." + strconv.Itoa(j)
			switch {
			case pr.Type != gjson.String || strings.TrimSpace(pr.Str) == "":
				p.Failf(pp, "problem is %s, want a non-empty string", describe(pr))
			case strings.ContainsAny(pr.Str, "\r\n"):
				p.Failf(pp, "problem spans several lines: %s", Quote(pr.Str, quoteN))
			case seenProb[pr.Str]:
				p.Failf(pp, "problem %s is repeated at %s", Quote(pr.Str, quoteN), Quote(loc.Str, quoteN))
			default:
				seenProb[pr.Str] = true
				ent.Problems = append(ent.Problems, pr.Str)
			}
		}
		if i > 0 && len(entries) > 0 {
			switch {
			case loc.Str == prev:
				p.Failf(envelope.JoinPath(path, lk), "location %s has more than one entry", Quote(loc.Str, quoteN))
			case loc.Str < prev:
				p.Failf(envelope.JoinPath(path, lk), "entries are not sorted: %s comes after %s", Quote(loc.Str, quoteN), Quote(prev, quoteN))
			}
		}
		prev = loc.Str
		entries = append(entries, ent)
	}
	// An entry whose every problem is stated again at an ancestor or a
	// descendant adds nothing but noise. Walking each entry's ancestors
	// through a map keeps this linear in entries times depth: a hostile
	// reply may hold tens of thousands of entries.
	byLoc := make(map[string]envelope.DistilledEntry, len(entries))
	for _, e := range entries {
		if _, dup := byLoc[e.Location]; !dup {
			byLoc[e.Location] = e
		}
	}
	reported := map[string]bool{}
	for _, child := range entries {
		for anc := parentPointer(child.Location); ; anc = parentPointer(anc) {
			if parent, ok := byLoc[anc]; ok && anc != child.Location {
				switch {
				case allIn(parent.Problems, child.Problems) && !reported[parent.Location]:
					reported[parent.Location] = true
					p.Failf("error.data.errors", "entry %s only restates the problems of %s", Quote(parent.Location, quoteN), Quote(child.Location, quoteN))
				case allIn(child.Problems, parent.Problems) && !reported[child.Location]:
					reported[child.Location] = true
					p.Failf("error.data.errors", "entry %s only restates the problems of %s", Quote(child.Location, quoteN), Quote(parent.Location, quoteN))
				}
			}
			if anc == "" {
				break
			}
		}
	}
}

// parentPointer is the JSON Pointer one level up; "" is the root's.
func parentPointer(ptr string) string {
	if i := strings.LastIndexByte(ptr, '/'); i > 0 {
		return ptr[:i]
	}
	return ""
}

func allIn(xs, ys []string) bool {
	for _, x := range xs {
		if !slices.Contains(ys, x) {
			return false
		}
	}
	return len(xs) > 0
}
