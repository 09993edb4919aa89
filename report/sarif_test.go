package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/report"
)

// TestGolden covers sarif-run, sarif-lint and sarif-baseline (every
// format of Formats); this is the fourth, as junit and github have it.
func TestSARIFFailOnWarnGolden(t *testing.T) {
	golden(t, "sarif-failonwarn.golden", run(t, "sarif", scenario{}, false, false, true))
}

// sarifSchema is the official SARIF 2.1.0 schema (OASIS, errata 01;
// testdata/sarif-schema-2.1.0.README gives its source and licence),
// compiled with format assertions (uri, uri-reference, date-time), as
// GitHub's upload checks them.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateSARIF(s *jsonschema.Schema, raw []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return s.Validate(doc)
}

// A sarifCase is one run written as SARIF, with what went in.
type sarifCase struct {
	name       string
	failOnWarn bool
	rs         []*report.Result
	sum        report.Summary
	dir        string // report.Options.Dir
}

// sarifCases are the golden scenarios, runs that are not clean, and one
// with hostile text everywhere a server's text reaches.
func sarifCases(t *testing.T) []sarifCase {
	var out []sarifCase
	for _, c := range []struct {
		name       string
		sc         scenario
		failOnWarn bool
	}{{"run", scenario{}, false}, {"lint", scenario{lint: true}, false}, {"baseline", scenario{baseline: true}, false}, {"failonwarn", scenario{}, true}} {
		rs, sum := results(t, c.sc, c.failOnWarn)
		out = append(out, sarifCase{name: c.name, failOnWarn: c.failOnWarn, rs: rs, sum: sum})
	}
	rs, sum := results(t, scenario{}, false)
	out = append(out,
		sarifCase{name: "aborted", sum: report.Summary{Aborted: "target could not be driven: connection refused"}},
		sarifCase{name: "interrupted", rs: rs[:3], sum: func() report.Summary {
			s := summarize(rs[:3])
			s.Interrupted = "SIGINT; no fixture was sent after it"
			return s
		}()},
		sarifCase{name: "invalid", rs: rs, sum: func() report.Summary { s := sum; s.Invalid = "1 input problem (bad.jsonl:3)"; return s }()},
		sarifCase{name: "empty", sum: report.Summary{}},
		sarifCase{name: "deadline", rs: append(rs[:2:2], &report.Result{Fixture: "late/one", Verdicts: checks.NotSent("late/one", "the run's deadline passed before this fixture", checks.All())}),
			sum: func() report.Summary {
				s := summarize(rs[:2])
				s.Error++
				s.Skip += len(checks.All()) - 1
				s.Deadline = "the run's deadline passed before 1 fixture(s) were sent; they could not be judged"
				return s
			}()},
		// Only a stale entry: its check produced no result, yet it is the
		// notification's associated rule.
		sarifCase{name: "stale-only", sum: report.Summary{Notes: []string{"protocol 2026-07-28"},
			Stale: []report.Stale{{Fixture: "errors/parse", Check: "ERR1001", Reason: "fixed in 2.0"}}}},
	)
	const hostile = "t\x1b]0;title\x07 \u009b31m\u0085 #?%/ \u202e\xff"
	c := checks.All()[0]
	h := &report.Result{Fixture: "tools/args/" + hostile, File: "/abs dir/" + hostile + ".jsonl", Line: 4, Known: map[string]string{checks.All()[1].ID: "reason " + hostile},
		Verdicts: []checks.Verdict{
			{Check: c, Status: checks.StatusFail, Findings: []checks.Finding{
				{Status: checks.StatusFail, Path: "error.data." + hostile, Message: "key " + hostile},
				{Status: checks.StatusWarn, Path: "error.data." + hostile, Message: "again " + hostile},
			}},
			{Check: checks.All()[1], Status: checks.StatusFail, Findings: []checks.Finding{{Status: checks.StatusFail, Path: "id", Message: "x"}}},
			{Check: checks.All()[2], Status: checks.StatusError, Reason: "reading " + hostile},
		}}
	out = append(out, sarifCase{name: "hostile", rs: []*report.Result{h, {Fixture: hostile, File: "-", Line: 2, Verdicts: h.Verdicts[:1]}},
		sum: report.Summary{Fail: 3, Error: 1, Known: 1, Notes: []string{"server stderr: " + hostile},
			Stale: []report.Stale{{Fixture: hostile, Check: "ERR2001", Reason: hostile}}}})
	return out
}

