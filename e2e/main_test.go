//go:build unix

// Package e2e runs the built wymcp-check binary, as a user would, against
// real and hostile MCP servers: @modelcontextprotocol/server-everything
// (installed by .ci/run from testdata/package-lock.json) and fake servers
// that hang, flood, stream forever or die. It holds tests only.
//
// TestMain builds the checker once. When WYMCP_E2E_FAKE names a fake
// server, the test binary is that server instead (the stdio fakes are
// started by the checker as a fork-exec of this binary).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	// fakeEnv names the fake server this binary runs instead of the tests.
	fakeEnv = "WYMCP_E2E_FAKE"
	// pidFileEnv names a file each fake appends its pid to, so the tests
	// can tell whether the checker left a server process behind.
	pidFileEnv = "WYMCP_E2E_PIDFILE"
)

var (
	// checkerBin is the wymcp-check binary TestMain built.
	checkerBin string
	// checkIDs are the IDs of every check the binary runs on a server's
	// replies (wymcp-check list, less area client, which judges what a
	// client sends through proxy and wrap): each judged exchange of a
	// check report has one verdict per check.
	checkIDs []string
)

func TestMain(m *testing.M) {
	if name := os.Getenv(fakeEnv); name != "" {
		os.Exit(runFake(name))
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wymcp-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// A -race binary sleeps a second at exit unless told not to: a
	// server the checker runs that is the checker itself (refserver
	// --stdio), or a fake of this binary, would linger after its stdin
	// closed (PRO1011). Each child reads the variable at its start.
	os.Setenv("GORACE", os.Getenv("GORACE")+" atexit_sleep_ms=0")
	if err := buildChecker(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return m.Run()
}

// buildChecker builds ../cmd/wymcp-check into dir, with the race
// detector when the tests have it: hostile servers are where the
// checker's concurrency is exercised hardest.
func buildChecker(dir string) error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("building the checker needs the go command: %w", err)
	}
	checkerBin = filepath.Join(dir, "wymcp-check")
	args := []string{"build", "-o", checkerBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "../cmd/wymcp-check")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gobin, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, checkerBin, "list").Output()
	if err != nil {
		return fmt.Errorf("wymcp-check list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 1 && f[1] != "client" {
			checkIDs = append(checkIDs, f[0])
		}
	}
	if len(checkIDs) < 10 {
		return fmt.Errorf("wymcp-check list printed %d checks:\n%s", len(checkIDs), out)
	}
	return nil
}

// inCI reports whether the tests run in CI, where nothing may be skipped
// for want of an installed peer.
func inCI() bool { return os.Getenv("CI") == "true" }
