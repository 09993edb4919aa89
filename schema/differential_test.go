package schema

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// A knownDisagreement is a verdict the project's schema gives on purpose
// against the official one. It matches by type (none: any), mutation op
// (empty: any) and mutated path (a pattern: "*" is one token, a trailing
// "**" any rest). An entry that matches nothing is stale and fails.
type knownDisagreement struct {
	types  []string
	op     string
	path   string
	ours   string // "accepts" or "rejects": what our schema does
	reason string
}

func TestDifferential2026(t *testing.T) {
	off := loadOfficial(t, "2026-07-28")
	our := loadOurs(t, "2026-07-28")
	claims := our.p.claims()
	l := newLedger(knownDisagreements2026())
	var covered int
	for _, ex := range loadExamples(t) {
		if !claims[ex.typeName] {
			continue
		}
		covered++
		mine, theirs := our.compile(t, ex.typeName), off.compile(t, ex.typeName)
		if err := theirs.Validate(ex.value); err != nil {
			t.Errorf("%s/%s: the official schema rejects its own example: %v", ex.typeName, ex.file, err)
			continue
		}
		if got := Distill(mine.Validate(ex.value)); got != nil {
			if _, ok := rejectedExamples2026()[ex.typeName+"/"+ex.file]; !ok {
				t.Errorf("%s/%s: our schema rejects the official example: %v", ex.typeName, ex.file, got)
			}
			continue
		}
		l.compare(ex.typeName, ex.file, ex.value, mine, theirs)
	}
	l.report(t)
	t.Logf("%d covered examples, %d mutations, %d known disagreements", covered, l.checked, sum(l.used))
}

// A ledger compares our schema with the official one on the mutations
// of examples: a disagreement listed as known is counted, any other one
// is an error, and a known one that nothing matched is stale.
type ledger struct {
	known   []knownDisagreement
	used    []int
	unknown []string
	checked int
}

func newLedger(known []knownDisagreement) *ledger {
	return &ledger{known: known, used: make([]int, len(known))}
}

type validator interface{ Validate(any) error }

func (l *ledger) compare(typeName, file string, value any, mine, theirs validator) {
	for _, m := range mutations(value) {
		l.checked++
		oursOK := mine.Validate(m.value) == nil
		theirsOK := theirs.Validate(m.value) == nil
		if oursOK == theirsOK {
			continue
		}
		verdict := "rejects"
		if oursOK {
			verdict = "accepts"
		}
		i := matchKnown(l.known, typeName, m, verdict)
		if i < 0 {
			l.unknown = append(l.unknown, fmt.Sprintf("%s/%s: %s %s: ours %s, official does not", typeName, file, m.op, m.path, verdict))
			continue
		}
		l.used[i]++
	}
}

func (l *ledger) report(t *testing.T) {
	t.Helper()
	sort.Strings(l.unknown)
	for _, u := range l.unknown {
		t.Error(u)
	}
	for i, k := range l.known {
		if l.used[i] == 0 {
			t.Errorf("stale known disagreement %v %s %s (%s): nothing matched it", k.types, k.op, k.path, k.reason)
		}
	}
}

func matchKnown(known []knownDisagreement, typeName string, m mutation, verdict string) int {
	for i, k := range known {
		if k.ours != verdict || (k.op != "" && k.op != m.op) || !matchPath(k.path, m.path) {
			continue
		}
		if len(k.types) > 0 && !slices.Contains(k.types, typeName) {
			continue
		}
		return i
	}
	return -1
}

