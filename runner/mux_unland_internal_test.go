package runner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// TestUnland: an exchange left silent is judged without a line in doubt
// that a request it may be from had again, alone; with it when none had
// it; and one that went again itself is left to its new try. One line
// again answers for one line in doubt. Its silence is told without the
// lines it no longer has.
func TestUnland(t *testing.T) {
	const timeout = 500 * time.Millisecond
	null := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":null,"progress":1}}`)
	reply := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)
	alive := "; the server answered a liveness probe, so it is alive and left this request unanswered"
	// tried is a request answered the first time, sent again alone, that
	// got lines then (none: it did not go again).
	tried := func(lines ...[]byte) *pend {
		p := &pend{buf: &buffer{events: []event{{judged: &Judged{}}}}}
		if lines != nil {
			try := &envelope.Exchange{Response: &envelope.Response{Messages: lines}}
			p.buf.events[0].instead, p.buf.events[0].replaced = []event{{judged: &Judged{Exchange: try}}}, true
		}
		return p
	}
	// silent is an exchange left silent with lines in doubt (inside it)
	// from owners, and more lines of its own.
	silent := func(owners []*pend, doubted int, own ...[]byte) *pend {
		x := &pend{lines: doubted + len(own), timeout: timeout}
		var msgs [][]byte
		for range doubted {
			msgs = append(msgs, null)
			x.moved = append(x.moved, &doubtSet{line: null, inside: true, answered: owners})
		}
		x.ex = &envelope.Exchange{Response: &envelope.Response{Messages: append(msgs, own...)}, Note: transport.NoResponse(timeout, x.lines) + alive}
		return x
	}
	for _, tc := range []struct {
		name      string
		x         *pend
		ambiguous bool
		want      [][]byte // nil: no response left
		note      string
	}{
		{"owner had it", silent([]*pend{tried(null, reply)}, 1), false, nil, transport.NoResponse(timeout, 0) + alive},
		{"second owner had it", silent([]*pend{tried(reply), tried(null, reply)}, 1), false, nil, transport.NoResponse(timeout, 0) + alive},
		{"no owner had it", silent([]*pend{tried(reply)}, 1), false, [][]byte{null}, transport.NoResponse(timeout, 1) + alive},
		{"owner not sent again", silent([]*pend{tried()}, 1), false, [][]byte{null}, transport.NoResponse(timeout, 1) + alive},
		{"one again for two", silent([]*pend{tried(null, reply)}, 2), false, [][]byte{null}, transport.NoResponse(timeout, 1) + alive},
		{"own line stays", silent([]*pend{tried(null, reply)}, 1, []byte("not json")), false, [][]byte{[]byte("not json")}, transport.NoResponse(timeout, 1) + alive},
		{"went again itself", silent([]*pend{tried(null, reply)}, 1), true, [][]byte{null}, transport.NoResponse(timeout, 1) + alive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.x.ambiguous = tc.ambiguous
			(&mux{}).unland([]*pend{tc.x})
			var got [][]byte
			if tc.x.ex.Response != nil {
				got = tc.x.ex.Response.Messages
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if tc.x.ex.Note != tc.note {
				t.Errorf("note %q, want %q", tc.x.ex.Note, tc.note)
			}
		})
	}
}
