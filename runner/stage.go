package runner

import (
	"context"
	"fmt"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
)

// fireStaged sends one variant of a fixture in the lifecycle stage the
// fixture asks for, after bringing back a server that died (or fell out
// of step) on the exchange before, and puts the session back afterwards.
// A staged fixture changes the session the others share, so it runs only
// when nothing else is in flight (see fireAll).
func (l *lane) fireStaged(ctx context.Context, f *fixtures.Fixture, v variant) error {
	r := l.r
	stdio := r.t.Transport() == envelope.Stdio
	if f.Stage == "" || !stdio {
		if ok, err := l.revive(ctx, variantID(f, v)); !ok {
			return err
		}
	} else {
		// The stage starts a process of its own: reviving this one
		// first (a start and a handshake) would be wasted.
		r.mu.Lock()
		r.stale = false
		r.mu.Unlock()
	}
	if f.Stage == "" {
		return l.fire(ctx, f, v)
	}
	saved := r.sess
	defer func() {
		r.sess.sessionID = saved.sessionID
		if stdio {
			// The process is in the stage's state, not the negotiated
			// one: the next fixture gets a fresh one, handshake included.
			r.mu.Lock()
			r.stale = true
			r.mu.Unlock()
		}
	}()
	if err := l.enterStage(ctx, f, v); err != nil {
		return l.notSent(variantID(f, v), err.Error())
	}
	if stdio && f.Stage == fixtures.StageFresh {
		r.mu.Lock()
		r.fresh = true
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			r.fresh = false
			r.mu.Unlock()
		}()
	}
	return l.fire(ctx, f, v)
}

// revive restarts a stdio server that died, or fell out of step, on the
// exchange before; ok is false when it could not be, and the exchange
// was reported as not sent.
func (l *lane) revive(ctx context.Context, id string) (ok bool, err error) {
	r := l.r
	r.mu.Lock()
	stale := r.stale
	r.stale = false
	r.mu.Unlock()
	if died, _ := r.t.Died(); !died && !stale {
		return true, nil
	}
	if l.mux != nil {
		l.mux.restarted()
	}
	if err := r.restart(ctx); err != nil {
		return false, l.notSent(id, "the server could not be restarted: "+err.Error())
	}
	return true, nil
}

// enterStage opens the connection a staged fixture is sent on: one that
// has not initialized (StageFresh), or one whose initialize was answered
// and whose notifications/initialized is withheld (StageInitializing).
// Over HTTP a connection is a session: none, or a new one. The
// initialize is an exchange the verdicts depend on: judged and recorded.
func (l *lane) enterStage(ctx context.Context, f *fixtures.Fixture, v variant) error {
	r := l.r
	r.sess.sessionID = ""
	if r.t.Transport() == envelope.Stdio {
		if err := r.restartTarget(ctx); err != nil {
			return fmt.Errorf("a fresh server process: %w", err)
		}
		r.mu.Lock()
		r.staged = true
		r.mu.Unlock()
	}
	if f.Stage == fixtures.StageFresh {
		return nil
	}
	body := initializeBody(r.stageID(f), r.sess.spoken())
	req := envelope.Request{Header: r.stdHeaders(body), Body: body}
	name := variantID(f, v) + "/initialize"
	ex, err := l.sendJudged(ctx, name, req, true)
	if err != nil {
		return err
	}
	if err := l.judge(name, &ex, nil, nil); err != nil {
		return err
	}
	if ex.Failure != "" || ex.Response == nil {
		return fmt.Errorf("initialize for the stage: %s", why(&ex))
	}
	r.sess.sessionID = envelope.HeaderGet(ex.Response.Header, "Mcp-Session-Id")
	if r.sess.sessionID != "" {
		// The stage's session is one the server issued and holds: a
		// request in it is owed what a request in the run's own is (a
		// ping its result, T-LIFE-5). The recording says so too, so
		// lint judges the stage's exchanges as the run did.
		r.facts = r.facts.WithSession(r.sess.sessionID)
		r.sink.Facts(r.facts)
	}
	return nil
}

func variantID(f *fixtures.Fixture, v variant) string {
	if v.suffix == "" {
		return f.ID
	}
	return f.ID + "/" + v.suffix
}
