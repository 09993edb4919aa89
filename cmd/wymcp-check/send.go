package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/report"
	"github.com/wymcp/wymcp-check/runner"
)

type sendOptions struct {
	targetOptions
	Contract   string
	Schema     string
	URL        string
	Command    []string
	Input      string
	Fixture    string
	FixtureDir string
	Deadline   time.Duration
}

func newSendCmd(s *streams) *cobra.Command {
	o := &sendOptions{}
	cmd := &cobra.Command{
		Use:   "send [flags] (URL | --demo) [FILE|-]   or   send [flags] [FILE|-] -- COMMAND [ARG...]",
		Short: "Send one message in a negotiated session and show the reply, annotated",
		Long: `send negotiates a session with the target as check does, sends one message
and prints the request, the reply (status, headers, pretty body) with every
finding written beside the member it is about, and a one-line command that
reproduces the exchange (curl for HTTP; --header values redacted; an
argument with bytes outside printable ASCII, such as a server's session
id, written "$(printf '...')" with octal escapes; a body over 4096 bytes
read from the message file, or from BODY, a file to save it in, when the
file does not hold the bytes sent).

The message is read from FILE or stdin: a raw body (JSON or any bytes), a
fixture-style file with "-- headers --" and "-- body --" sections, or a
whole fixture file (with its "-- fixture --" section and expect-* keys).
--fixture ID sends a fixture of the corpus (or of --fixtures DIR) instead.
A fixture is judged with its own expectations, exactly as check judges it,
so send reproduces check's verdict. Bodies may use the fixture placeholders
({{id}}, {{meta}}, {{version}}, {{tool}}, {{args}}, {{canary:N}}, {{bytes:ff}});
the version's standard headers are added unless the headers section
changes or drops them ("-Name"). Over stdio a message is one line
(T-STDIO-1): one written on several lines goes compacted if it is valid
JSON, and is refused if it is not. A message over 64 MiB is refused.

Every exchange is bounded (--timeout, --max-bytes) and so is the whole send
(--deadline, as in check, the session's setup included): a server that
hangs or trickles ends in a verdict, never a hang. Past the deadline in the
setup the target could not be driven (exit 3); past it on the message, the
message could not be judged (exit 1).

` + sendExitHelp,
		Example: `  echo '{"jsonrpc":"2.0","id":{{id}},"method":"tools/list","params":{{{meta}}}}' | wymcp-check send --demo -
  wymcp-check send --demo --fixture tools/unknown-tool
  wymcp-check send http://127.0.0.1:3001/mcp probe.txt
  wymcp-check send msg.json -- node server.js --stdio`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				o.Command = args[dash:]
				args = args[:dash]
			}
			if o.Fixture != "" {
				// The message is the fixture: the only argument is the target.
				switch {
				case o.Demo && len(args) == 0 && len(o.Command) == 0:
				case len(o.Command) > 0 && len(args) == 0:
				case !o.Demo && len(o.Command) == 0 && len(args) == 1:
					o.URL = args[0]
				default:
					return usagef("with --fixture, want only a target (URL, --demo, or -- COMMAND)")
				}
				return sendRun(cmd.Context(), s, o)
			}
			switch {
			case o.Demo && len(args) <= 1 && len(o.Command) == 0:
				o.Input = "-"
				if len(args) == 1 {
					o.Input = args[0]
				}
			case len(o.Command) > 0 && len(args) <= 1:
				o.Input = "-"
				if len(args) == 1 {
					o.Input = args[0]
				}
			case !o.Demo && len(o.Command) == 0 && (len(args) == 1 || len(args) == 2):
				o.URL, o.Input = args[0], "-"
				if len(args) == 2 {
					o.Input = args[1]
				}
			default:
				return usagef("want a target (URL, --demo, or -- COMMAND) and at most one message file")
			}
			return sendRun(cmd.Context(), s, o)
		},
	}
	addTargetFlags(cmd, &o.targetOptions)
	cmd.Flags().StringVar(&o.Contract, "contract", "strict", "the error-envelope contract: strict, spec, or a contract `FILE`")
	cmd.Flags().StringVar(&o.Schema, "schema", "builtin", "protocol schema: builtin, off, or a schema `FILE`")
	cmd.Flags().StringVar(&o.Fixture, "fixture", "", "send the corpus fixture `ID` (see list --fixtures) and judge it as check does")
	cmd.Flags().StringVar(&o.FixtureDir, "fixtures", "", "with --fixture: also look in the fixtures of `DIR`")
	addDeadlineFlag(cmd, &o.Deadline)
	return cmd
}

