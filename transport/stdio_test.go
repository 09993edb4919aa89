package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// quick limits keep every stdio test within a few seconds.
var quick = Limits{Timeout: 2 * time.Second, Quiet: 100 * time.Millisecond, Grace: 200 * time.Millisecond, Exit: 200 * time.Millisecond}

// startFake runs the test binary as the named fake server; it is closed,
// and checked for leaked goroutines, when the test ends.
func startFake(t *testing.T, ctx context.Context, name string, lim Limits) *Stdio {
	t.Helper()
	checkNoLeaks(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Under -race, a test binary sleeps a second at exit unless told
	// not to: Close would then see a server slow to leave.
	env := append(os.Environ(), fakeEnv+"="+name, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	s, err := StartStdio(ctx, []string{exe}, env, "", lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func stdioReq(body string) envelope.Request { return envelope.Request{Body: []byte(body)} }

func lines(ls ...string) [][]byte {
	out := make([][]byte, len(ls))
	for i, l := range ls {
		out[i] = []byte(l)
	}
	return out
}

func TestStdioExchanges(t *testing.T) {
	const (
		notif = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
		later = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"late"}}`
	)
	type step struct {
		body      string
		wantReply bool
		want      *envelope.Response
		pause     time.Duration // before the next step
	}
	tests := []struct {
		name  string
		fake  string
		steps []step
	}{{
		name: "requests and a notification",
		fake: "echo",
		steps: []step{
			{body: ` {"jsonrpc":"2.0","id":1,"method":"ping"}`, wantReply: true,
				want: &envelope.Response{Messages: lines(`{"jsonrpc":"2.0","id":1,"result":{"method":"ping"}}`)}},
			{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, wantReply: false, want: nil},
			{body: `{"jsonrpc":"2.0","id":"a","method":"tools/call"}`, wantReply: true,
				want: &envelope.Response{Messages: lines(notif, `{"jsonrpc":"2.0","id":"a","result":{"method":"tools/call"}}`)}},
			{body: `{"jsonrpc":"2.0","id":2,"method":"crlf"}`, wantReply: true,
				want: &envelope.Response{Messages: lines(`{"jsonrpc":"2.0","id":2,"result":{"method":"crlf"}}`)}},
			// One message over several lines (T-STDIO-1 broken): read
			// whole, so the exchange ends at it, and RPC1001 judges it.
			{body: `{"jsonrpc":"2.0","id":3,"method":"pretty"}`, wantReply: true,
				want: &envelope.Response{Messages: lines("{\"jsonrpc\":\"2.0\",\n  \"id\":3,\n  \"result\":{}}")}},
		},
	}, {
		// A response naming another id, which no request of the pipe had
		// answered, is no end of the exchange by itself: a stray before
		// the reply stays in it, and the reply ends it, where it ended
		// it and took the next exchange's reply (the negotiation matched
		// initialize with server/discover's answer). A reply with a
		// wrong id ends it after a quiet moment, and the next exchange
		// is its own.
		name: "a stray response before the reply",
		fake: "echo",
		steps: []step{
			{body: `{"jsonrpc":"2.0","id":1,"method":"stray-first"}`, wantReply: true,
				// (No request carried the stray's id, nor the wrong one.)
				want: &envelope.Response{Messages: lines(`{"jsonrpc":"2.0","id":"never-sent","result":{}}`, `{"jsonrpc":"2.0","id":1,"result":{"method":"stray-first"}}`), Unsent: []string{`"never-sent"`}}},
			{body: `{"jsonrpc":"2.0","id":2,"method":"wrong-id"}`, wantReply: true,
				want: &envelope.Response{Messages: lines(`{"jsonrpc":"2.0","id":1002,"result":{"method":"wrong-id"}}`), Unsent: []string{"1002"}}},
			{body: `{"jsonrpc":"2.0","id":3,"method":"ping"}`, wantReply: true,
				want: &envelope.Response{Messages: lines(`{"jsonrpc":"2.0","id":3,"result":{"method":"ping"}}`)}},
		},
	}, {
		name: "a banner opens the first exchange",
		fake: "banner",
		steps: []step{
			{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, wantReply: true,
				want: &envelope.Response{Messages: lines("MyServer v1.0 starting...", `{"jsonrpc":"2.0","id":1,"result":{"method":"ping"}}`)}},
		},
	}, {
		name: "unsolicited lines open the next exchange",
		fake: "echo",
		steps: []step{
			{body: `{"jsonrpc":"2.0","id":1,"method":"log-later"}`, wantReply: true, pause: 300 * time.Millisecond,
				want: &envelope.Response{Messages: lines(`{"jsonrpc":"2.0","id":1,"result":{"method":"log-later"}}`)}},
			{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, wantReply: true,
				want: &envelope.Response{Messages: lines(later, `{"jsonrpc":"2.0","id":2,"result":{"method":"ping"}}`)}},
		},
	}, {
		name: "terminal escapes kept raw",
		fake: "echo",
		steps: []step{
			{body: `{"jsonrpc":"2.0","id":1,"method":"escape"}`, wantReply: true,
				want: &envelope.Response{Messages: lines("\x1b[2J\x1b]0;owned\x07\x00\xff", `{"jsonrpc":"2.0","id":1,"result":{"method":"escape"}}`)}},
		},
	}, {
		name: "stderr is not stdout",
		fake: "chatty",
		steps: []step{
			{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, wantReply: true,
				want: &envelope.Response{Messages: lines(`{"jsonrpc":"2.0","id":1,"result":{"method":"ping"}}`)}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startFake(t, context.Background(), tt.fake, quick)
			for i, st := range tt.steps {
				req := stdioReq(st.body)
				got := s.Do(context.Background(), req, st.wantReply)
				want := envelope.Exchange{Transport: envelope.Stdio, Request: req, Response: st.want}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("step %d (-want +got):\n%s", i, diff)
				}
				time.Sleep(st.pause)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close() = %v, want nil", err)
			}
			if exited, err := s.Exited(); !exited || err != nil {
				t.Errorf("Exited() = %v, %v; want true, nil", exited, err)
			}
		})
	}
}

// TestStdioBounds covers servers that answer nothing, or far too much:
// each exchange ends within its bound, with an honest Failure.
func TestStdioBounds(t *testing.T) {
	tests := []struct {
		name      string
		fake      string
		limits    Limits
		failure   string
		lines     int // how many lines were kept
		lineLen   int // the length of the first, when not 0
		truncated bool
		min, max  time.Duration
	}{{
		name:    "never answers",
		fake:    "hang",
		limits:  Limits{Timeout: 300 * time.Millisecond},
		failure: "no response within 300ms",
		min:     300 * time.Millisecond,
		max:     1500 * time.Millisecond,
	}, {
		name:      "floods lines",
		fake:      "flood",
		limits:    Limits{MaxEvents: 50},
		failure:   "no response in the first 50 lines",
		lines:     50,
		truncated: true,
		max:       1500 * time.Millisecond,
	}, {
		name:      "one endless line",
		fake:      "flood-noline",
		limits:    Limits{MaxBytes: 64 << 10},
		failure:   "reply exceeds 65536 bytes",
		lines:     1,
		lineLen:   64 << 10,
		truncated: true,
		max:       1500 * time.Millisecond,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := quick
			if tt.limits.Timeout != 0 {
				lim.Timeout = tt.limits.Timeout
			}
			lim.MaxEvents, lim.MaxBytes = tt.limits.MaxEvents, tt.limits.MaxBytes
			s := startFake(t, context.Background(), tt.fake, lim)
			start := time.Now()
			ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true)
			within(t, "exchange", time.Since(start), tt.min, tt.max)
			if ex.Failure != tt.failure {
				t.Errorf("failure = %q, want %q", ex.Failure, tt.failure)
			}
			var got int
			if ex.Response != nil {
				got = len(ex.Response.Messages)
				if ex.Response.Truncated != tt.truncated {
					t.Errorf("truncated = %v, want %v", ex.Response.Truncated, tt.truncated)
				}
			}
			if got != tt.lines {
				t.Fatalf("%d lines kept, want %d", got, tt.lines)
			}
			if tt.lineLen != 0 && len(ex.Response.Messages[0]) != tt.lineLen {
				t.Errorf("first line holds %d bytes, want %d", len(ex.Response.Messages[0]), tt.lineLen)
			}
			start = time.Now()
			if err := s.Close(); err != nil {
				t.Errorf("Close() = %v, want nil: the server leaves when stdin closes", err)
			}
			within(t, "Close", time.Since(start), 0, time.Second)
		})
	}
}

func TestStdioServerExits(t *testing.T) {
	s := startFake(t, context.Background(), "crash", quick)
	ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true)
	if want := "server exited (exit status 2); stderr tail: starting ⏎ fatal: boom"; ex.Failure != want {
		t.Errorf("failure = %q, want %q", ex.Failure, want)
	}
	if ex.Response != nil {
		t.Errorf("response = %+v, want none", ex.Response)
	}
	exited, err := s.Exited()
	var ee *exec.ExitError
	if !exited || !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("Exited() = %v, %v; want true and exit status 2", exited, err)
	}
	if s.Mute() {
		t.Error("Mute() = true for a server that exited: it is dead, not mute")
	}
	if got, want := string(s.Stderr()), "starting\nfatal: boom\n"; got != want {
		t.Errorf("Stderr() = %q, want %q", got, want)
	}

	// The next exchange cannot even be written, and says why.
	start := time.Now()
	ex = s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), true)
	within(t, "exchange with a dead server", time.Since(start), 0, time.Second)
	hasPrefix(t, "failure", ex.Failure, "writing the request: ")
	if !strings.HasSuffix(ex.Failure, "server exited (exit status 2); stderr tail: starting ⏎ fatal: boom") {
		t.Errorf("failure = %q, want it to name the exit and the stderr tail", ex.Failure)
	}

	if err := s.Close(); !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("Close() = %v, want the exit status 2", err)
	}
}

func TestStdioClosedStdout(t *testing.T) {
	s := startFake(t, context.Background(), "mute", quick)
	ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true)
	if want := "server closed its stdout but is still running; stderr tail: closing stdout"; ex.Failure != want {
		t.Errorf("failure = %q, want %q", ex.Failure, want)
	}
	// It can answer nothing more, as a server that exited (review
	// rev41: its fixture was "could not judge", never a death).
	if !s.Mute() {
		t.Error("Mute() = false for a server that closed its stdout and lives on")
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close() = %v, want nil", err)
	}
}

// TestStdioNotMute: a server that answers, or that hangs without
// answering, still has its stdout: not mute.
func TestStdioNotMute(t *testing.T) {
	for _, name := range []string{"echo", "hang"} {
		t.Run(name, func(t *testing.T) {
			if s := startFake(t, context.Background(), name, quick); s.Mute() {
				t.Error("Mute() = true for a server whose stdout is open")
			}
		})
	}
}

func TestStdioLastWordsWithoutNewline(t *testing.T) {
	s := startFake(t, context.Background(), "echo", quick)
	ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"last-words"}`), true)
	want := &envelope.Response{Messages: lines(`{"jsonrpc":"2.0","id":1,"result":{"method":"last-words"}}`)}
	if diff := cmp.Diff(want, ex.Response); diff != "" || ex.Failure != "" {
		t.Errorf("response (-want +got):\n%s\nfailure %q", diff, ex.Failure)
	}
	ex = s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), false)
	if !strings.Contains(ex.Failure, "server exited (exit status 0)") {
		t.Errorf("failure = %q, want the server's exit", ex.Failure)
	}
}

