package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// TestCoverageSpeaksOfTheSpec: the coverage table speaks of the spec's
// rules, so the contract a run judges by changes its verdicts, never its
// table: every fault of the reference server, and none, gives the same
// status for every rule under the strict contract and --contract spec.
func TestCoverageSpeaksOfTheSpec(t *testing.T) {
	_, out, _ := runMain(t, "", "faults")
	faults := []string{""}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			faults = append(faults, f[0])
		}
	}
	if len(faults) < 30 {
		t.Fatalf("faults lists %d faults:\n%s", len(faults)-1, out)
	}
	table := func(t *testing.T, args ...string) map[string]string {
		js := filepath.Join(t.TempDir(), "r.json")
		runMain(t, "", append([]string{"check", "--demo", "--timeout", "1s", "--report", "json=" + js}, args...)...)
		raw, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Coverage struct{ Rules []struct{ ID, Status string } }
		}
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, r := range rep.Coverage.Rules {
			m[r.ID] = r.Status
		}
		if len(m) == 0 {
			t.Fatal("the report has no coverage table")
		}
		return m
	}
	for _, f := range faults {
		t.Run("fault="+f, func(t *testing.T) {
			t.Parallel()
			var args []string
			if f != "" {
				args = []string{"--demo-fault", f}
			}
			strict := table(t, args...)
			spec := table(t, append(args, "--contract", "spec")...)
			if diff := cmp.Diff(strict, spec); diff != "" {
				t.Errorf("coverage (-strict +spec):\n%s", diff)
			}
		})
	}
}
