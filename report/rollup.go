package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/rules"
)

// A checkRoll is what one check found across the run: in how many
// exchanges it failed, warned or failed as known, and the first finding,
// so a report can say "ERR1002 fails in 22 fixtures" before the details.
type checkRoll struct {
	check             *checks.Check // nil for the could-not-judge row
	fail, warn, known int           // exchanges, not findings
	first             sample
	firstGating       bool
	// failed and warned name the exchanges that fail and those that warn
	// (not known ones) apart, so an annotation that says "fails in 2"
	// names those 2, with a finding of theirs.
	failed, warned named
}

// named is a bounded list of exchanges of one status and the first
// finding among them.
type named struct {
	names []string
	more  int // exchanges beyond names
	first sample
}

func (n *named) add(fixture string, s sample) {
	if len(n.names) == 0 && n.more == 0 {
		n.first = s
	}
	if len(n.names) < maxNamed {
		n.names = append(n.names, fixture)
	} else {
		n.more++
	}
}

// A sample is one finding, with where it was found.
type sample struct {
	fixture, file string
	line          int
	path, message string
	rule          string        // the finding's Rule
	spec          checks.Status // the finding's Spec
	status        checks.Status
	known         string // the baseline's reason, if known
	seq           int    // the exchange's position in the run, from 1
	scope         scope  // what the exchange was judged under
}

// A scope is the protocol version and the transport an exchange was
// judged under (empty: not known), and the rules its fixture cites
// (Result.Cited, joined by ", "; empty: not known).
type scope struct{ version, transport, cited string }

func scopeOf(res *Result) scope {
	var s scope
	if ex := res.Exchange; ex != nil {
		s = scope{version: ex.Version, transport: ex.Transport}
	}
	if res.Expect != nil && res.Expect.Version != "" {
		s.version = res.Expect.Version
	}
	s.cited = strings.Join(res.Cited, ", ")
	return s
}

// binds: rule id binds an exchange of the scope (as far as it is known).
func (s scope) binds(id string) bool {
	r := rules.Lookup(id)
	return r != nil && (s.transport == "" || appliesToTransport(id, s.transport)) &&
		(s.version == "" || appliesToVersion(r.Versions, s.version))
}

// maxNamed bounds the exchanges a rollup names per check.
const maxNamed = 5

// rollup holds a checkRoll per check that found anything, and one for
// the exchanges that could not be judged: a timeout is one problem of
// its fixture, whatever number of checks it left unjudged. It grows with
// the number of checks, not of exchanges.
type rollup struct {
	byCheck map[string]*checkRoll
	errs    checkRoll // fail counts the exchanges with unknown errors
	lint    bool      // results come from transcript records
	n       int       // exchanges added
}

func (r *rollup) add(res *Result, failOnWarn bool) {
	if r.byCheck == nil {
		r.byCheck = map[string]*checkRoll{}
	}
	r.n++
	if res.Line > 0 {
		r.lint = true
	}
	var errored, erroredUnknown bool
	sc := scopeOf(res)
	for _, v := range res.Verdicts {
		reason, known := res.Known[v.Check.ID]
		s := sample{fixture: res.Fixture, file: res.File, line: res.Line, status: v.Status, known: reason, seq: r.n, scope: sc}
		switch v.Status {
		case checks.StatusError:
			s.message = v.Reason
			if !errored {
				r.errs.note(s, !known)
			}
			if !known && !erroredUnknown {
				r.errs.failed.add(res.Fixture, s)
			}
			errored = true
			erroredUnknown = erroredUnknown || !known
			continue
		case checks.StatusFail, checks.StatusWarn:
		default:
			continue
		}
		c := r.byCheck[v.Check.ID]
		if c == nil {
			c = &checkRoll{check: v.Check}
			r.byCheck[v.Check.ID] = c
		}
		switch {
		case known:
			c.known++
		case v.Status == checks.StatusFail:
			c.fail++
		default:
			c.warn++
		}
		if len(v.Findings) > 0 {
			f := v.Findings[0]
			s.path, s.message, s.rule, s.spec, s.status = f.Path, f.Message, f.Rule, f.Spec, f.Status
		}
		c.note(s, !known && Gates(v.Status, failOnWarn))
		if known {
			continue
		}
		// The group's sample is a finding of the verdict's own status: a
		// failing verdict may warn first.
		for _, f := range v.Findings {
			if f.Status == v.Status {
				s.path, s.message, s.rule, s.spec, s.status = f.Path, f.Message, f.Rule, f.Spec, f.Status
				break
			}
		}
		if v.Status == checks.StatusFail {
			c.failed.add(res.Fixture, s)
		} else {
			c.warned.add(res.Fixture, s)
		}
	}
	if errored {
		if erroredUnknown {
			r.errs.fail++
		} else {
			r.errs.known++
		}
	}
}

