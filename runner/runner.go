// Package runner drives a live run: it negotiates the protocol version
// with a target, fires each fixture in its own exchange, judges every
// reply with the checks, and hands the verdicts to a sink. It owns the
// protocol choreography (handshake, sessions, standard headers); the
// transport only moves bytes.
package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/tidwall/gjson"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
)

// A Conn sends one request and returns what came back. Implementations
// bound every exchange in time and bytes and never fail for the server's
// misbehaviour: that goes into Exchange.Failure.
type Conn interface {
	Do(ctx context.Context, req envelope.Request, wantReply bool) envelope.Exchange
}

// A Target is the server under test: an HTTP endpoint, or a process the
// runner talks to over stdio.
type Target interface {
	Transport() string
	Conn() Conn
	// Died reports whether the server has died, with what it left
	// (exit status, stderr tail). HTTP targets never die.
	Died() (bool, string)
	// Restart brings a dead server back for the next fixture.
	Restart(ctx context.Context) error
	Close() error
}

// Options configure a run.
type Options struct {
	// Protocol is "auto" or a version to use without probing.
	Protocol string
	Fixtures []*fixtures.Fixture
	// CallTools runs the fixtures that are off by default because they
	// make the server act: CallReadOnly calls the tools that declare
	// readOnlyHint, CallAll every tool. Empty calls none.
	CallTools string
	Contract  *envelope.Contract
	Schemas   checks.SchemaValidator
	Checks    []*checks.Check
	// Secrets are the headers added to every request from --header: a
	// reply that echoes one is a finding (never quoted).
	Secrets []envelope.Secret
	// Deadline bounds the whole run; fixtures not reached by then get
	// error verdicts, so the report is complete.
	Deadline time.Duration
}

// Values of Options.CallTools.
const (
	CallReadOnly = "readonly"
	CallAll      = "all"
)

// A Sink receives the run as it happens.
type Sink interface {
	Exchange(fixture string, ex *envelope.Exchange, vs []checks.Verdict) error
	Note(string)
}

// ErrNotDriven means the target could not be driven at all: it did not
// start, is unreachable, or no protocol version could be negotiated.
var ErrNotDriven = errors.New("target could not be driven")

// Result says how the run went, for the report's header.
type Result struct {
	Version    string // the protocol version judged
	Negotiated string // how it was chosen
}

// Run negotiates, then runs every fixture. It returns an error wrapping
// ErrNotDriven when nothing could be judged, and a sink's error as is.
func Run(ctx context.Context, t Target, o Options, sink Sink) (Result, error) {
	if o.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Deadline)
		defer cancel()
	}
	s, res, err := Open(ctx, t, o, sink)
	if err != nil {
		return res, err
	}
	for _, f := range o.Fixtures {
		if err := s.Fire(ctx, f); err != nil {
			return res, err
		}
	}
	return res, s.End(ctx)
}

// A Session is a negotiated conversation with a target, for sending
// fixtures one by one (Run, or send by hand).
type Session struct{ r *run }

// Open negotiates the protocol version and lists the server's tools.
func Open(ctx context.Context, t Target, o Options, sink Sink) (*Session, Result, error) {
	if o.Checks == nil {
		o.Checks = checks.All()
	}
	r := &run{t: t, o: o, sink: sink}
	res, err := r.negotiate(ctx)
	if err != nil {
		return nil, res, err
	}
	r.discoverTools(ctx)
	return &Session{r}, res, nil
}

// Fire sends one fixture (or its variants) and hands the verdicts to the
// sink.
func (s *Session) Fire(ctx context.Context, f *fixtures.Fixture) error { return s.r.fixture(ctx, f) }

// End ends a 2025-xx HTTP session (and judges the reuse of the ended
// session).
func (s *Session) End(ctx context.Context) error { return s.r.endSession(ctx) }

// SessionID is the 2025-xx HTTP session id, "" when there is none.
func (s *Session) SessionID() string { return s.r.sess.sessionID }

// Version is the negotiated protocol version.
func (s *Session) Version() string { return s.r.sess.version }

type run struct {
	t    Target
	o    Options
	sink Sink
	sess session
	// stale: a stdio exchange failed (timed out, flooded), so a late reply
	// could land in the next fixture's exchange; restart before it.
	stale bool
}

// session is what the handshake established.
type session struct {
	version   string
	sessionID string // 2025-xx HTTP
	tools     []tool
	nextID    int
}