// summarize counts the verdicts of rs.
func summarize(rs []*report.Result) report.Summary {
	var s report.Summary
	for _, r := range rs {
		for _, v := range r.Verdicts {
			s.Add(v)
		}
	}
	return s
}

func writeSARIF(t *testing.T, c sarifCase) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := report.New("sarif", &out, report.Options{Dir: c.dir})
	if err != nil {
		t.Fatal(err)
	}
	meta := testMeta
	meta.FailOnWarn = c.failOnWarn
	if err := w.Begin(meta); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.rs {
		if err := w.Exchange(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(c.sum); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestSARIFSchema: every log is valid SARIF 2.1.0 by the official
// schema, and the schema has teeth here.
func TestSARIFSchema(t *testing.T) {
	s := sarifSchema(t)
	var good []byte
	for _, c := range sarifCases(t) {
		got := writeSARIF(t, c)
		if err := validateSARIF(s, got); err != nil {
			t.Errorf("%s: not valid SARIF 2.1.0: %v", c.name, err)
		}
		if c.name == "baseline" {
			good = got
		}
	}
	for _, bad := range []struct{ old, new string }{
		{`"version":"2.1.0"`, `"version":"2.1"`},
		{`"level":"warning"`, `"level":"warn"`},
		{`"kind":"external"`, `"kind":"baseline"`},
		{`"uri":"wymcp-check/garbage"`, `"uri":"wymcp-check\\garbage"`},
		{`"executionSuccessful":true,`, ``},
	} {
		doc := strings.Replace(string(good), bad.old, bad.new, 1)
		if doc == string(good) {
			t.Errorf("the log has no %s to break", bad.old)
			continue
		}
		if validateSARIF(s, []byte(doc)) == nil {
			t.Errorf("the schema takes a log with %s for %s", bad.new, bad.old)
		}
	}
}

// TestSARIFDeterministic: the same run gives the same bytes, whatever
// order a map gives.
func TestSARIFDeterministic(t *testing.T) {
	for _, c := range sarifCases(t) {
		first := writeSARIF(t, c)
		for range 5 {
			if again := writeSARIF(t, c); !bytes.Equal(first, again) {
				t.Fatalf("%s: two writes differ:\n%s", c.name, cmp.Diff(string(first), string(again)))
			}
		}
	}
}

// sarifLog is what the tests read of a log.
type sarifLog struct {
	Schema  string `json:"$schema"`
	Version string
	Runs    []struct {
		Results []struct {
			RuleID              string
			Level               string
			Message             struct{ Text string }
			PartialFingerprints map[string]string
			Suppressions        []struct{ Kind, Status, Justification string }
			Locations           []struct {
				PhysicalLocation *struct {
					ArtifactLocation struct{ URI string }
					Region           *struct{ StartLine int }
				}
				LogicalLocations []struct{ Name, Kind string }
			}
			Properties struct {
				Status, Fixture, Path string
				Rules                 []string
			}
		}
		Tool struct {
			Driver struct {
				Name, Version, InformationURI string
				Rules                         []struct {
					ID                   string
					ShortDescription     struct{ Text string }
					DefaultConfiguration struct{ Level string }
				}
				Notifications []struct{ ID string }
			}
		}
		Invocations []struct {
			ExecutionSuccessful                                        bool
			ToolExecutionNotifications, ToolConfigurationNotifications []struct {
				Descriptor     sarifRef
				AssociatedRule *sarifRef
				Level          string
				Message        struct{ Text string }
			}
		}
		Properties struct {
			Gate    string
			Summary map[string]int
		}
	}
}

// A sarifRef is a reportingDescriptorReference as read; Index -1 when
// absent.
type sarifRef struct {
	ID    string
	Index *int
}

// uriReference is the characters of an RFC 3986 URI reference, percent
// escapes whole: the schema library's check of the format is looser
// (Go's url.Parse takes a space) than that of GitHub's upload.
var uriReference = regexp.MustCompile(`^([A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$`)

// sarifAgrees lists where a log departs from the run it reports: every
// finding of a fail or warn verdict is one result and every
// could-not-judge one result, in order, with the check, the level the
// gate gives it, the fixture, the path and the suppression of a known
// failure; the summary's fail and warn verdicts, errors and known ones
// are as many as the log's; the rules are the checks of the results; the
// fingerprints are unique; the invocation fails when the run did.
func sarifAgrees(raw []byte, c sarifCase) []string {
	var log sarifLog
	if err := json.Unmarshal(raw, &log); err != nil {
		return []string{err.Error()}
	}
	if len(log.Runs) != 1 {
		return []string{fmt.Sprintf("%d runs, want 1", len(log.Runs))}
	}
	run := log.Runs[0]
	var problems []string
	type row struct{ fixture, rule, status, level, path, known string }
	var want []row
	verdicts := map[string]int{} // by status; a verdict is its findings' run of results
	known := 0
	for _, r := range c.rs {
		for _, v := range r.Verdicts {
			level := func(st checks.Status) string {
				if st == checks.StatusWarn && !c.failOnWarn {
					return "warning"
				}
				return "error"
			}
			k := ""
			if reason, ok := r.Known[v.Check.ID]; ok {
				k = "known failure (baseline): " + report.Sanitize(reason)
			}
			switch v.Status {
			case checks.StatusFail, checks.StatusWarn:
				for _, f := range v.Findings {
					want = append(want, row{report.Sanitize(r.Fixture), v.Check.ID, string(f.Status), level(f.Status), report.Sanitize(f.Path), k})
				}
			case checks.StatusError:
				want = append(want, row{report.Sanitize(r.Fixture), v.Check.ID, "error", "error", "", k})
			}
		}
	}
	var got []row
	fingerprints := map[string]bool{}
	for i, res := range run.Results {
		k := ""
		if len(res.Suppressions) == 1 && res.Suppressions[0].Kind == "external" && res.Suppressions[0].Status == "accepted" {
			k = res.Suppressions[0].Justification
		}
		got = append(got, row{res.Properties.Fixture, res.RuleID, res.Properties.Status, res.Level, res.Properties.Path, k})
		// One verdict's results are consecutive and share fixture and check.
		if i == 0 || res.Properties.Fixture != run.Results[i-1].Properties.Fixture || res.RuleID != run.Results[i-1].RuleID {
			st := res.Properties.Status
			if st != "error" {
				st = "fail or warn"
			}
			verdicts[st]++
			if k != "" {
				known++
			}
		}
		fp := res.PartialFingerprints["wymcpFinding/v1"]
		if fp == "" || fingerprints[fp] {
			problems = append(problems, fmt.Sprintf("result %d: fingerprint %q is empty or not unique", i, fp))
		}
		fingerprints[fp] = true
		if len(res.Locations) != 1 || res.Locations[0].PhysicalLocation == nil || res.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" || len(res.Locations[0].LogicalLocations) != 1 {
			problems = append(problems, fmt.Sprintf("result %d: want one location, physical and logical (code scanning refuses a log without)", i))
		} else if uri := res.Locations[0].PhysicalLocation.ArtifactLocation.URI; !uriReference.MatchString(uri) {
			problems = append(problems, fmt.Sprintf("result %d: %q is not an RFC 3986 URI reference", i, uri))
		}
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(row{})); diff != "" {
		problems = append(problems, "results (-want +got):\n"+diff)
	}
	if n := verdicts["fail or warn"]; n != c.sum.Fail+c.sum.Warn {
		problems = append(problems, fmt.Sprintf("%d fail or warn verdicts in the results, the summary has %d", n, c.sum.Fail+c.sum.Warn))
	}
	if n := verdicts["error"]; n != c.sum.Error {
		problems = append(problems, fmt.Sprintf("%d could-not-judge results, the summary has %d", n, c.sum.Error))
	}
	if known != c.sum.Known {
		problems = append(problems, fmt.Sprintf("%d suppressed verdicts, the summary knows %d", known, c.sum.Known))
	}
	var ruleIDs, usedIDs []string
	for _, r := range run.Tool.Driver.Rules {
		ruleIDs = append(ruleIDs, r.ID)
		if ch := checks.Lookup(r.ID); ch == nil || r.ShortDescription.Text != ch.Title {
			problems = append(problems, fmt.Sprintf("rule %s: no such check, or its shortDescription is not the title", r.ID))
		}
	}
	for _, res := range run.Results {
		usedIDs = append(usedIDs, res.RuleID)
	}
	for _, e := range c.sum.Stale {
		usedIDs = append(usedIDs, e.Check)
	}
	slices.Sort(usedIDs)
	if usedIDs = slices.Compact(usedIDs); !slices.Equal(ruleIDs, usedIDs) {
		problems = append(problems, fmt.Sprintf("rules %v, want the checks of the results and of the stale entries, sorted: %v", ruleIDs, usedIDs))
	}
	var kindIDs []string
	for _, d := range run.Tool.Driver.Notifications {
		kindIDs = append(kindIDs, d.ID)
	}
	// Every reference resolves (SARIF 2.1.0 §3.52): a notification's
	// descriptor is one of driver.notifications, its associatedRule one
	// of driver.rules, each at the index it gives.
	resolves := func(what string, ref sarifRef, ids []string) {
		i := slices.Index(ids, ref.ID)
		switch {
		case i < 0:
			problems = append(problems, fmt.Sprintf("%s %q is not defined (have %v)", what, ref.ID, ids))
		case ref.Index == nil:
			problems = append(problems, fmt.Sprintf("%s %q has no index", what, ref.ID))
		case *ref.Index != i:
			problems = append(problems, fmt.Sprintf("%s %q has index %d, it is at %d", what, ref.ID, *ref.Index, i))
		}
	}
	if len(run.Invocations) != 1 {
		return append(problems, fmt.Sprintf("%d invocations, want 1", len(run.Invocations)))
	}
	inv := run.Invocations[0]
	for _, n := range append(slices.Clone(inv.ToolExecutionNotifications), inv.ToolConfigurationNotifications...) {
		resolves("notification descriptor", n.Descriptor, kindIDs)
		if n.AssociatedRule != nil {
			resolves("associated rule", *n.AssociatedRule, ruleIDs)
		}
	}
	notClean := c.sum.Aborted != "" || c.sum.Interrupted != "" || c.sum.Deadline != "" || c.sum.Invalid != ""
	if inv.ExecutionSuccessful == notClean {
		problems = append(problems, fmt.Sprintf("executionSuccessful %v for a run aborted %q, interrupted %q, cut by its deadline %q, invalid %q", inv.ExecutionSuccessful, c.sum.Aborted, c.sum.Interrupted, c.sum.Deadline, c.sum.Invalid))
	}
	for _, why := range []string{c.sum.Aborted, c.sum.Interrupted, c.sum.Deadline, c.sum.Invalid} {
		if why == "" {
			continue
		}
		found := false
		for _, n := range inv.ToolExecutionNotifications {
			found = found || n.Level == "error" && strings.Contains(n.Message.Text, report.Sanitize(why))
		}
		if !found {
			problems = append(problems, fmt.Sprintf("no error notification says %q", why))
		}
	}
	stale := 0
	for _, n := range inv.ToolConfigurationNotifications {
		if n.Descriptor.ID == "stale-baseline-entry" && n.Level == "error" && n.AssociatedRule != nil {
			stale++
		}
	}
	if stale != len(c.sum.Stale) {
		problems = append(problems, fmt.Sprintf("%d stale-entry notifications, the summary has %d stale entries", stale, len(c.sum.Stale)))
	}
	if gate := run.Properties.Gate; (gate == "passed") == c.sum.Gate(c.failOnWarn) {
		problems = append(problems, fmt.Sprintf("gate %q, but the summary's gate fails: %v", gate, c.sum.Gate(c.failOnWarn)))
	}
	return problems
}

// TestSARIFResults: each log reports its run exactly (sarifAgrees).
func TestSARIFResults(t *testing.T) {
	for _, c := range sarifCases(t) {
		for _, p := range sarifAgrees(writeSARIF(t, c), c) {
			t.Errorf("%s: %s", c.name, p)
		}
	}
}

// TestSARIFAgreesHasTeeth: a log with a result dropped, doubled or at the
// wrong level, a rule missing, or a failed run marked successful, is
// caught.
func TestSARIFAgreesHasTeeth(t *testing.T) {
	var c sarifCase
	for _, cc := range sarifCases(t) {
		if cc.name == "baseline" {
			c = cc
		}
	}
	good := writeSARIF(t, c)
	if p := sarifAgrees(good, c); len(p) > 0 {
		t.Fatalf("the good log is refused: %v", p)
	}
	lines := strings.Split(string(good), "\n")
	firstResult := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, `{"ruleId"`) })
	for name, doc := range map[string]string{
		"a result dropped":       strings.Join(slices.Delete(slices.Clone(lines), firstResult, firstResult+1), "\n"),
		"a result doubled":       strings.Join(slices.Insert(slices.Clone(lines), firstResult, lines[firstResult]), "\n"),
		"a fail as warning":      strings.Replace(string(good), `"level":"error"`, `"level":"warning"`, 1),
		"a suppression lost":     strings.Replace(string(good), `"suppressions":[{"kind":"external"`, `"suppressionz":[{"kind":"external"`, 1),
		"a rule missing":         strings.Replace(string(good), `"rules":[{"id":"ERR1002"`, `"rules":[{"id":"ERR1002x"`, 1),
		"the gate passed":        strings.Replace(string(good), `"gate":"failed"`, `"gate":"passed"`, 1),
		"a URI with a space":     strings.Replace(string(good), `"uri":"wymcp-check/garbage"`, `"uri":"wymcp-check/gar bage"`, 1),
		"a descriptor undefined": strings.Replace(string(good), `"notifications":[{"id":"stale-baseline-entry"`, `"notifications":[{"id":"stale"`, 1),
		"a descriptor misplaced": strings.Replace(string(good), `"descriptor":{"id":"note","index":1}`, `"descriptor":{"id":"note","index":0}`, 1),
	} {
		if doc == string(good) {
			t.Errorf("%s: nothing changed", name)
			continue
		}
		if p := sarifAgrees([]byte(doc), c); len(p) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
	aborted := sarifCase{name: "aborted", sum: report.Summary{Aborted: "refused"}}
	doc := strings.Replace(string(writeSARIF(t, aborted)), `"executionSuccessful":false`, `"executionSuccessful":true`, 1)
	if p := sarifAgrees([]byte(doc), aborted); len(p) == 0 {
		t.Errorf("an aborted run marked successful is not caught")
	}
}

