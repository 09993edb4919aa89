// Package checks holds every conformance check as a value and the judge
// that applies them to an exchange. Checks do no I/O: they read the
// exchange, the expectation derived from the request, and the contract,
// and report findings.
package checks

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/rules"
	"github.com/wymcp/wymcp-check/schema"
)

// Severity is the spec keyword behind a check.
type Severity string

const (
	MUST   Severity = "error"   // a breach fails
	SHOULD Severity = "warning" // a breach warns
)

// Area groups checks by the part of a reply they judge; the JSON report
// carries it so CI dashboards can slice results.
type Area string

const (
	AreaEnvelope  Area = "envelope"
	AreaCode      Area = "code"
	AreaMessage   Area = "message"
	AreaData      Area = "data"
	AreaEcho      Area = "echo"
	AreaDistilled Area = "distilled"
	AreaHTTP      Area = "http"
	AreaSchema    Area = "schema"
	AreaProtocol  Area = "protocol"
	// AreaClient judges the messages a client sends (proxy and wrap
	// watching real traffic), not a server's replies.
	AreaClient Area = "client"
)

// Areas lists every area, in report order.
func Areas() []Area {
	return []Area{AreaEnvelope, AreaCode, AreaMessage, AreaData, AreaEcho, AreaDistilled, AreaHTTP, AreaSchema, AreaProtocol, AreaClient}
}

// A Check is one conformance rule: identity, documentation, and the
// function that applies it to one exchange.
type Check struct {
	ID       string // stable, never reused: "ERR3002"
	Title    string // sentence case, no period, at most 60 characters
	Doc      string // why the rule exists and exactly what is judged
	SpecRef  string // digest rule IDs and upstream sections, or "contract"
	Severity Severity
	Area     Area
	// Run judges p and reports with p.Failf / p.Warnf. It returns a
	// *SkipError when the exchange is out of its scope, and any other
	// error only when the check itself broke.
	Run func(p *Pass) error
	// JudgesFailures: the check runs even when the exchange failed (no
	// complete reply); it judges the failure itself, not the reply.
	JudgesFailures bool
	// JudgesOutcome: the check judges the outcome a fixture expects
	// (refused or served, the code, the status), so its breach breaks the
	// rules the fixture probes, not only those it cites itself.
	JudgesOutcome bool
	// StrictOnly: the check judges the strict contract alone (its own
	// clauses, beyond the spec): under --contract spec it skips, and it
	// judges none of the spec's rules, whatever its Doc cites to explain
	// itself, so the coverage table counts none of its verdicts.
	StrictOnly bool
}

// Rules are the digest's rules the check judges: those its SpecRef and
// Doc cite, none for a check of the strict contract alone.
func (c *Check) Rules() []string {
	if c.StrictOnly {
		return nil
	}
	return rules.Cited(c.SpecRef + "\n" + c.Doc)
}

// SkipError says why a check does not apply to an exchange. It is a
// string, not a struct behind a pointer: most checks skip most exchanges,
// and a constant reason then costs no allocation.
type SkipError string

func (e SkipError) Error() string { return "not applicable: " + string(e) }

// Skip returns the error a check's Run returns when it does not apply.
func Skip(reason string) error { return SkipError(reason) }

// Skipf is Skip with a reason formatted as fmt.Sprintf formats it.
func Skipf(format string, args ...any) error { return SkipError(fmt.Sprintf(format, args...)) }

// Status is the verdict of one check on one exchange.
type Status string

const (
	StatusPass  Status = "pass"
	StatusFail  Status = "fail"
	StatusWarn  Status = "warn"
	StatusSkip  Status = "skip"
	StatusError Status = "error" // could not be judged; never a pass
)

// A Finding is one breach found by a check.
type Finding struct {
	Status  Status // StatusFail or StatusWarn
	Path    string // where in the reply: "error.data.stack", "http.status"
	Message string // one line, lowercase, concrete values quoted
	// Rule is the rule of the expectation the finding breaks ("T-RPC-5",
	// "AMB-7: the reaction to a batch is unspecified", ContractRule),
	// where the check judged one; the coverage table counts the breach
	// against it.
	Rule string
	// Spec is the verdict the spec alone gives a breach the strict
	// contract fails ("" when the same as Status): StatusPass when the
	// spec asks nothing of it (the contract's own clauses), StatusWarn
	// when it asks the same as a SHOULD (a multi-line message fails the
	// contract and is a SHOULD of T-RPC-8's). The coverage table, which
	// speaks of the spec's rules, counts this one.
	Spec Status
}

