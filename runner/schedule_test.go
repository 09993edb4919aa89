package runner_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/refserver"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transport"
)

// rows is a run's output as the sink saw it, in order: the request
// body of each fixture's exchange (its ids must not depend on the order
// replies came in), one line per verdict, findings included, and the notes.
type rows struct {
	mu    sync.Mutex
	lines []string
}

func (c *rows) Exchange(j runner.Judged) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A multiplexed run's one liveness probe for all silent requests is
	// named for the first of them.
	if j.Exchange != nil && !envelope.IsLiveness(j.Fixture) {
		c.lines = append(c.lines, fmt.Sprintf("%s sent %.300q", j.Fixture, j.Exchange.Request.Body))
	}
	for _, v := range j.Verdicts {
		line := fmt.Sprintf("%s %s %s %s", v.Fixture, v.Check.ID, v.Status, v.Reason)
		for _, f := range v.Findings {
			line += fmt.Sprintf(" [%s %s: %s]", f.Status, f.Path, f.Message)
		}
		c.lines = append(c.lines, line)
	}
	return nil
}
func (c *rows) Facts(*expect.Facts) {}
func (c *rows) Note(n string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, "note: "+n)
}

func corpusRun(t *testing.T, target runner.Target, parallel int, fx []*fixtures.Fixture) ([]string, time.Duration) {
	t.Helper()
	return corpusRunAt(t, target, parallel, fx, "auto")
}

// embeddedWithout is the embedded corpus less the fixtures drop names.
func embeddedWithout(t *testing.T, drop func(*fixtures.Fixture) bool) []*fixtures.Fixture {
	t.Helper()
	all, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(all, drop)
}

// corpusRunAt is corpusRun with the protocol given ("auto" probes).
func corpusRunAt(t *testing.T, target runner.Target, parallel int, fx []*fixtures.Fixture, protocol string) ([]string, time.Duration) {
	t.Helper()
	if fx == nil {
		var err error
		if fx, err = fixtures.Embedded(); err != nil {
			t.Fatal(err)
		}
	}
	c := &rows{}
	start := time.Now()
	_, err := runner.Run(context.Background(), target, runner.Options{
		Fixtures: fx, CallTools: runner.CallAll, Contract: envelope.Strict(),
		Schemas: checks.ProtocolSchemas(schema.NewRegistry()), Deadline: time.Minute, Parallel: parallel,
		Protocol: protocol,
	}, c)
	if err != nil {
		t.Fatal(err)
	}
	return c.lines, time.Since(start)
}

// TestConcurrentSameAsSequence: a concurrent run hands the sink the very
// output of a run in sequence, in the same order, whatever order the
// replies came in; for the clean reference server and faults that touch
// timeouts, silence and the session.
func TestConcurrentSameAsSequence(t *testing.T) {
	for _, tc := range []struct{ fault, protocol string }{
		{"", "auto"}, {"", envelope.V20251125}, {"hang", "auto"}, {"crash", envelope.V20251125},
		{"wrong-id", envelope.V20250618}, {"ended-session-served", envelope.V20251125},
	} {
		t.Run(tc.fault+"/"+tc.protocol, func(t *testing.T) {
			url := serve(t, tc.fault)
			// A server that hangs costs a run its timeout per hanging
			// fixture, so that one is short; for the others it only bounds
			// an answer, and a second was not enough for a -race binary on
			// a loaded machine (one exchange timed out in CI).
			timeout := 3 * time.Second
			if tc.fault == "hang" {
				timeout = time.Second
			}
			target := func() runner.Target {
				return &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: timeout}}}
			}
			seq, _ := corpusRunAt(t, target(), 1, nil, tc.protocol)
			con, _ := corpusRunAt(t, target(), 8, nil, tc.protocol)
			if len(seq) < 500 {
				t.Fatalf("only %d rows: the corpus did not run", len(seq))
			}
			if diff := cmp.Diff(seq, con); diff != "" {
				t.Errorf("concurrent run differs from the run in sequence (-sequence +concurrent):\n%s", diff)
			}
		})
	}
}

// slowSession is a 2025-11-25 server that answers every request after a
// pause, and records any two requests of its session in flight at once
// with the same id (a server that maps ids to reply streams would mix
// them up), and any id used twice in a session (T-RPC-4).
type slowSession struct {
	pause    time.Duration
	hang     string // a method never answered
	hangAll  bool   // neither liveness probe is answered (ping, then the fallback's method)
	stall    string // a method whose reply stops after its first bytes
	muteNote bool   // notifications are never answered, not even with a status
	cut      string // a method whose reply's connection closes mid-body
	mu       sync.Mutex
	inFlight map[string]int
	sessions int
	used     map[string]bool // session and id of each request
	reused   []string
	max      int // most requests in flight at once
	now      int
	clashes  []string
	order    []string // methods, as they arrived
}

func (s *slowSession) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m := gjson.ParseBytes(body)
	method, id := m.Get("method").Str, m.Get("id")
	w.Header().Set("Content-Type", "application/json")
	sess := r.Header.Get("Mcp-Session-Id")
	if method == "initialize" {
		s.mu.Lock()
		s.sessions++
		sess = fmt.Sprintf("s%d", s.sessions)
		s.mu.Unlock()
	}
	w.Header().Set("Mcp-Session-Id", sess)
	if r.Method == http.MethodPost && (id.Type == gjson.String || id.Type == gjson.Number) {
		s.mu.Lock()
		if k := sess + " " + id.Type.String() + " " + id.String(); s.used[k] {
			s.reused = append(s.reused, k+" "+method)
		} else {
			s.used[k] = true
		}
		s.mu.Unlock()
	}
	switch {
	case r.Method != http.MethodPost:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case method == "initialize":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"slow","version":"1"}}}`, id.Raw)
		return
	case method == "server/discover":
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown method server/discover"}}`, id.Raw)
		return
	case !id.Exists() && s.muteNote && method != "notifications/initialized":
		<-r.Context().Done()
		return
	case !id.Exists():
		w.WriteHeader(http.StatusAccepted)
		return
	}
	key := id.Type.String() + id.Raw
	s.mu.Lock()
	s.order = append(s.order, method)
	if s.inFlight[key] > 0 && id.Type != gjson.Null {
		s.clashes = append(s.clashes, key+" "+method)
	}
	s.inFlight[key]++
	s.now++
	s.max = max(s.max, s.now)
	s.mu.Unlock()
	// The request is done once its reply is decided, before it is
	// written: a client may send the next request with this id as soon as
	// the reply arrives.
	done := func() {
		s.mu.Lock()
		s.inFlight[key]--
		s.now--
		s.mu.Unlock()
	}
	if s.hang != "" && method == s.hang || s.hangAll && (method == "ping" || method == envelope.LivenessFallbackMethod) {
		<-r.Context().Done()
		done()
		return
	}
	if method == s.stall || method == s.cut {
		reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id.Raw)
		w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
		io.WriteString(w, reply[:10])
		w.(http.Flusher).Flush()
		if method == s.cut {
			done()
			panic(http.ErrAbortHandler) // the connection closes, the body unfinished
		}
		<-r.Context().Done()
		done()
		return
	}
	time.Sleep(s.pause)
	var reply string
	switch method {
	case "tools/list":
		reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]},"annotations":{"readOnlyHint":true}}]}}`, id.Raw)
	case "ping":
		reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id.Raw)
	default:
		reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown method"}}`, id.Raw)
	}
	done()
	io.WriteString(w, reply)
}

func startSlow(t *testing.T, s *slowSession) string {
	t.Helper()
	s.inFlight, s.used = map[string]int{}, map[string]bool{}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// TestConcurrentIDsNeverShareFlight: in a 2025-xx session no two
// requests with the same id are in flight at once, and yet requests do
// overlap (the run is concurrent).
func TestConcurrentIDsNeverShareFlight(t *testing.T) {
	s := &slowSession{pause: 20 * time.Millisecond}
	url := startSlow(t, s)
	corpusRun(t, &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: 2 * time.Second}}}, 8, nil)
	if len(s.clashes) > 0 {
		t.Errorf("requests with the same id were in flight at once: %q", s.clashes)
	}
	if s.max < 2 {
		t.Errorf("at most %d request(s) in flight: the run was not concurrent", s.max)
	}
}

// TestConcurrentTimeoutsOverlap: a server that never answers tools/call
// costs a concurrent run its timeout a few times, not once per fixture;
// each silence is still judged (the server answers the liveness probe).
func TestConcurrentTimeoutsOverlap(t *testing.T) {
	const timeout = 500 * time.Millisecond
	// Six tools/call fixtures with distinct ids, as a user's might be.
	var calls []*fixtures.Fixture
	for i := range 6 {
		f, err := fixtures.Parse(fmt.Sprintf("call%d.txtar", i), fmt.Appendf(nil, "Calls a tool.\n-- fixture --\nid: mine/call-%d\n-- body --\n{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{\"n\":1}}}\n", i, 100+i))
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, f)
	}
	s := &slowSession{hang: "tools/call"}
	url := startSlow(t, s)
	lines, took := corpusRun(t, &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: timeout}}}, 8, calls)
	if took > 3*timeout {
		t.Errorf("six hanging calls took %v with --timeout %v: the timeouts did not overlap", took, timeout)
	}
	silent := 0
	for _, l := range lines {
		if strings.Contains(l, " RPC1006 fail ") {
			silent++
		}
	}
	if silent != len(calls) {
		t.Errorf("%d RPC1006 failures, want one per hanging call (%d):\n%s", silent, len(calls), strings.Join(lines, "\n"))
	}
}

// TestCutBodyIsSilence: a reply whose body stops after its first bytes,
// until the time bound runs out or the server closes the connection, is
// no reply: the server, alive, left the request unanswered (RPC1006
// fails once) and the bytes that came are not judged as invalid JSON.
func TestCutBodyIsSilence(t *testing.T) {
	for _, s := range []*slowSession{{stall: "tools/call"}, {cut: "tools/call"}} {
		f, err := fixtures.Parse("call.txtar", []byte("Calls a tool.\n-- fixture --\nid: mine/call\n-- body --\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{\"n\":1}}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		url := startSlow(t, s)
		lines, _ := corpusRun(t, &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: 300 * time.Millisecond}}}, 8, []*fixtures.Fixture{f})
		var got []string
		for _, l := range lines {
			if strings.HasPrefix(l, "mine/call ") && (strings.Contains(l, " fail ") || strings.Contains(l, " error ")) {
				got = append(got, strings.Join(strings.Fields(l)[:3], " "))
			}
		}
		want := []string{"mine/call RPC1006 fail"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("stall %q cut %q: findings (-want +got):\n%s\n%s", s.stall, s.cut, diff, strings.Join(lines, "\n"))
		}
	}
}

