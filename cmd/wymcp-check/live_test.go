package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckDemo(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     exitCode
		wantOut  []string
		wantNone []string
	}{
		{"clean", []string{"check", "--demo"}, exitOK, []string{"PASSED", "protocol 2026-07-28"}, []string{"FAIL"}},
		{"clean 2025-06-18", []string{"check", "--demo", "--protocol", "2025-06-18"}, exitOK, []string{"PASSED", "initialize answered 2025-06-18"}, nil},
		{"fault", []string{"check", "--demo", "--demo-fault", "wrong-id"}, exitFindings, []string{"FAIL id/string", "RPC1004"}, nil},
		// Faults that fire only on a tool call or in a 2025 session show
		// their failure without extra flags.
		{"fault hang", []string{"check", "--demo", "--demo-fault", "hang", "--timeout", "1s"}, exitFindings, []string{"FAIL tools/call-valid/add", "RPC1006", "fires on a tool call"}, nil},
		{"fault crash", []string{"check", "--demo", "--demo-fault", "crash"}, exitFindings, []string{"FAIL tools/call-valid/add", "RPC1006"}, nil},
		{"fault ended session", []string{"check", "--demo", "--demo-fault", "ended-session-served"}, exitFindings, []string{"FAIL session/reuse-after-delete", "PRO1001", "the demo speaks 2025-11-25"}, nil},
		{"run filter", []string{"check", "--demo", "--run", "headers/*", "-v"}, exitOK, []string{"headers/method-missing"}, []string{"rpc/garbage"}},
		{"unknown fault", []string{"check", "--demo", "--demo-fault", "nope"}, exitUsage, nil, nil},
		{"two targets", []string{"check", "--demo", "http://127.0.0.1:1/mcp"}, exitUsage, nil, nil},
		{"no target", []string{"check"}, exitUsage, nil, nil},
		{"bad url", []string{"check", "ftp://x"}, exitUsage, nil, nil},
		{"bad header", []string{"check", "--demo", "-H", "Authorization secret"}, exitUsage, nil, []string{"secret"}},
		{"run matches nothing", []string{"check", "--demo", "--run", "zzz/*"}, exitUsage, nil, nil},
		// Nothing listens on port 1 of loopback: the target cannot be driven.
		{"unreachable", []string{"check", "--timeout", "2s", "http://127.0.0.1:1/mcp"}, exitTarget, []string{"target:   http://127.0.0.1:1/mcp"}, nil},
		{"command not found", []string{"check", "--", "/nonexistent/wymcp-server"}, exitTarget, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, "", tt.args...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(out+errOut, w) {
					t.Errorf("output has %q", w)
				}
			}
		})
	}
}

