package envelope

import (
	"net/http"
	"testing"
)

// TestCanonicalName holds canonicalName's shortcuts to what
// http.CanonicalHeaderKey says of the same names.
func TestCanonicalName(t *testing.T) {
	for _, name := range []string{"Mcp-Session-Id", "Content-Type", "Mcp-Protocol-Version", "MCP-Protocol-Version", "Mcp-Name", "Mcp-Method", "mcp-session-id", "X-Odd_Name", ""} {
		if got, want := canonicalName(name), http.CanonicalHeaderKey(name); got != want {
			t.Errorf("canonicalName(%q) = %q, want %q", name, got, want)
		}
	}
}
