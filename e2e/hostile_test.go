//go:build unix

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Hostile servers: the checker must end within its bounds, write a whole
// and honest report, exit 1 (findings) or 3 (not driven) — never 0,
// never hang, never panic — and leave no server process behind.

// hostileWall bounds the wall time of one hostile run, measured from the
// outside. The runs use --timeout 1s and --deadline 30s: a run that ends
// within its own deadline and the shutdown after it kept its bounds
// (20 s was missed by 0.1 s in CI, a -race binary on a loaded machine).
// runChecker kills a run that passes hostileKill and fails it as hung.
const (
	hostileWall = 35 * time.Second
	hostileKill = 90 * time.Second
)

// fakeHTTP serves h on 127.0.0.1 for the test. Handlers that wait must
// also return when stop closes, which happens before the server closes.
func fakeHTTP(t *testing.T, h func(w http.ResponseWriter, r *http.Request, stop <-chan struct{})) string {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r, stop)
	}))
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		srv.Close()
		t.Fatalf("test server at %s, want 127.0.0.1", srv.URL)
	}
	t.Cleanup(func() {
		close(stop)
		srv.Close()
	})
	return srv.URL + "/mcp"
}

// answerHandshake answers negotiation messages as a 2025-11-25 server
// and reports whether it did; other messages are left to the caller.
func answerHandshake(w http.ResponseWriter, body []byte) bool {
	reply, ok := handshake(body)
	switch {
	case !ok:
		return false
	case reply == nil:
		w.WriteHeader(http.StatusAccepted)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	}
	return true
}

// wait blocks until the client goes away, the test ends, or a minute
// passes.
func wait(r *http.Request, stop <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-stop:
	case <-time.After(time.Minute):
	}
}

func readBody(r *http.Request) []byte {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	return b
}

// hostileRun runs the checker against target with small bounds and
// returns the run with its report.
func hostileRun(t *testing.T, env []string, target []string, extra ...string) checkerRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	args := append([]string{"check", "--format", "json", "-o", out, "--timeout", "1s", "--deadline", "30s"}, extra...)
	args = append(args, target...)
	r := runChecker(t, hostileKill, env, args...)
	if r.code != 1 && r.code != 3 {
		t.Fatalf("exit code %d, want 1 (findings) or 3 (not driven)\nstderr:\n%s", r.code, tail(r.stderr, 2000))
	}
	r.checkWall(t, hostileWall)
	r.report = readReport(t, out)
	t.Logf("stderr: %s\nreport: %s", tail(r.stderr, 1000), r.report.digest())
	return r
}