// TestCheckRecordThenLint: a live run's transcript, linted, gives the
// same findings: live runs and lint judge through the same function.
func TestCheckRecordThenLint(t *testing.T) {
	dir := t.TempDir()
	rec, live := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json")
	if code, _, errOut := runMain(t, "", "check", "--demo", "--demo-fault", "echo-request", "--record", rec, "--format", "json", "-o", live); code != exitFindings {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	linted := filepath.Join(dir, "lint.json")
	if code, _, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != exitFindings {
		t.Fatalf("lint: exit %d: %s", code, errOut)
	}
	fails := func(p string) map[string]bool {
		m := map[string]bool{}
		for _, x := range reportResults(t, p) {
			if x.Status == "fail" {
				m[x.Fixture+" "+x.Check] = true
			}
		}
		return m
	}
	l, g := fails(live), fails(linted)
	if len(l) == 0 {
		t.Fatal("the live run found nothing")
	}
	// Fixture overrides (an unknown tool wants -32602) exist only live;
	// the echo findings come from the request and reply alone.
	for k := range l {
		if strings.Contains(k, "ERR4001") && !g[k] {
			t.Errorf("lint of the recording lost %s", k)
		}
	}
}

// TestRecordedRunSettingsLintAlike: a run with a selection, a contract
// and a checks list records them, and lint of the recording gives its
// report row for row (an audit found lint judging with its own defaults
// and reporting the negotiation the selection left out); flags given to
// lint still win.
func TestRecordedRunSettingsLintAlike(t *testing.T) {
	dir := t.TempDir()
	rec, live, linted := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
	if code, _, errOut := runMain(t, "", "check", "--demo", "--demo-fault", "no-resultType", "--run", "id/*", "--contract", "spec", "--checks", "RPC*,PRO1002", "--record", rec, "--format", "json", "-o", live); code != exitFindings {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != exitFindings {
		t.Fatalf("lint: exit %d: %s", code, errOut)
	}
	want := reportRows(t, live)
	if len(want) == 0 || slices.ContainsFunc(want, func(r string) bool { return strings.HasPrefix(r, "negotiate/") || strings.Contains(r, " ERR") }) {
		t.Fatalf("the live run's rows are not the selection's: %v", want)
	}
	if diff := cmp.Diff(want, reportRows(t, linted)); diff != "" {
		t.Errorf("lint of the recording (-check +lint):\n%s", diff)
	}
	if code, out, _ := runMain(t, "", "lint", "--checks", "all", rec); code != exitFindings || !strings.Contains(out, "fail SCH1001") {
		t.Errorf("lint --checks all: exit %d, want the flag to win over the recording's list\n%s", code, out)
	}
	// From standard input alike (a review found the run line ignored
	// there), and not for a second input that records no settings.
	raw, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	piped := filepath.Join(dir, "piped.json")
	if code, _, errOut := runMain(t, string(raw), "lint", "--format", "json", "-o", piped, "-"); code != exitFindings {
		t.Fatalf("lint -: exit %d: %s", code, errOut)
	}
	if diff := cmp.Diff(want, reportRows(t, piped)); diff != "" {
		t.Errorf("lint of the recording from standard input (-check +lint):\n%s", diff)
	}
	bare := filepath.Join(dir, "bare.jsonl")
	if err := os.WriteFile(bare, raw[bytes.IndexByte(raw, '\n')+1:], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out, _ := runMain(t, "", "lint", rec, bare); !strings.Contains(out, "do not all record the same run settings") || strings.Contains(out, "as the recorded run was") {
		t.Errorf("lint of a recording with settings and one without took the settings:\n%s", out)
	}
	// A recording without settings alone says which settings judged it.
	if _, out, _ := runMain(t, "", "lint", "--contract", "spec", bare); !strings.Contains(out, "records no run settings (no run line): judged with --contract spec, --schema builtin and all checks") {
		t.Errorf("lint of a recording without settings does not say what judged it:\n%s", out)
	}
	if _, out, _ := runMain(t, "", "lint", rec); strings.Contains(out, "records no run settings") {
		t.Errorf("lint of a recording with settings says it has none:\n%s", out)
	}
}

// TestRecordedContractFileLintAlike: a run judged with a contract file
// records its path, and lint reads that file, so the recording lints to
// the run's rows; it judged with strict and a note before, which could
// pass a gate the run failed (review rev47). A file lint cannot read
// leaves the input unjudged, an input problem (exit 2), unless --contract
// names another.
func TestRecordedContractFileLintAlike(t *testing.T) {
	dir := t.TempDir()
	contract := filepath.Join(dir, "contract.json")
	raw, err := os.ReadFile(filepath.Join("..", "..", "checks", "testdata", "contract_distilled_renamed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(contract, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, live, linted := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
	if code, _, errOut := runMain(t, "", "check", "--demo", "--demo-fault", "undistilled-errors", "--contract", contract, "--record", rec, "--format", "json", "-o", live); code != exitFindings {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != exitFindings {
		t.Fatalf("lint: exit %d: %s", code, errOut)
	}
	// (The fixtures the run did not send are skipped in its report
	// alone: the recording holds what was sent.)
	judged := func(rows []string) []string {
		return slices.DeleteFunc(rows, func(r string) bool { return strings.HasSuffix(r, " skip") })
	}
	want := judged(reportRows(t, live))
	if !slices.ContainsFunc(want, func(r string) bool { return strings.Contains(r, " fail") }) {
		t.Fatalf("the live run failed nothing (%d rows)", len(want))
	}
	if diff := cmp.Diff(want, judged(reportRows(t, linted))); diff != "" {
		t.Errorf("lint of the recording (-check +lint):\n%s", diff)
	}
	if err := os.Remove(contract); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runMain(t, "", "lint", rec)
	if code != exitUsage || !strings.Contains(out, "its run line's --contract "+contract) || strings.Contains(out, "fail ERR") {
		t.Errorf("lint without the run's contract file: exit %d, want %d, the input problem named and nothing judged\n%s", code, exitUsage, out)
	}
	if code, out, _ := runMain(t, "", "lint", "--contract", "strict", rec); code != exitFindings || strings.Contains(out, "input problem") {
		t.Errorf("lint --contract strict: exit %d, want %d and the flag to win over the recording's file\n%s", code, exitFindings, out)
	}
}

// TestSendShowsFindingsWithoutABody: a reply with no body (here none at
// all: the tool hangs) has no line to put its findings beside; send
// lists them below, where an audit found nothing but the counts.
func TestSendShowsFindingsWithoutABody(t *testing.T) {
	code, out, _ := runMain(t, "", "send", "--demo", "--demo-fault", "hang", "--timeout", "1s", "--fixture", "tools/call-valid")
	if code != exitFindings || !strings.Contains(out, "findings outside the body:\n  fail RPC1006 reply: no response arrived") {
		t.Errorf("exit %d, want RPC1006's finding listed\n%s", code, out)
	}
}

func TestSend(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"nope",{{meta}}}}`
	code, out, errOut := runMain(t, msg, "send", "--demo", "--demo-fault", "prose-data", "-H", "Authorization: Bearer sekrit", "-")
	if code != exitFindings {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		`"detail": "The tool you asked for does not exist."   ← fail ERR3002`,
		"< HTTP 200",
		"> Mcp-Name: nope",
		"reproduce:\n  printf '",
		"-H 'Authorization: <redacted>'",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errOut, "sekrit") {
		t.Error("a --header value reached the output")
	}
	code, out, _ = runMain(t, msg, "send", "--demo", "-")
	if code != exitOK || !strings.Contains(out, "0 fail") {
		t.Errorf("clean send: exit %d\n%s", code, out)
	}
	if code, _, _ := runMain(t, "{{canary:1}}", "send", "--demo", "-"); code != exitUsage {
		t.Errorf("a bad placeholder: exit %d, want %d", code, exitUsage)
	}
}

// TestCheckUserFixtures: a bad fixture file is named with line and cause,
// the good ones run, the report is written, and the exit says usage (2).
func TestCheckUserFixtures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("good.txtar", "Mine.\n-- fixture --\nid: my/list\nrules: T-RPC-1\n-- body --\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{{{meta}}}}\n")
	write("bad.txtar", "Bad.\n-- fixture --\nid: my/bad\nversions: 1999\n-- body --\n{}\n")
	code, out, errOut := runMain(t, "", "check", "--demo", "--fixtures", dir, "--run", "my/*", "-v")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitUsage, out, errOut)
	}
	for _, want := range []string{"ok my/list", "bad.txtar:4: versions:", "INPUT PROBLEMS: 1 fixture problem(s)", "INVALID"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "bad.txtar:4") {
		t.Errorf("stderr lacks the bad file: %s", errOut)
	}
}

// TestSendFixtureIsCheck: send of a corpus fixture judges it with the
// fixture's own expectations, so its verdict counts are check's for the
// same fixture (an unknown tool answered with code 0: ERR1001 and ERR1002
// fail; a SHOULD-level refusal elsewhere would only warn in both).
func TestSendFixtureIsCheck(t *testing.T) {
	for _, fault := range []string{"code-zero", ""} {
		dir := t.TempDir()
		out := filepath.Join(dir, "check.json")
		args := []string{"check", "--demo", "--run", "tools/unknown-tool", "--format", "json", "-o", out}
		if fault != "" {
			args = append(args, "--demo-fault", fault)
		}
		if code, _, errOut := runMain(t, "", args...); code != exitFindings && code != exitOK {
			t.Fatalf("check: exit %d: %s", code, errOut)
		}
		counts := map[string]int{}
		seen := map[string]bool{}
		for _, r := range reportResults(t, out) {
			if r.Fixture != "tools/unknown-tool" || seen[r.Check] {
				continue // one verdict per check; a fail may have several rows
			}
			seen[r.Check] = true
			counts[r.Status]++
		}
		want := fmt.Sprintf("%d pass, %d fail, %d warn, %d skip, %d error", counts["pass"], counts["fail"], counts["warn"], counts["skip"], counts["error"])
		sargs := []string{"send", "--demo", "--fixture", "tools/unknown-tool"}
		if fault != "" {
			sargs = append(sargs, "--demo-fault", fault)
		}
		code, sout, errOut := runMain(t, "", sargs...)
		if code != exitFindings && code != exitOK {
			t.Fatalf("send: exit %d: %s\n%s", code, sout, errOut)
		}
		if !strings.Contains(sout, want) {
			t.Errorf("fault %q: send does not give check's verdicts %q:\n%s", fault, want, sout)
		}
		if !strings.Contains(sout, "judged as check judges fixture tools/unknown-tool") {
			t.Errorf("send does not say it judged as check:\n%s", sout)
		}
	}
}

// TestSelectionGates: a selection reports and gates on the fixtures it
// names; the run's own exchanges (negotiation, tools/list, the end of the
// session) still happen, but a fault there does not fail the selection's
// gate. Without the selection it does: the ended session is served.
func TestSelectionGates(t *testing.T) {
	code, out, errOut := runMain(t, "", "check", "--demo", "--protocol", "2025-11-25", "--demo-fault", "ended-session-served", "--run", "id/string")
	if code != exitOK {
		t.Fatalf("selection: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "were judged but are not reported") {
		t.Errorf("the hidden setup is not noted:\n%s", out)
	}
	if code, out, _ := runMain(t, "", "check", "--demo", "--protocol", "2025-11-25", "--demo-fault", "ended-session-served"); code != exitFindings || !strings.Contains(out, "session/reuse-after-delete") {
		t.Errorf("whole run: exit %d, want 1 with session/reuse-after-delete failing\n%s", code, out)
	}
	// --skip alone leaves out what it names and nothing else: the run's
	// own exchanges are reported and judged (a review found them hidden,
	// where lint of the same recording reported them), unless named.
	code, out, _ = runMain(t, "", "check", "--demo", "--demo-fault", "no-resultType", "--skip", "canary/*")
	if code != exitFindings || !strings.Contains(out, "FAIL setup/tools-list") || strings.Contains(out, "canary/") {
		t.Errorf("--skip 'canary/*': exit %d, want 1 with setup/tools-list failing and no canary\n%s", code, out)
	}
	code, out, _ = runMain(t, "", "check", "--demo", "--demo-fault", "no-resultType", "--skip", "canary/*", "--skip", "setup/*")
	if strings.Contains(out, "setup/tools-list") || !strings.Contains(out, "were judged but are not reported") {
		t.Errorf("--skip 'setup/*': exit %d, want setup/tools-list noted, not reported\n%s", code, out)
	}
	if code, _, _ := runMain(t, "", "check", "--demo", "--checks", "NOPE*"); code != exitUsage {
		t.Errorf("a bad --checks: exit %d, want %d", code, exitUsage)
	}
	code, out, _ = runMain(t, "", "list", "--fixtures")
	if code != exitOK || !strings.Contains(out, "tools/unknown-tool") || !strings.Contains(out, "T-TOOL-6") {
		t.Errorf("list --fixtures: exit %d\n%s", code, out)
	}
}

// reportRow is one row of a JSON report's results.
type reportRow struct{ Fixture, Check, Status, Message, Path, File string }

// reportResults reads the results of the JSON report at p.
func reportResults(t *testing.T, p string) []reportRow {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Results []reportRow }
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r.Results
}

// TestRecordedHeaderValuesLintAlike: a run with --header values records
// none that may be a credential, and lint of the recording gives its
// report row for row. A flag ("X-Debug: true") or a word ("X-Scope:
// tools") taken out of the recording turned every true into text and
// every tools/list into another method: lint failed a conforming server.
func TestRecordedHeaderValuesLintAlike(t *testing.T) {
	for _, tc := range []struct {
		header, value string
		hidden        bool // the value is no longer in the recording
	}{
		{"X-Debug: true", "true", false},
		{"X-Scope: tools", "tools", false},
		{"X-Mcp-Version: 2026-07-28", "2026-07-28", false},
		{"X-Pin: 4321", "4321", true},
		{"X-Api-Key: sk-live-12345678", "sk-live-12345678", true},
	} {
		t.Run(tc.header, func(t *testing.T) {
			dir := t.TempDir()
			rec, live, linted := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
			if code, _, errOut := runMain(t, "", "check", "--demo", "--header", tc.header, "--record", rec, "--format", "json", "-o", live); code != exitOK {
				t.Fatalf("check: exit %d: %s", code, errOut)
			}
			if code, _, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != exitOK {
				t.Errorf("lint: exit %d: %s", code, errOut)
			}
			// (A fixture the version skips sends nothing, and a recording
			// has no line for it: its skips are the live run's alone.)
			judged := func(rows []string) []string {
				return slices.DeleteFunc(rows, func(r string) bool { return strings.Contains(r, " skip") })
			}
			want := judged(reportRows(t, live))
			if len(want) < 1000 {
				t.Fatalf("only %d verdicts that are no skip: the corpus did not run", len(want))
			}
			if diff := cmp.Diff(want, judged(reportRows(t, linted))); diff != "" {
				t.Errorf("lint of the recording (-check +lint):\n%s", diff)
			}
			raw, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(raw, []byte(tc.value)); got == tc.hidden {
				t.Errorf("the recording holds %q: %v, want %v", tc.value, got, !tc.hidden)
			}
		})
	}
}
