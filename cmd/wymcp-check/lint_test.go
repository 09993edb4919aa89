package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// TestLintScripts runs each testdata/lint/*.txtar: its files are written
// to a directory of their own, `lint` runs with the arguments of its
// args section (a name of one of its files stands for that file), and
// the exit code, the report's notes and verdict lines, and what went to
// standard error are as its want section says, with the directory left
// out of the paths. Each archive's comment says what it shows.
func TestLintScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/lint/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test data: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var args []string
			var want string
			for _, f := range ar.Files {
				switch f.Name {
				case "args":
					args = strings.Fields(string(f.Data))
				case "want":
					want = string(f.Data)
				default:
					if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i, a := range args {
				if _, err := os.Stat(filepath.Join(dir, a)); err == nil {
					args[i] = filepath.Join(dir, a)
				}
			}
			code, out, errOut := runMain(t, "", append([]string{"lint"}, args...)...)
			got := scriptOutput(code, out, errOut, dir+string(filepath.Separator))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("lint %s (-want +got):\n%s\nwhole output:\n%s", strings.Join(args, " "), diff, got)
			}
		})
	}
}

// verdictLine is a line of the human report's end: INPUT PROBLEMS,
// PASSED, FAILED, INVALID, NOT JUDGED.
var verdictLine = regexp.MustCompile(`^[A-Z][A-Z ]+: `)

// scriptOutput is what TestLintScripts compares: the exit code, the
// report's notes and verdict lines, and standard error, dir cut out.
func scriptOutput(code exitCode, out, errOut, dir string) string {
	var b strings.Builder
	b.WriteString("exit " + string(rune('0'+code)) + "\n")
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "note: ") || verdictLine.MatchString(l) {
			b.WriteString("stdout: " + l + "\n")
		}
	}
	for _, l := range strings.Split(strings.TrimRight(errOut, "\n"), "\n") {
		if l != "" {
			b.WriteString("stderr: " + l + "\n")
		}
	}
	return strings.ReplaceAll(b.String(), dir, "")
}
