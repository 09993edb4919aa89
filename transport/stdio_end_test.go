package transport

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wymcp/wymcp-check/envelope"
)

func TestStdioEndInput(t *testing.T) {
	tests := []struct {
		fake              string
		want              [][]byte // the lines after stdin closed; nil: none
		exited, lingered  bool
		closeIgnoredStdin bool
	}{
		// It exits at EOF, quietly: nothing to judge but the exit.
		{fake: "echo", exited: true},
		// What it writes once stdin closed is read, to its last line
		// without a newline, and not dropped by the shutdown.
		{fake: "goodbye", want: lines("Goodbye!", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}`), exited: true},
		// Still running at the end of the grace: Close signals it at
		// once, the grace spent already.
		{fake: "no-eof", lingered: true, closeIgnoredStdin: true},
	}
	for _, tt := range tests {
		t.Run(tt.fake, func(t *testing.T) {
			// A second wait before SIGTERM would take a whole Grace:
			// one long enough that a loaded machine's reaping stays
			// well inside it.
			lim := quick
			lim.Grace, lim.Exit = time.Second, 300*time.Millisecond
			s := startFake(t, context.Background(), tt.fake, lim)
			if ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true); ex.Failure != "" {
				t.Fatalf("first exchange failed: %s", ex.Failure)
			}
			ex, ok := s.EndInput(context.Background())
			if !ok {
				t.Fatal("EndInput: not ok")
			}
			if !ex.EndsInput() || len(ex.Request.Body) != 0 {
				t.Errorf("request = %+v, want the end of input", ex.Request)
			}
			var got [][]byte
			if ex.Response != nil {
				got = ex.Response.Messages
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines after stdin closed (-want +got):\n%s", diff)
			}
			if ex.Exited != tt.exited || ex.Lingered != tt.lingered || ex.Failure != "" {
				t.Errorf("exited %v, lingered %v, failure %q; want %v, %v, none", ex.Exited, ex.Lingered, ex.Failure, tt.exited, tt.lingered)
			}
			start := time.Now()
			err := s.Close()
			if got := errors.Is(err, ErrIgnoredStdinClose); got != tt.closeIgnoredStdin {
				t.Errorf("Close() = %v; ignored stdin close %v, want %v", err, got, tt.closeIgnoredStdin)
			}
			if tt.lingered && time.Since(start) >= lim.Grace {
				// A second grace before SIGTERM would hold every run's
				// end up by as much.
				t.Errorf("Close took %v after EndInput waited its grace out, want SIGTERM at once", time.Since(start))
			}
			if _, again := s.EndInput(context.Background()); again {
				t.Error("EndInput after Close: ok, want nothing to end")
			}
		})
	}
}

// A server that floods stdout once its stdin closed is read within the
// bounds, and its flood still drained, so that it can exit.
func TestStdioEndInputFlood(t *testing.T) {
	lim := quick
	lim.MaxEvents = 50
	s := startFake(t, context.Background(), "flood-at-eof", lim)
	ex, ok := s.EndInput(context.Background())
	if !ok {
		t.Fatal("EndInput: not ok")
	}
	if ex.Response == nil || !ex.Response.Truncated || len(ex.Response.Messages) != lim.MaxEvents {
		t.Fatalf("response = %+v, want the first %d lines, truncated", ex.Response, lim.MaxEvents)
	}
	// The flood is the server's, judged as far as it was kept (review
	// rev50): no failure of the checker's, whose "could not judge" lost
	// the lines' verdicts and the exit's.
	if ex.Failure != "" || !strings.Contains(ex.Note, "50 lines after stdin closed; the checker stopped keeping them") {
		t.Errorf("failure %q, note %q; want none, and a note of the lines dropped", ex.Failure, ex.Note)
	}
	if !ex.Lingered {
		t.Error("lingered = false, want true: it floods on")
	}
}

// The exchange of the end of input says so, to checks and transcripts.
func TestEndsInput(t *testing.T) {
	for _, tt := range []struct {
		ex   envelope.Exchange
		want bool
	}{
		{envelope.Exchange{Transport: envelope.Stdio, Request: envelope.Request{Method: envelope.EndOfInput}}, true},
		{envelope.Exchange{Transport: envelope.HTTP, Request: envelope.Request{Method: envelope.EndOfInput}}, false},
		{envelope.Exchange{Transport: envelope.Stdio}, false},
	} {
		if got := tt.ex.EndsInput(); got != tt.want {
			t.Errorf("EndsInput(%+v) = %v, want %v", tt.ex, got, tt.want)
		}
	}
}
