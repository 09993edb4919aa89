package checks_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
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
		reply := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid arguments for tool t","data":{"errors":[` + strings.Join(entries, ",") + `]}}}`
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
// rule; a finding of a check that judged no expectation names none. A
// finding the spec does not speak to names what it breaks instead (the
// contract, JSON-RPC's own text), so it counts against no rule of the
// check's.
func TestFindingNamesItsRule(t *testing.T) {
	tests := []struct {
		name     string
		version  string
		contract *envelope.Contract
		check    *checks.Check
		reply    string
		want     []string // each finding's Rule
	}{
		{"a wrong id", envelope.V20260728, nil, checks.IDEcho, `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[]}}`, []string{"T-RPC-5"}},
		{"the request's id", envelope.V20260728, nil, checks.IDEcho, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[]}}`, nil},
		{"jsonrpc 1.0 (no expectation)", envelope.V20260728, nil, checks.JSONRPCVersion, `{"jsonrpc":"1.0","id":1,"result":{"resultType":"complete","tools":[]}}`, []string{""}},
		{"-32002 in 2026-07-28", envelope.V20260728, nil, checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"resource not found"}}`, []string{"T-ERR-10"}},
		{"-32050 in 2026-07-28", envelope.V20260728, nil, checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":-32050,"message":"odd"}}`, []string{"T-ERR-8"}},
		{"code 0, strict", envelope.V20260728, nil, checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":"odd"}}`, []string{checks.ContractRule}},
		{"-32601", envelope.V20260728, nil, checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"unknown method"}}`, nil},
		{"-32000 in 2026-07-28", envelope.V20260728, nil, checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"odd"}}`, []string{"T-ERR-9"}},
		// The TypeScript SDK's transport refuses with -32000: a warn of
		// the contract, which keeps T-ERR-5 and its kin judgeable.
		{"-32000 in 2025-11-25, strict", envelope.V20251125, nil, checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"odd"}}`, []string{checks.ContractRule}},
		{"-32000 in 2025-11-25, spec", envelope.V20251125, envelope.Spec(), checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"odd"}}`, nil},
		{"-32100 in 2025-11-25, spec", envelope.V20251125, envelope.Spec(), checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":-32100,"message":"odd"}}`, []string{"JSON-RPC §5.1"}},
		{"-32100 in 2026-07-28, spec", envelope.V20260728, envelope.Spec(), checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":-32100,"message":"odd"}}`, []string{"T-ERR-11"}},
		// The strict contract fails it; the spec warns of JSON-RPC's text.
		{"-32100 in 2025-11-25, strict", envelope.V20251125, nil, checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":-32100,"message":"odd"}}`, []string{"JSON-RPC §5.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := &envelope.Exchange{Transport: envelope.Stdio, Version: tt.version,
				Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
				Response: &envelope.Response{Messages: [][]byte{[]byte(tt.reply)}}}
			wantRules(t, checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil), Contract: tt.contract}, tt.check, tt.want)
		})
	}
}

// A problem the checker's own schema finds names the rule of the digest
// its location breaks (the coverage table counts it there alone); one the
// location does not tell, or a user's --schema finds, names none.
func TestSchemaProblemNamesItsRule(t *testing.T) {
	raw, err := os.ReadFile("testdata/schemarules/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name, Version, Method string
		Reply                 json.RawMessage
		UserSchema            bool
		Want                  []string
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatalf("testdata/schemarules/cases.json: %v", err)
	}
	ours := checks.ProtocolSchemas(schema.NewRegistry())
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ex := &envelope.Exchange{Transport: envelope.Stdio, Version: c.Version,
				Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"` + c.Method + `","params":{}}`)},
				Response: &envelope.Response{Messages: [][]byte{c.Reply}}}
			in := checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil), Schemas: ours}
			if c.UserSchema {
				entries, err := ours.ValidateReply(c.Version, c.Method, c.Reply)
				if err != nil {
					t.Fatal(err)
				}
				in.Schemas = stubSchemas(entries)
			}
			wantRules(t, in, checks.SchemaValid, c.Want)
		})
	}
}

// wantRules judges in with c alone and compares the rule each finding
// names with want.
func wantRules(t *testing.T, in checks.Input, c *checks.Check, want []string) {
	t.Helper()
	vs := checks.Judge(in, []*checks.Check{c})
	if len(vs) != 1 {
		t.Fatalf("%d verdicts, want 1", len(vs))
	}
	var got []string
	for _, f := range vs[0].Findings {
		got = append(got, f.Rule)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules of the findings %+v (-want +got):\n%s", vs[0].Findings, diff)
	}
}

// HTTP1001's findings say whose rule a bare error status breaks, and
// HTTP1002's whose rule a status breaks: the
// contract's alone (a status the HTTP layer may send, a refusal the spec
// lets come bare) names the contract, so the coverage table counts it
// against none of the fixture's rules; a body the spec asks only as a
// SHOULD fails the strict contract and says the spec warns; one the spec
// requires names none, and fails the fixture's rules (testdata/bodyrules).
func TestErrorStatusBodyNamesItsRule(t *testing.T) {
	raw, err := os.ReadFile("testdata/bodyrules/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	type finding struct{ Rule, Status, Spec string }
	var cases []struct {
		Name, Version, Contract, ContentType, Body string
		Check                                      string // HTTP1001 when empty
		Request                                    string // tools/list when empty
		Status                                     int
		Want                                       []finding
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatalf("testdata/bodyrules/cases.json: %v", err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var contract *envelope.Contract
			if c.Contract == "spec" {
				contract = envelope.Spec()
			}
			h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {c.Version}}
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + c.Version + `"}}}`
			if c.Version != envelope.V20260728 {
				body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
			}
			if c.Request != "" {
				body = c.Request
			}
			ex := &envelope.Exchange{Transport: envelope.HTTP, Version: c.Version,
				Request:  envelope.Request{Header: h, Body: []byte(body)},
				Response: &envelope.Response{Status: c.Status, Header: http.Header{"Content-Type": {c.ContentType}}, Body: []byte(c.Body)}}
			in := checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil), Contract: contract}
			if c.Check == "" {
				c.Check = checks.ErrorStatusBody.ID
			}
			vs := checks.Judge(in, []*checks.Check{checks.Lookup(c.Check)})
			if len(vs) != 1 {
				t.Fatalf("%d verdicts, want 1", len(vs))
			}
			var got []finding
			for _, f := range vs[0].Findings {
				got = append(got, finding{f.Rule, string(f.Status), string(f.Spec)})
			}
			if diff := cmp.Diff(c.Want, got); diff != "" {
				t.Errorf("findings %+v (-want +got):\n%s", vs[0].Findings, diff)
			}
		})
	}
}

