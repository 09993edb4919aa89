package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/rules"
)

// Coverage answers "what did this run actually test?": for each rule of
// the catalogue, whether a fixture or a check exercised it (and how it
// came out), or why not. The evidence is the run's own verdicts: a rule
// is exercised when an exchange of a fixture citing it was judged, when
// a finding names it, or, for a rule only checks cite, when a check
// citing it judged an exchange.

// Coverage statuses of a rule in one run.
const (
	CovPassed        = "passed"         // exercised, nothing found
	CovWarned        = "warned"         // exercised, the worst finding a warning
	CovFailed        = "failed"         // exercised, a failure
	CovNotObserved   = "not observed"   // applies, but nothing was there to probe (Why says what)
	CovNotApplicable = "not applicable" // another protocol version or transport
	CovNotCheckable  = "not checkable"  // invisible from outside (the digest's n/c)
	CovNotCovered    = "not covered"    // checkable, but no fixture or check cites it yet (Why says why)
)

// A RuleCoverage is one rule's line of the coverage table.
type RuleCoverage struct {
	ID, Level, Versions, Title string
	Status                     string
	Why                        string   // for not observed, not applicable, not covered
	Fixtures                   []string // the fixtures (and runner probes) citing it
	Checks                     []string // the checks citing it
}

// A CoverageSummary is the run's coverage table and its counts.
type CoverageSummary struct {
	Version, Transport string
	Rules              []RuleCoverage
	// Checkable counts the catalogue's checkable rules; Exercised those
	// the run exercised (Passed + Warned + Failed); NotObserved,
	// NotApplicable and NotCovered the others.
	Checkable, Exercised, Passed, Warned, Failed, NotObserved, NotApplicable, NotCovered int
}

// Line is the one-line count of the human report.
func (c *CoverageSummary) Line() string {
	return fmt.Sprintf("coverage: %d of %d checkable rules exercised (%d passed, %d warned, %d failed); %d not observed, %d not applicable to %s over %s, %d not covered yet",
		c.Exercised, c.Checkable, c.Passed, c.Warned, c.Failed, c.NotObserved, c.NotApplicable, c.Version, c.Transport, c.NotCovered)
}

// Pending are the checkable rules no fixture or check covers yet, each
// with the reason; a test keeps the list honest (a rule that gains a
// fixture or a check must leave it).
var Pending = map[string]string{
	"T-HDR-6":   "needs a tool with an x-mcp-header parameter, which a fixture cannot make the server have",
	"T-MRTR-5":  "needs a second round that presents tampered requestState to a tool that asks for input",
	"T-MRTR-6":  "needs a second round that replays requestState on another request",
	"T-MRTR-9":  "needs a second round with input responses missing, to a tool that asks for input",
	"T-STDIO-3": "information only: the server's stderr tail is a note of the report, never a verdict",
	"T-STDIO-6": "shutdown is the transport's, after the run; its timing is not judged",
	"T-STDIO-7": "needs a tool slow enough to cancel while it runs",
	"AMB-9":     "needs a tool slow enough to cancel while it runs (T-STDIO-7)",
	"T-TASK-2":  "needs a server that declares tasks, called with a task on a tool without task support",
	"T-AUTH-3":  "needs the Protected Resource Metadata document fetched, which checks (no I/O) cannot",
}

// CatalogueCoverage lists, for every rule, the fixtures and checks that
// cite it: the coverage of the corpus without a target. fixtures maps a
// fixture (or runner probe) ID to the rules it cites.
func CatalogueCoverage(fixtures map[string][]string, cs []*checks.Check) []RuleCoverage {
	byRule := map[string][]string{}
	for id, rs := range fixtures {
		for _, r := range rs {
			byRule[r] = append(byRule[r], id)
		}
	}
	checksOf := map[string][]string{}
	for _, c := range cs { // each check's texts read once, not once per rule
		for _, id := range rules.Cited(c.SpecRef + "\n" + c.Doc) {
			checksOf[id] = append(checksOf[id], c.ID)
		}
	}
	var out []RuleCoverage
	for _, r := range rules.All() {
		rc := RuleCoverage{ID: r.ID, Level: r.Level, Versions: r.Versions, Title: r.Title, Fixtures: byRule[r.ID], Checks: checksOf[r.ID]}
		slices.Sort(rc.Fixtures)
		switch {
		case !r.Checkable:
			rc.Status = CovNotCheckable
		case len(rc.Fixtures) == 0 && len(rc.Checks) == 0:
			rc.Status, rc.Why = CovNotCovered, Pending[r.ID]
		default:
			rc.Status = "covered"
		}
		out = append(out, rc)
	}
	return out
}

// A CoverageTracker gathers a live run's evidence, one judged exchange at
// a time, and makes its CoverageSummary at the end.
type CoverageTracker struct {
	fixtures map[string][]string
	checks   []*checks.Check
	worst    map[string]string // rule → passed | warned | failed
	skips    map[string]string // rule → the first skip reason of a fixture citing it
	checkRan map[string]bool   // check ID → judged some exchange
}

// NewCoverageTracker starts tracking a run of the given fixtures (and
// runner probes: ID → the rules each cites) judged by cs.
func NewCoverageTracker(fixtures map[string][]string, cs []*checks.Check) *CoverageTracker {
	return &CoverageTracker{fixtures: fixtures, checks: cs, worst: map[string]string{}, skips: map[string]string{}, checkRan: map[string]bool{}}
}

