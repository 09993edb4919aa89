package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/baseline"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/report"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/schema"
)

// reportOptions are the flags every judging command shares.
type reportOptions struct {
	Format        string
	Output        string
	Reports       []string // FORMAT[=PATH], each one more report of the same run
	Contract      string
	FailOn        string
	Color         string
	Verbose       bool
	Schema        string
	Baseline      string
	WriteBaseline string
	Checks        string
	// The files the command reads (lint's transcripts) and writes
	// besides the reports (--record), by flag: no report may be written
	// over one (lint FILE -o FILE once truncated the transcript before a
	// line of it was read).
	reads, writes []flagPath
	mainFlag      string // the flag of Output, if not -o
	// files, when set, holds the files the command opened already for
	// the run (--record, --log), not yet emptied: open adds the reports
	// and empties them all once all are open, or closes them all (and
	// removes the ones made) when it fails.
	files *outFiles
}

// A flagPath is a file a flag names.
type flagPath struct{ flag, path string }

func addReportFlags(cmd *cobra.Command, o *reportOptions) {
	addEnum(cmd, &o.Format, "format", "human", "the main report's format (stdout, or -o FILE)", report.Formats()...)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "write the main report to `FILE` instead of stdout")
	cmd.Flags().StringArrayVar(&o.Reports, "report", nil, "also write a report of the same run, `FORMAT=PATH` (repeatable): junit=r.xml, json=r.json, html=r.html, sarif=r.sarif; github alone writes annotations to stdout and the step summary to $GITHUB_STEP_SUMMARY")
	cmd.Flags().StringVar(&o.Contract, "contract", "strict", "the error-envelope contract: strict, spec, or a contract `FILE` (JSON)")
	addEnum(cmd, &o.FailOn, "fail-on", "fail", "what fails the gate (exit 1): fail = any fail or error; warn = warnings too", "fail", "warn")
	addEnum(cmd, &o.Color, "color", "auto", "color the human report", "auto", "always", "never")
	cmd.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "human report: list passes and skips, and count skips")
	cmd.Flags().StringVar(&o.Schema, "schema", "builtin", "validate replies against the checker's protocol schemas (builtin), not at all (none; off is the same), or a protocol schema `FILE` such as the official schema.json of a version")
	cmd.Flags().StringVar(&o.Baseline, "baseline", "", "known failures in `FILE` (FIXTURE CHECK REASON a line): reported as known, they do not fail the gate; an entry that no longer fails does (stale)")
	cmd.Flags().StringVar(&o.Checks, "checks", "", "judge only these checks: a comma `LIST` of check IDs, globs (ERR4*), areas (echo) and all, each with - to leave it out (all,-ERR2002; -echo)")
	cmd.Flags().StringVar(&o.WriteBaseline, "write-baseline", "", "write this run's failures to `FILE` as a baseline, sorted (reasons of --baseline entries are kept)")
}

// validator resolves --schema.
func (o *reportOptions) validator() (checks.SchemaValidator, error) {
	switch o.Schema {
	case "builtin", "":
		return checks.ProtocolSchemas(schema.NewRegistry()), nil
	case "none", "off":
		return nil, nil
	}
	u, err := schema.LoadUserSchema(o.Schema, nil)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--schema: %w", err)}
	}
	return checks.UserSchema(u), nil
}

// An output is one report of the run and where it goes.
type output struct {
	format, path string // path "" is stdout
}

