package rules_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/rules"
	"golang.org/x/tools/txtar"
)

func TestCatalogue(t *testing.T) {
	all := rules.All()
	if len(all) < 180 {
		t.Fatalf("only %d rules", len(all))
	}
	for _, r := range all {
		if len(r.Title) > 80 || strings.HasSuffix(r.Title, ".") {
			t.Errorf("%s: title %q: want one line of at most 80 characters, no final period", r.ID, r.Title)
		}
		if !strings.HasPrefix(r.Section, "§") {
			t.Errorf("%s: section %q does not name a digest section", r.ID, r.Section)
		}
	}
	if r := rules.Lookup("t-err-9"); r == nil || r.ID != "T-ERR-9" || r.Level != "SHOULD NOT" || r.Versions != "2026-07-28" {
		t.Errorf("Lookup(t-err-9) = %+v", r)
	}
	if r := rules.Lookup("AMB-17"); r == nil || r.Level != "AMB" {
		t.Errorf("Lookup(AMB-17) = %+v", r)
	}
	if r := rules.Lookup("T-HTTP-20"); r == nil || r.Checkable {
		t.Errorf("T-HTTP-20 is not checkable from outside: %+v", r)
	}
	if rules.Lookup("T-ERR-99") != nil {
		t.Error("Lookup found a rule that does not exist")
	}
}

// TestEveryCitationResolves: each rule a check's SpecRef or Doc, or a
// fixture's rules: line, cites is in the catalogue; explain and the
// reports would otherwise link to nothing.
func TestEveryCitationResolves(t *testing.T) {
	for _, c := range checks.All() {
		for _, where := range []struct{ field, text string }{{"SpecRef", c.SpecRef}, {"Doc", c.Doc}} {
			for _, id := range rules.Cited(where.text) {
				if rules.Lookup(id) == nil {
					t.Errorf("check %s: %s cites %s, which the catalogue lacks", c.ID, where.field, id)
				}
			}
		}
	}
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fx {
		for _, id := range f.Rules {
			if strings.HasPrefix(id, "contract-") {
				continue // a clause of the error-envelope contract, not a digest rule
			}
			if rules.Lookup(id) == nil {
				t.Errorf("fixture %s: rules: cites %s, which the catalogue lacks", f.ID, id)
			}
		}
	}
}

func TestCited(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"T-RPC-8 (SHOULD be one short sentence); contract clause 2", []string{"T-RPC-8"}},
		{"T-ERR-1..T-ERR-3, AMB-6; contract", []string{"T-ERR-1", "T-ERR-2", "T-ERR-3", "AMB-6"}},
		{"T-SUB-*, T-SUB-2", []string{"T-SUB-1", "T-SUB-2", "T-SUB-3", "T-SUB-4", "T-SUB-5"}},
		{"status 400 … the spec leaves it open (T-HTTP-11), and (AMB-17)", []string{"T-HTTP-11", "AMB-17"}},
		{"contract: no echo", nil},
		// A malformed range is returned as written, for a test to catch.
		{"T-ERR-3..T-RPC-1", []string{"T-ERR-3", "T-RPC-1"}},
		// Only whole IDs count, wherever the scan starts: a word before
		// the prefix, or a later citation after a false start.
		{"XT-ERR-1 and PAMB-3 are no citations", nil},
		{"AT-RPC-1 then T-ERR-2; BAMB-1 then AMB-6", []string{"T-ERR-2", "AMB-6"}},
		{"value \"T-\" quoted, then T-HTTP-11", []string{"T-HTTP-11"}},
		{"", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, rules.Cited(tt.text)); diff != "" {
			t.Errorf("Cited(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

// TestCitedUnquoted: a finding's message cites rules in its own words;
// what it quotes of a server or a request cites none.
func TestCitedUnquoted(t *testing.T) {
	tests := []struct {
		msg  string
		want []string
	}{
		{`resultType "T-ERR-1" is not one of the version's (T-LIFE-10)`, []string{"T-LIFE-10"}},
		{`resultType "T-ERR-1" is not one of the version's`, nil},
		// Its twin: the same citation outside the quotes counts.
		{`resultType T-ERR-1 is not one of the version's`, []string{"T-ERR-1"}},
		// An escaped quote does not end the span; a span cut off runs to
		// the end.
		{`message "a \"T-RPC-8\" b" breaks AMB-6`, []string{"AMB-6"}},
		{`T-RPC-7: result is "T-RPC-1 cut…`, []string{"T-RPC-7"}},
		{"no quotes, T-HTTP-11", []string{"T-HTTP-11"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, rules.CitedUnquoted(tt.msg)); diff != "" {
			t.Errorf("CitedUnquoted(%q) (-want +got):\n%s", tt.msg, diff)
		}
	}
}

// TestParseRejects: each catalogue in testdata/bad is refused with the
// cause its comment names ("want: …"); a well-formed entry is accepted.
func TestParseRejects(t *testing.T) {
	good := "-- T-RPC-1 --\nlevel: MUST / SHOULD (client)\nversions: all\nsection: §2 x\ncheckable: yes\ntitle: t\n\nText.\n"
	if _, err := rules.Parse([]byte(good)); err != nil {
		t.Fatalf("a good entry is refused: %v", err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test catalogues: %v", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSpace(strings.TrimPrefix(string(txtar.Parse(data).Comment), "want: "))
		_, err = rules.Parse(data)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, want)
		}
	}
}

// The digest is reference data beside the checkout (../shared); CI
// always has it.
const digestEnv = "WYMCP_SPEC_DIGEST"

// TestAgreesWithDigest: the catalogue has exactly the digest's IDs, and a
// rule the digest marks n/c is not claimed checkable.
func TestAgreesWithDigest(t *testing.T) {
	path := os.Getenv(digestEnv)
	if path == "" {
		path = filepath.Join("..", "..", "shared", "spec-digest.md")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("the rules digest is not at %s: set %s to its path (%v)", path, digestEnv, err)
	}
	defer f.Close()
	def := regexp.MustCompile(`^- \*\*(T-[A-Z0-9]+-\d+|AMB-\d+)[*,]`)
	row := regexp.MustCompile(`^\| (T-[A-Z0-9]+-\d+) \|[^|]*\| *(n/c)?`)
	inDigest := map[string]bool{}
	nc := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := def.FindStringSubmatch(sc.Text()); m != nil {
			inDigest[m[1]] = true
		}
		if m := row.FindStringSubmatch(sc.Text()); m != nil && m[2] != "" {
			nc[m[1]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	inCatalogue := map[string]bool{}
	for _, r := range rules.All() {
		inCatalogue[r.ID] = true
		if !inDigest[r.ID] {
			t.Errorf("%s is not in the digest", r.ID)
		}
		if nc[r.ID] && r.Checkable {
			t.Errorf("%s: the digest marks it n/c, the catalogue says checkable", r.ID)
		}
	}
	for id := range inDigest {
		if !inCatalogue[id] {
			t.Errorf("%s is in the digest but not in the catalogue", id)
		}
	}
	if len(nc) == 0 {
		t.Error("found no n/c rows: the digest's table format changed")
	}
}
