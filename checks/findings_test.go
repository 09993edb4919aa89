package checks_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// A reply that breaks one rule many times is one verdict with a bounded
// list: the findings past the bound are counted in a last line, which
// keeps the surest status among them.
func TestFindingsBounded(t *testing.T) {
	for _, n := range []int{3, 40, 5000} {
		var entries []string
		for i := range n {
			entries = append(entries, fmt.Sprintf(`"problem %d"`, i))
		}
		reply := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid arguments","data":{"errors":[` + strings.Join(entries, ",") + `]}}}`
		ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125,
			Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}`)},
			Response: &envelope.Response{Messages: [][]byte{[]byte(reply)}}}
		exp := expect.Build(ex, nil, nil)
		vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: exp}, checks.All())
		most := 0
		for _, v := range vs {
			if len(v.Findings) <= most {
				continue
			}
			most = len(v.Findings)
			if n > 33 {
				last := v.Findings[len(v.Findings)-1]
				if want := fmt.Sprintf("%d more findings of this check are not listed", n-32); last.Message != want || last.Status != v.Status {
					t.Errorf("n=%d %s: last finding %+v, want %q with status %s", n, v.Check.ID, last, want, v.Status)
				}
			}
		}
		want := min(n, 33)
		if most != want {
			t.Errorf("n=%d: the longest list has %d findings, want %d", n, most, want)
		}
	}
}
