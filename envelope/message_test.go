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
		got, ok := OfferedTokens([]byte(tt.body))
		if diff := cmp.Diff(tt.want, got); diff != "" || !ok {
			t.Errorf("OfferedTokens(%s) = %v (-want +got):\n%s", tt.body, ok, diff)
		}
	}
	// A token no transcript can carry (a null, a fraction, bytes that
	// are no UTF-8) makes what was offered unknown: a recording that
	// carried it would not lint (a review found lint refusing every
	// later line of a wrap recording after a client's null token).
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":null}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":1.5}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"_meta\":{\"progressToken\":\"a\xff\"}}}",
	} {
		if _, ok := OfferedTokens([]byte(body)); ok {
			t.Errorf("OfferedTokens(%q) is ok, want not", body)
		}
	}
}

// TestPipeAsksLogFloor: the lowest log level a client's requests on a
// pipe set. A logLevel that is none of the eight ("DEBUG", a number) may
// be read by a server as any level, so it counts as the lowest, debug:
// else a debug message that request asked for failed another exchange
// as asked by no request (review rev27). A notification asks nothing.
func TestPipeAsksLogFloor(t *testing.T) {
	meta := func(id, level string) string {
		return `{"jsonrpc":"2.0",` + id + `"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/logLevel":` + level + `}}}`
	}
	for _, tc := range []struct{ body, want string }{
		{meta(`"id":1,`, `"error"`), "error"},
		{meta(`"id":1,`, `"DEBUG"`), "debug"},
		{meta(`"id":1,`, `3`), "debug"},
		{meta(``, `"info"`), ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, ""},
		{`[` + meta(`"id":1,`, `"error"`) + `,` + meta(`"id":2,`, `"warning"`) + `]`, "warning"},
	} {
		if got, _ := PipeAsks([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: floor %q, want %q", tc.body, got, tc.want)
		}
	}
}
