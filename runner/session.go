package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
)

// maxRenewals bounds the sessions a run begins after the server ended
// its own: a server that ends every session at once is judged on its
// 404s, not chased.
const maxRenewals = 8

// sessionEnded: a fixture's request in the run's own session was answered
// as a server answers in a session it ended, as it may at any time
// (T-SESS-5, T-SESS-3); a client then begins a new session. A fixture
// that probes sessions (its own session header, a stage, DELETE) is
// judged on what it got.
func (r *run) sessionEnded(f *fixtures.Fixture, ex *envelope.Exchange, exp *expect.Expectation) bool {
	if ex.Transport != envelope.HTTP || r.sess.sessionID == "" || f.Stage != "" || f.Last || r.renewals >= maxRenewals ||
		envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id") != r.sess.sessionID || ex.Request.HTTPMethod() != "POST" {
		return false
	}
	for _, h := range f.Headers {
		if strings.EqualFold(h.Name, "Mcp-Session-Id") {
			return false
		}
	}
	// (An initialize in the session is one too: SessionMayHaveEnded
	// leaves it out, as its 404 may be a refusal of the session header
	// on an initialize, but sent again in a new session it is judged on
	// whatever it gets there.)
	return exp.Condition != expect.CondSession && expect.SessionRefusal(ex, exp.Version, r.facts)
}

// renew begins a new session in place of the one the server ended
// under fixture id (ended is the exchange that said so), as a 2025
// client does (T-SESS-3): initialize, judged and recorded so that a
// transcript's judge knows the session too, then
// notifications/initialized. Only when nothing else is in flight.
// renewed is false when no new session could be had; the fixture is
// then judged on its 404.
func (l *lane) renew(ctx context.Context, id string, ended *envelope.Exchange) (renewed bool, err error) {
	r := l.r
	r.renewals++
	name := fmt.Sprintf("session/renew-%d/initialize", r.renewals)
	body := initializeBody(r.id(), r.sess.spoken())
	h := r.stdHeaders(body)
	envelope.HeaderDel(h, "Mcp-Session-Id")
	envelope.HeaderDel(h, "MCP-Protocol-Version")
	ex, err := l.sendJudged(ctx, name, envelope.Request{Header: h, Body: body}, true)
	if err != nil {
		return false, err
	}
	if err := l.judge(name, &ex, nil, nil); err != nil {
		return false, err
	}
	sid := ""
	if ex.Response != nil && ex.Failure == "" {
		sid = envelope.HeaderGet(ex.Response.Header, "Mcp-Session-Id")
	}
	if sid == "" || sid == r.sess.sessionID {
		r.sink.Note(fmt.Sprintf("the server answered %s with HTTP %d in the run's session, as in one it ended (T-SESS-3); a new session could not be had (%s), so it is judged on that answer", id, ended.Response.Status, why(&ex)))
		return false, nil
	}
	r.sink.Note(fmt.Sprintf("the server answered %s with HTTP %d in the run's session, as in one it ended, which it may do at any time (T-SESS-5): the run began a new session, as a client does (T-SESS-3), and sent the fixture again in it", id, ended.Response.Status))
	r.sess.sessionID = sid
	r.facts = r.facts.WithSession(sid)
	r.sink.Facts(r.facts) // (so the recording knows the session too)
	note := initializedBody()
	r.send(ctx, envelope.Request{Header: r.stdHeaders(note), Body: note}, false)
	return true, nil
}
