package main

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

// stdioServerEnv makes the test binary a small stdio MCP server
// ("legacy-2024" answers initialize with 2024-11-05 alone):
// "once" answers each request once, "twice" writes each response twice;
// "progress-own" lists a tool and sends progress for the token a
// request offers before its response, "progress-foreign" progress for a
// token no request offered before every response but initialize's;
// "prompts-twice" answers prompts/list with a result that is no object
// and then again with a right one; "slow" answers each request but
// initialize after 200 ms; "silent-calls" never answers tools/call, nor
// does "stubborn-calls", which also ignores its stdin's end and SIGTERM
// (a minute); "dies"
// exits after its tenth request, and at once when started again (the
// file stdioMarkEnv names says it ran).
const stdioServerEnv = "WYMCP_CMD_STDIO_SERVER"

const stdioMarkEnv = "WYMCP_CMD_STDIO_MARK"

func TestMain(m *testing.M) {
	if os.Getenv(refserverStdioEnv) != "" {
		serveRefserverStdio()
	}
	if mode, ok := os.LookupEnv(stdioServerEnv); ok {
		serveStdio(mode)
		os.Exit(0)
	}
	// Under -race a test binary sleeps a second at exit unless told not
	// to: the servers started from it (the reference server behind
	// check and wrap) would linger after their stdin closed (PRO1011).
	// Each child reads the variable at its start.
	os.Setenv("GORACE", os.Getenv("GORACE")+" atexit_sleep_ms=0")
	os.Exit(m.Run())
}

func serveStdio(mode string) {
	if mode == "dies" {
		mark := os.Getenv(stdioMarkEnv)
		if _, err := os.Stat(mark); err == nil {
			os.Exit(1) // it cannot start again
		}
		os.WriteFile(mark, nil, 0o600)
	}
	if mode == "stubborn-calls" {
		signal.Ignore(syscall.SIGTERM)
		defer time.Sleep(time.Minute)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 8<<20)
	requests := 0
	for in.Scan() {
		msg := in.Bytes()
		id := gjson.GetBytes(msg, "id")
		if !id.Exists() {
			continue
		}
		if requests++; mode == "dies" && requests > 10 {
			os.Exit(1)
		}
		var reply string
		switch gjson.GetBytes(msg, "method").Str {
		case "initialize":
			v := "2025-11-25"
			if mode == "legacy-2024" {
				v = "2024-11-05" // a version the checker does not judge
			}
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":"1"}}}`, id.Raw, v)
		case "ping":
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id.Raw)
		case "tools/list":
			tools := `[]`
			if strings.HasPrefix(mode, "progress-") {
				tools = `[{"name":"echo","inputSchema":{"type":"object"}}]`
			}
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}`, id.Raw, tools)
		case "tools/call":
			if mode == "silent-calls" || mode == "stubborn-calls" {
				continue // never answered: a send of it waits out its --timeout
			}
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id.Raw)
		case "prompts/list":
			if mode == "prompts-twice" {
				os.Stdout.WriteString(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":[]}`, id.Raw) + "\n")
				reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"prompts":[]}}`, id.Raw)
				break
			}
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id.Raw)
		default:
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id.Raw)
		}
		if mode == "slow" && gjson.GetBytes(msg, "method").Str != "initialize" {
			time.Sleep(200 * time.Millisecond)
		}
		tok := gjson.GetBytes(msg, "params._meta.progressToken")
		switch {
		case mode == "progress-own" && tok.Exists():
			os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok.Raw + `,"progress":1}}` + "\n")
		case mode == "progress-foreign" && gjson.GetBytes(msg, "method").Str != "initialize":
			os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"not-offered","progress":1}}` + "\n")
		}
		os.Stdout.WriteString(reply + "\n")
		if mode == "twice" {
			os.Stdout.WriteString(reply + "\n")
		}
	}
}

// TestSendStdioReadsAsCheck: send over stdio reads what check reads
// by default (the lines up to a marker's reply), so a server that writes
// each response twice fails RPC1006 in send as in check; send read up to
// the first response only, and passed it. The twin: answered once, it
// passes.
func TestSendStdioReadsAsCheck(t *testing.T) {
	for mode, want := range map[string]exitCode{"twice": exitFindings, "once": exitOK} {
		t.Run(mode, func(t *testing.T) {
			t.Setenv(stdioServerEnv, mode)
			code, out, errOut := runMain(t, "", "send", "--timeout", "2s", "--fixture", "id/string", "--", os.Args[0])
			if code != want {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, want, out, errOut)
			}
			if failed := strings.Contains(out, "fail RPC1006"); failed != (mode == "twice") {
				t.Errorf("RPC1006 failed: %v, want %v:\n%s", failed, mode == "twice", out)
			}
		})
	}
}

