package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// StdioTarget is a server process spoken to over stdio. When it dies,
// Restart starts a new one from the same command.
type StdioTarget struct {
	argv []string
	lim  transport.Limits
	mu   sync.Mutex
	p    *transport.Stdio
}

// StartStdio starts the server. An error means it could not start at all.
func StartStdio(ctx context.Context, argv []string, lim transport.Limits) (*StdioTarget, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: no command to start", ErrNotDriven)
	}
	t := &StdioTarget{argv: argv, lim: lim}
	if err := t.Restart(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *StdioTarget) Transport() string { return envelope.Stdio }

func (t *StdioTarget) Conn() Conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	return stdioConn{t.p}
}

// Died reports an exited process with its status and stderr tail.
func (t *StdioTarget) Died() (bool, string) {
	t.mu.Lock()
	p := t.p
	t.mu.Unlock()
	exited, err := p.Exited()
	if !exited {
		return false, ""
	}
	status := "exit status 0"
	if err != nil {
		status = err.Error()
	}
	tail := strings.TrimSpace(string(p.Stderr()))
	if len(tail) > 400 {
		tail = "…" + tail[len(tail)-400:]
	}
	if tail == "" {
		return true, status + "; stderr empty"
	}
	return true, fmt.Sprintf("%s; stderr tail: %q", status, tail)
}

// Restart shuts down the current process, if any, and starts a new one.
func (t *StdioTarget) Restart(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.p != nil {
		t.p.Close()
	}
	// The process outlives the request context of a single fixture: it is
	// ended by Close, not by a context.
	p, err := transport.StartStdio(context.WithoutCancel(ctx), t.argv, nil, "", t.lim)
	if err != nil {
		return fmt.Errorf("%w: starting %s: %v", ErrNotDriven, t.argv[0], err)
	}
	t.p = p
	return nil
}

// Close shuts the server down as the spec says: close stdin, wait,
// SIGTERM, SIGKILL.
func (t *StdioTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.p == nil {
		return nil
	}
	return t.p.Close()
}

type stdioConn struct{ p *transport.Stdio }

func (c stdioConn) Do(ctx context.Context, req envelope.Request, wantReply bool) envelope.Exchange {
	return c.p.Do(ctx, req, wantReply)
}

// StderrTail is the end of what the current server process wrote to
// stderr (at most n bytes), for the report: servers log there, and the
// spec lets them (T-STDIO-3), so it is information, not a verdict.
func (t *StdioTarget) StderrTail(n int) string {
	t.mu.Lock()
	p := t.p
	t.mu.Unlock()
	if p == nil {
		return ""
	}
	b := p.Stderr()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