// A breach the strict contract fails and the spec only asks (a SHOULD)
// says so, for the coverage table that speaks of the spec's rules; a
// breach of the contract alone says the spec gives it none (a pass); one
// judged under --contract spec carries no second verdict.
func TestFindingSaysWhatTheSpecGivesIt(t *testing.T) {
	tests := []struct {
		name     string
		contract *envelope.Contract
		check    *checks.Check
		reply    string
		want     checks.Finding // Status and Spec
	}{
		{"a multi-line message, strict", nil, checks.MessageOneLine, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no\nsuch method"}}`, checks.Finding{Status: checks.StatusFail, Spec: checks.StatusWarn}},
		{"a multi-line message, spec", envelope.Spec(), checks.MessageOneLine, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no\nsuch method"}}`, checks.Finding{Status: checks.StatusWarn}},
		{"code 0, strict: the contract alone", nil, checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":"odd"}}`, checks.Finding{Status: checks.StatusFail, Spec: checks.StatusPass}},
		// The reserved range: the strict contract fails it, the spec
		// warns (T-ERR-11 in 2026-07-28; JSON-RPC's text before).
		{"-32100, strict: the spec warns", nil, checks.CodeInTable, `{"jsonrpc":"2.0","id":1,"error":{"code":-32100,"message":"odd"}}`, checks.Finding{Status: checks.StatusFail, Spec: checks.StatusWarn}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125,
				Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
				Response: &envelope.Response{Messages: [][]byte{[]byte(tt.reply)}}}
			vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil), Contract: tt.contract}, []*checks.Check{tt.check})
			if len(vs) != 1 || len(vs[0].Findings) != 1 {
				t.Fatalf("verdicts %+v, want one with one finding", vs)
			}
			f := vs[0].Findings[0]
			if got := (checks.Finding{Status: f.Status, Spec: f.Spec}); got != tt.want {
				t.Errorf("finding %+v: status and spec %+v, want %+v", f, got, tt.want)
			}
		})
	}
}

// A check of the strict contract alone skips under --contract spec, for
// any reply; under the strict contract the same reply is judged.
func TestStrictOnlyChecksSkipUnderSpec(t *testing.T) {
	ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125,
		Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":"wymcp-echo-canary-value-long-enough"}}}`)},
		Response: &envelope.Response{Messages: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"wymcp-echo-canary-value-long-enough"}}`)}}}
	n := 0
	for _, c := range checks.All() {
		if !c.StrictOnly {
			continue
		}
		n++
		for _, contract := range []*envelope.Contract{envelope.Spec(), envelope.Strict()} {
			vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil), Contract: contract}, []*checks.Check{c})
			skipped := vs[0].Status == checks.StatusSkip && vs[0].Reason == "not part of the spec contract"
			if skipped != !contract.IsStrict() {
				t.Errorf("%s under %s: %s %q", c.ID, contract.Name, vs[0].Status, vs[0].Reason)
			}
		}
	}
	if n == 0 {
		t.Fatal("no check is marked StrictOnly")
	}
}

// Two request values echoed in one text name that text once: the
// message listed "error.message, error.message".
func TestEchoedValuesPathsOnce(t *testing.T) {
	ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125,
		Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_room","arguments":{"start":"2026-12-24T10:00:00Z","end":"2026-12-23T10:00:00Z"}}}`)},
		Response: &envelope.Response{Messages: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"end 2026-12-23T10:00:00Z is before start 2026-12-24T10:00:00Z"}}`)}}}
	vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil)}, []*checks.Check{checks.NoEcho})
	var msgs []string
	for _, v := range vs {
		for _, f := range v.Findings {
			msgs = append(msgs, f.Message)
		}
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "(at error.message)") {
		t.Errorf("findings %q, want one naming error.message once", msgs)
	}
}

// A request large enough for a size limit a server may set, refused 413
// with -32600 and no id, passes ERR1002 and HTTP1002 whatever its body's
// condition (here a missing _meta): the body was never read. The small
// twin warns (size_limit_413_small_missing_meta_warns).
func TestSizeLimitPlausible(t *testing.T) {
	pad := strings.Repeat("x", 70<<10)
	ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20260728,
		Request: envelope.Request{Header: http.Header{"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}},
			Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + pad + `"}}`)},
		Response: &envelope.Response{Status: 413, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message exceeds 65536 bytes"}}`)}}
	vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil)}, []*checks.Check{checks.CodeFits, checks.StatusFits})
	for _, v := range vs {
		if v.Status != checks.StatusPass {
			t.Errorf("%s %s %s %v", v.Check.ID, v.Status, v.Reason, v.Findings)
		}
	}
}