// TestGarbledReplyNotLost: a line that is no JSON, written once in place
// of a reply, is judged (RPC1001 fails) in a multiplexed run as in one in
// sequence. The multiplexed run sent the requests it may have answered
// again, alone, got clean replies, and put them in place of the first
// tries: the line was lost, and the run passed (review rev41: id/boolean's
// request replaced so).
func TestGarbledReplyNotLost(t *testing.T) {
	for _, parallel := range []int{1, 8} {
		t.Run(strconv.Itoa(parallel), func(t *testing.T) {
			t.Setenv(serverEnv, "")
			t.Setenv(garbleEnv, filepath.Join(t.TempDir(), "garbled"))
			rows, _ := stdioCorpusRunAt(t, transport.Limits{Timeout: time.Second}, parallel, nil, envelope.V20251125)
			if !slices.ContainsFunc(rows, func(l string) bool { return strings.Contains(l, " RPC1001 fail") }) {
				t.Errorf("the line that is no JSON was judged nowhere:\n%s", strings.Join(rows, "\n"))
			}
		})
	}
}

// TestLostTargetNotDriven: a stdio server that dies mid-run and cannot
// be started again leaves the run incomplete: Run says the target could
// not be driven (exit 3), after handing on what was judged before. In
// 2026-07-28, which has no handshake, the process started again is asked
// server/discover: without it every later fixture went to a process that
// had exited, and each failed PRO1005 as a death it caused (review rev43).
func TestLostTargetNotDriven(t *testing.T) {
	for _, v := range []string{envelope.V20251125, envelope.V20260728} {
		t.Run(v, func(t *testing.T) {
			if v == envelope.V20260728 {
				// (The reference server speaks it; the ignoring one does not.)
				t.Setenv(serverEnv, "")
				t.Setenv(dieOnEnv, "prompts/list")
			} else {
				t.Setenv(ignoringEnv, "1")
				t.Setenv(quirkEnv, "die-on:prompts/list")
			}
			t.Setenv(startOnceEnv, filepath.Join(t.TempDir(), "started"))
			target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer target.Close()
			fx := embeddedWithout(t, func(f *fixtures.Fixture) bool {
				return f.ID != "tools/list" && f.ID != "prompts/list" && f.ID != "resources/list"
			})
			c := &rows{}
			_, err = runner.Run(context.Background(), target, runner.Options{
				Fixtures: fx, Contract: envelope.Strict(), Deadline: time.Minute, Parallel: 1, Protocol: v,
			}, c)
			if !errors.Is(err, runner.ErrNotDriven) || !strings.Contains(err.Error(), "could not be judged") {
				t.Fatalf("run error %v, want the target could not be driven\n%s", err, strings.Join(c.lines, "\n"))
			}
			// (The reference server declares prompts: it dies on the
			// setup's listing.)
			died := func(l string) bool {
				return strings.HasPrefix(l, "prompts/list PRO1005 fail") || strings.HasPrefix(l, "setup/prompts-list PRO1005 fail")
			}
			if !slices.ContainsFunc(c.lines, died) {
				t.Errorf("the death on prompts/list was not judged before the run ended:\n%s", strings.Join(c.lines, "\n"))
			}
			if n := len(slices.DeleteFunc(slices.Clone(c.lines), func(l string) bool { return !strings.Contains(l, " PRO1005 fail") })); n != 1 {
				t.Errorf("%d deaths judged, want the one on prompts/list:\n%s", n, strings.Join(c.lines, "\n"))
			}
		})
	}
}

// TestLostHTTPTargetNotDriven: an HTTP server that stops listening
// mid-run (it died) leaves the run incomplete, as a stdio server that
// cannot start again does.
func TestLostHTTPTargetNotDriven(t *testing.T) {
	slow := &slowSession{}
	slow.inFlight, slow.used = map[string]int{}, map[string]bool{}
	var hs *httptest.Server
	var once sync.Once
	hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if gjson.GetBytes(body, "method").Str == "prompts/list" {
			once.Do(func() {
				hs.Listener.Close()
				go hs.CloseClientConnections()
			})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		slow.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool {
		return f.ID != "tools/list" && f.ID != "prompts/list" && f.ID != "resources/list"
	})
	c := &rows{}
	_, err := runner.Run(context.Background(), &runner.HTTPTarget{T: &transport.HTTP{URL: hs.URL + "/mcp", Limits: transport.Limits{Timeout: 500 * time.Millisecond}}}, runner.Options{
		Fixtures: fx, Contract: envelope.Strict(), Deadline: time.Minute, Parallel: 1, Protocol: envelope.V20251125,
	}, c)
	if !errors.Is(err, runner.ErrNotDriven) || !strings.Contains(err.Error(), "stopped accepting connections") {
		t.Fatalf("run error %v, want the target could not be driven\n%s", err, strings.Join(c.lines, "\n"))
	}
}

// TestTransientRefusalNotLost: an HTTP server that refuses a few
// connections and then serves again was not lost: the run ends as any
// run does, not as one that could not drive its target.
func TestTransientRefusalNotLost(t *testing.T) {
	url := startSlow(t, &slowSession{})
	target := &refusing{Target: &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: 500 * time.Millisecond}}}, from: 20, to: 23}
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	c := &rows{}
	_, err = runner.Run(context.Background(), target, runner.Options{
		Fixtures: fx, Contract: envelope.Strict(), Deadline: time.Minute, Parallel: 1, Protocol: envelope.V20251125,
	}, c)
	if err != nil {
		t.Fatalf("run error %v: a passing refusal made the target lost", err)
	}
	if target.n.Load() < 30 {
		t.Fatalf("%d exchanges: the test no longer tests this", target.n.Load())
	}
	// Refused to the end, it is lost.
	target = &refusing{Target: target.Target, from: 20, to: 1 << 30}
	if _, err = runner.Run(context.Background(), target, runner.Options{
		Fixtures: fx, Contract: envelope.Strict(), Deadline: time.Minute, Parallel: 1, Protocol: envelope.V20251125,
	}, &rows{}); !errors.Is(err, runner.ErrNotDriven) {
		t.Errorf("run error %v, want the target lost", err)
	}
}

// refusing is a target whose exchanges from..to-1 (counted from 1) are
// refused, as by a server not listening for a moment.
type refusing struct {
	runner.Target
	from, to int64
	n        atomic.Int64
}

func (r *refusing) Conn() runner.Conn { return refusingConn{r} }

type refusingConn struct{ r *refusing }

func (c refusingConn) Do(ctx context.Context, req envelope.Request, wantReply bool) envelope.Exchange {
	if n := c.r.n.Add(1); n >= c.r.from && n < c.r.to {
		return envelope.Exchange{Transport: envelope.HTTP, Request: req, Refused: true, Failure: "request failed: connection refused"}
	}
	return c.r.Target.Conn().Do(ctx, req, wantReply)
}

// TestSilentNotificationPOST: a POSTed notification that gets no HTTP
// response at all from a server still alive is a finding (T-HTTP-4: 202),
// not a failure of the checker.
func TestSilentNotificationPOST(t *testing.T) {
	f, err := fixtures.Parse("note.txtar", []byte("Notifies.\n-- fixture --\nid: mine/note\n-- body --\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/wymcp_x\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	url := startSlow(t, &slowSession{muteNote: true})
	lines, _ := corpusRun(t, &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: 300 * time.Millisecond}}}, 8, []*fixtures.Fixture{f})
	var got []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "mine/note" && (f[2] == "fail" || f[2] == "error") {
			got = append(got, strings.Join(f[:3], " "))
		}
	}
	if diff := cmp.Diff([]string{"mine/note HTTP1002 fail"}, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%s", diff, strings.Join(lines, "\n"))
	}
}

// TestErrorOncePerFixture: a request left unanswered by a server that
// then leaves its liveness probe unanswered too could not be judged:
// one error for the fixture, on RPC1006, and no second one for the probe.
func TestErrorOncePerFixture(t *testing.T) {
	f, err := fixtures.Parse("ping.txtar", []byte("Pings.\n-- fixture --\nid: mine/ping\n-- body --\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	url := startSlow(t, &slowSession{hangAll: true}) // the probes go unanswered too
	lines, _ := corpusRun(t, &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: 300 * time.Millisecond}}}, 8, []*fixtures.Fixture{f})
	var got []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 3 && f[2] == "error" {
			got = append(got, strings.Join(f[:3], " "))
		}
	}
	if diff := cmp.Diff([]string{"mine/ping RPC1006 error"}, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s\n%s", diff, strings.Join(lines, "\n"))
	}
}

// TestStreamLookEndsWithTheRest: a fixture whose reply is a stream that
// need not end (subscriptions/listen) is looked at while the other
// fixtures run, and the look ends when they are done, not after the
// whole second a look may last.
func TestStreamLookEndsWithTheRest(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool {
		return f.ID != "subscriptions/listen" && f.ID != "tools/list" && f.ID != "lifecycle/discover"
	})
	if len(fx) != 3 || !slices.ContainsFunc(fx, func(f *fixtures.Fixture) bool { return f.Stream }) {
		t.Fatalf("the corpus lacks subscriptions/listen (stream: true), tools/list or lifecycle/discover: %d of them", len(fx))
	}
	lines, took := corpusRun(t, &runner.HTTPTarget{T: &transport.HTTP{URL: serve(t, "")}}, 8, fx)
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "subscriptions/listen RPC1001 pass") }) {
		t.Fatalf("subscriptions/listen was not judged:\n%s", strings.Join(lines, "\n"))
	}
	// The look lasts at least 100 ms, and at most a second when the
	// other fixtures never finish; these finish in milliseconds.
	if took >= 700*time.Millisecond {
		t.Errorf("the run took %v: the look at the listen stream did not end when the other fixtures were done", took)
	}
}

// fixtureOrder is the order in which a run's output names the corpus
// fixtures, the run's own (negotiation, setup, the session's end) and
// its notes left out.
func fixtureOrder(lines []string) []string {
	var seen []string
	for _, l := range lines {
		if f := strings.Fields(l)[0]; !strings.HasPrefix(l, "note:") && !strings.HasPrefix(f, "negotiate/") && !strings.HasPrefix(f, "setup/") && !strings.HasPrefix(f, "session/") && (len(seen) == 0 || seen[len(seen)-1] != f) {
			seen = append(seen, f)
		}
	}
	return seen
}

