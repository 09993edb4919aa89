package runner_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/refserver"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transport"
)

// serverEnv makes the test binary a stdio reference server, so stdio runs
// drive a real child process without building anything.
const serverEnv = "WYMCP_RUNNER_REFSERVER"

// replyLatencyEnv makes the reference server wait the duration it holds
// before each write.
const replyLatencyEnv = "WYMCP_RUNNER_REPLY_LATENCY"

func TestMain(m *testing.M) {
	if v := os.Getenv(ignoringEnv); v != "" {
		serveIgnoring(os.Stdin, os.Stdout, v)
		os.Exit(0)
	}
	if os.Getenv(babblingEnv) != "" {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			os.Stdout.WriteString("not json\n")
		}
		os.Exit(0)
	}
	if os.Getenv(pingLogsEnv) != "" {
		servePingLogs(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	if os.Getenv(dualEraEnv) != "" {
		serveDualEra(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	if fault, ok := os.LookupEnv(serverEnv); ok {
		opts := refserver.Options{Fault: fault}
		if os.Getenv(batchOneEnv) != "" || os.Getenv(only0326Env) != "" {
			opts.Only20250326 = true
		}
		srv, err := refserver.New(opts)
		if err != nil {
			os.Exit(2)
		}
		if d, err := time.ParseDuration(os.Getenv(slowStartEnv)); err == nil {
			time.Sleep(d)
		}
		if once := os.Getenv(startOnceEnv); once != "" {
			if _, err := os.Stat(once); err == nil {
				os.Exit(7) // started before: this server cannot start again
			}
			os.WriteFile(once, nil, 0o600)
		}
		var in io.Reader = os.Stdin
		if m := os.Getenv(dieOnEnv); m != "" {
			in = dieOn(os.Stdin, m)
		}
		if os.Getenv(silentPreInitEnv) != "" {
			in = silentPreInit(in)
		}
		var outMu sync.Mutex
		if mark := os.Getenv(garbleEnv); mark != "" {
			in = garble(in, mark, &outMu)
		}
		if p := os.Getenv(inputLogEnv); p != "" {
			log, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				os.Exit(2)
			}
			in = io.TeeReader(in, log)
		}
		// lastID is the id of the last tools/list result written
		// (atEOFEnv "again"): the tools/list fixture's, which a
		// multiplexed run took itself, not a marker's, which the
		// transport knew.
		var lastID []byte
		var out io.Writer = writerFunc(func(b []byte) (int, error) {
			outMu.Lock()
			defer outMu.Unlock()
			if id := gjson.GetBytes(b, "id"); id.Exists() && gjson.GetBytes(b, "result.tools").Exists() {
				lastID = []byte(id.Raw)
			}
			return os.Stdout.Write(b)
		})
		if d, err := time.ParseDuration(os.Getenv(replyLatencyEnv)); err == nil {
			out = writerFunc(func(b []byte) (int, error) {
				time.Sleep(d)
				return os.Stdout.Write(b)
			})
		}
		if os.Getenv(batchOneEnv) != "" {
			out = &batchOne{w: out}
		}
		if err := srv.ServeStdio(context.Background(), in, out); err != nil {
			os.Stderr.WriteString("refserver: " + err.Error() + "\n")
			if errors.Is(err, refserver.ErrCrash) {
				os.Exit(3)
			}
			os.Exit(1)
		}
		switch os.Getenv(atEOFEnv) {
		case "goodbye":
			os.Stdout.WriteString("Goodbye!\n")
		case "again":
			// The tools/list fixture, answered again otherwise.
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(lastID) + `,"result":{"tools":[],"resultType":"complete"}}` + "\n")
		case "linger":
			time.Sleep(time.Minute) // until SIGTERM
		}
		os.Exit(0)
	}
	// Under -race a test binary sleeps a second at exit unless told not
	// to: the servers started from it would linger after their stdin
	// closed (PRO1011). The variable is read by each child at its start.
	os.Setenv("GORACE", os.Getenv("GORACE")+" atexit_sleep_ms=0")
	os.Exit(m.Run())
}

func runStdio(t *testing.T, fault, protocol string) *collect {
	t.Helper()
	t.Setenv(serverEnv, fault)
	target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: 2 * time.Second, Quiet: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	return runCorpus(t, target, protocol)
}

// atEOFEnv makes the reference server, once its stdin closed, write a
// goodbye line on stdout ("goodbye"), stay until signalled ("linger"),
// or answer the tools/list fixture again ("again").
const atEOFEnv = "WYMCP_RUNNER_AT_EOF"

// TestStdinClosedStdio: the end of the run's server is judged as an
// exchange of its own. A goodbye line on stdout after stdin closed was
// dropped by the shutdown, unjudged (review rev41); it fails RPC1001
// (T-STDIO-2). A 2026-07-28 server that stays warns PRO1011 (T-STDIO-6),
// one at 2025-11-25 does not; the server that leaves quietly passes both.
func TestStdinClosedStdio(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "lifecycle/ping" && f.ID != "tools/list" })
	tests := []struct {
		atEOF, protocol string
		want            []string // the findings on session/stdin-closed
		passes          []string // the checks that judged it and passed
	}{
		{"", "auto", nil, []string{"PRO1011", "PRO1005"}},
		{"goodbye", "auto", []string{"RPC1001 fail"}, []string{"PRO1011"}},
		{"linger", "auto", []string{"PRO1011 warn"}, nil},
		{"linger", envelope.V20251125, nil, nil},
		// A second response after stdin closed, to a request a
		// multiplexed exchange took the response for (review rev51: the
		// transport did not know it, and it passed).
		{"again", "auto", []string{"RPC1006 fail"}, []string{"PRO1011"}},
	}
	for _, tt := range tests {
		t.Run(tt.atEOF+"/"+tt.protocol, func(t *testing.T) {
			t.Setenv(serverEnv, "")
			t.Setenv(atEOFEnv, tt.atEOF)
			target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: 2 * time.Second, Quiet: 100 * time.Millisecond, Grace: 300 * time.Millisecond, Exit: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer target.Close()
			c := &collect{}
			if _, err := runner.Run(context.Background(), target, runner.Options{Protocol: tt.protocol, Fixtures: fx, Contract: envelope.Strict(), Deadline: time.Minute, Parallel: 8}, c); err != nil {
				t.Fatal(err)
			}
			var got, passed []string
			judged := false
			for _, v := range c.verdicts {
				switch {
				case v.Fixture != runner.StdinClosed:
					if v.Status != checks.StatusPass && v.Status != checks.StatusSkip {
						t.Errorf("%s %s %s: %s %v", v.Fixture, v.Check.ID, v.Status, v.Reason, v.Findings)
					}
					continue
				case v.Status == checks.StatusPass:
					passed = append(passed, v.Check.ID)
				case v.Status != checks.StatusSkip && slices.Contains([]string{"RPC1001", "RPC1006", "PRO1011"}, v.Check.ID):
					// (What a stray's content breaks is other checks'.)
					got = append(got, v.Check.ID+" "+string(v.Status))
				}
				judged = true
			}
			if !judged {
				t.Fatal("no verdict on session/stdin-closed")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings on session/stdin-closed (-want +got):\n%s", diff)
			}
			for _, id := range tt.passes {
				if !slices.Contains(passed, id) {
					t.Errorf("%s did not pass on session/stdin-closed (passed: %v)", id, passed)
				}
			}
		})
	}
}

