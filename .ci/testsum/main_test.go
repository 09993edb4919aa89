package main

import (
	"bytes"
	"strings"
	"testing"
)

// A run with a pass, a skip with its reason, and a package without
// tests, as go test -json reports it.
const skipped = `{"Action":"start","Package":"ex/a"}
{"Action":"run","Package":"ex/a","Test":"TestOK"}
{"Action":"output","Package":"ex/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"ex/a","Test":"TestOK","Elapsed":0}
{"Action":"run","Package":"ex/a","Test":"TestOfficial"}
{"Action":"output","Package":"ex/a","Test":"TestOfficial","Output":"=== RUN   TestOfficial\n"}
{"Action":"output","Package":"ex/a","Test":"TestOfficial","Output":"    official_test.go:25: official MCP schemas not found: set WYMCP_MCP_SCHEMA_DIR\n"}
{"Action":"output","Package":"ex/a","Test":"TestOfficial","Output":"--- SKIP: TestOfficial (0.00s)\n"}
{"Action":"skip","Package":"ex/a","Test":"TestOfficial","Elapsed":0}
{"Action":"pass","Package":"ex/a","Elapsed":0.5}
{"Action":"skip","Package":"ex/b","Elapsed":0}
`

const failed = `{"Action":"run","Package":"ex/c","Test":"TestBad"}
{"Action":"output","Package":"ex/c","Test":"TestBad","Output":"    bad_test.go:9: want 1, got 2\n"}
{"Action":"output","Package":"ex/c","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"ex/c","Test":"TestBad","Elapsed":0}
{"Action":"fail","Package":"ex/c","Elapsed":0.1}
`

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		failOnSkip bool
		want       int
		wantOut    []string
	}{
		{"skips listed", skipped, false, 0, []string{"ok  \tex/a\t0.500s", "?   \tex/b\t[no test files]", "skipped: 1 test(s)", "ex/a TestOfficial: official_test.go:25: official MCP schemas not found: set WYMCP_MCP_SCHEMA_DIR"}},
		{"skips fail under -fail-on-skip", skipped, true, 1, []string{"FAIL: 1 test(s) skipped"}},
		{"nothing skipped", failed[:0] + `{"Action":"pass","Package":"ex/a","Elapsed":0.2}` + "\n", true, 0, []string{"skipped: none"}},
		{"a failure fails, with its output", failed, false, 1, []string{"bad_test.go:9: want 1, got 2", "FAIL\tex/c\t0.100s"}},
		{"a build error passes through and fails", "# ex/d\nd.go:3:1: syntax error\n" + `{"Action":"build-fail","ImportPath":"ex/d"}` + "\n", false, 1, []string{"d.go:3:1: syntax error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if got := run(strings.NewReader(tt.in), &out, tt.failOnSkip); got != tt.want {
				t.Errorf("exit %d, want %d\n%s", got, tt.want, out.String())
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
