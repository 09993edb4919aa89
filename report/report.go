// Package report writes the verdicts of a run in the formats people and
// CI systems read: human text, JSON, JUnit XML, GitHub annotations with a
// step summary, a self-contained HTML page, and SARIF 2.1.0 for code
// scanning. Writers stream where the
// format allows: a run of a million exchanges is written as it goes, in
// memory that does not grow with it (JUnit, whose totals come first,
// patches its header in place when it writes to a file). Every writer is
// a pure function of the calls it receives; the clock and the streams are
// the caller's.
package report

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// Meta describes a run, written before its first exchange.
type Meta struct {
	Tool       string    // "wymcp-check"
	Version    string    // the checker's version
	Target     string    // what was checked: a URL, a command, transcript files
	Protocol   string    // the protocol version asked for, and how it is chosen
	Contract   string    // the contract's name
	Started    time.Time // injected clock
	Verbose    bool      // human: also list passes and skips
	FailOnWarn bool      // the gate: warnings fail the run too
	Baseline   string    // the baseline file in use, if any
}

// A Result is one judged exchange, as the writers receive it.
type Result struct {
	Fixture string
	// File and Line locate the transcript record a lint result comes
	// from; empty for a live run.
	File string
	Line int
	// Exchange is what went and what came back; nil when nothing was
	// sent (a fixture that does not apply to the version or transport).
	Exchange *envelope.Exchange
	// Expect is what the judge expected of the exchange (nil: not
	// recorded); writers read the reply through it.
	Expect   *expect.Expectation
	Verdicts []checks.Verdict
	// Duration is the fixture's wall time when Timed; a transcript
	// carries no times.
	Duration time.Duration
	Timed    bool
	// Known maps a check ID to the baseline's reason, for the verdicts
	// of this exchange that fail the gate but are known failures.
	Known map[string]string
	// Cited are the rules of the fixture the exchange belongs to (see
	// FixtureRules), which a finding that names no rule breaks as the
	// coverage table reads it; nil when not known.
	Cited []string
}

// Reply splits the exchange's reply the way its judge did (through the
// expectation, when recorded); nil when nothing came back.
func (r *Result) Reply() *envelope.Reply {
	if r.Exchange == nil || r.Exchange.Response == nil {
		return nil
	}
	if r.Expect != nil {
		return r.Expect.ReadReply(r.Exchange.Response)
	}
	return envelope.ReadReply(r.Exchange.Response, envelope.ReadOptions{})
}

// A Stale entry is a baseline entry whose failure did not happen: the
// server got better, and the baseline must be tightened.
type Stale struct {
	Fixture, Check, Reason string
}

// Summary counts verdicts by status, and carries notes about the run
// itself (input lines that could not be read, a server's stderr tail).
type Summary struct {
	Pass, Fail, Warn, Skip, Error int
	// Known counts the verdicts that fail the gate but are listed in the
	// baseline: they are reported, and do not fail the run.
	Known int
	// Stale lists baseline entries that no longer fail; each fails the gate.
	Stale    []Stale
	Notes    []string
	Duration time.Duration
	// Aborted says why the run could not judge the target at all (it did
	// not start, was unreachable, no version was negotiated): a report
	// with no verdicts must not read like a clean run.
	Aborted string
	// Interrupted says why the run stopped early (a signal): what ran is
	// judged and reported, the rest was not run. The gate cannot pass an
	// incomplete run.
	Interrupted string
	// Invalid says what of the user's input could not be used (transcript
	// lines, fixture files, baseline lines: each named in the notes): the
	// rest was judged, and the exit code is 2. A CI system that reads
	// only the report must not see a green run.
	Invalid string
	// Deadline says that the run's deadline (--deadline) passed before
	// every fixture was sent: the fixtures left are could-not-judge
	// errors, and the run is incomplete, as an interrupted one is.
	Deadline string
	// Protocol is the version negotiated with the target and Negotiation
	// how it was chosen; both empty for lint, where each exchange has its own.
	Protocol, Negotiation string
	// Coverage is what the run exercised, rule by rule; nil for lint and
	// for a run that judged nothing.
	Coverage *CoverageSummary
}

