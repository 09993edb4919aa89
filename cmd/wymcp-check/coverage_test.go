package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/report"
	"github.com/wymcp/wymcp-check/rules"
	"github.com/wymcp/wymcp-check/runner"
)

// TestEveryCheckableRuleCovered: a rule the catalogue marks checkable
// has a fixture (or a runner probe) or a check citing it, or is listed
// in report.Pending with the reason it is not covered yet; a pending
// rule that is covered, or not checkable, must leave the list.
func TestEveryCheckableRuleCovered(t *testing.T) {
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range report.CatalogueCoverage(runner.Citations(fx), checks.All()) {
		reason, pending := report.Pending[rc.ID]
		switch {
		case rc.Status == report.CovNotCovered && !pending:
			t.Errorf("%s is checkable, but no fixture or check cites it (add one, or say why in report.Pending)", rc.ID)
		case pending && rc.Status != report.CovNotCovered:
			t.Errorf("%s is in report.Pending but is %s: remove it from the list", rc.ID, rc.Status)
		case pending && strings.TrimSpace(reason) == "":
			t.Errorf("%s: report.Pending gives no reason", rc.ID)
		}
	}
	for id := range report.Pending {
		if rules.Lookup(id) == nil {
			t.Errorf("report.Pending names %s, which the catalogue lacks", id)
		}
	}
	for id := range runner.Probes() {
		for _, r := range runner.Probes()[id] {
			if rules.Lookup(r) == nil {
				t.Errorf("probe %s cites %s, which the catalogue lacks", id, r)
			}
		}
	}
}

func TestCoverageCommand(t *testing.T) {
	code, out, errOut := runMain(t, "", "coverage")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"checkable rules have a fixture or a check", "T-HTTP-20", "not checkable", "T-AUTH-3", "not covered"} {
		if !strings.Contains(out, want) {
			t.Errorf("coverage output lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runMain(t, "", "coverage", "-v")
	if !strings.Contains(out, "T-RPC-5") || !strings.Contains(out, "covered") {
		t.Errorf("coverage -v does not list covered rules:\n%.2000s", out)
	}
}

// TestRunCoverage: a run's report says what it exercised: the human one
// line, the JSON the table, with the reason for each rule not observed.
func TestRunCoverage(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "r.json")
	code, out, errOut := runMain(t, "", "check", "--demo", "--report", "json="+js)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "coverage: ") || !strings.Contains(out, "checkable rules exercised") {
		t.Errorf("the human report lacks the coverage line:\n%s", out)
	}
	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Coverage struct {
			Exercised, Failed, NotObserved int
			Rules                          []struct{ ID, Status, Why string }
		}
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	c := rep.Coverage
	if c.Exercised < 100 || c.Failed != 0 {
		t.Errorf("the clean reference server: %d rules exercised, %d failed", c.Exercised, c.Failed)
	}
	for _, r := range c.Rules {
		if r.Status == report.CovNotObserved && r.Why == "" {
			t.Errorf("%s is not observed, and the report does not say why", r.ID)
		}
	}
}
