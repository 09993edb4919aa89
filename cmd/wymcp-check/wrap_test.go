package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/refserver"
)

// wrapRefserverEnv makes the test binary, run by wrap, serve the
// reference server over its stdio, with the fault it names ("-" for
// none): wrap starts a command, which a test binary's tests are not.
const wrapRefserverEnv = "WYMCP_CMD_WRAP_REFSERVER"

func init() {
	fault, ok := os.LookupEnv(wrapRefserverEnv)
	if !ok {
		return
	}
	if fault == "-" {
		fault = ""
	}
	srv, err := refserver.New(refserver.Options{Fault: fault})
	if err != nil {
		os.Exit(3)
	}
	srv.ServeStdio(context.Background(), os.Stdin, os.Stdout)
	os.Exit(0)
}

// TestWrapJudgesABanner: a server that prints a startup banner on stdout
// before any request breaks T-STDIO-2 (stdout carries only messages):
// wrap judges the banner with the first request's reply and fails it
// (RPC1001), as check fails the same server, and lint of the recording
// agrees. wrap only showed it, and passed. The twin prints its banner
// on stderr, where it belongs, and passes.
func TestWrapJudgesABanner(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	tests := []struct {
		name     string
		banner   string // the shell's redirection of the banner
		want     string
		wantLint exitCode
	}{
		// The second exchange is the end of the server's input.
		{"banner on stdout", "", "2 exchanges judged: 1 ok, 0 warn, 1 fail", exitFindings},
		{"banner on stderr", ">&2", "2 exchanges judged: 2 ok, 0 warn, 0 fail", exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			server := `echo "Server listening on stdio" ` + tt.banner + `; read line; ` +
				`printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}'; cat >/dev/null`
			client := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
			code, errOut := wrapAfterBanner(t, client, "--color", "never", "--record", rec, "--", "/bin/sh", "-c", server)
			if code != exitOK {
				t.Errorf("exit %d, want the server's 0", code)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, errOut)
			}
			if fails := strings.Contains(errOut, "fail RPC1001"); fails != (tt.wantLint != exitOK) {
				t.Errorf("RPC1001 fails: %v, want %v:\n%s", fails, tt.wantLint != exitOK, errOut)
			}
			code, lintOut, _ := runMain(t, "", "lint", rec)
			if code != tt.wantLint || strings.Contains(lintOut, "fail RPC1001") != (tt.wantLint != exitOK) {
				t.Errorf("lint of the recording: exit %d, want %d\n%s", code, tt.wantLint, lintOut)
			}
		})
	}
}

// wrapAfterBanner runs wrap with args as a client that writes request
// once the server's banner has passed (on either stream), so that the
// banner comes while no request waits, and closes stdin once the reply
// has come. It returns the exit code and wrap's stderr.
func wrapAfterBanner(t *testing.T, request string, args ...string) (exitCode, string) {
	t.Helper()
	s, _, _ := testStreams()
	out, errOut := &lockedBuf{}, &lockedBuf{}
	pr, pw := io.Pipe()
	s.In, s.Out, s.ErrOut = pr, out, errOut
	client := make(chan struct{})
	go func() {
		defer close(client)
		defer pw.Close()
		waitFor := func(what string, came func() bool) bool {
			for deadline := time.Now().Add(10 * time.Second); !came(); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("no %s within 10s", what)
					return false
				}
			}
			return true
		}
		// The banner on a line of its own: wrap's first line quotes the
		// command, banner and all.
		banner := "Server listening on stdio\n"
		if !waitFor("banner", func() bool {
			return strings.HasPrefix(out.String(), banner) || strings.Contains(errOut.String(), "\n"+banner)
		}) {
			return
		}
		io.WriteString(pw, request)
		waitFor("reply", func() bool { return strings.Contains(out.String(), `"id":0,"result"`) })
	}()
	code := Main(append([]string{"wrap"}, args...), s)
	<-client
	return code, errOut.String()
}

