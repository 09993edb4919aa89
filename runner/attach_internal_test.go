package runner

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// TestAttachBounded: lines a multiplexed run gives a buffered exchange
// (second responses, strays, progress) stay within the exchange's bound
// of lines and twice its bound of bytes, whoever writes them without
// end; within them, each is kept.
func TestAttachBounded(t *testing.T) {
	target, err := StartStdio(context.Background(), []string{"cat"}, transport.Limits{MaxBytes: 50, MaxEvents: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	m := &mux{proc: target.proc()}
	ex := &envelope.Exchange{}
	line := bytes.Repeat([]byte("x"), 40)
	for i, want := range []bool{true, true, false} {
		if got := m.attach(ex, line); got != want {
			t.Errorf("line %d of 40 bytes (bound 2 × 50): kept %v, want %v", i+1, got, want)
		}
	}
	short := []byte("y")
	if !m.attach(ex, short) {
		t.Errorf("a 1-byte line within both bounds was not kept")
	}
	if m.attach(ex, short) {
		t.Errorf("a fourth line was kept past the bound of 3 lines")
	}
	if n := len(ex.Response.Messages); n != 3 {
		t.Errorf("%d lines kept, want 3", n)
	}
}

// TestEarlySecondResponse: a second response to a request of the
// transport's own exchanges (here the first, as the negotiation's is)
// that comes between exchanges goes to the next exchange on its
// process, known for one, when no buffered exchange of that process
// came before it: it was dropped before the first, and after a restart
// it failed an exchange of the process before. The twin: one that comes
// after an exchange of its own process follows that exchange.
func TestEarlySecondResponse(t *testing.T) {
	const again = `{"jsonrpc":"2.0","id":1,"result":{"again":true}}`
	script := `read l; printf '%s\n' "$l"; sleep 0.2; printf '%s\n' '` + again + `'; cat >/dev/null`
	target, err := StartStdio(context.Background(), []string{"sh", "-c", script}, transport.Limits{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	p := target.proc()
	// The server echoes the request: a response that names it, taken.
	if ex := p.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, true); ex.Failure != "" {
		t.Fatalf("first exchange: %s", ex.Failure)
	}
	data, _, what, why := p.Receive(context.Background(), time.Now().Add(2*time.Second))
	if what != transport.Line || string(data) != again {
		t.Fatalf("read %q (%v %s), want the second response", data, what, why)
	}
	other := &envelope.Exchange{}
	for _, tc := range []struct {
		name     string
		last     *envelope.Exchange
		lastProc *transport.Stdio
		early    bool
	}{
		{"before any exchange", nil, nil, true},
		{"after another process's", other, nil, true},
		{"after its own process's", other, p, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			*other = envelope.Exchange{}
			m := &mux{r: &run{}, markers: map[string]bool{}, last: tc.last, lastProc: tc.lastProc, proc: tc.lastProc}
			m.stray(p, data)
			got := m.takeEarly(p)
			if tc.early && (len(got) != 1 || other.Response != nil) {
				t.Errorf("early lines %q, the last exchange got %+v; want the line kept for the next exchange", got, other.Response)
			}
			if !tc.early && (len(got) != 0 || other.Response == nil || !slices.Equal(other.Response.Again, []string{"1"})) {
				t.Errorf("early lines %q, the last exchange got %+v; want the line there, known again", got, other.Response)
			}
		})
	}
}