// TestOrderLast: a fixture that declares order: last is sent, and
// reported, after every other fixture, whatever --parallel is.
func TestOrderLast(t *testing.T) {
	var fx []*fixtures.Fixture
	for i, tc := range []struct{ id, method, order string }{
		{"a/first", "ping", "order: last\n"}, {"b/second", "tools/list", ""}, {"c/third", "no/such", ""},
	} {
		f, err := fixtures.Parse("x.txtar", fmt.Appendf(nil, "A fixture.\n-- fixture --\nid: %s\n%s-- body --\n{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":%q}\n", tc.id, tc.order, 200+i, tc.method))
		if err != nil {
			t.Fatal(err)
		}
		fx = append(fx, f)
	}
	for _, parallel := range []int{1, 8} {
		s := &slowSession{pause: 10 * time.Millisecond}
		url := startSlow(t, s)
		lines, _ := corpusRun(t, &runner.HTTPTarget{T: &transport.HTTP{URL: url}}, parallel, fx)
		if got := s.order[len(s.order)-1]; got != "ping" {
			t.Errorf("--parallel %d: last request was %s, want the order: last fixture's ping (arrivals %q)", parallel, got, s.order)
		}
		seen := fixtureOrder(lines)
		if diff := cmp.Diff([]string{"b/second", "c/third", "a/first"}, seen); diff != "" {
			t.Errorf("--parallel %d: output order (-want +got):\n%s", parallel, diff)
		}
	}
}

// TestStreamLooksReportedLast: a stream look (here a GET) is reported
// after the other fixtures of its stage, whatever --parallel is, so that
// in a concurrent run, where it starts first and lasts while the others
// run, no other fixture's output waits on it.
func TestStreamLooksReportedLast(t *testing.T) {
	var fx []*fixtures.Fixture
	for _, src := range []string{
		"A look.\n-- fixture --\nid: a/get\nmethod: GET\n-- headers --\nAccept: text/event-stream\n",
		"A call.\n-- fixture --\nid: b/second\n-- body --\n{\"jsonrpc\":\"2.0\",\"id\":201,\"method\":\"tools/list\"}\n",
		"A call.\n-- fixture --\nid: c/third\n-- body --\n{\"jsonrpc\":\"2.0\",\"id\":202,\"method\":\"no/such\"}\n",
	} {
		f, err := fixtures.Parse("x.txtar", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		fx = append(fx, f)
	}
	for _, parallel := range []int{1, 8} {
		url := startSlow(t, &slowSession{pause: 10 * time.Millisecond})
		lines, _ := corpusRun(t, &runner.HTTPTarget{T: &transport.HTTP{URL: url}}, parallel, fx)
		seen := fixtureOrder(lines)
		if diff := cmp.Diff([]string{"b/second", "c/third", "a/get"}, seen); diff != "" {
			t.Errorf("--parallel %d: output order (-want +got):\n%s", parallel, diff)
		}
	}
}

// TestMultiplexedSameAsSequence: over stdio, one pipe multiplexed gives
// the output of a run in sequence, for the clean reference server and
// faults that leave requests unanswered, kill the server or mangle ids.
func TestMultiplexedSameAsSequence(t *testing.T) {
	for _, tc := range []struct{ fault, protocol string }{
		{"", "auto"}, {"", envelope.V20251125}, {"hang", "auto"}, {"crash", envelope.V20251125},
		{"wrong-id", "auto"}, {"missing-id", envelope.V20251125}, {"notification-reply", "auto"},
	} {
		t.Run(tc.fault+"/"+tc.protocol, func(t *testing.T) {
			t.Setenv(serverEnv, tc.fault)
			// As in TestConcurrentSameAsSequence: only the hanging server
			// keeps a short timeout; for the others it bounds an answer a
			// loaded -race binary gives late, and a notification's reply
			// must land within the quiet moment in either run.
			lim := transport.Limits{Timeout: 3 * time.Second, Quiet: 250 * time.Millisecond}
			if tc.fault == "hang" {
				lim.Timeout = time.Second
			}
			seq, tseq := stdioCorpusRunAt(t, lim, 1, nil, tc.protocol)
			mux, tmux := stdioCorpusRunAt(t, lim, 8, nil, tc.protocol)
			t.Logf("in sequence %v, multiplexed %v", tseq, tmux)
			if len(seq) < 500 {
				t.Fatalf("only %d rows: the corpus did not run", len(seq))
			}
			if diff := cmp.Diff(seq, mux); diff != "" {
				t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
			}
		})
	}
}

// ignoringEnv makes the test binary a stdio server that answers every
// well-formed request of 2025-11-25 and ignores every line it cannot
// read as one, as servers built on the TypeScript SDK do. A value other
// than "1" names a file each process appends to: "start" when it starts,
// "line" with the id of each line it reads and its method (noID and the
// method for a notification, unreadable for a line that is no JSON
// object), "ignored" with the id of a line with one that it ignores as
// no message, each with its pid and the time.
const ignoringEnv = "WYMCP_RUNNER_IGNORING"

// What the ignoring servers' log gives for a notification, and for a
// line that is no JSON object.
const (
	noID       = "(none)"
	unreadable = "(unreadable)"
)

func serveIgnoring(in io.Reader, out io.Writer, logTo string) {
	logf := func(string, ...any) {}
	if logTo != "1" {
		f, err := os.OpenFile(logTo, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		logf = func(format string, args ...any) {
			fmt.Fprintf(f, "%d %d "+format+"\n", append([]any{os.Getpid(), time.Now().UnixNano()}, args...)...)
		}
	}
	logf("start")
	if lock := os.Getenv(singleEnv); lock != "" {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			panic(err)
		}
		// Held until the process ends, however it ends (the deferred
		// Close keeps f from a finalizer that would let go sooner).
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			os.Stderr.WriteString("another instance is running\n")
			os.Exit(1)
		}
	}
	if once := os.Getenv(startOnceEnv); once != "" {
		if _, err := os.Stat(once); err == nil {
			if d, err := time.ParseDuration(os.Getenv(refuseAfterEnv)); err == nil {
				time.Sleep(d) // a start refused late (npx, a container)
			}
			os.Exit(7) // started before: this server cannot start again
		}
		os.WriteFile(once, nil, 0o600)
	}
	// A server slow to start (npx, a container) reads nothing for a while.
	if d, err := time.ParseDuration(os.Getenv(slowStartEnv)); err == nil {
		time.Sleep(d)
	}
	// A server handling messages concurrently may answer a notification
	// (wrongly) after it answered requests sent later.
	late, _ := time.ParseDuration(os.Getenv(lateNotificationReplyEnv))
	var mu sync.Mutex
	w := out
	quirk := os.Getenv(quirkEnv)
	copied, copyLater := strings.CutPrefix(quirk, "copy-later:")
	copiedOnNote, copyOnNote := strings.CutPrefix(quirk, "copy-on-note:")
	copying := copyLater || copyOnNote
	if copyOnNote {
		copied = copiedOnNote
	}
	replies := map[string][]byte{} // the last line written with each id, for copying
	out = writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		if quirk == "answer-twice" {
			w.Write(b) // every line at once, and again
		}
		if id := gjson.GetBytes(b, "id"); quirk == "float-ids" && id.Type == gjson.Number && envelope.PlainInteger(id.Raw) {
			// Every integer id written back as a float of the same value
			// (a server that holds ids as doubles).
			b = bytes.Replace(b, []byte(`"id":`+id.Raw), []byte(`"id":`+id.Raw+".0"), 1)
		}
		if id := gjson.GetBytes(b, "id"); copying && id.Exists() {
			replies[id.Raw] = bytes.Clone(b)
		}
		return w.Write(b)
	})
	// copyOwed writes the reply to the request a copy quirk owes a copy
	// of again, byte for byte.
	copyOwed := func(owed string) {
		mu.Lock()
		line := replies[owed]
		mu.Unlock()
		out.Write(line)
	}
	dieOn, _ := strings.CutPrefix(quirk, "die-on:")
	hangOn, _ := strings.CutPrefix(quirk, "hang-on:")
	hung := false
	lastID, lastRequest, reinits := "", "", 0
	staleToken := "" // the progress token a stale-progress quirk names again
	owed := ""       // the id an again-later quirk answers a second time
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		if quirk == "mute-dies-on-batch" && bytes.HasPrefix(bytes.TrimSpace(sc.Bytes()), []byte("[")) {
			os.Exit(9)
		}
		switch id := gjson.GetBytes(sc.Bytes(), "id"); {
		case id.Exists():
			logf("line %s %s", id.String(), gjson.GetBytes(sc.Bytes(), "method").Str)
		case gjson.ValidBytes(sc.Bytes()) && gjson.ParseBytes(sc.Bytes()).IsObject():
			logf("line %s %s", noID, gjson.GetBytes(sc.Bytes(), "method").Str)
		default:
			logf("line %s", unreadable)
		}
		m := gjson.ParseBytes(sc.Bytes())
		id, method := m.Get("id"), m.Get("method")
		if quirk == "die-on-string-id" && id.Type == gjson.String {
			os.Exit(9) // reads every id into a number
		}
		if hung || hangOn != "" && method.Str == hangOn {
			hung = true // alive, reading, and answering nothing again
			continue
		}
		if ignore := os.Getenv(ignoreMethodEnv); ignore != "" && method.Str == ignore {
			continue // left unanswered, the server alive and well
		}
		if !gjson.ValidBytes(sc.Bytes()) || !m.IsObject() || m.Get("jsonrpc").Str != "2.0" || method.Type != gjson.String || (id.Exists() && id.Type != gjson.String && id.Type != gjson.Number) {
			if strings.HasPrefix(quirk, "log-lines") {
				// Says so in a log line that names no request.
				io.WriteString(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"a line that is no request"}}`+"\n")
			}
			if d, ok := strings.CutPrefix(quirk, "late-invalid:"); ok {
				// Refused rightly, id-less, but late: a server that
				// handles messages side by side.
				delay, _ := time.ParseDuration(d)
				time.AfterFunc(delay, func() {
					io.WriteString(out, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`+"\n")
				})
			}
			if id.Exists() {
				logf("ignored %s", id.String())
			}
			continue // ignored, as a line that fails the message schema
		}
		switch {
		case method.Str == dieOn:
			os.Exit(9)
		case quirk == "mute-dies-on-batch" && method.Str != "initialize" && method.Str != "ping":
			continue
		case id.Exists() && quirk == "reinit-breaks" && reinits > 1:
			os.Exit(9)
		case method.Str == "notifications/initialized":
			reinits++
		}
		if !id.Exists() {
			if strings.HasPrefix(quirk, "log-lines") {
				io.WriteString(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a notification read"}}`+"\n")
			}
			if copyOnNote && owed != "" {
				copyOwed(owed)
				owed = ""
			}
			if quirk == "note-last-request" && lastRequest != "" {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"no id"}}`+"\n", lastRequest)
			}
			if quirk == "note-last-id" && lastID != "" {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"no id"}}`+"\n", lastID)
			}
			if late > 0 {
				time.AfterFunc(late, func() {
					io.WriteString(out, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no id"}}`+"\n")
				})
			}
			continue
		}
		lastID = id.Raw
		if method.Str != "ping" {
			lastRequest = id.Raw
		}
		if quirk == "stale-progress" && method.Str != "ping" && method.Str != "initialize" {
			// Progress for the token of a request it answered before,
			// written before the answer to the next.
			if tok := m.Get("params._meta.progressToken"); tok.Exists() {
				staleToken = tok.Raw
			} else if staleToken != "" {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1}}`+"\n", staleToken)
			}
		}
		if copying {
			if copyLater && owed != "" && method.Str != "ping" {
				copyOwed(owed)
				owed = ""
			}
			if method.Str == copied {
				owed = id.Raw
			}
		}
		twice, later := strings.CutPrefix(quirk, "again-later:")
		if ta, async := strings.CutPrefix(quirk, "again-async:"); later || async {
			// A second response, with other content, to each request of
			// method m, written before the answer to the next request
			// that is no ping (a multiplexed run's markers are pings).
			// Async: that answer comes a moment later, after the
			// answers to the pings read meanwhile, as a server that
			// handles requests side by side writes it.
			if async {
				twice = ta
			}
			wrote := false
			if owed != "" && method.Str != "ping" {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"cancelled"}}`+"\n", owed)
				owed, wrote = "", true
			}
			if method.Str == twice {
				owed = id.Raw
			}
			if async && wrote && method.Str != "initialize" {
				reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown method"}}`+"\n", id.Raw)
				time.AfterFunc(20*time.Millisecond, func() { io.WriteString(out, reply) })
				continue
			}
		}
		if m, d, ok := strings.Cut(os.Getenv(serialEnv), ":"); ok && (m == "*" || m == method.Str) {
			delay, _ := time.ParseDuration(d)
			time.Sleep(delay) // reading nothing meanwhile: one message at a time
		}
		if m, d, ok := strings.Cut(os.Getenv(strayEnv), ":"); ok && m == method.Str {
			delay, _ := time.ParseDuration(d)
			time.AfterFunc(delay, func() {
				io.WriteString(out, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"stray"}}`+"\n")
			})
		}
		if quirk == "log-lines-declared" && method.Str != "initialize" && method.Str != "ping" {
			// Says what it works on, as a server that declared logging
			// may, before it answers.
			io.WriteString(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a request read"}}`+"\n")
		}
		if slow, d, ok := strings.Cut(os.Getenv(slowMethodEnv), ":"); ok && slow == method.Str {
			delay, _ := time.ParseDuration(d)
			reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown method"}}`+"\n", id.Raw)
			time.AfterFunc(delay, func() { io.WriteString(out, reply) })
			continue
		}
		switch {
		case (quirk == "slow-progress" || quirk == "null-progress") && method.Str == "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"ignoring","version":"1"}}}`+"\n", id.Raw)
			continue
		case (quirk == "slow-progress" || quirk == "null-progress") && method.Str == "tools/list":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"count","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}`+"\n", id.Raw)
			continue
		case (quirk == "slow-progress" || quirk == "null-progress") && method.Str == "tools/call":
			// Works a while, telling its progress, then answers: the
			// progress comes while other fixtures' exchanges are open.
			// (null-progress: with a null token, whatever the call
			// offered, so nothing but the time names its request.)
			lines := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"1"}]}}`+"\n", id.Raw)
			if quirk == "null-progress" {
				lines = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":null,"progress":1}}` + "\n" + lines
			} else if tok := m.Get("params._meta.progressToken"); tok.Exists() {
				lines = fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1,"total":1}}`+"\n", tok.Raw) + lines
			}
			time.AfterFunc(150*time.Millisecond, func() { io.WriteString(out, lines) })
			continue
		case quirk == "raw-newline" && method.Str == "initialize":
			// A raw line break inside a string of its answer: two lines,
			// neither of them JSON.
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"x":"a`+"\n"+`b","protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"ignoring","version":"1"}}}`+"\n", id.Raw)
			continue
		case quirk == "older-once" && method.Str == "initialize":
			// Answers its oldest version unless asked 2025-03-26, and
			// refuses a second initialize in one process, as it may.
			reinits++
			switch {
			case reinits > 1:
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"already initialized"}}`+"\n", id.Raw)
			case m.Get("params.protocolVersion").Str == "2025-03-26":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"ignoring","version":"1"}}}`+"\n", id.Raw)
			default:
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"ignoring","version":"1"}}}`+"\n", id.Raw)
			}
			continue
		case quirk == "cursor-loop" && method.Str == "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"ignoring","version":"1"}}}`+"\n", id.Raw)
			continue
		case quirk == "cursor-loop" && method.Str == "tools/list":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"count","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}],"nextCursor":"again"}}`+"\n", id.Raw)
			continue
		case (quirk == "paged" || quirk == "paged-repeat") && method.Str == "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"ignoring","version":"1"}}}`+"\n", id.Raw)
			continue
		case (quirk == "paged" || quirk == "paged-repeat") && method.Str == "tools/list":
			// Two pages; paged-repeat lists its first page's tool again
			// on the second.
			second := "other"
			if quirk == "paged-repeat" {
				second = "count"
			}
			switch m.Get("params.cursor").Str {
			case "":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"count","inputSchema":{"type":"object"}}],"nextCursor":"p2"}}`+"\n", id.Raw)
			case "p2":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":%q,"inputSchema":{"type":"object"}}]}}`+"\n", id.Raw, second)
			default:
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Invalid cursor"}}`+"\n", id.Raw)
			}
			continue
		case (quirk == "cursor-loop" || quirk == "paged" || quirk == "paged-repeat") && method.Str == "tools/call":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"1"}]}}`+"\n", id.Raw)
			continue
		}
		switch method.Str {
		case "initialize":
			caps := "{}"
			if quirk == "log-lines-declared" {
				caps = `{"logging":{}}`
			}
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":%s,"serverInfo":{"name":"ignoring","version":"1"}}}`+"\n", id.Raw, caps)
		case "ping":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id.Raw)
			if quirk == "ping-twice" {
				// The same reply again, a moment later.
				reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id.Raw)
				time.AfterFunc(20*time.Millisecond, func() { io.WriteString(out, reply) })
			}
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown method"}}`+"\n", id.Raw)
		}
	}
}

