package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInputKeys: the names that start the fixtures of several inputs do
// not depend on the working directory when the base names are distinct;
// when they are not, they are the paths, one spelling per file.
func TestInputKeys(t *testing.T) {
	tests := []struct {
		files []string
		wd    string
		want  []string
	}{
		{[]string{"a.jsonl", "b.jsonl"}, "/w", []string{"a.jsonl", "b.jsonl"}},
		{[]string{"repro/a.jsonl", "../w/repro/b.jsonl"}, "/w", []string{"a.jsonl", "b.jsonl"}},
		{[]string{"/w/repro/a.jsonl", "./b.jsonl", "-"}, "/elsewhere", []string{"a.jsonl", "b.jsonl", "-"}},
		{[]string{"x/t.jsonl", "./y/t.jsonl"}, "/w", []string{"x/t.jsonl", "y/t.jsonl"}},
		{[]string{"/w/x/t.jsonl", "/other/t.jsonl"}, "/w", []string{"x/t.jsonl", "/other/t.jsonl"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, inputKeys(tt.files, tt.wd)); diff != "" {
			t.Errorf("inputKeys(%q, %q) (-want +got):\n%s", tt.files, tt.wd, diff)
		}
	}
}

// TestLintBaselineKeysWorkingDirectory: a baseline written by lint of
// several transcripts holds for the same files linted from another
// directory (a CI step's working-directory, a path typed otherwise).
// Before, every key held the path from where it was written
// ("a.jsonl:canary/tool-name"), and from the parent directory
// ("repro/a.jsonl:…") all came back "not judged": exit 1. The twins: the
// directory it was written from, and inputs sharing a base name, keyed
// by their paths.
func TestLintBaselineKeysWorkingDirectory(t *testing.T) {
	raw := readFile(t, "../../examples/demo.jsonl")
	dir := t.TempDir()
	for _, f := range []string{"repro/a.jsonl", "repro/b.jsonl", "x/t.jsonl", "y/t.jsonl"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lint := func(wd string, want exitCode, args ...string) string {
		t.Helper()
		t.Chdir(wd)
		code, out, errOut := runMain(t, "", append([]string{"lint"}, args...)...)
		if code != want {
			t.Errorf("in %s: lint %s: exit %d, want %d\n%s%s", wd, strings.Join(args, " "), code, want, out, errOut)
		}
		return out
	}
	repro := filepath.Join(dir, "repro")
	lint(repro, exitFindings, "--write-baseline", "known.txt", "a.jsonl", "b.jsonl")
	if written := readFile(t, filepath.Join(repro, "known.txt")); !strings.Contains(written, "\na.jsonl:garbage ERR1002 ") {
		t.Fatalf("the baseline is not keyed by base name:\n%s", written)
	}
	lint(repro, exitOK, "--baseline", "known.txt", "a.jsonl", "b.jsonl")
	lint(dir, exitOK, "--baseline", "repro/known.txt", "repro/a.jsonl", "repro/b.jsonl")
	lint("/", exitOK, "--baseline", filepath.Join(repro, "known.txt"), filepath.Join(repro, "a.jsonl"), "."+filepath.Join(repro, "b.jsonl"))

	lint(dir, exitFindings, "--write-baseline", "shared.txt", "x/t.jsonl", "y/t.jsonl")
	if written := readFile(t, filepath.Join(dir, "shared.txt")); !strings.Contains(written, "\nx/t.jsonl:garbage ERR1002 ") || !strings.Contains(written, "\ny/t.jsonl:garbage ERR1002 ") {
		t.Fatalf("inputs sharing a base name are not keyed by path:\n%s", written)
	}
	lint(dir, exitOK, "--baseline", "shared.txt", "./x/t.jsonl", filepath.Join(dir, "y/t.jsonl"))
}