// note keeps the first sample worth showing: the first that fails the
// gate, else the first at all.
func (c *checkRoll) note(s sample, gating bool) {
	if c.first.seq == 0 || (gating && !c.firstGating) {
		c.first, c.firstGating = s, gating
	}
}

// sorted returns the checks, those failing in the most exchanges first.
func (r *rollup) sorted() []*checkRoll {
	out := make([]*checkRoll, 0, len(r.byCheck))
	for _, c := range r.byCheck {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *checkRoll) int {
		if n := cmp.Compare(b.fail, a.fail); n != 0 {
			return n
		}
		if n := cmp.Compare(b.warn, a.warn); n != 0 {
			return n
		}
		if n := cmp.Compare(b.known, a.known); n != 0 {
			return n
		}
		return cmp.Compare(a.check.ID, b.check.ID)
	})
	return out
}

// errored returns the could-not-judge row, nil when every exchange was
// judged.
func (r *rollup) errored() *checkRoll {
	if r.errs.fail+r.errs.known == 0 {
		return nil
	}
	return &r.errs
}

// unit names what a rollup counts: fixtures of a run, or transcript records.
func (r *rollup) unit(n int) string {
	word := "fixture"
	if r.lint {
		word = "record"
	}
	if n != 1 {
		word += "s"
	}
	return word
}

// findingRules lists the rules behind a finding, as the coverage table
// reads them: those it names (Finding.Rules: its Rule, else the rules its
// message cites in its own words, not what it quotes of a server); for a
// Rule outside the catalogue (JSON-RPC §5.1), those its message cites;
// else those of its check's SpecRef that bind the exchange's version and
// transport (sc), unless the finding only warns: an open point outside
// the catalogue breaks none of them. A finding the spec asks nothing of
// (the strict contract's alone), or one of a check of the strict contract
// alone, names none of the spec's rules, whatever its words or its
// check's SpecRef cite to explain it.
func findingRules(c *checks.Check, f checks.Finding, sc scope) []string {
	if c.StrictOnly || specAsksNothing(f) {
		return nil
	}
	known := func(ids []string) []string {
		return slices.DeleteFunc(ids, func(id string) bool { return rules.Lookup(id) == nil })
	}
	ids := known(f.Rules())
	if len(ids) == 0 && f.Rule != "" {
		ids = known(rules.CitedUnquoted(f.Message))
		if len(ids) == 0 && specWarns(f) {
			// An open point or a SHOULD outside the catalogue (a
			// receiver's latitude under RFC 8259, JSON-RPC's advice):
			// no rule of the check's is what it breaks.
			return nil
		}
	}
	if len(ids) == 0 {
		// A check's rules are a guess at the finding's: an HTTP rule is
		// none of a stdio exchange's (RPC1006's silence cites T-HTTP-5
		// for a POST left unanswered).
		own := slices.DeleteFunc(rules.Cited(c.SpecRef), func(id string) bool { return !sc.binds(id) })
		if sc.cited == "" {
			return own
		}
		// The fixture's rules are known: the finding breaks those of them
		// the coverage table marks for it (see CoverageTracker.Add): the
		// fixture's rules the check cites, all of them for a check of
		// the outcome the fixture expects, or the check's one rule
		// (review rev85: an ERR1002 linked the check's ten rules, which
		// the same report's coverage table marked passed).
		cited := slices.DeleteFunc(rules.Cited(sc.cited), func(id string) bool { return !sc.binds(id) })
		if c.JudgesOutcome {
			return cited
		}
		ids = slices.DeleteFunc(cited, func(id string) bool { return !slices.Contains(own, id) })
		if len(ids) == 0 && len(own) == 1 {
			ids = own
		}
	}
	return ids
}

// specWarns: under the spec the finding is a warn, not a failure.
func specWarns(f checks.Finding) bool {
	if f.Spec != "" {
		return f.Spec == checks.StatusWarn
	}
	return f.Status == checks.StatusWarn
}

// finding is the sample's finding, as far as a report reads it again.
func (s sample) finding() checks.Finding {
	return checks.Finding{Status: s.status, Path: s.path, Message: s.message, Rule: s.rule, Spec: s.spec}
}

// shortRules lists at most four rules, then how many more.
func shortRules(ids []string) (shown []string, more int) {
	if len(ids) > 4 {
		return ids[:4], len(ids) - 4
	}
	return ids, 0
}
