package checks

import (
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/schema"
)

// TestSchemaRule: a schema problem names the digest's rule for the part
// of the reply it is in, so a report and the coverage table blame the
// rule broken, not the whole list the check cites (review rev25: a null
// nextCursor on prompts/list and a ping result with a member named
// T-RPC-1 to T-TOOL-9, and coverage still passed T-PAGE-2).
func TestSchemaRule(t *testing.T) {
	m := envelope.Parse([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	for _, tc := range []struct {
		called, loc, problem, want string
	}{
		{"prompts/list", "/result/nextCursor", "got null, want string", "T-PAGE-2"},
		{"resources/templates/list", "/result/nextCursor", "got number, want string", "T-PAGE-2"},
		{"ping", "/result", "unexpected property 'status'", "T-LIFE-5"},
		{"tools/list", "/result/tools/0/inputSchema", "missing property 'type'", "T-TOOL-2"},
		{"prompts/list", "/result/prompts/0/name", "got number, want string", ""},
		{"prompts/list", "/result", "got array, want object", "T-RPC-7"},
		{"prompts/list", "/result", schema.MissingProperty("prompts"), ""},
	} {
		if got := schemaRule(&m, tc.called, tc.called, tc.loc, tc.problem); got != tc.want {
			t.Errorf("%s %s %s: rule %q, want %q", tc.called, tc.loc, tc.problem, got, tc.want)
		}
	}
}
