// Package report writes the verdicts of a run in the formats people and
// CI systems read: human text, JSON, JUnit XML and GitHub annotations.
// Writers stream: a run of a million exchanges is written as it goes, in
// memory that does not grow with it. Every writer is a pure function of
// the calls it receives; the clock is the caller's.
package report

import (
	"fmt"
	"io"
	"time"

	"github.com/wymcp/wymcp-check/checks"
)

// Meta describes a run, written before its first exchange.
type Meta struct {
	Tool       string    // "wymcp-check"
	Version    string    // the checker's version
	Target     string    // what was checked: a URL, a command, transcript files
	Protocol   string    // the protocol version judged, and how it was chosen
	Contract   string    // the contract's name
	Started    time.Time // injected clock
	Verbose    bool      // human: also list passes and skips
	FailOnWarn bool      // the gate: warnings fail the run too
}

// Summary counts verdicts by status, and carries notes about the run
// itself (input lines that could not be read, a server's stderr tail).
type Summary struct {
	Pass, Fail, Warn, Skip, Error int
	Notes                         []string
	Duration                      time.Duration
	// Aborted says why the run could not judge the target at all (it did
	// not start, was unreachable, no version was negotiated): a report
	// with no verdicts must not read like a clean run.
	Aborted string
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

// Gate reports whether the run fails the gate: any fail or error, and
// with failOnWarn any warning too.
func (s Summary) Gate(failOnWarn bool) bool {
	return s.Aborted != "" || s.Fail > 0 || s.Error > 0 || (failOnWarn && s.Warn > 0)
}

// A Writer receives a run as it happens.
type Writer interface {
	Begin(Meta) error
	// Exchange writes the verdicts of one exchange (one fixture, or one
	// transcript line), in check order.
	Exchange(fixture string, vs []checks.Verdict) error
	End(Summary) error
}

// Formats lists the names New accepts.
func Formats() []string { return []string{"human", "json", "junit", "github"} }

// New returns the writer of a format. color applies to human only.
func New(format string, w io.Writer, color bool) (Writer, error) {
	switch format {
	case "human":
		return newHuman(w, color), nil
	case "json":
		return &jsonWriter{w: w}, nil
	case "junit":
		return &junitWriter{w: w}, nil
	case "github":
		return &githubWriter{w: w}, nil
	}
	return nil, fmt.Errorf("unknown format %q (want one of human, json, junit, github)", format)
}
