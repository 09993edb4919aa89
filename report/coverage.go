package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
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
	CovNotObserved   = "not observed"   // applies, but nothing was there to probe, or a breach could not be told to be its (Why says which)
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
	// NotApplicable and NotCovered the others. Unprobed counts the
	// passed rules that no fixture probes and only checks that judge
	// several rules passed: whether the run provoked what they bind is
	// not known (review rev66, rev67).
	Checkable, Exercised, Passed, Warned, Failed, NotObserved, NotApplicable, NotCovered, Unprobed int
}

// Line is the one-line count of the human report.
func (c *CoverageSummary) Line() string {
	unprobed := ""
	if c.Unprobed > 0 {
		unprobed = fmt.Sprintf("; %d of the passed only by checks that judge several rules, not known to be put to the test", c.Unprobed)
	}
	return fmt.Sprintf("coverage: %d of %d checkable rules exercised (%d passed, %d warned, %d failed%s); %d not observed, %d not applicable to %s over %s, %d not covered yet",
		c.Exercised, c.Checkable, c.Passed, c.Warned, c.Failed, unprobed, c.NotObserved, c.NotApplicable, c.Version, c.Transport, c.NotCovered)
}

// Pending are the checkable rules no fixture or check covers yet, each
// with the reason; a test keeps the list honest (a rule that gains a
// fixture or a check must leave it).
var Pending = map[string]string{
	"T-STDIO-3": "information only: the server's stderr tail is a note of the report, never a verdict",
	"T-STDIO-7": "needs a tool slow enough to cancel while it runs",
	"AMB-9":     "needs a tool slow enough to cancel while it runs (T-STDIO-7)",
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
		for _, id := range c.Rules() {
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
	worst    map[string]string          // rule → passed | warned | failed
	skips    map[string]string          // rule → the first skip reason of a fixture citing it
	checkRan map[string]bool            // check ID → judged some exchange
	cites    map[string]map[string]bool // check ID → the rules it cites
	// judgedOnlyByOutcome: the rules no check of a server's replies cites
	// (a client check never judges one).
	judgedOnlyByOutcome map[string]bool
	// unnamed: check ID → its worst breach that named no rule, where the
	// check cites several (so which of them it broke is not known).
	unnamed map[string]unnamedBreach
	// doubted: rule → why a fixture probing it leaves it in doubt: the
	// outcome was wrong, and the findings named other rules. Another
	// fixture's pass does not pass it (see Summary).
	doubted map[string]string
}

type unnamedBreach struct{ status, fixture string }

// NewCoverageTracker starts tracking a run of the given fixtures (and
// runner probes: ID → the rules each cites) judged by cs.
func NewCoverageTracker(fixtures map[string][]string, cs []*checks.Check) *CoverageTracker {
	t := &CoverageTracker{fixtures: fixtures, checks: cs, worst: map[string]string{}, skips: map[string]string{}, checkRan: map[string]bool{},
		cites: map[string]map[string]bool{}, unnamed: map[string]unnamedBreach{}, judgedOnlyByOutcome: map[string]bool{}, doubted: map[string]string{}}
	for _, c := range cs {
		t.cites[c.ID] = map[string]bool{}
		for _, id := range c.Rules() {
			t.cites[c.ID][id] = true
		}
	}
	for _, rs := range fixtures {
		for _, id := range rs {
			t.judgedOnlyByOutcome[id] = !slices.ContainsFunc(cs, func(c *checks.Check) bool {
				return c.Area != checks.AreaClient && t.cites[c.ID][id]
			})
		}
	}
	return t
}

// fixtureOf finds the fixture an exchange belongs to: its ID, or a
// variant or sub-exchange of it ("tools/wrong-arguments/missing-required/a",
// "negotiate/initialize-2025-06-18").
func (t *CoverageTracker) fixtureOf(name string) string { return fixtureOf(t.fixtures, name) }

// Cited are the rules of the fixture the exchange named name belongs to
// (see FixtureRules).
func (t *CoverageTracker) Cited(name string) []string { return FixtureRules(t.fixtures, name) }

func fixtureOf(cites map[string][]string, name string) string {
	best := ""
	for id := range cites {
		if (name == id || strings.HasPrefix(name, id+"/") || strings.HasPrefix(name, id+"-")) && len(id) > len(best) {
			best = id
		}
	}
	return best
}

// FixtureRules are the rules cited by the fixture (or runner probe) of
// cites that the exchange named name belongs to (see fixtureOf); nil
// when it belongs to none.
func FixtureRules(cites map[string][]string, name string) []string {
	return cites[fixtureOf(cites, name)]
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
	if r := rules.Lookup(rule); status == CovFailed && r != nil && !breakable(rule) {
		// An ambiguity, a MAY, an UNSPEC or a description binds nothing:
		// a fault the fixture's outcome check found on its exchange is
		// another rule's breach, and shows this one open at most (DESIGN:
		// ambiguities warn; review rev25).
		status = CovWarned
	}
	if covRank(status) > covRank(t.worst[rule]) {
		t.worst[rule] = status
	}
}

// Add takes one judged exchange.
//
// A verdict speaks to the rules of the exchange's fixture that its check
// cites. A check that judges the outcome the fixture expects (refused or
// served, the code, the status) speaks to all of them when it fails, as
// the condition the fixture probes was mishandled; when it passes, to the
// rules no check cites (T-TOOL-6's unknown tool is judged by its code
// alone), whatever else the reply broke. Any other rule no citing check
// judged on this exchange (its check judges only results, and the request
// was refused) passes with the exchange's passes if no envelope, schema or
// protocol check faulted the reply's form; a contract breach (an echo, a
// multi-line message) is not a fault of the form. So a multi-line message
// on a fixture probing T-ERR-3 breaks the contract, not T-ERR-3; a null
// completion result leaves T-COMP-1 (how many values) unjudged rather
// than passed by its status 200; and a silent server leaves the fixture's
// own rules unjudged. Neither passing path passes a rule of a request that
// wanted serving and was refused (its result's rules were not exercised).
// A verdict whose findings each name the digest rule they break, or the
// contract, speaks to those rules alone: the fixture's others are then
// neither broken by it nor known to hold, and where such a verdict found
// the outcome wrong, no other check's pass passes them either.
func (t *CoverageTracker) Add(r *Result) {
	if envelope.IsLiveness(r.Fixture) {
		return
	}
	fx := t.fixtureOf(r.Fixture)
	cited := t.fixtures[fx]
	intact := true                // no envelope, schema or protocol check faulted the reply
	outcomeOff := false           // a check of the outcome found it wrong by the spec
	outcomeFailed := false        // and failed it: the spec's MUST, not a SHOULD or an open point
	byCiting := map[string]bool{} // a fixture rule a check citing it judged
	for _, v := range r.Verdicts {
		switch specStatus(v) {
		case checks.StatusFail, checks.StatusWarn:
			switch v.Check.Area {
			case checks.AreaEnvelope, checks.AreaSchema, checks.AreaProtocol:
				intact = false
			}
			outcomeOff = outcomeOff || v.Check.JudgesOutcome
			outcomeFailed = outcomeFailed || v.Check.JudgesOutcome && specStatus(v) == checks.StatusFail && !specWarnsOnly(v.Findings)
		case checks.StatusSkip, checks.StatusError:
			continue
		}
		for _, rule := range cited {
			byCiting[rule] = byCiting[rule] || t.cites[v.Check.ID][rule]
		}
	}
	// A request refused where the fixture asked for no refusal (a valid
	// completion answered -32603) exercised none of the rules of the
	// result it would have served: passing checks do not pass them.
	unserved := refusedUnasked(r)
	// A reply that answers another fault of the request (an unknown tool
	// beside a header mismatch, AMB-4) shows nothing of the one the
	// fixture probes: passing checks do not pass its rules either.
	elsewhere := answeredAnotherFault(r)
	judged := map[string]bool{}  // the fixture's rules a verdict spoke to
	aside := map[string]string{} // why a rule a verdict would have spoken to is unjudged
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
		t.checkRan[v.Check.ID] = true
		st := CovPassed
		switch specStatus(v) {
		case checks.StatusFail:
			st = CovFailed
			if specWarnsOnly(v.Findings) {
				// The strict contract fails it; the spec, whose rules
				// the table speaks of, only asks it (a SHOULD).
				st = CovWarned
			}
		case checks.StatusWarn:
			st = CovWarned
		}
		// Findings that each name the rule they break speak for the
		// verdict: the fixture's other rules are neither broken by it
		// nor known to hold (PRO1010 naming T-TOOL-2 breaks no T-TOOL-5).
		// A rule outside the digest (JSON-RPC §5.1 for a parse error's
		// code) may be the one a fixture's rule restates: it does not
		// speak alone.
		ownWords := st != CovPassed && len(v.Findings) > 0 && !slices.ContainsFunc(v.Findings, func(f checks.Finding) bool {
			return !specAsksNothing(f) && len(f.Rules()) == 0
		})
		// Where the outcome was wrong, the passes of other checks do not
		// pass the rules no check of theirs judges (an uppercase base64
		// marker, T-HDR-3, refused as an unknown tool where a mismatch,
		// T-HDR-2, was due: whether the server decodes is not known).
		passes := !unserved && !outcomeOff && !elsewhere
		named := false // the verdict named a rule it breaks
		for _, rule := range cited {
			speaks := t.cites[v.Check.ID][rule] ||
				v.Check.JudgesOutcome && (st != CovPassed || t.judgedOnlyByOutcome[rule] && passes) ||
				st == CovPassed && intact && !byCiting[rule] && passes
			switch {
			case speaks && ownWords:
				if _, ok := aside[rule]; !ok {
					aside[rule] = v.Check.ID + "'s findings on " + r.Fixture + " name other rules, so whether this one holds is not known"
				}
			case speaks:
				t.mark(rule, st)
				judged[rule], named = true, true
			}
		}
		for _, f := range v.Findings {
			if v.Check.StrictOnly || specAsksNothing(f) {
				// The contract's alone: whatever rule its text cites
				// (ERR4002's doubt between T-TOOL-8 and T-TOOL-13), the
				// spec finds nothing here.
				named = true
				continue
			}
			fs := CovWarned
			if specFails(f) {
				fs = CovFailed
			}
			for _, rule := range f.Rules() {
				t.mark(rule, fs)
				named = true
			}
			// A finding that names the expectation it breaks, and no rule
			// of the digest in it (the contract alone, JSON-RPC's text, a
			// receiver's latitude under RFC 8259), breaks none of the
			// check's rules.
			named = named || f.Rule != ""
		}
		// A breach that names no rule is one of the check's own: which one
		// is certain only when the check cites a single rule; otherwise
		// none of its rules may pass on the strength of its verdicts.
		if own := t.cites[v.Check.ID]; st != CovPassed && !named {
			if len(own) == 1 {
				for rule := range own {
					t.mark(rule, st)
				}
			} else if covRank(st) > covRank(t.unnamed[v.Check.ID].status) {
				t.unnamed[v.Check.ID] = unnamedBreach{st, r.Fixture}
			}
		}
	}
	why := "the checks that judge it found nothing to judge"
	switch {
	case r.Exchange != nil && r.Exchange.Failure != "":
		why = r.Exchange.Failure
	case elsewhere:
		why = "the reply answered another fault of the request, which the spec lets come first (AMB-4), so the one the fixture probes was not exercised"
	case unserved:
		why = "the request was refused, though nothing asked for a refusal, so what a served reply would show was not exercised"
	case !intact:
		why += ", and the reply's form was faulted"
	}
	for _, rule := range cited {
		if judged[rule] {
			continue
		}
		a, isAside := aside[rule]
		if isAside && outcomeFailed && t.judgedOnlyByOutcome[rule] && breakable(rule) {
			// The outcome the fixture probes broke a MUST, the findings
			// named other rules, and only outcomes speak to this one:
			// the fault may be its too (an uppercase Base64 marker served
			// breaks T-HDR-2; whether the server decoded it, T-HDR-3, or
			// compares no header at all is not known), so no other
			// fixture's pass passes it. (Nor where a finding names a
			// sibling the fixture cites: a -32603 for a bad completion
			// argument breaks T-ERR-4, which it names, and T-COMP-2's
			// SHOULD, which it does not.) An open point, a MAY or a
			// description cannot be broken: no doubt falls on it.
			if _, ok := t.doubted[rule]; !ok {
				t.doubted[rule] = fx + ": " + a
			}
		}
		if _, ok := t.skips[rule]; !ok {
			if isAside {
				t.skips[rule] = fx + ": " + a
			} else {
				t.skips[rule] = fx + ": " + why
			}
		}
	}
}

