package proxy

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// A recorder is an Observer that keeps everything, for the tests.
type recorder struct {
	mu    sync.Mutex
	obs   []Observation
	pairs []Pair
	// block, when set, holds every delivery until it is closed: an
	// Observer that never keeps up.
	block chan struct{}
}

func (r *recorder) Message(o Observation) {
	if r.block != nil {
		<-r.block
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.obs = append(r.obs, o)
}

func (r *recorder) Exchange(p Pair) {
	if r.block != nil {
		<-r.block
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pairs = append(r.pairs, p)
}

func (r *recorder) snapshot() ([]Observation, []Pair) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Observation(nil), r.obs...), append([]Pair(nil), r.pairs...)
}

// waitFor polls cond until it holds, failing the test after a bound.
func (r *recorder) waitFor(t *testing.T, what string, cond func([]Observation, []Pair) bool) ([]Observation, []Pair) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		obs, pairs := r.snapshot()
		if cond(obs, pairs) {
			return obs, pairs
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not within 10s\n%s", what, describe(obs, pairs))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// describe lists what was observed, one line each, for failure messages.
func describe(obs []Observation, pairs []Pair) string {
	var b strings.Builder
	for _, o := range obs {
		fmt.Fprintf(&b, "  obs #%d %v %v %q id=%s size=%d completes=%v note=%q %.80q\n", o.Seq, o.Dir, o.Kind, o.Method, o.ID, o.Size, o.Completes, o.Note, o.Raw)
	}
	for _, p := range pairs {
		fmt.Fprintf(&b, "  pair %v %q req=#%d reply=#%d failure=%q oversized=%v\n", p.Asker, p.Method, p.RequestSeq, p.ReplySeq, p.Exchange.Failure, p.Oversized)
	}
	return b.String()
}

// pairOf returns the pairs asked by asker for method.
func pairsOf(pairs []Pair, asker Direction, method string) []Pair {
	var out []Pair
	for _, p := range pairs {
		if p.Asker == asker && p.Method == method {
			out = append(out, p)
		}
	}
	return out
}

// fixedClock is a clock that moves 1ms per reading, for deterministic
// times.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}