// lateNotificationReplyEnv makes the ignoring server answer each
// notification, wrongly, after the duration it holds.
const lateNotificationReplyEnv = "WYMCP_RUNNER_LATE_NOTIFICATION_REPLY"

// quirkEnv gives the ignoring server a fault ("answer-twice" writes
// every line twice at once; "float-ids" writes each integer id back as
// N.0, the same value; "late-invalid:DURATION" is
// none: it answers an invalid line rightly, id-less, after DURATION while
// it goes on reading; "log-lines" writes a log notification for each
// line it ignores and each notification it reads, "log-lines-declared"
// those and one before its answer to each request, having declared
// logging): "die-on:METHOD" exits on
// reading a message of METHOD; "mute-dies-on-batch" answers only
// initialize and ping and exits on reading a batch; "reinit-breaks" exits on the first
// request after a second notifications/initialized; "note-last-id"
// answers each notification (wrongly) with the id it read last
// ("note-last-request": of the last request that was no ping, a
// multiplexed run's fixture, whose reply it took);
// "again-later:METHOD" answers each request of METHOD a second time, with
// other content, before its answer to the next request that is no ping
// ("again-async:METHOD": that answer 20 ms later, after the pings');
// "copy-later:METHOD" writes its reply to each request of METHOD again,
// byte for byte, before its answer to the next request that is no ping
// ("copy-on-note:METHOD": on reading the next notification);
// "hang-on:METHOD" stops answering anything once it reads a message of
// METHOD, alive and reading; "die-on-string-id" exits on any string id;
// "stale-progress" writes progress for the last progress token a request
// offered before its answer to each later request without one.
const quirkEnv = "WYMCP_RUNNER_QUIRK"

// ignoreMethodEnv makes the ignoring server leave every request of the
// method it names unanswered.
const ignoreMethodEnv = "WYMCP_RUNNER_IGNORE_METHOD"

// singleEnv names a lock file: an ignoring server that finds it locked
// by another exits at once, as a server that allows one instance at a
// time does.
const singleEnv = "WYMCP_RUNNER_SINGLE"

// startOnceEnv names a file the ignoring server creates when it starts;
// a server that finds it exits at once, as one that cannot start twice.
const startOnceEnv = "WYMCP_RUNNER_START_ONCE"

// refuseAfterEnv makes a later start of such a server exit only after
// the duration it holds, as one behind npx refuses a start.
const refuseAfterEnv = "WYMCP_RUNNER_REFUSE_AFTER"

// slowStartEnv makes each ignoring server read nothing for the
// duration it holds after it starts.
const slowStartEnv = "WYMCP_RUNNER_SLOW_START"

// strayEnv ("method:duration") makes the ignoring server write a line
// with a null id the duration after it reads a request of that method:
// a line any request still waiting could take for its reply.
const strayEnv = "WYMCP_RUNNER_STRAY"

// serialEnv ("method:duration", "*" for every method) makes the ignoring
// server work the duration on each request of the method before it
// answers, reading nothing meanwhile: a server that handles one message
// at a time, in order.
const serialEnv = "WYMCP_RUNNER_SERIAL"

// slowMethodEnv ("method:duration") makes the ignoring server answer
// that method after the duration, while it goes on reading.
const slowMethodEnv = "WYMCP_RUNNER_SLOW_METHOD"

// stdioCorpusRun runs fx against the test binary as a stdio server
// (what it serves is set by the environment), with lim, and returns the
// output rows.
func stdioCorpusRun(t *testing.T, lim transport.Limits, parallel int, fx []*fixtures.Fixture) ([]string, time.Duration) {
	t.Helper()
	return stdioCorpusRunAt(t, lim, parallel, fx, "auto")
}

// stdioCorpusRunAt is stdioCorpusRun with the protocol given.
func stdioCorpusRunAt(t *testing.T, lim transport.Limits, parallel int, fx []*fixtures.Fixture, protocol string) ([]string, time.Duration) {
	t.Helper()
	target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	return corpusRunAt(t, target, parallel, fx, protocol)
}

// A serverEvent is one line of the ignoring servers' log: a process
// started, or read a line with the id given.
type serverEvent struct {
	pid      int
	at       int64
	what, id string
	method   string // of a notification
}

// readServerLog reads the log the ignoring servers append to.
// runnersOwn: a logged id is one of the runner's own requests (the
// handshake, a marker, a liveness probe): its count runs from 1, where
// the fixtures' ids stand in blocks of a thousand and more.
func runnersOwn(id string) bool {
	n, err := strconv.Atoi(id)
	return err == nil && n < 1000
}

func readServerLog(t *testing.T, log string) ([]serverEvent, []byte) {
	t.Helper()
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var evs []serverEvent
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var e serverEvent
		fmt.Sscan(l, &e.pid, &e.at, &e.what, &e.id, &e.method)
		evs = append(evs, e)
	}
	return evs, raw
}

