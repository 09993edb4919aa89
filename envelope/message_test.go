package envelope

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOfferedTokens: the tokens a request offers, and each request's of
// a batch (a run that missed a batch's would fail progress for them as
// naming no request); a notification, a response and a request without
// one offer none.
func TestOfferedTokens(t *testing.T) {
	tests := []struct {
		body string
		want []string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"a"}}}`, []string{`"a"`}},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":7}}}`, []string{`7`}},
		{`[{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":"a"}}},{"jsonrpc":"2.0","method":"n","params":{"_meta":{"progressToken":"b"}}},{"jsonrpc":"2.0","id":2,"method":"y","params":{"_meta":{"progressToken":"c"}}}]`, []string{`"a"`, `"c"`}},
		{`{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"progressToken":"a"}}}`, nil},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil},
		{`not json`, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, OfferedTokens([]byte(tt.body))); diff != "" {
			t.Errorf("OfferedTokens(%s) (-want +got):\n%s", tt.body, diff)
		}
	}
}
