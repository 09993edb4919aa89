package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrapReportSpelling: wrap's --report takes check's FORMAT=PATH as
// well as its own FILE (in the --format). Before, html=r.html wrote a
// JSON report to a file named "html=r.html". --format beside a
// FORMAT= that differs is a usage error naming both.
func TestWrapReportSpelling(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	server := `read line; printf '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n'; cat >/dev/null`
	request := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}` + "\n"
	tests := []struct {
		name   string
		flags  func(dir string) []string
		file   string // the report written, in dir
		starts string // how it starts
		code   exitCode
		stderr string
	}{
		{"format=path", func(d string) []string { return []string{"--report", "html=" + filepath.Join(d, "r.html")} }, "r.html", "<!doctype html>", exitOK, ""},
		{"junit=path", func(d string) []string { return []string{"--report", "junit=" + filepath.Join(d, "r.xml")} }, "r.xml", "<?xml", exitOK, ""},
		{"file and --format", func(d string) []string {
			return []string{"--format", "html", "--report", filepath.Join(d, "r.html")}
		}, "r.html", "<!doctype html>", exitOK, ""},
		{"file, default json", func(d string) []string { return []string{"--report", filepath.Join(d, "r.json")} }, "r.json", "{", exitOK, ""},
		{"two formats", func(d string) []string {
			return []string{"--format", "json", "--report", "html=" + filepath.Join(d, "r.html")}
		}, "", "", exitUsage, "and --format json name two formats for one report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append(append([]string{"wrap"}, tt.flags(dir)...), "--", "/bin/sh", "-c", server)
			code, _, errOut := runMain(t, request, args...)
			if code != tt.code || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s", code, tt.code, tt.stderr, errOut)
			}
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if tt.file == "" {
				if len(names) > 0 {
					t.Errorf("files written: %q, want none", names)
				}
				return
			}
			if len(names) != 1 || names[0] != tt.file {
				t.Fatalf("files written: %q, want %s alone", names, tt.file)
			}
			if got := readFile(t, filepath.Join(dir, tt.file)); !strings.HasPrefix(strings.TrimSpace(got), tt.starts) {
				t.Errorf("%s starts %.60q, want %q", tt.file, got, tt.starts)
			}
		})
	}
}
