package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wymcp/wymcp-check/envelope"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitContains polls b until it holds s.
func waitContains(t *testing.T, b *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %q; have:\n%s", s, b.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stdioSession runs a Stdio relay around a fake, with the test as the
// client: in is what the client writes, out what it reads.
type stdioSession struct {
	in      *io.PipeWriter
	out     *lockedBuffer
	errOut  *lockedBuffer
	sigs    chan os.Signal
	rec     *recorder
	done    chan struct{}
	res     Result
	err     error
	inLog   string
	outLog  string
	cancel  context.CancelFunc
	started time.Time
}

func startStdio(t *testing.T, fake string, lim Limits, rec *recorder) *stdioSession {
	t.Helper()
	return startStdioEnv(t, []string{fakeEnv + "=" + fake}, lim, rec)
}

// startScript runs a Stdio relay around a scripted fake (see runScript).
func startScript(t *testing.T, script string, lim Limits) *stdioSession {
	t.Helper()
	s := startStdioEnv(t, []string{scriptEnv + "=" + script}, lim, nil)
	waitContains(t, s.errOut, "script: ready")
	return s
}

// startStdioEnv runs a Stdio relay around the fake that env names.
func startStdioEnv(t *testing.T, env []string, lim Limits, rec *recorder) *stdioSession {
	t.Helper()
	dir := t.TempDir()
	s := &stdioSession{out: &lockedBuffer{}, errOut: &lockedBuffer{}, sigs: make(chan os.Signal, 1), rec: rec,
		done: make(chan struct{}), inLog: filepath.Join(dir, "in"), outLog: filepath.Join(dir, "out"), started: time.Now()}
	if s.rec == nil {
		s.rec = &recorder{}
	}
	pr, pw := io.Pipe()
	s.in = pw
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	st := &Stdio{
		Argv:     fakeArgv(t),
		Env:      append(append(os.Environ(), env...), fakeInLog+"="+s.inLog, fakeOutLog+"="+s.outLog),
		Stdin:    pr,
		Stdout:   s.out,
		Stderr:   s.errOut,
		Signals:  s.sigs,
		Limits:   lim,
		Observer: s.rec,
	}
	go func() {
		defer close(s.done)
		s.res, s.err = st.Run(ctx)
	}()
	t.Cleanup(func() {
		pw.Close()
		cancel()
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			t.Errorf("the relay did not end")
		}
	})
	return s
}

// wait waits for the relay to end, within bound.
func (s *stdioSession) wait(t *testing.T, bound time.Duration) Result {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(bound):
		t.Fatalf("the relay still runs after %v", bound)
	}
	if s.err != nil {
		t.Fatalf("Run: %v", s.err)
	}
	return s.res
}

func TestStdioRelaysBothWaysUnchanged(t *testing.T) {
	s := startStdio(t, "echo", Limits{Quiet: 50 * time.Millisecond}, nil)
	var sent bytes.Buffer
	write := func(msg string) {
		sent.WriteString(msg)
		// In uneven pieces: lines are forwarded as the bytes come, and
		// observed once whole.
		for len(msg) > 0 {
			n := min(7, len(msg))
			if _, err := s.in.Write([]byte(msg[:n])); err != nil {
				t.Fatal(err)
			}
			msg = msg[n:]
		}
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n")
	waitContains(t, s.out, `"protocolVersion":"2025-06-18"`)
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r\n")
	write(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"\u001b[2J"}}` + "\n")
	waitContains(t, s.out, `"method":"sampling/createMessage"`)
	write(`{"jsonrpc":"2.0","id":"srv-1","result":{"model":"m"}}` + "\n")
	write(`{"jsonrpc":"2.0","method":"notifications/answer-me"}` + "\n")
	write("not json\n")
	write(`{"jsonrpc":"2.0","id":2,"method":"ping"}`) // no newline: the client closes right after
	s.in.Close()
	res := s.wait(t, 10*time.Second)
	if res.ExitCode != 0 {
		t.Errorf("exit %d (%s), want 0", res.ExitCode, res.Exit)
	}

	serverIn, _ := os.ReadFile(s.inLog)
	serverOut, _ := os.ReadFile(s.outLog)
	if diff := cmp.Diff(sent.String(), string(serverIn)); diff != "" {
		t.Errorf("the server read (-the client wrote +the server read):\n%s", diff)
	}
	if diff := cmp.Diff(string(serverOut), s.out.String()); diff != "" {
		t.Errorf("the client read (-the server wrote +the client read):\n%s", diff)
	}
	if !strings.Contains(s.errOut.String(), "got 88 bytes") {
		t.Errorf("the server's stderr did not pass through: %q", s.errOut.String())
	}

	obs, pairs := s.rec.snapshot()
	// One line per pair; sorted, as the order of pairs completed by the
	// two sides' goroutines and the quiet timers is not the test's point.
	var got []string
	for _, p := range pairs {
		reply := "none"
		if r := p.Exchange.Response; r != nil {
			reply = string(bytes.Join(r.Messages, []byte("|")))
		}
		method := p.Method
		if p.Exchange.EndsInput() {
			method = envelope.EndOfInput
		}
		got = append(got, fmt.Sprintf("%v %q reply=%s failure=%q died=%q version=%q completed=%v",
			p.Asker, method, reply, p.Exchange.Failure, p.Exchange.Died, p.Exchange.Version, p.ReplySeq != 0))
	}
	slices.Sort(got)
	want := []string{
		`client→server "" reply=none failure="no reply before the server ended (exit status 0)" died="" version="2025-06-18" completed=false`,
		// The client closed its end: the server's stdin ended, and it
		// wrote nothing after.
		`client→server "EOF" reply=none failure="" died="" version="2025-06-18" completed=false`,
		`client→server "initialize" reply={"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"echo","version":"1"}}} failure="" died="" version="" completed=true`,
		`client→server "notifications/answer-me" reply={"jsonrpc":"2.0","id":null,"result":{}} failure="" died="" version="2025-06-18" completed=true`,
		`client→server "notifications/initialized" reply=none failure="" died="" version="2025-06-18" completed=false`,
		`client→server "ping" reply={"jsonrpc":"2.0","id":2,"result":{}} failure="" died="" version="2025-06-18" completed=true`,
		// The server's request while tools/call waited goes before the
		// response in its reply, as on a POST's stream.
		`client→server "tools/call" reply={"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{}}|{"jsonrpc":"2.0","id":"a","result":{"content":[]}} failure="" died="" version="2025-06-18" completed=true`,
		`server→client "sampling/createMessage" reply={"jsonrpc":"2.0","id":"srv-1","result":{"model":"m"}} failure="" died="" version="2025-06-18" completed=true`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
	}
	for _, o := range obs {
		if o.Dir == ClientToServer && bytes.HasPrefix(o.Raw, []byte(`{"jsonrpc":"2.0","id":2`)) && !strings.Contains(o.Note, "no newline") {
			t.Errorf("the last line, without newline, has note %q", o.Note)
		}
		if o.Dir == ClientToServer && string(o.Raw) == "not json" && o.Kind != KindOther {
			t.Errorf("garbage observed as %v", o.Kind)
		}
		if o.Dir == ClientToServer && strings.Contains(string(o.Raw), "initialized") && o.Raw[len(o.Raw)-1] == '\r' {
			t.Errorf("a CRLF line keeps its CR: %q", o.Raw)
		}
	}
	st := res.Stats
	if st.Messages[ClientToServer] != 7 || st.Messages[ServerToClient] != 5 || st.DroppedMessages+st.DroppedPairs != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestStdioPrettyReply: a reply pretty-printed over several lines is
// relayed byte for byte and observed as one message that answers its
// request, as check's transport reads it; not as fragments that leave
// the request unanswered.
func TestStdioPrettyReply(t *testing.T) {
	s := startStdio(t, "pretty", Limits{}, nil)
	s.in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	want := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {}\n}\n"
	waitContains(t, s.out, want)
	s.in.Close()
	s.wait(t, 10*time.Second)
	if got := s.out.String(); got != want {
		t.Errorf("relayed %q, want %q", got, want)
	}
	_, pairs := s.rec.snapshot()
	pairs = withoutEOF(pairs)
	if len(pairs) != 1 || pairs[0].Exchange.Response == nil || pairs[0].Exchange.Failure != "" {
		t.Fatalf("pairs:\n%s", describe(nil, pairs))
	}
	if diff := cmp.Diff([][]byte{[]byte(strings.TrimSuffix(want, "\n"))}, pairs[0].Exchange.Response.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// TestStdioNullIDReplyAnswersTheLineWithoutID: a notification, then a
// line that is no JSON, answered -32700 with a null id: the error pairs
// with the line, and the notification with no reply, as each should. The
// twin is in TestStdioRelaysBothWaysUnchanged: a notification with
// nothing else waiting, answered with a null id, has that for its reply.
func TestStdioNullIDReplyAnswersTheLineWithoutID(t *testing.T) {
	s := startStdio(t, "parse-errors", Limits{Quiet: 300 * time.Millisecond}, nil)
	s.in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + "not json\n"))
	waitContains(t, s.out, "-32700")
	s.in.Close()
	s.wait(t, 10*time.Second)
	_, pairs := s.rec.snapshot()
	got := map[string]string{}
	for _, p := range withoutEOF(pairs) {
		reply := "none"
		if r := p.Exchange.Response; r != nil {
			reply = string(r.Messages[0])
		}
		got[string(p.Exchange.Request.Body)] = reply
	}
	want := map[string]string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`: "none",
		"not json": `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pairs (-want +got):\n%s\n%s", diff, describe(nil, pairs))
	}
}

