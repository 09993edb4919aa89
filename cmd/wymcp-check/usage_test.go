package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	tests := []struct {
		ldflags string
		info    *debug.BuildInfo
		ok      bool
		want    string
	}{
		{devVersion, &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true, "v1.2.3"}, // go install …@v1.2.3
		{devVersion, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, devVersion},
		{devVersion, nil, false, devVersion},
		{"1.4.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true, "1.4.0"}, // -ldflags wins
	}
	for _, tt := range tests {
		if got := versionFrom(tt.ldflags, tt.info, tt.ok); got != tt.want {
			t.Errorf("versionFrom(%q, %+v) = %q, want %q", tt.ldflags, tt.info, got, tt.want)
		}
	}
}

// TestFirstHour: the small things a new user hits first.
func TestFirstHour(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.jsonl")
	tests := []struct {
		name     string
		args     []string
		want     exitCode
		wantOut  string
		wantErr  string
		emptyOut bool
	}{
		{"--version", []string{"--version"}, exitOK, "wymcp-check " + checkerVersion() + "\n", "", false},
		{"version command agrees", []string{"version"}, exitOK, "wymcp-check " + checkerVersion() + "\n", "", false},
		{"--schema none", []string{"lint", "--schema", "none", "../../examples/demo.jsonl"}, exitFindings, "FAILED", "", false},
		{"--schema off", []string{"lint", "--schema", "off", "../../examples/demo.jsonl"}, exitFindings, "FAILED", "", false},
		{"--timeout 0", []string{"check", "--demo", "--timeout", "0"}, exitUsage, "", "--timeout 0s: want a positive duration", true},
		{"--timeout negative", []string{"check", "--demo", "--timeout", "-5s"}, exitUsage, "", "--timeout -5s: want a positive duration", true},
		{"--deadline negative", []string{"check", "--demo", "--deadline", "-1m"}, exitUsage, "", "--deadline -1m0s: want a positive duration", true},
		{"--start-timeout 0", []string{"check", "--demo", "--start-timeout", "0"}, exitUsage, "", "--start-timeout 0s: want a positive duration", true},
		{"send --timeout 0", []string{"send", "--demo", "--timeout", "0", "-"}, exitUsage, "", "--timeout 0s", true},
		{"lint needs a worker", []string{"lint", "--parallel", "0", "../../examples/demo.jsonl"}, exitUsage, "", "--parallel 0: want 1 to 1024", true},
		{"lint parallel bounded", []string{"lint", "--parallel", "3000000000000000000", "../../examples/demo.jsonl"}, exitUsage, "", "--parallel 3000000000000000000: want 1 to 1024", true},
		{"check parallel bounded", []string{"check", "--demo", "--parallel", "3000000000000000000"}, exitUsage, "", "--parallel 3000000000000000000: want 1 to 1024", true},
		{"check parallel at its bound", []string{"check", "--demo", "--run", "lifecycle/ping", "--parallel", "1024"}, exitOK, "PASSED", "", false},
		{"check max-bytes zero", []string{"check", "--demo", "--max-bytes", "0"}, exitUsage, "", "--max-bytes 0: want a positive number of bytes", true},
		{"wrap max-bytes negative", []string{"wrap", "--max-bytes", "-5", "--", "true"}, exitUsage, "", "--max-bytes -5: want a positive number of bytes", true},
		{"wrap grace negative", []string{"wrap", "--grace", "-1s", "--", "true"}, exitUsage, "", "--grace -1s: want 0 (no wait) or a positive duration", true},
		{"send deadline negative", []string{"send", "--demo", "--deadline", "-1m", "-"}, exitUsage, "", "--deadline -1m0s: want a positive duration", true},
		{"check max-bytes positive", []string{"check", "--demo", "--run", "lifecycle/ping", "--max-bytes", "1048576"}, exitOK, "PASSED", "", false},
		{"lint missing file", []string{"lint", missing}, exitUsage, "", "opening transcript: open " + missing, true},
		{"--fixtures names a file", []string{"check", "--demo", "--fixtures", "../../examples/demo.jsonl"}, exitUsage, "", "--fixtures ../../examples/demo.jsonl: not a directory", true},
		{"--run bad glob names the flag", []string{"check", "--demo", "--run", "["}, exitUsage, "", `--run "[": syntax error in pattern`, true},
		{"--header CR LF", []string{"check", "--demo", "--header", "X-A: a\r\nInjected: b"}, exitUsage, "", "--header #1: header X-A: the value holds the control character U+000D", true},
		{"--header name no token", []string{"send", "--demo", "--header", "Bad Name: b", "-"}, exitUsage, "", `--header #1: header name "Bad Name": want a token`, true},
		{"--header escape never quoted", []string{"proxy", "http://127.0.0.1:1/", "--header", "X: secret\x1b"}, exitUsage, "", "U+001B", true},
		// Among inputs that open, a missing one is an input problem: the
		// rest is judged and the report written (as for a directory).
		{"lint one file missing", []string{"lint", "../../examples/demo.jsonl", missing}, exitUsage, "INPUT PROBLEMS: 1 input problem(s)", "opening transcript: open " + missing, false},
		// A report's row of a generated variant names the fixture to send
		// (a review found send refusing it as no fixture at all).
		{"send a variant's row", []string{"send", "--demo", "--fixture", "tools/wrong-arguments/missing-required/a"}, exitUsage, "", "a variant of fixture tools/wrong-arguments, made from what the server lists; send --fixture tools/wrong-arguments", true},
		{"send an unknown fixture", []string{"send", "--demo", "--fixture", "tools/no-such"}, exitUsage, "", "no such fixture (wymcp-check list --fixtures lists them)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, "", tt.args...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, out, errOut)
			}
			if !strings.Contains(out, tt.wantOut) || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stdout %q (want %q), stderr %q (want %q)", out, tt.wantOut, errOut, tt.wantErr)
			}
			if tt.emptyOut && out != "" {
				t.Errorf("a report was written before the usage error:\n%s", out)
			}
		})
	}
}