// findFixture returns the fixture --fixture names, from the corpus or
// --fixtures DIR.
func findFixture(o *sendOptions) (*fixtures.Fixture, error) {
	fx, problems, err := loadFixtures(&checkOptions{FixtureDir: o.FixtureDir})
	if err != nil {
		return nil, err
	}
	parent := ""
	for _, f := range fx {
		if f.ID == o.Fixture {
			return f, nil
		}
		if strings.HasPrefix(o.Fixture, f.ID+"/") && len(f.ID) > len(parent) {
			parent = f.ID
		}
	}
	if parent != "" {
		// A report's row of a variant a fixture makes from the server's
		// own tools (tools/wrong-arguments/missing-required/a): the
		// fixture sends them all, and judges each as check did.
		return nil, usagef("--fixture %q: a variant of fixture %s, made from what the server lists; send --fixture %s, which sends every variant and judges each as check does", o.Fixture, parent, parent)
	}
	if len(problems) > 0 {
		return nil, usagef("--fixture %q: no such fixture (and %d fixture file(s) could not be read: %s)", o.Fixture, len(problems), problems[0])
	}
	return nil, usagef("--fixture %q: no such fixture (wymcp-check list --fixtures lists them)", o.Fixture)
}

// maxMessage bounds the message send reads, from a file or stdin alike:
// a message cut short would be sent broken and its reply blamed on the
// server, so one over the bound is refused.
const maxMessage = 64 << 20

// readMessage reads the message to send: a raw body, or a fixture-style
// file with headers and body sections. It gives the bytes read too: a
// reproduce line may name the file in place of writing them.
func readMessage(s *streams, name string) (*fixtures.Fixture, []byte, error) {
	in, what := s.In, "standard input"
	if name != "-" {
		fh, err := os.Open(name)
		if err != nil {
			return nil, nil, usagef("reading the message: %v", err)
		}
		defer fh.Close()
		in, what = fh, name
	}
	raw, err := io.ReadAll(io.LimitReader(in, maxMessage+1))
	if err != nil {
		return nil, nil, usagef("reading the message: %v", err)
	}
	if len(raw) > maxMessage {
		return nil, nil, usagef("%s: the message is over %d MiB (%d bytes), the most send reads; send a smaller one", what, maxMessage>>20, maxMessage)
	}
	if bytes.HasPrefix(raw, []byte("-- fixture --\n")) || bytes.Contains(raw, []byte("\n-- fixture --\n")) {
		// A whole fixture file: its own id and expectations.
		f, err := fixtures.Parse(name, raw)
		if err != nil {
			return nil, nil, &usageError{err}
		}
		return f, raw, nil
	}
	if bytes.HasPrefix(raw, []byte("-- ")) || bytes.Contains(raw, []byte("\n-- body --\n")) {
		// The fixture section goes last, so the file's lines keep their
		// numbers in Parse's errors; a purpose line, if the file has
		// none, goes first, and the numbers are moved back past it.
		src := bytes.Clone(raw)
		if !bytes.HasSuffix(src, []byte("\n")) {
			src = append(src, '\n')
		}
		src = append(src, "-- fixture --\nid: send\n"...)
		shift := 0
		if i := bytes.Index(raw, []byte("-- ")); i >= 0 && (i == 0 || raw[i-1] == '\n') && len(bytes.TrimSpace(raw[:i])) == 0 {
			src, shift = append([]byte("Message sent by hand.\n"), src...), 1
		}
		f, err := fixtures.Parse(name, src)
		if err != nil {
			return nil, nil, &usageError{shiftLines(err, name, shift)}
		}
		return f, raw, nil
	}
	body := bytes.TrimSuffix(raw, []byte("\n"))
	if len(body) == 0 {
		// A closed stdin reads as empty (the Go runtime opens /dev/null
		// in its place), and sending that once passed for a run: an
		// empty body is sent only when a message says so.
		return nil, nil, usagef("%s is empty: nothing to send (an empty body is sent by a message whose -- body -- section is empty)", what)
	}
	f := &fixtures.Fixture{ID: "send", Purpose: "message sent by hand", Versions: envelope.Versions(),
		Transports: []string{envelope.HTTP, envelope.Stdio}, Body: body, File: name, Expect: &expect.Override{}}
	if _, err := fixtures.Expand(body, fixtures.Context{Version: envelope.V20260728}); err != nil {
		return nil, nil, usagef("%s: %v", name, err)
	}
	return f, raw, nil
}