func TestStdioExitStatusAndDeath(t *testing.T) {
	s := startStdio(t, "exit7", Limits{}, nil)
	s.in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}` + "\n"))
	res := s.wait(t, 10*time.Second)
	if res.ExitCode != 7 || res.Exit != "exit status 7" {
		t.Errorf("exit %d %q, want 7", res.ExitCode, res.Exit)
	}
	if !strings.Contains(s.errOut.String(), "fatal: bye") {
		t.Errorf("stderr %q", s.errOut.String())
	}
	_, pairs := s.rec.snapshot()
	if len(pairs) != 1 || !strings.Contains(pairs[0].Exchange.Failure, "exit status 7") || pairs[0].Exchange.Response != nil {
		t.Errorf("pairs:\n%s", describe(nil, pairs))
	}
	// The server ended while the client was there, with this request the
	// only one open: it died on it (PRO1005), as check would report.
	if len(pairs) == 1 && !strings.Contains(pairs[0].Exchange.Died, "exit status 7") {
		t.Errorf("died %q, want the server's end, exit status 7", pairs[0].Exchange.Died)
	}
	if res.Stats.Unanswered != 1 {
		t.Errorf("unanswered %d, want 1", res.Stats.Unanswered)
	}
}

func TestStdioForwardsSignals(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGTERM, 3}, {syscall.SIGINT, 4}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			s := startStdio(t, "signals", Limits{}, nil)
			waitContains(t, s.out, "ready")
			s.sigs <- tc.sig
			if res := s.wait(t, 10*time.Second); res.ExitCode != tc.want {
				t.Errorf("exit %d (%s), want %d", res.ExitCode, res.Exit, tc.want)
			}
		})
	}
}

// TestStdioStopsAServerThatStays: the client closes, the server ignores
// both the end of its stdin and SIGTERM; the relay still ends, by
// SIGKILL, and says so.
func TestStdioStopsAServerThatStays(t *testing.T) {
	s := startStdio(t, "stubborn", Limits{Grace: 200 * time.Millisecond}, nil)
	// A fixed sleep lost the race on a loaded machine: the fake had not
	// yet ignored SIGTERM when it came.
	waitContains(t, s.out, "ready")
	s.in.Close()
	res := s.wait(t, 10*time.Second)
	if res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("exit %d (%s), want SIGKILL's", res.ExitCode, res.Exit)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "did not exit within 200ms after its stdin closed; sent SIGTERM") {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestStdioFlood: a server that writes without end is relayed as fast
// as the client reads, whatever the Observer does; nothing kept grows.
func TestStdioFlood(t *testing.T) {
	for _, fake := range []string{"flood", "endless-line"} {
		t.Run(fake, func(t *testing.T) {
			rec := &recorder{block: make(chan struct{})}
			pr, pw := io.Pipe()
			in, closeIn := io.Pipe() // the client stays connected while it reads
			st := &Stdio{Argv: fakeArgv(t), Env: append(os.Environ(), fakeEnv+"="+fake), Stdin: in,
				Stdout: pw, Stderr: io.Discard, Limits: Limits{MaxBytes: 4096, Grace: 100 * time.Millisecond}, Observer: rec}
			done := make(chan Result, 1)
			go func() {
				res, err := st.Run(context.Background())
				if err != nil {
					t.Error(err)
				}
				pw.Close()
				done <- res
			}()
			n, _ := io.CopyN(io.Discard, pr, 16<<20)
			if n != 16<<20 {
				t.Fatalf("relayed %d bytes", n)
			}
			close(rec.block)
			go io.Copy(io.Discard, pr)
			closeIn.Close()
			var res Result
			select {
			case res = <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the relay did not end")
			}
			obs, _ := rec.snapshot()
			for _, o := range obs {
				if len(o.Raw) > 4096 {
					t.Fatalf("observation #%d keeps %d bytes", o.Seq, len(o.Raw))
				}
			}
			if fake == "flood" && res.Stats.DroppedMessages == 0 {
				t.Errorf("an Observer that never reads dropped nothing: %+v", res.Stats)
			}
		})
	}
}

func TestStdioOversizedLine(t *testing.T) {
	s := startStdio(t, "echo", Limits{MaxBytes: 100}, nil)
	big := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"pad":"` + strings.Repeat("p", 300) + `"}}`
	s.in.Write([]byte(big + "\n"))
	waitContains(t, s.out, `"id":5,"result"`)
	s.in.Close()
	s.wait(t, 10*time.Second)
	serverIn, _ := os.ReadFile(s.inLog)
	if string(serverIn) != big+"\n" {
		t.Errorf("the server read %d bytes, want %d", len(serverIn), len(big)+1)
	}
	obs, pairs := s.rec.snapshot()
	calls := pairsOf(pairs, ClientToServer, "tools/call")
	if len(calls) != 1 || !calls[0].Oversized || calls[0].ReplySeq == 0 {
		t.Fatalf("pairs:\n%s", describe(obs, pairs))
	}
	if o := obs[0]; !o.Oversized || len(o.Raw) != 100 || o.Size != int64(len(big)) {
		t.Errorf("observation: oversized %v, kept %d, size %d", o.Oversized, len(o.Raw), o.Size)
	}
}

