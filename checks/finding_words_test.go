package checks_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/checks"
	"golang.org/x/tools/txtar"
)

// TestFindingWords: a finding names a JSON id as the JSON it is ("Q", 7),
// not as a string quoting that JSON again ("\"Q\""), and says how the
// property an x-mcp-header sits on is typed in words that read as that
// type, not as a string type.
func TestFindingWords(t *testing.T) {
	for _, c := range []struct{ file, check, path, want string }{
		{"list_changed_tagged_no_listen_stdio_fails.txtar", "PRO1003", "messages[0]", `tagged with subscriptionId "ZZZ", which`},
		{"stdio_answered_again_fails.txtar", "RPC1006", "reply", `a second response to the request with id 5 came, after an earlier exchange had taken its response`},
		{"stdio_answered_copy_fails.txtar", "RPC1006", "reply", `the response to the request with id 5 came again, byte for byte, after an earlier exchange had taken it`},
		{"listen_stdio_cancel_unlistened_fails.txtar", "PRO1008", "messages[1]", `naming request "Q", which`},
		{"listen_cancel_untagged_no_listen_stdio_fails.txtar", "PRO1008", "messages[0]", `naming request "L7", which`},
		{"param_header_object_fails.txtar", "PRO1010", "result.tools.0.inputSchema.properties.region.x-mcp-header", `is on a property of type "object"; only a property of one type`},
		{"param_header_number_fails.txtar", "PRO1010", "result.tools.0.inputSchema.properties.a.x-mcp-header", `is on a property of types ["number","null"];`},
		{"param_header_number_fails.txtar", "PRO1010", "result.tools.0.inputSchema.properties.c.x-mcp-header", `is on a property typed by an enum or const whose values are not all integers, all strings or all booleans;`},
		{"param_header_number_fails.txtar", "PRO1010", "result.tools.0.inputSchema.properties.d.x-mcp-header", `is on a property with no type;`},
	} {
		t.Run(c.file+"/"+c.path, func(t *testing.T) {
			file := filepath.Join("testdata", c.file)
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tc := parseCase(t, file, ar)
			ex := tc.ex
			var got []string
			for _, v := range checks.Judge(input(tc, &ex), checks.All()) {
				for _, f := range v.Findings {
					if v.Check.ID == c.check && f.Path == c.path {
						got = append(got, f.Message)
					}
				}
			}
			if len(got) != 1 || !strings.Contains(got[0], c.want) {
				t.Errorf("%s %s: want one finding saying %q, got %q", c.check, c.path, c.want, got)
			}
		})
	}
}