// ContractRule is the Rule of a finding that breaks the error-envelope
// contract alone, no rule of the spec.
const ContractRule = "contract"

// A Verdict is the outcome of one check on one exchange.
type Verdict struct {
	Fixture  string
	Check    *Check
	Status   Status
	Findings []Finding // for fail and warn
	Reason   string    // for skip and error
}

// A Pass is the application of one check to one exchange.
type Pass struct {
	Check    *Check
	Exchange *envelope.Exchange
	// Expect is what a conforming reply is, built once by expect.Build;
	// checks read it and never change it.
	Expect   *expect.Expectation
	Contract *envelope.Contract
	Reply    *Reply
	Schemas  SchemaValidator // nil: schema checks skip
	// Secrets are the --header values of a live run: a reply that echoes
	// one is a finding that must not quote it.
	Secrets []envelope.Secret
	// ToolCache compiles the tool schemas a reply lists, once per run
	// when the run keeps one (nil: every time).
	ToolCache *schema.ToolCache
	// Reused are the event ids of the reply's stream an earlier stream
	// of its session used (Input.Reused).
	Reused []Reuse
	// client is the message a client check judges (JudgeClient); nil
	// when the pass judges a reply.
	client   *clientPass
	findings []Finding
	// unlisted counts the findings past maxFindings, and worst is the
	// surest of them: a reply that breaks one rule a hundred thousand
	// times is one verdict with a bounded list, not a report as large.
	unlisted int
	worst    Status
	// unlistedRules are the rules the unlisted findings name, each once;
	// unlistedUnnamed: one of them named none. The line that stands for
	// them names the rules, for the coverage table, only when all did.
	unlistedRules   []string
	unlistedUnnamed bool
	// scratch is memory the pass's echo scans reuse (Input.Scratch);
	// nil: they allocate their own.
	scratch *Scratch
}

// maxFindings bounds the findings one check lists for one exchange.
const maxFindings = 32

// Deviate reports that the reply departs from an expected property. How
// sure the finding is comes from w alone: this is the one place a
// deviation becomes fail or warn.
func (p *Pass) Deviate(w expect.Want, path, format string, args ...any) {
	st, ok := statusFor(w.Level, p.Contract)
	if !ok {
		return
	}
	if len(p.findings) >= maxFindings {
		p.unlisted++
		if st == StatusFail {
			p.worst = StatusFail
		} else if p.worst != StatusFail {
			p.worst = st
		}
		// (The format's citations, not the arguments': those quote the
		// server.)
		named := []string{w.Rule}
		if w.Rule == "" {
			named = rules.Cited(format)
		}
		for _, id := range named {
			if !slices.Contains(p.unlistedRules, id) {
				p.unlistedRules = append(p.unlistedRules, id)
			}
		}
		p.unlistedUnnamed = p.unlistedUnnamed || len(named) == 0
		return
	}
	msg := fmt.Sprintf(format, args...)
	if st == StatusWarn && w.Rule != "" && w.Rule != ContractRule {
		msg += " (" + w.Rule + ")"
	}
	f := Finding{Status: st, Path: boundPath(path), Message: msg, Rule: w.Rule}
	if w.Level == expect.Contract || w.Rule == ContractRule {
		// The strict contract's want: the spec asks nothing of it,
		// unless contractOr says what it does ask.
		f.Spec = StatusPass
	}
	p.findings = append(p.findings, f)
}

// closeFindings adds the line that stands for the unlisted findings.
func (p *Pass) closeFindings() {
	if p.unlisted > 0 {
		p.findings = append(p.findings, moreFindings(p.unlisted, p.worst, p.unlistedRules, p.unlistedUnnamed))
	}
	p.unlisted, p.worst, p.unlistedRules, p.unlistedUnnamed = 0, "", nil, false
}

// moreFindings is the line that stands for n findings past maxFindings,
// at the worst of their statuses, citing the rules they name (none when
// one of them named none: the list would claim to be whole).
func moreFindings(n int, worst Status, rules []string, unnamed bool) Finding {
	f := Finding{Status: worst, Message: fmt.Sprintf("%d more findings of this check are not listed", n)}
	if !unnamed {
		slices.Sort(rules)
		f.Rule = strings.Join(rules, ", ")
	}
	return f
}