func (r *run) judge(fixture string, ex *envelope.Exchange, exp *envelope.Expectation) error {
	if len(r.o.Secrets) > 0 {
		if exp == nil {
			e := envelope.Expect(ex)
			exp = &e
		}
		exp.Secrets = r.o.Secrets
	}
	vs := checks.Judge(checks.Input{Fixture: fixture, Exchange: ex, Expect: exp, Contract: r.o.Contract, Schemas: r.o.Schemas}, r.o.Checks)
	return r.sink.Exchange(fixture, ex, vs)
}

// skipAll reports a fixture that does not apply: every check skips.
func (r *run) skipAll(fixture, reason string) error {
	vs := make([]checks.Verdict, 0, len(r.o.Checks))
	for _, c := range r.o.Checks {
		vs = append(vs, checks.Verdict{Fixture: fixture, Check: c, Status: checks.StatusSkip, Reason: reason})
	}
	return r.sink.Exchange(fixture, nil, vs)
}

// errorAll reports a fixture that could not be judged.
func (r *run) errorAll(fixture, reason string) error {
	vs := make([]checks.Verdict, 0, len(r.o.Checks))
	for _, c := range r.o.Checks {
		vs = append(vs, checks.Verdict{Fixture: fixture, Check: c, Status: checks.StatusError, Reason: reason})
	}
	return r.sink.Exchange(fixture, nil, vs)
}

// send performs one exchange and notes a death of the server.
func (r *run) send(ctx context.Context, req envelope.Request, wantReply bool) envelope.Exchange {
	ex := r.t.Conn().Do(ctx, req, wantReply)
	ex.Version = r.sess.version
	if died, why := r.t.Died(); died {
		ex.Died = why
	}
	if ex.Failure != "" && r.t.Transport() == envelope.Stdio {
		r.stale = true
	}
	return ex
}

// stdHeaders are the headers a conforming client sends for a request of
// the negotiated version (digest HDR26 / SESSION25).
func (r *run) stdHeaders(body []byte) http.Header {
	h := http.Header{}
	if r.t.Transport() != envelope.HTTP {
		return h
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	switch r.sess.version {
	case envelope.V20260728:
		h.Set("MCP-Protocol-Version", envelope.V20260728)
		m := envelope.Parse(body)
		if method := m.Get("method"); method.Type.String() == "String" {
			h.Set("Mcp-Method", method.Str)
			if name, ok := nameValue(&m, method.Str); ok {
				h.Set("Mcp-Name", envelope.EncodeHeaderValue(name))
			}
			if method.Str == "tools/call" {
				r.paramHeaders(h, &m)
			}
		}
	case "":
	default:
		h.Set("MCP-Protocol-Version", r.sess.version)
		if r.sess.sessionID != "" {
			h.Set("Mcp-Session-Id", r.sess.sessionID)
		}
	}
	return h
}

// paramHeaders mirrors the arguments a tool marks with x-mcp-header into
// Mcp-Param-* headers, as a conforming 2026-07-28 client does (T-HDR-4):
// strings as they are (Base64 sentinel when needed), integers in
// decimal, booleans as true or false; null or absent sends nothing.
func (r *run) paramHeaders(h http.Header, m *envelope.Message) {
	name := m.Get("params.name").Str
	i := slices.IndexFunc(r.sess.tools, func(t tool) bool { return t.name == name })
	if i < 0 {
		return
	}
	args := m.Get("params.arguments")
	gjson.GetBytes(r.sess.tools[i].input, "properties").ForEach(func(prop, schema gjson.Result) bool {
		hn := schema.Get("x-mcp-header")
		if hn.Type != gjson.String || hn.Str == "" {
			return true
		}
		v := args.Get(envelope.JoinPath("", prop.Str))
		switch {
		case v.Type == gjson.String:
			h.Set("Mcp-Param-"+hn.Str, envelope.EncodeHeaderValue(v.Str))
		case v.Type == gjson.Number && envelope.IsInteger(v.Raw):
			h.Set("Mcp-Param-"+hn.Str, v.Raw)
		case v.Type == gjson.True, v.Type == gjson.False:
			h.Set("Mcp-Param-"+hn.Str, v.Raw)
		}
		return true
	})
}

func nameValue(m *envelope.Message, method string) (string, bool) {
	var v = m.Get("params.name")
	if method == "resources/read" {
		v = m.Get("params.uri")
	} else if method != "tools/call" && method != "prompts/get" {
		return "", false
	}
	return v.Str, v.Type.String() == "String"
}

func (r *run) id() int {
	r.sess.nextID++
	return r.sess.nextID
}

func errorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotDriven}, args...)...)
}