func TestStdioDeafServer(t *testing.T) {
	// The first message to a server just started gets Start and Timeout
	// (500 ms) from the process's start, so the clock starts before it:
	// on a loaded machine starting it may take a good part of that.
	start := time.Now()
	s := startFake(t, context.Background(), "deaf", Limits{Timeout: 300 * time.Millisecond, Start: 200 * time.Millisecond, Grace: 200 * time.Millisecond})
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", 1<<20) + `"}}`
	ex := s.Do(context.Background(), stdioReq(big), true)
	within(t, "exchange", time.Since(start), 480*time.Millisecond, 2500*time.Millisecond)
	hasPrefix(t, "failure", ex.Failure, "server did not read its stdin within 500ms of its start (took ")

	ex = s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), true)
	hasPrefix(t, "failure", ex.Failure, "stdin is out of step: an earlier request went out in part")

	if err := s.Close(); !errors.Is(err, ErrIgnoredStdinClose) {
		t.Errorf("Close() = %v, want ErrIgnoredStdinClose", err)
	}
}

// TestStdioSlowStart: a server that reads nothing for longer than
// Timeout after it starts (npx, uvx, a container) is timed from when it
// read its first message: its reply is a reply, not silence; a server
// that never reads still ends the exchange, Start past its start.
func TestStdioSlowStart(t *testing.T) {
	lim := Limits{Timeout: 200 * time.Millisecond, Start: 5 * time.Second, Quiet: 100 * time.Millisecond, Grace: 200 * time.Millisecond}
	// (The fake's own clock starts with the process: so does this one.)
	start := time.Now()
	s := startFake(t, context.Background(), "slow-start", lim)
	ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`), true)
	if ex.Failure != "" || ex.Response == nil {
		t.Fatalf("first exchange: failure %q, response %v: a slow start was taken for silence", ex.Failure, ex.Response)
	}
	within(t, "first exchange", time.Since(start), slowStart-100*time.Millisecond, 3*time.Second)
	// Only the first message waits: the next is timed from its writing.
	ex = s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":2,"method":"slow"}`), true)
	if !ex.Unanswered {
		t.Errorf("second exchange: failure %q, want it unanswered at Timeout", ex.Failure)
	}
	s.Close()

	lim.Start = 300 * time.Millisecond
	// Start and Timeout (500 ms) run from the process's start, after
	// start is taken here.
	start = time.Now()
	s = startFake(t, context.Background(), "slow-start", lim)
	ex = s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true)
	within(t, "exchange past Start", time.Since(start), 480*time.Millisecond, slowStart)
	if !ex.Unanswered {
		t.Errorf("with Start %v: failure %q, want the exchange unanswered", lim.Start, ex.Failure)
	}
}