// wrapPlay runs wrap with args as a client that plays steps: a line to
// write, "sleep:N" (ms), or "wait:TEXT" (until the client has read
// TEXT); then it closes stdin. It returns the exit code and wrap's
// stderr.
func wrapPlay(t *testing.T, steps []string, args ...string) (exitCode, string) {
	t.Helper()
	s, _, _ := testStreams()
	out, errOut := &lockedBuf{}, &lockedBuf{}
	pr, pw := io.Pipe()
	s.In, s.Out, s.ErrOut = pr, out, errOut
	client := make(chan struct{})
	go func() {
		defer close(client)
		defer pw.Close()
		for _, step := range steps {
			switch what, arg, _ := strings.Cut(step, ":"); what {
			case "sleep":
				d, _ := time.ParseDuration(arg + "ms")
				time.Sleep(d)
			case "wait":
				for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), arg); time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Errorf("no %q within 10s", arg)
						return
					}
				}
			default:
				io.WriteString(pw, step+"\n")
			}
		}
	}()
	code := Main(append([]string{"wrap"}, args...), s)
	<-client
	return code, errOut.String()
}

const (
	wrapInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	wrapAdd  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`
	wrapPing = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
)

// initialized is the client's steps after a 2025-11-25 handshake:
// initialize, its answer awaited, notifications/initialized.
func initialized(steps ...string) []string {
	return append([]string{wrapInit, `wait:"id":0`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`}, steps...)
}