func TestCleanServerStdio(t *testing.T) {
	for _, p := range []string{"auto", envelope.V20251125} {
		t.Run(p, func(t *testing.T) {
			c := runStdio(t, "", p)
			if ids, detail := c.bad(); len(ids) > 0 {
				t.Errorf("the clean server drew findings over stdio:\n%s", detail)
			}
		})
	}
}

// dieOnEnv ("method") makes the reference server exit, status 1, when it
// reads a request of the method.
const dieOnEnv = "WYMCP_RUNNER_DIE_ON"

// dieOn is r's lines until one is a request of method: then the process
// exits.
func dieOn(r io.Reader, method string) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if gjson.GetBytes(sc.Bytes(), "method").Str == method {
				os.Exit(1)
			}
			pw.Write(append(sc.Bytes(), '\n'))
		}
		pw.Close()
	}()
	return pr
}

// garbleEnv (a file) makes the reference server's first request with an
// id JSON-RPC allows and MCP does not (true, an object), in the first
// process that reads one (the file marks it), never reach it: a line
// that is no JSON, shaped as the null-id reply such a request owes, is
// written in its place, as a write cut short or two writes interleaved
// leave one (review rev41).
const garbleEnv = "WYMCP_RUNNER_GARBLE"

// garble is r with that request replaced as garbleEnv says; mu guards
// the process's stdout.
func garble(r io.Reader, mark string, mu *sync.Mutex) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			id := gjson.GetBytes(sc.Bytes(), "id")
			if _, err := os.Stat(mark); err != nil && (id.Type == gjson.True || id.IsObject()) {
				os.WriteFile(mark, nil, 0o600)
				mu.Lock()
				os.Stdout.WriteString(`{"jsonrpc":"2.0","id":null,"result":{"x":1}` + "\n")
				mu.Unlock()
				continue
			}
			pw.Write(append(sc.Bytes(), '\n'))
		}
		pw.Close()
	}()
	return pr
}