// errorsSay asserts that every verdict of the fixtures matching prefix is
// an error or a skip (never a fail, and a pass only where the server
// survived: nothing else could be judged),
// that there is at least one error, and that every error's reason
// contains one of reasons.
func errorsSay(t *testing.T, rep *report, prefix string, reasons ...string) {
	t.Helper()
	var errs int
	for _, x := range rep.Results {
		if !strings.HasPrefix(x.Fixture, prefix) || strings.HasPrefix(x.Fixture, "negotiate/") {
			continue
		}
		switch x.Status {
		case "error":
			errs++
			if !containsAny(x.Message, reasons) {
				t.Errorf("%s %s: error %q, want a reason containing one of %q", x.Fixture, x.Check, x.Message, reasons)
			}
		case "skip":
		case "pass":
			// PRO1005 judges failures too: the server survived.
			if x.Check != "PRO1005" {
				t.Errorf("%s %s: pass (%s), want error: the reply was cut off by a bound and cannot be judged", x.Fixture, x.Check, x.Message)
			}
		default:
			t.Errorf("%s %s: %s (%s), want error: the reply was cut off by a bound and cannot be judged", x.Fixture, x.Check, x.Status, x.Message)
		}
	}
	if errs == 0 {
		t.Errorf("no error verdict for fixtures %s*", prefix)
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestHostileHTTPSilent: a server that accepts the connection and never
// answers anything. Negotiation gets no reply at all, so there is no
// server to judge: exit 3, and the report (still written, and whole)
// judges nothing.
func TestHostileHTTPSilent(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	url := fakeHTTP(t, func(w http.ResponseWriter, r *http.Request, stop <-chan struct{}) {
		requests.Add(1)
		wait(r, stop)
	})
	r := hostileRun(t, nil, []string{url}, "--run", "rpc/*")
	r.checkExit(t, 3)
	if !strings.Contains(r.stderr, "no reply within 1s") {
		t.Errorf("stderr does not say why the target could not be driven:\n%s", r.stderr)
	}
	if r.report.Summary.Pass+r.report.Summary.Fail+r.report.Summary.Warn != 0 {
		t.Errorf("nothing answered, yet the report judged something: %+v", r.report.Summary)
	}
	// One probe (server/discover) is enough to know nobody answers.
	if n := requests.Load(); n > 3 {
		t.Errorf("%d requests sent to a server that answers nothing", n)
	}
}

// TestHostileHTTPStall: a server that negotiates, then never answers
// again. Every fixture is an error "no reply within 1s" — or, once the
// run's deadline has passed, says so — and the run ends by its deadline.
func TestHostileHTTPStall(t *testing.T) {
	t.Parallel()
	url := fakeHTTP(t, func(w http.ResponseWriter, r *http.Request, stop <-chan struct{}) {
		if answerHandshake(w, readBody(r)) {
			return
		}
		wait(r, stop)
	})
	// 17 or so rpc/* fixtures at 1s each, and a liveness probe as long,
	// take longer than the 5s deadline even eight at a time: the
	// deadline must cut the run short, with the fixtures it cut off in
	// flight or did not reach still in the report.
	out := filepath.Join(t.TempDir(), "r.json")
	r := runChecker(t, hostileKill, nil, "check", "--format", "json", "-o", out, "--timeout", "1s", "--deadline", "5s", "--run", "rpc/*", url)
	r.checkExit(t, 1)
	// The deadline bounds the run: 5s, and a moment to write the report.
	r.checkWall(t, 10*time.Second)
	rep := readReport(t, out)
	t.Logf("report: %s", rep.digest())
	rep.checkComplete(t, "rpc/*")
	if !rep.hasNote("protocol 2025-11-25") {
		t.Errorf("no note of the negotiated protocol: %q", rep.Summary.Notes)
	}
	errorsSay(t, rep, "rpc/", "no reply within 1s", "deadline", "cancelled")
	if !strings.Contains(fmt.Sprint(rep.Results), "no reply within 1s") {
		t.Errorf("no verdict says %q", "no reply within 1s")
	}
	// Which one depends on timing: each fixture has an id of its own, so
	// all of them may be in flight when the deadline comes.
	if res := fmt.Sprint(rep.Results); !strings.Contains(res, "deadline passed") && !strings.Contains(res, "cancelled: the run's --deadline of") {
		t.Errorf("no verdict says the run's deadline passed or cut an exchange off; the deadline did not cut the run short")
	}
}

// TestHostileHTTPFlood: after negotiating, every reply is 100 MB. The
// checker reads up to --max-bytes and no further, says so, and its
// memory stays far below the flood.
func TestHostileHTTPFlood(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	url := fakeHTTP(t, func(w http.ResponseWriter, r *http.Request, stop <-chan struct{}) {
		if answerHandshake(w, readBody(r)) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(floodBytes))
		for n := 0; n < floodBytes; n += len(chunk) {
			select {
			case <-stop:
				return
			default:
			}
			m, err := w.Write(chunk)
			sent.Add(int64(m))
			if err != nil {
				return
			}
		}
	})
	const maxBytes = 1 << 20
	// --parallel 1: what the server pushes into the sockets adds up over
	// the connections in flight, and the sum is what is measured here.
	r := hostileRun(t, nil, []string{url}, "--max-bytes", fmt.Sprint(maxBytes), "--run", "id/*", "--parallel", "1")
	r.checkExit(t, 1)
	r.report.checkComplete(t, "id/*")
	errorsSay(t, r.report, "id/", fmt.Sprintf("reply exceeds %d bytes", maxBytes))
	// 11 or so fixtures of 100 MB each were on offer.
	if s := sent.Load(); s >= floodBytes {
		t.Errorf("the server got %d MB out: the checker read a whole flood", s>>20)
	}
	if r.maxRSSKB > 200<<10 {
		t.Errorf("the checker's peak memory was %d MiB, want < 200 MiB against a 1 MiB bound", r.maxRSSKB>>10)
	}
}

// TestHostileHTTPEndlessSSE: after negotiating, every request gets an
// event stream of notifications that never carries the response. The
// checker stops at a bound (time or event count) and says which.
func TestHostileHTTPEndlessSSE(t *testing.T) {
	t.Parallel()
	url := fakeHTTP(t, func(w http.ResponseWriter, r *http.Request, stop <-chan struct{}) {
		if answerHandshake(w, readBody(r)) {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		// At most a minute, at most 30000 events.
		for i := 0; i < 30000; i++ {
			if _, err := fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"tick %d\"}}\n\n", i); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			case <-stop:
				return
			}
		}
	})
	// Each fixture costs the whole --timeout: five of them.
	r := hostileRun(t, nil, []string{url}, "--run", "id/[abfn]*")
	r.checkExit(t, 1)
	r.report.checkComplete(t, "id/[abfn]*")
	errorsSay(t, r.report, "id/", "no response within 1s", "events without a response", "no response in the first")
}

