//go:build unix

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/fixtures"
)

// A checkerRun is one finished run of the checker binary.
type checkerRun struct {
	code     int           // exit code
	wall     time.Duration // from start to exit
	stdout   string
	stderr   string
	maxRSSKB int64 // peak resident memory of the checker process
	report   *report
}

// runChecker runs the built checker with args (plus env on top of this
// process's environment). The run must end within bound: a checker that
// does not is killed, with its process group, and the test fails — a hang
// is the worst thing a checker can do. A panic or a signal death fails
// the test too.
func runChecker(t *testing.T, bound time.Duration, env []string, args ...string) checkerRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, checkerBin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr capped
	stdout.max, stderr.max = 1<<20, 1<<20
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	start := time.Now()
	err := cmd.Run()
	r := checkerRun{wall: time.Since(start), stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		t.Fatalf("wymcp-check %s: still running after %v (hung); killed\nstderr:\n%s", strings.Join(args, " "), bound, tail(r.stderr, 2000))
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("wymcp-check %s: %v", strings.Join(args, " "), err)
	}
	ps := cmd.ProcessState
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("wymcp-check %s: killed by %v\nstderr:\n%s", strings.Join(args, " "), ws.Signal(), tail(r.stderr, 2000))
	}
	r.code = ps.ExitCode()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		r.maxRSSKB = int64(ru.Maxrss)
		if runtime.GOOS == "darwin" {
			r.maxRSSKB /= 1024 // bytes there, KiB on Linux
		}
	}
	for _, bad := range []string{"panic:", "fatal error:", "WARNING: DATA RACE"} {
		if strings.Contains(r.stderr, bad) {
			t.Fatalf("wymcp-check %s: %q on stderr:\n%s", strings.Join(args, " "), bad, tail(r.stderr, 4000))
		}
	}
	t.Logf("wymcp-check %s: exit %d in %v (max RSS %d KiB)", strings.Join(args, " "), r.code, r.wall.Round(time.Millisecond), r.maxRSSKB)
	return r
}

// checkExit fails the test unless the run exited with want.
func (r checkerRun) checkExit(t *testing.T, want int) {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s\nstdout:\n%s", r.code, want, tail(r.stderr, 2000), tail(r.stdout, 2000))
	}
}

// checkWall fails the test when the run took longer than max.
func (r checkerRun) checkWall(t *testing.T, max time.Duration) {
	t.Helper()
	if r.wall > max {
		t.Errorf("the run took %v, want at most %v", r.wall.Round(time.Millisecond), max)
	}
}

// The JSON report, version 1 (report/json.go).
type report struct {
	Version  int      `json:"version"`
	Tool     string   `json:"tool"`
	Target   string   `json:"target"`
	Protocol string   `json:"protocol"`
	Contract string   `json:"contract"`
	Started  string   `json:"started"`
	Results  []result `json:"results"`
	Summary  summary  `json:"summary"`
}

type result struct {
	Fixture  string `json:"fixture"`
	Check    string `json:"check"`
	Area     string `json:"area"`
	Severity string `json:"severity"`
	Status   string `json:"status"`
	Message  string `json:"message"`
	Path     string `json:"path"`
}

type summary struct {
	Pass       int      `json:"pass"`
	Fail       int      `json:"fail"`
	Warn       int      `json:"warn"`
	Skip       int      `json:"skip"`
	Error      int      `json:"error"`
	Notes      []string `json:"notes"`
	DurationMs int64    `json:"durationMs"`
}

// readReport reads and parses a JSON report, and checks that it is
// whole: it parses, has its header, results and summary, and the
// summary's counts agree with the rows (one row per verdict, one per
// finding for fail and warn).
func readReport(t *testing.T, file string) *report {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the report: %v", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatalf("the report does not parse (%v); it ends:\n%s", err, tail(string(raw), 500))
	}
	for _, k := range []string{"version", "tool", "target", "protocol", "results", "summary"} {
		if _, ok := keys[k]; !ok {
			t.Fatalf("the report has no %q member", k)
		}
	}
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("the report: %v", err)
	}
	if r.Version != 1 || r.Tool != "wymcp-check" {
		t.Errorf("report header: version %d, tool %q", r.Version, r.Tool)
	}
	n := map[string]int{}
	for _, x := range r.Results {
		n[x.Status]++
		if x.Fixture == "" || x.Check == "" {
			t.Errorf("result without fixture or check: %+v", x)
		}
		if !slices.Contains([]string{"pass", "fail", "warn", "skip", "error"}, x.Status) {
			t.Errorf("result with status %q: %+v", x.Status, x)
		}
	}
	s := r.Summary
	if n["pass"] != s.Pass || n["skip"] != s.Skip || n["error"] != s.Error || n["fail"] < s.Fail || n["fail"]+n["warn"] < s.Fail+s.Warn {
		t.Errorf("summary %+v disagrees with the rows %v", s, n)
	}
	return &r
}

