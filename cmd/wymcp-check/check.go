package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/refserver"
	"github.com/wymcp/wymcp-check/report"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/transcript"
	"github.com/wymcp/wymcp-check/transport"
)

// targetOptions are the flags of the commands that talk to a server.
type targetOptions struct {
	Headers   []string
	Timeout   time.Duration
	Start     time.Duration
	MaxBytes  int64
	Protocol  string
	Demo      bool
	DemoFault string
	DemoStdio bool
}

func addTargetFlags(cmd *cobra.Command, o *targetOptions) {
	cmd.Flags().StringArrayVarP(&o.Headers, "header", "H", nil, "add a header to every request, `'Name: value'` (repeatable; values are never printed)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 10*time.Second, "bound on each exchange")
	cmd.Flags().DurationVar(&o.Start, "start-timeout", transport.DefaultStart, "stdio: bound on a server's start, until it reads its first message; --timeout for that message counts from then")
	cmd.Flags().Int64Var(&o.MaxBytes, "max-bytes", 4<<20, "bound on the reply bytes read per exchange")
	addEnum(cmd, &o.Protocol, "protocol", "auto", "protocol version: probe, or use the one given", "auto", envelope.V20260728, envelope.V20251125, envelope.V20250618, envelope.V20250326)
	cmd.Flags().BoolVar(&o.Demo, "demo", false, "check the embedded reference server, in process (no target needed)")
	cmd.Flags().StringVar(&o.DemoFault, "demo-fault", "", "with --demo: inject a named fault into the reference server (see wymcp-check faults)")
	cmd.Flags().BoolVar(&o.DemoStdio, "demo-stdio", false, "with --demo: run the reference server as a child process over stdio")
}

// limits are the transport's bounds the flags give.
func (o *targetOptions) limits() transport.Limits {
	return transport.Limits{Timeout: o.Timeout, Start: o.Start, MaxBytes: o.MaxBytes}
}

type checkOptions struct {
	reportOptions
	targetOptions
	URL        string
	Command    []string
	FixtureDir string
	Run        []string
	Skip       []string
	demoNotes  []string // what --demo-fault set up
	CallTools  string
	Record     string
	Deadline   time.Duration
	Parallel   int
}

func newCheckCmd(s *streams) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [flags] (URL | --demo | -- COMMAND [ARG...])",
		Short: "Fire the fixture corpus at a live server and judge every reply",
		Long: `check negotiates the protocol version with a server (server/discover for
2026-07-28, else initialize), fires every fixture of the corpus at it, and
judges each reply. The target is a Streamable HTTP URL, or a command after
"--" that the checker starts and talks to over stdio (a server that dies is
reported against the fixture that killed it and restarted). --demo checks
the embedded reference server; --demo-fault shows what failures look like.

Every exchange is bounded (--timeout, --max-bytes) and so is the run
(--deadline): a hanging, flooding or dying server yields verdicts and a
complete report, never a hang.

` + exitHelp,
		Example: `  wymcp-check check --demo
  wymcp-check check --demo --demo-fault echo-request
  wymcp-check check http://127.0.0.1:3001/mcp -H "Authorization: Bearer $TOKEN"
  wymcp-check check --format junit -o report.xml -- node server.js --stdio`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				o.Command = args[dash:]
				args = args[:dash]
			}
			switch {
			case o.Demo && (len(args) > 0 || len(o.Command) > 0):
				return usagef("--demo takes no target")
			case o.Demo:
			case len(args) == 1 && len(o.Command) == 0:
				o.URL = args[0]
			case len(args) == 0 && len(o.Command) > 0:
			default:
				return usagef("want one target: a URL, --demo, or -- COMMAND [ARG...]")
			}
			if o.DemoFault != "" && !o.Demo {
				return usagef("--demo-fault needs --demo")
			}
			demoNeeds(o, cmd.Flags().Changed("protocol"), cmd.Flags().Changed("call-tools"))
			return checkRun(cmd.Context(), s, o)
		},
	}
	addReportFlags(cmd, &o.reportOptions)
	addTargetFlags(cmd, &o.targetOptions)
	cmd.Flags().StringVar(&o.FixtureDir, "fixtures", "", "also run the fixtures of `DIR` (*.txtar; see README)")
	cmd.Flags().StringArrayVar(&o.Run, "run", nil, "run only the fixtures whose ID matches the glob `PATTERN` (e.g. 'headers/*'; repeatable); the setup they need runs too, and is reported only if selected")
	cmd.Flags().StringArrayVar(&o.Skip, "skip", nil, "leave out the fixtures whose ID matches the glob `PATTERN` (repeatable)")
	addEnum(cmd, &o.CallTools, "call-tools", "", "also call tools with valid arguments (it makes the server act): readonly = tools with readOnlyHint, all = every tool", "", runner.CallReadOnly, runner.CallAll)
	cmd.Flags().Lookup("call-tools").NoOptDefVal = runner.CallReadOnly
	cmd.Flags().StringVar(&o.Record, "record", "", "write every exchange to `FILE` as a transcript (lint reads it)")
	addDeadlineFlag(cmd, &o.Deadline)
	cmd.Flags().IntVar(&o.Parallel, "parallel", defaultParallel, "exchanges in flight at once (1 sends the fixtures one after another; reports keep corpus order either way)")
	return cmd
}

