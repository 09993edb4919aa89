package checks_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
)

// batch0326Facts: a server that speaks 2025-03-26, which has batches
// (T-V0326-1).
const batch0326Facts = `{"protocolVersion":"2025-06-18","spoken":"2025-03-26","supportedVersions":["2025-03-26"],"capabilities":{"tools":{}},"clientCapabilities":{}}`

// batchInput is the input of an HTTP exchange of a batch to a server
// that speaks 2025-03-26, answered with a JSON body, as a run builds it.
func batchInput(tb testing.TB, req, reply []byte, v checks.SchemaValidator) checks.Input {
	tb.Helper()
	f, err := expect.ParseFacts([]byte(batch0326Facts))
	if err != nil {
		tb.Fatal(err)
	}
	ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20250618,
		Request:  envelope.Request{Header: http.Header{"Content-Type": {"application/json"}}, Body: req},
		Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: reply}}
	return checks.Input{Fixture: "batch", Exchange: ex, Expect: expect.Build(ex, f, nil), Schemas: v}
}

// batchBody writes a batch of n tools/call requests (ids i, or all 7
// when same) and its answer, each an error that echoes nothing; extra
// answers with the last id follow (answered more often than asked).
func batchBody(n int, same bool, extra int) (req, rep []byte) {
	var q, r bytes.Buffer
	q.WriteByte('[')
	r.WriteByte('[')
	for i := range n {
		id := i
		if same {
			id = 7
		}
		if i > 0 {
			q.WriteByte(',')
			r.WriteByte(',')
		}
		fmt.Fprintf(&q, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t%d","arguments":{"a":"value-%08d"}}}`, id, i, i)
		fmt.Fprintf(&r, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"unknown tool"}}`, id)
	}
	for range extra {
		fmt.Fprintf(&r, `,{"jsonrpc":"2.0","id":%d,"result":{}}`, max(n-1, 0))
	}
	q.WriteByte(']')
	r.WriteByte(']')
	return q.Bytes(), r.Bytes()
}

// BenchmarkHostileBatch0326: a 2025-03-26 batch of n requests and its
// answer, each response judged against its element: the time per
// judgment must about double from n to 2n (ids all distinct, all the
// same, and the same id answered n times more than asked).
//
//	go test -run '^$' -bench HostileBatch -benchmem -benchtime 1x ./checks
func BenchmarkHostileBatch0326(b *testing.B) {
	for _, shape := range []struct {
		name  string
		same  bool
		extra bool
	}{{"distinct", false, false}, {"same", true, false}, {"again", true, true}} {
		for _, n := range []int{5_000, 10_000, 20_000} {
			b.Run(fmt.Sprintf("ids=%s/n=%d", shape.name, n), func(b *testing.B) {
				extra := 0
				if shape.extra {
					extra = n
				}
				req, rep := batchBody(n, shape.same, extra)
				in := batchInput(b, req, rep, checks.ProtocolSchemas(schema.NewRegistry()))
				b.SetBytes(int64(len(rep)))
				b.ReportAllocs()
				stop := peakHeap(b)
				for b.Loop() {
					checks.Judge(in, checks.All())
				}
				stop()
			})
		}
	}
}
