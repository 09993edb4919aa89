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