// Add counts one verdict.
func (s *Summary) Add(v checks.Verdict) {
	switch v.Status {
	case checks.StatusPass:
		s.Pass++
	case checks.StatusFail:
		s.Fail++
	case checks.StatusWarn:
		s.Warn++
	case checks.StatusSkip:
		s.Skip++
	case checks.StatusError:
		s.Error++
	}
}

// Gates reports whether a verdict of this status fails the gate (unless
// the baseline knows it).
func Gates(st checks.Status, failOnWarn bool) bool {
	return st == checks.StatusFail || st == checks.StatusError || (failOnWarn && st == checks.StatusWarn)
}

// Gate reports whether the run fails the gate: a fail or error the
// baseline does not know (with failOnWarn a warning too), a stale
// baseline entry, input that could not be used, or a run that could not
// judge its target.
func (s Summary) Gate(failOnWarn bool) bool {
	gating := s.Fail + s.Error
	if failOnWarn {
		gating += s.Warn
	}
	return s.Aborted != "" || s.Interrupted != "" || s.Invalid != "" || len(s.Stale) > 0 || gating > s.Known
}

// verdictWord names the outcome of a run.
func (s Summary) verdictWord(failOnWarn bool) string {
	switch {
	case s.Aborted != "":
		return "ABORTED"
	case s.Interrupted != "":
		return "INTERRUPTED"
	case s.Invalid != "":
		return "INVALID"
	case s.Gate(failOnWarn):
		return "FAILED"
	}
	return "PASSED"
}

// A Writer receives a run as it happens.
type Writer interface {
	Begin(Meta) error
	// Exchange writes one judged exchange: a fixture of a live run, or a
	// transcript record. Verdicts come in check order. A writer keeps
	// nothing of the *Result past its return (copies only): lint fills
	// the same one for every record.
	Exchange(*Result) error
	End(Summary) error
}

// Options are what some formats need beyond the stream they write to.
type Options struct {
	Color bool // human: ANSI colors
	// StepSummary receives the github format's Markdown summary (the
	// file $GITHUB_STEP_SUMMARY names); nil writes none.
	StepSummary io.Writer
	// Spool holds the junit format's suites until the end, when its
	// stream cannot be rewritten in place (a pipe, a terminal): the
	// totals go before the suites they count. A temporary file keeps a
	// long transcript's report out of memory; nil holds it in memory.
	Spool io.ReadWriteSeeker
	// Dir is the working directory, against which the sarif format
	// writes a transcript's path: relative when under it, else
	// absolute, cleaned either way. One file spelled t.jsonl, ./t.jsonl
	// or $PWD/t.jsonl is then one artifact and one fingerprint. Empty,
	// paths are only cleaned.
	Dir string
}

// Formats lists the names New accepts.
func Formats() []string { return []string{"human", "json", "junit", "github", "html", "sarif"} }

// New returns the writer of a format.
func New(format string, w io.Writer, o Options) (Writer, error) {
	switch format {
	case "human":
		return newHuman(w, o.Color), nil
	case "json":
		return &jsonWriter{w: w}, nil
	case "junit":
		return &junitWriter{w: w, spool: o.Spool}, nil
	case "github":
		return &githubWriter{w: w, summary: o.StepSummary}, nil
	case "html":
		return &htmlWriter{w: w}, nil
	case "sarif":
		return &sarifWriter{w: w, dir: o.Dir}, nil
	}
	return nil, fmt.Errorf("unknown format %q (want one of human, json, junit, github, html, sarif)", format)
}

// Tee writes one run to several writers. A writer that fails does not
// stop the others: every report that can be written is.
func Tee(ws ...Writer) Writer { return tee(ws) }

type tee []Writer

func (t tee) Begin(m Meta) error {
	var errs []error
	for _, w := range t {
		errs = append(errs, w.Begin(m))
	}
	return errors.Join(errs...)
}

func (t tee) Exchange(r *Result) error {
	var errs []error
	for _, w := range t {
		errs = append(errs, w.Exchange(r))
	}
	return errors.Join(errs...)
}

func (t tee) End(s Summary) error {
	var errs []error
	for _, w := range t {
		errs = append(errs, w.End(s))
	}
	return errors.Join(errs...)
}