// TestSARIFFingerprintsStable: a finding's fingerprint does not change
// with the run's times, its order, a transcript line or the finding's
// wording; it changes with the fixture, check and path.
func TestSARIFFingerprintsStable(t *testing.T) {
	fps := func(rs []*report.Result) map[string]string {
		var log sarifLog
		if err := json.Unmarshal(writeSARIF(t, sarifCase{rs: rs}), &log); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range log.Runs[0].Results {
			out[r.Properties.Fixture+" "+r.RuleID+" "+r.Properties.Path] = r.PartialFingerprints["wymcpFinding/v1"]
		}
		return out
	}
	rs, _ := results(t, scenario{}, false)
	before := fps(rs)
	var again []*report.Result
	for i := len(rs) - 1; i >= 0; i-- {
		r := *rs[i]
		r.Duration += time.Second
		r.Verdicts = slices.Clone(r.Verdicts)
		for k := range r.Verdicts {
			v := &r.Verdicts[k]
			v.Findings = slices.Clone(v.Findings)
			for j := range v.Findings {
				v.Findings[j].Message += " (reworded)"
			}
		}
		again = append(again, &r)
	}
	if diff := cmp.Diff(before, fps(again)); diff != "" {
		t.Errorf("fingerprints moved (-before +after):\n%s", diff)
	}
	lint, _ := results(t, scenario{lint: true}, false)
	for _, r := range lint {
		r.Line += 100 // lines added above the records
	}
	a, b := fps(lint), fps(lint[:len(lint)-1])
	for k, v := range b {
		if a[k] != v {
			t.Errorf("%s: fingerprint differs between two lint runs", k)
		}
	}
	// Each part of the identity counts: another fixture, check, path or
	// transcript file is another finding.
	one := func(fixture, file string, check *checks.Check, path string) string {
		f := fps([]*report.Result{{Fixture: fixture, File: file, Verdicts: []checks.Verdict{{Check: check, Status: checks.StatusFail,
			Findings: []checks.Finding{{Status: checks.StatusFail, Path: path, Message: "x"}}}}}})
		if len(f) != 1 {
			t.Fatalf("%d results, want 1", len(f))
		}
		for _, v := range f {
			return v
		}
		return ""
	}
	c0, c1 := checks.All()[0], checks.All()[1]
	base := one("f", "", c0, "id")
	for name, other := range map[string]string{
		"fixture": one("g", "", c0, "id"),
		"file":    one("f", "t.jsonl", c0, "id"),
		"check":   one("f", "", c1, "id"),
		"path":    one("f", "", c0, "error.code"),
	} {
		if other == base {
			t.Errorf("another %s, the same fingerprint", name)
		}
	}
	if again := one("f", "", c0, "id"); again != base {
		t.Errorf("one finding, two fingerprints: %s, %s", base, again)
	}
	seen := map[string]bool{}
	for k, v := range before {
		if seen[v] {
			t.Errorf("%s: fingerprint %s is another finding's", k, v)
		}
		seen[v] = true
	}
}

