package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/wymcp/wymcp-check/envelope"
)

// stderrTail is how much of a server's stderr is kept: enough for the
// last stack trace, bounded against a server that logs without end.
const stderrTail = 64 << 10

// settle is how long a dying server gets for its last words: the exit
// status and the final stderr bytes trail the close of its stdout.
const settle = 500 * time.Millisecond

// ErrIgnoredStdinClose is wrapped by Close's error when the server did
// not exit within the grace after its stdin closed, as MCP asks, and had
// to be signalled.
var ErrIgnoredStdinClose = errors.New("server did not exit when its stdin closed")

// Stdio runs a server process and talks newline-delimited JSON over its
// stdin and stdout, as MCP's stdio transport does. Its stderr is kept (a
// bounded tail) and never judged as a sign of error.
//
// Stdout is read all the time, one line at a time, by a goroutine that
// hands lines over only while an exchange is open. Lines the server
// writes between exchanges (unsolicited, or late replies to an exchange
// that timed out) are therefore never lost and never dropped: they open
// the next exchange's Messages, ahead of its own reply. A runner that
// wants clean attribution after a timeout restarts the server. A late
// reply whose id names a request that timed out is the exception: it is
// left out of the exchange it arrives in, for the caller (TakeLate).
type Stdio struct {
	lim  Limits
	argv []string
	cmd  *exec.Cmd

	stdin  *os.File  // write end of the server's stdin
	stdout *os.File  // read end of its stdout
	open   *openLine // stdout as read: the line begun and not ended
	stderr *os.File  // read end of its stderr
	tail   tailBuffer

	// lines carries stdout lines, unbuffered: a line waits there (and
	// the server's next ones in the pipe) until an exchange takes it.
	// Closed at the end of stdout.
	lines   chan line
	ended   chan struct{} // closed at the end of stdout, when lines is
	exited  chan struct{} // closed once the process is reaped
	waitErr error         // how it exited; set before exited closes
	// leftovers: when the server was reaped, its process group still
	// had members (background children it left behind); set before
	// exited closes.
	leftovers  bool
	stderrDone chan struct{} // closed at the end of stderr
	stop       chan struct{} // closed when Close begins
	wg         sync.WaitGroup

	mu     sync.Mutex // one exchange at a time
	broken string     // why stdin cannot carry another request
	// wmu serialises writes to stdin: an exchange's request, and the
	// answers to the server's own requests (see answerServer), which
	// must never land inside a request written in parts.
	wmu sync.Mutex
	// answers are the checker's answers to the server's requests,
	// waiting to be written; a server flooding requests finds it full,
	// and the rest go unanswered.
	answers chan []byte
	// fresh: nothing written has been seen read yet; the first message
	// waits for the server to read it before its clock starts.
	fresh   bool
	started time.Time
	// ready is closed once the server has read its first message, or
	// could not (it exited, stopped reading, or Start passed): see Ready.
	ready     chan struct{}
	readyOnce sync.Once
	// late are the ids of requests whose exchange ended without their
	// response: when it comes after all, it is a late reply, kept among
	// the next exchange's lines but not taken for that exchange's end.
	late map[string]bool
	// lateNull counts the requests whose exchange ended without their
	// response and that a server may refuse with id null (any that is
	// not well formed, see wellFormedRequest: an id MCP forbids, none, a
	// body no JSON): one such late reply is not taken for a later
	// well-formed request's (review rev82, rev87).
	lateNull int
	// cameLate are the ids of late replies Receive has returned (each
	// taken off late): the caller that owns none of them gives the line
	// back with TakeIfLate.
	cameLate map[string]bool
	// readerMu guards readerLate and afterLate, which the reader of
	// stdout keeps apart from late: it must not wait on mu, which an
	// exchange holds while it waits for lines. readerLate are the ids
	// owed a late reply (late's, as the reader sees them); afterLate:
	// the last line the server wrote was such a reply, and a blank line
	// right after it is that reply's, for no exchange (see
	// blankAfterLate).
	readerMu   sync.Mutex
	readerLate map[string]bool
	afterLate  bool
	// lateLines are the late replies read since TakeLate last took them.
	lateLines [][]byte
	// lastTaken is the response the last exchange ended at: the same
	// line waiting before the next request is written is a second
	// response to the same request, whatever its id (null too).
	lastTaken string
	// ids are the ids of every request written (see Unsent), and the
	// responses exchanges took (see Second).
	ids written

	// inputEnded is when EndInput closed stdin (UnixNano), 0 before:
	// Close, from another goroutine maybe, reads it.
	inputEnded atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

type line struct {
	data []byte
	cut  bool // longer than Limits.MaxBytes, and cut there
}

// StartStdio starts argv[0] with the rest of argv as arguments, in dir
// ("" means the checker's), with env (nil means the checker's
// environment; otherwise exactly env). The limits apply to every
// exchange. ctx bounds the server's whole life: once ctx is done the
// server's process group is killed.
//
// It returns an error only when the server cannot be started (no such
// program, not executable). A server that starts and dies at once is a
// server: its death is reported by the first exchange.
func StartStdio(ctx context.Context, argv []string, env []string, dir string, lim Limits) (*Stdio, error) {
	if len(argv) == 0 {
		return nil, errors.New("no server command given")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return kill(cmd.Process) }
	pipes, err := Spawn(cmd)
	if err != nil {
		return nil, err
	}

	lim = lim.withDefaults()
	s := &Stdio{
		lim:        lim,
		argv:       argv,
		cmd:        cmd,
		stdin:      pipes.Stdin,
		stdout:     pipes.Stdout,
		open:       &openLine{r: pipes.Stdout},
		stderr:     pipes.Stderr,
		tail:       tailBuffer{max: stderrTail},
		lines:      make(chan line),
		ended:      make(chan struct{}),
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
		stop:       make(chan struct{}),
		fresh:      true,
		ready:      make(chan struct{}),
		started:    time.Now(),
		answers:    make(chan []byte, maxAnswers),
	}
	s.wg.Add(4)
	go s.wait()
	go s.readStdout()
	go s.readStderr()
	go s.answerServer()
	return s, nil
}

// maxAnswers bounds the answers to the server's requests waiting to be
// written.
const maxAnswers = 64

// answerServer writes the checker's answers to the server's requests (a
// ping above all: "the receiver must promptly respond, or else may be
// disconnected"), each bounded by the timeout: a server that stops
// reading its stdin holds none of them for longer.
func (s *Stdio) answerServer() {
	defer s.wg.Done()
	for {
		select {
		case a := <-s.answers:
			s.wmu.Lock()
			_ = s.stdin.SetWriteDeadline(time.Now().Add(s.lim.Timeout))
			_, _ = s.stdin.Write(a)
			s.wmu.Unlock()
		case <-s.stop:
			return
		}
	}
}

// answer queues the checker's answer to line if it is a request of the
// server's, as a client that declared no capabilities answers: an empty
// result to a ping, -32601 to anything else (sampling, elicitation,
// roots: never offered). The line itself is still judged.
func (s *Stdio) answer(data []byte) {
	a := clientAnswer(data)
	if a == nil {
		return
	}
	select {
	case s.answers <- append(a, '\n'):
	default:
	}
}

// clientAnswer is the checker's answer to a request of the server's, as a
// client that declared no capabilities answers it: an empty result to a
// ping (T-LIFE-5: promptly), -32601 to anything else (sampling,
// elicitation, roots: never offered). nil when data is no such request.
func clientAnswer(data []byte) []byte {
	m := gjson.ParseBytes(data)
	method, id := m.Get("method"), m.Get("id")
	if !m.IsObject() || method.Type != gjson.String || !id.Exists() || id.Type == gjson.Null || (id.Type != gjson.String && id.Type != gjson.Number) {
		return nil
	}
	if method.Str == "ping" {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id.Raw)
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id.Raw)
}