// TestStdioStartWaitEnds: the wait for a server just started to read its
// first message ends when the server exits or the caller gives up, not
// only at Start.
func TestStdioStartWaitEnds(t *testing.T) {
	lim := Limits{Timeout: 300 * time.Millisecond, Start: 10 * time.Second, Grace: 200 * time.Millisecond}
	start := time.Now()
	s := startFake(t, context.Background(), "dies-starting", lim)
	ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`), true)
	within(t, "exchange with a server that died starting", time.Since(start), 200*time.Millisecond, 3*time.Second)
	if !strings.Contains(ex.Failure, "exit status 2") || ex.Unanswered {
		t.Errorf("failure %q (unanswered %v), want the server's exit and no silence", ex.Failure, ex.Unanswered)
	}
	s.Close()

	// A server that closed its stdin will never read: the wait ends
	// then, not Start past its start.
	start = time.Now()
	s = startFake(t, context.Background(), "closes-stdin", lim)
	ex = s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`), true)
	within(t, "exchange with a server that closed its stdin", time.Since(start), 250*time.Millisecond, 3*time.Second)
	if !ex.Unanswered {
		t.Errorf("failure %q, want the request unanswered", ex.Failure)
	}
	s.Close()

	s = startFake(t, context.Background(), "deaf", lim)
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	start = time.Now()
	ex = s.Do(ctx, stdioReq(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`), true)
	within(t, "exchange cancelled during the wait", time.Since(start), 350*time.Millisecond, 3*time.Second)
	if !strings.HasPrefix(ex.Failure, "cancelled") {
		t.Errorf("failure %q, want cancelled", ex.Failure)
	}
}

// TestStdioSlowStartNotification: a notification to a server just
// started waits its quiet moment once the server has read it, so a
// wrong reply from a slow starter is seen; its conforming twin stays
// silent.
func TestStdioSlowStartNotification(t *testing.T) {
	lim := Limits{Timeout: 300 * time.Millisecond, Start: 5 * time.Second, Quiet: 200 * time.Millisecond, Grace: 200 * time.Millisecond}
	note := stdioReq(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s := startFake(t, context.Background(), "slow-start-loud", lim)
	ex := s.Do(context.Background(), note, false)
	if ex.Response == nil || len(ex.Response.Messages) != 1 {
		t.Errorf("loud server: response %v, want its one wrong reply to the notification", ex.Response)
	}
	s.Close()
	start := time.Now()
	s = startFake(t, context.Background(), "slow-start", lim)
	ex = s.Do(context.Background(), note, false)
	if ex.Response != nil || ex.Failure != "" {
		t.Errorf("quiet server: response %v, failure %q, want nothing", ex.Response, ex.Failure)
	}
	within(t, "quiet moment", time.Since(start), slowStart+lim.Quiet-100*time.Millisecond, 3*time.Second)
}

// TestStdioCloseHurried: once Limits.Hurry closes (the run's deadline
// passed, or it was interrupted), each shutdown step waits HurryGrace, not
// Grace, whether it closed before Close or during its wait: a server
// that ignores its stdin's end and SIGTERM held a run 2 × Grace past
// --deadline, one process after another, before the reports were
// written.
func TestStdioCloseHurried(t *testing.T) {
	for _, before := range []bool{true, false} {
		t.Run(strconv.FormatBool(before), func(t *testing.T) {
			hurry := make(chan struct{})
			lim := quick
			lim.Grace, lim.Hurry = 5*time.Second, hurry
			s := startFake(t, context.Background(), "stubborn", lim)
			if ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true); ex.Failure != "" {
				t.Fatalf("first exchange failed: %s", ex.Failure)
			}
			if before {
				close(hurry)
			} else {
				time.AfterFunc(300*time.Millisecond, func() { close(hurry) })
			}
			start := time.Now()
			err := s.Close()
			within(t, "Close", time.Since(start), 2*HurryGrace, 3*time.Second)
			if !errors.Is(err, ErrIgnoredStdinClose) {
				t.Errorf("Close() = %v, want ErrIgnoredStdinClose", err)
			}
		})
	}
}

func TestStdioCloseEscalates(t *testing.T) {
	tests := []struct {
		fake string
		err  string
	}{
		{"no-eof", "server did not exit when its stdin closed within 200ms; stopped by SIGTERM: signal: terminated"},
		{"stubborn", "server did not exit when its stdin closed within 200ms, nor after SIGTERM; killed: signal: killed"},
	}
	for _, tt := range tests {
		t.Run(tt.fake, func(t *testing.T) {
			s := startFake(t, context.Background(), tt.fake, quick)
			// The answer says the server is up and its signals are set.
			if ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true); ex.Failure != "" {
				t.Fatalf("first exchange failed: %s", ex.Failure)
			}
			start := time.Now()
			err := s.Close()
			within(t, "Close", time.Since(start), 200*time.Millisecond, 2*time.Second)
			if !errors.Is(err, ErrIgnoredStdinClose) || err.Error() != tt.err {
				t.Errorf("Close() = %v, want %q wrapping ErrIgnoredStdinClose", err, tt.err)
			}
			if again := s.Close(); again != err {
				t.Errorf("second Close() = %v, want the first's %v", again, err)
			}
			if exited, _ := s.Exited(); !exited {
				t.Error("Exited() = false after Close")
			}
		})
	}
}

func TestStdioStderrTail(t *testing.T) {
	s := startFake(t, context.Background(), "chatty", quick)
	if ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true); ex.Failure != "" {
		t.Fatalf("exchange failed: %s", ex.Failure)
	}
	s.Close() // all of stderr is in once the server is gone
	tail := s.Stderr()
	if len(tail) != stderrTail || !strings.HasSuffix(string(tail), "log line 4999 of no interest\nEND\n") {
		t.Errorf("Stderr() holds %d bytes ending %q; want %d ending with the last lines", len(tail), tail[max(0, len(tail)-40):], stderrTail)
	}
}

func TestStdioCancel(t *testing.T) {
	s := startFake(t, context.Background(), "hang", Limits{Timeout: 5 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now() // before the cancel's clock starts, or it may read 99.9 ms
	time.AfterFunc(100*time.Millisecond, cancel)
	ex := s.Do(ctx, stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true)
	// Well inside the 5 s timeout the cancel cuts short; 1 s was missed
	// (1.25 s) on a machine loaded four times over its cores.
	within(t, "exchange", time.Since(start), 100*time.Millisecond, 2500*time.Millisecond)
	if want := "cancelled: context canceled"; ex.Failure != want {
		t.Errorf("failure = %q, want %q", ex.Failure, want)
	}
}

func TestStdioCloseDuringExchange(t *testing.T) {
	s := startFake(t, context.Background(), "hang", Limits{Timeout: 5 * time.Second})
	done := make(chan envelope.Exchange)
	go func() { done <- s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true) }()
	time.Sleep(100 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Errorf("Close() = %v, want nil", err)
	}
	select {
	case ex := <-done:
		if ex.Failure != "transport closed" {
			t.Errorf("failure = %q, want %q", ex.Failure, "transport closed")
		}
	case <-time.After(time.Second):
		t.Fatal("the exchange outlived Close")
	}
	if ex := s.Do(context.Background(), stdioReq(`{}`), true); ex.Failure != "transport closed" {
		t.Errorf("after Close: failure = %q, want %q", ex.Failure, "transport closed")
	}
}

func TestStdioContextKillsServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := startFake(t, ctx, "hang", quick)
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for {
		if exited, _ := s.Exited(); exited {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server still running 2s after its context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Close() = %v, want the kill reported", err)
	}
}

func TestStartStdioErrors(t *testing.T) {
	if _, err := StartStdio(context.Background(), nil, nil, "", Limits{}); err == nil {
		t.Error("StartStdio with no command: no error")
	}
	_, err := StartStdio(context.Background(), []string{"wymcp-no-such-server"}, nil, "", Limits{})
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("StartStdio(missing) = %v, want exec.ErrNotFound", err)
	}
}

// A reply that comes after its exchange timed out is a late reply: it is
// kept among the next exchange's lines, and does not end that exchange,
// which waits for its own reply.
func TestStdioLateReply(t *testing.T) {
	s := startFake(t, context.Background(), "echo", Limits{Timeout: 150 * time.Millisecond, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 50 * time.Millisecond})
	first := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)}, true)
	if first.Failure == "" || !first.Unanswered {
		t.Fatalf("first exchange: failure %q, unanswered %v; want a timeout", first.Failure, first.Unanswered)
	}
	time.Sleep(300 * time.Millisecond) // the late reply is in the pipe now
	// The late reply names the first request: it is none of the second
	// exchange's lines (taken for them, it failed RPC1004 there, or was
	// its reply when its own came late too), and the caller gets it.
	if want, ids := []string{"2"}, pingIDs(t, s); !slices.Equal(ids, want) {
		t.Errorf("second exchange's lines have ids %v, want %v (its own only)", ids, want)
	}
	late := s.TakeLate()
	if len(late) != 1 || gjson.GetBytes(late[0], "id").Raw != "1" {
		t.Errorf("TakeLate = %q, want the late reply with id 1", late)
	}
	if again := s.TakeLate(); len(again) != 0 {
		t.Errorf("TakeLate again = %q, want nothing", again)
	}
}

// A late reply with id null, the refusal of an earlier request whose id
// MCP forbids (1.5) that timed out, is that request's: it does not end
// the next exchange, whose id it does not echo, and which waits for its
// own reply (review rev82: taken for it, it failed RPC1004 there). The
// twin: a request whose id is an integer is owed its id back, and a null
// reply in the next exchange is not set aside for it.
func TestStdioLateNullReply(t *testing.T) {
	for _, tc := range []struct {
		firstID string
		want    []string // the ids of the second exchange's lines
		late    int
	}{{"1.5", []string{"2"}, 1}, {"1", []string{"null"}, 0}} {
		t.Run(tc.firstID, func(t *testing.T) {
			s := startFake(t, context.Background(), "echo", Limits{Timeout: 200 * time.Millisecond, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 50 * time.Millisecond})
			first := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":` + tc.firstID + `,"method":"slow-null"}`)}, true)
			if first.Failure == "" || !first.Unanswered {
				t.Fatalf("first exchange: failure %q, unanswered %v; want a timeout", first.Failure, first.Unanswered)
			}
			ex := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"slowish"}`)}, true)
			if ids := responseIDs(t, ex); !slices.Equal(ids, tc.want) {
				t.Errorf("second exchange's lines have ids %v, want %v", ids, tc.want)
			}
			if late := s.TakeLate(); len(late) != tc.late {
				t.Errorf("TakeLate = %q, want %d late replies", late, tc.late)
			}
		})
	}
}

// A refusal with id null of an invalid request (jsonrpc "1.0") is that
// request's reply, though an earlier request whose id MCP forbids went
// unanswered: a server that drops such requests (the TypeScript SDK)
// never answers them, and its refusals of invalid requests were set
// aside as that one's late reply, each request then judged silent
// (review rev86).
func TestStdioNullReplyOfInvalidRequest(t *testing.T) {
	s := startFake(t, context.Background(), "echo", Limits{Timeout: 200 * time.Millisecond, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 50 * time.Millisecond})
	first := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1.5,"method":"drop"}`)}, true)
	if first.Failure == "" || !first.Unanswered {
		t.Fatalf("first exchange: failure %q, unanswered %v; want a timeout", first.Failure, first.Unanswered)
	}
	ex := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"1.0","id":2,"method":"null-now"}`)}, true)
	if ids := responseIDs(t, ex); !slices.Equal(ids, []string{"null"}) {
		t.Errorf("the invalid request's lines have ids %v, want its refusal, null", ids)
	}
}

// A late null-id refusal of an invalid request with a readable id
// (jsonrpc "1.0") is set aside in a well-formed request's exchange, as
// one of a request whose id MCP forbids is; a body that is no valid JSON
// text (text after the object, invalid UTF-8) is no well-formed request,
// and its own null-id refusal stays its reply (review rev87: it was set
// aside, and the request judged silent).
func TestStdioLateNullReplyOfInvalid(t *testing.T) {
	lim := Limits{Timeout: 200 * time.Millisecond, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 50 * time.Millisecond}
	t.Run("invalid request", func(t *testing.T) {
		s := startFake(t, context.Background(), "echo", lim)
		if first := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"1.0","id":1,"method":"slow-null"}`)}, true); !first.Unanswered {
			t.Fatalf("first exchange: failure %q; want a timeout", first.Failure)
		}
		ex := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"slowish"}`)}, true)
		if ids := responseIDs(t, ex); !slices.Equal(ids, []string{"2"}) {
			t.Errorf("the well-formed request's lines have ids %v, want its own, 2", ids)
		}
	})
	t.Run("no JSON text", func(t *testing.T) {
		s := startFake(t, context.Background(), "echo", lim)
		if first := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1.5,"method":"drop"}`)}, true); !first.Unanswered {
			t.Fatalf("first exchange: failure %q; want a timeout", first.Failure)
		}
		for i, body := range []string{`{"jsonrpc":"2.0","id":2,"method":"null-now","params":{}} trailing`, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"null-now\",\"params\":{\"s\":\"\xff\"}}"} {
			ex := s.Do(context.Background(), envelope.Request{Body: []byte(body)}, true)
			if ids := responseIDs(t, ex); !slices.Equal(ids, []string{"null"}) {
				t.Errorf("request %d, no JSON text: its lines have ids %v, want its refusal, null", i, ids)
			}
		}
	})
}