// shiftLines moves the line numbers of Parse's errors about file ("file:N:
// cause", one a line) back by n.
func shiftLines(err error, file string, n int) error {
	if n == 0 {
		return err
	}
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		rest, ok := strings.CutPrefix(l, file+":")
		if !ok {
			continue
		}
		num, cause, ok := strings.Cut(rest, ":")
		if v, aerr := strconv.Atoi(num); ok && aerr == nil {
			lines[i] = fmt.Sprintf("%s:%d:%s", file, max(v-n, 1), cause)
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// stdioLines says whether a message for stdio is written on several
// lines. Over stdio a message is one line and holds no newline (T-STDIO-1,
// which binds the sender: here the checker): one that is valid JSON the
// runner sends compacted, as it sends check's fixtures; one that is not
// is refused, for each of its lines would reach the server as a message
// of its own, and their answers would be judged as the reply to one
// request.
func stdioLines(f *fixtures.Fixture) (bool, error) {
	if !bytes.Contains(f.Body, []byte("\n")) {
		return false, nil
	}
	full, err := fixtures.Expand(f.Body, fixtures.Context{Version: envelope.V20260728})
	if err != nil || !json.Valid(full) {
		return false, usagef("%s: the message is %d lines and not valid JSON, so it cannot be put on one line; over stdio each line reaches the server as a message of its own (T-STDIO-1): put the message on one line",
			orText(f.File, f.ID), bytes.Count(f.Body, []byte("\n"))+1)
	}
	return true, nil
}

// sendSink keeps the exchanges of the message send is about (a fixture
// may make several: one per tool argument variant) and their verdicts.
type sendSink struct {
	id    string // the fixture's id; set once the session is open
	got   []runner.Judged
	notes []string
}

func (k *sendSink) Facts(*expect.Facts) {}

func (k *sendSink) Exchange(j runner.Judged) error {
	if k.id != "" && (j.Fixture == k.id || strings.HasPrefix(j.Fixture, k.id+"/")) {
		k.got = append(k.got, j)
	}
	return nil
}
func (k *sendSink) Note(n string) { k.notes = append(k.notes, n) }

// printNotes prints the notes the session's setup gave, once each: send
// lists the server's tools, prompts and resources before the message (a
// fixture's placeholders name them), and each listing may wait up to
// --timeout; one left unanswered must not be a silent wait.
func (k *sendSink) printNotes(w io.Writer, secs []envelope.Secret, when string) {
	for _, n := range k.notes {
		fmt.Fprintf(w, "wymcp-check: note%s: %s\n", when, report.Sanitize(scrubText(n, secs)))
	}
	k.notes = nil
}

func sendRun(ctx context.Context, s *streams, o *sendOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// The flags first: a bad one is named before the message is read
	// (an empty stdin is refused too, and would hide it).
	extra, err := parseHeaders(o.Headers)
	if err != nil {
		return err
	}
	var msg *fixtures.Fixture
	var src reproSource
	if o.Fixture != "" {
		msg, err = findFixture(o)
	} else if msg, src.raw, err = readMessage(s, o.Input); o.Input != "-" {
		src.file = o.Input
	}
	if err != nil {
		return err
	}
	stdio := len(o.Command) > 0 || (o.Demo && o.DemoStdio)
	if stdio {
		multi, err := stdioLines(msg)
		if err != nil {
			return err
		}
		if multi {
			fmt.Fprintf(s.Out, "# the message, valid JSON on several lines, is sent on one line: over stdio a message holds no newline (T-STDIO-1)\n\n")
		}
	}
	c, err := envelope.LoadContract(o.Contract)
	if err != nil {
		return &usageError{fmt.Errorf("--contract: %w", err)}
	}
	sv, err := (&reportOptions{Schema: o.Schema}).validator()
	if err != nil {
		return err
	}
	lim := o.limits()
	// --deadline bounds the whole send, as it bounds check's run: the
	// session's setup, the message and its liveness probe, however a
	// server trickles.
	start := time.Now()
	parent := ctx
	ctx, cancel := runner.WithDeadline(ctx, o.Deadline)
	defer cancel()
	co := &checkOptions{targetOptions: o.targetOptions, URL: o.URL, Command: o.Command}
	target, describe, cleanup, err := openTarget(ctx, co, extra, lim)
	if err != nil {
		return err
	}
	defer cleanup()
	defer target.Close()
	runner.Hurry(parent, target, max(o.Deadline-time.Since(start), time.Nanosecond))

	k := &sendSink{}
	secs := secrets(extra)
	sess, res, err := runner.Open(ctx, target, runner.Options{Protocol: o.Protocol, Contract: c, Schemas: sv, Secrets: secs, CallTools: runner.CallAll,
		// The message, read before the setup, is among the fixtures so
		// that the setup's own requests (the negotiation, the listings)
		// step over a literal id it writes, as check's steps over its
		// fixtures': one session must not see an id twice (T-RPC-4), and
		// a server that refuses the reuse was judged for the checker's
		// fault (review rev55 F6). Open only reads their ids.
		Fixtures: []*fixtures.Fixture{msg},
		// As check runs by default: over stdio, the lines up to a
		// marker's reply are the request's, so a second response is
		// judged (RPC1006) as check judges it.
		Parallel: defaultParallel}, k)
	// What the session's setup met (a listing left unanswered, a
	// version other than asked) is said before the message's own
	// exchange, on stderr as the reason for the wait it cost.
	k.printNotes(s.ErrOut, secs, fmt.Sprintf(" (the session's setup, before the message; each request waits up to --timeout %s)", lim.Timeout))
	if err != nil {
		return &targetError{scrubErr(err, secs)} // the reason may quote a reply
	}
	k.id = msg.ID
	if err := sess.Fire(ctx, msg); err != nil {
		return err
	}
	endpoint := ""
	if ht, ok := target.(*runner.HTTPTarget); ok {
		endpoint = ht.T.URL
	}
	reproCmd := o.Command
	if o.Demo && o.DemoStdio {
		// The demo's process, as openTarget starts it.
		reproCmd = []string{"wymcp-check", "refserver", "--stdio"}
		if exe, err := os.Executable(); err == nil {
			reproCmd[0] = exe
		}
		if o.DemoFault != "" {
			reproCmd = append(reproCmd, "--fault", o.DemoFault)
		}
	}
	var sum report.Summary
	sent, cut := 0, false
	for _, j := range explainedFirst(k.got) {
		if j.Exchange != nil && len(secs) > 0 {
			// Printed as check reports it: a --header value is never shown.
			j.Exchange, j.Verdicts = envelope.ScrubExchange(j.Exchange, secs), scrubVerdicts(j.Verdicts, secs)
		}
		for _, v := range j.Verdicts {
			sum.Add(v)
		}
		if j.Exchange == nil {
			cut = cut || notSent(j) == runner.DeadlinePassed
			if !envelope.IsLiveness(j.Fixture) {
				fmt.Fprintf(s.Out, "# %s not sent: %s\n", report.Sanitize(j.Fixture), report.Sanitize(skipReason(j.Verdicts)))
			}
			continue
		}
		sent++
		if err := printExchange(s.Out, describe, endpoint, res, j, extra, reproCmd, src, stageOf(msg, j.Fixture)); err != nil {
			return err
		}
	}
	k.printNotes(s.ErrOut, secs, "") // (the message's own: a tool it probed)
	if sent == 0 && !cut {
		return usagef("the message was not sent")
	}
	// (A message --deadline left unsent could not be judged: exit 1, as
	// check's fixtures the deadline left unsent; said above.)
	if msg.ID != "send" {
		// The curl line resends the bytes; the verdict above needs the
		// fixture's expectations too.
		fmt.Fprintf(s.Out, "judged as check judges fixture %s; to judge it again: wymcp-check send --fixture %s TARGET\n", msg.ID, msg.ID)
	}
	if sum.Gate(false) {
		return errFindings
	}
	return nil
}

// explainedFirst puts each liveness probe's exchange after the exchange
// whose silence it was sent to explain, where the runner judged it
// first; a probe whose exchange is not among them stays last.
func explainedFirst(got []runner.Judged) []runner.Judged {
	own := map[string]bool{}
	for _, j := range got {
		if !envelope.IsLiveness(j.Fixture) {
			own[j.Fixture] = true
		}
	}
	probes := map[string][]runner.Judged{}
	var orphans []runner.Judged
	for _, j := range got {
		if !envelope.IsLiveness(j.Fixture) {
			continue
		}
		if of := strings.TrimSuffix(j.Fixture, "/liveness"); own[of] {
			probes[of] = append(probes[of], j)
		} else {
			orphans = append(orphans, j)
		}
	}
	out := make([]runner.Judged, 0, len(got))
	for _, j := range got {
		if !envelope.IsLiveness(j.Fixture) {
			out = append(out, j)
			out = append(out, probes[j.Fixture]...)
			delete(probes, j.Fixture) // (an id judged twice keeps its probes once)
		}
	}
	return append(out, orphans...)
}

func skipReason(vs []checks.Verdict) string {
	if len(vs) > 0 {
		return vs[0].Reason
	}
	return "no exchange"
}

// printExchange shows what went and what came back, annotated.
func printExchange(w io.Writer, target, endpoint string, res runner.Result, j runner.Judged, extra http.Header, cmd []string, src reproSource, stage reproStage) error {
	ex, vs := j.Exchange, j.Verdicts
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s, protocol %s (%s)\n", report.Sanitize(j.Fixture), report.Sanitize(target), res.Version, res.Negotiated)
	if envelope.IsLiveness(j.Fixture) {
		fmt.Fprintf(&b, "# the checker's liveness probe, sent because %s above got no reply: it tells a silent server from a dead one\n", report.Sanitize(strings.TrimSuffix(j.Fixture, "/liveness")))
	}
	b.WriteString("\n")
	if ex.Transport == envelope.HTTP {
		fmt.Fprintf(&b, "> %s %s\n", ex.Request.HTTPMethod(), report.Sanitize(endpoint))
		writeHeaders(&b, "> ", ex.Request.Header)
		for k := range extra {
			fmt.Fprintf(&b, "> %s: <redacted>\n", k)
		}
	}
	fmt.Fprintf(&b, "> %s\n\n", report.Sanitize(string(clipBytes(ex.Request.Body, 2000))))
	switch {
	case ex.Response == nil:
		fmt.Fprintf(&b, "< no reply: %s\n", report.Sanitize(orText(ex.Failure, "nothing came back")))
	default:
		if ex.Transport == envelope.HTTP {
			fmt.Fprintf(&b, "< HTTP %d\n", ex.Response.Status)
			writeHeaders(&b, "< ", ex.Response.Header)
			b.WriteString("<\n")
		}
		if ex.Failure != "" {
			fmt.Fprintf(&b, "< (incomplete: %s)\n", report.Sanitize(ex.Failure))
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	b.Reset()
	var unplaced []string
	// Split the reply as the checks did, and annotate the message they
	// judged as the response.
	rep := j.Expect.ReadReply(ex.Response)
	if rep.Response == nil {
		// No message stands for the response (no body, silence): the
		// findings have nowhere to stand but below.
		for _, v := range vs {
			for _, f := range v.Findings {
				unplaced = append(unplaced, fmt.Sprintf("%s %s %s: %s", f.Status, v.Check.ID, f.Path, f.Message))
			}
		}
	}
	for i := range rep.Messages {
		m := &rep.Messages[i]
		var mvs []checks.Verdict
		if m == rep.Response {
			mvs = vs
		}
		u, err := report.Annotate(w, clipBytes(m.Raw, 1<<20), mvs, "")
		if err != nil {
			return err
		}
		unplaced = append(unplaced, u...)
	}
	var errs []string
	for _, v := range vs {
		if v.Status == checks.StatusError {
			errs = append(errs, fmt.Sprintf("error %s could not judge: %s", v.Check.ID, v.Reason))
		}
	}
	unplaced = append(unplaced, slices.Compact(errs)...)
	if len(unplaced) > 0 {
		b.WriteString("\nfindings outside the body:\n")
		for _, u := range unplaced {
			fmt.Fprintf(&b, "  %s\n", report.Sanitize(u))
		}
	}
	var sum report.Summary
	for _, v := range vs {
		sum.Add(v)
	}
	fmt.Fprintf(&b, "\n%d pass, %d fail, %d warn, %d skip, %d error\n", sum.Pass, sum.Fail, sum.Warn, sum.Skip, sum.Error)
	if note, r := reproduce(endpoint, res.Version, ex, extra, cmd, src, stage); r != "" {
		if note != "" {
			note = " (" + report.Sanitize(note) + ")"
		}
		fmt.Fprintf(&b, "\nreproduce%s:\n  %s\n", note, r)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func clipBytes(b []byte, n int) []byte {
	if len(b) > n {
		return append(b[:n:n], "…"...)
	}
	return b
}

func writeHeaders(b *strings.Builder, prefix string, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(b, "%s%s: %s\n", prefix, report.Sanitize(k), report.Sanitize(clip(v, 200)))
		}
	}
}

// reproBodyMax bounds the body a reproduce line writes inline, as the
// request shown above it is clipped: a 64 MiB message made a line of up
// to 256 MB (octal escapes) on the terminal (review rev55 F4).
const reproBodyMax = 4096

// reproSource is the message as send read it: the file named (none for
// stdin) and its bytes. A reproduce line past reproBodyMax names the
// file where it holds the very bytes sent.
type reproSource struct {
	file string
	raw  []byte
}

// A reproStage is how much of the 2025 handshake a stdio reproduce line
// writes before the message: what the fixture's stage had sent.
type reproStage int

const (
	reproSession      reproStage = iota // initialize and notifications/initialized
	reproInitializing                   // initialize alone (fixtures.StageInitializing)
	reproFresh                          // nothing (fixtures.StageFresh, and a stage's own initialize)
)

// stageOf is the reproStage of exchange fixture, sent for msg.
func stageOf(msg *fixtures.Fixture, fixture string) reproStage {
	switch {
	case msg.Stage == fixtures.StageFresh, msg.Stage != "" && strings.HasSuffix(fixture, "/initialize"):
		return reproFresh
	case msg.Stage == fixtures.StageInitializing:
		return reproInitializing
	}
	return reproSession
}

// reproduce is a shell command that sends the same bytes again: curl
// for HTTP, printf into the command for stdio ("" when no command is
// known), and a note on what it does not write. Secrets given with
// --header are redacted; a body up to reproBodyMax keeps every byte
// (printf escapes); a longer one is read from the user's file when that
// holds the bytes sent, else is not written (the note says its size).
// Every argument is printable ASCII (see shellArg): a header value the
// server chose (Mcp-Session-Id) reaches the terminal too.
func reproduce(endpoint, version string, ex *envelope.Exchange, extra http.Header, cmd []string, src reproSource, stage reproStage) (note, line string) {
	body := ex.Request.Body
	// Past the bound the body is read from a file: the message file when
	// it holds the bytes sent (all of it, or but its last newline), else
	// BODY, a file the note asks for.
	file, withNL := "", false
	if len(body) > reproBodyMax {
		switch {
		case src.file != "" && bytes.Equal(src.raw, body):
			file = src.file
		case src.file != "" && len(src.raw) == len(body)+1 && bytes.HasPrefix(src.raw, body) && src.raw[len(body)] == '\n':
			file, withNL = src.file, true
		default:
			file = "BODY"
			note = fmt.Sprintf("the body, %d bytes, is over the %d written here and is not shown: BODY stands for a file holding it", len(body), reproBodyMax)
		}
		if note == "" {
			note = fmt.Sprintf("the body, %d bytes, is over the %d written here: it is read from the message file", len(body), reproBodyMax)
		}
	}
	if ex.Transport == envelope.Stdio {
		if len(cmd) == 0 {
			return "", "" // no command to pipe it into: none is printed
		}
		// A fresh process needs the 2025 handshake before the message,
		// as far as the fixture's stage had it: none before a message
		// sent before initialize (or the stage's initialize itself),
		// initialize alone before one sent before initialized (review
		// rev82: the line sent the whole handshake, undoing the very
		// condition judged).
		hs := ""
		if version != envelope.V20260728 && stage != reproFresh {
			hs = printfEscape(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"wymcp-check","version":"1"}}}`, handshakeID(body), version)) + `\n`
			if stage != reproInitializing {
				hs += printfEscape([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)) + `\n`
			}
		}
		switch {
		case file == "":
			return "", "printf '" + hs + printfEscape(body) + `\n' | ` + shellJoin(cmd)
		case withNL && hs == "":
			// The file is the very line sent.
			return note, shellJoin(cmd) + " < " + shellArg(file)
		}
		var parts []string
		if hs != "" {
			parts = append(parts, "printf '"+hs+"'")
		}
		parts = append(parts, "cat "+shellArg(file))
		if !withNL {
			parts = append(parts, `printf '\n'`)
		}
		return note, "{ " + strings.Join(parts, "; ") + "; } | " + shellJoin(cmd)
	}
	var b strings.Builder
	switch {
	case file == "":
		b.WriteString("printf '" + printfEscape(body) + "' | ")
	case withNL:
		// (curl would send the newline the message did not)
		fmt.Fprintf(&b, "head -c %d %s | ", len(body), shellArg(file))
	}
	b.WriteString("curl -sS -i -X " + ex.Request.HTTPMethod())
	keys := make([]string, 0, len(ex.Request.Header))
	for k := range ex.Request.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range ex.Request.Header[k] {
			b.WriteString(" -H " + shellArg(k+": "+v))
		}
	}
	for k := range extra {
		b.WriteString(" -H " + shellArg(k+": <redacted>"))
	}
	if file == "" || withNL {
		b.WriteString(" --data-binary @-")
	} else {
		b.WriteString(" --data-binary " + shellArg("@"+file))
	}
	b.WriteString(" " + shellArg(endpoint))
	return note, b.String()
}

// shellArg quotes s as one shell word. One holding a byte outside
// printable ASCII (a server's Mcp-Session-Id with U+202E or a C1
// control, a non-ASCII path) is written "$(printf '…')" with octal
// escapes: the line shows no control or format character, as no other
// line of send's does, and still runs in POSIX sh and bash (header
// values hold no newline, which $(…) would drop).
func shellArg(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return `"$(printf '` + printfEscape([]byte(s)) + `')"`
		}
	}
	return shellQuote(s)
}

