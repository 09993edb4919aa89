//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputProblemsEscaped: an input problem's line on stderr shows an
// escape sequence from a file name or a transcript's expect key escaped,
// as the reports and the usage errors do, where once the terminal obeyed
// it (SGR, and OSC 0 retitled the window). The twin: a plain name is
// printed as it is.
func TestInputProblemsEscaped(t *testing.T) {
	demo, err := os.ReadFile("../../examples/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const esc = "esc\x1b[31mRED\x1b]0;pwned\a"
	const shown = `esc\x1b[31mRED\x1b]0;pwned\x07`
	// The line after demo's: an expect key holding the sequence.
	badKey := `{"transport":"http","expect":{"` + `\u001b[31mRED\u001b]0;pwned\u0007` + `":1},"request":{"body":"{}"},"response":{"status":200,"body":"{}"}}` + "\n"
	tests := []struct {
		name      string
		file      string // made in a temporary directory
		content   string
		args      func(dir, path string) []string
		wantShown string
	}{
		{"transcript name", esc + ".jsonl", string(demo) + "x\n", func(_, p string) []string { return []string{"lint", p} }, shown + ".jsonl:"},
		{"missing transcript name", "", "", func(dir, _ string) []string {
			return []string{"lint", "../../examples/demo.jsonl", filepath.Join(dir, "nonexist"+esc+".jsonl")}
		}, "nonexist" + shown},
		{"expect key", "t.jsonl", string(demo) + badKey, func(_, p string) []string { return []string{"lint", p} }, `expect.\x1b[31mRED\x1b]0;pwned\x07`},
		{"baseline name", esc + ".base.txt", "fx CHECKX reason\n", func(_, p string) []string {
			return []string{"lint", "../../examples/demo.jsonl", "--baseline", p}
		}, shown + ".base.txt:1:"},
		{"baseline line, sound", "b.txt", "fx ERR1001 \x1b[31mRED\x1b]0;pwned\a\nfx CHECKX reason\n", func(_, p string) []string {
			return []string{"lint", "../../examples/demo.jsonl", "--baseline", p}
		}, "b.txt:2:"},
		{"fixture file name", esc + ".txtar", "Purpose\n-- fixture --\nid: user/x y\nrules: T-TOOL-6\n-- body --\n{}\n", func(dir, _ string) []string {
			return []string{"check", "--demo", "--fixtures", dir, "--run", "lifecycle/ping"}
		}, shown + ".txtar:"},
		// The twin: nothing to escape.
		{"plain name", "plain.jsonl", string(demo) + "x\n", func(_, p string) []string { return []string{"lint", p} }, "plain.jsonl:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.file)
			if tt.file != "" {
				if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			code, _, errOut := runMain(t, "", append(tt.args(dir, path), "-o", os.DevNull)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if strings.ContainsAny(errOut, "\x1b\a") || !strings.Contains(errOut, tt.wantShown) {
				t.Errorf("stderr %q\nwant no ESC or BEL in it, and %q", errOut, tt.wantShown)
			}
		})
	}
}