// pingIDs sends a ping with id 2 and gives the ids of the lines its
// exchange took.
func pingIDs(t *testing.T, s *Stdio) []string {
	t.Helper()
	return responseIDs(t, s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)}, true))
}

// responseIDs gives the ids of the lines an exchange took.
func responseIDs(t *testing.T, ex envelope.Exchange) []string {
	t.Helper()
	if ex.Failure != "" || ex.Response == nil {
		t.Fatalf("the exchange: failure %q, response %v", ex.Failure, ex.Response)
	}
	var ids []string
	for _, m := range ex.Response.Messages {
		ids = append(ids, gjson.GetBytes(m, "id").Raw)
	}
	return ids
}

// A second response to a request answered already does not end the next
// exchange, which waits for its own: a server that answered
// server/discover twice lent the duplicate to tools/list, and the run
// lost the server's tools. The same reply again, or another, is a stray
// among the next exchange's lines, known as a second response (RPC1006
// fails it there): a copy, or one with other content (again). (A copy
// was set aside once, and passed unjudged: the exchange it belongs to
// was judged before it came.)
func TestStdioSecondReplyNotTaken(t *testing.T) {
	for _, tc := range []struct {
		method        string
		want          []string // the ids of the second exchange's lines
		again, copies []string // what the second exchange knew of them
	}{{"twice", []string{"1", "2"}, nil, []string{"1"}}, {"twice-differs", []string{"1", "2"}, []string{"1"}, nil}} {
		t.Run(tc.method, func(t *testing.T) {
			s := startFake(t, context.Background(), "echo", Limits{Timeout: time.Second, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 50 * time.Millisecond})
			first := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"` + tc.method + `"}`)}, true)
			if first.Failure != "" || first.Response == nil {
				t.Fatalf("first exchange: failure %q, response %v", first.Failure, first.Response)
			}
			time.Sleep(200 * time.Millisecond) // the second reply is in the pipe now
			ex := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)}, true)
			if ids := responseIDs(t, ex); !slices.Equal(ids, tc.want) {
				t.Errorf("second exchange's lines have ids %v, want %v", ids, tc.want)
			}
			// A second response is known as one: the request it names
			// went out once and had its response.
			if !slices.Equal(ex.Response.Again, tc.again) || !slices.Equal(ex.Response.Copies, tc.copies) || ex.Response.Unsent != nil {
				t.Errorf("second exchange knew again %q, copies %q, unsent %q; want again %q, copies %q, unsent none", ex.Response.Again, ex.Response.Copies, ex.Response.Unsent, tc.again, tc.copies)
			}
		})
	}
}

// The twin of TestStdioSecondReplyNotTaken: a server that answers with
// the id of a request answered already, and sends nothing else, has
// given that as this exchange's reply (RPC1004 judges the id); the
// exchange ends a quiet moment after it, not at its timeout.
func TestStdioStaleIDReplyTaken(t *testing.T) {
	s := startFake(t, context.Background(), "echo", Limits{Timeout: 5 * time.Second, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 100 * time.Millisecond})
	first := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}, true)
	if first.Failure != "" || first.Response == nil {
		t.Fatalf("first exchange: failure %q, response %v", first.Failure, first.Response)
	}
	start := time.Now()
	second := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"stale"}`)}, true)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the exchange took %v, want about the quiet moment", took)
	}
	if second.Failure != "" || second.Unanswered || second.Response == nil {
		t.Fatalf("second exchange: failure %q, unanswered %v, response %v", second.Failure, second.Unanswered, second.Response)
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":{"method":"stale"}}`; len(second.Response.Messages) != 1 || string(second.Response.Messages[0]) != want {
		t.Errorf("second exchange's lines %q, want the stale reply %s", second.Response.Messages, want)
	}
}

