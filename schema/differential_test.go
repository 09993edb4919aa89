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
// urlFormatReason is why ours rejects a URL-mode elicitation's url the
// official schema leaves free: both mark it format "uri", which 2020-12
// makes an annotation; ours asserts it there, the spec's MUST (a valid
// URL), while it keeps resource URIs free (review rev80).
const urlFormatReason = `a URL-mode elicitation's url MUST be a valid URL (client/elicitation § URL Mode): ours asserts its format "uri", which the official 2020-12 schema only annotates`

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
		{op: "token", path: "/url", ours: "rejects",
			reason: urlFormatReason},
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
	for _, version := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			off := loadOfficial(t, version)
			our := loadOurs(t, version)
			claims := our.p.claims()
			offDefs := officialDefs(t, version)
			if version == "2025-03-26" {
				noFalseAlarms(t, knownDisagreements2025(version))
			}
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
	if version != "2025-06-18" && version != "2025-03-26" {
		return nil
	}
	return []knownDisagreement{
		{op: "token", path: "/**/uri", ours: "accepts",
			reason: "the official " + version + " schema is draft-07, where format (here uri) asserts; ours, like the 2020-12 ones, treats format as an annotation"},
	}
}

// replySamples0326 are hand-written, valid instances of the 2025-03-26
// types the carried-over 2026 examples do not reach, and of some they do,
// carrying what 2025-06-18 added (title, _meta, outputSchema,
// structuredContent, lastModified): the official 2025-03-26 types leave
// such members free, so ours must accept them and every mutation of them
// (T-V0326-4). Keys are type#variant.
func replySamples0326() map[string]string {
	return map[string]string{
		"InitializeResult":        `{"protocolVersion":"2025-03-26","capabilities":{"tools":{"listChanged":true},"logging":{},"prompts":{"listChanged":false},"resources":{"subscribe":true,"listChanged":true},"completions":{},"experimental":{"x":{"a":1}}},"serverInfo":{"name":"s","version":"1.0","title":"S"},"instructions":"be brief","_meta":{"k":1}}`,
		"Implementation":          `{"name":"s","version":"1.0","title":"Server"}`,
		"EmptyResult":             `{"_meta":{"k":1}}`,
		"Result":                  `{"_meta":{"k":"v"},"extra":[1]}`,
		"JSONRPCResponse":         `{"jsonrpc":"2.0","id":7,"result":{"_meta":{}}}`,
		"JSONRPCError":            `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found","data":{"method":"x"}}}`,
		"LoggingLevel":            `"warning"`,
		"ProgressToken":           `"t"`,
		"RequestId":               `7`,
		"Role":                    `"assistant"`,
		"Annotations":             `{"audience":["user","assistant"],"priority":0.5,"lastModified":"2025-01-12T15:00:58Z"}`,
		"ToolAnnotations":         `{"title":"Echo","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`,
		"Prompt":                  `{"name":"p","title":"P","description":"d","arguments":[{"name":"a","title":"A","description":"d","required":true}],"_meta":{"k":1}}`,
		"PromptArgument":          `{"name":"a","title":"A","description":"d","required":false}`,
		"PromptMessage":           `{"role":"user","content":{"type":"text","text":"hi","annotations":{"priority":1,"lastModified":"x"},"_meta":{"k":1}}}`,
		"PromptMessage#image":     `{"role":"assistant","content":{"type":"image","data":"aGk=","mimeType":"image/png"}}`,
		"ResourceTemplate":        `{"uriTemplate":"file:///{path}","name":"files","title":"Files","description":"d","mimeType":"text/plain","annotations":{"audience":["assistant"]},"_meta":{}}`,
		"Tool#0618":               `{"name":"t","title":"T","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},"outputSchema":{"type":"object","properties":{"r":{"type":"number"}}},"annotations":{"readOnlyHint":true},"_meta":{"k":1}}`,
		"CallToolResult#0618":     `{"content":[{"type":"text","text":"{\"r\":1}","_meta":{"a":1}},{"type":"audio","data":"aGk=","mimeType":"audio/wav"},{"type":"resource","resource":{"uri":"file:///b","blob":"aGk=","mimeType":"application/octet-stream","_meta":{}}}],"structuredContent":{"r":1},"isError":false,"_meta":{}}`,
		"Resource#0618":           `{"uri":"file:///a","name":"a","title":"A","description":"d","mimeType":"text/plain","size":3,"annotations":{"lastModified":"2025-01-12T15:00:58Z"},"_meta":{}}`,
		"ReadResourceResult#0618": `{"contents":[{"uri":"file:///a","text":"x","_meta":{}},{"uri":"file:///b","blob":"aGk="}]}`,
		"ListToolsResult#0618":    `{"tools":[{"name":"t","title":"T","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}],"nextCursor":"c"}`,
		"CompleteResult":          `{"completion":{"values":["a","b"],"total":2,"hasMore":false}}`,
		"GetPromptResult#0618":    `{"description":"d","messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"file:///a","text":"x"},"_meta":{}}}]}`,
	}
}

