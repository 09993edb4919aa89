package expect_test

import (
	"testing"

	"github.com/wymcp/wymcp-check/expect"
)

// TestOverrideStatusRange: a status no server can send would fail every
// reply, from a fixture or from a transcript's expect object alike.
func TestOverrideStatusRange(t *testing.T) {
	for _, c := range []struct {
		value string
		ok    bool
	}{
		{"404", true}, {"400, 404", true}, {"any", true}, {"100", true}, {"599", true},
		{"999", false}, {"-1", false}, {"99", false}, {"400, 600", false},
	} {
		var o expect.Override
		if err := o.Set("expect-status", c.value); (err == nil) != c.ok {
			t.Errorf("expect-status %q: err %v, want ok %v", c.value, err, c.ok)
		}
	}
}
