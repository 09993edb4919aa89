package expect

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
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

// limitReading names a limit a receiver may set only where the text
// reaches one: a number no float64 holds or an unpaired surrogate, in a
// key or a value, or nesting past limitDepth; never inside a string nor
// across an escaped quote or backslash.
func TestLimitReading(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "limits.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name, Body, Why string
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("limits.json: %v", err)
	}
	for _, c := range cases {
		got := limitReading([]byte(c.Body), envelope.Parse([]byte(c.Body)))
		if c.Why == "" && got != "" || !strings.Contains(got, c.Why) {
			t.Errorf("%s: limitReading = %q, want one naming %q", c.Name, got, c.Why)
		}
	}
}
