package report_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/report"
)

var hexEsc = regexp.MustCompile(`\\x([0-9a-f]{2})`)

// hexBytes is s with each \xHH the byte HH.
func hexBytes(s string) []byte {
	return hexEsc.ReplaceAllFunc([]byte(s), func(m []byte) []byte {
		b, _ := strconv.ParseUint(string(m[2:]), 16, 8)
		return []byte{byte(b)}
	})
}

// TestCoverageChecksAloneSayWhy: a rule no fixture cites passes when a
// check citing it judged an exchange and found nothing; where each such
// check cites several rules, the table says that whether the run
// provoked what the rule binds is not known (review rev66: T-AUTH-1
// "passed" against a server without authorization, T-TASK-1 with no
// tool called; here T-COMP-1 with no completion asked); where one cites
// it alone, its pass is the rule's.
func TestCoverageChecksAloneSayWhy(t *testing.T) {
	ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20251125,
		Request:  envelope.Request{Method: "POST", Header: http.Header{"Content-Type": {"application/json"}, "Mcp-Protocol-Version": {envelope.V20251125}}, Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}}
	x := expect.Build(ex, nil, nil)
	cov := report.NewCoverageTracker(map[string][]string{"lifecycle/ping": {"T-LIFE-5"}}, checks.All())
	cov.Add(&report.Result{Fixture: "lifecycle/ping", Exchange: ex, Expect: x, Verdicts: checks.Judge(checks.Input{Fixture: "lifecycle/ping", Exchange: ex, Expect: x}, checks.All())})
	rules := map[string]report.RuleCoverage{}
	sum := cov.Summary(envelope.V20251125, envelope.HTTP)
	if sum.Unprobed == 0 || !strings.Contains(sum.Line(), "not known to be put to the test") {
		t.Errorf("the summary does not count the rules passed by checks of several rules alone: %d, %q", sum.Unprobed, sum.Line())
	}
	for _, rc := range sum.Rules {
		rules[rc.ID] = rc
	}
	// (A ping's exchange: PRO1008 passing it says nothing of a
	// completion's values, T-COMP-1; RPC1002 cites T-RPC-1 alone;
	// T-LIFE-5 is the fixture's.)
	for id, want := range map[string]bool{"T-COMP-1": true, "T-SESS-3": true, "T-RPC-1": false, "T-LIFE-5": false} {
		rc := rules[id]
		if rc.Status != report.CovPassed {
			t.Errorf("%s: %s (%s), want passed", id, rc.Status, rc.Why)
			continue
		}
		if said := strings.Contains(rc.Why, "not known"); said != want {
			t.Errorf("%s: why %q; want it to say that what it binds is not known to have been provoked: %v", id, rc.Why, want)
		}
	}
}

// TestCoverageStatus pins which rules a judged exchange speaks to: the
// cases of testdata/coverage.json, each a run's fixtures (ID → the rules
// each cites), its results, and the coverage status of some rules
// ("STATUS: WHY" where it says why).
func TestCoverageStatus(t *testing.T) {
	data, err := os.ReadFile("testdata/coverage.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name     string
		Fixtures map[string][]string
		Results  []struct {
			Fixture, Failure string
			// Version, Request and Reply, when given, make a stdio
			// exchange judged as a run judges it: its expectation built,
			// and every check's verdict where Verdicts lists none. \\xHH
			// in Request and Reply is the byte HH (bytes that are no
			// UTF-8 have no JSON spelling).
			Version, Request, Reply string
			Override                map[string]string // the fixture's expect- keys
			Facts                   json.RawMessage   // what the server declared, when given
			Verdicts                []struct {
				Check, Status, Reason string
				Findings              []checks.Finding
			}
		}
		Want map[string]string
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("testdata/coverage.json: %v", err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			cov := report.NewCoverageTracker(tc.Fixtures, checks.All())
			for _, r := range tc.Results {
				res := &report.Result{Fixture: r.Fixture, Exchange: &envelope.Exchange{Transport: envelope.HTTP, Failure: r.Failure}}
				if r.Request != "" {
					ex := &envelope.Exchange{Transport: envelope.Stdio, Version: r.Version, Request: envelope.Request{Body: hexBytes(r.Request)},
						Response: &envelope.Response{Messages: [][]byte{hexBytes(r.Reply)}}}
					var fields []expect.Field
					for _, k := range slices.Sorted(maps.Keys(r.Override)) {
						fields = append(fields, expect.Field{Key: k, Value: r.Override[k]})
					}
					o, err := expect.NewOverride(fields...)
					if err != nil {
						t.Fatalf("%s: %v", r.Fixture, err)
					}
					var facts *expect.Facts
					if len(r.Facts) > 0 {
						if facts, err = expect.ParseFacts(r.Facts); err != nil {
							t.Fatalf("%s: facts: %v", r.Fixture, err)
						}
					}
					res.Exchange, res.Expect = ex, expect.Build(ex, facts, o)
					if len(r.Verdicts) == 0 {
						res.Verdicts = checks.Judge(checks.Input{Fixture: r.Fixture, Exchange: ex, Expect: res.Expect}, checks.All())
					}
				}
				for _, v := range r.Verdicts {
					c := checks.Lookup(v.Check)
					if c == nil {
						t.Fatalf("no check %s", v.Check)
					}
					res.Verdicts = append(res.Verdicts, checks.Verdict{Fixture: r.Fixture, Check: c, Status: checks.Status(v.Status), Reason: v.Reason, Findings: v.Findings})
				}
				cov.Add(res)
			}
			got := map[string]string{}
			for _, rc := range cov.Summary(envelope.V20260728, envelope.HTTP).Rules {
				if _, ok := tc.Want[rc.ID]; ok {
					got[rc.ID] = rc.Status
					if rc.Why != "" && rc.Status != report.CovPassed {
						// (A pass's why, that no fixture probes it, is
						// TestCoverageChecksAloneSayWhy's.)
						got[rc.ID] += ": " + rc.Why
					}
				}
			}
			if diff := cmp.Diff(tc.Want, got); diff != "" {
				t.Errorf("coverage (-want +got):\n%s", diff)
			}
		})
	}
}
