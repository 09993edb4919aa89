package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/fixtures"
)

// TestDispatchOrder: a concurrent run starts its stream looks first, at
// most n-1 of them so that a slot stays free, then the rest in order.
func TestDispatchOrder(t *testing.T) {
	call := &fixtures.Fixture{ID: "call"}
	get := &fixtures.Fixture{ID: "get", Method: "GET"}
	listen := &fixtures.Fixture{ID: "listen", Stream: true}
	fx := []*fixtures.Fixture{call, get, call, listen, call}
	for _, tc := range []struct {
		n    int
		want []int
	}{
		{8, []int{1, 3, 0, 2, 4}},
		{2, []int{1, 0, 2, 3, 4}},
		{1, []int{0, 1, 2, 3, 4}},
	} {
		if diff := cmp.Diff(tc.want, dispatchOrder(fx, tc.n)); diff != "" {
			t.Errorf("n=%d (-want +got):\n%s", tc.n, diff)
		}
	}
}

// TestRequestsFirst: a multiplexed run sends the malformed messages
// first (a batch, what reads as a parse error or an invalid request),
// whose silence is judged only when their --timeout windows run out,
// then the other requests, then the notifications that do not move the
// lifecycle; each part in corpus order.
func TestRequestsFirst(t *testing.T) {
	fx := []*fixtures.Fixture{
		{ID: "call", Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
		{ID: "note", Body: []byte(`{"jsonrpc":"2.0","method":"notifications/wymcp_x"}`)},
		{ID: "garbage", Body: []byte(`this is not json {`)},
		{ID: "initialized", Body: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)},
		{ID: "id-object", Body: []byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`)},
		{ID: "batch", Body: []byte(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)},
		{ID: "ping", Body: []byte(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)},
		{ID: "no-method", Body: []byte(`{"jsonrpc":"2.0","id":4}`)},
	}
	r := &run{t: &StdioTarget{}, sess: session{version: "2025-11-25"}}
	var got []string
	for _, i := range r.requestsFirst(fx) {
		got = append(got, fx[i].ID)
	}
	want := []string{"garbage", "id-object", "batch", "no-method", "call", "initialized", "ping", "note"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("send order (-want +got):\n%s", diff)
	}
}