// TestStdioOwedReplyNotTaken: a request sent with Send and left
// unanswered (a multiplexed run's), then declared owed, does not lend its
// late reply to the next exchange, which waits for its own: a liveness
// probe took such a reply for its own and failed RPC1004 on a server that
// had answered every request with its right id, late.
func TestStdioOwedReplyNotTaken(t *testing.T) {
	for _, owe := range []bool{false, true} {
		t.Run(strconv.FormatBool(owe), func(t *testing.T) { testOwed(t, owe) })
	}
}

func testOwed(t *testing.T, owe bool) {
	s := startFake(t, context.Background(), "echo", Limits{Timeout: time.Second, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 50 * time.Millisecond})
	slow := []byte(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	if f := s.Send(context.Background(), slow); f != "" {
		t.Fatal(f)
	}
	if owe {
		s.Owe(slow)
	}
	// The late reply comes while the next exchange is open (one waiting
	// before its request was written is never its reply).
	ex := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)}, true)
	if ex.Failure != "" || ex.Response == nil {
		t.Fatalf("owe %v: failure %q, response %v", owe, ex.Failure, ex.Response)
	}
	// The exchange ends at its own reply either way: a response naming
	// another id ends none by itself. Without Owe the late reply is a
	// line of the exchange (a stray, for the checks); with it, it is set
	// aside for the request it answers.
	var ids []string
	for _, m := range ex.Response.Messages {
		ids = append(ids, gjson.GetBytes(m, "id").Raw)
	}
	want := []string{"1", "2"}
	if owe {
		want = []string{"2"}
	}
	if !slices.Equal(ids, want) {
		t.Errorf("owe %v: the exchange's responses have ids %v, want %v", owe, ids, want)
	}
	if ex.Response.Unsent != nil || ex.Response.Again != nil {
		t.Errorf("owe %v: the exchange knew unsent %q, again %q; want neither: id 1 went out and was not answered before", owe, ex.Response.Unsent, ex.Response.Again)
	}
}

