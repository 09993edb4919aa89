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

// stubSchemas answers every reply with the entries it holds, as a user's
// --schema FILE could.
type stubSchemas []envelope.DistilledEntry

func (s stubSchemas) ValidateReply(string, string, []byte) ([]envelope.DistilledEntry, error) {
	return s, nil
}

// A fractional ttlMs warns (AMB-18) only when being a fraction is all
// that is wrong with it: a bound a user's schema adds, or an integer it
// refuses for another reason, stays a failure with its own problem.
func TestTTLFractionWarnsAlone(t *testing.T) {
	for _, c := range []struct {
		ttl      string
		problems []string
		want     checks.Status
	}{
		{"1500.5", []string{"got number, want integer"}, checks.StatusWarn},
		{"120000.5", []string{"got number, want integer", "must be <= 60000"}, checks.StatusFail},
		{"120000", []string{"must be <= 60000"}, checks.StatusFail},
		{"-1.5", []string{"got number, want integer"}, checks.StatusFail},
	} {
		reply := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":` + c.ttl + `,"cacheScope":"public","tools":[]}}`
		ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20260728,
			Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
			Response: &envelope.Response{Messages: [][]byte{[]byte(reply)}}}
		in := checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil),
			Schemas: stubSchemas{{Location: "/result/ttlMs", Problems: c.problems}}}
		vs := checks.Judge(in, []*checks.Check{checks.SchemaValid})
		if len(vs) != 1 || vs[0].Status != c.want {
			t.Errorf("ttlMs %s with %q: %+v, want %s", c.ttl, c.problems, vs, c.want)
		}
	}
}

// A finding that breaks the expectation built from the request names the
// expectation's rule, so the coverage table can count it against that
// rule; a finding of a check that judged no expectation names none.
func TestFindingNamesItsRule(t *testing.T) {
	judge := func(reply string, c *checks.Check) []checks.Finding {
		ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20260728,
			Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
			Response: &envelope.Response{Messages: [][]byte{[]byte(reply)}}}
		vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil)}, []*checks.Check{c})
		if len(vs) != 1 {
			t.Fatalf("%s: %d verdicts, want 1", c.ID, len(vs))
		}
		return vs[0].Findings
	}
	if fs := judge(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[]}}`, checks.IDEcho); len(fs) != 1 || fs[0].Rule != "T-RPC-5" {
		t.Errorf("a wrong id: %+v, want one finding naming T-RPC-5", fs)
	}
	if fs := judge(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[]}}`, checks.IDEcho); len(fs) != 0 {
		t.Errorf("the request's id: %+v, want no finding", fs)
	}
	if fs := judge(`{"jsonrpc":"1.0","id":1,"result":{"resultType":"complete","tools":[]}}`, checks.JSONRPCVersion); len(fs) != 1 || fs[0].Rule != "" {
		t.Errorf("jsonrpc 1.0: %+v, want one finding naming no expectation's rule", fs)
	}
	// The code table: a code 2026-07-28 forbids names its rule; one only
	// the strict contract refuses names the contract.
	if fs := judge(`{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"resource not found"}}`, checks.CodeInTable); len(fs) != 1 || fs[0].Rule != "T-ERR-10" {
		t.Errorf("-32002 in 2026-07-28: %+v, want one finding naming T-ERR-10", fs)
	}
	if fs := judge(`{"jsonrpc":"2.0","id":1,"error":{"code":-32050,"message":"odd"}}`, checks.CodeInTable); len(fs) != 1 || fs[0].Rule != "T-ERR-8" {
		t.Errorf("-32050 in 2026-07-28: %+v, want one finding naming T-ERR-8", fs)
	}
	if fs := judge(`{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":"odd"}}`, checks.CodeInTable); len(fs) != 1 || fs[0].Rule != checks.ContractRule {
		t.Errorf("code 0: %+v, want one finding naming the contract", fs)
	}
	if fs := judge(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"unknown method"}}`, checks.CodeInTable); len(fs) != 0 {
		t.Errorf("-32601: %+v, want no finding", fs)
	}
}