// TestHelpQuotesHeaderForTheShell: the --header examples use double
// quotes, so a shell expands $TOKEN in them.
func TestHelpQuotesHeaderForTheShell(t *testing.T) {
	for _, cmd := range []string{"check", "proxy"} {
		_, out, _ := runMain(t, "", cmd, "--help")
		if !strings.Contains(out, `-H "Authorization: Bearer $TOKEN"`) || strings.Contains(out, `'Authorization: Bearer $TOKEN'`) {
			t.Errorf("%s --help:\n%s", cmd, out)
		}
	}
	_, out, _ := runMain(t, "", "check", "--help")
	if !strings.Contains(out, "not at all (none; off is the same)") {
		t.Errorf("--schema help does not name none")
	}
}

// TestHeaderFlagErrorHidesValue: a --header value HTTP cannot carry is a
// usage error that names the header and the character, never the value.
func TestHeaderFlagErrorHidesValue(t *testing.T) {
	code, _, errOut := runMain(t, "", "check", "--demo", "--header", "Authorization: Bearer tok3n\rs3cret")
	if code != exitUsage || !strings.Contains(errOut, "header Authorization") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming the header", code, errOut)
	}
	if strings.Contains(errOut, "tok3n") {
		t.Errorf("the value was printed: %q", errOut)
	}
}

