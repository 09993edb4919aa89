package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/report"
)

// TestGitHubCollapsesToTheLimit: with more failing checks than GitHub
// shows annotations per level, nine stand and the rest fold into a
// tenth that names them; warnings have their own ten.
func TestGitHubCollapsesToTheLimit(t *testing.T) {
	var out bytes.Buffer
	w, _ := report.New("github", &out, report.Options{})
	w.Begin(testMeta)
	all := checks.All()
	var sum report.Summary
	for i, c := range all[:14] {
		st := checks.StatusFail
		if i >= 12 {
			st = checks.StatusWarn
		}
		v := checks.Verdict{Check: c, Status: st, Findings: []checks.Finding{{Status: st, Path: "error", Message: "broken"}}}
		for n := 0; n <= i; n++ { // check i fails in i+1 records: a stable order
			r := &report.Result{Fixture: fmt.Sprintf("f%d", n), File: "-", Line: n + 1, Verdicts: []checks.Verdict{v}}
			sum.Add(v)
			w.Exchange(r)
		}
	}
	w.End(sum)
	var errs, warns []string
	for _, l := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "::error "):
			errs = append(errs, l)
		case strings.HasPrefix(l, "::warning "):
			warns = append(warns, l)
		}
	}
	if len(errs) != 10 || len(warns) != 2 {
		t.Fatalf("%d errors and %d warnings, want 10 and 2:\n%s", len(errs), len(warns), out.String())
	}
	if !strings.HasPrefix(errs[0], "::error title="+all[11].ID+" fails in 12 records") {
		t.Errorf("the check failing most is not first: %s", errs[0])
	}
	last := errs[9]
	if !strings.HasPrefix(last, "::error title=wymcp-check%3A 3 more::") || !strings.Contains(last, all[0].ID+" fails in 1 record") {
		t.Errorf("the tenth annotation does not fold the rest: %s", last)
	}
	if strings.Contains(out.String(), "file=-") {
		t.Error("an annotation points at stdin as a file")
	}
}

// TestGitHubNamesOnlyItsOwnFixtures: a check that fails in two fixtures,
// warns in three and fails as known in one gets an error naming the two
// and a warning naming the three, each with a finding of its own, as the
// step summary counts them (fails 2, warns 3, known 1); the known one is
// named by neither. With --fail-on warn the warning is an error too.
func TestGitHubNamesOnlyItsOwnFixtures(t *testing.T) {
	c := checks.All()[0]
	run := func(failOnWarn bool) string {
		var out, summary bytes.Buffer
		w, err := report.New("github", &out, report.Options{StepSummary: &summary})
		if err != nil {
			t.Fatal(err)
		}
		m := testMeta
		m.FailOnWarn = failOnWarn
		w.Begin(m)
		var sum report.Summary
		for _, fx := range []struct {
			name   string
			status checks.Status
			known  bool
		}{
			{"w1", checks.StatusWarn, false}, {"f1", checks.StatusFail, false}, {"k1", checks.StatusFail, true},
			{"w2", checks.StatusWarn, false}, {"f2", checks.StatusFail, false}, {"w3", checks.StatusWarn, false},
		} {
			v := checks.Verdict{Check: c, Status: fx.status, Findings: []checks.Finding{{Status: fx.status, Path: "error", Message: "finding of " + fx.name}}}
			r := &report.Result{Fixture: fx.name, Verdicts: []checks.Verdict{v}}
			if fx.known {
				r.Known = map[string]string{c.ID: "accepted"}
				sum.Known++
			}
			sum.Add(v)
			w.Exchange(r)
		}
		if err := w.End(sum); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(summary.String(), fmt.Sprintf("| **%s** %s | 2 | 3 | 1 |", c.ID, c.Title)) {
			t.Errorf("the step summary's counts changed:\n%s", summary.String())
		}
		return out.String()
	}
	want := func(out, level, verb, count, first, names string) {
		t.Helper()
		prefix := "::" + level + " title=" + c.ID + " " + verb + " in " + count + " fixtures%3A "
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, prefix) {
				text := "::" + first + ": error: finding of " + first + "%0AFixtures: " + names
				if !strings.Contains(l+"%0A", text+"%0A") {
					t.Errorf("%s names the wrong fixtures or finding, want %s first and %s:\n%s", prefix, first, names, l)
				}
				if strings.Contains(l, "k1") {
					t.Errorf("a known failure is annotated: %s", l)
				}
				return
			}
		}
		t.Errorf("no annotation %q in:\n%s", prefix, out)
	}
	out := run(false)
	want(out, "error", "fails", "2", "f1", "f1, f2")
	want(out, "warning", "warns", "3", "w1", "w1, w2, w3")
	out = run(true)
	want(out, "error", "fails", "2", "f1", "f1, f2")
	want(out, "error", "warns", "3", "w1", "w1, w2, w3")
}