// matchPath matches a JSON Pointer against a pattern of tokens where "*"
// is any one token, a final "**" any number of them, and a leading "**"
// any prefix.
func matchPath(pattern, ptr string) bool {
	if rest, ok := strings.CutPrefix(pattern, "/**"); ok {
		return strings.HasSuffix(ptr, rest)
	}
	pt, it := strings.Split(pattern, "/"), strings.Split(ptr, "/")
	for i, p := range pt {
		if p == "**" && i == len(pt)-1 {
			return true
		}
		if i >= len(it) || (p != "*" && p != it[i]) {
			return false
		}
	}
	return len(pt) == len(it)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// rejectedExamples2026 lists official examples our schema rejects, and
// why; their mutations are not compared.
func rejectedExamples2026() map[string]string {
	return map[string]string{
		"ReadResourceResultResponse/read-resource-result-response.json": "a complete resources/read result without ttlMs and cacheScope breaks T-CACHE-1; the official type accepts it only through its vacuous InputRequiredResult branch",
	}
}

// knownDisagreements2026 is every place where the project's 2026-07-28
// schema gives another verdict than the official one, and why.
func knownDisagreements2026() []knownDisagreement {
	mrtrReplies := []string{"CallToolResultResponse", "GetPromptResultResponse", "ReadResourceResultResponse"}
	errorReplies := []string{"HeaderMismatchError", "MissingRequiredClientCapabilityError", "UnsupportedProtocolVersionError"}
	return []knownDisagreement{
		{types: mrtrReplies, path: "/result/**", ours: "rejects",
			reason: "the official result is anyOf(InputRequiredResult, the method's result) and its InputRequiredResult needs only a string resultType, so it accepts any such result; ours picks the branch by resultType"},
		{op: "token", path: "/resultType", ours: "rejects",
			reason: "resultType is complete, or input_required where the method may answer it (T-LIFE-10, T-MRTR-1); other values need an advertised extension"},
		{op: "token", path: "/result/resultType", ours: "rejects",
			reason: "as /resultType, inside a response"},
		{types: []string{"InputRequiredResult"}, op: "drop", path: "/requestState", ours: "rejects",
			reason: "an input_required result has inputRequests or requestState (T-MRTR-2); the official schema requires neither"},
		{types: errorReplies, op: "null", path: "/id", ours: "accepts",
			reason: "JSON-RPC wants a null id when the request id was unreadable; the official RequestId excludes null (T-RPC-9, AMB-1)"},
		{types: []string{"UnsupportedProtocolVersionError"}, op: "empty", path: "/error/data/supported", ours: "rejects",
			reason: "data.supported must name at least one version for the client to pick (T-ERR-14)"},
		{types: []string{"DiscoverResult"}, op: "empty", path: "/supportedVersions", ours: "rejects",
			reason: "supportedVersions names at least the version being spoken (T-LIFE-8)"},
		{types: []string{"DiscoverResultResponse"}, op: "empty", path: "/result/supportedVersions", ours: "rejects",
			reason: "as DiscoverResult"},
		{types: []string{"ClientCapabilities"}, op: "null", path: "/extensions/*/**", ours: "accepts",
			reason: "capability payloads are free-form JSON; the official JSONValue leaves out null and fractional numbers"},
	}
}

// TestDifferential2025 compares the 2025 schemas with the official ones
// on the 2026 examples that are valid in the older version once the
// 2026-only result members are removed (upstream ships no 2025 examples).
func TestDifferential2025(t *testing.T) {
	examples := loadExamples(t)
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			off := loadOfficial(t, version)
			our := loadOurs(t, version)
			claims := our.p.claims()
			offDefs := officialDefs(t, version)
			l := newLedger(knownDisagreements2025(version))
			var covered int
			for _, ex := range examples {
				if !claims[ex.typeName] || !offDefs[ex.typeName] {
					continue
				}
				v := strip2026(ex.value)
				theirs, mine := off.compile(t, ex.typeName), our.compile(t, ex.typeName)
				if theirs.Validate(v) != nil {
					continue // uses something 2026 introduced
				}
				if got := Distill(mine.Validate(v)); got != nil {
					t.Errorf("%s/%s: our schema rejects what the official one accepts: %v", ex.typeName, ex.file, got)
					continue
				}
				covered++
				l.compare(ex.typeName, ex.file, v, mine, theirs)
			}
			l.report(t)
			if covered == 0 {
				t.Error("no example carried over")
			}
			t.Logf("%d carried-over examples, %d mutations, %d known disagreements", covered, l.checked, sum(l.used))
		})
	}
}

// strip2026 removes the members 2026-07-28 added to every result.
func strip2026(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(obj))
	for k, e := range obj {
		switch k {
		case "resultType", "ttlMs", "cacheScope":
			continue
		case "result":
			e = strip2026(e)
		}
		out[k] = e
	}
	return out
}

// knownDisagreements2025 is every place where the project's 2025 schema
// of version gives another verdict than the official one, and why.
func knownDisagreements2025(version string) []knownDisagreement {
	if version != "2025-06-18" {
		return nil
	}
	return []knownDisagreement{
		{op: "token", path: "/**/uri", ours: "accepts",
			reason: "the official 2025-06-18 schema is draft-07, where format (here uri) asserts; ours, like the 2020-12 ones, treats format as an annotation"},
	}
}
