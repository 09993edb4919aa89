package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
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
	MaxBytes  int64
	Protocol  string
	Demo      bool
	DemoFault string
	DemoStdio bool
}

func addTargetFlags(cmd *cobra.Command, o *targetOptions) {
	cmd.Flags().StringArrayVarP(&o.Headers, "header", "H", nil, "add a header to every request, `'Name: value'` (repeatable; values are never printed)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 10*time.Second, "bound on each exchange")
	cmd.Flags().Int64Var(&o.MaxBytes, "max-bytes", 4<<20, "bound on the reply bytes read per exchange")
	addEnum(cmd, &o.Protocol, "protocol", "auto", "protocol version: probe, or use the one given", "auto", envelope.V20260728, envelope.V20251125, envelope.V20250618, runner.V20250326)
	cmd.Flags().BoolVar(&o.Demo, "demo", false, "check the embedded reference server, in process (no target needed)")
	cmd.Flags().StringVar(&o.DemoFault, "demo-fault", "", "with --demo: inject a named fault into the reference server (see wymcp-check faults)")
	cmd.Flags().BoolVar(&o.DemoStdio, "demo-stdio", false, "with --demo: run the reference server as a child process over stdio")
}

type checkOptions struct {
	reportOptions
	targetOptions
	URL        string
	Command    []string
	FixtureDir string
	Run        string
	CallTools  string
	Record     string
	Deadline   time.Duration
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
			return checkRun(cmd.Context(), s, o)
		},
	}
	addReportFlags(cmd, &o.reportOptions)
	addTargetFlags(cmd, &o.targetOptions)
	cmd.Flags().StringVar(&o.FixtureDir, "fixtures", "", "also run the fixtures of `DIR` (*.txtar; see README)")
	cmd.Flags().StringVar(&o.Run, "run", "", "run only the fixtures whose ID matches the glob `PATTERN` (e.g. 'headers/*')")
	addEnum(cmd, &o.CallTools, "call-tools", "", "also call tools with valid arguments (it makes the server act): readonly = tools with readOnlyHint, all = every tool", "", runner.CallReadOnly, runner.CallAll)
	cmd.Flags().Lookup("call-tools").NoOptDefVal = runner.CallReadOnly
	cmd.Flags().StringVar(&o.Record, "record", "", "write every exchange to `FILE` as a transcript (lint reads it)")
	cmd.Flags().DurationVar(&o.Deadline, "deadline", 5*time.Minute, "bound on the whole run")
	return cmd
}

// parseHeaders reads --header values; a malformed one names itself but
// never its value, which may be a secret.
func parseHeaders(hs []string) (http.Header, error) {
	h := http.Header{}
	for i, kv := range hs {
		k, v, ok := strings.Cut(kv, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") {
			return nil, usagef("--header #%d: want 'Name: value'", i+1)
		}
		h.Add(k, strings.TrimSpace(v))
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
			if _, statErr := os.Stat(o.FixtureDir); statErr != nil {
				return nil, nil, usagef("--fixtures: %v", statErr)
			}
			problems = append(problems, strings.Split(err.Error(), "\n")...)
		}
		seen := map[string]bool{}
		for _, f := range all {
			seen[f.ID] = true
		}
		for _, f := range mine {
			if seen[f.ID] {
				problems = append(problems, fmt.Sprintf("%s: id %q is also an embedded fixture; left out", f.File, f.ID))
				continue
			}
			all = append(all, f)
		}
	}
	if o.Run != "" {
		if _, err := path.Match(o.Run, ""); err != nil {
			return nil, nil, usagef("--run %q: %v", o.Run, err)
		}
		var keep []*fixtures.Fixture
		for _, f := range all {
			if ok, _ := path.Match(o.Run, f.ID); ok || strings.HasPrefix(f.ID, strings.TrimSuffix(o.Run, "*")) && strings.HasSuffix(o.Run, "*") {
				keep = append(keep, f)
			}
		}
		if len(keep) == 0 {
			return nil, nil, usagef("--run %q matches no fixture", o.Run)
		}
		all = keep
	}
	return all, problems, nil
}

