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