// TestStdioSecondReplyAnyID: a server that answers twice does not lend
// the copy to the next exchange whatever the id: one JSON-RPC forbids
// (an array, an object, a boolean: fixtures send them) or none (null, a
// parse error's). Taken for the next exchange's reply, every later
// exchange took its predecessor's reply (false RPC1004 and SCH1001),
// while the fault itself drew no RPC1006. A copy naming its request is
// a stray of the next exchange, known as a copy; a null-id copy names
// none, and is set aside.
func TestStdioSecondReplyAnyID(t *testing.T) {
	lim := Limits{Timeout: time.Second, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 100 * time.Millisecond}
	for _, id := range []string{`[1]`, `{"a": 1}`, `true`} {
		t.Run(id, func(t *testing.T) {
			s := startFake(t, context.Background(), "echo", lim)
			first := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":`+strings.ReplaceAll(id, " ", "")+`,"method":"twice"}`), true)
			if first.Failure != "" || first.Response == nil {
				t.Fatalf("first exchange: failure %q, response %v", first.Failure, first.Response)
			}
			// At once: the copy comes while the next exchange is open.
			ex := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)}, true)
			compact := strings.ReplaceAll(id, " ", "")
			if ids := responseIDs(t, ex); !slices.Equal(ids, []string{compact, "2"}) {
				t.Errorf("second exchange's lines have ids %v, want [%s 2]", ids, compact)
			}
			if !slices.Equal(ex.Response.Copies, []string{compact}) {
				t.Errorf("second exchange knew copies %q, want [%s]", ex.Response.Copies, compact)
			}
		})
	}
	for _, wait := range []time.Duration{0, 200 * time.Millisecond} {
		t.Run(fmt.Sprintf("null/after %v", wait), func(t *testing.T) {
			s := startFake(t, context.Background(), "null-twice", lim)
			first := s.Do(context.Background(), stdioReq(`this is not json {`), true)
			if first.Failure != "" || first.Response == nil {
				t.Fatalf("first exchange: failure %q, response %v", first.Failure, first.Response)
			}
			time.Sleep(wait) // 0: the copy comes during the next exchange; else before it
			if ids := pingIDs(t, s); !slices.Equal(ids, []string{"2"}) {
				t.Errorf("second exchange's lines have ids %v, want [2]", ids)
			}
		})
	}
}

// The twin of TestStdioSecondReplyAnyID: a server that answers two
// unreadable lines alike, once each, gives the second exchange its own
// reply, the same bytes as the first's.
func TestStdioSameReplyTwiceTaken(t *testing.T) {
	s := startFake(t, context.Background(), "null-once", Limits{Timeout: time.Second, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 100 * time.Millisecond})
	for i := range 2 {
		ex := s.Do(context.Background(), stdioReq(`this is not json {`), true)
		if ex.Failure != "" || ex.Response == nil || len(ex.Response.Messages) != 1 {
			t.Fatalf("exchange %d: failure %q, response %v; want its one reply", i+1, ex.Failure, ex.Response)
		}
	}
}

