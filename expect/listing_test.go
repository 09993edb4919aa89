package expect_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// page is one tools/list page of a 2025-11-25 stdio exchange: asked with
// cursor (none when ""), listing tools, handing out next.
func page(id int, cursor string, tools []string, next string) *envelope.Exchange {
	params := "{}"
	if cursor != "" {
		params = fmt.Sprintf(`{"cursor":%q}`, cursor)
	}
	ts := make([]string, len(tools))
	for i, n := range tools {
		ts[i] = fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"}}`, n)
	}
	res := `"tools":[` + strings.Join(ts, ",") + `]`
	if next != "" {
		res += fmt.Sprintf(`,"nextCursor":%q`, next)
	}
	return &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125,
		Request:  envelope.Request{Body: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, id, params)},
		Response: &envelope.Response{Messages: [][]byte{fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{%s}}`, id, res)}}}
}

// TestListingBounded: a server whose pages hand out long cursors and list
// many long names cannot make what the facts remember of its listings
// (and so every facts line of a transcript) grow with the square of its
// pages: a review saw 150 pages of 8 KB cursors make a relay's recording
// 305 MB, and 3 MB cursors a run's 723 MB (review rev27). A later page is
// still judged by what was kept.
func TestListingBounded(t *testing.T) {
	var f *expect.Facts
	cursor := ""
	for i := range 150 {
		names := make([]string, 100)
		for j := range names {
			names[j] = fmt.Sprintf("tool-%03d-%03d-%s", i, j, strings.Repeat("x", 80))
		}
		next := fmt.Sprintf("%03d%s", i+1, strings.Repeat("c", 8<<10))
		if i%2 == 1 {
			next = fmt.Sprintf("%03d", i+1) // short ones too, which are kept
		}
		f = f.Learn(page(i+1, cursor, names, next))
		cursor = next
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(gjson.GetBytes(b, "pages").Raw); n > 100<<10 {
		t.Errorf("the pages of the facts of 150 pages take %d bytes", n)
	}
	l := f.Listing("tools/list", cursor, "")
	if len(l.Names) == 0 || len(l.Cursors) == 0 {
		t.Errorf("the last page's listing kept nothing to judge it by: %d names, %d cursors", len(l.Names), len(l.Cursors))
	}
	size := 0
	for _, s := range append(l.Names, l.Cursors...) {
		size += len(s)
	}
	if size > 16<<10 {
		t.Errorf("one page's listing takes %d bytes", size)
	}
}

// TestListingForgetsChangedList: a list the server says changed no longer
// judges its later pages by the pages before the change: a tool moved
// onto the next page by an insertion is listed once at every moment, not
// twice (review rev27). Without the change, the repeat warns.
func TestListingForgetsChangedList(t *testing.T) {
	f := (*expect.Facts)(nil).Learn(page(1, "", []string{"a", "b"}, "p2"))
	if l := f.Listing("tools/list", "p2", ""); len(l.Names) != 2 {
		t.Fatalf("page 2's listing: %+v", l)
	}
	changed := page(2, "", nil, "")
	changed.Request.Body = []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	changed.Response.Messages = [][]byte{[]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`), []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`)}
	if l := f.Learn(changed).Listing("tools/list", "p2", ""); !l.Empty() {
		t.Errorf("after tools/list_changed page 2 is still judged by %+v", l)
	}
}

// TestAnsweredForgetsChangedList: an expectation built before the reply
// (as a live run builds it) of a call to a tool the facts do not list
// expects the unknown tool's refusal; a reply that says the tool list
// changed leaves it judged by what is left, as Build judges the recorded
// exchange (review rev63: check and lint disagreed). The twin: a reply
// without the notification keeps the expectation.
func TestAnsweredForgetsChangedList(t *testing.T) {
	facts, err := expect.ParseFacts([]byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"tools":[{"name":"add","inputSchema":{"type":"object"}}],"toolsListed":true}`))
	if err != nil {
		t.Fatal(err)
	}
	req := envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fresh_tool","arguments":{}}}`)}
	before := expect.Build(&envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125, Request: req}, facts, nil)
	if before.Condition != expect.CondUnknownTool {
		t.Fatalf("before the reply: %s, want the unknown tool", before.Condition)
	}
	result := []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
	for _, tc := range []struct {
		name string
		msgs [][]byte
		want expect.Condition
	}{
		{"list changed", [][]byte{[]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`), result}, expect.CondCall},
		{"no change", [][]byte{result}, expect.CondUnknownTool},
	} {
		ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125, Request: req, Response: &envelope.Response{Messages: tc.msgs}}
		got := expect.Answered(before, ex, facts, nil)
		if got.Condition != tc.want || got.Condition != expect.Build(ex, facts, nil).Condition {
			t.Errorf("%s: answered %s, built from the record %s; want %s", tc.name, got.Condition, expect.Build(ex, facts, nil).Condition, tc.want)
		}
	}
}