// outputs resolves --format/-o and --report into the run's reports: the
// main one first.
func (o *reportOptions) outputs() ([]output, error) {
	outs := []output{{o.Format, o.Output}}
	for _, spec := range o.Reports {
		out, err := parseReportSpec(spec)
		if err != nil {
			return nil, err
		}
		outs = append(outs, out)
	}
	seen := map[string]bool{}
	var writes []flagPath
	for i, out := range outs {
		if out.path == "" {
			key := "stdout " + out.format
			if seen[key] {
				return nil, usagef("--report: %s is written twice", out.format)
			}
			seen[key] = true
			continue
		}
		flag := "--report"
		if i == 0 {
			flag = cmp.Or(o.mainFlag, "-o")
		}
		writes = append(writes, flagPath{flag, out.path})
	}
	if o.WriteBaseline != "" {
		writes = append(writes, flagPath{"--write-baseline", o.WriteBaseline})
	}
	writes = append(writes, o.writes...)
	reads := append(slices.Clone(o.reads), fileReads(flagPath{"--contract", o.Contract}, flagPath{"--schema", o.Schema}, flagPath{"--baseline", o.Baseline})...)
	if err := checkWrites(writes, reads); err != nil {
		return nil, err
	}
	return outs, nil
}

// fileReads are the flags among fs that name a file to read: not
// empty, nor a keyword (--contract strict, --schema builtin).
func fileReads(fs ...flagPath) []flagPath {
	var reads []flagPath
	for _, r := range fs {
		switch r.path {
		case "", "strict", "spec", "builtin", "none", "off":
		default:
			reads = append(reads, r)
		}
	}
	return reads
}

// checkWrites refuses a file written twice (two reports, a report and
// --record, --record and --log…), and a file written that the run also
// reads (a transcript, --contract, --schema): writing it would destroy it.
func checkWrites(writes, reads []flagPath) error {
	// --baseline and --write-baseline may name one file: the baseline is
	// read before the run and rewritten after it.
	for i, w := range writes {
		for _, v := range writes[:i] {
			if sameFile(v.path, w.path) {
				return usagef("%s is written twice (%s %s, %s %s)", w.path, v.flag, v.path, w.flag, w.path)
			}
		}
		for _, r := range reads {
			if r.path == "-" || w.flag == "--write-baseline" && r.flag == "--baseline" {
				continue
			}
			if sameFile(r.path, w.path) {
				return usagef("%s %s is also read (%s %s): writing it would destroy it", w.flag, w.path, r.flag, r.path)
			}
		}
	}
	return nil
}

// parseReportSpec reads a --report FORMAT=PATH (github alone may have
// no path: it writes to stdout beside the main report). check and lint
// take it so, and proxy and wrap too (see relayReport).
func parseReportSpec(spec string) (output, error) {
	format, path, hasPath := strings.Cut(spec, "=")
	switch {
	case !slices.Contains(report.Formats(), format):
		return output{}, usagef("--report %q: format %q is not one of %s", spec, format, strings.Join(report.Formats(), ", "))
	case hasPath && path == "":
		return output{}, usagef("--report %q: the path is empty", spec)
	case !hasPath && format != "github":
		return output{}, usagef("--report %q: want %s=PATH (only github writes to stdout beside the main report)", spec, format)
	}
	return output{format, path}, nil
}