func TestStdioStartFailure(t *testing.T) {
	_, err := (&Stdio{Argv: []string{filepath.Join(t.TempDir(), "no-such-server")}, Observer: &recorder{}}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "starting server") {
		t.Errorf("err = %v", err)
	}
}

func TestStdioVersionReachesExchanges(t *testing.T) {
	s := startStdio(t, "echo", Limits{}, nil)
	s.in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"))
	waitContains(t, s.out, `"id":2`)
	s.in.Close()
	s.wait(t, 10*time.Second)
	_, pairs := s.rec.snapshot()
	l := pairsOf(pairs, ClientToServer, "tools/list")
	if len(l) != 1 || l[0].Exchange.Version != envelope.V20250618 || l[0].Exchange.Transport != envelope.Stdio {
		t.Errorf("tools/list pair: %s", describe(nil, l))
	}
}

// TestStdioOfferedTokens: each exchange the relay pairs carries the
// progress tokens of the client's requests active on the pipe while it
// waited (so PRO1003 fails progress for a token none offered, or whose
// request was answered before, and a recording says so to lint); after
// a message the relay could not read whole, the tokens are no longer
// known and exchanges say nothing of them. A token offered twice by
// requests active is listed twice (PRO1003 then cannot tell whose its
// progress is); one whose request was answered is not listed.
func TestStdioOfferedTokens(t *testing.T) {
	s := startStdio(t, "echo", Limits{MaxBytes: 200}, nil)
	// One at a time: an exchange knows the tokens offered until its
	// reply came, which may be more than those before it.
	for i, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"t2"}}}`,
		`[{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"progressToken":3}}}]`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"progressToken":"t2"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"pad":"` + strings.Repeat("p", 300) + `"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"ping"}`,
	} {
		s.in.Write([]byte(line + "\n"))
		if line[0] == '{' { // the fake answers no batch
			waitContains(t, s.out, fmt.Sprintf(`"id":%d`, i+1))
		}
	}
	s.in.Close()
	s.wait(t, 10*time.Second)
	_, pairs := s.rec.snapshot()
	got := map[string][]string{}
	for _, p := range withoutEOF(pairs) {
		if p.Asker == ClientToServer && p.Exchange != nil {
			got[string(p.Exchange.Request.Body[:min(len(p.Exchange.Request.Body), 30)])] = p.Exchange.Offered
		}
	}
	want := map[string][]string{
		`{"jsonrpc":"2.0","id":1,"metho`: {},
		`{"jsonrpc":"2.0","id":2,"metho`: {`"t2"`},
		`[{"jsonrpc":"2.0","id":3,"meth`: nil,           // unanswered
		`{"jsonrpc":"2.0","id":4,"metho`: {`3`, `"t2"`}, // #2 was answered; the batch is not
		`{"jsonrpc":"2.0","id":5,"metho`: nil,           // too large to read whole
		`{"jsonrpc":"2.0","id":6,"metho`: nil,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("offered tokens by exchange (-want +got):\n%s", diff)
	}
	if got[`{"jsonrpc":"2.0","id":1,"metho`] == nil || got[`{"jsonrpc":"2.0","id":6,"metho`] != nil {
		t.Errorf("known-but-none and unknown must differ: %#v, %#v", got[`{"jsonrpc":"2.0","id":1,"metho`], got[`{"jsonrpc":"2.0","id":6,"metho`])
	}
}

