package runner

import "testing"

// TestOwnNotification: which lines the multiplexer may leave in the
// exchange they land in without doubt (see mux.doubt), and which a
// request open beside it may own. A request that offered no token, or
// has no id, owns no progress and no cancellation: gjson reads what is
// absent as null, and a null token named every such request.
func TestOwnNotification(t *testing.T) {
	const (
		withToken = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":"t"}}}`
		noToken   = `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
		note      = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	)
	for _, tc := range []struct {
		line, req string
		own       bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, noToken, true},
		{`{"jsonrpc":"2.0","id":1,"method":"roots/list"}`, noToken, true},
		{`not json`, noToken, true},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`, withToken, true},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"u","progress":1}}`, withToken, false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":null,"progress":1}}`, noToken, false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`, noToken, false},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, noToken, true},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`, noToken, false},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`, note, false},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`, noToken, false},
		{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":3}}}`, noToken, true},
	} {
		if got := ownNotification([]byte(tc.line), []byte(tc.req)); got != tc.own {
			t.Errorf("ownNotification(%s, %s) = %v, want %v", tc.line, tc.req, got, tc.own)
		}
	}
}
