package runner

import (
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
)

// TestNoDiscoverResult: a server/discover result is judged as a broken
// 2026-07-28 answer only when it lacks supportedVersions and shows a
// member no earlier version has; a legacy catch-all's result (review
// rev22) and a right DiscoverResult are not.
func TestNoDiscoverResult(t *testing.T) {
	for _, tc := range []struct {
		reply string
		want  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","capabilities":{}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":{"ttlMs":1000,"cacheScope":"public"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":"2026-07-28"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":null}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2025-11-25"]}}`, false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, false},
	} {
		ex := &envelope.Exchange{Transport: envelope.Stdio,
			Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`)},
			Response: &envelope.Response{Messages: [][]byte{[]byte(tc.reply)}}}
		if got := noDiscoverResult(ex); got != tc.want {
			t.Errorf("noDiscoverResult(%s) = %v, want %v", tc.reply, got, tc.want)
		}
	}
}