func (s *Stdio) wait() {
	defer s.wg.Done()
	s.waitErr = s.cmd.Wait()
	// Asked at once: a group empty now is never signalled later, when
	// its id might have come round again (see signalLeftovers).
	s.leftovers = groupLives(s.cmd.Process.Pid)
	close(s.exited)
	s.markReady()
}

// Ready is closed once the server has read its first message, or never
// will (it exited, the first write failed, Limits.Start passed): a server
// that reads has set itself up, and what it holds (a lock, a port) is
// taken. A caller about to start a second instance beside it waits.
func (s *Stdio) Ready() <-chan struct{} { return s.ready }

func (s *Stdio) markReady() { s.readyOnce.Do(func() { close(s.ready) }) }

func (s *Stdio) readStdout() {
	defer s.wg.Done()
	defer close(s.ended)
	defer close(s.lines)
	lr := newLineReader(s.open, int(s.lim.MaxBytes))
	// A value pretty-printed over several lines comes as one line that
	// holds them (see envelope.Rejoiner): RPC1001 fails it, and the
	// exchange is not taken for silence.
	j := envelope.NewRejoiner(int(s.lim.MaxBytes))
	send := func(ln line) bool {
		select {
		case s.lines <- ln:
			return true
		case <-s.stop:
			// Shutting down: drain and drop, so that a server blocked on
			// a full stdout can still see its stdin close and exit.
			for {
				if _, _, err := lr.next(); err != nil {
					return false
				}
			}
		}
	}
	sendAll := func(data [][]byte) bool {
		for _, d := range data {
			if s.blankAfterLate(d) {
				continue
			}
			s.answer(d)
			if !send(line{data: d}) {
				return false
			}
		}
		return true
	}
	for {
		data, cut, err := lr.next()
		if err != nil {
			sendAll(j.Flush())
			return
		}
		var ok bool
		if cut {
			ok = sendAll(j.Flush()) && send(line{data, cut})
		} else {
			ok = sendAll(j.Add(data))
		}
		if !ok {
			return
		}
	}
}

