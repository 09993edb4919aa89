package runner

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
)

// fixture runs one fixture: builds its request for the negotiated
// version, sends it on a fresh id space, and judges the reply.
func (r *run) fixture(ctx context.Context, f *fixtures.Fixture) error {
	if ok, why := f.Applies(r.sess.version, r.t.Transport()); !ok {
		return r.skipAll(f.ID, why)
	}
	if f.Off && r.o.CallTools == "" {
		return r.skipAll(f.ID, "off by default: it makes the server act (run with --call-tools)")
	}
	if err := ctx.Err(); err != nil {
		return r.notSent(f.ID, "the run's deadline passed before this fixture")
	}
	variants, why := r.variants(f)
	if why != "" {
		return r.skipAll(f.ID, why)
	}
	for _, v := range variants {
		if err := r.fireStaged(ctx, f, v); err != nil {
			return err
		}
	}
	return nil
}

// restart brings a dead stdio server back and redoes the handshake, so
// the next fixture meets the server as the first one did.
func (r *run) restart(ctx context.Context) error {
	if err := r.t.Restart(ctx); err != nil {
		return err
	}
	if r.sess.version == envelope.V20260728 {
		return nil
	}
	v := r.sess.version
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"wymcp-check","version":"1"}}}`, r.id(), v)
	ex := r.send(ctx, envelope.Request{Header: r.stdHeaders(body), Body: body}, true)
	if ex.Failure != "" {
		return fmt.Errorf("initialize after restart: %s", ex.Failure)
	}
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.send(ctx, envelope.Request{Header: r.stdHeaders(note), Body: note}, false)
	return nil
}

// fire sends one variant of a fixture and judges it.
func (r *run) fire(ctx context.Context, f *fixtures.Fixture, v variant) error {
	id := f.ID
	if v.suffix != "" {
		id += "/" + v.suffix
	}
	body, err := fixtures.Expand(f.Body, v.ctx)
	if err != nil {
		return r.notSent(id, fmt.Sprintf("%s: %v", f.File, err))
	}
	h := http.Header{}
	if !f.NoStdHeaders {
		h = r.stdHeaders(body)
	} else if r.sess.sessionID != "" {
		h.Set("Mcp-Session-Id", r.sess.sessionID)
	}
	for _, e := range f.Headers {
		if e.Drop {
			delHeader(h, e.Name)
			continue
		}
		val, err := fixtures.Expand([]byte(e.Value), v.ctx)
		if err != nil {
			return r.notSent(id, fmt.Sprintf("%s: %v", f.File, err))
		}
		delHeader(h, e.Name)
		// Keep the fixture's own spelling of the name: some probe
		// case-insensitivity (T-HTTP-19).
		h[e.Name] = []string{string(val)}
	}
	if r.t.Transport() != envelope.HTTP {
		h = nil
	}
	req := envelope.Request{Method: f.Method, Header: h, Body: body}
	exp := r.expect(req, f.Expect)
	var ex envelope.Exchange
	if req.Method == "GET" || f.Stream {
		ex = r.openStream(ctx, req)
	} else {
		var err error
		if ex, err = r.sendJudged(ctx, id, req, !exp.NoReply.Set()); err != nil {
			return err
		}
	}
	return r.judge(id, &ex, exp, f.Expect)
}

// delHeader removes a header whatever the case of its name.
func delHeader(h http.Header, name string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
}

// streamLook is how long a GET stream is read: an open SSE stream is the
// expected answer (T-HTTP-12), and it need not ever end.
const streamLook = time.Second

// openStream sends a GET and reads what the stream carries for a moment.
// A stream still open when the look ends is what a conforming server
// does, so that is not a failure of the exchange.
func (r *run) openStream(ctx context.Context, req envelope.Request) envelope.Exchange {
	sctx, cancel := context.WithTimeout(ctx, streamLook)
	defer cancel()
	ex := r.send(sctx, req, false)
	if ex.Failure != "" && ex.Response != nil && ex.Response.Status == 200 &&
		envelope.MediaType(ex.Response.Header.Get("Content-Type")) == "text/event-stream" && ctx.Err() == nil {
		ex.Failure = ""
	}
	return ex
}
