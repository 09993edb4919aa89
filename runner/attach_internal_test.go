package runner

import (
	"bytes"
	"context"
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// TestKeepBounded: lines a multiplexed run gives a buffered exchange
// (second responses, strays, progress) stay within the exchange's bounds
// of lines and bytes, whoever writes them without end; within them, each
// is kept.
func TestKeepBounded(t *testing.T) {
	target, err := StartStdio(context.Background(), []string{"cat"}, transport.Limits{MaxBytes: 100, MaxEvents: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	m := &mux{proc: target.proc()}
	ex := &envelope.Exchange{}
	line := bytes.Repeat([]byte("x"), 40)
	for i, want := range []bool{true, true, false} {
		if got := m.keep(ex, line); got != want {
			t.Errorf("line %d of 40 bytes (bound 100): kept %v, want %v", i+1, got, want)
		}
	}
	short := []byte("y")
	if !m.keep(ex, short) {
		t.Errorf("a 1-byte line within both bounds was not kept")
	}
	if m.keep(ex, short) {
		t.Errorf("a fourth line was kept past the bound of 3 lines")
	}
	if n := len(ex.Response.Messages); n != 3 {
		t.Errorf("%d lines kept, want 3", n)
	}
}
