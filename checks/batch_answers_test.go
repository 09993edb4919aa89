package checks_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
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

// A response of a 2025-03-26 batch's answer is held to --schema as the
// same reply alone is (SCH1001), at its place in the array: the checker
// carries no 2025-03-26 schema, so only a user's file judges it (review
// rev16 F3: a result "x" in the array passed even with the file given).
func TestBatch0326AnswersSchema(t *testing.T) {
	s0326 := officialSchema(t, "2025-03-26")
	req := []byte(`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`)
	judge := func(reply string) checks.Verdict {
		vs := checks.Judge(batchInput(t, req, []byte(reply), s0326), []*checks.Check{checks.SchemaValid})
		if len(vs) != 1 {
			t.Fatalf("%d verdicts, want 1", len(vs))
		}
		return vs[0]
	}
	ok := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`
	wantVerdict(t, judge(`[`+ok+`,{"jsonrpc":"2.0","id":3,"result":"x"}]`), checks.StatusFail, "reply.1.result")
	wantVerdict(t, judge(`[`+ok+`,{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":7,"inputSchema":{"type":"object"}}]}}]`), checks.StatusFail, "reply.1.result.tools.0.name")
	wantVerdict(t, judge(`[`+ok+`,{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}]`), checks.StatusPass)
}

// Every check yields one verdict for a batch's answer however many
// responses it holds and however many of them each fails, and the
// findings one check lists stay bounded, the rest counted in one line.
func TestBatch0326AnswersOneVerdict(t *testing.T) {
	const n = 200
	var req, rep bytes.Buffer
	req.WriteByte('[')
	rep.WriteByte('[')
	for i := range n {
		if i > 0 {
			req.WriteByte(',')
			rep.WriteByte(',')
		}
		fmt.Fprintf(&req, `{"jsonrpc":"2.0","id":%d,"method":"wymcp/unknown-%d"}`, i, i)
		fmt.Fprintf(&rep, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32600,"message":"no\nsuch method"}}`, i)
	}
	req.WriteByte(']')
	rep.WriteByte(']')
	var list []*checks.Check
	for _, c := range checks.All() {
		if c.Area != checks.AreaClient {
			list = append(list, c)
		}
	}
	vs := checks.Judge(batchInput(t, req.Bytes(), rep.Bytes(), checks.ProtocolSchemas(schema.NewRegistry())), list)
	if len(vs) != len(list) {
		t.Fatalf("%d verdicts for %d checks", len(vs), len(list))
	}
	for i, v := range vs {
		if v.Check != list[i] {
			t.Fatalf("verdict %d is of %s, want %s", i, v.Check.ID, list[i].ID)
		}
		switch v.Check {
		case checks.CodeFits, checks.MessageOneLine:
			if v.Status != checks.StatusFail || len(v.Findings) != 33 {
				t.Errorf("%s: %s with %d findings, want fail with 32 and a line for the rest", v.Check.ID, v.Status, len(v.Findings))
				continue
			}
			if f := v.Findings[0]; !strings.HasPrefix(f.Path, "reply.0.error.") {
				t.Errorf("%s: first finding at %q, want under reply.0.error", v.Check.ID, f.Path)
			}
			if last := v.Findings[32]; !strings.HasPrefix(last.Message, fmt.Sprintf("%d more findings", n-32)) || last.Status != checks.StatusFail {
				t.Errorf("%s: last finding %s %q, want %d more findings, failing", v.Check.ID, last.Status, last.Message, n-32)
			}
		}
	}
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

// FuzzJudgeBatch0326: a batch to a server that speaks 2025-03-26 and any
// reply are judged without a panic, one verdict per check, in list
// order, whatever the batch's elements and the answer's responses.
func FuzzJudgeBatch0326(f *testing.F) {
	f.Add([]byte(`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},1,{"jsonrpc":"2.0","method":"x"}]`),
		[]byte(`[{"jsonrpc":"2.0","id":2,"result":"x"},{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"a\nb"}}]`), false)
	f.Add([]byte(`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`),
		[]byte("data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\ndata: [{\"jsonrpc\":\"2.0\",\"id\":2.0,\"error\":{\"code\":-32600,\"message\":\"x\",\"data\":{\"a\":1}}}]\n\n"), true)
	f.Add([]byte(`[[{"jsonrpc":"2.0","id":1,"method":"ping"}],[]]`), []byte(`[{"id":null,"error":{"code":-32600,"message":"m"}},{"id":null,"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}}]`), false)
	schemas := checks.ProtocolSchemas(schema.NewRegistry())
	var list []*checks.Check
	for _, c := range checks.All() {
		if c.Area != checks.AreaClient {
			list = append(list, c)
		}
	}
	f.Fuzz(func(t *testing.T, req, reply []byte, sse bool) {
		in := batchInput(t, req, reply, schemas)
		if sse {
			in.Exchange.Response.Header.Set("Content-Type", "text/event-stream")
		}
		vs := checks.Judge(in, list)
		oneVerdictEach(t, vs, list)
	})
}