// sink feeds the runner's verdicts into the report and the transcript.
// The transcript gets what the judge knew of each exchange (the run's
// facts, the fixture's override), so lint of it gives the same verdicts.
type sink struct {
	ss     *session
	record *os.File
	recErr error
	cov    *report.CoverageTracker
}

func (k *sink) Facts(f *expect.Facts) {
	if k.record != nil && k.recErr == nil {
		k.recErr = transcript.WriteFacts(k.record, f)
	}
}

func (k *sink) Exchange(j runner.Judged) error {
	if k.recErr != nil {
		return fmt.Errorf("--record: %w", k.recErr)
	}
	if k.record != nil && j.Exchange != nil {
		if err := transcript.Write(k.record, j.Fixture, j.Exchange, j.Override); err != nil {
			return fmt.Errorf("--record: %w", err)
		}
	}
	if j.Verdicts == nil {
		return nil // recorded, not judged (a negotiation that failed)
	}
	r := &report.Result{Fixture: j.Fixture, Exchange: j.Exchange, Expect: j.Expect, Verdicts: j.Verdicts}
	k.cov.Add(r)
	return k.ss.exchange(r)
}

func (k *sink) Note(n string) { k.ss.note(n) }

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
		fmt.Fprintf(s.ErrOut, "wymcp-check: --fixtures: %s\n", p)
	}
	lim := transport.Limits{Timeout: o.Timeout, MaxBytes: o.MaxBytes}

	target, describe, cleanup, err := openTarget(ctx, o, extra, lim)
	if err != nil {
		return err
	}
	defer cleanup()

	ss, err := o.open(s, report.Meta{Target: describe, Protocol: "--protocol " + o.Protocol + " (the version chosen is noted at the end)"})
	if err != nil {
		return err
	}
	for _, p := range fixtureProblems {
		ss.note("--fixtures: " + p)
	}
	k := &sink{ss: ss, cov: report.NewCoverageTracker(runner.Citations(fx), checks.All())}
	if o.Record != "" {
		f, err := os.Create(o.Record)
		if err != nil {
			return &usageError{fmt.Errorf("--record: %w", err)}
		}
		defer f.Close()
		k.record = f
	}
	started := s.Now()
	res, runErr := runner.Run(ctx, target, runner.Options{
		Protocol: o.Protocol, Fixtures: fx, CallTools: o.CallTools, Contract: ss.contract, Schemas: ss.schemas,
		Deadline: o.Deadline, Secrets: secrets(extra),
	}, k)
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
	if errors.Is(runErr, runner.ErrNotDriven) {
		ss.sum.Aborted = runErr.Error()
	}
	if err := target.Close(); err != nil {
		ss.note("closing the target: " + err.Error())
	}
	err = ss.finish()
	switch {
	case errors.Is(runErr, runner.ErrNotDriven):
		return &targetError{runErr}
	case runErr != nil:
		return runErr
	case len(fixtureProblems) > 0 && (err == nil || errors.Is(err, errFindings)):
		// The report is written; the fixture files still need fixing.
		return usagef("%d fixture problem(s); the other fixtures ran", len(fixtureProblems))
	}
	return err
}

// stderrNote bounds the server's stderr quoted in the report.
const stderrNote = 2048

// secrets lists the --header values for the echo checks.
func secrets(h http.Header) []envelope.Secret {
	var out []envelope.Secret
	for k, vs := range h {
		for _, v := range vs {
			out = append(out, envelope.Secret{Name: k, Value: v})
		}
	}
	return out
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
		return t, u.Redacted(), func() {}, nil
	default:
		t, err := runner.StartStdio(ctx, o.Command, lim)
		if err != nil {
			return nil, "", nil, &targetError{err}
		}
		return t, "stdio: " + strings.Join(o.Command, " "), func() {}, nil
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