// TestMultiplexedLateReplyNotNotifications: a request answered after a
// marker sent later goes pending; its reply, arriving while a
// notification's quiet moment runs, is no reply to the notification
// (which would fail RPC1007 and leave the request silent): its id names
// the request, which takes it, and the run gives the verdicts of one in
// sequence.
func TestMultiplexedLateReplyNotNotifications(t *testing.T) {
	t.Setenv(ignoringEnv, "1")
	t.Setenv(slowMethodEnv, "prompts/list:150ms")
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool {
		return f.ID != "prompts/list" && f.ID != "rpc/notification"
	})
	if len(fx) != 2 || fx[0].ID != "prompts/list" {
		t.Fatalf("the corpus lacks prompts/list before rpc/notification: the test no longer tests this")
	}
	seq, _ := stdioCorpusRun(t, transport.Limits{Timeout: time.Second}, 1, fx)
	mux, _ := stdioCorpusRun(t, transport.Limits{Timeout: time.Second}, 8, fx)
	if slices.ContainsFunc(seq, func(l string) bool { return strings.Contains(l, " fail ") && strings.HasPrefix(l, "rpc/notification ") }) {
		t.Fatalf("in sequence rpc/notification fails: the test no longer tests this:\n%s", strings.Join(seq, "\n"))
	}
	if diff := cmp.Diff(seq, mux); diff != "" {
		t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
	}
}

// TestMultiplexedLateReplyDuringRequest: a request answered after a
// marker sent later goes pending; its reply, arriving within its
// --timeout while another request's exchange is open, is the pending
// request's (its id names it), not the open one's: taken for the open
// one's, it failed RPC1004 and ERR1002 there and left the pending one
// silent (RPC1006). The run gives the verdicts of one in sequence.
func TestMultiplexedLateReplyDuringRequest(t *testing.T) {
	t.Setenv(ignoringEnv, "1")
	t.Setenv(slowMethodEnv, "prompts/list:150ms")
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	lim := transport.Limits{Timeout: 500 * time.Millisecond}
	seq, _ := stdioCorpusRun(t, lim, 1, fx)
	mux, _ := stdioCorpusRun(t, lim, 8, fx)
	if !slices.Contains(seq, "prompts/list RPC1006 pass ") {
		t.Fatalf("in sequence prompts/list is not answered in time: the test no longer tests this")
	}
	if diff := cmp.Diff(seq, mux); diff != "" {
		t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
	}
}

// TestMultiplexedLateSetupReply: the setup's tools/list, answered past
// --timeout while the fixtures' requests are in flight, is a late reply
// to a request of the run's own (its id names it): no fixture takes it
// for its reply, in the multiplexed run as in a run in sequence (review
// rev82: the first fixture sent after it failed RPC1004 with "id is
// integer 3" and the listing's result judged as its own).
func TestMultiplexedLateSetupReply(t *testing.T) {
	t.Setenv(ignoringEnv, "1")
	t.Setenv(quirkEnv, "slow-progress") // declares tools, so the setup lists them
	t.Setenv(slowMethodEnv, "tools/list:700ms")
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	lim := transport.Limits{Timeout: 400 * time.Millisecond}
	for _, parallel := range []int{1, 8} {
		rows, _ := stdioCorpusRun(t, lim, parallel, fx)
		if len(rows) == 0 {
			t.Fatalf("parallel %d: nothing judged", parallel)
		}
		for _, l := range rows {
			if strings.Contains(l, " RPC1004 fail") && !strings.HasPrefix(l, "setup/") {
				t.Errorf("parallel %d: %s: a fixture took the setup listing's late reply for its own", parallel, l)
			}
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestMultiplexedLateNotificationReply: a server that answers
// notifications, wrongly, a moment after it answered the requests sent
// after them is caught (RPC1007) by a multiplexed run as by a run in
// sequence, and its late replies land on no other fixture.
func TestMultiplexedLateNotificationReply(t *testing.T) {
	t.Setenv(ignoringEnv, "1")
	t.Setenv(lateNotificationReplyEnv, "80ms")
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool {
		return !strings.HasPrefix(f.ID, "rpc/") && !strings.HasPrefix(f.ID, "id/")
	})
	seq, _ := stdioCorpusRun(t, transport.Limits{Timeout: time.Second}, 1, fx)
	mux, _ := stdioCorpusRun(t, transport.Limits{Timeout: time.Second}, 8, fx)
	if !slices.ContainsFunc(seq, func(l string) bool { return strings.HasPrefix(l, "rpc/notification RPC1007 fail") }) {
		t.Fatalf("in sequence, the late reply to rpc/notification was not caught: the test no longer tests this:\n%s", strings.Join(seq, "\n"))
	}
	if diff := cmp.Diff(seq, mux); diff != "" {
		t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
	}
}

// TestDeadlineStopsRestarts: a stdio server that answers only
// initialize and ping, and dies on a batch, leaves every multiplexed
// request open when it dies: each goes again alone, on a new process,
// and waits out its own timeout. Past the run's deadline no process is
// started, so the run ends by its deadline instead of starting and
// closing one process per request left.
func TestDeadlineStopsRestarts(t *testing.T) {
	log := filepath.Join(t.TempDir(), "server.log")
	t.Setenv(ignoringEnv, log)
	t.Setenv(quirkEnv, "mute-dies-on-batch")
	target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	const deadline = 4 * time.Second
	start := time.Now()
	_, err = runner.Run(context.Background(), target, runner.Options{
		Fixtures: fx, Contract: envelope.Strict(), Deadline: deadline, Parallel: 8, Protocol: envelope.V20251125,
	}, &rows{})
	took := time.Since(start)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Logf("run: %v", err)
	}
	// The deadline, a close of the last process (two grace periods at
	// most) and the report: far below a restart per fixture left.
	if took > deadline+6*time.Second {
		t.Errorf("the run took %v with a %v deadline: restarts went on past it", took, deadline)
	}
	evs, raw := readServerLog(t, log)
	// A process logs its start once it runs: a start decided just before
	// the deadline logs after it by the exec of a -race test binary,
	// which on a loaded machine takes hundreds of milliseconds. Restarts
	// going on past the deadline come a --timeout apart, later than this.
	const execSlack = 600 * time.Millisecond
	late := 0
	for _, e := range evs {
		if e.what == "start" && time.Unix(0, e.at).After(start.Add(deadline+execSlack)) {
			late++
		}
	}
	if late > 0 {
		t.Errorf("%d server processes started after the run's deadline:\n%s", late, raw)
	}
}

// TestMultiplexedSilenceOnce: a stdio server that ignores malformed
// lines costs a multiplexed run one --timeout, not one per ignored
// line, and each ignored request still gets its RPC1006 finding once, with the
// same verdicts as a run in sequence.
func TestMultiplexedSilenceOnce(t *testing.T) {
	const timeout = 700 * time.Millisecond
	t.Setenv(ignoringEnv, "1")
	// Staged fixtures each start a process of their own, whose start
	// under -race can take longer than this window (see
	// TestStagedDuringSilence).
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	lim := transport.Limits{Timeout: timeout, Quiet: 50 * time.Millisecond}
	seq, tseq := stdioCorpusRun(t, lim, 1, fx)
	mux, tmux := stdioCorpusRun(t, lim, 8, fx)
	silent := 0
	for _, l := range mux {
		// (Silence warns where the message has a reading nothing answers:
		// a null id, a message without method.)
		if strings.Contains(l, " RPC1006 fail ") || strings.Contains(l, " RPC1006 warn ") {
			silent++
		}
	}
	if silent < 10 {
		t.Errorf("%d RPC1006 findings: the ignored lines were not judged as silence", silent)
	}
	if tmux > 3*timeout {
		t.Errorf("multiplexed run took %v with --timeout %v (in sequence %v): the silences did not share one window", tmux, timeout, tseq)
	}
	if diff := cmp.Diff(seq, mux); diff != "" {
		t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
	}
}

// TestMultiplexedSilenceOnceLogged: a server that logs each malformed
// line it ignores and each notification it reads (notifications that
// name no request), while the ignored requests before are still open,
// costs a multiplexed run no process and no resend more than the same
// server silent (the twin): the open requests stay silent, so the log
// lines stay where they land. The verdicts are those of a run in
// sequence.
func TestMultiplexedSilenceOnceLogged(t *testing.T) {
	const timeout = 700 * time.Millisecond
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	lim := transport.Limits{Timeout: timeout, Quiet: 50 * time.Millisecond}
	read := map[string]int{} // lines the server read, by quirk
	for _, quirk := range []string{"", "log-lines"} {
		mux, tmux, n := muxLinesRead(t, lim, fx, quirk)
		read[quirk] = n
		if quirk == "" {
			continue
		}
		seq, tseq := stdioCorpusRun(t, lim, 1, fx)
		if !slices.ContainsFunc(seq, func(l string) bool { return strings.HasPrefix(l, "rpc/garbage PRO1003 fail ") }) {
			t.Fatalf("in sequence the log line was not judged with rpc/garbage; the quirk did not work:\n%s", strings.Join(seq, "\n"))
		}
		if tmux > 3*timeout {
			t.Errorf("multiplexed run took %v with --timeout %v (in sequence %v)", tmux, timeout, tseq)
		}
		if diff := cmp.Diff(seq, mux); diff != "" {
			t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
		}
	}
	if read["log-lines"] != read[""] {
		t.Errorf("the server read %d lines when it logged, %d when silent: fixtures were sent again for log lines no answered request may own", read["log-lines"], read[""])
	}
}

// TestMultiplexedLogsOfAnsweredRequests: a server that declared logging
// and logs a line for each request it works on, while a slow request is
// open beside the others and is answered: each log line may be that
// request's as much as the one it lands beside, but it is judged alike
// wherever it lands, so nothing is sent again (a review measured a
// fifth more time when every such exchange went again alone). The
// verdicts are those of a run in sequence, and the server reads the
// lines the same run without log lines has it read.
func TestMultiplexedLogsOfAnsweredRequests(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	lim := transport.Limits{Timeout: 700 * time.Millisecond, Quiet: 50 * time.Millisecond}
	t.Setenv(slowMethodEnv, "prompts/list:150ms")
	read := map[string]int{}
	for _, quirk := range []string{"", "log-lines-declared"} {
		mux, _, n := muxLinesRead(t, lim, fx, quirk)
		read[quirk] = n
		if quirk == "" {
			continue
		}
		seq, _ := stdioCorpusRun(t, lim, 1, fx)
		if !slices.Contains(seq, "prompts/list PRO1003 pass ") {
			t.Fatalf("in sequence the log line was not judged with prompts/list; the quirk did not work:\n%s", strings.Join(seq, "\n"))
		}
		if diff := cmp.Diff(seq, mux); diff != "" {
			t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
		}
	}
	if read["log-lines-declared"] != read[""] {
		t.Errorf("the server read %d lines when it logged, %d when it did not: fixtures were sent again for log lines judged alike wherever they land", read["log-lines-declared"], read[""])
	}
}

// muxLinesRead runs fx multiplexed against the ignoring server with
// quirk, and returns the rows, the time taken and the fixtures' lines
// the server read with the processes it started (a fixture sent again
// is read again). The ignoring server is left set to log nowhere.
func muxLinesRead(t *testing.T, lim transport.Limits, fx []*fixtures.Fixture, quirk string) ([]string, time.Duration, int) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "server.log")
	t.Setenv(ignoringEnv, log)
	t.Setenv(quirkEnv, quirk)
	rows, took := stdioCorpusRun(t, lim, 8, fx)
	t.Setenv(ignoringEnv, "1")
	evs, _ := readServerLog(t, log)
	n := 0
	for _, e := range evs {
		// The fixtures' lines, and the processes started: a fixture sent
		// again is read again, and a process more is started. (The
		// runner's own markers and probes, whose number follows the
		// server's pace, are not counted: one more or less under a
		// loaded machine failed these tests.)
		if e.what == "line" && !runnersOwn(e.id) || e.what == "start" {
			n++
		}
	}
	return rows, took, n
}

