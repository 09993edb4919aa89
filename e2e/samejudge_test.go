//go:build unix

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The checker is one judge: what a live run knew when it judged an
// exchange (the server's facts, the fixture's override, the liveness
// probe's outcome), its transcript carries, so lint of the recording
// gives exactly the live verdicts. These tests record runs with --record
// and lint them: the two verdict lists must be equal, row for row.

// faultNames lists the reference server's faults (wymcp-check faults).
func faultNames(t *testing.T) []string {
	t.Helper()
	r := runChecker(t, 30*time.Second, nil, "faults")
	if r.code != 0 {
		t.Fatalf("faults: exit %d: %s", r.code, r.stderr)
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 && !strings.HasSuffix(f[0], ":") {
			out = append(out, f[0])
		}
	}
	if len(out) < 10 {
		t.Fatalf("faults listed %d faults:\n%s", len(out), r.stdout)
	}
	return out
}

// rowsOf reads a JSON report's results as comparable lines, keeping only
// the fixtures in keep (nil: all).
func rowsOf(t *testing.T, file string, keep map[string]bool) []string {
	t.Helper()
	rep := readReport(t, file)
	var out []string
	for _, x := range rep.Results {
		if keep != nil && !keep[x.Fixture] {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s %s: %s", x.Fixture, x.Check, x.Status, x.Path, x.Message))
	}
	slices.Sort(out)
	return out
}

// recordedFixtures names the fixtures a transcript holds exchanges of:
// a fixture that was not sent (it does not apply) has none to lint.
func recordedFixtures(t *testing.T, file string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec struct {
			Fixture   string `json:"fixture"`
			Transport string `json:"transport"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if rec.Transport != "" {
			out[rec.Fixture] = true
		}
	}
	return out
}

// sameVerdicts runs check with args and --record, lints the recording,
// and compares the verdicts.
func sameVerdicts(t *testing.T, bound time.Duration, args ...string) {
	t.Helper()
	dir := t.TempDir()
	rec, live, linted := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
	r := runChecker(t, bound, nil, append([]string{"check", "--format", "json", "-o", live, "--record", rec}, args...)...)
	if r.code != 0 && r.code != 1 {
		t.Fatalf("check %s: exit %d\n%s", strings.Join(args, " "), r.code, tail(r.stderr, 2000))
	}
	l := runChecker(t, bound, nil, "lint", "--format", "json", "-o", linted, rec)
	if l.code != r.code {
		t.Errorf("lint exits %d, the live run %d", l.code, r.code)
	}
	keep := recordedFixtures(t, rec)
	want, got := rowsOf(t, live, keep), rowsOf(t, linted, nil)
	if len(want) == 0 {
		t.Fatal("the live run judged nothing")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lint of the recording differs from the live run (-live +lint):\n%s", diff)
	}
}

// TestLintEqualsCheckRefserver: the reference server, clean and with every
// fault, over Streamable HTTP and stdio, every fixture (tools called).
func TestLintEqualsCheckRefserver(t *testing.T) {
	t.Parallel()
	faults := append([]string{""}, faultNames(t)...)
	for _, fault := range faults {
		for _, stdio := range []bool{false, true} {
			name := fault
			if name == "" {
				name = "clean"
			}
			if stdio {
				name += "/stdio"
			}
			t.Run(name, func(t *testing.T) {
				// --parallel 8: fixtures side by side over HTTP, one
				// multiplexed pipe over stdio.
				args := []string{"--demo", "--call-tools=all", "--timeout", "2s", "--deadline", "1m", "--parallel", "8"}
				if fault != "" {
					args = append(args, "--demo-fault", fault)
				}
				if stdio {
					args = append(args, "--demo-stdio")
				}
				sameVerdicts(t, 2*time.Minute, args...)
			})
		}
	}
}

// TestLintEqualsCheckEverything: the same against server-everything, a
// real server, over Streamable HTTP.
func TestLintEqualsCheckEverything(t *testing.T) {
	t.Parallel()
	dir := everythingDir(t)
	url := startEverythingHTTP(t, dir)
	sameVerdicts(t, 3*time.Minute, "--call-tools", "--timeout", "5s", "--deadline", "2m", url)
}

// TestLintEqualsCheckEverythingStdio: the same against server-everything
// over stdio, where the multiplexer judges its ignored lines' silence in
// one window and records a liveness probe for each.
func TestLintEqualsCheckEverythingStdio(t *testing.T) {
	t.Parallel()
	dir := everythingDir(t)
	sameVerdicts(t, 3*time.Minute, "--timeout", "3s", "--deadline", "2m", "--parallel", "8", "--", "node", filepath.Join(dir, "dist", "index.js"), "stdio")
}
