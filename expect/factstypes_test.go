package expect_test

import (
	"testing"

	"github.com/wymcp/wymcp-check/expect"
)

// TestFactsTyped: a facts line's member of another type than it holds is
// an error of the line, never read as absent or false: "local":"true"
// read as not local would change a verdict's level without a word, and
// "toolsListed":"true" make every tool unknown (review rev29). The sound
// forms read.
func TestFactsTyped(t *testing.T) {
	for _, tc := range []struct{ facts, err string }{
		{`{"local":"true"}`, "facts.local is string, want true or false"},
		{`{"toolsListed":1}`, "facts.toolsListed is integer, want true or false"},
		{`{"spoken":"1999-01-01"}`, `facts.spoken is no version judged by another's rules, want "2025-03-26"`},
		{`{"negotiated":{}}`, "facts.negotiated is object, want a string"},
		{`{"sessions":"s1"}`, "facts.sessions must be an array of strings"},
		{`{"supportedVersions":[1]}`, "facts.supportedVersions must be an array of strings"},
		{`{"tools":[1]}`, "facts.tools must be an array of objects"},
		{`{"pages":[{"method":"tools/list","cursor":"c"},"x"]}`, "facts.pages must be an array of objects"},
		{`{"local":true,"toolsListed":false,"spoken":"2025-03-26","sessions":["s1"],"supportedVersions":["2025-11-25"],"tools":[{"name":"a","inputSchema":{"type":"object"}}],"pages":[{"method":"tools/list","cursor":"c"}]}`, ""},
	} {
		_, err := expect.ParseFacts([]byte(tc.facts))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.err {
			t.Errorf("%s: error %q, want %q", tc.facts, got, tc.err)
		}
	}
}
