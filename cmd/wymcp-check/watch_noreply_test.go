package main

import (
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
)

// TestNoReplyText: the line of an exchange judged without its answer
// says what the relay saw: nothing, a reply still open or broken off when
// its silence was judged, or a stream the server ended.
func TestNoReplyText(t *testing.T) {
	for _, tc := range []struct {
		resp *envelope.Response
		want string
	}{
		{nil, "no reply"},
		{&envelope.Response{Status: 200, Cut: true}, "no answer in the reply"},
		{&envelope.Response{Status: 200, Ended: true}, "the stream ended without the answer"},
	} {
		if got := noReplyText(&envelope.Exchange{Response: tc.resp}); got != tc.want {
			t.Errorf("noReplyText(%+v) = %q, want %q", tc.resp, got, tc.want)
		}
	}
}