// knownDisagreementsSamples0326 is every place where the project's
// 2025-03-26 schema judges a mutated sample otherwise than the official
// one, and why.
func knownDisagreementsSamples0326() []knownDisagreement {
	return []knownDisagreement{
		{types: []string{"JSONRPCError"}, op: "null", path: "/id", ours: "accepts",
			reason: "JSON-RPC wants a null id when the request id was unreadable; the official RequestId excludes null (T-RPC-9, AMB-1)"},
		{types: []string{"JSONRPCError"}, op: "drop", path: "/id", ours: "accepts",
			reason: "an error to a request whose id could not be read may leave the id out, as the checker allows in every version (T-RPC-9, AMB-1); the official 2025-03-26 JSONRPCError requires it"},
		{op: "token", path: "/**/uri", ours: "accepts",
			reason: "the official 2025-03-26 schema is draft-07, where format (here uri) asserts; ours treats format as an annotation"},
	}
}

// TestDifferentialSamples0326 compares the 2025-03-26 schema with the
// official one on hand-written samples (upstream ships no examples of
// that version) and their mutations, as TestDifferential2025 does on
// the carried-over 2026 examples; and holds that every type the file
// claims is compared somewhere: on an example, a sample, or a
// server-sent message (TestDifferentialServerMessages).
func TestDifferentialSamples0326(t *testing.T) {
	const version = "2025-03-26"
	off := loadOfficial(t, version)
	our := loadOurs(t, version)
	claims := our.p.claims()
	compared := map[string]bool{}
	for _, ex := range loadExamples(t) {
		if claims[ex.typeName] && off.compile(t, ex.typeName).Validate(strip2026(ex.value)) == nil {
			compared[ex.typeName] = true
		}
	}
	for key := range serverMessages(version) {
		typ, _, _ := strings.Cut(key, "#")
		compared[typ] = true
	}
	noFalseAlarms(t, knownDisagreementsSamples0326())
	l := newLedger(knownDisagreementsSamples0326())
	for typ := range compareSamples(t, version, off, our, l, replySamples0326()) {
		compared[typ] = true
	}
	l.report(t)
	for name := range claims {
		if !compared[name] {
			t.Errorf("%s claims %s, which no example, sample or server message compares with the official type", version, name)
		}
	}
	t.Logf("%d samples, %d mutations, %d known disagreements", len(replySamples0326()), l.checked, sum(l.used))
}

// noFalseAlarms holds a ledger to one direction: the 2025-03-26 schema,
// which judges a version the checker otherwise reads through 2025-06-18's
// rules, may be laxer than the official one but never rejects what it
// accepts, so no known disagreement may say ours rejects.
func noFalseAlarms(t *testing.T, known []knownDisagreement) {
	t.Helper()
	for _, k := range known {
		if k.ours != "accepts" {
			t.Errorf("known disagreement %v %s %s: ours %s what the official 2025-03-26 schema accepts, a false alarm (%s)", k.types, k.op, k.path, k.ours, k.reason)
		}
	}
}

// compareSamples compares our schema of version with the official one on
// hand-made instances (keyed "Type#name"): each must be a type the
// project claims, valid under the official schema and under ours; their
// mutations go to l. It returns the types compared.
func compareSamples(t *testing.T, version string, off *official, our *ours, l *ledger, samples map[string]string) map[string]bool {
	t.Helper()
	compared := map[string]bool{}
	claims := our.p.claims()
	for key, instance := range samples {
		typ, _, _ := strings.Cut(key, "#")
		if !claims[typ] {
			t.Errorf("%s: the project does not claim %s", version, typ)
			continue
		}
		v, err := decode([]byte(instance))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		theirs, mine := off.compile(t, typ), our.compile(t, typ)
		if err := theirs.Validate(v); err != nil {
			t.Errorf("%s %s: the official schema rejects the test's sample: %v", version, key, err)
			continue
		}
		if got := Distill(mine.Validate(v)); got != nil {
			t.Errorf("%s %s: our schema rejects what the official one accepts: %v", version, key, got)
			continue
		}
		compared[typ] = true
		l.compare(typ, key, v, mine, theirs)
	}
	return compared
}