// TestStdioProgressTokensLintAlike: over stdio check knows every progress
// token its requests offered, so progress for a token none offered fails
// PRO1003 (it warned that another request might own it), and the
// recording carries what check knew: lint gives the same PRO1003 rows.
// The twin: progress for the request's own token passes.
func TestStdioProgressTokensLintAlike(t *testing.T) {
	for _, tc := range []struct{ mode, parallel string }{{"progress-foreign", "8"}, {"progress-foreign", "1"}, {"progress-own", "8"}, {"progress-own", "1"}} {
		mode := tc.mode
		t.Run(mode+"/parallel="+tc.parallel, func(t *testing.T) {
			t.Setenv(stdioServerEnv, mode)
			dir := t.TempDir()
			rec, live, linted := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
			if code, _, errOut := runMain(t, "", "check", "--timeout", "2s", "--parallel", tc.parallel, "--call-tools=all", "--record", rec, "--format", "json", "-o", live, "--", os.Args[0]); code != exitFindings && code != exitOK {
				t.Fatalf("check: exit %d: %s", code, errOut)
			}
			if code, _, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != exitFindings && code != exitOK {
				t.Fatalf("lint: exit %d: %s", code, errOut)
			}
			rows := func(p string) (map[string]string, []string) {
				m, msgs := map[string]string{}, []string(nil)
				for _, x := range reportResults(t, p) {
					// Fixtures that do not apply are in check's report
					// alone: nothing of them was sent, or recorded.
					if x.Check == "PRO1003" && x.Status != "skip" {
						m[x.Fixture] = x.Status
						msgs = append(msgs, x.Message)
					}
				}
				return m, msgs
			}
			l, msgs := rows(live)
			g, _ := rows(linted)
			if diff := cmp.Diff(l, g); diff != "" {
				t.Errorf("PRO1003 rows of check (-) and lint of its recording (+):\n%s", diff)
			}
			count := map[string]int{}
			for _, st := range l {
				count[st]++
			}
			if mode == "progress-foreign" {
				if count["fail"] == 0 || count["warn"] > 0 || !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, "no request sent to the server still active offered") }) {
					t.Errorf("progress for a token no request offered: PRO1003 %v, want fails only:\n%s", count, strings.Join(msgs, "\n"))
				}
				return
			}
			if count["fail"] > 0 || count["warn"] > 0 || count["pass"] == 0 {
				t.Errorf("progress for the request's own token: PRO1003 %v, want passes only:\n%s", count, strings.Join(msgs, "\n"))
			}
		})
	}
}

// TestUnjudgedRunLintsUnjudged: a run that could negotiate no version it
// judges records what the server said, and lint of the recording judges
// it no more than check did: no verdict, and the same exit (3), where
// lint judged the probes under 2025-11-25 and reported a pass (a helper's
// sweep of TypeScript SDK 1.5, which speaks 2024-11-05 alone).
func TestUnjudgedRunLintsUnjudged(t *testing.T) {
	t.Setenv(stdioServerEnv, "legacy-2024")
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	code, out, errOut := runMain(t, "", "check", "--timeout", "2s", "--record", rec, "--", os.Args[0])
	if code != exitTarget || !strings.Contains(errOut, "2024-11-05") {
		t.Fatalf("check: exit %d, want %d:\n%s\n%s", code, exitTarget, out, errOut)
	}
	code, out, errOut = runMain(t, "", "lint", rec)
	if code != exitTarget || !strings.Contains(errOut, "the recorded run was aborted") || !strings.Contains(errOut, "2024-11-05") || strings.Contains(out, "PASSED") {
		t.Errorf("lint of the recording: exit %d, want %d, saying the run was aborted and why:\n%s\n%s", code, exitTarget, out, errOut)
	}
	// A recording without the abort's line (an older checker's) says
	// as much from its unjudged exchanges.
	raw, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if !strings.HasPrefix(line, `{"aborted"`) {
			kept = append(kept, line)
		}
	}
	code, out, errOut = runMain(t, strings.Join(kept, ""), "lint", "-")
	if code != exitTarget || !strings.Contains(errOut, "judged none of its") || !strings.Contains(errOut, "2024-11-05") || strings.Contains(out, "PASSED") {
		t.Errorf("lint of the recording without its abort: exit %d, want %d, saying the run judged nothing and why:\n%s\n%s", code, exitTarget, out, errOut)
	}
}

