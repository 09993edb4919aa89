package checks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// The line that stands for the findings past the bound names the rules
// they name, so the coverage table reads the verdict as its listed
// findings; one unnamed finding among them leaves the line unnamed.
func TestUnlistedFindingsNameTheirRules(t *testing.T) {
	for _, c := range []struct {
		name string
		last expect.Want // the one finding past the others, all named
		want string
	}{
		{"all named", expect.Want{Level: expect.Must, Rule: "T-TOOL-5"}, "T-TOOL-2, T-TOOL-5"},
		{"one cites in its text", expect.Want{Level: expect.Must}, "T-TOOL-11, T-TOOL-2"},
		{"one names none", expect.Want{Level: expect.Must, Rule: ""}, ""},
	} {
		p := &Pass{Contract: envelope.Strict()}
		for i := range maxFindings + 3 {
			p.Deviate(expect.Want{Level: expect.Must, Rule: "T-TOOL-2"}, "result.tools", "tool %d is bad", i)
		}
		format := "tool %q is bad"
		if c.name == "one cites in its text" {
			format = "tool %q is bad (T-TOOL-11)"
		}
		p.Deviate(c.last, "result.tools", format, "T-RPC-1") // a server's text citing a rule names none
		p.closeFindings()
		if got := p.findings[len(p.findings)-1].Rule; got != c.want {
			t.Errorf("%s: the last line names %q, want %q", c.name, got, c.want)
		}
		if diff := cmp.Diff(maxFindings+1, len(p.findings)); diff != "" {
			t.Errorf("%s: findings (-want +got):\n%s", c.name, diff)
		}
	}
}