// printfEscape writes bytes for a single-quoted printf format: printable
// ASCII as is, the rest as octal \ooo, so any body survives a copy and
// paste; octal, for POSIX printf (dash's) knows no \xHH.
func printfEscape(b []byte) string {
	var s strings.Builder
	for i, c := range b {
		switch {
		case i == 0 && c == '-':
			// A format starting with "-" is an option to dash's printf.
			s.WriteString(`\055`)
		case c == '\'':
			s.WriteString(`'\''`)
		case c == '%':
			s.WriteString("%%")
		case c == '\\':
			s.WriteString(`\\`)
		case c >= 0x20 && c < 0x7f:
			s.WriteByte(c)
		default:
			fmt.Fprintf(&s, `\%03o`, c)
		}
	}
	return s.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellArg(a)
	}
	return strings.Join(q, " ")
}

// handshakeID is the id of the initialize a stdio reproduce line writes
// before the message: the least one the message does not use itself, in
// either JSON type, for a fresh session must not see an id twice
// (T-RPC-4) and the message's own id may be 0.
func handshakeID(body []byte) int {
	used := map[string]bool{}
	v := gjson.ParseBytes(body)
	msgs := []gjson.Result{v}
	if v.IsArray() {
		msgs = v.Array() // a batch's members each have an id
	}
	for _, m := range msgs {
		// (Compared by value, as ids are: 1.0 is 1.)
		if k := envelope.IDKey(m.Get("id")); k != "" {
			used[k], used[envelope.OtherTypeKey(k)] = true, true
		}
	}
	n := 0
	for used[envelope.IntIDKey(n)] {
		n++
	}
	return n
}