// TestStdioJunkLineJoinsReply: a line that is no JSON, written while a
// request waits, joins that request's reply, as check's transport has it
// (RPC1001 then fails it: T-STDIO-2). It was only observed, and the
// reply judged clean.
func TestStdioJunkLineJoinsReply(t *testing.T) {
	s := startStdio(t, "junk", Limits{}, nil)
	s.in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	waitContains(t, s.out, `"result"`)
	s.in.Close()
	s.wait(t, 10*time.Second)
	_, pairs := s.rec.snapshot()
	pairs = withoutEOF(pairs)
	if len(pairs) != 1 || pairs[0].Exchange.Response == nil {
		t.Fatalf("pairs:\n%s", describe(nil, pairs))
	}
	want := [][]byte{[]byte("this is not json"), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}
	if diff := cmp.Diff(want, pairs[0].Exchange.Response.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// slowWriter takes nothing until open is closed: a client that reads
// its stdout late.
type slowWriter struct {
	open <-chan struct{}
	buf  lockedBuffer
}

func (w *slowWriter) Write(b []byte) (int, error) {
	<-w.open
	return w.buf.Write(b)
}

// TestStdioSlowClientGetsLastWords: a server that writes its last
// messages and exits while the client reads slowly: every byte reaches
// the client, and the request has its reply. The relay gave up reading
// the pipe half a second after the exit, dropped what was left and
// called the request unanswered.
func TestStdioSlowClientGetsLastWords(t *testing.T) {
	open := make(chan struct{})
	out := &slowWriter{open: open}
	rec := &recorder{}
	pr, pw := io.Pipe()
	st := &Stdio{Argv: fakeArgv(t), Env: append(os.Environ(), fakeEnv+"=burst-exit"), Stdin: pr, Stdout: out, Stderr: io.Discard, Observer: rec}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = st.Run(context.Background())
	}()
	pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	time.Sleep(3 * settle) // the server has exited by now, its words unread
	close(open)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the relay did not end")
	}
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := out.buf.String()
	if n := strings.Count(got, "\n"); n != 6 || !strings.HasSuffix(got, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n") {
		t.Errorf("the client got %d bytes in %d lines, want 6 lines ending in the result", len(got), n)
	}
	_, pairs := rec.snapshot()
	if len(pairs) != 1 || pairs[0].Exchange.Failure != "" || pairs[0].Exchange.Response == nil {
		t.Errorf("pairs:\n%s", describe(nil, pairs))
	}
}

// TestStdioOrphanDoesNotHoldTheRelay: a server that exits and leaves a
// child writing to the pipes it holds: the relay stops reading them a
// short while after the exit, and says so; the child does not keep it
// for its lifetime. The twin is TestStdioSlowClientGetsLastWords, where
// a write to a slow client keeps it.
func TestStdioOrphanDoesNotHoldTheRelay(t *testing.T) {
	s := startStdio(t, "orphan", Limits{}, nil)
	start := time.Now()
	res := s.wait(t, 15*time.Second)
	// (The child writes for 10 s; the bound leaves room for a loaded
	// machine running the race detector, where 2 s was met late.)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the relay ended %v after the server exited", d)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "stayed open after it exited") }) {
		t.Errorf("notes %q lack the pipes held open", res.Notes)
	}
}

// TestStdioClientThatNeverReadsDoesNotHoldTheRelay: after the server
// exits, a write of its stderr to a reader that never reads (wrap's own
// stderr, nobody at its end) keeps the relay no longer than its bound;
// Run returns, says so, and the summary can be written. It waited on
// the write for ever. The twin, a slow client that does read, gets
// every byte: TestStdioSlowClientGetsLastWords.
func TestStdioClientThatNeverReadsDoesNotHoldTheRelay(t *testing.T) {
	open := make(chan struct{})
	t.Cleanup(func() { close(open) }) // lets the abandoned write go
	pr, pw := io.Pipe()
	defer pw.Close()
	st := &Stdio{Argv: fakeArgv(t), Env: append(os.Environ(), fakeEnv+"=exit7"), Stdin: pr, Stdout: io.Discard,
		Stderr: &slowWriter{open: open}, Observer: &recorder{}, maxSettle: time.Second}
	done := make(chan Result, 1)
	go func() {
		res, err := st.Run(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	var res Result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the relay still waits on a write nobody reads, 10s on")
	}
	if res.ExitCode != 7 {
		t.Errorf("exit %d (%s), want 7", res.ExitCode, res.Exit)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "still under way") }) {
		t.Errorf("notes %q lack the write given up", res.Notes)
	}
}

// brokenPipe is a client's stdout whose reader has gone: every write
// fails, as a write to a closed pipe does once SIGPIPE is caught.
type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// TestStdioClientStopsReading: the client's stdout breaks (its reader
// went away) while the server writes on: the relay reads the server's
// stdout to its end, observing every line, so the server never blocks
// on a full pipe and ends on its own; the result says the client
// stopped reading. The relay stopped reading at the first failed write,
// and the server hung on its pipe until it was killed.
func TestStdioClientStopsReading(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close() // the client stays connected: only its reading end broke
	st := &Stdio{Argv: fakeArgv(t), Env: append(os.Environ(), fakeEnv+"=spill"), Stdin: pr, Stdout: brokenPipe{},
		Stderr: io.Discard, Observer: &recorder{}}
	done := make(chan Result, 1)
	go func() {
		res, err := st.Run(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var res Result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		pw.Close() // the server then gets its grace, SIGTERM and SIGKILL
		<-done
		t.Fatal("the server blocked on its stdout once the client stopped reading")
	}
	if res.ExitCode != 0 {
		t.Errorf("exit %d (%s), want the server's own 0", res.ExitCode, res.Exit)
	}
	if got := res.Stats.Messages[ServerToClient]; got != 2000 {
		t.Errorf("observed %d of the server's 2000 lines", got)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "the client stopped reading (broken pipe)") }) {
		t.Errorf("notes %q lack the client that stopped reading", res.Notes)
	}
}