// fixtureOf finds the fixture an exchange belongs to: its ID, or a
// variant or sub-exchange of it ("tools/wrong-arguments/missing-required/a",
// "negotiate/initialize-2025-06-18").
func (t *CoverageTracker) fixtureOf(name string) string {
	best := ""
	for id := range t.fixtures {
		if (name == id || strings.HasPrefix(name, id+"/") || strings.HasPrefix(name, id+"-")) && len(id) > len(best) {
			best = id
		}
	}
	return best
}

func covRank(s string) int {
	switch s {
	case CovFailed:
		return 3
	case CovWarned:
		return 2
	case CovPassed:
		return 1
	}
	return 0
}

func (t *CoverageTracker) mark(rule, status string) {
	if covRank(status) > covRank(t.worst[rule]) {
		t.worst[rule] = status
	}
}

// Add takes one judged exchange.
func (t *CoverageTracker) Add(r *Result) {
	fx := t.fixtureOf(r.Fixture)
	cited := t.fixtures[fx]
	judged := false
	for _, v := range r.Verdicts {
		switch v.Status {
		case checks.StatusSkip:
			for _, rule := range cited {
				if _, ok := t.skips[rule]; !ok && r.Exchange == nil {
					t.skips[rule] = fx + ": " + v.Reason
				}
			}
			continue
		case checks.StatusError:
			continue
		}
		judged = true
		t.checkRan[v.Check.ID] = true
		st := CovPassed
		switch v.Status {
		case checks.StatusFail:
			st = CovFailed
		case checks.StatusWarn:
			st = CovWarned
		}
		for _, rule := range cited {
			t.mark(rule, st)
		}
		for _, f := range v.Findings {
			fs := CovWarned
			if f.Status == checks.StatusFail {
				fs = CovFailed
			}
			for _, rule := range rules.Cited(f.Message) {
				t.mark(rule, fs)
			}
		}
	}
	if !judged {
		for _, rule := range cited {
			if _, ok := t.skips[rule]; !ok {
				t.skips[rule] = fx + ": not judged"
			}
		}
	}
}

// Summary makes the coverage table of the run, for the version it
// negotiated and the transport it used.
func (t *CoverageTracker) Summary(version, transport string) *CoverageSummary {
	s := &CoverageSummary{Version: version, Transport: transport}
	for _, rc := range CatalogueCoverage(t.fixtures, t.checks) {
		r := rules.Lookup(rc.ID)
		switch {
		case rc.Status == CovNotCheckable:
		case !appliesToVersion(r.Versions, version):
			rc.Status, rc.Why = CovNotApplicable, "the rule binds "+r.Versions
		case !appliesToTransport(r.ID, transport):
			rc.Status, rc.Why = CovNotApplicable, "the rule binds the other transport"
		case rc.Status == CovNotCovered:
		case t.worst[r.ID] != "":
			rc.Status, rc.Why = t.worst[r.ID], ""
		case len(rc.Fixtures) == 0 && slices.ContainsFunc(rc.Checks, func(id string) bool { return t.checkRan[id] }):
			// Only checks cite it, and one of them judged an exchange.
			rc.Status = CovPassed
		default:
			rc.Status, rc.Why = CovNotObserved, t.skips[r.ID]
			if rc.Why == "" {
				rc.Why = "no exchange of the run gave its fixtures or checks something to judge"
			}
		}
		if r.Checkable {
			s.Checkable++
			switch rc.Status {
			case CovPassed:
				s.Passed++
			case CovWarned:
				s.Warned++
			case CovFailed:
				s.Failed++
			case CovNotObserved:
				s.NotObserved++
			case CovNotApplicable:
				s.NotApplicable++
			case CovNotCovered:
				s.NotCovered++
			}
		}
		s.Rules = append(s.Rules, rc)
	}
	s.Exercised = s.Passed + s.Warned + s.Failed
	return s
}

// appliesToVersion reads a catalogue versions field ("all", "2025-xx",
// "2025-11-25, 2026-07-28", "2025-03-26").
// A 2025-03-26 run is judged under 2025-06-18's rules where its own do
// not differ (digest §1a), so those apply to it as well as its own.
func appliesToVersion(versions, v string) bool {
	judged := v
	if v == envelope.V20250326 {
		judged = envelope.V20250618
	}
	for _, part := range strings.Split(versions, ",") {
		switch part = strings.TrimSpace(part); {
		case part == "all", part == v, part == judged:
			return true
		case part == "2025-xx" && (judged == envelope.V20251125 || judged == envelope.V20250618):
			return true
		}
	}
	return false
}

// appliesToTransport: HTTP rules (T-HTTP, T-SESS, T-HDR, T-AUTH) bind
// Streamable HTTP, T-STDIO rules stdio.
func appliesToTransport(id, transport string) bool {
	switch {
	case strings.HasPrefix(id, "T-HTTP-"), strings.HasPrefix(id, "T-SESS-"), strings.HasPrefix(id, "T-HDR-"), strings.HasPrefix(id, "T-AUTH-"):
		return transport == envelope.HTTP
	case strings.HasPrefix(id, "T-STDIO-"):
		return transport == envelope.Stdio
	}
	return true
}