// The checker is a client that answers the server's requests at once, as
// a receiver must ("promptly respond, or else may be disconnected"): an
// empty result to a ping, -32601 to a capability it never declared. A
// server that pings and waits, or hangs up on silence, met a checker
// that answered nothing and was failed for its death. The server's
// requests are still in the exchange, for the checks.
func TestStdioAnswersServerRequests(t *testing.T) {
	s := startFake(t, context.Background(), "pinger", Limits{Timeout: 2 * time.Second, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 50 * time.Millisecond})
	ex := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)}, true)
	if ex.Failure != "" || ex.Response == nil || len(ex.Response.Messages) != 3 {
		t.Fatalf("exchange: failure %q, response %v; want the server's two requests and its result", ex.Failure, ex.Response)
	}
	res := gjson.ParseBytes(ex.Response.Messages[2])
	if got, want := res.Get("result.pong").Str, `{"jsonrpc":"2.0","id":"srv-1","result":{}}`; got != want {
		t.Errorf("the server read %q after its ping, want %q", got, want)
	}
	if got, want := res.Get("result.refusal").Str, `{"jsonrpc":"2.0","id":"srv-2","error":{"code":-32601,"message":"Method not found"}}`; got != want {
		t.Errorf("the server read %q after its sampling request, want %q", got, want)
	}
	if m := gjson.GetBytes(ex.Response.Messages[0], "method").Str; m != "ping" {
		t.Errorf("the exchange's first message is %q, want the server's ping", m)
	}
}

// TestStdioNotificationBatchIsNoAnswer: a batch of the server's own
// notifications before its response does not end the exchange: the
// response that follows is the exchange's, not the next one's. The
// exchange ended at the batch, and every later one took the reply
// before it.
func TestStdioNotificationBatchIsNoAnswer(t *testing.T) {
	s := startFake(t, context.Background(), "echo", Limits{Timeout: 2 * time.Second, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 50 * time.Millisecond})
	ex := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":7,"method":"note-batch"}`)}, true)
	if ex.Failure != "" || ex.Response == nil || len(ex.Response.Messages) != 2 || gjson.GetBytes(ex.Response.Messages[1], "id").Int() != 7 {
		t.Fatalf("exchange: failure %q, response %v; want the batch, then the response to id 7", ex.Failure, ex.Response)
	}
	ex = s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)}, true)
	if ex.Response == nil || len(ex.Response.Messages) != 1 || gjson.GetBytes(ex.Response.Messages[0], "id").Int() != 8 {
		t.Errorf("the next exchange: %v; want its own response alone", ex.Response)
	}
}

// TestStdioUnsentKnown: a response naming an id no request written to
// the process carried is known as such by the exchange it arrives in,
// beside the exchange's own reply; the twin: one naming a request the
// checker wrote, and a null id (the answer to an unreadable message),
// are not.
func TestStdioUnsentKnown(t *testing.T) {
	s := startFake(t, context.Background(), "echo", Limits{Timeout: time.Second, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 50 * time.Millisecond})
	ex := s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"stray-first"}`)}, true)
	if ids := responseIDs(t, ex); !slices.Equal(ids, []string{`"never-sent"`, "1"}) {
		t.Fatalf("lines have ids %v", ids)
	}
	if !slices.Equal(ex.Response.Unsent, []string{`"never-sent"`}) || ex.Response.Again != nil {
		t.Errorf("unsent %q, again %q; want unsent [\"never-sent\"]", ex.Response.Unsent, ex.Response.Again)
	}
	// To a request whose id cannot be read, such a line does not end the
	// exchange either: its reply, id-less, comes after it.
	ex = s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":null,"method":"stray-first"}`)}, true)
	if ids := responseIDs(t, ex); !slices.Equal(ids, []string{`"never-sent"`, "null"}) {
		t.Errorf("to a null id: lines have ids %v, want the stray and the reply", ids)
	}
	// The same id, once the checker has written a request with it, is
	// known as no stray of that kind (7 and "7" alike: a wrong type
	// still names the request).
	for _, id := range []string{`"never-sent"`, `null`} {
		ex = s.Do(context.Background(), envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)}, true)
		if ex.Response.Unsent != nil {
			t.Errorf("id %s: unsent %q, want none", id, ex.Response.Unsent)
		}
	}
}