// TestWrapJudgesSilence: a request the server never answers, while it
// answers a later one, fails RPC1006 past --timeout, as check and send
// fail it once a liveness probe is answered; lint of the recording
// agrees. wrap left it "no reply", not judged, and passed. Twins: the
// server answers (the reference server without its fault), and the
// client cancels the request, so no reply is owed (the watcher's
// cancellation path): both pass, live and in lint.
func TestWrapJudgesSilence(t *testing.T) {
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"gave up"}}`
	tests := []struct {
		name, fault string
		steps       []string
		want        []string
		wantLint    exitCode
	}{
		{"silent", "hang", []string{wrapAdd, "sleep:20", wrapPing, `wait:"id":2`, "sleep:500"},
			[]string{"fail RPC1006", "no response within 300ms; the server answered a later request (#5), so it is alive and left this request unanswered", "1 fail"}, exitFindings},
		{"answered", "-", []string{wrapAdd, "sleep:20", wrapPing, `wait:"id":2`, "sleep:500"},
			[]string{"5 exchanges judged: 5 ok, 0 warn, 0 fail"}, exitOK}, // the fifth, the end of input
		{"cancelled", "hang", []string{wrapAdd, cancel, "sleep:20", wrapPing, `wait:"id":2`, "sleep:500"},
			[]string{"0 fail; ", "→ ok"}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(wrapRefserverEnv, tt.fault)
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			steps := initialized(tt.steps...)
			code, errOut := wrapPlay(t, steps, "--color", "never", "--timeout", "300ms", "--record", rec, "--", os.Args[0])
			if code != exitOK {
				t.Errorf("exit %d, want the server's 0", code)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			code, lintOut, _ := runMain(t, "", "lint", rec)
			if code != tt.wantLint || strings.Contains(lintOut, "fail RPC1006") != (tt.wantLint != exitOK) {
				t.Errorf("lint of the recording: exit %d, want %d\n%s", code, tt.wantLint, lintOut)
			}
		})
	}
}

// TestWrapJudgesASecondResponse: a server that answers a request twice
// fails RPC1006 once, for the second response, as check fails a second
// response to a request an earlier exchange took the response of; lint
// of the recording agrees. A third response fails it once more, as
// check fails each line that is a second response. wrap showed the
// second as answering nothing, and passed; then it judged the first
// reply again with each later one. The twin answers once.
func TestWrapJudgesASecondResponse(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	const copied = "fail RPC1006  reply: the response to the request with id 0 came again, byte for byte, after an earlier exchange had taken it"
	for _, tt := range []struct {
		name, times string
		want        string
		fails       int // RPC1006's
		wantLint    exitCode
	}{
		{"twice", `"$r" "$r"`, copied, 1, exitFindings},
		{"three times", `"$r" "$r" "$r"`, copied, 2, exitFindings},
		{"once", `"$r"`, "2 exchanges judged: 2 ok, 0 warn, 0 fail", 0, exitOK}, // the second, the end of input
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			server := `read line; r='{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}'; ` +
				`printf '%s\n' ` + tt.times + `; cat >/dev/null`
			code, errOut := wrapPlay(t, []string{wrapInit, `wait:"id":0`, "sleep:100"}, "--color", "never", "--record", rec, "--", "/bin/sh", "-c", server)
			if code != exitOK {
				t.Errorf("exit %d, want the server's 0", code)
			}
			if !strings.Contains(errOut, tt.want) || strings.Count(errOut, "fail RPC1006") != tt.fails {
				t.Errorf("stderr lacks %q, or fails RPC1006 other than %d times:\n%s", tt.want, tt.fails, errOut)
			}
			code, lintOut, _ := runMain(t, "", "lint", rec)
			if code != tt.wantLint || strings.Count(lintOut, "came again, byte for byte") != tt.fails {
				t.Errorf("lint of the recording: exit %d, want %d\n%s", code, tt.wantLint, lintOut)
			}
		})
	}
}

// serverFindings are the checks that failed or warned on the server's
// messages in send's or wrap's output, sorted: "fail RPC1008"; the
// client's own (CLI) are left out.
func serverFindings(out string) []string {
	var got []string
	for _, m := range regexp.MustCompile(`\b(fail|warn) ([A-Z]{3,4}[0-9]{4})\b`).FindAllStringSubmatch(out, -1) {
		if !strings.HasPrefix(m[2], "CLI") {
			got = append(got, m[1]+" "+m[2])
		}
	}
	slices.Sort(got)
	return got
}

// TestWrapSecondResponseCountsAsSend: a request answered twice, the
// first time wrongly, draws through wrap the findings send gives the same
// server: the first reply's once, and one RPC1006 for the second. wrap
// judged the first reply again with the second (5 fails where send gave
// 3). Its report and lint's of its recording agree row for row. The
// twin, answered once, draws no RPC1006 in either.
func TestWrapSecondResponseCountsAsSend(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		rpc1006 int
	}{{"prompts-twice", 1}, {"once", 0}} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv(stdioServerEnv, tc.mode)
			_, sent, errOut := runMain(t, `{"jsonrpc":"2.0","id":{{id}},"method":"prompts/list"}`, "send", "--timeout", "2s", "-", "--", os.Args[0])
			want := serverFindings(sent)
			if n := strings.Count(strings.Join(want, " "), "fail RPC1006"); n != tc.rpc1006 {
				t.Fatalf("send: %d RPC1006 fails, want %d:\n%s\n%s", n, tc.rpc1006, sent, errOut)
			}
			dir := t.TempDir()
			rec, live, linted := filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
			_, wrapped := wrapPlay(t, initialized(`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`, `wait:"id":1`, "sleep:300"),
				"--color", "never", "--record", rec, "--report", live, "--", os.Args[0])
			if d := cmp.Diff(want, serverFindings(wrapped)); d != "" {
				t.Errorf("wrap's findings, against send's (-send +wrap):\n%s\nsend:\n%s\nwrap:\n%s", d, sent, wrapped)
			}
			if code, _, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != exitFindings && code != exitOK {
				t.Fatalf("lint: exit %d: %s", code, errOut)
			}
			rows := func(p string) []reportRow {
				r := reportResults(t, p)
				for i := range r {
					r[i].File = "" // lint names the recording
				}
				slices.SortFunc(r, func(a, b reportRow) int {
					return strings.Compare(a.Fixture+a.Check+a.Path+a.Message, b.Fixture+b.Check+b.Path+b.Message)
				})
				return r
			}
			if d := cmp.Diff(rows(live), rows(linted)); d != "" {
				t.Errorf("lint of the recording, against wrap's report (-wrap +lint):\n%s", d)
			}
		})
	}
}

// TestWrapJudgesAResponseToNothing: a response whose id no request of
// the client's carried answers nothing (T-RPC-5): it fails RPC1006 in the
// exchange open when it came, as check fails such a line, and lint of the
// recording agrees. It passed, answering "no request waiting for a
// reply". The twin answers only what was asked.
func TestWrapJudgesAResponseToNothing(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	for _, tt := range []struct {
		name, stray string
		wantLint    exitCode
	}{
		{"unsent", `printf '%s\n' '{"jsonrpc":"2.0","id":99,"result":{}}'; `, exitFindings},
		{"none", "", exitOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			server := `read a; read b; ` + tt.stray + `printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{}}' ` +
				`'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}'; cat >/dev/null`
			ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
			_, errOut := wrapPlay(t, []string{wrapInit, ping, `wait:"id":0`, "sleep:100"}, "--color", "never", "--record", rec, "--", "/bin/sh", "-c", server)
			const finding = "a response with id 99 came, and no request"
			want := tt.wantLint != exitOK
			if strings.Contains(errOut, finding) != want {
				t.Errorf("RPC1006 on the stray: %v, want %v:\n%s", !want, want, errOut)
			}
			code, lintOut, _ := runMain(t, "", "lint", rec)
			if code != tt.wantLint || strings.Contains(lintOut, finding) != want {
				t.Errorf("lint of the recording: exit %d, want %d\n%s", code, tt.wantLint, lintOut)
			}
		})
	}
}

