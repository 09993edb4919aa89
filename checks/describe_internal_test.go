package checks

import (
	"testing"

	"github.com/tidwall/gjson"
)

// A message that asks for a non-empty list says when the list given is
// empty: "it is array" told the reader nothing it could act on.
func TestDescribe(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`[]`, "an empty array"},
		{` [ ] `, "an empty array"},
		{`[1]`, "array"},
		{`{}`, "an empty object"},
		{`{"a":1}`, "object"},
		{`null`, "null"},
		{`"x"`, `string "x"`},
		{`12`, "integer 12"},
	} {
		if got := describe(gjson.Parse(c.raw)); got != c.want {
			t.Errorf("describe(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
	if got := describe(gjson.Get(`{}`, "a")); got != "absent" {
		t.Errorf("describe(absent) = %q, want %q", got, "absent")
	}
}