// TestWrittenReadings: the readings under which an id written is known
// again in a response.
func TestWrittenReadings(t *testing.T) {
	var w written
	w.add([]byte(`{"jsonrpc":"2.0","id":100,"method":"a"}`))
	w.add([]byte(`[{"jsonrpc":"2.0","id":"7","method":"b"},{"jsonrpc":"2.0","id":{"k": 1},"method":"c"}]`))
	w.add([]byte("{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":"))
	w.add([]byte(`{"jsonrpc":"2.0","id":0,"method":"d"}`))
	// A sequence broken off (E2 82) and a stray byte (FF).
	w.add([]byte("{\"jsonrpc\":\"2.0\",\"id\":\"x\xe2\x82\xffy\",\"method\":\"f\"}"))
	for raw, want := range map[string]bool{
		`100`: false, `1e2`: false, `"100"`: false, `7`: false, `"7"`: false, `{"k":1}`: false,
		`"a\ufffdb"`: false, `-0`: false, `null`: false,
		// As decoders replace the bad bytes: a run, each byte, each
		// maximal subpart.
		`"x\ufffdy"`: false, `"x\ufffd\ufffd\ufffdy"`: false, `"x\ufffd\ufffdy"`: false,
		`101`: true, `"8"`: true, `{"k":2}`: true, `"ab"`: true, `true`: true, `"x\ufffd\ufffd\ufffd\ufffdy"`: true,
	} {
		if got := w.unsent(gjson.Parse(raw)); got != want {
			t.Errorf("unsent(%s) = %v, want %v", raw, got, want)
		}
	}
	if !w.once(gjson.Parse(`100`)) || w.once(gjson.Parse(`999`)) {
		t.Errorf("once: 100 went out once, 999 never")
	}
	w.add([]byte(`{"jsonrpc":"2.0","id":"100","method":"e"}`))
	if w.once(gjson.Parse(`100`)) {
		t.Errorf("once(100) after \"100\" went out too, want false")
	}
}

// TestBySubpart: one U+FFFD for each maximal subpart, as Python's and
// WHATWG's decoders replace (Unicode §3.9, Table 3-8's example first).
func TestBySubpart(t *testing.T) {
	for in, want := range map[string]string{
		"a\xf1\x80\x80\xe1\x80\xc2b\x80c\x80\xbfd": "a\ufffd\ufffd\ufffdb\ufffdc\ufffd\ufffdd",
		"\xe0\x80":         "\ufffd\ufffd",
		"\xed\xa0\x80":     "\ufffd\ufffd\ufffd",
		"x\xe2\x82\xffy":   "x\ufffd\ufffdy",
		"\xf4\x90\x80\x80": "\ufffd\ufffd\ufffd\ufffd",
		"\xf0\x9f\x98":     "\ufffd",
		"ok \ufffd é":      "ok \ufffd é",
	} {
		if got := bySubpart(in); got != want {
			t.Errorf("bySubpart(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStdioUnterminatedReply: a reply written without its newline (the
// stdio message delimiter), then silence, was told as silence alone,
// with no word of the bytes that came; and a liveness probe after it
// could not be answered readably either, as its reply would come after
// the open line.
func TestStdioUnterminatedReply(t *testing.T) {
	const reply = `{"jsonrpc":"2.0","id":1,"result":{}}`
	type result struct {
		Failure  string
		Messages [][]byte
	}
	tests := []struct {
		fake string
		want []result // one per request: the fixture's, then a probe's
	}{
		{"half-line", []result{
			{Failure: `no response within 300ms; 36 bytes arrived without a terminating newline (the stdio message delimiter), so they are no message: "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"`},
			{Failure: `no response within 300ms; 36 bytes arrived without a terminating newline (the stdio message delimiter) before this request was written, and no reply can be read past them: "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"`},
		}},
		{"whole-line", []result{
			{Messages: lines(reply)},
			{Failure: "no response within 300ms"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fake, func(t *testing.T) {
			lim := Limits{Timeout: 300 * time.Millisecond, Quiet: 100 * time.Millisecond, Grace: 200 * time.Millisecond}
			s := startFake(t, context.Background(), tt.fake, lim)
			var got []result
			for id := range tt.want {
				ex := s.Do(context.Background(), stdioReq(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id+1)), true)
				r := result{Failure: ex.Failure}
				if ex.Response != nil {
					r.Messages = ex.Response.Messages
				}
				got = append(got, r)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("exchanges (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStdioBlankAfterOwedReply: a blank line a server writes right after
// its reply to a request owed a late reply (a multiplexed run's marker,
// declared with Owe) is that reply's, and no exchange's: where it landed
// depended on when it came, and two runs' reports differed (review
// rev84). A blank line after an exchange's own reply stays that
// exchange's line, for RPC1001 to judge.
func TestStdioBlankAfterOwedReply(t *testing.T) {
	s := startFake(t, context.Background(), "echo", Limits{Timeout: time.Second, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 100 * time.Millisecond})
	ctx := context.Background()
	marker := []byte(`{"jsonrpc":"2.0","id":1,"method":"blank-after"}`)
	s.Owe(marker)
	if f := s.Send(ctx, marker); f != "" {
		t.Fatal(f)
	}
	var got []string
	for {
		data, _, what, _ := s.Receive(ctx, time.Now().Add(300*time.Millisecond))
		if what != Line {
			break
		}
		got = append(got, string(data))
	}
	if want := []string{`{"jsonrpc":"2.0","id":1,"result":{"method":"blank-after"}}`}; !slices.Equal(got, want) {
		t.Errorf("after the owed reply the pipe gave %q, want %q (its blank line dropped)", got, want)
	}
	ex := s.Do(ctx, envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"blank-after"}`)}, true)
	if ex.Response == nil {
		t.Fatalf("no reply: %s", ex.Failure)
	}
	time.Sleep(100 * time.Millisecond)
	next := s.Do(ctx, envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)}, true)
	if next.Response == nil || len(next.Response.Messages) != 2 || len(bytes.TrimSpace(next.Response.Messages[0])) != 0 {
		var lines [][]byte
		if next.Response != nil {
			lines = next.Response.Messages
		}
		t.Errorf("the blank line after an exchange's own reply was not kept for the next exchange: %q", lines)
	}
}

// TestStdioOwedNullRefusalNotTaken: a request that is no well-formed
// request (an id null), sent with Send and left unanswered, then
// declared owed, does not lend its late refusal with id null to the next
// well-formed exchange (a multiplexed run's liveness probe took it and
// failed RPC1004); the exchange waits for its own reply. The twin: a
// well-formed request owed gives no such cover.
func TestStdioOwedNullRefusalNotTaken(t *testing.T) {
	for _, c := range []struct {
		owed string
		want string // the id of the exchange's response
	}{
		{`{"jsonrpc":"2.0","id":null,"method":"slow-null"}`, "2"},
		{`{"jsonrpc":"2.0","id":1,"method":"slow-null"}`, "null"},
	} {
		t.Run(c.want, func(t *testing.T) {
			s := startFake(t, context.Background(), "echo", Limits{Timeout: 2 * time.Second, MaxBytes: 1 << 20, MaxEvents: 100, Quiet: 50 * time.Millisecond})
			ctx := context.Background()
			if f := s.Send(ctx, []byte(c.owed)); f != "" {
				t.Fatal(f)
			}
			s.Owe([]byte(c.owed))
			// The null refusal comes 300 ms after the owed request; the
			// exchange's own reply 300 ms after its request, sent 100 ms on.
			time.Sleep(100 * time.Millisecond)
			ex := s.Do(ctx, envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"slow"}`)}, true)
			if ex.Response == nil {
				t.Fatalf("owed %s: no reply: %s", c.owed, ex.Failure)
			}
			last := ex.Response.Messages[len(ex.Response.Messages)-1]
			if got := gjson.GetBytes(last, "id").Raw; got != c.want {
				t.Errorf("owed %s: the exchange ended at %s, want the response with id %s", c.owed, last, c.want)
			}
		})
	}
}