// TestSilenceNoteOnlyWhenTimeRanOut: a tools/call of a listed tool left
// unanswered fails RPC1006; the advice to raise --timeout for a tool that
// runs longer fits only where the checker's bound ran out, not a stream
// the server itself ended without the response (review rev7: an exchange
// of 0.8 ms got the advice).
func TestSilenceNoteOnlyWhenTimeRanOut(t *testing.T) {
	facts, err := expect.ParseFacts([]byte(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req := []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{}}}`)
	for _, tc := range []struct {
		name   string
		resp   *envelope.Response
		advice bool
	}{
		{name: "no reply within --timeout", advice: true},
		{name: "a stream cut at --timeout", resp: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(": working\n\n"), Cut: true}, advice: true},
		{name: "a stream the server ended", resp: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte("event: close\ndata:\n\n"), Ended: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20250618,
				Request: envelope.Request{Header: http.Header{"Content-Type": {"application/json"}}, Body: req}, Response: tc.resp}
			vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, facts, nil)}, checks.All())
			var msg string
			for _, v := range vs {
				if v.Check.ID == "RPC1006" && v.Status == checks.StatusFail {
					msg = v.Findings[0].Message
				}
			}
			if msg == "" {
				t.Fatalf("RPC1006 did not fail: %v", vs)
			}
			if got := strings.Contains(msg, "needs a higher --timeout"); got != tc.advice {
				t.Errorf("advice to raise --timeout: %v, want %v: %s", got, tc.advice, msg)
			}
		})
	}
}

// TestSilenceNamesTheOwedError: a stdio message left unanswered that
// was owed an error (a line that is not JSON, an id that is an array)
// says what it was and the code it was owed, so a person can act on the
// finding (review rev64: thirteen such fixtures said one sentence); a
// well-formed request's silence says neither (the twin), nor does one
// whose answer the spec leaves open.
func TestSilenceNamesTheOwedError(t *testing.T) {
	for _, tc := range []struct {
		body string
		want string // "" for no owed error named
	}{
		{`this is not json {`, "parse error (the body is not valid JSON), owed an error response with code -32700"},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, "owed an error response with code -32600"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, ""},
		// An open point (AMB-7: an empty batch) owes nothing for sure
		// (review rev65).
		{`[]`, ""},
	} {
		ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125, Request: envelope.Request{Body: []byte(tc.body)}}
		vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil)}, []*checks.Check{checks.OneReply})
		if len(vs) != 1 || len(vs[0].Findings) == 0 {
			t.Fatalf("%s: RPC1006 found nothing: %+v", tc.body, vs)
		}
		msg := vs[0].Findings[0].Message
		if tc.want == "" && strings.Contains(msg, "owed") || tc.want != "" && !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q, want it to say %q", tc.body, msg, tc.want)
		}
	}
}

// TestGetStreamProgressCitesItsRule: progress on a 2025 GET stream names
// a request in flight, which the stream's messages SHOULD leave alone;
// the warning says so, not that "the request gave no progressToken" (a
// GET offers none, and T-PROG-1 is not broken). Case
// get_stream_progress_warns pins its level.
func TestGetStreamProgressCitesItsRule(t *testing.T) {
	ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20250618,
		Request: envelope.Request{Method: http.MethodGet, Header: http.Header{"Accept": {"text/event-stream"}, "Mcp-Session-Id": {"s1"}}},
		Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: []byte(`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t-7","progress":1}}` + "\n\n")}}
	vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil)}, checks.All())
	for _, v := range vs {
		if v.Check.ID != "PRO1003" {
			continue
		}
		if v.Status != checks.StatusWarn || len(v.Findings) != 1 {
			t.Fatalf("PRO1003 %s %v, want one warning", v.Status, v.Findings)
		}
		if msg := v.Findings[0].Message; !strings.Contains(msg, "on the GET stream") || strings.Contains(msg, "gave no progressToken") {
			t.Errorf("message %q, want it to name the GET stream's rule", msg)
		}
	}
}
