package schema

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// txtar splits a txtar archive: a comment, then "-- name --" sections.
func txtar(data string) (comment string, files map[string]string) {
	files = map[string]string{}
	name := ""
	var b strings.Builder
	flush := func() {
		if name == "" {
			comment = b.String()
		} else {
			files[name] = b.String()
		}
		b.Reset()
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			name = strings.TrimSpace(trimmed[3 : len(trimmed)-3])
			continue
		}
		b.WriteString(line)
	}
	flush()
	return comment, files
}

func TestDistillData(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "distill", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no distill cases (%v)", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			comment, parts := txtar(string(data))
			for _, want := range []string{"schema.json", "instance.json", "want.json"} {
				if _, ok := parts[want]; !ok {
					t.Fatalf("%s: no %s section", f, want)
				}
			}
			ts, err := CompileToolSchema([]byte(parts["schema.json"]), "2026-07-28")
			if err != nil {
				t.Fatal(err)
			}
			var want entries
			if err := json.Unmarshal([]byte(parts["want.json"]), &want); err != nil {
				t.Fatalf("want.json: %v", err)
			}
			got := valid(t)(ts.Validate([]byte(parts["instance.json"])))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s(-want +got):\n%s", comment, diff)
			}
			checkShape(t, got)
		})
	}
}

// checkShape asserts the distilled form's rules on any output: sorted
// unique locations, sorted unique problems, and problems that are short,
// lowercase, one line, without a trailing period.
func checkShape(t *testing.T, es entries) {
	t.Helper()
	for i, e := range es {
		if i > 0 && es[i-1].Location >= e.Location {
			t.Errorf("locations not sorted and unique: %q then %q", es[i-1].Location, e.Location)
		}
		if e.Location != "" && !strings.HasPrefix(e.Location, "/") {
			t.Errorf("location %q is not a JSON Pointer", e.Location)
		}
		if len(e.Problems) == 0 {
			t.Errorf("%q: entry without problems", e.Location)
		}
		for j, p := range e.Problems {
			if j > 0 && e.Problems[j-1] >= p {
				t.Errorf("%q: problems not sorted and unique: %q then %q", e.Location, e.Problems[j-1], p)
			}
			r, _ := utf8.DecodeRuneInString(p)
			switch {
			case p == "":
				t.Errorf("%q: empty problem", e.Location)
			case unicode.IsUpper(r):
				t.Errorf("%q: problem %q starts upper-case", e.Location, p)
			case strings.HasSuffix(p, "."):
				t.Errorf("%q: problem %q ends with a period", e.Location, p)
			case strings.ContainsAny(p, "\r\n"):
				t.Errorf("%q: problem %q is not one line", e.Location, p)
			case utf8.RuneCountInString(p) > 200:
				t.Errorf("%q: problem %q is long", e.Location, p)
			}
		}
	}
}

func TestDistillNonValidationError(t *testing.T) {
	got := Distill(errors.New("Something\nbroke"))
	want := entries{{Location: "", Problems: []string{"something"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if Distill(nil) != nil {
		t.Error("Distill(nil) != nil")
	}
}