// breakable: the rule binds (a MUST or a SHOULD, alone or beside another
// level), so a fault may break it; an ambiguity, an UNSPEC, a MAY or a
// description binds nothing.
func breakable(id string) bool {
	r := rules.Lookup(id)
	return r != nil && (strings.Contains(r.Level, "MUST") || strings.Contains(r.Level, "SHOULD"))
}

// specStatus is a verdict's status under the spec, of whose rules the
// table speaks: a verdict of a check of the strict contract alone, or
// whose findings all break the contract alone, passes (the same reply
// under --contract spec has no finding).
func specStatus(v checks.Verdict) checks.Status {
	if (v.Status == checks.StatusFail || v.Status == checks.StatusWarn) && (v.Check.StrictOnly || len(v.Findings) > 0 &&
		!slices.ContainsFunc(v.Findings, func(f checks.Finding) bool { return !specAsksNothing(f) })) {
		return checks.StatusPass
	}
	return v.Status
}

// refusedUnasked: the exchange's reply refuses the request (a JSON-RPC
// error, an HTTP error status) and its expectation neither asked for a
// refusal nor left one open.
func refusedUnasked(r *Result) bool {
	// (Without a recorded expectation what was asked is not known.) A
	// fixture that leaves the status open (AnyStatus: a narrower Accept,
	// AMB-17) lets a refusal come. Asked first: most fixtures ask for a
	// refusal, and their replies need no second reading.
	x := r.Expect
	if x == nil || x.Error.Set() || x.AnyStatus || x.StatusWant.Set() && slices.ContainsFunc(x.Status, func(st int) bool { return st >= 400 }) {
		return false
	}
	if r.Exchange == nil || r.Exchange.Response == nil {
		return false
	}
	if r.Exchange.Response.Status >= 400 {
		return true
	}
	m := r.Reply().Response
	return m != nil && m.IsObject() && m.Get("error").Exists()
}

