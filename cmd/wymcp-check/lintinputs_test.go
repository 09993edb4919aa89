package main

import (
	"fmt"
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
		// Each input alone: a pair sharing a base name is keyed by path,
		// the others keep theirs (before, every input was re-keyed).
		{[]string{"repro/a.jsonl", "repro/b.jsonl", "nightly/a.jsonl", "c.jsonl"}, "/w", []string{"repro/a.jsonl", "b.jsonl", "nightly/a.jsonl", "c.jsonl"}},
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

// TestOldKeys: an entry that names an input as lint did before inputs
// were keyed by base name (its path relative to the working directory,
// or as typed) is read under the input's key now. The twins: an entry
// in the new form, or naming no input, is left; and a name that is
// some input's key now is never read as another's old one.
func TestOldKeys(t *testing.T) {
	files := []string{"repro/a.jsonl", "./repro/b.jsonl", "x/t.jsonl", "y/t.jsonl", "/w/c.jsonl"}
	keys := inputKeys(files, "/w")
	rename := oldKeys(files, keys, "/w")
	tests := []struct{ in, want string }{
		{"repro/a.jsonl:garbage", "a.jsonl:garbage"},
		{"repro/b.jsonl:canary/method", "b.jsonl:canary/method"},
		{"./repro/b.jsonl:line:3", "b.jsonl:line:3"},
		{"/w/c.jsonl:garbage", "c.jsonl:garbage"},
		{"a.jsonl:garbage", ""},
		{"x/t.jsonl:garbage", ""},
		{"c.jsonl:garbage", ""},
		{"other/a.jsonl:garbage", ""},
		{"repro/a.jsonl", ""},
	}
	for _, tt := range tests {
		got, ok := rename(tt.in)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("%q: %q %v, want %q", tt.in, got, ok, tt.want)
		}
	}
}

