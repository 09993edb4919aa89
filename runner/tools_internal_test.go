package runner

import (
	"testing"

	"github.com/wymcp/wymcp-check/expect"
)

// A fixture that needs a prompt or resource is skipped with a reason
// that blames the server only for what it said.
func TestNoneListed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caps   string
		listed bool
		want   string
	}{
		{"undeclared", `{"tools":{}}`, false, "the server does not declare the prompts capability"},
		{"declared false", `{"prompts":false}`, false, "the server does not declare the prompts capability"},
		{"unknown", "", false, "the server's capabilities are not known, so its prompts were not listed"},
		{"list cut short", `{"prompts":{}}`, false, "prompts/list was not read to its end, so no prompt the server has is known"},
		{"listed empty", `{"prompts":{}}`, true, "the server lists no prompts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &expect.Facts{}
			if tc.caps != "" {
				f.Capabilities = []byte(tc.caps)
			}
			if got := noneListed(f, "prompts", tc.listed); got != tc.want {
				t.Errorf("noneListed = %q, want %q", got, tc.want)
			}
		})
	}
}
