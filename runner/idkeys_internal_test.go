package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRequestIDKeys: the id keys a request is owed a reply under. A
// request that is no JSON-RPC 2.0 request object may be answered with a
// null id (AMB-1), so it is owed an id-less reply too: a multiplexed run
// that did not know it handed such a late reply to whatever exchange was
// open (a review: fails in the default run that --parallel 1 gave none).
func TestRequestIDKeys(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"n1"}},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/list","params":[1]}`, []string{"sa"}},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, []string{"?", "n1"}},
		{`{"id":1,"method":"ping"}`, []string{"?", "n1"}},
		{`{"jsonrpc":"2.0","id":1}`, []string{"?", "n1"}},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, []string{"?", "n1"}},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, []string{"?", "n1"}},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, []string{"?"}},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, []string{"?", "n1.5"}},
		{`{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`, []string{"?", "n12345678901234567890"}},
		{`{"jsonrpc":`, []string{"?"}},
	} {
		if diff := cmp.Diff(tc.want, requestIDKeys([]byte(tc.body))); diff != "" {
			t.Errorf("requestIDKeys(%s) (-want +got):\n%s", tc.body, diff)
		}
	}
}
