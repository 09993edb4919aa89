package lint_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzJudge: whatever the text of a transcript, several workers under a
// small memory budget hand on the items and verdicts that reading and
// judging each line alone gives, in line order, without a panic.
func FuzzJudge(f *testing.F) {
	serial := options(1, 0) // the schemas are compiled once, not per input
	f.Fuzz(func(t *testing.T, text []byte) {
		parallel := serial
		parallel.Workers, parallel.Budget = 3, 2<<10
		want := sequential(t, text, serial)
		got, err := run(t, bytes.NewReader(text), parallel)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("items (-sequential +parallel):\n%s", diff)
		}
	})
}