// blankAfterLate reports whether data is a blank line (JSON's blanks
// alone) right after a reply to a request owed one late (a marker, a
// request that timed out), and so dropped: a server that ends each
// message with a blank line wrote it with that reply, which is no
// exchange's, and where it landed (the exchange open, the next one)
// depended on when it came; the reports of two runs differed (review
// rev84). A blank line after any other line stays, for RPC1001 to judge
// where it came.
func (s *Stdio) blankAfterLate(data []byte) bool {
	s.readerMu.Lock()
	defer s.readerMu.Unlock()
	if len(bytes.Trim(data, " \t\r")) == 0 {
		after := s.afterLate
		s.afterLate = false
		return after
	}
	s.afterLate = false
	if envelope.IsResponse(data) {
		k := idKey(gjson.GetBytes(data, "id"))
		s.afterLate = s.readerLate[k]
		delete(s.readerLate, k)
	}
	return false
}

// lateForReader tells the reader of stdout that id is owed a late reply
// (see blankAfterLate).
func (s *Stdio) lateForReader(id string) {
	s.readerMu.Lock()
	defer s.readerMu.Unlock()
	s.readerLate = remember(s.readerLate, id)
}

func (s *Stdio) readStderr() {
	defer s.wg.Done()
	defer close(s.stderrDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.stderr.Read(buf)
		s.tail.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// Stderr returns the last 64 KiB the server wrote to stderr. It is safe
// to call at any time, from any goroutine.
func (s *Stdio) Stderr() []byte { return s.tail.Bytes() }

// Mute reports whether the server closed its stdout while it lives on
// (after a moment for an exit that trails the close): it can answer
// nothing any more, as surely as if it had exited (review rev41). A
// transport closed by Close is not.
func (s *Stdio) Mute() bool {
	select {
	case <-s.stop:
		return false
	case <-s.ended:
	default:
		return false
	}
	select {
	case <-s.exited:
		return false
	case <-time.After(settle):
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Started is when the process was started.
func (s *Stdio) Started() time.Time { return s.started }

// Exited reports whether the server process has exited and, if so, how:
// nil for exit status 0, else the error of waiting for it (an
// *exec.ExitError, whose String says "exit status 2" or "signal: killed").
func (s *Stdio) Exited() (bool, error) {
	select {
	case <-s.exited:
		return true, s.waitErr
	default:
		return false, nil
	}
}

// Close shuts the server down as MCP's stdio transport says: close its
// stdin, wait up to Limits.Grace for it to exit, then SIGTERM (its
// process group), wait again, then SIGKILL; what the server leaves
// running in its process group once it is gone (background children)
// gets SIGTERM, Grace, then SIGKILL too. It always reaps the process
// and ends every goroutine of s before returning; an exchange in
// progress ends with "transport closed". It returns nil when the server
// exited with status 0 after stdin closed (or had already exited so), an
// error wrapping ErrIgnoredStdinClose when it had to be signalled, and
// an error wrapping the exit status otherwise. Close is idempotent: later
// calls return the first call's result.
func (s *Stdio) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *Stdio) shutdown() error {
	close(s.stop)
	defer s.markReady()
	s.stdin.Close()
	err := s.stopProcess()
	// Whatever still holds the pipes (a grandchild that left the group)
	// must not hold Close: give stderr a moment for its last words, then
	// close our ends, which ends the readers.
	select {
	case <-s.stderrDone:
	case <-time.After(min(settle, s.lim.Grace)):
	}
	s.stdout.Close()
	s.stderr.Close()
	s.wg.Wait()
	return err
}

// stopProcess escalates until the process is reaped, then stops what it
// left running in its process group.
func (s *Stdio) stopProcess() error {
	defer s.stopLeftovers()
	select {
	case <-s.exited:
		if s.waitErr != nil {
			return fmt.Errorf("server had exited: %w", s.waitErr)
		}
		return nil
	default:
	}
	wait := s.lim.Grace
	if at := s.inputEnded.Load(); at != 0 {
		// EndInput has waited for it already: the grace is one.
		wait = max(0, wait-time.Since(time.Unix(0, at)))
	}
	if s.waitExit(wait) {
		if s.waitErr != nil {
			return fmt.Errorf("server exited after its stdin closed: %w", s.waitErr)
		}
		return nil
	}
	terminate(s.cmd.Process)
	if s.waitExit(s.lim.Grace) {
		return fmt.Errorf("%w within %v; stopped by %s: %w", ErrIgnoredStdinClose, s.lim.Grace, termName, exitError(s.waitErr))
	}
	kill(s.cmd.Process)
	<-s.exited // SIGKILL cannot be refused: the reaping is a matter of moments
	return fmt.Errorf("%w within %v, nor after %s; killed: %w", ErrIgnoredStdinClose, s.lim.Grace, termName, exitError(s.waitErr))
}

// stopLeftovers stops the background children a reaped server left in its
// process group (a wrapper script's "server &", a daemon it forked):
// SIGTERM, Limits.Grace for them to go, then SIGKILL. Signals sent to
// the group while the server lived reached them too, but a server that
// exits first, on its own, would otherwise leave them running, one set
// per server the run started.
func (s *Stdio) stopLeftovers() {
	pgid := s.cmd.Process.Pid
	if !s.leftovers || !signalLeftovers(pgid, false) {
		return
	}
	if s.waitGroupGone(pgid, s.lim.Grace) {
		return
	}
	signalLeftovers(pgid, true)
}

// waitGroupGone waits up to d (less once Limits.Hurry closes) for the
// process group pgid to have no members left, and reports whether it
// came to that.
func (s *Stdio) waitGroupGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	hurry := s.lim.Hurry
	for groupLives(pgid) {
		if !time.Now().Before(deadline) {
			return false
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-hurry:
			hurry, deadline = nil, minTime(deadline, time.Now().Add(HurryGrace))
		}
	}
	return true
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func (s *Stdio) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	hurry := s.lim.Hurry
	var short <-chan time.Time
	for {
		select {
		case <-s.exited:
			return true
		case <-t.C:
			return false
		case <-short:
			return false
		case <-hurry:
			hurry, short = nil, time.After(HurryGrace)
		}
	}
}

// HurryGrace is what a shutdown step waits once Limits.Hurry is closed.
const HurryGrace = 200 * time.Millisecond

// exitError turns a clean exit into an error too, for messages that
// must say how the process ended even when it ended well.
func exitError(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}
