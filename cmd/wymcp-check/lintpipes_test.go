//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLintPipes: an input that is a pipe (lint <(zcat t.jsonl.gz),
// /dev/stdin) or a FIFO is judged whole, as the same bytes in a file
// are. Before, each input was opened three times: the second open of a
// pipe read its first 4 KiB for the run line and the judge got the rest
// ("line 1: not valid JSON", exit 2), and a FIFO could hang.
func TestLintPipes(t *testing.T) {
	raw := readFile(t, "../../examples/demo.jsonl")
	if len(raw) <= 4096 {
		t.Fatalf("the transcript is %d bytes: too short to lose a 4 KiB sniff", len(raw))
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "demo.jsonl")
	if err := os.WriteFile(file, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	// lint runs bounded in time: a hang is a failure, not a stuck test.
	lint := func(t *testing.T, name string) (exitCode, string, string) {
		t.Helper()
		type result struct {
			code     exitCode
			out, err string
		}
		done := make(chan result, 1)
		go func() {
			s, out, errOut := testStreams()
			code := Main([]string{"lint", "--format", "json", name}, s)
			done <- result{code, strings.ReplaceAll(out.String(), name, "INPUT"), errOut.String()}
		}()
		select {
		case r := <-done:
			return r.code, r.out, r.err
		case <-time.After(20 * time.Second):
			t.Fatalf("lint %s: no end within 20s", name)
			return 0, "", ""
		}
	}
	write := func(open func() (*os.File, error)) {
		go func() {
			f, err := open()
			if err != nil {
				return // the test fails on what lint read
			}
			f.WriteString(raw)
			f.Close()
		}()
	}
	wantCode, wantOut, _ := lint(t, file)
	if wantCode != exitOK && wantCode != exitFindings {
		t.Fatalf("lint of the file: exit %d, want a judged run", wantCode)
	}
	inputs := map[string]func(t *testing.T) string{
		"fifo": func(t *testing.T) string {
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			write(func() (*os.File, error) { return os.OpenFile(fifo, os.O_WRONLY, 0) })
			return fifo
		},
		"pipe": func(t *testing.T) string {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			write(func() (*os.File, error) { return w, nil })
			// As a shell's process substitution names it.
			return fmt.Sprintf("/dev/fd/%d", r.Fd())
		},
	}
	for name, input := range inputs {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := lint(t, input(t))
			if code != wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, wantCode, errOut)
			}
			if diff := cmp.Diff(wantOut, out); diff != "" {
				t.Errorf("report (-want the file's +got):\n%s", diff)
			}
		})
	}
}
