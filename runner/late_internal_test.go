package runner

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// TestAnswerPastDeadline: a multiplexed request answered past its window
// while the run still waits on others (a server that works on requests
// side by side, each slower than --timeout) keeps its reply out: it is
// the request's, and silence within --timeout all the same (DESIGN,
// Silence is a finding), as in a run in sequence, with a note that it
// came. It was judged as the request's reply, and the run passed. The
// twin: within its window, the reply is the exchange's.
func TestAnswerPastDeadline(t *testing.T) {
	const reply = `{"jsonrpc":"2.0","id":7,"result":{}}`
	for _, tc := range []struct {
		name     string
		deadline time.Duration // from now
		want     []string
	}{
		{"past", -time.Millisecond, nil},
		{"within", time.Minute, []string{reply}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, err := StartStdio(context.Background(), []string{"cat"}, transport.Limits{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer target.Close()
			r := &run{t: target}
			ex := &envelope.Exchange{Failure: "no response within 1s"}
			k, _ := responseKey([]byte(reply))
			m := &mux{r: r, proc: target.proc(), sent: map[string]int{k: 1}}
			m.pending = []*pend{{name: "f", keys: []string{k}, deadline: time.Now().Add(tc.deadline), ex: ex}}
			if !m.answer([]byte(reply)) {
				t.Fatal("the reply to a pending request was not taken as its")
			}
			var got []string
			if ex.Response != nil {
				for _, msg := range ex.Response.Messages {
					got = append(got, string(msg))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("messages of the exchange (-want +got):\n%s", diff)
			}
			if tc.want == nil && ex.Note == "" {
				t.Errorf("no note says the reply came past the window")
			}
		})
	}
}
