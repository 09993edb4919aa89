package main

import (
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	tests := []struct {
		arg      string
		want     exitCode
		wantOut  []string
		wantErr  string
		wantNone string
	}{
		{"ERR1001", exitOK, []string{"ERR1001: ", "Spec:     T-ERR-1..T-ERR-11", "Rules (wymcp-check explain RULE", "T-ERR-9", "SHOULD NOT"}, "", ""},
		{"T-ERR-9", exitOK, []string{"T-ERR-9: ", "Level:     SHOULD NOT", "Versions:  2026-07-28", "Checks citing it:   ERR1001"}, "", ""},
		{"amb-17", exitOK, []string{"AMB-17: ", "Level:     AMB", "Fixtures citing it: http/accept-json-only"}, "", ""},
		{"T-HTTP-20", exitOK, []string{"Checkable: no"}, "", ""},
		{"T-ERR-99", exitUsage, nil, `unknown check "T-ERR-99"`, "T-ERR-99:"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			code, out, errOut := runMain(t, "", "explain", tt.arg)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.want, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr lacks %q: %s", tt.wantErr, errOut)
			}
			if tt.wantNone != "" && strings.Contains(out, tt.wantNone) {
				t.Errorf("stdout has %q:\n%s", tt.wantNone, out)
			}
		})
	}
}
