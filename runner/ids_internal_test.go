package runner

import (
	"math"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/fixtures"
)

// TestOwnIDsStepOverBlocks: the runner's own ids count up past the
// fixtures' blocks, never into one; a block is never one the own ids
// reached; two fixtures whose IDs hash alike get blocks of their own.
func TestOwnIDsStepOverBlocks(t *testing.T) {
	r := &run{}
	a, b := &fixtures.Fixture{ID: "x/y"}, &fixtures.Fixture{ID: "x/y"}
	r.reserve(a, b)
	s := r.blocks.stride
	at, bt := r.requestID(a, 0), r.requestID(b, 0)
	if at == bt || at%s != 0 || bt%s != 0 {
		t.Fatalf("blocks at %d and %d (stride %d): want two distinct round ones", at, bt, s)
	}
	r.sess.nextID = at - 2
	if got := r.id(); got != at-1 {
		t.Errorf("own id %d, want %d", got, at-1)
	}
	for got := r.id(); got < at+3*s; got = r.id() {
		if got/s == at/s || got/s == bt/s {
			t.Fatalf("own id %d falls in a fixture's block", got)
		}
	}
	c := &fixtures.Fixture{ID: "x/y"}
	r.reserve(c)
	if got := r.requestID(c, 0); got <= r.sess.nextID {
		t.Errorf("block at %d, below own ids reached (%d)", got, r.sess.nextID)
	}
}

// TestReserveEnds: with more fixtures than blocks (a server listing
// millions of tools widens them), reserving still ends.
func TestReserveEnds(t *testing.T) {
	r := &run{blocks: &idBlocks{stride: 500_000_000, start: map[*fixtures.Fixture]int{}, taken: map[int]bool{}}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 5 {
			r.reserve(&fixtures.Fixture{ID: string(rune('a' + i))})
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("reserve did not end with more fixtures than blocks")
	}
	if got := r.requestID(&fixtures.Fixture{ID: "z"}, 0); got <= 0 || got > math.MaxInt32 {
		t.Errorf("id %d, want one in (0, 2^31)", got)
	}
}