// TestWrapReplyOverMaxBytes: a line over --max-bytes that the server
// writes while a request waits is part of that request's reply, which
// then cannot be judged: an error (could not judge) that fails the gate,
// as send gives, and lint of the recording agrees. It was marked ok after
// the next valid line. The twin's line is within the bound, and its reply
// is judged (the line is no message: RPC1001 fails it).
func TestWrapReplyOverMaxBytes(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	for _, tt := range []struct {
		name  string
		bytes int
		want  string
	}{
		{"over", 5000, "error RPC1006  could not judge: the request or its reply is larger than --max-bytes (1000 bytes)"},
		{"within", 500, "fail RPC1001"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			server := `read line; head -c ` + strconv.Itoa(tt.bytes) + ` /dev/zero | tr '\0' x; echo; ` +
				`printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}'; cat >/dev/null`
			_, errOut := wrapPlay(t, []string{wrapInit, `wait:"id":0`, "sleep:100"}, "--color", "never", "--max-bytes", "1000", "--record", rec, "--", "/bin/sh", "-c", server)
			// The other exchange, the end of input, passes.
			if !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "2 exchanges judged: 1 ok, 0 warn, 1 fail") {
				t.Errorf("stderr lacks %q, or passes the exchange:\n%s", tt.want, errOut)
			}
			code, lintOut, _ := runMain(t, "", "lint", rec)
			if what, _, _ := strings.Cut(tt.want, "  "); code != exitFindings || !strings.Contains(lintOut, what) {
				t.Errorf("lint of the recording: exit %d, want %d and %q\n%s", code, exitFindings, what, lintOut)
			}
		})
	}
}