// TestMultiplexedLateIDlessReplies: a server that handles messages side
// by side answers invalid requests rightly, id-less, but after the
// markers sent later: such a reply cannot name its request, so it is
// nobody's for sure, and the requests it could answer go again, alone.
// The multiplexed run gives the verdicts of a run in sequence, not
// silences and answered notifications that are not there.
func TestMultiplexedLateIDlessReplies(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	lim := transport.Limits{Timeout: time.Second, Quiet: 50 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	t.Setenv(quirkEnv, "late-invalid:150ms")
	seq, _ := stdioCorpusRun(t, lim, 1, fx)
	mux, _ := stdioCorpusRun(t, lim, 8, fx)
	if !slices.ContainsFunc(seq, func(l string) bool { return strings.HasPrefix(l, "rpc/garbage RPC1006 pass") }) {
		t.Fatalf("rpc/garbage's late reply was not taken in sequence; the test needs it:\n%s", strings.Join(seq, "\n"))
	}
	if diff := cmp.Diff(seq, mux); diff != "" {
		t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
	}
}

// TestStagedDuringSilence: in a multiplexed stdio run, the staged
// fixtures (each in a process of its own) start while the pipe's
// silence window runs out, not after it, and are judged as in a run in
// sequence.
func TestStagedDuringSilence(t *testing.T) {
	// One request the server ignores opens the window; the staged
	// fixtures are the rest.
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage == "" && f.ID != "rpc/garbage" })
	if len(fx) < 3 {
		t.Fatalf("%d fixtures: the corpus lacks rpc/garbage or staged fixtures, and this test no longer tests them", len(fx))
	}
	lim := transport.Limits{Timeout: 2 * time.Second, Quiet: 50 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	seq, _ := stdioCorpusRun(t, lim, 1, fx)
	log := filepath.Join(t.TempDir(), "servers.log")
	t.Setenv(ignoringEnv, log)
	mux, _ := stdioCorpusRun(t, lim, 8, fx)
	main, first, end := windowAndStarts(t, log)
	if first > end {
		t.Errorf("the first staged process started %v after the silence window of process %d ended: the staged fixtures should go during it", time.Duration(first-end), main)
	}
	if !slices.ContainsFunc(mux, func(l string) bool { return strings.HasPrefix(l, "rpc/garbage RPC1006 fail ") }) {
		t.Errorf("rpc/garbage was not judged silent; the window this test needs did not open:\n%s", strings.Join(mux, "\n"))
	}
	if diff := cmp.Diff(seq, mux); diff != "" {
		t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
	}
}

