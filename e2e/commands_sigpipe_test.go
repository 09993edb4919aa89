//go:build unix

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCommandsSIGPIPE: `check … | head -1` and `lint … | head -1`: the
// reader of stdout is gone before the human report is written. The
// write fails as a write to a full disk does: exit 2, stderr names the
// report, and the --report file is whole. Go's runtime killed them with
// SIGPIPE (exit 141), the report cut short (review rev73).
func TestCommandsSIGPIPE(t *testing.T) {
	recorded, err := filepath.Glob("../testdata/recorded/*.jsonl")
	if err != nil || len(recorded) == 0 {
		t.Fatalf("no recorded transcripts: %v", err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"check", []string{"check", "--demo", "-v"}},
		{"lint", []string{"lint", "-v", recorded[0]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := filepath.Join(t.TempDir(), "r.json")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // the reader went away before the first line
			var stderr bytes.Buffer
			cmd := exec.Command(checkerBin, append(tc.args, "--color", "never", "--report", "json="+rep)...)
			cmd.Stdout, cmd.Stderr = w, &stderr
			err = cmd.Run()
			w.Close()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("killed by %v: %v\n%s", ws.Signal(), err, stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("exit %d, want 2 (a report could not be written)\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "broken pipe") {
				t.Errorf("stderr does not name the broken pipe:\n%s", stderr.String())
			}
			checkReportWhole(t, rep)
		})
	}
}