// silentPreInitEnv makes the reference server leave every request before
// an initialize unanswered: it never reads them.
const silentPreInitEnv = "WYMCP_RUNNER_SILENT_PRE_INIT"

// silentPreInit is r's lines without the requests before the first
// initialize.
func silentPreInit(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<24)
		init := false
		for sc.Scan() {
			m := gjson.GetBytes(sc.Bytes(), "method").Str
			init = init || m == "initialize"
			if !init && gjson.GetBytes(sc.Bytes(), "id").Exists() {
				continue
			}
			pw.Write(append(sc.Bytes(), '\n'))
		}
		pw.Close()
	}()
	return pr
}

// TestSilentBeforeInitStdio: a server that leaves requests before
// initialize unanswered fails RPC1006 on them. A ping was its liveness
// probe, which it left unanswered too, and the fixtures were "could not
// judge"; an initialize is the probe in a process that has not
// initialized. The twin: the server that answers them passes.
func TestSilentBeforeInitStdio(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool {
		return f.ID != "lifecycle/ping-before-initialize" && f.ID != "lifecycle/request-before-initialize"
	})
	if len(fx) != 2 {
		t.Fatalf("want the two before-initialize fixtures, got %d", len(fx))
	}
	for _, silent := range []bool{false, true} {
		if silent {
			t.Setenv(silentPreInitEnv, "1")
		}
		t.Setenv(serverEnv, "")
		target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: time.Second, Quiet: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := corpusRunAt(t, target, 1, fx, envelope.V20251125)
		target.Close()
		var got []string
		for _, l := range rows {
			if f := strings.Fields(l); len(f) >= 3 && f[1] == "RPC1006" && strings.HasSuffix(f[0], "-initialize") {
				got = append(got, f[0]+" "+f[2])
			}
		}
		want := []string{"lifecycle/ping-before-initialize pass", "lifecycle/request-before-initialize pass"}
		if silent {
			want = []string{"lifecycle/ping-before-initialize fail", "lifecycle/request-before-initialize fail"}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("silent %v: RPC1006 (-want +got):\n%s\n%s", silent, diff, strings.Join(rows, "\n"))
		}
	}
}

// pingLogsEnv makes the test binary a 2025-11-25 stdio server that
// declares no logging and writes a log message before each ping's
// result (wrong, T-LOG-1), answering everything in order.
const pingLogsEnv = "WYMCP_RUNNER_PING_LOGS"