// TestAbortedRecordingLintsAborted: a run whose server died and could
// not be started again ends aborted (exit 3), and its recording says so,
// so lint of it ends as check did, with the same rows; lint judged the
// exchanges recorded and failed the run (exit 1), moving it from "the
// checker could not run" to "the server is wrong". The twin: a run that
// ends whole records no abort, and lints to its exit.
func TestAbortedRecordingLintsAborted(t *testing.T) {
	for _, mode := range []string{"dies", "once"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv(stdioServerEnv, mode)
			t.Setenv(stdioMarkEnv, filepath.Join(dir, "started"))
			rec, live, linted := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
			want, out, errOut := runMain(t, "", "check", "--parallel", "1", "--timeout", "2s", "--format", "json", "-o", live, "--record", rec, "--", os.Args[0])
			if aborted := want == exitTarget; aborted != (mode == "dies") {
				t.Fatalf("check: exit %d, want %d only for the server that dies:\n%s\n%s", want, exitTarget, out, errOut)
			}
			if code, out, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != want {
				t.Errorf("lint of the recording: exit %d, want check's %d:\n%s\n%s", code, want, out, errOut)
			}
			gate := func(file string) string {
				raw, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				return gjson.GetBytes(raw, "summary.gate").Str
			}
			if l, g := gate(live), gate(linted); l != g {
				t.Errorf("gate: check %q, lint %q", l, g)
			}
			rows := func(file string) []string {
				var out []string
				for _, r := range reportResults(t, file) {
					// (check also reports the fixtures it did not send,
					// skipped, which no recording holds.)
					if r.Status != "skip" {
						out = append(out, r.Fixture+" "+r.Check+" "+r.Status)
					}
				}
				return out
			}
			if diff := cmp.Diff(rows(live), rows(linted)); diff != "" {
				t.Errorf("rows of check (-) and of lint of its recording (+):\n%s", diff)
			}
		})
	}
}

// TestDeadlineCutRecordingLints: the fixtures a run's --deadline left
// unsent are its errors, and its recording carries them ("notSent"), so
// lint of it ends as check did; lint found none of them, and passed a
// run that check failed.
func TestDeadlineCutRecordingLints(t *testing.T) {
	t.Setenv(stdioServerEnv, "slow")
	dir := t.TempDir()
	rec, live, linted := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
	// (4s: the negotiation, a process start and some 200 ms replies,
	// must end before the deadline on a loaded machine, or the run has
	// nothing to cut; a hundred fixtures at 200 ms each still leave most
	// unsent.)
	code, out, errOut := runMain(t, "", "check", "--parallel", "1", "--timeout", "1s", "--deadline", "4s", "--format", "json", "-o", live, "--record", rec, "--", os.Args[0])
	if code != exitFindings {
		t.Fatalf("check: exit %d, want %d:\n%s\n%s", code, exitFindings, out, errOut)
	}
	if code, out, errOut = runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != exitFindings {
		t.Errorf("lint of the recording: exit %d, want %d:\n%s\n%s", code, exitFindings, out, errOut)
	}
	errs := func(file string) []string {
		var out []string
		for _, r := range reportResults(t, file) {
			if r.Status == "error" {
				out = append(out, r.Fixture+" "+r.Message)
			}
		}
		return out
	}
	l, g := errs(live), errs(linted)
	if len(l) == 0 {
		t.Fatal("the deadline left no fixture unsent; the test needs some")
	}
	if diff := cmp.Diff(l, g); diff != "" {
		t.Errorf("errors of check (-) and of lint of its recording (+):\n%s", diff)
	}
}

// TestOddTokenRecordingLints: a fixture that offers a token no
// transcript carries as one (a fraction) makes what was offered unknown,
// so the recording lints whole and as check judged it; it recorded
// "offered":[1.5] on every later stdio line, which lint refused (exit 2).
func TestOddTokenRecordingLints(t *testing.T) {
	t.Setenv(stdioServerEnv, "progress-foreign")
	dir := t.TempDir()
	fx := filepath.Join(dir, "fx")
	if err := os.MkdirAll(fx, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "A call offering a fractional progress token.\n-- fixture --\nid: my/odd-token\nrules: T-PROG-1\n-- body --\n" +
		`{"jsonrpc":"2.0","id":{{id}},"method":"tools/list","params":{"_meta":{"progressToken":1.5}}}` + "\n"
	if err := os.WriteFile(filepath.Join(fx, "odd.txtar"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, live, linted := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
	if code, _, errOut := runMain(t, "", "check", "--timeout", "2s", "--fixtures", fx, "--run", "my/*", "--record", rec, "--format", "json", "-o", live, "--", os.Args[0]); code != exitFindings && code != exitOK {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	code, _, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec)
	if code == exitUsage {
		t.Fatalf("lint refused the recording: %s", errOut)
	}
	statuses := func(p string) map[string]string {
		m := map[string]string{}
		for _, x := range reportResults(t, p) {
			if x.Fixture == "my/odd-token" {
				m[x.Check] = x.Status
			}
		}
		return m
	}
	if diff := cmp.Diff(statuses(live), statuses(linted)); diff != "" {
		t.Errorf("my/odd-token by check (-) and lint (+):\n%s", diff)
	}
}
