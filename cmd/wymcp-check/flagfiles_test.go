//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFlagFilesBounded: a file a flag names (--contract, --baseline) is
// read through one bound and never waits for a FIFO's writer: the run
// stops with the flag, the file and the cause (once, a FIFO hung it for
// ever and /dev/zero grew it by gigabytes). Its twins, the same flags
// on sound files and on a FIFO that is written, still work.
func TestFlagFilesBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	contract := filepath.Join(dir, "c.json")
	if err := os.WriteFile(contract, []byte(`{"extends":"spec"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "b.txt")
	if err := os.WriteFile(base, []byte("# none\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const demo = "../../examples/demo.jsonl"
	tests := []struct {
		name    string
		args    []string
		pipe    string // the flag's file is a pipe that holds this, its writer gone: <(cat c.json)
		want    exitCode
		wantErr string
	}{
		{"contract FIFO without writer", []string{"--contract", fifo}, "", exitUsage, "--contract: reading contract: " + fifo + ": nothing to read: a FIFO or pipe with no writer"},
		{"baseline FIFO without writer", []string{"--baseline", fifo}, "", exitUsage, "--baseline: reading baseline " + fifo + ": nothing to read: a FIFO or pipe with no writer"},
		{"contract /dev/zero", []string{"--contract", "/dev/zero"}, "", exitUsage, "--contract: reading contract: /dev/zero runs past 67108864 bytes"},
		{"baseline /dev/zero", []string{"--baseline", "/dev/zero"}, "", exitUsage, "/dev/zero:1: the baseline runs past 67108864 bytes"},
		{"schema FIFO without writer", []string{"--schema", fifo}, "", exitUsage, "--schema: schema file " + fifo + ": " + fifo + ": nothing to read: a FIFO or pipe with no writer"},
		{"schema /dev/zero", []string{"--schema", "/dev/zero"}, "", exitUsage, "--schema: schema file /dev/zero: /dev/zero runs past 16777216 bytes"},
		// The twins: sound files, and a FIFO with a writer, are read.
		{"contract file", []string{"--contract", contract}, "", exitFindings, ""},
		{"contract pipe", []string{"--contract"}, `{"extends":"spec"}`, exitFindings, ""},
		{"baseline file", []string{"--baseline", base}, "", exitFindings, ""},
		{"baseline pipe", []string{"--baseline"}, "# none\n", exitFindings, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if tt.pipe != "" {
				// As a shell's process substitution hands it over: the
				// pipe holds the text and its writer has closed.
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if _, err := w.WriteString(tt.pipe); err != nil {
					t.Fatal(err)
				}
				w.Close()
				args = append(args, "/dev/fd/"+strconv.Itoa(int(r.Fd())))
			}
			type result struct {
				code        exitCode
				out, errOut string
			}
			done := make(chan result, 1)
			go func() {
				code, out, errOut := runMain(t, "", append([]string{"lint", demo, "-o", os.DevNull}, args...)...)
				done <- result{code, out, errOut}
			}()
			select {
			case r := <-done:
				if r.code != tt.want || !strings.Contains(r.errOut, tt.wantErr) {
					t.Errorf("exit %d, want %d\nstderr:\n%s\nwant it to hold %q", r.code, tt.want, r.errOut, tt.wantErr)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the run still waits after 20s")
			}
		})
	}
}
