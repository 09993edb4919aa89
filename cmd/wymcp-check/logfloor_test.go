package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLogBelowEveryLevelStdio: over stdio, where a log message may be
// any request's on the pipe, the reference server's add tool logs at
// "debug" for a call that asked for "error" (fault log-below-level), and
// no request on the pipe asked for a level below "error": PRO1003 fails
// it (T-LOG-2), in check as in lint of its recording. It only warned:
// the run knew that a level was asked, not which. The twin: the server
// logs at the level asked, and PRO1003 passes.
func TestLogBelowEveryLevelStdio(t *testing.T) {
	for _, tc := range []struct{ fault, want string }{
		{"log-below-level", "logging/meta-level-error/add PRO1003 fail messages[0].params.level"},
		{"", "logging/meta-level-error/add PRO1003 pass"},
	} {
		dir := t.TempDir()
		rec, live, linted := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
		args := []string{"check", "--call-tools=all", "--run", "logging/*", "--timeout", "5s", "--record", rec, "--format", "json", "-o", live}
		args = append(args, refserverStdio(t)...)
		if tc.fault != "" {
			t.Setenv(refserverStdioEnv, tc.fault)
		}
		if code, _, errOut := runMain(t, "", args...); code != exitOK && code != exitFindings {
			t.Fatalf("%q: check: exit %d: %s", tc.fault, code, errOut)
		}
		if code, _, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != exitOK && code != exitFindings {
			t.Fatalf("%q: lint: exit %d: %s", tc.fault, code, errOut)
		}
		// (A fixture the run did not send skips in check, and is no
		// record to lint.)
		judged := func(rows []string) []string {
			return slices.DeleteFunc(rows, func(r string) bool { return strings.Fields(r)[2] == "skip" })
		}
		rows := reportRows(t, live)
		if diff := cmp.Diff(judged(slices.Clone(rows)), judged(reportRows(t, linted))); diff != "" {
			t.Errorf("%q: lint of the recording (-check +lint):\n%s", tc.fault, diff)
		}
		if !slices.Contains(rows, tc.want) {
			t.Errorf("%q: no row %q in\n%s", tc.fault, tc.want, strings.Join(rows, "\n"))
		}
	}
}
