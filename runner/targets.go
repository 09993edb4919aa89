package runner

import (
	"context"
	"net/http"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// HTTPTarget is a Streamable HTTP endpoint.
type HTTPTarget struct {
	T *transport.HTTP
}

func (h *HTTPTarget) Transport() string { return envelope.HTTP }
func (h *HTTPTarget) Conn() Conn        { return httpConn{h.T} }
func (h *HTTPTarget) Died() (bool, string) {
	return false, ""
}
func (h *HTTPTarget) Restart(context.Context) error { return nil }
func (h *HTTPTarget) Close() error                  { return nil }

type httpConn struct{ t *transport.HTTP }

func (c httpConn) Do(ctx context.Context, req envelope.Request, _ bool) envelope.Exchange {
	if req.Header == nil {
		req.Header = http.Header{}
	}
	return c.t.Do(ctx, req)
}
