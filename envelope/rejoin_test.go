package envelope_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
)

func TestRejoiner(t *testing.T) {
	raw, err := os.ReadFile("testdata/rejoin.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name     string
		Max      int
		In, Want []string
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			j := envelope.NewRejoiner(tc.Max)
			var got []string
			for _, l := range tc.In {
				for _, out := range j.Add([]byte(l)) {
					got = append(got, string(out))
				}
			}
			for _, out := range j.Flush() {
				got = append(got, string(out))
			}
			if diff := cmp.Diff(tc.Want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if tc.Max == 0 {
				var in [][]byte
				for _, l := range tc.In {
					in = append(in, []byte(l))
				}
				var whole []string
				for _, out := range envelope.Rejoin(in) {
					whole = append(whole, string(out))
				}
				if diff := cmp.Diff(tc.Want, whole); diff != "" {
					t.Errorf("Rejoin (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// BenchmarkRejoin: a pretty-printed value of n members, and n lines that
// each open a bracket and never close it (held to the bound, then given
// back): time grows with n, not n².
func BenchmarkRejoin(b *testing.B) {
	for _, n := range []int{50_000, 100_000} {
		pretty := [][]byte{[]byte("{")}
		for i := range n {
			pretty = append(pretty, []byte(fmt.Sprintf("  \"k%d\": [1, 2, 3],", i)))
		}
		pretty = append(pretty, []byte(`  "end": true`), []byte("}"))
		open := make([][]byte, n)
		for i := range open {
			open[i] = []byte("{ starting")
		}
		for _, in := range []struct {
			name  string
			lines [][]byte
		}{{"pretty", pretty}, {"open", open}} {
			b.Run(fmt.Sprintf("%s/%d", in.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if out := envelope.Rejoin(in.lines); len(out) == 0 {
						b.Fatal("nothing out")
					}
				}
			})
		}
	}
}
