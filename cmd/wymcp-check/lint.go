package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/lint"
	"github.com/wymcp/wymcp-check/report"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transcript"
)

type lintOptions struct {
	reportOptions
	Files    []string
	Parallel int
	// changed says whether the user set a flag; the settings a
	// recording's run line gives are taken only for flags left unset.
	changed func(name string) bool
	// ownRuns holds each input's run line, when the inputs record
	// different settings: each is judged with its own (fileSettings).
	ownRuns []*transcript.Run
}

// settings are how one input is judged.
type settings struct {
	contract *envelope.Contract
	schemas  checks.SchemaValidator
	schema   string // the --schema the client judge reads
	checks   []*checks.Check
}

// fileSettings are the settings input i is judged with: its own run
// line's, for the flags the user left unset and the settings this
// machine has (a contract or schema file of the recording machine's is
// not), else the session's. The notes say what was taken, and what was
// not, as adoptRun's say for a single input. An error says the run line
// names settings that cannot be used (a --checks no check matches), as
// a single input's would stop the run: the input is not judged.
func (o *lintOptions) fileSettings(i int, ss *session) (settings, []string, error) {
	st := settings{ss.contract, ss.schemas, o.Schema, ss.checks}
	if i >= len(o.ownRuns) || o.ownRuns[i] == nil {
		return st, nil, nil
	}
	run, name := o.ownRuns[i], o.Files[i]
	var notes []string
	took := func(flag, v string) {
		notes = append(notes, fmt.Sprintf("%s: judged with --%s %s, as its recorded run was", name, flag, quoteEmpty(v)))
	}
	unset := func(flag string) bool { return o.changed == nil || !o.changed(flag) }
	for _, f := range []struct{ flag, v, here string }{{"contract", run.Contract, o.Contract}, {"schema", run.Schema, o.Schema}} {
		if f.v == "" && unset(f.flag) {
			// Not recorded: lint's own is used (see adoptRun).
			notes = append(notes, fmt.Sprintf("%s: its run line records no --%s: judged with --%s %s", name, f.flag, f.flag, f.here))
		}
	}
	// A contract or schema file the run line names is read where lint
	// runs (a path relative to lint's directory): judged otherwise, the
	// input's verdicts would not be the recorded run's, and the gate
	// could differ (review rev47), so one that cannot be read leaves the
	// input unjudged, an input problem.
	if v := run.Contract; v != "" && v != o.Contract && unset("contract") {
		if c, err := envelope.LoadContract(v); err != nil {
			return st, notes, fmt.Errorf("%s: its run line's --contract %s: %w (the file is not judged; pass --contract to judge it with another)", name, v, err)
		} else {
			st.contract = c
			took("contract", v)
		}
	}
	if v := run.Schema; v != "" && v != o.Schema && unset("schema") {
		if sv, err := (&reportOptions{Schema: v}).validator(); err != nil {
			return st, notes, fmt.Errorf("%s: its run line's %w (the file is not judged; pass --schema to judge it with another)", name, err)
		} else {
			st.schemas, st.schema = sv, v
			took("schema", v)
		}
	}
	if v := run.Checks; v != o.Checks && unset("checks") {
		list, err := checks.Select(v)
		if err != nil {
			return st, notes, fmt.Errorf("%s: --checks: %w (the file is not judged)", name, err)
		}
		st.checks = list
		took("checks", v)
	}
	return st, notes, nil
}

func newLintCmd(s *streams) *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint [flags] FILE...",
		Short: "Judge recorded traffic: a transcript, one exchange per JSON line (- reads stdin)",
		Long: `lint reads transcripts (JSON Lines, one exchange per line; the format is
described in the README) and judges every reply with the same checks a live
run uses. A malformed line is reported with its file and line number and the
rest is still judged; the report is always written.

` + lintExitHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files, o.changed = args, cmd.Flags().Changed
			return lintRun(s, o)
		},
	}
	addReportFlags(cmd, &o.reportOptions)
	// Judging is CPU work: one worker per CPU the runtime may use.
	cmd.Flags().IntVar(&o.Parallel, "parallel", runtime.GOMAXPROCS(0), "exchanges judged at once (reports keep line order either way)")
	return cmd
}

