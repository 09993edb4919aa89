package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/report"
)

// version is the checker's version; releases set it with -ldflags
// (checkerVersion says which version is reported).
var version = devVersion

type exitCode int

const (
	exitOK       exitCode = 0 // nothing fails the gate
	exitFindings exitCode = 1 // conformance failures (or errors) fail the gate
	exitUsage    exitCode = 2 // bad usage, flag, contract, fixture or input
	exitTarget   exitCode = 3 // the target could not be driven
	exitStopped  exitCode = 4 // interrupted by a signal; the reports are complete up to it
)

// errFindings: the run completed and its report says what failed.
var errFindings = errors.New("conformance findings")

// errStopped: a signal stopped the run; its reports are written and say
// so.
var errStopped = errors.New("interrupted")

// usageError marks a mistake in what the user asked for.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// exitStatusError makes the command exit with a code of its own, and
// print nothing: wrap exits with its server's status.
type exitStatusError struct{ code int }

func (e *exitStatusError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// targetError marks a target that could not be driven (not started,
// unreachable, died before anything could be judged).
type targetError struct{ err error }

func (e *targetError) Error() string { return e.err.Error() }
func (e *targetError) Unwrap() error { return e.err }

// The exit codes' texts, each in one place; a command's help lists the
// codes it can exit with (exitCodes), in the words true for it.
const (
	exitLineOK       = "0  nothing fails the gate"
	exitFindingsWhy  = "a check failed or could not judge"
	exitFailOnWarn   = " (with --fail-on warn, warnings too)"
	exitLineFindings = "1  conformance failures: " + exitFindingsWhy
	exitLineFailOn   = exitLineFindings + exitFailOnWarn
	exitLineUsage    = "2  usage or configuration error"
	exitLineTarget   = "3  the target could not be driven: not started, unreachable, died"
)

// exitCodes is the block of exit codes that ends a command's help.
func exitCodes(head string, lines ...string) string {
	return head + "\n  " + strings.Join(lines, "\n  ")
}

// The exit codes of each command: check's (exitHelp), lint's, send's,
// proxy's, wrap's, and the root help's summary of them.
var (
	exitHelp = exitCodes("Exit codes:", exitLineOK, exitLineFailOn,
		exitLineUsage+": bad flag, contract, baseline or fixture",
		exitLineTarget,
		`4  interrupted (SIGINT or SIGTERM): no new fixture was sent, what arrived
     was judged, and every report was written, marked as interrupted; a
     second signal exits at once (130)`)
	lintExitHelp = exitCodes("Exit codes:", exitLineOK, exitLineFailOn,
		exitLineUsage+`: bad flag, contract or schema, a transcript that cannot
     be opened, or a malformed line (the rest is judged and the reports written)`,
		"3  the recorded run could not drive its target: it was aborted, or judged nothing",
		`4  interrupted (SIGINT or SIGTERM): no more input was read, what was read
     was judged, and every report was written, marked as interrupted; a
     second signal exits at once (130)`)
	sendExitHelp = exitCodes("Exit codes:", exitLineOK, exitLineFindings+" (a warning does not fail)",
		exitLineUsage+": bad flag, contract, message or fixture, or the message was not sent",
		exitLineTarget)
	proxyExitHelp = exitCodes("Exit codes, once Ctrl-C or SIGTERM stops it:", exitLineOK,
		"1  a judged exchange or client message fails the gate: "+exitFindingsWhy+exitFailOnWarn+`;
     a request the proxy could not deliver (it answered 502 itself) could
     not be judged`,
		exitLineUsage+": bad flag, URL or --listen address",
		"3  the server was never reached: every request got the proxy's own 502")
	wrapExitHelp = exitCodes(`Exit codes: the server's own exit status (128+N when signal N ended it);
when the server did not run:`,
		exitLineUsage+": bad flag, no command after --, or a\n     --log, --record or --report file that cannot be written",
		"3  the server could not be started")
	rootExitHelp = exitCodes("Exit codes (each command's --help lists its own):", exitLineOK, exitLineFailOn,
		exitLineUsage, exitLineTarget,
		"4  check and lint: interrupted (SIGINT or SIGTERM); every report was written, marked as interrupted") +
		"\nwrap exits with the status of the server it ran (wrap --help)."
)

// Main runs the CLI and maps every outcome to an exit code, in one place.
func Main(args []string, s *streams) exitCode {
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.Execute()
	var ue *usageError
	var te *targetError
	var es *exitStatusError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &es):
		return exitCode(es.code)
	case errors.Is(err, errFindings):
		return exitFindings
	case errors.Is(err, errStopped):
		return exitStopped
	case errors.As(err, &te):
		printErr(s, err)
		return exitTarget
	case errors.As(err, &ue):
		printErr(s, err)
		return exitUsage
	default:
		// cobra's own flag and argument errors are usage errors too.
		printErr(s, err)
		return exitUsage
	}
}

// printErr prints the error that ends the run, each line with its control
// characters escaped: an error may quote what a server, a file or an
// argument held (fork/exec quotes the command as given), and a terminal
// would act on an escape sequence in it.
func printErr(s *streams, err error) {
	printLines(s.ErrOut, err.Error())
}

// printLines prints text on w as the checker's own lines, each with its
// control characters escaped (see printErr). Every line the checker
// writes to stderr about its input goes through it: a file name, a
// baseline's line or a transcript's expect key may hold an escape
// sequence, and the terminal must show it, not obey it.
func printLines(w io.Writer, text string) {
	for l := range strings.SplitSeq(text, "\n") {
		fmt.Fprintf(w, "wymcp-check: %s\n", report.Sanitize(l))
	}
}

func newRootCmd(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "wymcp-check",
		Short: "Conformance checker for MCP servers",
		Long: `wymcp-check fires well-formed, malformed and hostile messages at an MCP
server and judges every reply against JSON-RPC 2.0, the MCP protocol of the
version the server speaks, and the error-envelope contract.

` + rootExitHelp,
		SilenceErrors:     true,
		SilenceUsage:      true,
		Version:           checkerVersion(),
		PersistentPreRunE: flagBounds,
	}
	root.SetVersionTemplate("wymcp-check {{.Version}}\n")
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(newVersionCmd(s), newListCmd(s), newExplainCmd(s), newLintCmd(s), newCheckCmd(s), newFaultsCmd(s), newRefserverCmd(s), newSendCmd(s), newProxyCmd(s), newWrapCmd(s), newCoverageCmd(s))
	return root
}

// enumFlag is a string flag whose value must be one of a closed set; the
// set shows in the help text.
type enumFlag struct {
	val     *string
	choices []string
}

func (e *enumFlag) String() string { return *e.val }
func (e *enumFlag) Type() string   { return "string" }
func (e *enumFlag) Set(v string) error {
	if !slices.Contains(e.choices, v) {
		return fmt.Errorf("%q is not one of %s", v, strings.Join(e.choices, ", "))
	}
	*e.val = v
	return nil
}

func addEnum(cmd *cobra.Command, p *string, name, def, usage string, choices ...string) {
	*p = def
	cmd.Flags().Var(&enumFlag{p, choices}, name, fmt.Sprintf("%s {%s}", usage, strings.Join(choices, "|")))
}

func newVersionCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the checker's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(s.Out, "wymcp-check %s\n", checkerVersion())
			return err
		},
	}
}