// addDeadlineFlag is --deadline, the bound on a whole run's wall time,
// as check and send take it (flagBounds refuses zero or less).
func addDeadlineFlag(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().DurationVar(d, "deadline", 5*time.Minute, "bound on the whole run")
}

// parseHeaders reads --header values; a malformed one names itself but
// never its value, which may be a secret.
func parseHeaders(hs []string) (http.Header, error) {
	h := http.Header{}
	for i, kv := range hs {
		k, v, ok := strings.Cut(kv, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usagef("--header #%d: want 'Name: value'", i+1)
		}
		v = strings.TrimSpace(v)
		if err := fixtures.CheckHeader(k, v); err != nil {
			// Refused here, not by the transport at the first request,
			// which blamed the target (exit 3).
			return nil, usagef("--header #%d: %w", i+1, err)
		}
		h.Add(k, v)
	}
	return h, nil
}

// loadFixtures returns the fixtures to run and the problems of the
// user's fixture files: each bad file is named (file, line, cause) and
// left out, and the run goes on with the rest.
func loadFixtures(o *checkOptions) ([]*fixtures.Fixture, []string, error) {
	all, err := fixtures.Embedded()
	if err != nil {
		return nil, nil, fmt.Errorf("embedded fixtures: %w", err)
	}
	var problems []string
	if o.FixtureDir != "" {
		mine, err := fixtures.LoadDir(o.FixtureDir)
		if err != nil {
			if fi, statErr := os.Stat(o.FixtureDir); statErr != nil {
				return nil, nil, usagef("--fixtures: %v", statErr)
			} else if !fi.IsDir() {
				return nil, nil, usagef("--fixtures %s: not a directory (want the directory that holds the *.txtar files)", o.FixtureDir)
			}
			problems = append(problems, strings.Split(err.Error(), "\n")...)
		}
		seen := map[string]bool{}
		for _, f := range all {
			seen[f.ID] = true
		}
		for _, f := range mine {
			if why := takenID(f.ID, seen); why != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: id %q %s; left out", f.File, f.IDLine, f.ID, why))
				continue
			}
			seen[f.ID] = true // (a later file's fixture may not nest under it either)
			all = append(all, f)
		}
	}
	if len(o.Run) > 0 || len(o.Skip) > 0 {
		if all, err = fixtures.Select(all, o.Run, o.Skip); err != nil {
			// A selection of the user's fixtures may be empty because
			// they did not load: say why first.
			var errs []error
			for _, p := range problems {
				errs = append(errs, errors.New("--fixtures: "+p))
			}
			return nil, nil, &usageError{errors.Join(append(errs, err)...)}
		}
	}
	return all, problems, nil
}

