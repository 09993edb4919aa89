package checks

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wymcp/wymcp-check/envelope"
)

// TestGenericOnlyCounts: a -32602's message that says no more than the
// generic name, a count of errors, or both, in the spellings validators
// and SDKs write them, is generic (ERR2003 fails it where data carries
// the cause); one that names a cause after them is not
// (testdata/text/generic.json; review rev61, rev65).
func TestGenericOnlyCounts(t *testing.T) {
	for _, c := range textCases[struct {
		Text    string
		Generic bool
	}](t, "generic.json", 20) {
		if got := genericOnly(c.Text, envelope.CodeInvalidParams, "Invalid params", nil) != ""; got != c.Generic {
			t.Errorf("genericOnly(%q) generic = %v, want %v", c.Text, got, c.Generic)
		}
	}
}

// TestRefusesMethodItself: words that refuse the method itself, for a
// method of a capability the server did not declare, and words about
// something else (an argument, a resource) that do not (review rev64,
// rev65).
func TestRefusesMethodItself(t *testing.T) {
	for _, c := range []struct {
		msg, method string
		want        bool
	}{
		{"Not implemented", "completion/complete", true},
		{"NotImplementedError", "logging/setLevel", true},
		{"Unsupported method: logging/setLevel", "logging/setLevel", true},
		{"setLevel: not implemented", "logging/setLevel", true},
		{"Logging is not supported", "logging/setLevel", true},
		{"Method completion/complete not implemented", "completion/complete", true},
		{"completion of argument name of prompt greet is not implemented", "completion/complete", false},
		{"Subscriptions are not implemented for file:///a", "resources/subscribe", false},
		{"Completion failed", "completion/complete", false},
		// (Review rev67: the unknown method's words alone, and the
		// refusal before the name.)
		{"Method not found", "logging/setLevel", true},
		{"Unknown method", "logging/setLevel", true},
		{"Not implemented: setLevel", "logging/setLevel", true},
		{"Unknown method: logging/setLevel", "logging/setLevel", true},
		{"Not implemented: argument name", "completion/complete", false},
		{"prompt greet not found", "completion/complete", false},
	} {
		if got := refusesMethodItself(c.msg, c.method); got != c.want {
			t.Errorf("refusesMethodItself(%q, %q) = %v, want %v", c.msg, c.method, got, c.want)
		}
	}
}

// TestMergeEntries: two schemas that judge one message (a client's
// tasks/result, as tasks/result's answer and as the task's request's)
// name a problem both find once, at its location (review rev69), and
// keep each one's own; the first list's backing arrays are not written.
func TestMergeEntries(t *testing.T) {
	first := []envelope.DistilledEntry{{Location: "/jsonrpc", Problems: []string{"must be '2.0'"}}, {Location: "/result", Problems: []string{"missing property '_meta'"}}}
	keep := first[1].Problems
	got := mergeEntries(first, []envelope.DistilledEntry{{Location: "/jsonrpc", Problems: []string{"must be '2.0'"}}, {Location: "/result", Problems: []string{"missing property 'role'"}}, {Location: "/result/content", Problems: []string{"missing property 'type'"}}})
	want := []envelope.DistilledEntry{{Location: "/jsonrpc", Problems: []string{"must be '2.0'"}}, {Location: "/result", Problems: []string{"missing property '_meta'", "missing property 'role'"}}, {Location: "/result/content", Problems: []string{"missing property 'type'"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	if len(keep) != 1 {
		t.Errorf("the first list's problems were written: %q", keep)
	}
}
