package runner

import (
	"testing"

	"github.com/wymcp/wymcp-check/transport"
)

// Local: a loopback, unspecified, private or link-local address, or a
// localhost name, is a server DNS rebinding reaches; a public address, a
// name that merely contains "localhost", or any other name is not.
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
		"http://10.0.0.5:8080/mcp":           true,
		"http://192.168.1.20/mcp":            true,
		"http://169.254.10.1/mcp":            true,
		"http://[fe80::1]/mcp":               true,
		"http://[fd12::1]/mcp":               true,
		"http://8.8.8.8/mcp":                 false,
		"http://mcp.corp/mcp":                false,
		"http://[::ffff:8.8.8.8]/mcp":        false,
		"http://%zz/mcp":                     false,
		"http://0.0.0.0:8080/mcp":            true,
		"https://localhost@evil.example/mcp": false,
	} {
		h := &HTTPTarget{T: &transport.HTTP{URL: url}}
		if got := h.Local(); got != want {
			t.Errorf("Local(%s) = %v, want %v", url, got, want)
		}
	}
}
