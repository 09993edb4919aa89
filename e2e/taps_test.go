package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestTapDiffs pins how the relay tests pair the two sides' exchanges:
// by content, whatever order the taps recorded them in, with a reply
// the client left early allowed to be cut short, and nothing else.
func TestTapDiffs(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	get := func(reply string) tapped {
		return tapped{Method: "GET", Path: "/mcp", Header: http.Header{}, Status: 200, ReplyHeader: sse, Reply: reply}
	}
	post := tapped{Method: "POST", Path: "/mcp", Body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, Header: http.Header{}, Status: 200,
		ReplyHeader: http.Header{"Content-Type": {"application/json"}}, Reply: `{"jsonrpc":"2.0","id":1,"result":{}}`}
	events := "event: message\ndata: {}\n\n"
	for _, tc := range []struct {
		name           string
		client, server []tapped
		want           string // a part of the one diff expected; "" for none
	}{
		{"alike GETs ended in another order", []tapped{get(events), get(""), post}, []tapped{post, get(""), get(events)}, ""},
		{"a stream the client left early", []tapped{get("event: message\n"), post}, []tapped{post, get(events)}, ""},
		{"a cut stream does not take a whole one's partner", []tapped{get(""), get(events)}, []tapped{get(events), get(events + events)}, ""},
		{"a reply the server never sent", []tapped{get(events), post}, []tapped{post, get("")}, "exchange GET /mcp  differs"},
		{"a changed reply", []tapped{post}, []tapped{{Method: "POST", Path: "/mcp", Body: post.Body, Header: http.Header{}, Status: 200,
			ReplyHeader: post.ReplyHeader, Reply: `{"jsonrpc":"2.0","id":1,"result":{"x":1}}`}}, "differs across the relay"},
		{"a changed status", []tapped{get("")}, []tapped{{Method: "GET", Path: "/mcp", Header: http.Header{}, Status: 405, ReplyHeader: sse}}, "differs across the relay"},
		{"an exchange lost", []tapped{get(""), post}, []tapped{post}, "the client's side saw 2 exchanges"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tapDiffs(tc.client, tc.server)
			switch {
			case tc.want == "" && len(got) != 0:
				t.Errorf("tapDiffs = %q, want none", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("tapDiffs = %q, want one diff with %q", got, tc.want)
			}
		})
	}
}