// TestWrapJudgesTheEndOfInput: when the client closes its end, what the
// server writes after its stdin closed is judged as check judges it, in
// an exchange of its own (#N EOF): a goodbye line on stdout breaks
// T-STDIO-2 (RPC1001 fails it), and a 2026-07-28 server still running
// when --grace runs out warns PRO1011 (T-STDIO-6; skipped at 2025). wrap
// showed the goodbye "judged with the next request's reply", and no
// next request came: the server passed. Twins exit quietly, and pass.
// lint of the recording gives every verdict wrap gave.
func TestWrapJudgesTheEndOfInput(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	v2025 := initialized("sleep:50")
	v2026 := []string{discover, `wait:"id":1`}
	tests := []struct {
		name   string
		steps  []string // the client's, before it closes its end
		after  string   // the shell's, once the reference server ended
		eof    []string // the end of input's PRO1011 and RPC1001 verdicts (RPC1001 skips where no line came)
		exited bool
	}{
		{"goodbye, 2025", v2025, "echo Goodbye!", []string{"PRO1011 skip", "RPC1001 fail reply"}, true},
		{"goodbye, 2026", v2026, "echo Goodbye!", []string{"PRO1011 pass", "RPC1001 fail reply"}, true},
		{"quiet, 2025", v2025, "", []string{"PRO1011 skip", "RPC1001 skip"}, true},
		{"quiet, 2026", v2026, "", []string{"PRO1011 pass", "RPC1001 skip"}, true},
		{"lingers, 2025", v2025, "sleep 5", []string{"PRO1011 skip", "RPC1001 skip"}, false},
		// --grace (500ms here) is shorter than check's 5 s wait: it
		// tells nothing of "promptly", and PRO1011 skips as check's does
		// when its wait was cut short (review rev51; the warning past
		// the wait is proxy's TestStdioEndOfInput).
		{"lingers, 2026", v2026, "sleep 5", []string{"PRO1011 skip", "RPC1001 skip"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(wrapRefserverEnv, "-")
			dir := t.TempDir()
			rec, rep, linted := filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "wrap.json"), filepath.Join(dir, "lint.json")
			server := `"$0"; ` + tt.after
			code, errOut := wrapPlay(t, tt.steps, "--color", "never", "--grace", "500ms", "--record", rec, "--report", rep, "--format", "json",
				"--", "/bin/sh", "-c", server, os.Args[0])
			if want := map[bool]exitCode{true: exitOK, false: 128 + 15}[tt.exited]; code != want {
				t.Errorf("exit %d, want %d:\n%s", code, want, errOut)
			}
			live := reportRows(t, rep)
			var eof []string
			for _, row := range live {
				fixture, rest, _ := strings.Cut(row, " EOF ")
				if strings.HasPrefix(fixture, "#") && !strings.Contains(fixture, " ") {
					if c, _, _ := strings.Cut(rest, " "); c == "RPC1001" || c == "PRO1011" {
						eof = append(eof, rest)
					}
				}
			}
			if diff := cmp.Diff(tt.eof, eof); diff != "" {
				t.Errorf("the end of input's verdicts (-want +got):\n%s\n%s", diff, errOut)
			}
			lintCode, lintOut, lintErr := runMain(t, "", "lint", "--format", "json", "-o", linted, rec)
			if lintCode != exitOK && lintCode != exitFindings {
				t.Fatalf("lint of the recording: exit %d\n%s%s", lintCode, lintOut, lintErr)
			}
			if diff := cmp.Diff(live, reportRows(t, linted)); diff != "" {
				t.Errorf("verdicts: wrap's (-) and lint's of its recording (+) differ:\n%s", diff)
			}
		})
	}
}

// TestWrapTokenFreeOnceAnswered: a request that offered a progress token
// is answered, and the client sends the next with the same token (the
// TypeScript SDK reuses them) once it has the answer: the token is free
// again (T-PROG-1: unique across active requests), though wrap's pair of
// the first waits --quiet for late progress. The request stayed open for
// the client judge until then, and CLI1003 failed the reuse (review
// rev57); lint of the recording agrees. The twin reuses the token while
// the first request is still in flight (the server hangs on it) and
// fails.
func TestWrapTokenFreeOnceAnswered(t *testing.T) {
	call := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":{"progressToken":"t"}}}`
	}
	tests := []struct {
		name, fault string
		steps       []string
		fail        bool
	}{
		{"after the answer", "-", []string{call(1), `wait:"id":1`, call(2), `wait:"id":2`, call(3), `wait:"id":3`, "sleep:400"}, false},
		{"in flight", "hang", []string{call(1), "sleep:50", call(2), "sleep:400"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(wrapRefserverEnv, tt.fault)
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			steps := initialized(tt.steps...)
			_, errOut := wrapPlay(t, steps, "--color", "never", "--timeout", "300ms", "--record", rec, "--", os.Args[0])
			if got := strings.Contains(errOut, "fail CLI1003"); got != tt.fail {
				t.Errorf("CLI1003 failed: %v, want %v:\n%s", got, tt.fail, errOut)
			}
			_, lintOut, _ := runMain(t, "", "lint", rec)
			if got := strings.Contains(lintOut, "fail CLI1003"); got != tt.fail {
				t.Errorf("lint of the recording: CLI1003 failed: %v, want %v:\n%s", got, tt.fail, lintOut)
			}
		})
	}
}
