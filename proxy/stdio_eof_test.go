package proxy

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
)

// eofSeen is what a test reads of the exchange of the end of the
// server's input.
type eofSeen struct {
	Seq       uint64 // numbered after the last message
	Messages  []string
	Unsent    []string
	Exited    bool
	Lingered  bool
	Oversized bool
	Note      string
	Version   string
}

// eofPairs renders the exchanges of the end of the server's input.
func eofPairs(pairs []Pair) []eofSeen {
	var got []eofSeen
	for _, p := range pairs {
		ex := p.Exchange
		if !ex.EndsInput() {
			continue
		}
		if p.Asker != ClientToServer || len(ex.Request.Body) != 0 || ex.Failure != "" || p.ReplySeq != 0 {
			panic(fmt.Sprintf("an end of input that is no such exchange: %+v", p))
		}
		e := eofSeen{Seq: p.RequestSeq, Exited: ex.Exited, Lingered: ex.Lingered, Oversized: p.Oversized, Note: ex.Note, Version: ex.Version}
		if r := ex.Response; r != nil {
			for _, m := range r.Messages {
				e.Messages = append(e.Messages, string(m))
			}
			e.Unsent = r.Unsent
		}
		got = append(got, e)
	}
	return got
}

// TestStdioEndOfInput: when the client closes its end first, what the
// server writes after its stdin closed, and no request's exchange takes,
// is the exchange of the end of its input (envelope.EndOfInput), judged
// as check judges what follows its closing stdin: a goodbye banner
// breaks T-STDIO-2 (RPC1001 fails it), and a server still running when
// --grace runs out is said to linger (PRO1011 warns at 2026-07-28). The
// goodbye was shown "judged with the next request's reply", and no next
// request came: it was judged nowhere (review). A server that ends while
// the client is connected has no such exchange (TestStdioExitStatusAndDeath).
func TestStdioEndOfInput(t *testing.T) {
	const (
		initReq  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
		initResp = `"protocolVersion":"2025-06-18"`
		exited   = "stdin closed; the server exited within 5s"
		stray    = `{"jsonrpc":"2.0","id":99,"result":{}}`
		logMsg   = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}`
	)
	tests := []struct {
		name  string
		after string // what the server does once its stdin ended (see the fake "eof")
		lim   Limits
		want  []eofSeen
	}{
		{"a goodbye line", "Goodbye!", Limits{},
			[]eofSeen{{Seq: 4, Messages: []string{"Goodbye!"}, Exited: true, Note: exited, Version: envelope.V20250618}}},
		{"exits quietly", "", Limits{},
			[]eofSeen{{Seq: 3, Exited: true, Note: exited, Version: envelope.V20250618}}},
		// A --grace shorter than check's wait tells nothing of
		// "promptly" (review rev51: --grace 1s warned a server gone in
		// 3 s).
		{"still running when a short grace ran out", "sleep:5000", Limits{Grace: 200 * time.Millisecond, Exit: 400 * time.Millisecond},
			[]eofSeen{{Seq: 3, Note: "stdin closed; the server was still running when the relay stopped waiting, or was signalled", Version: envelope.V20250618}}},
		// Gone within --grace, but past check's wait: it lingered, as
		// check judges it (review rev51: --grace 10s passed a server
		// gone in 6 s).
		{"exits past the wait, within the grace", "sleep:600", Limits{Grace: 2 * time.Second, Exit: 200 * time.Millisecond},
			[]eofSeen{{Seq: 3, Lingered: true, Note: "stdin closed; the server was still running 200ms after", Version: envelope.V20250618}}},
		{"lingers past the grace", "sleep:5000", Limits{Grace: 200 * time.Millisecond, Exit: 200 * time.Millisecond},
			[]eofSeen{{Seq: 3, Lingered: true, Note: "stdin closed; the server was still running 200ms after", Version: envelope.V20250618}}},
		{"a goodbye line, then lingers", "Goodbye!\nsleep:5000", Limits{Grace: 200 * time.Millisecond, Exit: 200 * time.Millisecond},
			[]eofSeen{{Seq: 4, Messages: []string{"Goodbye!"}, Lingered: true, Note: "stdin closed; the server was still running 200ms after", Version: envelope.V20250618}}},
		// A message after the close concerns no request of the client's:
		// it is the end of input's, as in check's exchange.
		{"a log message", logMsg, Limits{},
			[]eofSeen{{Seq: 4, Messages: []string{logMsg}, Exited: true, Note: exited, Version: envelope.V20250618}}},
		{"a response to nothing sent", stray, Limits{},
			[]eofSeen{{Seq: 4, Messages: []string{stray}, Unsent: []string{"99"}, Exited: true, Note: exited, Version: envelope.V20250618}}},
		// Bounded as one request's reply: past --max-bytes it is not
		// whole, and not judged (an error).
		{"a line over the bound", strings.Repeat("x", 300), Limits{MaxBytes: 200},
			[]eofSeen{{Seq: 4, Oversized: true, Exited: true, Note: exited, Version: envelope.V20250618}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lim := tc.lim
			if lim.Grace == 0 {
				lim.Grace = 2 * time.Second
			}
			s := startStdioEnv(t, []string{fakeEnv + "=eof", fakeEOF + "=" + tc.after}, lim, nil)
			s.play(t, initReq, "wait:"+initResp)
			obs, pairs := s.rec.snapshot()
			if diff := cmp.Diff(tc.want, eofPairs(pairs)); diff != "" {
				t.Errorf("end of input (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
		})
	}
}

// TestStdioSecondSignalEndsEndOfInputWait: the client closed its end,
// and the server, which ignores SIGINT, still runs; a second Ctrl-C
// within the wait stops it at once (SIGTERM), as a second one does while
// the client is connected (TestStdioSecondSignalStops), and the cut wait
// tells neither exited nor lingered. The relay waited out the whole
// grace (review rev51). The twin, a wait that runs its course, is
// "lingers past the grace" in TestStdioEndOfInput.
func TestStdioSecondSignalEndsEndOfInputWait(t *testing.T) {
	s := startStdio(t, "deaf-eof", Limits{Grace: 30 * time.Second, Exit: 30 * time.Second}, nil)
	waitContains(t, s.out, "ready")
	s.in.Close()
	time.Sleep(200 * time.Millisecond) // into the wait
	s.sigs <- syscall.SIGINT
	s.sigs <- syscall.SIGINT
	res := s.wait(t, 10*time.Second)
	if res.ExitCode != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d (%s), want SIGTERM's", res.ExitCode, res.Exit)
	}
	_, pairs := s.rec.snapshot()
	want := []eofSeen{{Seq: 2, Note: "stdin closed; the server was still running when the relay stopped waiting, or was signalled"}}
	if diff := cmp.Diff(want, eofPairs(pairs)); diff != "" {
		t.Errorf("end of input (-want +got):\n%s", diff)
	}
}