// sameFile reports whether two paths name one file: the same path once
// resolved (see resolved), or, where both exist, the same file by its
// device and inode (hard links).
func sameFile(a, b string) bool {
	if a == b || resolved(a) == resolved(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// maxLinks bounds the links resolved followed in one path, as the
// kernel bounds them (Linux: 40): a loop of links ends.
const maxLinks = 40

// resolved is the file a path will name when it is written: absolute,
// every link followed. A file not made yet has no inode to compare, so
// its path is resolved instead: a dangling link's target (os.Create
// writes through it, so a link to a file not there yet once let two
// reports interleave in one file) and the links of its directory.
func resolved(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	for range maxLinks {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		fi, err := os.Lstat(p)
		if err != nil {
			// Not there: its directory may still be reached through links.
			if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
				return filepath.Join(d, filepath.Base(p))
			}
			return p
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p
		}
		target, err := os.Readlink(p)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return p
}

// session is one judged run: the contract, the report writers, the
// baseline and the running summary.
type session struct {
	contract *envelope.Contract
	schemas  checks.SchemaValidator
	checks   []*checks.Check // --checks
	outs     []*reportOut    // the reports, the main one first
	sum      report.Summary
	failWarn bool
	closers  []func() error
	now      func() time.Time
	last     time.Time // the end of the previous exchange, for per-fixture times

	base          *baseline.Baseline
	baseProblems  int
	writeBaseline string
	failures      []baseline.Entry // this run's failures, for --write-baseline
	stderr        io.Writer
	// problems counts the input problems (see inputProblem).
	problems int
	// unsent counts the fixtures the run's deadline left unsent.
	unsent int

	// Between prepare and start: the files opened and not yet emptied,
	// and what the reports' beginning says.
	files        *outFiles
	baselineMeta string
	verbose      bool
}

// open checks the flags, opens the reports and starts them: a session
// ready for the run's exchanges. It is prepare, then start.
func (o *reportOptions) open(s *streams, meta report.Meta) (*session, error) {
	ss, err := o.prepare(s)
	if err != nil {
		return nil, err
	}
	if err := ss.start(s, meta); err != nil {
		return nil, err
	}
	return ss, nil
}

// prepare checks the flags and opens the reports, emptying none: check
// does it before it starts the target, so that a bad flag or an
// unopenable report starts no server. start empties and begins them;
// abandon, when the run does not go on, leaves every file as it was.
func (o *reportOptions) prepare(s *streams) (_ *session, err error) {
	// A report that cannot be opened, or a flag found wrong, must destroy
	// no file: the reports are opened in one batch with the run's other
	// files (o.files: --record, --log) and emptied only once all are open
	// (see outFiles); on failure they are closed, the ones made removed.
	files := o.files
	if files == nil {
		files = &outFiles{}
	}
	defer func() {
		if err != nil {
			files.abandon()
		}
	}()
	c, err := envelope.LoadContract(o.Contract)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--contract: %w", err)}
	}
	sv, err := o.validator()
	if err != nil {
		return nil, err
	}
	list, err := checks.Select(o.Checks)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--checks: %w", err)}
	}
	outs, err := o.outputs()
	if err != nil {
		return nil, err
	}
	ss := &session{contract: c, schemas: sv, checks: list, failWarn: o.FailOn == "warn", now: s.Now, writeBaseline: o.WriteBaseline, stderr: s.ErrOut,
		files: files, verbose: o.Verbose}
	defer func() {
		if err != nil {
			ss.closeAll()
		}
	}()
	if o.Baseline != "" {
		b, problems, err := baseline.Load(o.Baseline, func(id string) bool { return checks.Lookup(id) != nil })
		if err != nil {
			return nil, &usageError{fmt.Errorf("--baseline: %w", err)}
		}
		ss.base = b
		// A bad line is named and left out; the run and its report go on.
		for _, p := range problems {
			ss.inputProblem("--baseline: " + p.Error())
		}
		// (Those past the ones Parse names are counted with the rest.)
		ss.problems += b.BadLines - len(problems)
		ss.baseProblems = b.BadLines
		ss.baselineMeta = fmt.Sprintf("%s (%d entries)", o.Baseline, b.Len())
	}
	// The reports name a transcript relative to where the command runs
	// (SARIF's URIs and fingerprints): read here, once, for the report
	// package reads no process state. On error paths are only cleaned.
	wd, _ := os.Getwd()
	stepSummary := false
	for i, out := range outs {
		var w io.Writer = struct{ io.Writer }{s.Out} // no Seek: stdout may be a file opened for appending
		color := s.colorOn(o.Color)
		if out.path != "" {
			f, err := files.open(out.path)
			if err != nil {
				return nil, &usageError{fmt.Errorf("report %s: %w", out.format, err)}
			}
			ss.closers = append(ss.closers, f.Close)
			w, color = f, o.Color == "always"
		}
		ro := report.Options{Color: color, Dir: wd}
		if out.path == "" && out.format == "junit" {
			ro.Spool = ss.spool(s)
		}
		if out.format == "github" && !stepSummary {
			// GitHub names the summary file per step; it is appended to.
			if p := s.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
				f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				if err != nil {
					return nil, fmt.Errorf("opening the step summary $GITHUB_STEP_SUMMARY: %w", err)
				}
				ss.closers = append(ss.closers, f.Close)
				ro.StepSummary, stepSummary = f, true
			}
		}
		w2, err := report.New(out.format, w, ro)
		if err != nil {
			return nil, &usageError{err}
		}
		ss.outs = append(ss.outs, &reportOut{name: o.outputName(i, out), w: w2})
	}
	return ss, nil
}