// TestSARIFLocations: lint points at the transcript's line, a live run
// at the fixture; a path the URI syntax reserves is escaped.
func TestSARIFLocations(t *testing.T) {
	c := checks.All()[0]
	v := []checks.Verdict{{Check: c, Status: checks.StatusFail, Findings: []checks.Finding{{Status: checks.StatusFail, Path: "id", Message: "x"}}}}
	var log sarifLog
	raw := writeSARIF(t, sarifCase{rs: []*report.Result{
		{Fixture: "tools/a b#c", Verdicts: v},
		{Fixture: "rec", File: "dir/t.jsonl", Line: 7, Verdicts: v},
		{Fixture: "rec", File: "/abs/t.jsonl", Line: 8, Verdicts: v},
		{Fixture: "rec", File: "-", Line: 9, Verdicts: v},
	}})
	if err := json.Unmarshal(raw, &log); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range log.Runs[0].Results {
		p := r.Locations[0].PhysicalLocation
		s := p.ArtifactLocation.URI
		if p.Region != nil {
			s += fmt.Sprintf(":%d", p.Region.StartLine)
		}
		got = append(got, s+" "+r.Locations[0].LogicalLocations[0].Kind+" "+r.Locations[0].LogicalLocations[0].Name)
	}
	want := []string{
		"wymcp-check/tools/a%20b%23c:1 module tools/a b#c",
		"dir/t.jsonl:7 module rec",
		"file:///abs/t.jsonl:8 module rec",
		"wymcp-check/rec:9 module rec",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("locations (-want +got):\n%s", diff)
	}
}

