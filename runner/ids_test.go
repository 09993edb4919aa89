package runner_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/transport"
)

// TestIDsOnceInSession: the checker is a requester, so it never uses a
// request id twice in a session (T-RPC-4), in sequence or concurrently.
// A server that keys its bookkeeping by id (the go-sdk's) refuses a
// reused one, and the fixture would be judged on that refusal.
func TestIDsOnceInSession(t *testing.T) {
	for _, tc := range []struct {
		parallel int
		hang     string
	}{{1, ""}, {8, ""}, {8, "tools/call"}} {
		t.Run(fmt.Sprint(tc.parallel, tc.hang), func(t *testing.T) {
			s := &slowSession{hang: tc.hang}
			url := startSlow(t, s)
			corpusRun(t, &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: 300 * time.Millisecond}}}, tc.parallel, nil)
			if n := len(s.used) + len(s.reused); n < 50 {
				t.Fatalf("only %d requests with an id: the corpus did not run", n)
			}
			if len(s.reused) > 0 {
				t.Errorf("%d ids used again in their session (session, id type, id, method): %q", len(s.reused), s.reused)
			}
		})
	}
}

// TestIDsOnceOnPipe: no process of a stdio run reads an id twice, in
// sequence or multiplexed.
func TestIDsOnceOnPipe(t *testing.T) {
	toolsList := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "tools/list" })
	for _, tc := range []struct {
		parallel int
		env      map[string]string
		fx       []*fixtures.Fixture
	}{
		{1, nil, nil}, {8, nil, nil},
		{8, map[string]string{quirkEnv: "die-on:tools/list"}, nil},
		{8, map[string]string{quirkEnv: "note-last-id"}, nil},
		// A line without an id comes while tools/list waits for its
		// slow reply: it could be that reply, so tools/list goes again,
		// alone.
		{8, map[string]string{slowMethodEnv: "tools/list:300ms", strayEnv: "tools/list:100ms"}, toolsList},
		// Fixtures that write their ids as numbers, in the range the
		// runner's own requests count through, the negotiation's first.
		{8, nil, withLiteralIDs(t, 1, 40)},
	} {
		t.Run(fmt.Sprint(tc.parallel, tc.env), func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "servers.log")
			t.Setenv(ignoringEnv, log)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			stdioCorpusRun(t, transport.Limits{Timeout: 500 * time.Millisecond, Quiet: 50 * time.Millisecond}, tc.parallel, tc.fx)
			evs, _ := readServerLog(t, log)
			seen, n := map[string]bool{}, 0
			var reused []string
			for _, e := range evs {
				if e.what != "line" || e.id == noID || e.id == unreadable {
					continue
				}
				n++
				k := fmt.Sprintf("%d %s", e.pid, e.id)
				if seen[k] {
					reused = append(reused, k)
				}
				seen[k] = true
			}
			if n < 50 && tc.fx == nil || n < 2 {
				t.Fatalf("only %d lines with an id: the corpus did not run", n)
			}
			if len(reused) > 0 {
				t.Errorf("%d ids read again by the same process (pid, id): %q", len(reused), reused)
			}
		})
	}
}

// withLiteralIDs is the corpus and a ping for every id in [from, to),
// each written as a number, as a user's fixture may write it.
func withLiteralIDs(t *testing.T, from, to int) []*fixtures.Fixture {
	t.Helper()
	fx := embeddedWithout(t, func(*fixtures.Fixture) bool { return false })
	for id := from; id < to; id++ {
		f, err := fixtures.Parse("literal.txtar", fmt.Appendf(nil, "a ping whose id is written as a number\n-- fixture --\nid: user/literal-%d\n-- body --\n{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}\n", id, id))
		if err != nil {
			t.Fatal(err)
		}
		fx = append(fx, f)
	}
	return fx
}