// takenID says why a user's fixture may not have id, "" if it may: an
// embedded fixture (or a user's loaded before) has it, or nests with it,
// or the run reports an exchange of its own under it. Either way two exchanges would share one name in the report,
// a --run selection and a baseline.
func takenID(id string, embedded map[string]bool) string {
	if embedded[id] {
		return "is also an embedded fixture"
	}
	// The run names a fixture's variants and staged exchanges ID/… (a
	// tool argument's violation, a stage's own initialize), and a report,
	// a --run selection and a baseline read ID/… as fixture ID's: an ID
	// under another fixture's, or over it, shares its rows.
	for _, e := range slices.Sorted(maps.Keys(embedded)) {
		switch {
		case strings.HasPrefix(id, e+"/"):
			return fmt.Sprintf("lies under fixture %q, whose variants and stages the run names %s/…", e, e)
		case strings.HasPrefix(e, id+"/"):
			return fmt.Sprintf("would take in fixture %q as one of its variants (%s/…)", e, id)
		}
	}
	for _, p := range runner.Reserved {
		lit, _ := strings.CutSuffix(p, "*")
		switch {
		case fixtures.Matches(p, id):
			return fmt.Sprintf("is a name the run gives its own exchanges (%s)", p)
		case strings.HasPrefix(lit, id+"/"):
			// A report and a --run selection take ID/… for a variant of
			// fixture ID: the run's own exchanges would be its.
			return fmt.Sprintf("would have the run's own exchanges (%s) for its variants", p)
		}
	}
	if envelope.IsLiveness(id) {
		// Coverage and send take any name so ended for the probe the run
		// sends after an exchange that got no reply.
		return "ends in /liveness, the name of the run's liveness probe after a fixture"
	}
	return ""
}

// sink feeds the runner's verdicts into the report and the transcript.
// The transcript gets what the judge knew of each exchange (the run's
// facts, the fixture's override), so lint of it gives the same verdicts.
type sink struct {
	ss     *session
	record *os.File
	recErr error
	// selected, when set, names the fixtures a --run selection chose:
	// the run's own exchanges (negotiation, tools/list, the end of the
	// session) are then recorded, and counted in a note, but not
	// reported, so a selection never fails on what it did not ask for.
	// A --skip alone leaves out only what it names (setup/* included):
	// the rest, the run's own exchanges among it, is what was asked for.
	selected []*fixtures.Fixture
	skip     []string
	hidden   int
	// secrets are the --header values: judged as they came (an echo of
	// one fails ERR4001), then taken out of everything recorded or
	// reported, their markers standing in their place.
	secrets []envelope.Secret
	cov     *report.CoverageTracker
	// transport is the target's, for the record of a fixture not sent.
	transport string
}

// notSent is why the run could not send j's fixture: the reason of its
// one error verdict, when it was judged without an exchange.
func notSent(j runner.Judged) string {
	if j.Exchange != nil {
		return ""
	}
	for _, v := range j.Verdicts {
		if v.Status == checks.StatusError {
			return v.Reason
		}
	}
	return ""
}

func (k *sink) Facts(f *expect.Facts) {
	if k.record == nil || k.recErr != nil {
		return
	}
	if len(k.secrets) == 0 {
		k.recErr = transcript.WriteFacts(k.record, f)
		return
	}
	// A tool's description may quote a secret as a reply may.
	var line bytes.Buffer
	if k.recErr = transcript.WriteFacts(&line, f); k.recErr == nil {
		b, _ := envelope.ScrubBody(line.Bytes(), k.secrets)
		_, k.recErr = k.record.Write(b)
	}
}

func (k *sink) Exchange(j runner.Judged) error {
	if k.recErr != nil {
		return fmt.Errorf("--record: %w", k.recErr)
	}
	if len(k.secrets) > 0 && j.Exchange != nil {
		j.Exchange = envelope.ScrubExchange(j.Exchange, k.secrets)
		j.Verdicts = scrubVerdicts(j.Verdicts, k.secrets)
	}
	hidden := k.selected != nil && !slices.ContainsFunc(k.selected, func(f *fixtures.Fixture) bool {
		return j.Fixture == f.ID || strings.HasPrefix(j.Fixture, f.ID+"/")
	}) || slices.ContainsFunc(k.skip, func(p string) bool { return fixtures.Matches(p, j.Fixture) })
	if why := notSent(j); k.record != nil && why != "" {
		// A fixture the run could not send (its deadline passed, the
		// server could not be restarted) is an error of the run's: the
		// recording says so, so that lint ends as check did.
		if err := transcript.Write(k.record, j.Fixture, &envelope.Exchange{Transport: k.transport, Failure: why, NotSent: true}, nil); err != nil {
			return fmt.Errorf("--record: %w", err)
		}
	}
	if k.record != nil && j.Exchange != nil {
		var err error
		switch {
		case j.Verdicts == nil:
			// So lint judges no more of it than check did.
			why := j.Unjudged
			if why == "" {
				why = "the run did not judge it"
			}
			err = transcript.WriteUnjudged(k.record, j.Fixture, j.Exchange, j.Override, scrubText(why, k.secrets))
		case hidden:
			err = transcript.WriteUnreported(k.record, j.Fixture, j.Exchange, j.Override) // so lint reports what check did
		default:
			err = transcript.Write(k.record, j.Fixture, j.Exchange, j.Override)
		}
		if err != nil {
			return fmt.Errorf("--record: %w", err)
		}
	}
	if j.Verdicts == nil {
		return nil // recorded, not judged (a negotiation that failed)
	}
	if hidden {
		k.hidden++
		return nil
	}
	r := &report.Result{Fixture: j.Fixture, Exchange: j.Exchange, Expect: j.Expect, Verdicts: j.Verdicts, Duration: j.Duration, Timed: true,
		Cited: k.cov.Cited(j.Fixture)}
	k.cov.Add(r)
	return k.ss.exchange(r)
}