// digest summarises the report for the test log: the summary, the
// notes, and each distinct reason or finding that is not a pass.
func (r *report) digest() string {
	var b strings.Builder
	s := r.Summary
	fmt.Fprintf(&b, "protocol %q; %d pass, %d fail, %d warn, %d skip, %d error\n", r.Protocol, s.Pass, s.Fail, s.Warn, s.Skip, s.Error)
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	seen := map[string]bool{}
	for _, x := range r.Results {
		k := x.Status + " " + x.Message
		if x.Status == "pass" || x.Status == "skip" || seen[k] {
			continue
		}
		seen[k] = true
		if len(seen) > 12 {
			b.WriteString("  …\n")
			break
		}
		fmt.Fprintf(&b, "  %s %s %s: %s\n", x.Status, x.Fixture, x.Check, tail(x.Message, 200))
	}
	return b.String()
}

// fixtures lists the fixture IDs of the report in order of appearance.
func (r *report) fixtures() []string {
	var out []string
	for _, x := range r.Results {
		if len(out) == 0 || out[len(out)-1] != x.Fixture {
			out = append(out, x.Fixture)
		}
	}
	return out
}

// rows returns the rows of one fixture (exactly that ID).
func (r *report) rows(fixture string) []result {
	var out []result
	for _, x := range r.Results {
		if x.Fixture == fixture {
			out = append(out, x)
		}
	}
	return out
}

// checkComplete asserts that every fixture the run selected (embedded
// fixtures whose ID matches runGlob; "" for all) was judged, and every
// judged exchange has a verdict of every check.
func (r *report) checkComplete(t *testing.T, runGlob string) {
	t.Helper()
	all, err := fixtures.Embedded()
	if err != nil {
		t.Fatalf("embedded fixtures: %v", err)
	}
	seen := r.fixtures()
	for _, f := range all {
		if runGlob != "" {
			if ok, _ := path.Match(runGlob, f.ID); !ok {
				continue
			}
		}
		if !slices.ContainsFunc(seen, func(id string) bool { return id == f.ID || strings.HasPrefix(id, f.ID+"/") }) {
			t.Errorf("fixture %s is missing from the report", f.ID)
		}
	}
	for _, fx := range seen {
		have := map[string]bool{}
		for _, x := range r.rows(fx) {
			have[x.Check] = true
		}
		for _, id := range checkIDs {
			if !have[id] {
				t.Errorf("%s: no verdict of check %s", fx, id)
			}
		}
	}
}

// hasNote reports whether a summary note contains s.
func (r *report) hasNote(s string) bool {
	return slices.ContainsFunc(r.Summary.Notes, func(n string) bool { return strings.Contains(n, s) })
}

// capped is a goroutine-safe buffer that keeps the first max bytes.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// killGroup kills a process and its group.
func killGroup(p *os.Process) error {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err == nil {
		return nil
	}
	return p.Kill()
}

// startGroup starts cmd in a process group of its own and ends the whole
// group when the test ends: SIGTERM, then SIGKILL after a grace. The
// channel closes when the process has exited.
func startGroup(t *testing.T, cmd *exec.Cmd) (<-chan struct{}, error) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		// The group's other members, if any, go too.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("process %d did not end after SIGKILL", cmd.Process.Pid)
		}
	})
	return done, nil
}

// pidFile returns a file for servers to append their pids to, and checks
// at the end of the test that none of them outlived the checker run: the
// checker must shut down every server it started. Leftovers are killed.
func pidFile(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "pids")
	t.Cleanup(func() {
		raw, _ := os.ReadFile(file)
		for _, f := range strings.Fields(string(raw)) {
			pid, err := strconv.Atoi(f)
			if err != nil || pid <= 1 {
				continue
			}
			if alive(pid) {
				t.Errorf("server process %d outlived the checker run (the checker left it behind); killing it", pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return file
}

// alive reports whether pid is a live process (not a zombie awaiting its
// parent, which the checker reaps; a zombie reparented to init is not
// a running server either).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: signal 0 is all we know
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
