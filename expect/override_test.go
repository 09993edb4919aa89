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

// TestOverrideState: expect-state names how the checker made a second
// round's requestState; anything else is an error that names the
// values, and the transcript form carries it back.
func TestOverrideState(t *testing.T) {
	for _, c := range []struct {
		value string
		ok    bool
	}{
		{"tampered", true}, {"replayed", true}, {"", false}, {"forged", false}, {"Tampered", false},
	} {
		var o expect.Override
		err := o.Set("expect-state", c.value)
		if (err == nil) != c.ok {
			t.Errorf("expect-state %q: err %v, want ok %v", c.value, err, c.ok)
		}
		if err != nil && err.Error() != `"`+c.value+`": want tampered or replayed` {
			t.Errorf("expect-state %q: error %q does not name the values", c.value, err)
		}
		if !c.ok {
			continue
		}
		raw, _ := o.MarshalJSON()
		back, err := expect.ParseOverride(raw)
		if err != nil || len(back.Fields()) != 1 || back.Fields()[0] != (expect.Field{Key: "expect-state", Value: c.value}) {
			t.Errorf("expect-state %q: transcript form %s read back as %v, %v", c.value, raw, back.Fields(), err)
		}
	}
}

// TestOverridePageLists: expect-page-cursors and expect-page-names hold
// a JSON array of strings; null, a null member or a number (which read
// as "" would judge a page by a cursor no page handed out) is an error
// (review rev29).
func TestOverridePageLists(t *testing.T) {
	for _, c := range []struct {
		value string
		ok    bool
	}{
		{`["p2"]`, true}, {`[]`, true}, {`["", "p3"]`, true},
		{`null`, false}, {`[null]`, false}, {`[1]`, false}, {`"p2"`, false}, {`["p2"`, false}, {`["p2"] x`, false},
	} {
		for _, key := range []string{"expect-page-cursors", "expect-page-names"} {
			var o expect.Override
			if err := o.Set(key, c.value); (err == nil) != c.ok {
				t.Errorf("%s %s: err %v, want ok %v", key, c.value, err, c.ok)
			}
		}
	}
}