// lintIn makes dir/f for each of files (the demo transcript) and returns
// a function that runs lint in dir and checks its exit code.
func lintIn(t *testing.T, files ...string) (dir string, lint func(want exitCode, args ...string) string) {
	t.Helper()
	raw := readFile(t, "../../examples/demo.jsonl")
	dir = t.TempDir()
	for _, f := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return dir, func(want exitCode, args ...string) string {
		t.Helper()
		code, out, errOut := runMain(t, "", append([]string{"lint"}, args...)...)
		if code != want {
			t.Errorf("lint %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out
	}
}

// entries are the entry lines of a baseline file.
func entries(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(readFile(t, path), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestLintBaselineKeysPerInput: adding an input that shares a base name
// with one of the inputs re-keys only those two; a baseline written
// before still holds for the others. Before, one shared base name keyed
// every input by path, and b.jsonl's entries all came back "not judged".
// The twin: the inputs the baseline was written for, all entries known.
func TestLintBaselineKeysPerInput(t *testing.T) {
	_, lint := lintIn(t, "repro/a.jsonl", "repro/b.jsonl", "nightly/a.jsonl")
	lint(exitFindings, "--write-baseline", "known.txt", "repro/a.jsonl", "repro/b.jsonl")
	n := len(entries(t, "known.txt"))
	lint(exitOK, "--baseline", "known.txt", "repro/a.jsonl", "repro/b.jsonl")
	out := lint(exitFindings, "--baseline", "known.txt", "repro/a.jsonl", "repro/b.jsonl", "nightly/a.jsonl")
	// a.jsonl's entries are not judged (it is repro/a.jsonl now), and
	// only they: b.jsonl's are known.
	if want := fmt.Sprintf("baseline: %d entries not judged in this run (neither known nor stale): a.jsonl:", n/2); !strings.Contains(out, want) {
		t.Errorf("want the note %q in:\n%s", want, out)
	}
}

// TestLintBaselineOldKeys: a baseline written before inputs were keyed
// by base name (repro/b.jsonl:FIXTURE, the path from where lint ran, or
// as typed) still holds after the upgrade, and --write-baseline writes
// it in the new form with its reasons. Before, its entries were all
// "not judged" and the run failed: exit 1. The twin: the new form holds.
func TestLintBaselineOldKeys(t *testing.T) {
	_, lint := lintIn(t, "repro/a.jsonl", "repro/b.jsonl")
	lint(exitFindings, "--write-baseline", "new.txt", "repro/a.jsonl", "repro/b.jsonl")
	lint(exitOK, "--baseline", "new.txt", "repro/a.jsonl", "repro/b.jsonl")
	written := readFile(t, "new.txt")
	old := strings.ReplaceAll(written, "\nb.jsonl:", "\nrepro/b.jsonl:")
	old = strings.ReplaceAll(old, "\na.jsonl:", "\n./repro/a.jsonl:")
	old = strings.Replace(old, " ERR1002 ", " ERR1002 kept by hand: ", 1)
	if old == written || strings.Contains(old, "\nb.jsonl:") {
		t.Fatalf("no entry to rewrite in:\n%s", written)
	}
	if err := os.WriteFile("old.txt", []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	out := lint(exitOK, "--baseline", "old.txt", "--write-baseline", "old.txt", "./repro/a.jsonl", "repro/b.jsonl")
	if !strings.Contains(out, "name an input by its path, as lint did before inputs were keyed by base name: read under its key now (a.jsonl, b.jsonl)") {
		t.Errorf("no note of the old form:\n%s", out)
	}
	want := strings.Replace(written, " ERR1002 ", " ERR1002 kept by hand: ", 1)
	if diff := cmp.Diff(want, readFile(t, "old.txt")); diff != "" {
		t.Errorf("rewritten (-want +got):\n%s", diff)
	}
}

// TestLintWriteBaselineInputProblem: a run with an input it could not
// read judged less than the baseline covers: --write-baseline writes
// nothing, and a note says so. Before, --baseline F --write-baseline F
// with a missing input rewrote F without that input's entries and their
// reasons. The twin: all inputs there, F is written.
func TestLintWriteBaselineInputProblem(t *testing.T) {
	_, lint := lintIn(t, "repro/a.jsonl", "repro/b.jsonl")
	lint(exitFindings, "--write-baseline", "known.txt", "repro/a.jsonl", "repro/b.jsonl")
	before := readFile(t, "known.txt")
	if err := os.Rename("repro/b.jsonl", "repro/b.moved"); err != nil {
		t.Fatal(err)
	}
	out := lint(exitUsage, "--baseline", "known.txt", "--write-baseline", "known.txt", "repro/a.jsonl", "repro/b.jsonl")
	if !strings.Contains(out, "note: --write-baseline: not written, 1 input problem(s): the run did not judge everything") {
		t.Errorf("no note that the baseline is not written:\n%s", out)
	}
	if diff := cmp.Diff(before, readFile(t, "known.txt")); diff != "" {
		t.Errorf("the baseline was rewritten (-before +after):\n%s", diff)
	}
	if err := os.Rename("repro/b.moved", "repro/b.jsonl"); err != nil {
		t.Fatal(err)
	}
	out = lint(exitOK, "--baseline", "known.txt", "--write-baseline", "again.txt", "repro/a.jsonl", "repro/b.jsonl")
	if !strings.Contains(out, "failure(s) to the baseline again.txt") || readFile(t, "again.txt") != before {
		t.Errorf("all inputs there: the baseline is not written as before:\n%s", out)
	}
}

// TestLintInputNamedTwice: one file named twice, in any spelling or by a
// link, is refused before any report (its rows would count twice and
// its baseline keys collide); two files with the same content are two
// inputs (the twin).
func TestLintInputNamedTwice(t *testing.T) {
	raw := readFile(t, "../../examples/demo.jsonl")
	dir := t.TempDir()
	for _, f := range []string{"a.jsonl", "copy.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.jsonl", filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, args := range [][]string{{"a.jsonl", "a.jsonl"}, {"a.jsonl", "./a.jsonl"}, {"a.jsonl", filepath.Join(dir, "a.jsonl")}, {"link.jsonl", "a.jsonl"}, {"-", "-"}} {
		code, _, errOut := runMain(t, "", append([]string{"lint"}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "is named twice") {
			t.Errorf("lint %q: exit %d, stderr %q; want exit %d naming the input named twice", args, code, errOut, exitUsage)
		}
	}
	// (The demo's recording has findings: exit 1, judged.)
	if code, out, errOut := runMain(t, "", "lint", "a.jsonl", "copy.jsonl"); code == exitUsage || strings.Contains(errOut, "twice") || !strings.Contains(out, "copy.jsonl:") {
		t.Errorf("lint of two files alike: exit %d, stderr %q; want both judged", code, errOut)
	}
}