// answeredAnotherFault: the reply's error code is one only another
// reading of the request calls for (expect.Expectation.ReadCodes), none
// of the codes of the condition the fixture probes.
func answeredAnotherFault(r *Result) bool {
	x := r.Expect
	if x == nil || len(x.ReadCodes) == 0 || r.Exchange == nil || r.Exchange.Response == nil {
		return false
	}
	m := r.Reply().Response
	if m == nil || !m.IsObject() {
		return false
	}
	c := m.Get("error.code")
	if c.Type != gjson.Number || !envelope.IsInteger(c.Raw) {
		return false
	}
	code := int(c.Int())
	return slices.Contains(x.ReadCodes, code) && !slices.Contains(x.Codes, code)
}

// specWarnsOnly: every failing finding is one the spec alone only warns
// of (and there are findings to tell).
func specWarnsOnly(fs []checks.Finding) bool {
	return len(fs) > 0 && !slices.ContainsFunc(fs, specFails)
}

// specFails: the finding fails under the spec too, not only under the
// strict contract: the spec's verdict, where the finding records one (a
// contract breach the spec judges too), else its own.
func specFails(f checks.Finding) bool {
	if f.Spec != "" {
		return f.Spec == checks.StatusFail
	}
	return f.Status == checks.StatusFail && f.Rule != checks.ContractRule
}

