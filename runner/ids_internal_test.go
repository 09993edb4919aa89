package runner

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// TestOwnIDsStepOverLiteralIDs: a fixture that writes its id as a number
// keeps it to itself: the runner's own ids (markers, probes) step over
// it, and a number past the first block keeps fixtures' blocks off its
// own; ids written as {{id}}, 0, negative or too long for an int32 take
// nothing. Its twin: a run without such fixtures counts up one by one.
func TestOwnIDsStepOverLiteralIDs(t *testing.T) {
	plain := []*fixtures.Fixture{{ID: "plain", Body: []byte(`{"jsonrpc":"2.0","id":{{id}},"method":"ping"}`)},
		{ID: "odd", Body: []byte(`{"jsonrpc":"2.0","id":0,"method":"ping"} {"id":-1} {"id":12345678901234567890}`)}}
	r := &run{literal: literalSet(plain)}
	r.reserve(plain...)
	for want := 1; want <= 5; want++ {
		if got := r.id(); got != want {
			t.Fatalf("own id %d, want %d: nothing to step over", got, want)
		}
	}

	lit := &fixtures.Fixture{ID: "user/literal", Body: []byte(`[{"jsonrpc":"2.0","id": 1 ,"method":"ping"},{"jsonrpc":"2.0","id":3}]`)}
	far := &fixtures.Fixture{ID: "user/far", Body: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 5*idStrideMin+7))}
	r = &run{literal: literalSet([]*fixtures.Fixture{lit, far})}
	// The negotiation's ids come before any block is reserved.
	got := []int{r.id(), r.id()}
	r.reserve(lit, far)
	s := r.blocks.stride
	for range 2 {
		got = append(got, r.id())
	}
	if diff := cmp.Diff([]int{2, 4, 5, 6}, got); diff != "" {
		t.Errorf("own ids (-want +got):\n%s", diff)
	}
	// A wide stride (a server listing many tools) leaves a literal past
	// idStrideMin below the first block, where the own ids count.
	wide := &run{literal: literalSet([]*fixtures.Fixture{{ID: "user/wide", Body: []byte(`{"id":5000}`)}})}
	wide.sess.nextID = 4998
	if got := []int{wide.id(), wide.id()}; got[0] != 4999 || got[1] != 5001 {
		t.Errorf("own ids %v past 4998, want [4999 5001]: 5000 is a fixture's", got)
	}
	if !r.blocks.taken[5*idStrideMin/s] {
		t.Errorf("the block holding %d is not kept from fixtures, though a fixture sends it", 5*idStrideMin+7)
	}
	for _, f := range []*fixtures.Fixture{lit, far} {
		if id := r.requestID(f, 0); id/s == (5*idStrideMin+7)/s {
			t.Errorf("fixture %s got the block that holds a literal id", f.ID)
		}
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

// TestLiteralIDSpellings: a literal id in another spelling of an integer
// (6.0, 60e-1) is the id a server that reads numbers echoes, so the
// runner's own requests step over it as over 6 (review rev35: send's
// marker took a TypeScript server's reply to "id":7.0); a fraction, a
// string or a negative number is no id of the runner's.
func TestLiteralIDSpellings(t *testing.T) {
	for body, want := range map[string][]int{
		`{"id":6}`:              {6},
		`{"id":6.0}`:            {6},
		`{"id":60e-1}`:          {6},
		`{"id": 6E0 , "x":1}`:   {6},
		`{"id":6.5}`:            nil,
		`{"id":"6"}`:            nil,
		`{"id":-6}`:             nil,
		`[{"id":3},{"id":4.0}]`: {3, 4},
	} {
		if got := literalIDs(&fixtures.Fixture{Body: []byte(body)}); !slices.Equal(got, want) {
			t.Errorf("literalIDs(%s) = %v, want %v", body, got, want)
		}
	}
}