// TestIDsSameInPartialRun: a fixture sends the ids it sends in a run of
// the whole corpus when it runs with a few others, as --run does: a
// user reproducing a finding sees the same exchange.
func TestIDsSameInPartialRun(t *testing.T) {
	target := func() runner.Target {
		s := &slowSession{}
		return &runner.HTTPTarget{T: &transport.HTTP{URL: startSlow(t, s), Limits: transport.Limits{Timeout: 2 * time.Second}}}
	}
	sent := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			if strings.Contains(l, " sent ") {
				out = append(out, l)
			}
		}
		return out
	}
	whole := sent(must(corpusRun(t, target(), 1, nil)))
	// Every seventh fixture, in reverse order.
	all := embeddedWithout(t, func(*fixtures.Fixture) bool { return false })
	var some []*fixtures.Fixture
	for i := len(all) - 1; i >= 0; i -= 7 {
		some = append(some, all[i])
	}
	part := sent(must(corpusRun(t, target(), 1, some)))
	if len(part) < 5 {
		t.Fatalf("only %d exchanges in the partial run", len(part))
	}
	for _, l := range part {
		if !slices.Contains(whole, l) {
			t.Errorf("sent in the partial run, not in the whole one: %s", l)
		}
	}
}

func must[T any](v T, _ time.Duration) T { return v }

// TestStageIDsNotFromRestarts: the initialize that opens a staged
// fixture's session is reported; its id is the same whether or not the
// server died and was restarted before, so two runs of one server give
// the same report.
func TestStageIDsNotFromRestarts(t *testing.T) {
	stageInits := func(quirk string) []string {
		t.Setenv(ignoringEnv, "1")
		t.Setenv(quirkEnv, quirk)
		var out []string
		for _, l := range must(stdioCorpusRun(t, transport.Limits{Timeout: 500 * time.Millisecond, Quiet: 50 * time.Millisecond}, 8, nil)) {
			if name, _, ok := strings.Cut(l, " sent "); ok && strings.HasSuffix(name, "/initialize") {
				out = append(out, l)
			}
		}
		return out
	}
	calm, dying := stageInits(""), stageInits("die-on:tools/list")
	if len(calm) == 0 {
		t.Fatal("no staged fixture opened a session with initialize: the test no longer tests this")
	}
	if diff := cmp.Diff(calm, dying); diff != "" {
		t.Errorf("staged initialize differs once the server died before (-calm +dying):\n%s", diff)
	}
}

// TestReusedIDNoSecondReply: a user's fixtures may write the same id
// twice. When the second request's reply comes late, after other
// exchanges opened, it is no second response to the first request (an
// id written twice names neither for sure): neither fixture fails
// RPC1006, and each is judged as when the reply comes at once. The
// twin of the second-response cases (TestMultiplexedSecondReplyOwned).
func TestReusedIDNoSecondReply(t *testing.T) {
	var fx []*fixtures.Fixture
	add := func(name string, id int, method string) {
		f, err := fixtures.Parse(name+".txtar", fmt.Appendf(nil, "A user's fixture.\n-- fixture --\nid: user/%s\n-- body --\n{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":%q}\n", name, id, method))
		if err != nil {
			t.Fatal(err)
		}
		fx = append(fx, f)
	}
	add("first", 5, "tools/list")
	add("again", 5, "prompts/list")
	for i := range 6 {
		add(fmt.Sprint("ping-", i), 6+i, "ping")
	}
	lim := transport.Limits{Timeout: 2 * time.Second, Quiet: 50 * time.Millisecond}
	t.Setenv(ignoringEnv, "1")
	for _, parallel := range []int{1, 8} {
		t.Run(fmt.Sprint(parallel), func(t *testing.T) {
			t.Setenv(slowMethodEnv, "")
			prompt, _ := stdioCorpusRunAt(t, lim, parallel, fx, "2025-11-25")
			// Late: past the marker's reply and its grace (twice the
			// marker's round trip, on a loaded machine too), while the
			// pings' exchanges run.
			t.Setenv(slowMethodEnv, "prompts/list:600ms")
			late, _ := stdioCorpusRunAt(t, lim, parallel, fx, "2025-11-25")
			mine := func(rows []string) []string {
				var out []string
				for _, r := range verdictsOnly(rows) {
					if strings.HasPrefix(r, "user/first ") || strings.HasPrefix(r, "user/again ") {
						out = append(out, r)
					}
				}
				return out
			}
			want := mine(prompt)
			if !slices.Contains(want, "user/first RPC1006 pass") || !slices.Contains(want, "user/again RPC1006 pass") {
				t.Fatalf("answered at once, want RPC1006 passed for both fixtures:\n%s", strings.Join(prompt, "\n"))
			}
			if diff := cmp.Diff(want, mine(late)); diff != "" {
				t.Errorf("verdicts changed when the reply to the reused id came late (-at once +late):\n%s\nall rows:\n%s", diff, strings.Join(late, "\n"))
			}
		})
	}
}
