package checks_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
)

// TestScratchKeepsNothing: every case judged with one Scratch, in
// order and then in reverse (a small request after a large one, and the
// other way round), gets the verdicts it gets judged alone.
func TestScratchKeepsNothing(t *testing.T) {
	cases := loadCases(t)
	verdicts := func(vs []checks.Verdict) []string {
		var out []string
		for _, v := range vs {
			s := fmt.Sprintf("%s %s %s", v.Check.ID, v.Status, v.Reason)
			for _, f := range v.Findings {
				s += " | " + string(f.Status) + " " + f.Path + ": " + f.Message
			}
			out = append(out, s)
		}
		return out
	}
	want := make([][]string, len(cases))
	for i, tc := range cases {
		ex := tc.ex
		want[i] = verdicts(checks.Judge(input(tc, &ex), checks.All()))
	}
	order := make([]int, len(cases))
	for i := range order {
		order[i] = i
	}
	reverse := slices.Clone(order)
	slices.Reverse(reverse)
	sc := &checks.Scratch{}
	for _, pass := range [][]int{order, reverse} {
		for _, i := range pass {
			ex := cases[i].ex
			in := input(cases[i], &ex)
			in.Scratch = sc
			if diff := cmp.Diff(want[i], verdicts(checks.Judge(in, checks.All()))); diff != "" {
				t.Errorf("%s with a used Scratch (-alone +scratch):\n%s", cases[i].name, diff)
			}
		}
	}
}