func (k *sink) Note(n string) { k.ss.note(scrubText(n, k.secrets)) }

// scrubErr is err with the secrets taken out of its text; it still
// matches what err matched (errors.Is), and is err itself when its text
// holds none.
func scrubErr(err error, secrets []envelope.Secret) error {
	if err == nil {
		return nil
	}
	if msg := scrubText(err.Error(), secrets); msg != err.Error() {
		return &scrubbedError{msg, err}
	}
	return err
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrubText is s with the secrets' values replaced by their markers.
func scrubText(s string, secrets []envelope.Secret) string {
	b, names := envelope.ScrubSecrets([]byte(s), secrets)
	if names == nil {
		return s
	}
	return string(b)
}

// scrubVerdicts takes the secrets out of the findings' messages, which
// may quote the reply (a message that holds one, say); vs itself when
// none holds one.
func scrubVerdicts(vs []checks.Verdict, secrets []envelope.Secret) []checks.Verdict {
	out, cloned := vs, false
	for i := range vs {
		reason := scrubText(vs[i].Reason, secrets)
		var fs []checks.Finding
		for j, f := range vs[i].Findings {
			if m := scrubText(f.Message, secrets); m != f.Message {
				if fs == nil {
					fs = slices.Clone(vs[i].Findings)
				}
				fs[j].Message = m
			}
		}
		if reason == vs[i].Reason && fs == nil {
			continue
		}
		if !cloned {
			out, cloned = slices.Clone(vs), true
		}
		out[i].Reason = reason
		if fs != nil {
			out[i].Findings = fs
		}
	}
	return out
}

func checkRun(ctx context.Context, s *streams, o *checkOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	extra, err := parseHeaders(o.Headers)
	if err != nil {
		return err
	}
	fx, fixtureProblems, err := loadFixtures(o)
	if err != nil {
		return err
	}
	for _, p := range fixtureProblems {
		printLines(s.ErrOut, "--fixtures: "+p)
	}
	lim := o.limits()

	// Every flag is checked and every file opened before the target is
	// started, and no file is emptied before all are open (see
	// outFiles): a bad flag, an unopenable report or --record starts no
	// server and leaves every file as it was.
	var record *os.File
	if o.Record != "" {
		o.writes = append(o.writes, flagPath{"--record", o.Record})
		o.files = &outFiles{}
		if record, err = o.files.open(o.Record); err != nil {
			o.files.abandon()
			return &usageError{fmt.Errorf("--record: %w", err)}
		}
	}
	ss, err := o.prepare(s)
	if err != nil {
		return err
	}
	target, describe, cleanup, err := openTarget(ctx, o, extra, lim)
	var te *targetError
	if errors.As(err, &te) {
		// Not started: the reports are still written, and say so.
		if record != nil {
			o.files.drop(record)
		}
		return abortedRun(s, o, ss, fixtureProblems, te)
	}
	if err != nil {
		ss.abandon()
		return err
	}
	defer cleanup()
	if err := ss.start(s, report.Meta{Target: describe, Protocol: "--protocol " + o.Protocol + " (the version chosen is noted at the end)"}); err != nil {
		target.Close()
		return err
	}
	for _, p := range fixtureProblems {
		ss.note("--fixtures: " + p)
	}
	if len(fixtureProblems) > 0 {
		ss.invalid("%d fixture problem(s), named in the notes; the other fixtures ran", len(fixtureProblems))
	}
	for _, n := range o.demoNotes {
		ss.note(n)
	}
	k := &sink{ss: ss, cov: report.NewCoverageTracker(runner.Citations(fx), checks.All()), transport: target.Transport()}
	if len(o.Run) > 0 {
		k.selected = fx
	} else {
		k.skip = o.Skip
	}
	k.secrets = secrets(extra)
	if record != nil {
		defer record.Close()
		k.record = record
		// How the run judges, so that lint of the recording judges alike.
		if err := transcript.WriteRun(record, transcript.Run{Contract: o.Contract, Schema: o.Schema, Checks: o.Checks}); err != nil {
			ss.closeAll()
			target.Close()
			return fmt.Errorf("--record %s: %w", o.Record, err)
		}
	}
	started := s.Now()
	ctx, release := s.Interrupts(ctx)
	defer release()
	opts := runner.Options{
		Protocol: o.Protocol, Fixtures: fx, CallTools: o.CallTools, Contract: ss.contract, Schemas: ss.schemas,
		Deadline: o.Deadline, Secrets: secrets(extra), Checks: ss.checks, Parallel: o.Parallel,
	}
	prog := newProgress(s, len(fx))
	if prog != nil {
		opts.Progress = prog
	}
	res, runErr := runner.Run(ctx, target, opts, k)
	runErr = scrubErr(runErr, k.secrets) // the reason may quote a reply
	if k.record != nil && errors.Is(runErr, runner.ErrNotDriven) {
		// lint of the recording ends as the run does.
		if err := transcript.WriteAborted(k.record, runErr.Error()); err != nil {
			ss.note("--record: " + err.Error())
		}
	}
	if k.record != nil && !errors.Is(runErr, runner.ErrNotDriven) && errors.Is(context.Cause(ctx), runner.ErrInterrupted) {
		// lint of the recording ends as the run does (review rev43).
		if err := transcript.WriteInterrupted(k.record, context.Cause(ctx).Error()); err != nil {
			ss.note("--record: " + err.Error())
		}
	}
	prog.end()
	if k.hidden > 0 {
		ss.note(fmt.Sprintf("%d exchange(s) the selected fixtures needed (negotiation, tools/list, the end of the session) were judged but are not reported: they are not part of the selection", k.hidden))
	}
	if runErr == nil {
		ss.negotiated(res.Version, res.Negotiated)
		ss.sum.Coverage = k.cov.Summary(res.Version, target.Transport())
	}
	ss.sum.Duration = s.Now().Sub(started)
	if st, ok := target.(*runner.StdioTarget); ok {
		if tail := st.StderrTail(stderrNote); tail != "" {
			ss.note(fmt.Sprintf("server stderr (last %d bytes at most): %s", stderrNote, strconv.QuoteToGraphic(tail)))
		}
	}
	stopped := ss.markInterrupted(ctx, "no fixture was sent after it, and the reports hold what was judged before")
	if !stopped && errors.Is(runErr, runner.ErrNotDriven) {
		ss.sum.Aborted = runErr.Error()
	}
	if err := target.Close(); err != nil {
		ss.note("closing the target: " + err.Error())
	}
	err = ss.finish()
	switch {
	case stopped:
		return err
	case errors.Is(runErr, runner.ErrNotDriven):
		return &targetError{runErr}
	case runErr != nil:
		return runErr
	}
	return err
}

// defaultParallel is how many exchanges a run keeps in flight: enough to
// overlap a server's latency and a few timeouts, few enough that no
// server under test sees more than a modest client would send.
const defaultParallel = 8

// stderrNote bounds the server's stderr quoted in the report.
const stderrNote = 2048

// secrets lists the --header values for the echo checks.
func secrets(h http.Header) []envelope.Secret {
	var out []envelope.Secret
	for k, vs := range h {
		if envelope.NoCredential(k) {
			// A value the protocol itself carries (a version, a method):
			// a server may echo it rightly, and no one hides it.
			continue
		}
		for _, v := range vs {
			if envelope.MayBeCredential(v) {
				out = append(out, envelope.Secret{Name: k, Value: v})
			}
		}
	}
	return out
}

// abortedRun writes the reports of a run whose target could not be
// started (a command not found): a CI job that reads the JUnit file
// finds why, as it does for a server that went away.
func abortedRun(s *streams, o *checkOptions, ss *session, fixtureProblems []string, te *targetError) error {
	describe := "stdio: " + strings.Join(o.Command, " ")
	if o.Demo {
		describe = "demo: reference server over stdio" + faultSuffix(o.DemoFault)
	}
	if err := ss.start(s, report.Meta{Target: describe, Protocol: "--protocol " + o.Protocol}); err != nil {
		return err
	}
	for _, p := range fixtureProblems {
		ss.note("--fixtures: " + p)
	}
	ss.sum.Aborted = "target could not be driven: " + strings.TrimPrefix(te.Error(), "target could not be driven: ")
	if err := ss.finish(); err != nil && !errors.Is(err, errFindings) {
		return err
	}
	return te
}

// openTarget builds the target: the demo server, a URL, or a command.
func openTarget(ctx context.Context, o *checkOptions, extra http.Header, lim transport.Limits) (runner.Target, string, func(), error) {
	switch {
	case o.Demo && o.DemoStdio:
		exe, err := os.Executable()
		if err != nil {
			return nil, "", nil, fmt.Errorf("finding the checker's own binary for the stdio demo: %w", err)
		}
		argv := []string{exe, "refserver", "--stdio"}
		if o.DemoFault != "" {
			argv = append(argv, "--fault", o.DemoFault)
		}
		t, err := runner.StartStdio(ctx, argv, lim)
		if err != nil {
			return nil, "", nil, &targetError{err}
		}
		return t, "demo: reference server over stdio" + faultSuffix(o.DemoFault), func() {}, nil
	case o.Demo:
		srv, err := refserver.New(refserver.Options{Fault: o.DemoFault})
		if err != nil {
			return nil, "", nil, usagef("--demo-fault %q: not a fault (wymcp-check faults lists them)", o.DemoFault)
		}
		hs := newLoopbackServer(srv)
		cleanup := func() {
			srv.Close()
			hs.Close()
		}
		t := &runner.HTTPTarget{T: &transport.HTTP{URL: hs.URL + "/mcp", Header: extra, Limits: lim}}
		return t, "demo: reference server over Streamable HTTP (in process)" + faultSuffix(o.DemoFault), cleanup, nil
	case o.URL != "":
		u, err := url.Parse(o.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, "", nil, usagef("target %q: want an http:// or https:// URL", o.URL)
		}
		t := &runner.HTTPTarget{T: &transport.HTTP{URL: o.URL, Header: extra, Limits: lim}}
		return t, shownURL(u), func() {}, nil
	default:
		t, err := runner.StartStdio(ctx, o.Command, lim)
		if err != nil {
			return nil, "", nil, &targetError{err}
		}
		return t, "stdio: " + strings.Join(o.Command, " "), func() {}, nil
	}
}

// faultSituations are the demo faults that fire only in a situation a
// default run does not reach: a tool called with valid arguments, or a
// 2025-xx session. --demo-fault NAME sets it up, unless the user chose.
var faultSituations = map[string]struct {
	callTools string
	protocol  string
}{
	"hang":                 {callTools: runner.CallAll},
	"crash":                {callTools: runner.CallAll},
	"ended-session-served": {protocol: envelope.V20251125},
}

// demoNeeds sets up the situation a demo fault fires in, so that
// --demo-fault NAME alone shows the fault's failure.
func demoNeeds(o *checkOptions, protocolSet, callToolsSet bool) {
	need, ok := faultSituations[o.DemoFault]
	if !ok {
		return
	}
	if need.callTools != "" && !callToolsSet {
		o.CallTools = need.callTools
		o.demoNotes = append(o.demoNotes, "--demo-fault "+o.DemoFault+" fires on a tool call: tools are called (as with --call-tools=all)")
	}
	if need.protocol != "" && !protocolSet {
		o.Protocol = need.protocol
		o.demoNotes = append(o.demoNotes, "--demo-fault "+o.DemoFault+" fires in a 2025-xx session: the demo speaks "+need.protocol)
	}
}

func faultSuffix(f string) string {
	if f == "" {
		return ""
	}
	return " with fault " + f
}

// newLoopbackServer serves h on 127.0.0.1 only.
func newLoopbackServer(h http.Handler) *httptest.Server {
	hs := httptest.NewUnstartedServer(h)
	if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		hs.Listener.Close()
		hs.Listener = l
	}
	hs.Start()
	return hs
}
