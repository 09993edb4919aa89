package main

import (
	"strings"
	"testing"
)

// TestEmptyIsNoDefault: an empty flag value, or an empty message to
// send, is a usage error naming what is empty (once, an empty --contract and
// its like were judged with the defaults and send sent an empty body,
// exit 0). The twins: the values meant, and a message, still work.
func TestEmptyIsNoDefault(t *testing.T) {
	const demo = "../../examples/demo.jsonl"
	const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	tests := []struct {
		name    string
		stdin   string
		args    []string
		want    exitCode
		wantErr string
	}{
		{"--contract empty", "", []string{"lint", demo, "--contract", ""}, exitUsage, "--contract '': the value is empty; want strict, spec or a contract file"},
		{"--schema empty", "", []string{"lint", demo, "--schema", ""}, exitUsage, "--schema '': the value is empty; want builtin, none or a schema file"},
		{"--checks empty", "", []string{"lint", demo, "--checks="}, exitUsage, "--checks '': the value is empty"},
		{"check --contract empty", "", []string{"check", "--demo", "--contract="}, exitUsage, "--contract '': the value is empty"},
		{"send --schema empty", ping, []string{"send", "--demo", "--schema", "", "-"}, exitUsage, "--schema '': the value is empty"},
		{"send nothing on stdin", "", []string{"send", "--demo", "-"}, exitUsage, "standard input is empty: nothing to send"},
		{"send a lone newline", "\n", []string{"send", "--demo", "-"}, exitUsage, "standard input is empty: nothing to send"},
		// The twins.
		{"--contract spec", "", []string{"lint", demo, "--contract", "spec"}, exitFindings, ""},
		{"--schema builtin", "", []string{"lint", demo, "--schema", "builtin"}, exitFindings, ""},
		{"--checks all", "", []string{"lint", demo, "--checks", "all"}, exitFindings, ""},
		{"send a message", ping, []string{"send", "--demo", "-"}, exitOK, ""},
		{"send an empty body said so", "-- body --\n", []string{"send", "--demo", "-"}, exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.stdin, tt.args...)
			if code != tt.want || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("exit %d, want %d; stderr %q, want it to hold %q\nstdout:\n%s", code, tt.want, errOut, tt.wantErr, out)
			}
		})
	}
}