// TestSARIFPathSpellings: one transcript spelled as a user may spell it
// (lint t.jsonl, ./t.jsonl, $PWD/t.jsonl) is one artifact and each of
// its findings one fingerprint: three spellings made three alerts of
// one finding in code scanning. A path outside the working directory is
// absolute, however it was spelled.
func TestSARIFPathSpellings(t *testing.T) {
	dir := filepath.FromSlash("/home/ci/repo")
	c := checks.All()[0]
	v := []checks.Verdict{{Check: c, Status: checks.StatusFail, Findings: []checks.Finding{{Status: checks.StatusFail, Path: "id", Message: "x"}}}}
	where := func(file string) (uri, fingerprint string) {
		var log sarifLog
		if err := json.Unmarshal(writeSARIF(t, sarifCase{dir: dir, rs: []*report.Result{{Fixture: "rec", File: filepath.FromSlash(file), Line: 3, Verdicts: v}}}), &log); err != nil {
			t.Fatal(err)
		}
		r := log.Runs[0].Results[0]
		return r.Locations[0].PhysicalLocation.ArtifactLocation.URI, r.PartialFingerprints["wymcpFinding/v1"]
	}
	for _, tc := range []struct {
		want      string
		spellings []string
	}{
		{"go-sdk-http.jsonl", []string{"go-sdk-http.jsonl", "./go-sdk-http.jsonl", "/home/ci/repo/go-sdk-http.jsonl", "sub/../go-sdk-http.jsonl", "/home/ci/repo/./go-sdk-http.jsonl"}},
		{"rec/t.jsonl", []string{"rec/t.jsonl", "./rec//t.jsonl", "/home/ci/repo/rec/t.jsonl"}},
		{"file:///home/ci/t.jsonl", []string{"../t.jsonl", "/home/ci/t.jsonl", "/home/ci/repo/../t.jsonl"}},
		{"file:///home/ci/repo-other/t.jsonl", []string{"../repo-other/t.jsonl", "/home/ci/repo-other/t.jsonl"}},
	} {
		_, want := where(tc.spellings[0])
		for _, file := range tc.spellings {
			uri, fp := where(file)
			if uri != tc.want {
				t.Errorf("%s: uri %q, want %q", file, uri, tc.want)
			}
			if fp != want {
				t.Errorf("%s: fingerprint %s, want %s as for %s", file, fp, want, tc.spellings[0])
			}
		}
	}
}