// TestStdioLinesBeforeARequestJoinIt: a line that is no JSON-RPC message,
// written while no request waits (a startup banner, a log line after a
// reply), joins the next request's reply, as check's transport takes
// the lines written before a request into its exchange; RPC1001 then
// fails it as check does (T-STDIO-2). They were only observed, and the
// replies judged clean. The twin writes the same lines on stderr, where
// they belong: the replies alone. The line after the last reply, which
// no request follows, is the end of input's (the client closes its end),
// judged there as check judges what follows its closing stdin; it was
// judged nowhere.
func TestStdioLinesBeforeARequestJoinIt(t *testing.T) {
	tests := []struct {
		fake string
		want [][]string // each request's reply, in order, then the end of input's
	}{
		{"banner", [][]string{
			{"Server listening on stdio", `{"jsonrpc":"2.0","id":1,"result":{}}`},
			{"log: answered 1", `{"jsonrpc":"2.0","id":2,"result":{}}`},
			{"log: answered 2"},
		}},
		{"banner-stderr", [][]string{
			{`{"jsonrpc":"2.0","id":1,"result":{}}`},
			{`{"jsonrpc":"2.0","id":2,"result":{}}`},
			nil,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fake, func(t *testing.T) {
			s := startStdio(t, tt.fake, Limits{}, nil)
			if tt.fake == "banner" {
				// The banner is written and read before the request: it
				// waits for one.
				waitContains(t, s.out, "Server listening on stdio")
			} else {
				waitContains(t, s.errOut, "Server listening on stdio")
			}
			for i := 1; i <= 2; i++ {
				fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
				s.rec.waitFor(t, "the reply", func(_ []Observation, pairs []Pair) bool { return len(pairs) == i })
				if tt.fake == "banner" {
					waitContains(t, s.out, fmt.Sprintf("log: answered %d", i))
				}
			}
			s.in.Close()
			s.wait(t, 10*time.Second)
			_, pairs := s.rec.snapshot()
			var got [][]string
			for _, p := range pairs {
				var msgs []string
				if p.Exchange.Response != nil {
					for _, m := range p.Exchange.Response.Messages {
						msgs = append(msgs, string(m))
					}
				}
				got = append(got, msgs)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("replies (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStdioSecondSignalStops: a server that ignores SIGINT keeps running
// after the first Ctrl-C, which is only passed on; the second has the
// relay stop it as MCP's shutdown does (stdin closed, then SIGTERM,
// then SIGKILL), though the client is still connected. The second was
// passed on too, and ignored: the relay ran on for ever. The twin, a
// server that heeds the first, is TestStdioForwardsSignals.
func TestStdioSecondSignalStops(t *testing.T) {
	s := startStdio(t, "deaf", Limits{Grace: 200 * time.Millisecond}, nil)
	waitContains(t, s.out, "ready")
	s.sigs <- syscall.SIGINT
	select {
	case <-s.done:
		t.Fatal("the first signal, ignored by the server, ended the relay")
	case <-time.After(300 * time.Millisecond):
	}
	s.sigs <- syscall.SIGINT
	res := s.wait(t, 10*time.Second)
	// It ends at the end of its stdin; a machine under load may see the
	// grace pass first, and SIGTERM end it.
	if res.ExitCode != 0 && res.ExitCode != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d (%s), want 0, or SIGTERM's", res.ExitCode, res.Exit)
	}
}

// play writes the client's side of a session: a line to send, or
// "sleep:N" (ms), or "wait:TEXT" (until the client has read TEXT); then
// it closes the client's end and waits for the relay.
func (s *stdioSession) play(t *testing.T, steps ...string) {
	t.Helper()
	for _, step := range steps {
		switch what, arg, _ := strings.Cut(step, ":"); what {
		case "sleep":
			d, err := time.ParseDuration(arg + "ms")
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(d)
		case "wait":
			waitContains(t, s.out, arg)
		default:
			if _, err := io.WriteString(s.in, step+"\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.in.Close()
	s.wait(t, 10*time.Second)
}

// withoutEOF leaves out the exchange of the end of the server's input
// (the tests that close the client's end and judge other things).
func withoutEOF(pairs []Pair) []Pair {
	return slices.DeleteFunc(slices.Clone(pairs), func(p Pair) bool { return p.Exchange.EndsInput() })
}

// clientPairs renders the pairs of the client's requests (not its
// notifications', nor the end of the server's input: see eofPairs), in
// the order delivered.
func clientPairs(pairs []Pair) []string {
	var got []string
	for _, p := range pairs {
		if p.Asker != ClientToServer || strings.HasPrefix(p.Method, "notifications/") || p.Exchange.EndsInput() {
			continue
		}
		line := fmt.Sprintf("#%d %s", p.RequestSeq, p.Method)
		if p.ReplySeq != 0 {
			line += fmt.Sprintf(" replied #%d", p.ReplySeq)
		}
		if p.Tail {
			line += " tail"
		}
		if p.Oversized {
			line += " oversized"
		}
		if r := p.Exchange.Response; r != nil {
			line += fmt.Sprintf(" messages=%d", len(r.Messages))
			if r.Unsent != nil {
				line += fmt.Sprintf(" unsent=%v", r.Unsent)
			}
			if r.Again != nil {
				line += fmt.Sprintf(" again=%v", r.Again)
			}
			if r.Copies != nil {
				line += fmt.Sprintf(" copies=%v", r.Copies)
			}
			if r.Answered {
				line += " answered"
			}
		}
		if f := p.Exchange.Failure; f != "" {
			line += " failure=" + f
		}
		if n := p.Exchange.Note; n != "" {
			line += " note=" + n
		}
		got = append(got, line)
	}
	return got
}

// testTimeout is Limits.Timeout in the tests of silence: short, with
// room for a loaded machine between it and the sleeps around it.
const testTimeout = 300 * time.Millisecond

const (
	callLine     = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{}}}`
	pingLine     = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	progressCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{},"_meta":{"progressToken":"t1"}}}`
	cancelLine   = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"gave up"}}`
	sampleAnswer = `{"jsonrpc":"2.0","id":"s1","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`
)

// A request the server leaves unanswered past Limits.Timeout, while it
// answers another, is judged silent: its pair has no failure, so the
// judge reads the silence (RPC1006), as check reads it once a liveness
// probe is answered. It was closed only at the end, "no reply before the
// server ended", and never judged. Not silent: a request answered in
// time, one the client cancelled, one held up while the server waits
// on the client, one the server reports progress on; nor one from a
// server that shows no sign of life.
func TestStdioSilence(t *testing.T) {
	const silentNote = "no response within 300ms; the server answered a later request (#2), so it is alive and left this request unanswered"
	ended := "failure=no reply before the server ended (exit status 0)"
	tests := []struct {
		name, script string
		steps        []string
		want         []string
	}{
		{"a later request answered", "tools/call=", []string{callLine, "sleep:20", pingLine, "sleep:500"},
			[]string{"#2 ping replied #3 messages=1", "#1 tools/call note=" + silentNote}},
		{"a request answered past the deadline", "tools/call=", []string{callLine, "sleep:400", pingLine, "sleep:50"},
			[]string{"#2 ping replied #3 messages=1", "#1 tools/call note=no response within 300ms; the server answered #2 after that, so it is alive and left this request unanswered"}},
		{"the reply comes later", "tools/call=sleep:600 ok", []string{callLine, "sleep:20", pingLine, "sleep:800"},
			[]string{"#2 ping replied #3 messages=1", "#1 tools/call note=" + silentNote}},
		{"answered in time", "tools/call=afterping sleep:50 ok", []string{callLine, "sleep:20", pingLine, "sleep:500"},
			[]string{"#2 ping replied #3 messages=1", "#1 tools/call replied #4 messages=1"}},
		{"no sign of life", "tools/call=", []string{callLine, "sleep:500"},
			[]string{"#1 tools/call " + ended}},
		{"cancelled", "tools/call=", []string{callLine, cancelLine, "sleep:20", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, "sleep:500"},
			[]string{"#3 ping replied #4 messages=1", "#1 tools/call " + ended}},
		{"the server waits on the client", "tools/call=sample ok",
			[]string{callLine, "wait:sampling/createMessage", pingLine, "sleep:500", sampleAnswer, "sleep:100"},
			[]string{"#3 ping replied #4 messages=1", "#1 tools/call replied #6 messages=2"}},
		{"progress", "tools/call=afterping sleep:100 progress sleep:150 progress sleep:150 ok", []string{progressCall, "sleep:20", pingLine, "sleep:700"},
			[]string{"#2 ping replied #3 messages=1", "#1 tools/call replied #6 messages=3"}},
		// (gjson reads the absent token as null: that progress once
		// started the clock again, so a hang hid behind it.)
		{"progress with a null token, for a request that offered none", "tools/call=afterping sleep:100 nullprogress sleep:100 nullprogress sleep:250 nullprogress sleep:250 nullprogress",
			[]string{callLine, "sleep:20", pingLine, "sleep:800"},
			[]string{"#2 ping replied #3 messages=1", "#1 tools/call messages=2 note=" + silentNote}},
		{"progress, then silence", "tools/call=afterping sleep:100 progress", []string{progressCall, "sleep:20", pingLine, "sleep:700"},
			[]string{"#2 ping replied #3 messages=1", "#1 tools/call messages=1 note=no response within 300ms of its last progress notification; the server answered a later request (#2), so it is alive and left this request unanswered"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startScript(t, tc.script, Limits{Timeout: testTimeout, Quiet: 50 * time.Millisecond})
			s.play(t, tc.steps...)
			obs, pairs := s.rec.snapshot()
			if diff := cmp.Diff(tc.want, clientPairs(pairs)); diff != "" {
				t.Errorf("pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
		})
	}
}

// The reply that comes after its request was judged silent is relayed
// and named, and makes no second pair; the silence is judged no sooner
// than Limits.Timeout after the request.
func TestStdioLateReplyAfterSilence(t *testing.T) {
	s := startScript(t, "tools/call=sleep:600 ok", Limits{Timeout: testTimeout})
	s.play(t, callLine, "sleep:20", pingLine, "sleep:900")
	if !strings.Contains(s.out.String(), `"id":1,"result"`) {
		t.Errorf("the late reply did not reach the client:\n%s", s.out.String())
	}
	obs, pairs := s.rec.snapshot()
	var late *Observation
	for i := range obs {
		if obs[i].Dir == ServerToClient && obs[i].ID == "1" {
			late = &obs[i]
		}
	}
	if late == nil || late.Completes || late.Note != "the reply to #1 tools/call, past --timeout: its silence was judged then" {
		t.Errorf("the late reply: %+v\n%s", late, describe(obs, pairs))
	}
	for _, p := range pairs {
		if p.RequestSeq == 1 {
			if d := p.Done.Sub(p.Sent); d < testTimeout {
				t.Errorf("judged silent after %v, before the timeout", d)
			}
		}
	}
}

// While the server waits on the client, the clock stands; it starts
// again from the client's answer, and the silence after it is judged a
// full Limits.Timeout later.
func TestStdioSilenceAfterTheClientAnswers(t *testing.T) {
	s := startScript(t, "tools/call=sample", Limits{Timeout: testTimeout})
	s.play(t, callLine, "wait:sampling/createMessage", pingLine, "sleep:400", sampleAnswer, "sleep:700")
	obs, pairs := s.rec.snapshot()
	want := []string{"#3 ping replied #4 messages=1", "#1 tools/call messages=1 note=no response within 300ms; the server answered a later request (#3), so it is alive and left this request unanswered"}
	if diff := cmp.Diff(want, clientPairs(pairs)); diff != "" {
		t.Fatalf("pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
	}
	// The clock ran from the call to the server's request, stood until
	// the answer, and runs out the rest of Limits.Timeout after it.
	var sent, asked, answered time.Time
	for _, o := range obs {
		switch {
		case o.Seq == 1:
			sent = o.Time
		case o.Dir == ServerToClient && o.ID == `"s1"`:
			asked = o.Time
		case o.Dir == ClientToServer && o.ID == `"s1"`:
			answered = o.Time
		}
	}
	for _, p := range pairs {
		if rest := testTimeout - asked.Sub(sent); p.RequestSeq == 1 && p.Done.Sub(answered) < rest {
			t.Errorf("judged silent %v after the client's answer, before the rest of the timeout (%v)", p.Done.Sub(answered), rest)
		}
	}
}

// serverPairs renders the pairs of the server's requests, in the order
// delivered.
func serverPairs(pairs []Pair) []string {
	var got []string
	for _, p := range pairs {
		if p.Asker != ServerToClient {
			continue
		}
		line := fmt.Sprintf("#%d %s", p.RequestSeq, p.Method)
		if p.ReplySeq != 0 {
			line += fmt.Sprintf(" replied #%d", p.ReplySeq)
		}
		if f := p.Exchange.Failure; f != "" {
			line += " failure=" + f
		}
		got = append(got, line)
	}
	return got
}

// stood is how long the server waited on the client in obs: from each
// request of its own but a ping to the client's answer to it.
func stood(obs []Observation) time.Duration {
	asked := map[string]time.Time{}
	var d time.Duration
	for _, o := range obs {
		switch {
		case o.Dir == ServerToClient && o.Kind == KindRequest && o.Method != "ping":
			asked[o.ID] = o.Time
		case o.Dir == ClientToServer && o.Kind == KindResponse && !asked[o.ID].IsZero():
			d += o.Time.Sub(asked[o.ID])
		}
	}
	return d
}

// The clock of a client's request stands only while the server waits on
// the client, and then runs on: it is judged Limits.Timeout after it
// went, plus the time the server waited. A ping of the server's stands
// nothing (the client answers it at once), and a request of the
// server's answered at once moves the clock by that moment; each reset
// it to a full Limits.Timeout from the client's answer, so a server that
// pinged the client more often than that was never judged silent.
func TestStdioClockStands(t *testing.T) {
	pong := func(n int) []string {
		return []string{fmt.Sprintf(`wait:"id":"p%d"`, n), fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","result":{}}`, n)}
	}
	keepAlive := append(append(append(pong(1), pingLine), pong(2)...), append(pong(3), pong(4)...)...)
	silent := func(seq int) string {
		return fmt.Sprintf("no response within 300ms; the server answered a later request (#%d), so it is alive and left this request unanswered", seq)
	}
	tests := []struct {
		name, script string
		steps        []string
		want         []string
	}{
		{"keep-alive pings from the server", "tools/call=srvping sleep:200 srvping sleep:200 srvping sleep:200 srvping",
			append(append([]string{callLine}, keepAlive...), "sleep:100"),
			[]string{"#4 ping replied #5 messages=1", "#1 tools/call messages=2 note=" + silent(4)}},
		{"a request of the server's answered at once", "tools/call=sleep:250 sample",
			[]string{callLine, "sleep:20", pingLine, "wait:sampling/createMessage", sampleAnswer, "sleep:400"},
			[]string{"#2 ping replied #3 messages=1", "#1 tools/call messages=1 note=" + silent(2)}},
		{"the server waits on the client", "tools/call=sleep:100 sample",
			[]string{callLine, "sleep:20", pingLine, "wait:sampling/createMessage", "sleep:400", sampleAnswer, "sleep:600"},
			[]string{"#2 ping replied #3 messages=1", "#1 tools/call messages=1 note=" + silent(2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startScript(t, tc.script, Limits{Timeout: testTimeout, Quiet: 50 * time.Millisecond})
			s.play(t, tc.steps...)
			obs, pairs := s.rec.snapshot()
			if diff := cmp.Diff(tc.want, clientPairs(pairs)); diff != "" {
				t.Fatalf("pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
			due := obs[0].Time.Add(testTimeout + stood(obs))
			for _, p := range pairs {
				// Judged at its deadline, on a timer: not before, and not
				// much after (a reset clock judged it a whole Limits.Timeout
				// after the client's answer, 250ms and more later).
				if late := p.Done.Sub(due); p.RequestSeq == 1 && (late < 0 || late > 150*time.Millisecond) {
					t.Errorf("judged silent %v after its deadline (went at %v, stood %v)", late, obs[0].Time.Format("15:04:05.000"), stood(obs))
				}
			}
		})
	}
}

// A request the server cancels is owed no answer: the server no longer
// waits on the client, and the clock runs again. It stood for the rest
// of the session, and a silent request was never judged. The request
// stays paired: an answer the client sent anyway closes it, and one it
// rightly never sent is not "the client never answered", nor any
// failure: nothing is left to say of it (it was a pair failed "the
// server cancelled it", counted unanswered), as in the HTTP relay.
func TestStdioServerCancelsItsRequest(t *testing.T) {
	silent := func(seq int) string {
		return fmt.Sprintf("#1 tools/call messages=2 note=no response within 300ms; the server answered a later request (#%d), so it is alive and left this request unanswered", seq)
	}
	tests := []struct {
		name, script string
		steps        []string
		want, server []string
	}{
		{"cancelled by the server", "tools/call=cancelsample", []string{callLine, "wait:notifications/cancelled", pingLine, "sleep:500"},
			[]string{"#4 ping replied #5 messages=1", silent(4)}, nil},
		{"answered anyway", "tools/call=cancelsample", []string{callLine, "wait:notifications/cancelled", sampleAnswer, pingLine, "sleep:500"},
			[]string{"#5 ping replied #6 messages=1", silent(5)},
			[]string{"#2 sampling/createMessage replied #4"}},
		{"not cancelled, not answered", "tools/call=sample", []string{callLine, "wait:sampling/createMessage", pingLine, "sleep:500"},
			[]string{"#3 ping replied #4 messages=1", "#1 tools/call messages=1 failure=no reply before the server ended (exit status 0)"},
			[]string{"#2 sampling/createMessage failure=the client never answered before the session ended"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startScript(t, tc.script, Limits{Timeout: testTimeout, Quiet: 50 * time.Millisecond})
			s.play(t, tc.steps...)
			obs, pairs := s.rec.snapshot()
			if diff := cmp.Diff(tc.want, clientPairs(pairs)); diff != "" {
				t.Errorf("client's pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
			if diff := cmp.Diff(tc.server, serverPairs(pairs)); diff != "" {
				t.Errorf("server's pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
		})
	}
}

// A later response to an answered request is judged alone, as check
// judges a second response to a request an earlier exchange took the
// response of (RPC1006), in a pair that ends nothing again: the pair
// holds that response only, names it again (other content) or a copy
// (the same bytes), and says the request was answered, so its reply is
// not judged twice. It was "answers no request waiting for a reply",
// or, with one other request waiting, taken for that one's reply, whose
// own reply then answered nothing; then it came with the first, which
// was judged again with each later one. The twin answers once.
func TestStdioSecondResponse(t *testing.T) {
	ping1 := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	call2 := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{}}}`
	tail := func(seq int, kind, nth string) string {
		return fmt.Sprintf("#1 ping replied #%d tail messages=1 %s=[1] answered note=%s response to #1 ping, answered by #2; its response was judged then", seq, kind, nth)
	}
	tests := []struct {
		name, script string
		steps        []string
		want         []string
	}{
		{"the same again", "ping=ok ok", []string{ping1, "sleep:100"},
			[]string{"#1 ping replied #2 messages=1", tail(3, "copies", "a second")}},
		{"other content", "ping=ok err", []string{ping1, "sleep:100"},
			[]string{"#1 ping replied #2 messages=1", tail(3, "again", "a second")}},
		{"three times", "ping=ok err ok", []string{ping1, "sleep:100"},
			[]string{"#1 ping replied #2 messages=1", tail(3, "again", "a second"), tail(4, "copies", "a third")}},
		{"once", "ping=ok", []string{ping1, "sleep:100"},
			[]string{"#1 ping replied #2 messages=1"}},
		{"while another request waits", "ping=ok sleep:200 ok;tools/call=sleep:400 ok", []string{ping1, "wait:result", call2, "sleep:600"},
			[]string{"#1 ping replied #2 messages=1", tail(4, "copies", "a second"), "#3 tools/call replied #5 messages=1"}},
		// A response to no request the client sent joins the reply of the
		// latest waiting, listed unsent (RPC1006 judges it there); it
		// passed, answering "no request waiting for a reply".
		{"to a request never sent", "ping=sleep:600 ok;tools/call=sleep:200 stray sleep:200 ok", []string{ping1, call2, "sleep:800"},
			[]string{"#2 tools/call replied #4 messages=2 unsent=[99]", "#1 ping replied #5 messages=1"}},
		// A reply-shaped line that is no JSON, whose id cannot be read,
		// joins the reply of the latest waiting as any line that is no
		// message does (RPC1001 judges it there); it was shown, "not
		// valid JSON", and judged nowhere (review rev41).
		{"no JSON, its id unreadable", "ping=sleep:600 ok;tools/call=sleep:200 badid sleep:200 ok", []string{ping1, call2, "sleep:800"},
			[]string{"#2 tools/call replied #4 messages=2", "#1 ping replied #5 messages=1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startScript(t, tc.script, Limits{Quiet: 50 * time.Millisecond})
			s.play(t, tc.steps...)
			obs, pairs := s.rec.snapshot()
			if diff := cmp.Diff(tc.want, clientPairs(pairs)); diff != "" {
				t.Errorf("pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
			for _, p := range pairs {
				if p.Tail && string(p.Exchange.Response.Messages[0]) == `{"jsonrpc":"2.0","id":1,"result":{}}` && p.Exchange.Response.Again != nil {
					t.Errorf("a copy of the reply is named again, not a copy: %+v", p.Exchange.Response)
				}
			}
		})
	}
}

// What the server writes over Limits.MaxBytes while a request waits is
// part of that request's reply, so the exchange cannot be judged: it is
// handed over oversized, not judged whole after the next valid line. Nothing past the bound is kept. The twin writes a
// big line within the bound.
func TestStdioReplyOverTheBound(t *testing.T) {
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	tests := []struct {
		name, script string
		want         []string
	}{
		{"one line over", "tools/list=junk:5000 ok", []string{"#1 tools/list replied #3 oversized messages=1"}},
		{"lines together over", "tools/list=junk:600 junk:600 ok", []string{"#1 tools/list replied #4 oversized messages=2"}},
		{"within the bound", "tools/list=junk:600 ok", []string{"#1 tools/list replied #3 messages=2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startScript(t, tc.script, Limits{MaxBytes: 1000, Quiet: 50 * time.Millisecond})
			s.play(t, list, "sleep:200")
			obs, pairs := s.rec.snapshot()
			if diff := cmp.Diff(tc.want, clientPairs(pairs)); diff != "" {
				t.Errorf("pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
			for _, p := range pairs {
				if p.Exchange.Response == nil {
					continue
				}
				n := 0
				for _, m := range p.Exchange.Response.Messages {
					n += len(m)
				}
				if n > 1000+64 {
					t.Errorf("kept %d bytes of a reply bounded at 1000", n)
				}
			}
		})
	}
}

// Only what surely is a request's counts toward its bound: its response,
// progress naming its token, anything while it is the only request
// waiting. A line given by guess to the latest of several (another's
// log, say) that does not fit is dropped from its reply: it put a reply
// well within the bound over it, an error in a correct server.
func TestStdioGuessedLinesOverTheBound(t *testing.T) {
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	tests := []struct {
		name, script string
		steps        []string
		want         []string
	}{
		{"another request's lines", "tools/call=sleep:100 junk:400 junk:400 ok;tools/list=sleep:300 big:450",
			[]string{callLine, list, "sleep:500"},
			[]string{"#1 tools/call replied #5 messages=1", "#2 tools/list replied #6 messages=2"}},
		{"another request's lines and a response to none", "tools/call=sleep:100 junk:450 junk:450 stray ok;tools/list=sleep:300 big:450",
			[]string{callLine, list, "sleep:500"},
			[]string{"#1 tools/call replied #6 messages=1", "#2 tools/list replied #7 messages=2"}},
		{"the only request waiting", "tools/list=junk:400 junk:400 big:450",
			[]string{list, "sleep:300"},
			[]string{"#1 tools/list replied #4 oversized messages=3"}},
		{"progress naming it", "tools/call=sleep:100 progress big:900;tools/list=sleep:300 ok",
			[]string{progressCall, list, "sleep:500"},
			[]string{"#1 tools/call replied #4 oversized messages=2", "#2 tools/list replied #5 messages=1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startScript(t, tc.script, Limits{MaxBytes: 1000, Quiet: 50 * time.Millisecond})
			s.play(t, tc.steps...)
			obs, pairs := s.rec.snapshot()
			if diff := cmp.Diff(tc.want, clientPairs(pairs)); diff != "" {
				t.Errorf("pairs (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
			if n := strings.Count(s.out.String(), strings.Repeat("x", 400)+"\n"); strings.Contains(tc.script, "junk") && n != 2 {
				t.Errorf("relayed %d of the 2 long lines", n)
			}
		})
	}
}

// TestOrdinal: the note on a later response counts it in words a
// person reads ("the 12th", not "the 12nd").
func TestOrdinal(t *testing.T) {
	var got []string
	for _, n := range []int{2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 112} {
		got = append(got, ordinal(n))
	}
	want := []string{"a second", "a third", "the 4th", "the 11th", "the 12th", "the 13th", "the 21st", "the 22nd", "the 23rd", "the 101st", "the 112th"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ordinals (-want +got):\n%s", d)
	}
}