func servePingLogs(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		id := gjson.GetBytes(sc.Bytes(), "id")
		if !id.Exists() {
			continue
		}
		switch gjson.GetBytes(sc.Bytes(), "method").Str {
		case "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"pinglogs","version":"1"}}}`+"\n", id.Raw)
		case "ping":
			fmt.Fprint(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"pong"}}`+"\n")
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id.Raw)
		case "tools/list":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`+"\n", id.Raw)
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", id.Raw)
		}
	}
}

// exchangeNotes keeps each judged exchange's note by fixture.
type exchangeNotes struct {
	mu    sync.Mutex
	notes map[string]string
}

func (c *exchangeNotes) Exchange(j runner.Judged) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if j.Exchange != nil {
		c.notes[j.Fixture] = j.Exchange.Note
	}
	return nil
}
func (c *exchangeNotes) Facts(*expect.Facts) {}
func (c *exchangeNotes) Note(string)         {}

// TestMarkerMessagesNamed: in a multiplexed stdio run, a message the
// server writes for the checker's own marker ping (here a log message it
// may not send) lands past the fixture's response, before the marker's
// reply; the exchange says it may be the ping's, which the fixture was
// blamed for alone. The twin: with --parallel 1, no marker is written,
// and the message is the fixture's own liveness-free exchange with no
// such note.
func TestMarkerMessagesNamed(t *testing.T) {
	t.Setenv(pingLogsEnv, "1")
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "tools/list" })
	for _, parallel := range []int{8, 1} {
		target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: time.Second, Quiet: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		c := &exchangeNotes{notes: map[string]string{}}
		_, err = runner.Run(context.Background(), target, runner.Options{
			Fixtures: fx, Contract: envelope.Strict(), Deadline: time.Minute, Parallel: parallel, Protocol: envelope.V20251125,
		}, c)
		target.Close()
		if err != nil {
			t.Fatal(err)
		}
		note, ok := c.notes["tools/list"]
		if !ok {
			t.Fatalf("parallel %d: tools/list was not judged: %v", parallel, c.notes)
		}
		if got := strings.Contains(note, "the checker's own ping"); got != (parallel > 1) {
			t.Errorf("parallel %d: note %q, want it to name the marker ping: %v", parallel, note, parallel > 1)
		}
	}
}