// TestMultiplexedQuirksSameAsSequence: the sending order of a
// multiplexed stdio run (notifications after the requests) gives the
// verdicts of a run in sequence, for servers that a notification kills
// or unsettles, for one that answers notifications with the last id it
// read, which a marker's id must not hide, and for one whose tool tells
// its progress late, while other exchanges are open: the progress is the
// call's, as its reply is. With a null token (null-progress, from every
// slow call) nothing names the call: the finding on it is the call's, as
// in sequence, not that of whichever fixture was open when it came,
// which varied, even one the server left silent (see
// TestMultiplexedNullProgressSilentOnce). (Servers that answer twice:
// TestSecondResponsesJudged.)
func TestMultiplexedQuirksSameAsSequence(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	// A notification's quiet moment is when a death it caused is seen
	// in sequence: 50 ms was too short on a loaded machine (the process
	// had not exited yet, once, beside the other packages' tests).
	lim := transport.Limits{Timeout: 500 * time.Millisecond, Quiet: 200 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	for _, quirk := range []string{"die-on:notifications/wymcp_unknown", "reinit-breaks", "note-last-id", "note-last-request", "slow-progress", "null-progress"} {
		t.Run(quirk, func(t *testing.T) {
			t.Setenv(quirkEnv, quirk)
			seq, _ := stdioCorpusRun(t, lim, 1, fx)
			mux, _ := stdioCorpusRun(t, lim, 8, fx)
			if strings.HasPrefix(quirk, "note-last-") {
				// The wrong reply carries whatever id was read last: a
				// fixture's in sequence, a marker's or a fixture's
				// multiplexed (taken for that fixture's second response,
				// it failed the fixture and passed the notification).
				// The verdicts must agree; the quoted id may not.
				seq, mux = verdictsOnly(seq), verdictsOnly(mux)
				if !slices.ContainsFunc(seq, func(l string) bool { return strings.HasPrefix(l, "rpc/unknown-notification RPC1007 fail") }) {
					t.Fatalf("in sequence the wrong replies to notifications were not failed; the quirk did not work:\n%s", strings.Join(seq, "\n"))
				}
			}
			if quirk == "slow-progress" && !slices.Contains(seq, "tools/call-valid/count PRO1003 pass ") {
				t.Fatalf("in sequence the tool's progress was not judged with its call; the quirk did not work:\n%s", strings.Join(seq, "\n"))
			}
			for _, call := range []string{"tools/call-valid/count", "progress/token-integer/count"} {
				if quirk == "null-progress" && !slices.ContainsFunc(seq, func(l string) bool { return strings.HasPrefix(l, call+" PRO1003 fail ") }) {
					t.Fatalf("in sequence the null-token progress was not failed with its call %s; the quirk did not work:\n%s", call, strings.Join(seq, "\n"))
				}
			}
			if diff := cmp.Diff(seq, mux); diff != "" {
				t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
			}
		})
	}
}

// TestSecondResponsesJudged: a stdio server that writes a response again,
// byte for byte, is failed for each copy it writes, in sequence and
// multiplexed: every ping's reply 20 ms later (the fixture's, the liveness
// probes'), its reply to each tools/list or to initialize before its
// next answer, or at the next notification. So is one that answers
// initialize a second time with other content, naming the negotiation's
// id (multiplexed, that passed unjudged: taken for the next fixture's
// reply, then passed over for the one with the fixture's id). Multiplexed, a copy goes to
// the exchange that took the first (RPC1006: two responses); in
// sequence, that exchange is judged before the copy comes, which fails
// where it lands, naming the request it answers (RPC1006), or, in a
// notification's quiet moment, RPC1007, which says it may be the
// notification's answer as well. Set aside, as before, every copy passed
// unjudged in sequence. Against the same server answering once (the
// twin) only those two checks fail; a check that had no line to judge
// may pass on the copy.
func TestSecondResponsesJudged(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	lim := transport.Limits{Timeout: 500 * time.Millisecond, Quiet: 150 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	for _, parallel := range []int{1, 8} {
		t.Run(fmt.Sprint(parallel), func(t *testing.T) {
			t.Setenv(quirkEnv, "")
			clean, _ := stdioCorpusRunAt(t, lim, parallel, fx, "2025-11-25")
			if n := secondResponses(clean); len(n) != 0 {
				t.Fatalf("the server answering once was failed for second responses:\n%s", strings.Join(n, "\n"))
			}
			for _, tc := range []struct{ quirk, named string }{
				{quirk: "ping-twice"},
				{quirk: "copy-later:tools/list"},
				{quirk: "copy-on-note:tools/list"},
				// (The negotiation's initialize is the run's first
				// request.)
				{"copy-later:initialize", "request with id 1 came"},
				{"again-later:initialize", "request with id 1 came"},
			} {
				t.Run(tc.quirk, func(t *testing.T) {
					t.Setenv(quirkEnv, tc.quirk)
					twice, _ := stdioCorpusRunAt(t, lim, parallel, fx, "2025-11-25")
					failed := secondResponses(twice)
					if len(failed) == 0 || !slices.ContainsFunc(failed, func(l string) bool { return strings.Contains(l, tc.named) }) {
						t.Errorf("no second response was failed (naming %q):\n%s", tc.named, strings.Join(twice, "\n"))
					}
					was, is := verdictsOnly(clean), verdictsOnly(twice)
					if len(was) != len(is) {
						t.Fatalf("%d verdicts, %d once the server answers twice", len(was), len(is))
					}
					for i := range was {
						// (A check that had no line to judge judges the
						// copy: skip may become pass.)
						_, rest, _ := strings.Cut(is[i], " ")
						judged := strings.HasSuffix(was[i], " skip") && strings.HasSuffix(is[i], " pass")
						if was[i] != is[i] && rest != "RPC1006 fail" && rest != "RPC1007 fail" && !judged {
							t.Errorf("%q became %q: only RPC1006 and RPC1007 may fail", was[i], is[i])
						}
					}
				})
			}
		})
	}
}

// secondResponses are the rows that fail a second response to a request.
func secondResponses(rows []string) []string {
	var out []string
	for _, l := range rows {
		if strings.Contains(l, " RPC1006 fail ") && (strings.Contains(l, "a second response to the request") || strings.Contains(l, "responses arrived for one request") || strings.Contains(l, "came again, byte for byte")) ||
			strings.Contains(l, " RPC1007 fail ") && strings.Contains(l, "a second response to the earlier request") {
			out = append(out, l)
		}
	}
	return out
}

// TestMultiplexedAnswerTwice: a stdio server that writes each response
// twice at once is failed for it (RPC1006: exactly one response): the
// copy comes before the marker's reply, so it is the request's. The
// twin: the same server answering once passes.
func TestMultiplexedAnswerTwice(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "lifecycle/ping" })
	lim := transport.Limits{Timeout: 500 * time.Millisecond, Quiet: 50 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	for quirk, want := range map[string]string{"answer-twice": "lifecycle/ping RPC1006 fail", "": "lifecycle/ping RPC1006 pass"} {
		t.Run("quirk="+quirk, func(t *testing.T) {
			t.Setenv(quirkEnv, quirk)
			rows, _ := stdioCorpusRunAt(t, lim, 8, fx, "2025-11-25")
			if !slices.Contains(verdictsOnly(rows), want) {
				t.Errorf("no %q among:\n%s", want, strings.Join(rows, "\n"))
			}
		})
	}
}

// TestMultiplexedSecondReplyOwned: a stdio server that answers each
// tools/list a second time, with other content, before its answer to
// a later request, is failed for it on the fixture whose request the
// second response names (RPC1006), and on no other: the later request
// keeps its own reply (a second response held while its own may come
// was taken for its reply, failing a fixture the server had answered
// rightly). So is one that handles requests side by side, whose answer
// to the later request comes after the marker's (the held line was
// taken at the marker's reply). The twin: the same server answering
// once.
func TestMultiplexedSecondReplyOwned(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	// (Quiet well past the 20 ms the async quirk's answers take, on a
	// loaded machine too.)
	lim := transport.Limits{Timeout: 500 * time.Millisecond, Quiet: 150 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	clean, _ := stdioCorpusRunAt(t, lim, 8, fx, "2025-11-25")
	for _, quirk := range []string{"again-later:tools/list", "again-async:tools/list"} {
		t.Run(quirk, func(t *testing.T) { secondReplyOwned(t, fx, lim, clean, quirk) })
	}
}

// secondReplyOwned checks a run against a server with quirk (a second
// response to each tools/list) against the clean run's rows.
func secondReplyOwned(t *testing.T, fx []*fixtures.Fixture, lim transport.Limits, clean []string, quirk string) {
	t.Setenv(quirkEnv, quirk)
	twice, _ := stdioCorpusRunAt(t, lim, 8, fx, "2025-11-25")
	clean, twice = verdictsOnly(clean), verdictsOnly(twice)
	if len(clean) != len(twice) {
		t.Fatalf("%d verdicts, %d once the server answers twice", len(clean), len(twice))
	}
	listing := map[string]bool{}
	for _, f := range fx {
		// (A template's method is plain JSON text in it.)
		if bytes.Contains(f.Body, []byte(`"method":"tools/list"`)) {
			listing[f.ID] = true
		}
	}
	failed := 0
	for i := range clean {
		if clean[i] == twice[i] {
			continue
		}
		fixture, rest, _ := strings.Cut(twice[i], " ")
		if rest != "RPC1006 fail" || !listing[fixture] {
			t.Errorf("%q became %q: only a fixture that sends tools/list may fail, and only RPC1006", clean[i], twice[i])
		}
		failed++
	}
	if failed == 0 {
		t.Errorf("no fixture failed for the second responses; the quirk did not work:\n%s", strings.Join(twice, "\n"))
	}
	// In sequence the fixture that named the request is judged before
	// the second response comes: the exchange it comes in knows it for
	// one (Response.Again) and fails RPC1006 for it, and nothing else
	// changes.
	seq, _ := stdioCorpusRunAt(t, lim, 1, fx, "2025-11-25")
	seq = verdictsOnly(seq)
	failed = 0
	for i := range clean {
		if i < len(seq) && clean[i] != seq[i] {
			if _, rest, _ := strings.Cut(seq[i], " "); rest != "RPC1006 fail" {
				t.Errorf("in sequence %q became %q, want only RPC1006 fails", clean[i], seq[i])
			}
			failed++
		}
	}
	if len(seq) != len(clean) || failed == 0 {
		t.Errorf("in sequence %d verdicts (want %d), %d failed for the second responses (want some)", len(seq), len(clean), failed)
	}
}

// TestSingleInstanceSameAsSequence: a server that allows one instance
// at a time gets the verdicts of a run in sequence: a staged fixture's
// process that died beside the pipe's goes again alone, and says so in a
// note; no PRO1005 fails for the deaths of starts side by side. The twin:
// one that dies of a staged fixture's message (tools/list before
// initialize) dies of it alone too, and fails PRO1005 in both runs.
func TestSingleInstanceSameAsSequence(t *testing.T) {
	lim := transport.Limits{Timeout: 500 * time.Millisecond, Quiet: 50 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	// The staged fixtures, and beside them fixtures for the pipe.
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool {
		return f.Stage == "" && f.ID != "tools/list" && f.ID != "lifecycle/ping" && f.ID != "rpc/garbage"
	})
	for _, tc := range []struct {
		quirk, dies string // dies: the staged fixture that fails PRO1005
	}{{"", ""}, {"die-on:tools/list", "lifecycle/request-before-initialize"}} {
		t.Run(tc.quirk, func(t *testing.T) {
			t.Setenv(singleEnv, filepath.Join(t.TempDir(), "lock"))
			t.Setenv(quirkEnv, tc.quirk)
			seq, _ := stdioCorpusRun(t, lim, 1, fx)
			mux, _ := stdioCorpusRun(t, lim, 8, fx)
			var notes []string
			mux = slices.DeleteFunc(mux, func(l string) bool {
				again := strings.HasPrefix(l, "note: ") && strings.Contains(l, "sent again with no other process running")
				if again {
					notes = append(notes, l)
				}
				return again
			})
			if len(notes) == 0 {
				t.Error("no staged fixture was sent again alone: the test no longer tests this")
			}
			for _, l := range seq {
				if name, _, ok := strings.Cut(l, " PRO1005 fail"); ok && strings.HasPrefix(name, "lifecycle/") && name != tc.dies {
					t.Errorf("in sequence the server died on %s:\n%s", name, l)
				}
			}
			if tc.dies != "" && !slices.ContainsFunc(seq, func(l string) bool { return strings.HasPrefix(l, tc.dies+" PRO1005 fail") }) {
				t.Errorf("in sequence %s did not fail PRO1005; the quirk did not work", tc.dies)
			}
			if diff := cmp.Diff(seq, mux); diff != "" {
				t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
			}
		})
	}
}

// TestStagedDeathOfAServerThatCannotStart: a server that starts once and
// exits with no input on every later start (review rev62) kills each
// staged fixture's fresh process before it reads a line: no message of
// the fixture caused that, so none fails PRO1005; each is "could not
// judge" (an error), in sequence and multiplexed alike. The twin (a
// server that starts again, and dies of a staged fixture's message) is
// TestSingleInstanceSameAsSequence's die-on:tools/list.
//
// A server that refuses its later starts only after 1.2 s (one behind
// npx, a lock found late) is could not judge too: the process started
// with no input is given twice the life of the one that died (review
// rev85: a wait of 1 s failed such fixtures PRO1005).
func TestStagedDeathOfAServerThatCannotStart(t *testing.T) {
	lim := transport.Limits{Timeout: 2 * time.Second, Quiet: 50 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage == "" })
	for _, tc := range []struct {
		parallel int
		refuse   string
	}{{1, ""}, {8, ""}, {8, "1200ms"}} {
		t.Run(fmt.Sprint(tc.parallel, tc.refuse), func(t *testing.T) {
			t.Setenv(startOnceEnv, filepath.Join(t.TempDir(), "started"))
			t.Setenv(refuseAfterEnv, tc.refuse)
			fx := fx
			if tc.refuse != "" {
				fx = fx[:2] // each waits out a slow refusal
			}
			parallel := tc.parallel
			rows, _ := stdioCorpusRun(t, lim, parallel, fx)
			errs := 0
			for _, l := range rows {
				if strings.Contains(l, " PRO1005 fail") {
					t.Errorf("a death no message caused failed PRO1005: %s", l)
				}
				if strings.Contains(l, " error ") && (strings.Contains(l, "could not be kept running") || strings.Contains(l, "could not be restarted")) {
					errs++
				}
			}
			if errs == 0 {
				t.Errorf("no staged fixture was could not judge:\n%s", strings.Join(rows, "\n"))
			}
		})
	}
}

// TestNegotiationLinesNotJSON: a server whose initialize answer breaks
// the stdio framing (a raw line break inside a string) cannot be
// negotiated with, and the run says so (the target could not be
// driven), but the lines that are no JSON are the server's finding
// (RPC1001), not "nothing judged" (review rev63).
func TestNegotiationLinesNotJSON(t *testing.T) {
	t.Setenv(ignoringEnv, "1")
	t.Setenv(quirkEnv, "raw-newline")
	target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	c := &rows{}
	_, err = runner.Run(context.Background(), target, runner.Options{
		Fixtures: embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "lifecycle/ping" }), Contract: envelope.Strict(), Deadline: time.Minute, Parallel: 1, Protocol: envelope.V20251125,
	}, c)
	if !errors.Is(err, runner.ErrNotDriven) {
		t.Fatalf("run error %v, want the target could not be driven", err)
	}
	if !slices.ContainsFunc(c.lines, func(l string) bool { return strings.HasPrefix(l, "negotiate/initialize RPC1001 fail") }) {
		t.Errorf("the lines that are no JSON were not judged:\n%s", strings.Join(c.lines, "\n"))
	}
}

// TestCursorLoopListsOnce: a server whose tools/list gives the same
// nextCursor on every page is followed until the cursor repeats, not to
// the page bound: its tool is called once (a tool listed on every page
// would otherwise be called for each), a note says the list never ends,
// and the list counts as not read to its end.
func TestCursorLoopListsOnce(t *testing.T) {
	t.Setenv(ignoringEnv, "1")
	t.Setenv(quirkEnv, "cursor-loop")
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "tools/call-valid" })
	if len(fx) != 1 {
		t.Fatal("the corpus lacks tools/call-valid: the test no longer tests this")
	}
	rows, _ := stdioCorpusRun(t, transport.Limits{Timeout: 2 * time.Second, Quiet: 50 * time.Millisecond}, 1, fx)
	var pages, calls, notes int
	for _, l := range rows {
		switch {
		case strings.HasPrefix(l, "setup/tools-list") && strings.Contains(l, " sent "):
			pages++
		case strings.HasPrefix(l, "tools/call-valid/count sent "):
			calls++
		case strings.HasPrefix(l, "note: tools/list for the fixtures: page 2 gives a nextCursor an earlier page gave"):
			notes++
		}
	}
	if pages != 2 || calls != 1 || notes != 1 {
		t.Errorf("%d pages listed, %d calls of the tool, %d notes; want 2, 1, 1:\n%s", pages, calls, notes, strings.Join(rows, "\n"))
	}
}

// TestListingAcrossPages: the run's later pages of a list are judged by
// the listing's earlier pages: a nextCursor an earlier page handed out
// warns (T-PAGE-3), and so does a tool name an earlier page listed
// (T-TOOL-5) unless the page begins the walk again; a listing whose
// pages differ passes. Both passed: each page
// was judged alone, and the loop was only a note.
func TestListingAcrossPages(t *testing.T) {
	t.Setenv(ignoringEnv, "1")
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "lifecycle/ping" })
	for _, tc := range []struct {
		quirk string
		want  []string // page 2's PRO1008 and PRO1010 verdicts
	}{
		// (The loop's page lists the first page's tool again: the walk
		// begun again, which PRO1008 warns of once, not a name listed
		// twice.)
		{"cursor-loop", []string{"PRO1008 warn", "PRO1010 pass"}},
		{"paged-repeat", []string{"PRO1008 pass", "PRO1010 warn"}},
		{"paged", []string{"PRO1008 pass", "PRO1010 pass"}},
	} {
		t.Run(tc.quirk, func(t *testing.T) {
			t.Setenv(quirkEnv, tc.quirk)
			rows, _ := stdioCorpusRun(t, transport.Limits{Timeout: 2 * time.Second, Quiet: 50 * time.Millisecond}, 1, fx)
			var got []string
			for _, l := range rows {
				if f := strings.Fields(l); len(f) >= 3 && f[0] == "setup/tools-list/page-2" && (f[1] == "PRO1008" || f[1] == "PRO1010") {
					got = append(got, f[1]+" "+f[2])
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("page 2's verdicts (-want +got):\n%s\n%s", diff, strings.Join(rows, "\n"))
			}
		})
	}
}

