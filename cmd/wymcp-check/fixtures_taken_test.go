package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/runner"
)

// TestUserFixtureIDsTaken loads testdata/fixtures-taken: a user's fixture
// may take no embedded fixture's ID and no name the run gives its own
// exchanges (negotiation, setup listings, the session's end, a renewal,
// a liveness probe), which would share one row, --run selection and
// baseline entry with the run's; each is a problem naming file, the
// id: key's line and cause. The twins, like but not those names, load.
// testdata/fixtures-taken.want lists the problems and the loaded IDs.
func TestUserFixtureIDsTaken(t *testing.T) {
	dir := filepath.Join("testdata", "fixtures-taken")
	all, problems, err := loadFixtures(&checkOptions{FixtureDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, strings.ReplaceAll(p, dir, "DIR"))
	}
	for _, f := range all[len(embedded):] {
		got = append(got, "loaded "+f.ID)
	}
	slices.Sort(got)
	raw, err := os.ReadFile(filepath.Join("testdata", "fixtures-taken.want"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems and loaded fixtures (-want +got):\n%s", diff)
	}

	// The run's probes are all reserved, and no embedded fixture takes
	// a reserved name: a probe added to the runner without its name
	// here fails, not a report that mixes two exchanges.
	for id := range runner.Probes() {
		if takenID(id, nil) == "" {
			t.Errorf("the runner's probe %s is not reserved (runner.Reserved)", id)
		}
	}
	for _, f := range embedded {
		if why := takenID(f.ID, nil); why != "" {
			t.Errorf("embedded fixture %s: id %s", f.ID, why)
		}
	}
}

// TestUserFixtureIDTakenIsInputProblem: a taken ID is an input problem
// of the run like any bad fixture: named on stderr and in the report,
// which is still written, with exit 2, while the user's other fixtures
// run.
func TestUserFixtureIDTakenIsInputProblem(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.txt")
	code, _, errOut := runMain(t, "", "check", "--demo", "--fixtures", filepath.Join("testdata", "fixtures-taken"), "--run", "my/*", "-v", "-o", out)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, exitUsage, errOut)
	}
	report, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join("testdata", "fixtures-taken", "negotiate-initialize.txtar") + `:3: id "negotiate/initialize" is a name the run gives its own exchanges (negotiate/*); left out`
	for _, w := range []string{want, "ok my/negotiate-like", "INPUT PROBLEMS: 14 fixture problem(s)"} {
		if !strings.Contains(string(report), w) {
			t.Errorf("report lacks %q:\n%s", w, report)
		}
	}
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
}
