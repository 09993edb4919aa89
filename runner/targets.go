package runner

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// HTTPTarget is a Streamable HTTP endpoint.
type HTTPTarget struct {
	T *transport.HTTP
}

// Local reports whether the endpoint's host is a loopback, unspecified,
// private or link-local address, or a localhost name: the servers a web
// page reaches only through DNS rebinding (T-HTTP-14). Other names are
// not resolved: which addresses they stand for is not the checker's to
// assume, and a remote server's allowed origins are its own policy.
func (h *HTTPTarget) Local() bool {
	u, err := url.Parse(h.T.URL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback() || ip.IsUnspecified() || ip.IsPrivate() || ip.IsLinkLocalUnicast()
	}
	return strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost")
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
