package checks_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
)

// A long session outgrows the tracker's bounds: what it forgets is judged
// as not seen, never as absent. Built here, as a case file would be
// thousands of lines.
func TestClientLongSession(t *testing.T) {
	const sid = `[Mcp-Session-Id: s1] [MCP-Protocol-Version: 2025-11-25] `
	head := []string{
		`#1 > {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"c","version":"1"}}}`,
		`#2 < #1 session=s1 {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`#3 > ` + sid + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`#4 < #3 status=202`,
		`#5 > GET [Accept: text/event-stream] [-Content-Type] ` + sid,
	}
	// calls: n pings, each answered (finished exchanges).
	calls := func(n int) []string {
		var out []string
		for i := range n {
			seq := 10 + 2*i
			out = append(out, fmt.Sprintf(`#%d > %s{"jsonrpc":"2.0","id":%d,"method":"ping"}`, seq, sid, i+1),
				fmt.Sprintf(`#%d < #%d {"jsonrpc":"2.0","id":%d,"result":{}}`, seq+1, seq, i+1))
		}
		return out
	}
	// unclosed: n notifications whose 202 the relay never saw (open
	// exchanges): past the bounds the GET stream itself is forgotten.
	unclosed := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf(`#%d > %s{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, 10+2*i, sid))
		}
		return out
	}
	tail := func(answer string) []string {
		return []string{
			`#20000 <? on=#5 {"jsonrpc":"2.0","id":"r1","method":"roots/list"}`,
			`#20001 > ` + sid + `{"jsonrpc":"2.0","id":` + answer + `,"result":{"roots":[]}}`,
		}
	}
	// The relays close a GET's exchange at its head: its stream lives on.
	headClosed := func(body []string) []string {
		return append([]string{`#6 < #5 status=200 session=s1`}, body...)
	}
	for _, tc := range []struct {
		name string
		body []string
		want []string
	}{
		// The GET outlives any number of finished calls.
		{"calls_answer_ok", calls(4200), nil},
		{"calls_answer_other_id", calls(4200), []string{"#20001 CLI1004 fail id"}},
		{"head_closed_calls_answer_ok", headClosed(calls(4200)), nil},
		{"head_closed_calls_answer_other_id", headClosed(calls(4200)), []string{"#20001 CLI1004 fail id"}},
		// The GET itself forgotten: the answer is not judged either way.
		{"open_answer_ok", unclosed(4200), nil},
		{"open_answer_other_id_not_judged", unclosed(4200), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := clientCase{name: tc.name, transport: envelope.HTTP, headers: http.Header{
				"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}}}
			answer := `"r1"`
			if strings.Contains(tc.name, "other_id") {
				answer = `"r2"`
			}
			for _, line := range slices.Concat(head, tc.body, tail(answer)) {
				ev, err := cc.parseEvent(line)
				if err != nil {
					t.Fatal(err)
				}
				cc.events = append(cc.events, ev)
			}
			var got []string
			for _, f := range clientFindings(cc.run()) {
				if f[:6] == "#20001" {
					got = append(got, f)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings of the answer (-want +got):\n%s", diff)
			}
		})
	}
}
