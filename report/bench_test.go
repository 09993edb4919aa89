package report_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/wymcp/wymcp-check/report"
)

// BenchmarkWriters writes the demo's judged exchanges, repeated to n as
// lint's records (file and line), in every format, to a stream that
// cannot be rewritten in place (the junit format then waits in a spool
// file, as on stdout). n doubles to show how time and memory grow.
func BenchmarkWriters(b *testing.B) {
	rs, sum := results(b, scenario{lint: true}, false)
	for _, format := range report.Formats() {
		for _, n := range []int{2000, 4000, 8000} {
			b.Run(fmt.Sprintf("format=%s/exchanges=%d", format, n), func(b *testing.B) {
				dir := b.TempDir()
				var written int64
				b.ReportAllocs()
				for b.Loop() {
					spool, err := os.Create(filepath.Join(dir, "spool"))
					if err != nil {
						b.Fatal(err)
					}
					out := &countWriter{}
					w, _ := report.New(format, out, report.Options{Spool: spool})
					if err := w.Begin(testMeta); err != nil {
						b.Fatal(err)
					}
					for i := range n {
						r := *rs[i%len(rs)]
						r.File, r.Line = "demo.jsonl", i+1
						if err := w.Exchange(&r); err != nil {
							b.Fatal(err)
						}
					}
					if err := w.End(sum); err != nil {
						b.Fatal(err)
					}
					spool.Close()
					written = out.n
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "exchanges/s")
				b.ReportMetric(float64(written)/float64(n), "bytes/exchange")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)
