package expect

import (
	"math/rand/v2"
	"net/http"
	"testing"
)

// repeatsMCPHeader spares most requests the search for repeated MCP
// headers: where it says no, the search must find none. Every header set
// of up to four names, drawn from spellings that differ in case, MCP
// headers and others, with zero to two values each.
func TestRepeatsMCPHeaderNoFalseNo(t *testing.T) {
	names := []string{"Mcp-Name", "mcp-name", "MCP-NAME", "Mcp-Method", "mcp-method", "Mcp-Protocol-Version",
		"MCP-Protocol-Version", "Mcp-Param-A", "mcp-param-a", "Mcp-Param-B", "Content-Type", "content-type", "Accept"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		h := http.Header{}
		for range rng.IntN(5) {
			var vs []string
			for range rng.IntN(3) {
				vs = append(vs, "v")
			}
			h[names[rng.IntN(len(names))]] = vs
		}
		if !repeatsMCPHeader(h) && repeatedReadings(h) != nil {
			t.Fatalf("repeatsMCPHeader(%v) is false, but the header has other readings", h)
		}
	}
	many := http.Header{}
	for _, n := range []string{"A", "B", "C", "D", "E", "F", "G", "H", "I"} {
		many["Mcp-Param-"+n] = []string{"v"}
	}
	if !repeatsMCPHeader(many) {
		t.Error("past eight MCP headers the answer is yes")
	}
}