// specAsksNothing: the finding breaks the strict contract alone; under
// --contract spec the same reply has none.
func specAsksNothing(f checks.Finding) bool {
	return f.Spec == checks.StatusPass || f.Rule == checks.ContractRule
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
		case t.worst[r.ID] == CovPassed && t.doubted[r.ID] != "":
			rc.Status, rc.Why = CovNotObserved, t.doubted[r.ID]
		case t.worst[r.ID] != "":
			rc.Status, rc.Why = t.worst[r.ID], ""
		case t.unnamedBreach(&rc):
		case len(rc.Fixtures) == 0 && slices.ContainsFunc(rc.Checks, func(id string) bool { return t.checkRan[id] }):
			// Only checks cite it, and one of them judged an exchange.
			// A check that cites several rules passing says nothing of
			// whether the run provoked what this one binds (review rev66:
			// T-AUTH-1 against a server without authorization): the
			// table says so, in the rule's why.
			rc.Status = CovPassed
			if ran := slices.DeleteFunc(slices.Clone(rc.Checks), func(id string) bool { return !t.checkRan[id] }); !slices.ContainsFunc(ran, func(id string) bool { return len(t.cites[id]) == 1 }) {
				rc.Why = "no fixture probes it: " + strings.Join(ran, ", ") + ", which judge several rules, found nothing against it on the run's exchanges, but whether one of them provoked what it binds is not known"
				s.Unprobed++
			}
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

// unnamedBreach keeps rc, a rule no fixture of the run showed passing or
// failing, from passing on the strength of a check that cites it and
// found a breach without naming which of its rules it breaks: the rule
// may be the one broken, or not (a schema check citing twenty rules fails
// a missing resultType), so it is neither passed nor failed but not
// observed, and Why names the breach; the verdict list carries the
// failure itself.
func (t *CoverageTracker) unnamedBreach(rc *RuleCoverage) bool {
	worst, by := unnamedBreach{}, ""
	for _, id := range rc.Checks {
		if b := t.unnamed[id]; covRank(b.status) > covRank(worst.status) {
			worst, by = b, id
		}
	}
	if worst.status == "" {
		return false
	}
	rc.Status = CovNotObserved
	rc.Why = fmt.Sprintf("%s found a breach on %s without naming which of its rules it breaks, so whether this one holds is not known", by, worst.fixture)
	return true
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
