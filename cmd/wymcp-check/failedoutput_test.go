package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneFailedReportKeepsTheOthers: a report that cannot be written (a
// full disk) is named on stderr with its cause and the run exits 2, but
// the run is judged and every other report is written whole (once, the
// run stopped at the first failed write and left the others cut short).
// The twin: the same run with every output sound.
func TestOneFailedReportKeepsTheOthers(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	const demo = "../../examples/demo.jsonl"
	tests := []struct {
		name    string
		args    []string
		broken  string // the output that fails, as a flag; "" for none
		want    exitCode
		wantErr string
	}{
		{"lint, a --report fails", []string{"lint", demo}, "--report=junit=/dev/full", exitUsage, "wymcp-check: writing report: --report junit=/dev/full: write /dev/full: no space left on device"},
		{"check, a --report fails", []string{"check", "--demo", "--run", "lifecycle/*"}, "--report=junit=/dev/full", exitUsage, "--report junit=/dev/full: write /dev/full"},
		{"lint, every output sound", []string{"lint", demo}, "", exitFindings, ""},
		{"check, every output sound", []string{"check", "--demo", "--run", "lifecycle/*"}, "", exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			main, sarif := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.sarif")
			args := append(tt.args, "--format", "json", "-o", main, "--report", "sarif="+sarif)
			if tt.broken != "" {
				args = append(args, tt.broken)
			}
			code, _, errOut := runMain(t, "", args...)
			if code != tt.want || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("exit %d, want %d; stderr %q, want it to hold %q", code, tt.want, errOut, tt.wantErr)
			}
			var rep struct {
				Summary struct {
					Gate  string
					Pass  int
					Notes []string
				}
			}
			for _, p := range []string{main, sarif} {
				raw, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(raw, &rep); err != nil {
					t.Fatalf("%s is not whole: %v\n%.300s", filepath.Base(p), err, raw)
				}
			}
			raw, _ := os.ReadFile(main)
			json.Unmarshal(raw, &rep)
			if rep.Summary.Gate == "" || rep.Summary.Pass == 0 {
				t.Errorf("the main report judged nothing: %+v", rep.Summary)
			}
			named := strings.Contains(string(raw), "--report junit=/dev/full: not written whole")
			if named != (tt.broken != "") {
				t.Errorf("the main report names the failed report: %v, want %v; notes %q", named, tt.broken != "", rep.Summary.Notes)
			}
		})
	}
}