// start empties the run's files (the reports, and those the command
// opened with them) and writes the reports' beginning: the run goes on.
func (ss *session) start(s *streams, meta report.Meta) error {
	if err := ss.files.commit(); err != nil {
		ss.abandon()
		return &usageError{err}
	}
	ss.files = nil
	if ss.baselineMeta != "" {
		meta.Baseline = ss.baselineMeta
	}
	meta.Tool, meta.Version, meta.Contract = "wymcp-check", checkerVersion(), ss.contract.Name
	meta.Verbose, meta.FailOnWarn = ss.verbose, ss.failWarn
	if meta.Started.IsZero() {
		meta.Started = s.Now()
	}
	ss.last = s.Now()
	if err := ss.write(func(w report.Writer) error { return w.Begin(meta) }); err != nil {
		ss.closeAll()
		return err
	}
	return nil
}

// abandon closes a prepared session that will not start, and leaves
// its files as they were (the ones it made removed).
func (ss *session) abandon() {
	ss.closeAll()
	ss.files.abandon()
	ss.files = nil
}

// exchange reports one judged exchange: it is timed (unless it comes
// from a transcript, which has no times), matched against the baseline,
// counted and written.
func (ss *session) exchange(r *report.Result) error {
	if r.Line == 0 && !r.Timed {
		now := ss.now()
		r.Timed, r.Duration = true, now.Sub(ss.last)
		ss.last = now
	}
	gates := func(st checks.Status) bool { return report.Gates(st, ss.failWarn) }
	r.Known = ss.base.Match(r.Fixture, r.Verdicts, gates)
	ss.sum.Known += len(r.Known)
	for i := range r.Verdicts {
		v := &r.Verdicts[i] // not a copy of each: lint counts millions
		ss.sum.Add(*v)
		if v.Status == checks.StatusError && v.Reason == runner.DeadlinePassed {
			ss.unsent++
		}
		// A baseline lists accepted failures of the server: a
		// could-not-judge (a timeout, the checker's own limits) is none.
		if ss.writeBaseline != "" && gates(v.Status) && v.Status != checks.StatusError {
			ss.failures = append(ss.failures, baseline.Entry{Fixture: r.Fixture, Check: v.Check.ID, Reason: ss.reasonFor(r.Fixture, *v), Warn: v.Status == checks.StatusWarn})
		}
	}
	return ss.write(func(w report.Writer) error { return w.Exchange(r) })
}

// A reportOut is one of the run's reports. One that fails to write (a full
// disk, a closed pipe) is named once and written no more, and the others
// go on: one failed --report once stopped the run and left every other
// report cut short, and check judged nothing.
type reportOut struct {
	name string // the flag that asked for it: --report junit=r.xml
	w    report.Writer
	err  error // the first write that failed
}

// outputName names output i of outputs() by the flag that asked for it.
func (o *reportOptions) outputName(i int, out output) string {
	switch {
	case i > 0 && out.path == "":
		return "--report " + out.format
	case i > 0:
		return "--report " + out.format + "=" + out.path
	case out.path == "":
		return "the " + out.format + " report on stdout"
	}
	return cmp.Or(o.mainFlag, "-o") + " " + out.path
}

