package runner

import (
	"testing"

	"github.com/wymcp/wymcp-check/transport"
)

// Local: only a loopback address or a localhost name is the server DNS
// rebinding reaches; a remote host, or a name that merely contains
// "localhost", is not.
func TestHTTPTargetLocal(t *testing.T) {
	for url, want := range map[string]bool{
		"http://127.0.0.1:8080/mcp":          true,
		"http://127.5.6.7/mcp":               true,
		"http://[::1]:3000/mcp":              true,
		"http://localhost:3000/mcp":          true,
		"http://LOCALHOST/mcp":               true,
		"http://api.localhost/mcp":           true,
		"https://mcp.example.com/mcp":        false,
		"http://localhost.example.com/mcp":   false,
		"http://10.0.0.5:8080/mcp":           false,
		"http://[::ffff:8.8.8.8]/mcp":        false,
		"http://%zz/mcp":                     false,
		"http://0.0.0.0:8080/mcp":            false,
		"https://localhost@evil.example/mcp": false,
	} {
		h := &HTTPTarget{T: &transport.HTTP{URL: url}}
		if got := h.Local(); got != want {
			t.Errorf("Local(%s) = %v, want %v", url, got, want)
		}
	}
}
