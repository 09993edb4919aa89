package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputProblemsBounded: a transcript's bad lines are named one by
// one up to maxProblemsListed, on stderr and in the notes, and counted
// past it (a million bad lines once cost 615 MB, a million lines of
// stderr and a 105 MB report); the exit code and the report still say
// how many there were. The twin: a few bad lines are each named.
func TestInputProblemsBounded(t *testing.T) {
	demo, err := os.ReadFile("../../examples/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		bad       int
		wantLines int // on stderr
		wantNotes int // of bad lines, in the report
		wantMore  string
	}{
		{3, 3 + 1, 3, ""},
		{maxProblemsListed, maxProblemsListed + 2, maxProblemsListed, ""},
		{5000, maxProblemsListed + 2, maxProblemsListed, fmt.Sprintf("%d more input problem(s), not named", 5000-maxProblemsListed)},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.bad), func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "r.json")
			if err := os.WriteFile(in, append(append([]byte{}, demo...), strings.Repeat("x\n", tt.bad)...), 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := runMain(t, "", "lint", in, "--format", "json", "-o", out)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if n := strings.Count(errOut, "\n"); n != tt.wantLines {
				t.Errorf("%d lines on stderr, want %d:\n%.2000s", n, tt.wantLines, errOut)
			}
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Summary struct {
					Invalid, Gate string
					Notes         []string
				}
			}
			if err := json.Unmarshal(raw, &rep); err != nil {
				t.Fatalf("the report is not whole: %v", err)
			}
			named, more := 0, ""
			for _, n := range rep.Summary.Notes {
				if strings.Contains(n, "not valid JSON") {
					named++
				}
				if strings.Contains(n, "more input problem(s)") {
					more = n
				}
			}
			if named != tt.wantNotes || !strings.Contains(more, tt.wantMore) || (tt.wantMore == "") != (more == "") {
				t.Errorf("%d bad lines named in the notes, want %d; the count %q, want %q", named, tt.wantNotes, more, tt.wantMore)
			}
			if want := fmt.Sprintf("%d input problem(s)", tt.bad); !strings.Contains(rep.Summary.Invalid, want) || rep.Summary.Gate == "" {
				t.Errorf("invalid %q, want it to hold %q; gate %q", rep.Summary.Invalid, want, rep.Summary.Gate)
			}
		})
	}
}
