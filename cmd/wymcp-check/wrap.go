package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/proxy"
	"github.com/wymcp/wymcp-check/report"
)

type wrapOptions struct {
	relayOptions
	Command []string
	Grace   time.Duration
}

func newWrapCmd(s *streams) *cobra.Command {
	o := &wrapOptions{}
	cmd := &cobra.Command{
		Use:   "wrap [flags] -- COMMAND [ARG...]",
		Short: "Start a stdio MCP server, relay its stdin and stdout, and judge the traffic live",
		Long: `wrap starts the server COMMAND and relays your client's stdin to it and its
stdout back, byte for byte and line by line as they come; the server's stderr
passes through. Put "wymcp-check wrap --" before the server command where your
client's configuration names it.

wrap's own output never touches stdout, the protocol channel: one line per
message, with the verdict on the server's replies (judged as check judges
them) and on the client's messages (area client), goes to stderr, or to
--log FILE. A request left unanswered past --timeout by a server that
answers others fails RPC1006, as in check; a second response to one request
fails it too; the client still waits as long as it likes. Messages over
--max-bytes are relayed whole; their exchange gets an error (could not
judge). SIGINT and SIGTERM are forwarded to
the server. When the client closes stdin the server gets --grace to exit,
then SIGTERM, then SIGKILL; what it writes on stdout meanwhile is judged
as check judges the end of a server's input (#N EOF: a goodbye line fails
RPC1001; a 2026-07-28 server still running warns PRO1011). A second SIGINT
or SIGTERM stops it the same way. The verdicts never change wrap's exit code: use --report to gate on
them.

` + wrapExitHelp,
		Example: `  wymcp-check wrap -- node server.js
  wymcp-check wrap --log /tmp/mcp.log --record /tmp/mcp.jsonl -- uvx my-server`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash != 0 || len(args) == 0 {
				return usagef("want the server command after --: wrap [flags] -- COMMAND [ARG...]")
			}
			o.Command, o.changed = args, cmd.Flags().Changed
			return wrapRun(cmd.Context(), s, o)
		},
	}
	addRelayFlags(cmd, &o.relayOptions)
	cmd.Flags().DurationVar(&o.Grace, "grace", proxy.DefaultGrace, "how long the server gets to exit after its stdin closes, and after SIGTERM")
	return cmd
}

func wrapRun(ctx context.Context, s *streams, o *wrapOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	out, w, closeSinks, err := openRelay(s, &o.relayOptions, proxy.NewRedactor(nil), s.ErrOut, s.ErrTTY, "wrap "+strings.Join(o.Command, " "))
	if err != nil {
		return err
	}
	defer out.close()
	// Without --log the server's stderr and these lines share stderr:
	// through one lock, so that neither tears the other's writes.
	var serverErr io.Writer = s.ErrOut
	if o.Log == "" {
		serverErr = out
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	fmt.Fprintf(out, "wrap: relaying the stdio of %s\n", report.Sanitize(shellWords(o.Command)))
	st := &proxy.Stdio{Argv: o.Command, Stdin: s.In, Stdout: s.Out, Stderr: serverErr, Signals: sigs,
		Limits: proxy.Limits{MaxBytes: o.MaxBytes, Timeout: o.Timeout, Grace: o.Grace}, Observer: w}
	res, err := st.Run(ctx)
	if err != nil {
		closeSinks([]string{err.Error()})
		return &targetError{err}
	}
	notes := res.Notes
	if res.Lagged {
		notes = append(notes, "the output was still busy when the server ended; the last lines may be missing")
	}
	writeWithin(out, w.summary(res.Stats, notes), 2*time.Second)
	if err := closeSinks(notes); err != nil {
		writeWithin(out, "wymcp-check: "+report.Sanitize(err.Error())+"\n", 2*time.Second)
	}
	if res.ExitCode != 0 {
		return &exitStatusError{res.ExitCode}
	}
	return nil
}

// shellWords joins a command as a person would type it, quoting only
// the words that need it.
func shellWords(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = a
		if a == "" || strings.ContainsFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r))
		}) {
			q[i] = shellQuote(a)
		}
	}
	return strings.Join(q, " ")
}
