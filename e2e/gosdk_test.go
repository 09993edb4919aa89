//go:build unix

package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The official Go SDK, live: testdata/gosdkserver is a small server on
// github.com/modelcontextprotocol/go-sdk, in a module of its own (the
// checker's module never depends on it). These tests build it and check
// it over Streamable HTTP and stdio, and hold the report to the real
// violations the recorded transcripts (testdata/recorded/go-sdk-*.jsonl)
// show, first of all the error code 0 it answers to a request outside a
// session.

// buildGoSDKServer builds the server; the build needs the Go module
// proxy (or a module cache that holds the SDK).
func buildGoSDKServer(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building the go-sdk server needs the go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "gosdkserver")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gobin, "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("testdata", "gosdkserver")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := "building testdata/gosdkserver (github.com/modelcontextprotocol/go-sdk, from the Go module proxy): " + err.Error() + "\n" + tail(string(out), 2000)
		if inCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// wantFindings: a real violation, as fixture, check and status, and
// what it is.
type wantFinding struct{ fixture, check, status, what string }

func holdsFindings(t *testing.T, rep *report, want []wantFinding) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, x := range rep.Results {
			if x.Fixture == w.fixture && x.Check == w.check && x.Status == w.status {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("the report lost a real go-sdk violation: %s %s %s (%s)", w.fixture, w.check, w.status, w.what)
		}
	}
}

func TestGoSDKHTTP(t *testing.T) {
	t.Parallel()
	bin := buildGoSDKServer(t)
	cmd := exec.Command(bin, "-http", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = killGroup(cmd.Process); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		line <- sc.Text()
	}()
	var url string
	select {
	case url = <-line:
	case <-time.After(30 * time.Second):
		t.Fatal("the go-sdk server printed no URL within 30s")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("the go-sdk server printed %q, want its loopback URL", url)
	}
	file := filepath.Join(t.TempDir(), "report.json")
	r := runChecker(t, 3*time.Minute, nil, "check", "--format", "json", "-o", file, "--timeout", "3s", url)
	if r.code != 1 {
		t.Fatalf("check exit %d, want 1 (findings)\n%s", r.code, tail(r.stderr, 2000))
	}
	rep := readReport(t, file)
	holdsFindings(t, rep, []wantFinding{
		{"session/missing-header", "ERR1001", "fail", "error code 0 for a request without Mcp-Session-Id (recorded: no-session-header)"},
		{"lifecycle/request-before-initialize", "ERR1001", "fail", "error code 0 for a request before initialize"},
		{"rpc/garbage", "HTTP1001", "fail", "a text/plain body for a parse error (recorded: garbage-body)"},
		{"method/unknown", "HTTP1001", "fail", "a text/plain 400 for an unknown method (recorded: unknown-method)"},
		{"rpc/method-missing", "RPC1006", "warn", "202 with no body for a message with an id and no method, read as a posted response (recorded: missing-method)"},
		{"id/fraction", "RPC1004", "fail", "id 1.5 answered as 1 (recorded: id-fraction)"},
		{"canary/tool-name", "ERR4001", "fail", "the tool name echoed in full (recorded: canary-tool-name)"},
		{"canary/argument", "ERR4002", "fail", "the argument value echoed in the isError text (recorded: canary-argument-value)"},
	})
}

func TestGoSDKStdio(t *testing.T) {
	t.Parallel()
	bin := buildGoSDKServer(t)
	file := filepath.Join(t.TempDir(), "report.json")
	r := runChecker(t, 3*time.Minute, nil, "check", "--format", "json", "-o", file, "--timeout", "2s", "--", bin, "-stdio")
	if r.code != 1 {
		t.Fatalf("check exit %d, want 1 (findings)\n%s", r.code, tail(r.stderr, 2000))
	}
	rep := readReport(t, file)
	holdsFindings(t, rep, []wantFinding{
		{"rpc/garbage", "PRO1005", "fail", "malformed input ends the session (recorded: garbage-body)"},
		{"id/fraction", "RPC1004", "fail", "id 1.5 answered as 1 (recorded: id-fraction)"},
		{"id/null", "RPC1006", "warn", "no reply to id null, read as JSON-RPC 1.0 reads it, a notification (recorded: id-null)"},
		{"canary/tool-name", "ERR4001", "fail", "the tool name echoed in full (recorded: canary-tool-name)"},
		{"canary/argument", "ERR4002", "fail", "the argument value echoed in the isError text (recorded: canary-argument-value)"},
	})
}