func lintRun(s *streams, o *lintOptions) error {
	if err := namedTwice(o.Files); err != nil {
		return err
	}
	ins, err := openInputs(s, o.Files)
	defer func() {
		for _, in := range ins {
			in.close()
		}
	}()
	if err != nil {
		return err
	}
	// The runtime read the process's own environment: that is the one to ask.
	defer tuneGC(os.Getenv)()
	// A report to a file or a pipe is written in blocks: a write per
	// exchange cost lint a sixth of its time in system calls. A terminal
	// still gets each exchange as it is judged.
	var flush func() error
	if !s.OutTTY {
		bw := bufio.NewWriterSize(s.Out, 64<<10)
		buffered := *s
		buffered.Out, s, flush = bw, &buffered, bw.Flush
		defer bw.Flush() // a run that stops early still writes what it reported
	}
	adopted := o.adoptRun(ins)
	for _, f := range o.Files {
		o.reads = append(o.reads, flagPath{"transcript", f})
	}
	ss, err := o.open(s, report.Meta{Target: "lint " + strings.Join(o.Files, " "), Protocol: "per exchange (declared or inferred from the request)"})
	if err != nil {
		return err
	}
	for _, n := range adopted {
		ss.note(n)
	}
	if flush != nil {
		// Closing the reports writes the last block, and its error.
		ss.closers = append(ss.closers, flush)
	}
	// From here a signal stops the reading, not the process: what was
	// read is judged and every report is written whole, marked
	// interrupted (exit 4), as check's are.
	ctx, release := s.Interrupts(context.Background())
	defer release()
	// A transcript lists the same tools again and again: each schema is
	// compiled once.
	var tools schema.ToolCache
	// The rules of the corpus's fixtures, by ID, that a record names:
	// the rules a finding that names none breaks, as check links them.
	cites := corpusCitations()
	var inputErrs, unreported, unjudged, reported, records int
	var unjudgedWhy, abortedWhy, interruptedWhy string
	wd, _ := os.Getwd() // ("" if unknown: names are then only cleaned)
	keys := inputKeys(o.Files, wd)
	if len(o.Files) > 1 {
		if n := ss.base.Rename(oldKeys(o.Files, keys, wd)); n > 0 {
			ss.note(fmt.Sprintf("baseline: %d entr%s name an input by its path, as lint did before inputs were keyed by base name: read under its key now (%s); --write-baseline writes the new form", n, plural(n), strings.Join(keys, ", ")))
		}
	}
	for i, name := range o.Files {
		if ctx.Err() != nil {
			break // (the inputs after are not read: the summary says so)
		}
		own, notes, err := o.fileSettings(i, ss)
		for _, n := range notes {
			ss.note(n)
		}
		if err != nil {
			// Judged with other settings than its run line's, its
			// verdicts would not be the recorded run's.
			inputErrs++
			ss.inputProblem(err.Error())
			continue
		}
		if err := ins[i].err; err != nil {
			inputErrs++
			ss.inputProblem(err.Error())
			continue
		}
		prefix := ""
		if len(o.Files) > 1 {
			prefix = keys[i] + ":"
		}
		tr := transcript.NewReader(name, stoppable(ctx, ins[i].r, ins[i].waits))
		// A relay's recording carries its traffic: the client's messages
		// are judged against the session it builds, as the relay did.
		client := newClientJudge(own.schema, own.checks)
		opts := lint.Options{Workers: o.Parallel, Prefix: prefix, Checks: own.checks,
			Shared: checks.Input{Contract: own.contract, Schemas: own.schemas, ToolCache: &tools}}
		// One result, filled afresh for each record: writers keep nothing
		// of it past Exchange (see report.Writer), and a record's own
		// would be an allocation per exchange.
		var res report.Result
		err = lint.Judge(tr, opts, func(it *lint.Item) error {
			rec := &it.Record
			if it.Err == nil {
				records++
			}
			switch {
			case it.Err != nil && ctx.Err() != nil:
				// The read the signal stopped (a line cut short by it):
				// not the input's fault.
			case it.Err != nil:
				inputErrs++
				if le, ok := lineError(it.Err); ok {
					ss.inputProblem(le.Error())
				} else {
					// (A directory, an input that failed mid-read.)
					ss.inputProblem(fmt.Sprintf("%s: %v", name, it.Err))
				}
			case rec.Traffic != nil:
				if cvs := client.take(rec.Traffic, rec.Facts); cvs != nil {
					res = report.Result{Fixture: prefix + rec.Fixture, File: name, Line: rec.Line, Verdicts: cvs}
					return ss.exchange(&res)
				}
			case rec.Unreported:
				unreported++ // judged, not reported, as the run did
			case rec.Unjudged != "":
				// Not judged, as the run did not judge it.
				if unjudged++; unjudgedWhy == "" {
					unjudgedWhy = rec.Unjudged
				}
			default:
				reported++
				res = report.Result{Fixture: prefix + rec.Fixture, File: name, Line: rec.Line, Exchange: &rec.Exchange, Expect: it.Expect, Verdicts: it.Verdicts,
					Cited: report.FixtureRules(cites, rec.Fixture)}
				return ss.exchange(&res)
			}
			return nil
		})
		ins[i].close()
		ins[i].close = func() {}
		if err != nil {
			return err
		}
		if why := tr.Aborted(); why != "" && tr.Interrupted() {
			interruptedWhy = prefix + why
		} else if why != "" {
			abortedWhy = prefix + why
		}
	}
	if ss.markInterrupted(ctx, "no input was read after it, and the reports hold what was read before") {
		if unreported > 0 {
			ss.note(fmt.Sprintf("%d exchange(s) the recorded run judged but did not report were judged but are not reported", unreported))
		}
		if inputErrs > 0 {
			ss.invalid("%d input problem(s), %s", inputErrs, ss.problemsNamed())
		}
		return ss.finish()
	}
	if unreported > 0 {
		ss.note(fmt.Sprintf("%d exchange(s) the recorded run judged but did not report (what its --run selection needed: negotiation, tools/list, the end of the session) were judged but are not reported", unreported))
	}
	switch {
	case inputErrs > 0:
		ss.invalid("%d input problem(s), %s; the rest was judged", inputErrs, ss.problemsNamed())
	case records == 0:
		// An empty recording (a run that wrote nothing, a pipe that
		// carried nothing) must not pass a gate.
		// Named: with several inputs the reader must know which.
		names := strings.Join(o.Files, ", ")
		if len(o.Files) == 1 {
			ss.invalid("%s: the input holds no exchange to judge", names)
		} else {
			ss.invalid("none of the inputs holds an exchange to judge (%s)", names)
		}
	}
	switch {
	case abortedWhy != "":
		// The recorded run stopped when its target could no longer be
		// driven: lint says so as check did, and exits as check did.
		ss.sum.Aborted = "the recorded run was aborted: " + abortedWhy
	case unjudged > 0 && reported == 0 && inputErrs == 0:
		// The recorded run could not be driven, and judged nothing.
		ss.sum.Aborted = fmt.Sprintf("the recorded run judged none of its %d exchange(s): %s", unjudged, unjudgedWhy)
	}
	if ss.sum.Aborted != "" {
		if err := ss.finish(); err != nil && !errors.Is(err, errFindings) {
			return err
		}
		return &targetError{errors.New(ss.sum.Aborted)}
	}
	if unjudged > 0 {
		ss.note(fmt.Sprintf("%d exchange(s) the recorded run did not judge (%s) are not judged", unjudged, unjudgedWhy))
	}
	if interruptedWhy != "" {
		// The recorded run was stopped before it judged everything: lint
		// ends as it did (exit 4), and writes no baseline.
		ss.sum.Interrupted = "the recorded run was interrupted: " + interruptedWhy
	}
	if ss.writeBaseline != "" && (inputErrs > 0 || records == 0) {
		// A run that did not judge every input must not write a
		// baseline: what it did not read would be left out, with the
		// reasons written by hand, and fail the next run. Written back
		// over the one it read, the baseline would lose them for good.
		if inputErrs > 0 {
			ss.note(fmt.Sprintf("--write-baseline: not written, %d input problem(s): the run did not judge everything", inputErrs))
		} else {
			ss.note("--write-baseline: not written, the run judged nothing")
		}
		ss.writeBaseline = ""
	}
	return ss.finish()
}