// write calls f on each report not failed yet. A report that fails is
// left out from then on; the run stops only when none is left to write.
func (ss *session) write(f func(report.Writer) error) error {
	live := 0
	for _, o := range ss.outs {
		if o.err != nil {
			continue
		}
		if err := f(o.w); err != nil {
			o.err = err
			continue
		}
		live++
	}
	if live == 0 {
		return ss.outputsFailed()
	}
	return nil
}

// outputsFailed names each report that could not be written, and why.
func (ss *session) outputsFailed() error {
	var errs []error
	for _, o := range ss.outs {
		if o.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.name, o.err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("writing report: %w", errors.Join(errs...))
}

// reasonFor is the reason --write-baseline writes: the one the baseline
// already gives, else what failed, for a person to edit.
func (ss *session) reasonFor(fixture string, v checks.Verdict) string {
	if r, ok := ss.base.Reason(fixture, v.Check.ID); ok {
		return r
	}
	if len(v.Findings) > 0 {
		return v.Findings[0].Path + ": " + v.Findings[0].Message
	}
	return cmp.Or(v.Reason, v.Check.Title) // a fail without findings: none is made so
}

func (ss *session) note(n string) { ss.sum.Notes = append(ss.sum.Notes, n) }

// maxProblemsListed bounds the input problems a run names one by one,
// on stderr and in the reports' notes; the rest are counted. A
// transcript of a million bad lines once cost half a gigabyte, a million
// lines of stderr and a 105 MB report: the first ones say what is wrong,
// and the count says how much.
const maxProblemsListed = 100

// inputProblem names a problem of the run's input (a transcript's bad
// line, a baseline's): on stderr and in the notes, while fewer than
// maxProblemsListed were named; counted after.
func (ss *session) inputProblem(text string) {
	ss.problems++
	if ss.problems > maxProblemsListed {
		return
	}
	printLines(ss.stderr, text)
	ss.note(text)
	if ss.problems == maxProblemsListed {
		printLines(ss.stderr, fmt.Sprintf("the first %d input problems are named; any more are counted in the reports", maxProblemsListed))
	}
}

// problemsNamed says where the input problems are named.
func (ss *session) problemsNamed() string {
	if ss.problems > maxProblemsListed {
		return fmt.Sprintf("the first %d named in the notes", maxProblemsListed)
	}
	return "named in the notes"
}

// invalid says what of the user's input could not be used: the reports
// say so and the run exits 2 once they are written (see finish).
func (ss *session) invalid(format string, args ...any) {
	if ss.sum.Invalid != "" {
		ss.sum.Invalid += "; "
	}
	ss.sum.Invalid += fmt.Sprintf(format, args...)
}

// spool is a temporary file for a JUnit report written to stdout, which
// cannot be rewritten in place: its suites wait there for the totals,
// not in memory (a long transcript's report runs to gigabytes). It is
// removed when the reports close; nil (memory) where none can be made.
func (ss *session) spool(s *streams) io.ReadWriteSeeker {
	f, err := os.CreateTemp(s.Getenv("TMPDIR"), "wymcp-check-junit-*.xml")
	if err != nil {
		return nil // a nil interface: an *os.File that is nil would not be
	}
	ss.closers = append(ss.closers, func() error {
		return errors.Join(f.Close(), os.Remove(f.Name()))
	})
	return f
}

// negotiated records the protocol version the run settled on.
func (ss *session) negotiated(version, how string) {
	ss.sum.Protocol, ss.sum.Negotiation = version, how
	ss.note(fmt.Sprintf("protocol %s (%s)", version, how))
}

func (ss *session) closeAll() error {
	var errs []error
	for _, c := range ss.closers {
		errs = append(errs, c())
	}
	ss.closers = nil
	return errors.Join(errs...)
}

// finish settles the baseline, writes the summary and closes the reports.
// It returns errFindings when the gate fails, and a usage error after
// the report when the baseline file had bad lines.
func (ss *session) finish() error {
	if ss.unsent > 0 {
		ss.sum.Deadline = fmt.Sprintf("the run's deadline passed before %d fixture(s) were sent; they could not be judged", ss.unsent)
	}
	if ss.base != nil && ss.sum.Aborted == "" && ss.sum.Interrupted == "" {
		// (An incomplete run cannot tell a stale entry from one not reached.)
		for _, e := range ss.base.Stale() {
			ss.sum.Stale = append(ss.sum.Stale, report.Stale{Fixture: e.Fixture, Check: e.Check, Reason: e.Reason})
		}
		if un := ss.base.Unjudged(); len(un) > 0 {
			var names []string
			for _, e := range un {
				names = append(names, e.Fixture+" "+e.Check)
			}
			const show = 5
			more := ""
			if len(names) > show {
				more, names = fmt.Sprintf(" and %d more", len(names)-show), names[:show]
			}
			ss.note(fmt.Sprintf("baseline: %d entr%s not judged in this run (neither known nor stale): %s%s", len(un), plural(len(un)), strings.Join(names, ", "), more))
		}
	}
	if n := ss.problems - maxProblemsListed; n > 0 {
		ss.note(fmt.Sprintf("%d more input problem(s), not named: the first %d are, above", n, maxProblemsListed))
	}
	if ss.baseProblems > 0 {
		ss.invalid("--baseline: %d bad line(s) in %s; the rest was used", ss.baseProblems, ss.base.File)
	}
	var writeErr error
	switch {
	case ss.writeBaseline != "" && ss.sum.Aborted != "":
		// A run that judged nothing must not overwrite a baseline with an empty one.
		ss.note("--write-baseline: not written, the run judged nothing")
	case ss.writeBaseline != "" && ss.sum.Interrupted != "":
		ss.note("--write-baseline: not written, the run was interrupted before it judged everything")
	case ss.writeBaseline != "" && ss.sum.Deadline != "":
		// What it did not reach would be left out, and fail the next run.
		ss.note("--write-baseline: not written, the run's deadline passed before it judged everything")
	case ss.writeBaseline != "":
		// The --baseline's entries this run did not judge (a selection
		// of fixtures or checks), or whose check still found something
		// its gate let through (a warning), still hold: only a stale
		// entry goes (review rev43).
		es := append(slices.Clone(ss.failures), ss.base.Held()...)
		if writeErr = writeBaselineFile(ss.writeBaseline, es); writeErr == nil {
			ss.note(fmt.Sprintf("wrote %d failure(s) to the baseline %s", len(dedupe(es)), ss.writeBaseline))
		} else {
			ss.note("--write-baseline: " + writeErr.Error())
		}
	}
	// The reports still written say which could not be, as the exit
	// code does (a report that failed at its end cannot be named in the
	// others: they end together).
	for _, o := range ss.outs {
		if o.err != nil {
			ss.note(fmt.Sprintf("%s: not written whole: %v", o.name, o.err))
		}
	}
	ss.write(func(w report.Writer) error { return w.End(ss.sum) })
	err := ss.outputsFailed()
	if cerr := ss.closeAll(); err == nil && cerr != nil {
		err = fmt.Errorf("writing report: %w", cerr)
	}
	switch {
	case err != nil:
		return err
	case writeErr != nil:
		return fmt.Errorf("--write-baseline: %w", writeErr)
	// In the order the reports name the run (see report.Summary):
	// aborted (the caller exits 3), interrupted, input problems, findings.
	case ss.sum.Aborted != "":
		return errFindings
	case ss.sum.Interrupted != "":
		return errStopped
	case ss.sum.Invalid != "":
		// The reports are written; the input still needs fixing.
		return usagef("%s", ss.sum.Invalid)
	case ss.sum.Gate(ss.failWarn):
		return errFindings
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}

func dedupe(es []baseline.Entry) map[[2]string]bool {
	m := map[[2]string]bool{}
	for _, e := range es {
		m[[2]string{e.Fixture, e.Check}] = true
	}
	return m
}

func writeBaselineFile(path string, es []baseline.Entry) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := baseline.Write(f, es); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