// verdictsOnly keeps the fixture, check and status of each verdict row.
func verdictsOnly(rows []string) []string {
	var out []string
	for _, l := range rows {
		if f := strings.Fields(l); len(f) >= 3 && !strings.HasPrefix(l, "note: ") {
			out = append(out, strings.Join(f[:3], " "))
		}
	}
	return out
}

// TestSlowStartNotSilence: a stdio server that reads nothing for longer
// than --timeout after each start (the pipe's process, the staged
// fixtures' own, a restart) gets the verdicts of one that starts at
// once, in sequence and multiplexed: its start is not silence.
func TestSlowStartNotSilence(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool {
		return f.Stage == "" && f.ID != "rpc/garbage" && f.ID != "lifecycle/ping" && f.ID != "rpc/notification"
	})
	if len(fx) < 5 {
		t.Fatalf("%d fixtures: the corpus lacks the staged fixtures or rpc/garbage, lifecycle/ping, rpc/notification", len(fx))
	}
	lim := transport.Limits{Timeout: 400 * time.Millisecond, Quiet: 50 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	want, _ := stdioCorpusRun(t, lim, 8, fx)
	t.Setenv(slowStartEnv, "700ms")
	for _, parallel := range []int{1, 8} {
		got, _ := stdioCorpusRun(t, lim, parallel, fx)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("--parallel %d: a server slow to start is judged otherwise (-quick start +slow start):\n%s", parallel, diff)
		}
	}
}

// TestSlowStartAfterRestart: in 2026-07-28 a restarted stdio server gets
// no handshake, so a fixture's request is the first line it reads; a
// slow start must not count against that request's --timeout in a
// multiplexed run either.
func TestSlowStartAfterRestart(t *testing.T) {
	t.Setenv(serverEnv, "crash")
	t.Setenv(replyLatencyEnv, "20ms")
	lim := transport.Limits{Timeout: 400 * time.Millisecond, Quiet: 50 * time.Millisecond}
	want, _ := stdioCorpusRunAt(t, lim, 8, nil, envelope.V20260728)
	if !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, " PRO1005 fail ") }) {
		t.Fatalf("no fixture killed the server: the crash fault did not work, and no restart was tested")
	}
	t.Setenv(slowStartEnv, "700ms")
	got, _ := stdioCorpusRunAt(t, lim, 8, nil, envelope.V20260728)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a server slow to start is judged otherwise after a restart (-quick start +slow start):\n%s", diff)
	}
}

// TestMultiplexedNotificationsLast: a multiplexed run sends the
// fixtures that carry only notifications after every request, so their
// quiet moments pass inside the requests' silence window, but for
// notifications/initialized, which keeps its place; the output keeps
// the corpus order of a run in sequence.
func TestMultiplexedNotificationsLast(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.Stage != "" })
	lim := transport.Limits{Timeout: 500 * time.Millisecond, Quiet: 50 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	seq, _ := stdioCorpusRun(t, lim, 1, fx)
	log := filepath.Join(t.TempDir(), "servers.log")
	t.Setenv(ignoringEnv, log)
	mux, _ := stdioCorpusRun(t, lim, 8, fx)
	evs, raw := readServerLog(t, log)
	// The pipe's process: the handshake's notifications/initialized is
	// its first line without an id; the fixtures' lines follow.
	main, handshake, firstNote, lastReq, reinit := evs[0].pid, false, -1, -1, -1
	for i, e := range evs {
		switch {
		case e.pid != main || e.what != "line":
		case e.id == noID && !handshake:
			handshake = true
		case !handshake || runnersOwn(e.id):
			// the handshake's requests, markers and liveness probes
		case e.id == noID && e.method == "notifications/initialized":
			reinit = i
		case e.id == noID:
			if firstNote < 0 {
				firstNote = i
			}
		default:
			lastReq = i
		}
	}
	if firstNote < 0 || lastReq < 0 || reinit < 0 {
		t.Fatalf("the pipe's server read no fixture notification, no fixture request or no second notifications/initialized:\n%s", raw)
	}
	if lastReq > firstNote {
		t.Errorf("a fixture request (line %d of the log) went after a fixture notification (line %d): notifications should go last\n%s", lastReq+1, firstNote+1, raw)
	}
	if reinit > lastReq {
		t.Errorf("notifications/initialized (line %d of the log) went after the requests (the last at line %d): it should keep its place\n%s", reinit+1, lastReq+1, raw)
	}
	if diff := cmp.Diff(seq, mux); diff != "" {
		t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
	}
}

// TestStdioLastAfterStagedMeetsFreshProcess: a fixture that declares
// order: last meets a fresh process after the staged fixtures, as it
// does in a run in sequence, whether the staged ones ran on the pipe's
// process or beside it.
func TestStdioLastAfterStagedMeetsFreshProcess(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "lifecycle/ping-before-initialize" })
	last, err := fixtures.Parse("last.txtar", []byte("Sent last.\n-- fixture --\nid: mine/last\norder: last\n-- body --\n{\"jsonrpc\":\"2.0\",\"id\":\"wymcp-last-1\",\"method\":\"ping\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fx) != 1 || fx[0].Stage == "" {
		t.Fatal("the corpus lacks the staged fixture lifecycle/ping-before-initialize: the test no longer tests this")
	}
	fx = append(fx, last)
	for _, parallel := range []int{1, 8} {
		log := filepath.Join(t.TempDir(), "servers.log")
		t.Setenv(ignoringEnv, log)
		stdioCorpusRun(t, transport.Limits{Timeout: time.Second, Quiet: 50 * time.Millisecond}, parallel, fx)
		evs, raw := readServerLog(t, log)
		first, got := evs[0].pid, 0
		for _, e := range evs {
			if e.id == "wymcp-last-1" {
				got = e.pid
			}
		}
		if got == 0 || got == first {
			t.Errorf("--parallel %d: the order: last fixture went to process %d, the pipe's first is %d: want a fresh one\n%s", parallel, got, first, raw)
		}
	}
}

// windowAndStarts reads the servers' log of a multiplexed run: the first
// process is the pipe's, and its last liveness probe is the one sent
// when its silence window ended. It returns that process, when the first
// other process started, and when that probe came.
func windowAndStarts(t *testing.T, log string) (main int, first, end int64) {
	t.Helper()
	evs, raw := readServerLog(t, log)
	for _, e := range evs {
		switch {
		case e.what == "start" && main == 0:
			main = e.pid
		case e.what == "start" && first == 0:
			first = e.at
		case e.pid == main && runnersOwn(e.id):
			end = e.at // (markers go with the requests, before it)
		}
	}
	if main == 0 || end == 0 || first == 0 {
		t.Fatalf("the servers' log shows no pipe process, no liveness probe after its window, or no staged process:\n%s", raw)
	}
	return main, first, end
}

// TestSlowStreamOpenJudged: a server that takes longer than a stream
// look to open its subscriptions/listen stream (its headers come 1.3 s
// late, within --timeout) gets the verdicts of one that opens it at once,
// in sequence and concurrently: the look starts when the reply does, and
// the wait before it is the exchange's own. It used to end the look
// before the headers came and report "could not judge".
func TestSlowStreamOpenJudged(t *testing.T) {
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "subscriptions/listen" })
	if len(fx) != 1 {
		t.Fatal("the corpus lacks subscriptions/listen: the test no longer tests this")
	}
	srv, err := refserver.New(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var delay atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Mcp-Method"), "subscriptions/listen") {
			time.Sleep(time.Duration(delay.Load()))
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); hs.Close() })
	target := func() runner.Target {
		return &runner.HTTPTarget{T: &transport.HTTP{URL: hs.URL + "/mcp", Limits: transport.Limits{Timeout: 5 * time.Second}}}
	}
	want, _ := corpusRun(t, target(), 1, fx)
	if !slices.ContainsFunc(want, func(l string) bool { return strings.HasPrefix(l, "subscriptions/listen PRO1009 pass") }) {
		t.Fatalf("the listen stream was not judged even at once; the test no longer tests this:\n%s", strings.Join(want, "\n"))
	}
	delay.Store(int64(1300 * time.Millisecond))
	for _, parallel := range []int{1, 8} {
		got, _ := corpusRun(t, target(), parallel, fx)
		if diff := cmp.Diff(verdictsOnly(want), verdictsOnly(got)); diff != "" {
			t.Errorf("--parallel %d, stream opened 1.3 s late (-at once +late):\n%s", parallel, diff)
		}
	}
}

// TestResentSilenceOnce: requests open when the server died of another
// message go again to a fresh process side by side, each after its
// marker, and share one --timeout: sent again alone, in turn, each
// waited a window of its own (the go-sdk server's run took two windows
// for two such requests). The server here answers nothing but
// initialize and ping, and dies on a batch. The verdicts are those of a
// run in sequence.
func TestResentSilenceOnce(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	t.Setenv(ignoringEnv, "1")
	t.Setenv(quirkEnv, "mute-dies-on-batch")
	// (In corpus order, the batch last: nothing is sent after the death.)
	want := []string{"prompts/list", "resources/list", "rpc/batch"}
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return !slices.Contains(want, f.ID) })
	if len(fx) != len(want) {
		t.Fatalf("the corpus lacks some of %v: the test no longer tests this", want)
	}
	lim := transport.Limits{Timeout: timeout, Quiet: 50 * time.Millisecond}
	seq, _ := stdioCorpusRunAt(t, lim, 1, fx, envelope.V20251125)
	mux, tmux := stdioCorpusRunAt(t, lim, 8, fx, envelope.V20251125)
	silent := 0
	for _, l := range mux {
		if strings.Contains(l, " RPC1006 fail ") {
			silent++
		}
	}
	if silent != 2 {
		t.Errorf("%d RPC1006 fails, want the 2 requests the server left silent:\n%s", silent, strings.Join(mux, "\n"))
	}
	t.Logf("multiplexed run: %v with --timeout %v", tmux, timeout)
	if tmux > 2*timeout {
		t.Errorf("multiplexed run took %v with --timeout %v: the requests sent again did not share one window", tmux, timeout)
	}
	if diff := cmp.Diff(seq, mux); diff != "" {
		t.Errorf("multiplexed run differs from the run in sequence (-sequence +multiplexed):\n%s", diff)
	}
}