// TestPrettyFixtureStdio: a user fixture whose body is JSON written over
// several lines goes on a stdio pipe as one line, as a client writes a
// message (T-STDIO-1 binds the sender): the server answered each line
// of it as a message of its own, and RPC1006 failed the server for the
// checker's framing. A body that is no JSON goes as written (its bytes
// are the fixture's point).
func TestPrettyFixtureStdio(t *testing.T) {
	pretty, err := fixtures.Parse("pretty.txtar", []byte("A ping written over several lines.\n-- fixture --\nid: user/pretty-ping\nrules: T-LIFE-5\nversions: all\ntransports: stdio\n-- body --\n{\n  \"jsonrpc\": \"2.0\",\n  \"id\": {{id}},\n  \"method\": \"ping\"\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(serverEnv, "")
	target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: time.Second, Quiet: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	rows, _ := corpusRunAt(t, target, 1, []*fixtures.Fixture{pretty}, envelope.V20251125)
	var sent string
	for _, l := range rows {
		if strings.HasPrefix(l, "user/pretty-ping sent ") {
			sent = l
		}
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "user/pretty-ping" && f[1] != "sent" && f[2] != "pass" && f[2] != "skip" {
			t.Errorf("%s", l)
		}
	}
	if sent == "" || strings.Contains(sent, `\n`) {
		t.Errorf("the body went as %q, want one line", sent)
	}
	// Lines that are no JSON are not sent: each would be a message.
	broken, err := fixtures.Parse("broken.txtar", []byte("Two broken lines.\n-- fixture --\nid: user/broken-lines\nrules: T-LIFE-5\nversions: all\ntransports: stdio\n-- body --\n{\"jsonrpc\":\n\"2.0\", oops\n"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: time.Second, Quiet: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	rows, _ = corpusRunAt(t, again, 1, []*fixtures.Fixture{broken}, envelope.V20251125)
	var errs []string
	for _, l := range rows {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "user/broken-lines" && f[1] != "sent" {
			if f[2] == "fail" {
				t.Errorf("%s", l)
			}
			if f[2] == "error" && strings.Contains(l, "broken.txtar: the body is 2 lines") {
				errs = append(errs, l)
			}
		}
	}
	if len(errs) != 1 {
		t.Errorf("want one error naming the file, got %q in\n%s", errs, strings.Join(rows, "\n"))
	}
}

// TestSetupDeathStdio: a server that dies on prompts/list while the run
// lists what it offers fails PRO1005 there, and is started again for the
// next listing: the resources are listed and their fixtures run. Those
// listings went to no process and failed PRO1005 too, and the resource
// fixtures lost their facts.
func TestSetupDeathStdio(t *testing.T) {
	t.Setenv(dieOnEnv, "prompts/list")
	c := runStdio(t, "", envelope.V20251125)
	var died []string
	for _, v := range c.verdicts {
		if v.Check.ID == "PRO1005" && v.Status == checks.StatusFail && strings.HasPrefix(v.Fixture, "setup/") {
			died = append(died, v.Fixture)
		}
	}
	if diff := cmp.Diff([]string{"setup/prompts-list"}, died); diff != "" {
		_, detail := c.bad()
		t.Errorf("setup exchanges failing PRO1005 (-want +got):\n%s\n%s", diff, detail)
	}
	if slices.ContainsFunc(c.notes, func(n string) bool { return strings.HasPrefix(n, "resources/list for the fixtures") }) {
		t.Errorf("the resources were not listed: %q", c.notes)
	}
}

// TestCrashStdio: the process dies on the opt-in valid tool call; that
// fixture fails PRO1005 with the exit status and stderr, the server is
// restarted, and every later fixture is judged as usual.
// only0326Env makes the stdio reference server speak 2025-03-26 only;
// inputLogEnv names a file every process appends what it reads to.
const (
	only0326Env = "WYMCP_RUNNER_ONLY_0326"
	inputLogEnv = "WYMCP_RUNNER_INPUT_LOG"
)

// TestRestartSpeaksTheSessionsVersion: a 2025-03-26 session is judged
// under 2025-06-18's rules, but its client names 2025-03-26: the
// handshake that restarts a server that died, and a fixture's
// {{version}} (lifecycle/initialize-again), ask for 2025-03-26, never
// 2025-06-18. Both asked 2025-06-18, so a server was judged in a session
// the run had not negotiated: the Go SDK, restarted in 2025-06-18,
// refused a batch, which 2025-03-26's rules failed (review rev7 #2, #3).
func TestRestartSpeaksTheSessionsVersion(t *testing.T) {
	log := t.TempDir() + "/input.log"
	t.Setenv(only0326Env, "1")
	t.Setenv(inputLogEnv, log)
	c := runStdio(t, "crash", envelope.V20250326)
	died := false
	for _, v := range c.verdicts {
		died = died || v.Check.ID == "PRO1005" && v.Status == checks.StatusFail
	}
	input, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]int{}
	for _, line := range bytes.Split(input, []byte("\n")) {
		if m := gjson.ParseBytes(line); m.Get("method").Str == "initialize" {
			asked[m.Get("params.protocolVersion").Str]++
		}
	}
	// The run's handshake, the restart's and initialize-again's (other
	// fixtures ask for versions no server serves).
	if !died || asked[envelope.V20250326] < 3 || asked[envelope.V20250618] > 0 {
		t.Errorf("the server died: %v; initialize asked for (version: times) %v, want 2025-03-26 at least 3 times and 2025-06-18 never", died, asked)
	}
}

func TestCrashStdio(t *testing.T) {
	c := runStdio(t, "crash", "auto")
	got, detail := c.bad()
	if diff := cmp.Diff([]string{"PRO1005"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, detail)
	}
	// The crash fires on a valid call of add: each fixture that makes
	// one (args: valid) meets it.
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	validCall := map[string]bool{}
	for _, f := range fx {
		if f.Args == fixtures.ArgsValid {
			validCall[f.ID+"/add"] = true
		}
	}
	for _, v := range c.verdicts {
		if v.Check.ID == "PRO1005" && v.Status == checks.StatusFail {
			if !validCall[v.Fixture] {
				t.Errorf("PRO1005 failed on %s, want a valid call of add", v.Fixture)
			}
			if msg := v.Findings[0].Message; !strings.Contains(msg, "exit status 3") || !strings.Contains(msg, "crash fault") {
				t.Errorf("PRO1005 message lacks exit status or stderr: %s", msg)
			}
		}
	}
}

// babblingEnv makes the test binary a stdio program that answers every
// line with a line that is not JSON: no MCP server at all.
const babblingEnv = "WYMCP_RUNNER_BABBLING"

// TestNegotiationSaysWhatEachProbeGot: when no version can be agreed,
// the error names what every probe got back, server/discover included,
// as it was (a line without a response, quoted), not as the run later
// noted it.
func TestNegotiationSaysWhatEachProbeGot(t *testing.T) {
	t.Setenv(babblingEnv, "1")
	target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: 300 * time.Millisecond, Quiet: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	_, err = runner.Run(context.Background(), target, runner.Options{Contract: envelope.Strict()}, &collect{})
	if err == nil {
		t.Fatal("a program that answers no JSON was negotiated with")
	}
	// What came is quoted: a line that is not JSON.
	const came = `1 line without a response, the first not JSON: "not json"`
	for _, want := range []string{"initialize for 2025-11-25: no response", "initialize for 2025-06-18: no response", "server/discover: no response within", "initialize for 2025-11-25: no response within 300ms: " + came, "server/discover: no response within 300ms: " + came} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestLateReplyAfterTimeout: a server that handles one message at a
// time answers a request after its --timeout, then the liveness probe.
// The late reply names the request: it is the request's (RPC1006 passes,
// with a note), not the probe's (which failed RPC1004 for its id), and
// the probe's own reply lands in no later exchange (which failed "2
// responses" and SCH1001). The twin: the same request answered within
// its --timeout. In sequence and multiplexed alike.
func TestLateReplyAfterTimeout(t *testing.T) {
	t.Setenv(ignoringEnv, "1")
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool {
		return f.ID != "prompts/list" && f.ID != "lifecycle/ping" && f.ID != "id/string"
	})
	lim := transport.Limits{Timeout: 400 * time.Millisecond, Quiet: 50 * time.Millisecond}
	for _, work := range []string{"600ms", "100ms"} {
		t.Setenv(serialEnv, "prompts/list:"+work)
		for _, parallel := range []int{1, 8} {
			t.Run(fmt.Sprintf("%s/parallel=%d", work, parallel), func(t *testing.T) {
				rows, _ := stdioCorpusRunAt(t, lim, parallel, fx, envelope.V20251125)
				// Past --timeout the reply is silence within it (DESIGN),
				// and it is no other exchange's: nothing else fails.
				want := []string{}
				if work == "600ms" {
					want = []string{"prompts/list RPC1006 fail"}
				}
				var bad []string
				for _, l := range rows {
					if f := strings.Fields(l); len(f) >= 3 && f[2] == "fail" {
						bad = append(bad, strings.Join(f[:3], " "))
					}
				}
				if diff := cmp.Diff(want, bad, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("fails (-want +got):\n%s\nall rows:\n%s", diff, strings.Join(rows, "\n"))
				}
			})
		}
	}
}

// TestSerialServerNotSilent: a server that answers every message in
// order, each after 0.4 s (the audit's, with --timeout 3s), is never
// silent: under a multiplexed run its
// requests wait behind the markers and nudges the checker itself sent,
// and silence is judged by the server's quiet on what stands ahead of a
// request, not by the time since its send. The run gives the verdicts of
// one in sequence (before: RPC1006 fails and RPC1004 fails on the
// liveness probes, none in sequence).
func TestSerialServerNotSilent(t *testing.T) {
	t.Setenv(ignoringEnv, "1")
	t.Setenv(serialEnv, "*:400ms")
	// Requests it answers (it ignores a line it cannot read as one).
	answered := []string{"id/string", "id/integer", "id/zero", "id/negative", "id/unicode-string", "lifecycle/ping",
		"method/unknown", "prompts/list"}
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return !slices.Contains(answered, f.ID) })
	lim := transport.Limits{Timeout: 3 * time.Second, Quiet: 50 * time.Millisecond}
	seq, _ := stdioCorpusRunAt(t, lim, 1, fx, envelope.V20251125)
	if !slices.Contains(seq, "id/string RPC1006 pass ") {
		t.Fatalf("in sequence id/string was not answered: the test no longer tests this:\n%s", strings.Join(seq, "\n"))
	}
	mux, _ := stdioCorpusRunAt(t, lim, 8, fx, envelope.V20251125)
	if diff := cmp.Diff(seq, mux); diff != "" {
		t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
	}
}

// dualEraEnv makes the test binary a dual-era reference server: once it
// has answered a legacy initialize, its process speaks 2025 (T-COMPAT-2),
// and its results carry no resultType.
const dualEraEnv = "WYMCP_RUNNER_DUAL_ERA"

func serveDualEra(in io.Reader, out io.Writer) {
	srv, err := refserver.New(refserver.Options{})
	if err != nil {
		os.Exit(2)
	}
	var legacy atomic.Bool
	toSrv, fromClient := io.Pipe()
	fromSrv, toClient := io.Pipe()
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if gjson.GetBytes(sc.Bytes(), "method").Str == "initialize" {
				legacy.Store(true)
			}
			fromClient.Write(append(sc.Bytes(), '\n'))
		}
		fromClient.Close()
	}()
	go func() {
		// It leaves when its stdin closes, as a server SHOULD (PRO1011).
		srv.ServeStdio(context.Background(), toSrv, toClient)
		toClient.Close()
	}()
	sc := bufio.NewScanner(fromSrv)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		if legacy.Load() {
			// (The reference server writes resultType beside other members.)
			line = bytes.Replace(line, []byte(`"resultType":"complete",`), nil, 1)
			line = bytes.Replace(line, []byte(`,"resultType":"complete"`), nil, 1)
		}
		out.Write(append(line, '\n'))
	}
}

// TestDualEraStdioNotSwitched: method/initialize-removed's legacy
// initialize switches a dual-era server's process to 2025 semantics
// (T-COMPAT-2); it goes to a process of its own, so no other fixture of
// a 2026-07-28 run is judged on a switched process (a helper's dual-era
// server drew 18 false fails before).
func TestDualEraStdioNotSwitched(t *testing.T) {
	t.Setenv(dualEraEnv, "1")
	for _, parallel := range []int{1, 8} {
		target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: 2 * time.Second, Quiet: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		fx, err := fixtures.Embedded()
		if err != nil {
			t.Fatal(err)
		}
		c := &collect{}
		_, err = runner.Run(context.Background(), target, runner.Options{
			Protocol: envelope.V20260728, Fixtures: fx, Parallel: parallel, Contract: envelope.Strict(),
			Schemas: checks.ProtocolSchemas(schema.NewRegistry()), Deadline: time.Minute,
		}, c)
		target.Close()
		if err != nil {
			t.Fatal(err)
		}
		if ids, detail := c.bad(); len(ids) > 0 {
			t.Errorf("--parallel %d: a dual-era server drew findings:\n%s", parallel, detail)
		}
	}
}
