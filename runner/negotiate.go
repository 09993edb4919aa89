package runner

import (
	"context"
	"fmt"
	"slices"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
)

// negotiate settles the protocol version (digest §1 and T-COMPAT-4):
// with "auto", probe server/discover (2026-07-28), else initialize with
// 2025-11-25, then 2025-06-18. The handshake exchanges of the version
// chosen are judged like fixtures; probes of an era the server does not
// speak are not (they would only produce false alarms) but are noted.
func (r *run) negotiate(ctx context.Context) (Result, error) {
	switch v := r.o.Protocol; v {
	case "", "auto":
	case envelope.V20260728:
		ex, ok := r.discover(ctx)
		if !ok {
			r.sess.version = v
			r.judge("negotiate/discover", &ex, nil)
			return Result{Version: v, Negotiated: "forced with --protocol (server/discover failed: " + why(&ex) + ")"}, nil
		}
		return Result{Version: v, Negotiated: "forced with --protocol; server/discover confirms it"}, r.judge("negotiate/discover", &ex, nil)
	default:
		if err := r.initialize(ctx, v, true); err != nil {
			return Result{}, err
		}
		return Result{Version: r.sess.version, Negotiated: "forced with --protocol; initialize answered " + r.sess.version}, nil
	}

	ex, ok := r.discover(ctx)
	if ok {
		return Result{Version: envelope.V20260728, Negotiated: "auto: server/discover lists 2026-07-28"}, r.judge("negotiate/discover", &ex, nil)
	}
	if ex.Failure != "" && ex.Response == nil && r.t.Transport() == envelope.HTTP {
		// Nothing answered at all: there is no server to negotiate with.
		return Result{}, errorf("server/discover: %s", ex.Failure)
	}
	r.sink.Note("server/discover did not confirm 2026-07-28 (" + why(&ex) + "); trying initialize")
	if died, _ := r.t.Died(); died {
		if err := r.t.Restart(ctx); err != nil {
			return Result{}, errorf("restarting after server/discover: %v", err)
		}
	}
	if err := r.initialize(ctx, envelope.V20251125, false); err != nil {
		return Result{}, err
	}
	return Result{Version: r.sess.version, Negotiated: "auto: server/discover failed; initialize answered " + r.sess.version}, nil
}

// why summarises an exchange that did not do what was hoped, for notes.
func why(ex *envelope.Exchange) string {
	switch {
	case ex.Failure != "":
		return ex.Failure
	case ex.Response == nil:
		return "no reply"
	}
	m := reply(ex)
	if e := m.Get("error"); e.Exists() {
		return fmt.Sprintf("HTTP %d, error %s", ex.Response.Status, m.Get("error.code").Raw)
	}
	return fmt.Sprintf("HTTP %d, no DiscoverResult", ex.Response.Status)
}

// reply is the response message of an exchange, split out of the body
// or the SSE stream the way the checks do (a zero Message when none).
func reply(ex *envelope.Exchange) envelope.Message {
	if r := checks.NewReply(ex.Response, &envelope.Expectation{}); r.Response != nil {
		return *r.Response
	}
	return envelope.Message{}
}

// discover sends server/discover as a 2026-07-28 client would; ok when
// the result lists 2026-07-28.
func (r *run) discover(ctx context.Context) (envelope.Exchange, bool) {
	saved := r.sess.version
	r.sess.version = envelope.V20260728
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{"_meta":{%q:%q,%q:{}}}}`,
		r.id(), envelope.MetaProtocolVersion, envelope.V20260728, envelope.MetaClientCapabilities)
	ex := r.send(ctx, envelope.Request{Header: r.stdHeaders(body), Body: body}, true)
	m := reply(&ex)
	for _, v := range m.Get("result.supportedVersions").Array() {
		if v.Str == envelope.V20260728 {
			return ex, true
		}
	}
	r.sess.version = saved
	return ex, false
}

// initialize runs the 2025-xx handshake: initialize, then
// notifications/initialized, keeping the session id. With forced, the
// version asked for is the one judged even if the server picks another.
func (r *run) initialize(ctx context.Context, want string, forced bool) error {
	ask := []string{want}
	if !forced && want == envelope.V20251125 {
		ask = append(ask, envelope.V20250618)
	}
	var last string
	for _, v := range ask {
		r.sess.version, r.sess.sessionID = "", ""
		body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"wymcp-check","version":"1"}}}`, r.id(), v)
		ex := r.send(ctx, envelope.Request{Header: r.stdHeaders(body), Body: body}, true)
		m := reply(&ex)
		got := m.Get("result.protocolVersion").Str
		if !slices.Contains([]string{envelope.V20251125, envelope.V20250618}, got) {
			last = why(&ex)
			if ex.Failure != "" && ex.Response == nil && r.t.Transport() == envelope.HTTP {
				return errorf("initialize: %s", ex.Failure)
			}
			if died, _ := r.t.Died(); died {
				if err := r.t.Restart(ctx); err != nil {
					return errorf("restarting after initialize: %v", err)
				}
			}
			continue
		}
		r.sess.version = got
		if forced {
			r.sess.version = want
		}
		ex.Version = r.sess.version
		if ex.Response != nil {
			r.sess.sessionID = ex.Response.Header.Get("Mcp-Session-Id")
		}
		if err := r.judge("negotiate/initialize", &ex, nil); err != nil {
			return err
		}
		note := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		nex := r.send(ctx, envelope.Request{Header: r.stdHeaders(note), Body: note}, false)
		return r.judge("negotiate/initialized", &nex, nil)
	}
	return errorf("no protocol version could be negotiated (initialize: %s)", last)
}

// endSession ends a 2025-xx HTTP session with DELETE (T-SESS-4; the
// server may refuse with 405). When the server accepted, a request that
// reuses the ended session must get 404 (T-SESS-3): that probe is judged.
func (r *run) endSession(ctx context.Context) error {
	if r.t.Transport() != envelope.HTTP || r.sess.sessionID == "" {
		return nil
	}
	h := r.stdHeaders(nil)
	h.Del("Content-Type")
	ex := r.t.Conn().Do(ctx, envelope.Request{Method: "DELETE", Header: h}, true)
	switch {
	case ex.Failure != "":
		r.sink.Note("ending the session with DELETE: " + ex.Failure)
		return nil
	case ex.Response.Status == 405:
		r.sink.Note("the server does not let clients end sessions (DELETE: 405)")
		return nil
	case ex.Response.Status >= 300:
		r.sink.Note(fmt.Sprintf("ending the session with DELETE: HTTP %d", ex.Response.Status))
		return nil
	}
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, r.id())
	req := envelope.Request{Header: r.stdHeaders(body), Body: body}
	exp := envelope.Expect(&envelope.Exchange{Transport: envelope.HTTP, Version: r.sess.version, Request: req})
	exp.ErrorRequired, exp.Status, exp.StatusMust, exp.AnyCode = true, []int{404}, true, true
	exp.Detail = "a request in a session the client ended"
	rex := r.send(ctx, req, true)
	return r.judge("session/reuse-after-delete", &rex, &exp)
}
