package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/refserver"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/transport"
)

// armOnStart is a Progress that closes armed when the first fixture
// starts: the negotiation is over by then.
type armOnStart struct {
	once  sync.Once
	armed chan struct{}
}

func (a *armOnStart) Started(string)  { a.once.Do(func() { close(a.armed) }) }
func (a *armOnStart) Finished(string) {}

// TestInterruptWhileWaitingForSlot: in a concurrent run, fixtures
// already dispatched wait for a slot while others are in flight. An
// interrupt that comes then must leave them "not run: the run was
// interrupted", as a fixture dispatched after the signal is, and never
// blame the run's deadline (a minute away) with a could-not-judge
// error: an interrupted run's report said the deadline cut it short.
// What the interrupt cut off in flight, a POST or a GET stream's look,
// is not judged either: it is no error of the checker's.
func TestInterruptWhileWaitingForSlot(t *testing.T) {
	prog := &armOnStart{armed: make(chan struct{})}
	arrived := make(chan struct{})
	var once sync.Once
	release := make(chan struct{})
	hs := refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-prog.armed:
				// Every fixture's exchange hangs until the checker
				// gives up on it, so the slots stay held.
				once.Do(func() { close(arrived) })
				select {
				case <-r.Context().Done():
				case <-release:
				}
				return
			default:
			}
			srv.ServeHTTP(w, r)
		}
	})
	// (Registered after refHTTP's, so it runs first: the server's
	// Close waits for its handlers.)
	t.Cleanup(func() { close(release) })
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
		}
		// Let the dispatched fixtures reach the wait for a slot.
		time.Sleep(300 * time.Millisecond)
		cancel(runner.ErrInterrupted)
	}()
	c := &collect{}
	_, err = runner.Run(ctx, &runner.HTTPTarget{T: &transport.HTTP{URL: hs.URL + "/mcp", Limits: transport.Limits{Timeout: 5 * time.Second}}},
		runner.Options{Protocol: envelope.V20260728, Parallel: 2, Fixtures: fx, Contract: envelope.Strict(), Deadline: time.Minute, Progress: prog}, c)
	if err != nil {
		t.Logf("run: %v", err)
	}
	notRun := 0
	var blamed []string
	for _, v := range c.verdicts {
		if strings.Contains(v.Reason, "deadline") || v.Status == checks.StatusError {
			blamed = append(blamed, fmt.Sprintf("%s %s %s %q", v.Fixture, v.Check.ID, v.Status, v.Reason))
		}
		if v.Status == checks.StatusSkip && v.Reason == "not run: the run was interrupted" {
			notRun++
		}
	}
	if len(blamed) > 0 {
		t.Errorf("an interrupted run blames its deadline, or calls what it cut short could-not-judge, in %d verdicts, as:\n  %s", len(blamed), blamed[0])
	}
	if notRun == 0 {
		t.Errorf("no verdict says it was not run for the interrupt")
	}
}