// lineError is the bad line err reports, if it is one. The target of
// errors.As escapes: asked only of an error, it costs the records that
// read well no allocation.
func lineError(err error) (*transcript.LineError, bool) {
	var le *transcript.LineError
	return le, errors.As(err, &le)
}

// Collector settings for lint, used unless GOGC or GOMEMLIMIT is set.
// Judging makes many short-lived objects around a live heap of a few MB,
// which the default collector (GOGC=100) chases every few MB allocated:
// on recorded traffic that is a third of the run. GOGC=300 runs it a
// third as often. The soft limit keeps a transcript of very large lines
// from growing to four times their live heap; it is four times the
// bytes of records lint holds at once, as a record in memory costs a
// few times its bytes and a limit under the live heap would run the
// collector without pause.
const (
	lintGCPercent   = 300
	lintMemoryLimit = 4 * lint.DefaultBudget
)

// tuneGC applies the collector settings for lint and returns the
// function that restores the ones before: the process may run other
// commands after (tests do).
func tuneGC(getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	percent := debug.SetGCPercent(lintGCPercent)
	limit := debug.SetMemoryLimit(lintMemoryLimit)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

// adoptRun takes the settings the recordings' run lines give (contract,
// schema, checks) for the flags the user left unset, so that lint judges
// as the recorded run did; only when every input has one and they agree
// (a recording without one was judged with the defaults, or elsewhere).
// It returns notes saying what it took, or why it did not. The run lines
// are those openInputs read, on the streams the judge reads after.
func (o *lintOptions) adoptRun(ins []lintInput) []string {
	// runs are every input's, in order (ownRuns is indexed so); opened
	// those of the inputs that could be read: one that cannot is an
	// input problem of its own, not an input without a run line.
	var runs, opened []*transcript.Run
	for _, in := range ins {
		runs = append(runs, in.run)
		if in.read {
			opened = append(opened, in.run)
		}
	}
	recorded := slices.IndexFunc(opened, func(r *transcript.Run) bool { return r != nil })
	if recorded < 0 {
		// Recorded before run lines, written by hand or by another tool:
		// nothing says how it was judged, and the reader should know
		// which settings these verdicts are under.
		checks := "all checks"
		if o.Checks != "" {
			checks = "--checks " + o.Checks
		}
		return []string{fmt.Sprintf("the input records no run settings (no run line): judged with --contract %s, --schema %s and %s", o.Contract, o.Schema, checks)}
	}
	if slices.Contains(opened, nil) || slices.ContainsFunc(opened, func(r *transcript.Run) bool { return *r != *opened[0] }) {
		o.ownRuns = runs
		return []string{"the inputs do not all record the same run settings (a run line of --contract, --schema, --checks): each input with one is judged with its own, for the flags you left unset; the others with lint's own flags"}
	}
	run := *opened[0]
	var notes []string
	unreadable := false
	keep := [3]string{o.Contract, o.Schema, o.Checks}
	take := func(flag string, dst *string, v string, valid func(string) bool, builtin ...string) {
		switch {
		case o.changed != nil && o.changed(flag), v == *dst:
		case v == "" && len(builtin) > 0:
			// Not recorded (a contract or schema is always some value;
			// only --checks "" means all): lint's own is used, and the
			// note names it, not the empty value.
			notes = append(notes, fmt.Sprintf("the recording's run line records no --%s: judged with --%s %s", flag, flag, *dst))
		case !slices.Contains(builtin, v) && !valid(v):
			// A file that cannot be read here, or is no contract or
			// schema, or a selection of no check: each input is judged
			// with its own run line (fileSettings), which names the
			// problem with the input and leaves it unjudged, the report
			// still written (review rev78: it stopped the run as a
			// usage error of a flag the user never gave).
			unreadable = true
		default:
			*dst = v
			notes = append(notes, fmt.Sprintf("judged with --%s %s, as the recorded run was", flag, quoteEmpty(v)))
		}
	}
	take("contract", &o.Contract, run.Contract, func(v string) bool {
		_, err := envelope.LoadContract(v)
		return err == nil
	}, "strict", "spec")
	take("schema", &o.Schema, run.Schema, func(v string) bool {
		_, err := (&reportOptions{Schema: v}).validator()
		return err == nil
	}, "builtin", "none", "off")
	take("checks", &o.Checks, run.Checks, func(v string) bool {
		_, err := checks.Select(v)
		return err == nil
	})
	if unreadable {
		o.Contract, o.Schema, o.Checks = keep[0], keep[1], keep[2]
		o.ownRuns = runs
		return nil
	}
	return notes
}

// peekRun reads the run line an input starts with, if it does (blank
// lines before it are read past, as the reader does), leaving every
// byte for the judge. It waits for no more than the first line that is
// not blank (a relay's output may come slowly through a pipe). The
// error is the input's, when nothing of it could be read (a directory).
func peekRun(br *bufio.Reader) (*transcript.Run, error) {
	for n := 1; ; n++ {
		b, err := br.Peek(max(n, br.Buffered())) // waits for one byte more at most
		if i := firstLineEnd(b); i >= 0 {
			b = b[:i+1]
		} else if err == nil && len(b) < br.Size() {
			n = len(b)
			continue
		} else if len(b) == 0 && err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		run, _ := transcript.ReadRun(bytes.NewReader(b))
		return run, nil
	}
}

// quoteEmpty shows an empty flag value as "" (all checks).
func quoteEmpty(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

// firstLineEnd is the index of the "\n" that ends the first line of b
// that is not blank, -1 when b holds no such line whole.
func firstLineEnd(b []byte) int {
	for at := 0; ; {
		i := bytes.IndexByte(b[at:], '\n')
		if i < 0 {
			return -1
		}
		if len(bytes.TrimSpace(b[at:at+i])) > 0 {
			return at + i
		}
		at += i + 1
	}
}

// corpusCitations are the rules the embedded corpus's fixtures and the
// runner's probes cite, by ID (nil if the corpus cannot be read, which
// its own tests rule out).
func corpusCitations() map[string][]string {
	fx, err := fixtures.Embedded()
	if err != nil {
		return nil
	}
	return runner.Citations(fx)
}