// stdioTarget is the command line that makes the checker start this test
// binary as the fake stdio server name. When the test ends, it checks
// that the checker started at least one server and left none running.
func stdioTarget(t *testing.T, name string) (env, target []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pids := pidFile(t)
	t.Cleanup(func() {
		if raw, _ := os.ReadFile(pids); len(strings.Fields(string(raw))) == 0 {
			t.Errorf("the fake server %s never started (no pid recorded)", name)
		}
	})
	return []string{fakeEnv + "=" + name, pidFileEnv + "=" + pids}, []string{"--", exe}
}

// TestHostileStdioExitOnFirst: a server that exits on the first message
// it reads, handshake or not. No protocol version can be negotiated: the
// target cannot be driven (exit 3), stderr says why, and every restarted
// server process is gone when the checker exits.
func TestHostileStdioExitOnFirst(t *testing.T) {
	t.Parallel()
	env, target := stdioTarget(t, "exit-on-first")
	r := hostileRun(t, env, target, "--run", "rpc/*")
	r.checkExit(t, 3)
	if !strings.Contains(r.stderr, "no protocol version could be negotiated") || !strings.Contains(r.stderr, "exit status 7") {
		t.Errorf("stderr does not say why the target could not be driven (want the negotiation failure and the server's exit status 7):\n%s", r.stderr)
	}
	if r.report.Summary.Pass+r.report.Summary.Fail+r.report.Summary.Warn != 0 {
		t.Errorf("nothing was driven, yet the report judged something: %+v", r.report.Summary)
	}
}

// TestHostileStdioDieAfterHandshake: a server that negotiates, then
// exits on the next message. Each fixture kills it: PRO1005 fails with
// the exit status and stderr tail, the server is restarted for the next
// fixture, and nothing is left running.
func TestHostileStdioDieAfterHandshake(t *testing.T) {
	t.Parallel()
	env, target := stdioTarget(t, "die-after-handshake")
	r := hostileRun(t, env, target, "--run", "id/*")
	r.checkExit(t, 1)
	r.report.checkComplete(t, "id/*")
	for _, fx := range r.report.fixtures() {
		if !strings.HasPrefix(fx, "id/") {
			continue
		}
		var died bool
		for _, x := range r.report.rows(fx) {
			switch {
			case x.Check == "PRO1005" && x.Status == "fail":
				died = true
				if !strings.Contains(x.Message, "exit status 7") || !strings.Contains(x.Message, "die-after-handshake") {
					t.Errorf("%s PRO1005: %q, want the exit status and the stderr tail", fx, x.Message)
				}
			case x.Status == "pass" || x.Status == "fail":
				t.Errorf("%s %s: %s (%s), but the server died on this message: there was no reply to judge", fx, x.Check, x.Status, x.Message)
			}
		}
		if !died {
			t.Errorf("%s: no PRO1005 failure, though the server dies on every message after the handshake", fx)
		}
	}
}

// TestHostileStdioSilent: a stdio server that reads everything and
// writes nothing. Negotiation gets no reply: exit 3.
func TestHostileStdioSilent(t *testing.T) {
	t.Parallel()
	env, target := stdioTarget(t, "silent")
	r := hostileRun(t, env, target, "--run", "rpc/*")
	r.checkExit(t, 3)
	if !strings.Contains(r.stderr, "no protocol version could be negotiated") {
		t.Errorf("stderr does not say why the target could not be driven:\n%s", r.stderr)
	}
}

// TestHostileStdioFlood: after negotiating, every reply is a 100 MB line.
// The line is cut at --max-bytes, the verdicts say so, memory stays low.
func TestHostileStdioFlood(t *testing.T) {
	t.Parallel()
	env, target := stdioTarget(t, "flood")
	const maxBytes = 1 << 20
	// After a cut-off reply the checker restarts the server, which first
	// drains the rest of the 100 MB: a second or more a fixture under the
	// race detector. Three fixtures.
	r := hostileRun(t, env, target, "--max-bytes", fmt.Sprint(maxBytes), "--run", "id/[abf]*")
	r.checkExit(t, 1)
	r.report.checkComplete(t, "id/[abf]*")
	errorsSay(t, r.report, "id/", fmt.Sprintf("reply exceeds %d bytes", maxBytes), "no response within 1s")
	if r.maxRSSKB > 200<<10 {
		t.Errorf("the checker's peak memory was %d MiB, want < 200 MiB against a 1 MiB bound", r.maxRSSKB>>10)
	}
}