// TestUnstartableServerStillReports: a stdio server that cannot start
// ends the run with exit 3, and every report is still written, aborted,
// with the reason; the reason on stderr has its escapes escaped.
func TestUnstartableServerStillReports(t *testing.T) {
	dir := t.TempDir()
	cmd := filepath.Join(dir, "no-such-server\x1b[2J")
	code, _, errOut := runMain(t, "", "check", "--format", "json", "-o", filepath.Join(dir, "r.json"), "--report", "junit="+filepath.Join(dir, "r.xml"), "--", cmd)
	if code != exitTarget {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitTarget, errOut)
	}
	if strings.Contains(errOut, "\x1b") || !strings.Contains(errOut, `no-such-server\x1b[2J`) {
		t.Errorf("stderr %q: want the command's escape escaped", errOut)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatalf("the JSON report was not written: %v", err)
	}
	var r struct {
		Summary struct{ Aborted, Gate string }
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.Summary.Gate != "aborted" || !strings.Contains(r.Summary.Aborted, "target could not be driven: starting") {
		t.Errorf("summary %+v, want aborted with the reason", r.Summary)
	}
	if xml, err := os.ReadFile(filepath.Join(dir, "r.xml")); err != nil || !strings.Contains(string(xml), `errors="1"`) {
		t.Errorf("the JUnit report: %v, %s", err, xml)
	}
}

// TestRunOfUnloadedFixturesSaysWhy: a --run that matches nothing because
// the user's fixtures did not load names their problems first.
func TestRunOfUnloadedFixturesSaysWhy(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txtar"), []byte("Mine.\n-- fixture --\nid: mine/a\nversions: banana\n-- body --\n{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMain(t, "", "check", "--demo", "--fixtures", dir, "--run", "mine/*")
	want := "wymcp-check: --fixtures: " + filepath.Join(dir, "a.txtar") + `:4: versions: "banana" is not a protocol version`
	if code != exitUsage || !strings.Contains(errOut, want) || !strings.Contains(errOut, `--run "mine/*" matches no fixture`) {
		t.Errorf("exit %d, stderr %q; want exit 2, %q and the --run error", code, errOut, want)
	}
	if out != "" {
		t.Errorf("a report was started before the usage error: %q", out)
	}
}

// TestHelpExitCodesPerCommand: each command's help lists the exit codes
// it can exit with, no other's.
func TestHelpExitCodesPerCommand(t *testing.T) {
	for _, tc := range []struct {
		cmd       string
		want, not []string
	}{
		{"check", []string{"  3  the target could not be driven", "  4  interrupted (SIGINT or SIGTERM): no new fixture was sent", "--fail-on warn"}, nil},
		{"lint", []string{"  2  usage or configuration error: bad flag, contract or schema, a transcript", "  3  the recorded run could not drive its target", "  4  interrupted (SIGINT or SIGTERM): no more input was read"}, nil},
		{"send", []string{"  1  conformance failures", "  3  the target could not be driven", "{{id}}"}, []string{"--fail-on", "  4  "}},
		{"proxy", []string{"  1  a judged exchange or client message fails the gate", "  2  usage", "  3  the server was never reached"}, []string{"  4  "}},
		{"wrap", []string{"the server's own exit status (128+N", "  3  the server could not be started"}, []string{"  0  ", "  1  ", "  4  "}},
	} {
		_, out, _ := runMain(t, "", tc.cmd, "--help")
		help, _, _ := strings.Cut(out, "Usage:")
		for _, w := range tc.want {
			if !strings.Contains(help, w) {
				t.Errorf("%s --help lacks %q:\n%s", tc.cmd, w, help)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(help, n) {
				t.Errorf("%s --help has %q:\n%s", tc.cmd, n, help)
			}
		}
	}
}

// TestListDirNeedsFixtures: list --dir without --fixtures is a usage
// error naming the flag it needs; it printed the checks and read nothing
// of DIR. The twin: --fixtures lists the fixtures.
func TestListDirNeedsFixtures(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runMain(t, "", "list", "--dir", dir); code != exitUsage || !strings.Contains(errOut, "needs --fixtures") {
		t.Errorf("list --dir: exit %d, %q; want %d naming --fixtures", code, errOut, exitUsage)
	}
	if code, out, errOut := runMain(t, "", "list", "--fixtures"); code != exitOK || !strings.Contains(out, "id/string") {
		t.Errorf("list --fixtures: exit %d, %s%s", code, out, errOut)
	}
}
