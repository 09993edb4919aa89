package checks_test

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/schema"
)

// Hostile replies, each judged at a size and at twice it: the time per
// judgment must about double, not grow faster (the ratio of the two
// sub-benchmarks' ns/op is the figure to read), and B/op stays within a
// few times the reply's size.
//
//	go test -run x -bench Hostile -benchmem -benchtime 3x ./checks

func BenchmarkHostileManyKeys(b *testing.B) {
	for _, n := range []int{50_000, 100_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			var r bytes.Buffer
			r.WriteString(`{"jsonrpc":"2.0","id":1,"result":{`)
			for i := range n {
				if i > 0 {
					r.WriteByte(',')
				}
				fmt.Fprintf(&r, `"k%d":%d`, i, i)
			}
			r.WriteString(`}}`)
			judgeBench(b, stdioEx(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, r.Bytes()))
		})
	}
}

func BenchmarkHostileEchoValues(b *testing.B) {
	for _, n := range []int{25_000, 50_000} {
		b.Run(fmt.Sprintf("values=%d", n), func(b *testing.B) {
			var req, rep bytes.Buffer
			req.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[`)
			rep.WriteString(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid arguments for tool t","data":{"errors":[`)
			for i := range n {
				if i > 0 {
					req.WriteByte(',')
					rep.WriteByte(',')
				}
				fmt.Fprintf(&req, `"request-value-%08d-xyz"`, i)
				fmt.Fprintf(&rep, `"reply-string-%08d-abc"`, i)
			}
			req.WriteString(`]}}}`)
			rep.WriteString(`]}}}`)
			judgeBench(b, stdioEx(req.String(), rep.Bytes()))
		})
	}
}

// BenchmarkHostileEchoRepeated: one request value echoed again and again,
// as a string and as the request's object put back under data: each
// copy is found in the same places of the request, which must not cost
// a look at every copy before it.
func BenchmarkHostileEchoRepeated(b *testing.B) {
	req := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"k":"abcdefghijklmnopq"}}}`
	for _, shape := range []string{`"abcdefghijklmnopq"`, `{"k":"abcdefghijklmnopq"}`} {
		for _, n := range []int{20_000, 40_000} {
			b.Run(fmt.Sprintf("copy=%s/n=%d", shape[:1], n), func(b *testing.B) {
				var rep bytes.Buffer
				rep.WriteString(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid arguments for tool t","data":{"errors":[`)
				for i := range n {
					if i > 0 {
						rep.WriteByte(',')
					}
					rep.WriteString(shape)
				}
				rep.WriteString(`]}}}`)
				judgeBench(b, stdioEx(req, rep.Bytes()))
			})
		}
	}
}

func BenchmarkHostileLongNumber(b *testing.B) {
	for _, n := range []int{250_000, 500_000} {
		b.Run(fmt.Sprintf("digits=%d", n), func(b *testing.B) {
			num := "1." + strings.Repeat("7", n)
			rep := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"n":%s}}`, num, num)
			judgeBench(b, stdioEx(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, []byte(rep)))
		})
	}
}

func BenchmarkHostileSSE(b *testing.B) {
	for _, n := range []int{250_000, 500_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			var body bytes.Buffer
			for i := range n - 1 {
				fmt.Fprintf(&body, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"tick %08d\"}}\n\n", i)
			}
			body.WriteString("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n")
			ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20251125,
				Request:  envelope.Request{Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)},
				Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body.Bytes()}}
			b.SetBytes(int64(body.Len()))
			judgeBench(b, ex)
		})
	}
}

func BenchmarkHostileLongRequest(b *testing.B) {
	for _, mb := range []int{8, 16} {
		b.Run(fmt.Sprintf("request=%dMB", mb), func(b *testing.B) {
			long := make([]byte, mb<<20)
			for i := range long {
				long[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[(i*7+i/36)%36]
			}
			req := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"s":"` + string(long) + `"}}}`
			rep := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid arguments: s is longer than 1024 characters"}}`
			judgeBench(b, stdioEx(req, []byte(rep)))
		})
	}
}

func BenchmarkHostileLongMessage(b *testing.B) {
	for _, mb := range []int{30, 60} {
		b.Run(fmt.Sprintf("message=%dMB", mb), func(b *testing.B) {
			msg := make([]byte, mb<<20)
			for i := range msg {
				msg[i] = "abcdefghijklmnopqrstuvwxyz "[(i*11+i/27)%27]
			}
			rep := `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"` + string(msg) + `"}}`
			judgeBench(b, stdioEx(`{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}`, []byte(rep)))
		})
	}
}

func stdioEx(req string, rep []byte) *envelope.Exchange {
	return &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125,
		Request: envelope.Request{Body: []byte(req)}, Response: &envelope.Response{Messages: [][]byte{rep}}}
}

// judgeBench judges ex with every check, schemas on, as a live run does.
func judgeBench(b *testing.B, ex *envelope.Exchange) {
	b.Helper()
	in := checks.Input{Fixture: "hostile", Exchange: ex, Schemas: checks.ProtocolSchemas(schema.NewRegistry())}
	server := 0 // the client area judges what a client sends, not replies
	for _, c := range checks.All() {
		if c.Area != checks.AreaClient {
			server++
		}
	}
	b.ReportAllocs()
	stop := peakHeap(b)
	for b.Loop() {
		vs := checks.Judge(in, checks.All())
		if len(vs) != server {
			b.Fatalf("%d verdicts for %d checks", len(vs), server)
		}
	}
	stop()
}

// peakHeap samples the heap (live objects and garbage not yet swept)
// while the benchmark runs and reports its peak above where it started,
// in MB: what judging one exchange needs at once, beside B/op, which
// counts every allocation however short-lived.
func peakHeap(b *testing.B) (stop func()) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak uint64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if h := read(); h > peak {
				peak = h
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		if peak > base {
			b.ReportMetric(float64(peak-base)/(1<<20), "peak-MB")
		}
	}
}
