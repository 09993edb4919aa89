package checks_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/schema"
)

// FuzzJudge: any request and reply are judged without a panic (a check
// that panics becomes an error verdict, which fails here), every check
// yields exactly one verdict, in list order, and a small exchange is
// judged in a moment whatever its bytes.
func FuzzJudge(f *testing.F) {
	schemas := checks.ProtocolSchemas(schema.NewRegistry())
	// Judge gives one verdict per server check; client checks judge the
	// client's own messages (JudgeClient).
	var list []*checks.Check
	for _, c := range checks.All() {
		if c.Area != checks.AreaClient {
			list = append(list, c)
		}
	}
	f.Fuzz(func(t *testing.T, req, reply []byte, sse bool) {
		ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125,
			Request: envelope.Request{Body: req}, Response: &envelope.Response{Messages: [][]byte{reply}}}
		if sse {
			ex = &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20260728,
				Request:  envelope.Request{Header: http.Header{"Content-Type": {"application/json"}}, Body: req},
				Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: reply}}
		}
		start := time.Now()
		vs := checks.Judge(checks.Input{Fixture: "fuzz", Exchange: ex, Schemas: schemas}, list)
		if d := time.Since(start); d > 2*time.Second && len(req)+len(reply) < 64<<10 {
			t.Fatalf("%d bytes judged in %v", len(req)+len(reply), d)
		}
		oneVerdictEach(t, vs, list)
	})
}

// oneVerdictEach holds the judge's invariant: every check of list yields
// exactly one verdict, in list order, and none panicked.
func oneVerdictEach(t *testing.T, vs []checks.Verdict, list []*checks.Check) {
	t.Helper()
	if len(vs) != len(list) {
		t.Fatalf("%d verdicts for %d checks", len(vs), len(list))
	}
	for i, v := range vs {
		if v.Check != list[i] {
			t.Fatalf("verdict %d is of %s, want %s", i, v.Check.ID, list[i].ID)
		}
		if v.Status == checks.StatusError && strings.Contains(v.Reason, "check failed to run") {
			t.Fatalf("%s panicked: %s", v.Check.ID, v.Reason)
		}
	}
}