// Rules are the digest's rules a finding says it breaks: those of its
// Rule where it has one (its message may cite a rule that allows what it
// found: "T-HTTP-4 lets a notification's refusal come bare"), else those
// its message cites in its own words, never in what it quotes.
func (f Finding) Rules() []string {
	if f.Rule != "" {
		return rules.Cited(f.Rule)
	}
	return rules.CitedUnquoted(f.Message)
}

// statusFor maps the level of a broken expectation to a verdict: a MUST
// fails, the strict contract fails under it, a SHOULD or an open point
// warns, and where nothing was expected there is nothing to report.
func statusFor(l expect.Level, c *envelope.Contract) (Status, bool) {
	switch l {
	case expect.Must:
		return StatusFail, true
	case expect.Contract:
		if c.IsStrict() {
			return StatusFail, true
		}
		return "", false
	case expect.Should, expect.Open:
		return StatusWarn, true
	}
	return "", false
}

// Failf reports a breach of the check's own rule, at its severity.
func (p *Pass) Failf(path, format string, args ...any) {
	l := expect.Must
	if p.Check.Severity == SHOULD {
		l = expect.Should
	}
	p.Deviate(expect.Want{Level: l}, path, format, args...)
}

// Warnf reports a breach that only warns: a SHOULD within the check's
// rule, named in the message.
func (p *Pass) Warnf(path, format string, args ...any) {
	p.Deviate(expect.Want{Level: expect.Should}, path, format, args...)
}

// Contractf reports a breach of the strict contract: a failure under it,
// a warning under --contract spec when the spec itself asks the same as a
// SHOULD (shouldToo), nothing otherwise. A breach of the contract alone
// names ContractRule: the coverage table counts it against no rule of
// the spec.
func (p *Pass) Contractf(shouldToo bool, path, format string, args ...any) {
	spec := expect.Want{Rule: ContractRule}
	if shouldToo {
		spec = expect.Want{Level: expect.Should}
	}
	p.contractOr(spec, path, format, args...)
}

// contractOr reports a breach the strict contract fails, and the spec
// judges as spec asks (a warn naming its rule; nothing when spec is not
// Set): under --contract spec it is spec's finding, under the strict
// contract a failure that says what the spec gives it, for the coverage
// table.
func (p *Pass) contractOr(spec expect.Want, path, format string, args ...any) {
	if !p.Contract.IsStrict() {
		p.Deviate(spec, path, format, args...)
		return
	}
	n := len(p.findings)
	p.Deviate(expect.Want{Level: expect.Contract, Rule: spec.Rule}, path, format, args...)
	if len(p.findings) > n && spec.Set() {
		p.findings[n].Spec, _ = statusFor(spec.Level, envelope.Spec())
	}
}

// maxPath bounds a finding's path in bytes: its keys are the server's
// (a data key may be 100,000 characters long), and every report, the
// terminal and a baseline print the path whole.
const maxPath = 160

// boundPath is path cut to maxPath bytes at a rune's start, marked with
// "…" where it was cut. A cut path no longer resolves with Get; the
// annotated reply places its findings at the nearest member it names.
func boundPath(path string) string {
	if len(path) <= maxPath {
		return path
	}
	cut := maxPath
	for cut > 0 && !utf8.RuneStart(path[cut]) {
		cut--
	}
	return path[:cut] + "…"
}

// errCheckBroken marks a check that panicked: an error verdict, never a pass.
var errCheckBroken = errors.New("check failed to run")

// Quote renders server or request text for a finding: at most n runes,
// control characters and invalid bytes escaped, so that neither a payload
// nor terminal escapes pass through the checker.
func Quote(s string, n int) string {
	cut := false
	// Cut at the n-th rune without decoding the rest: a server's text may
	// be many megabytes long.
	i := 0
	for at := range s {
		if i == n {
			s, cut = string([]rune(s[:at])), true
			break
		}
		i++
	}
	q := strconv.QuoteToGraphic(s)
	if cut {
		q = strings.TrimSuffix(q, `"`) + `…"`
	}
	return q
}

// quoteN is the bound for quoting in findings: short enough for one line.
const quoteN = 40
