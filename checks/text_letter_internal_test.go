package checks

import "testing"

// A lower-case letter standing alone before a period ends a sentence
// when a capitalised word follows ("argument b. Provide it"), as a word
// does; a letter inside an abbreviation ("e.g.", "i.e."), an initial
// ("J. Smith"), a letter that abbreviates ("v.", "s.") or one before a
// number ("p. 5") ends none, nor does one that labels a list's item:
// the letter before or after it labels one too, or it opens the text.
func TestSeveralSentencesOneLetter(t *testing.T) {
	for _, c := range []struct {
		text    string
		several bool
	}{
		{"Missing required argument b. Provide it and retry.", true},
		{"missing required argument x. Then retry", true},
		{"value of (y. Check the docs", true},
		{"argument count. Provide it", true},
		{"a. First b. Second", false},
		{"must be one of a. Monday or b. Tuesday", false},
		{"one of (a) Monday, (b) Tuesday or c. Friday", false},
		{"b. Provide it", false},
		{"needs a or b. Provide one", true},
		{"argument b. Provide it, or d. Skip it", true},
		{"expected e.g. Alice or Bob", false},
		{"the key, i.e. Name, is missing", false},
		{"assigned to J. Smith already", false},
		{"see Smith v. Jones for the rule", false},
		{"s. Anhang B", false},
		{"see p. 5 of the manual", false},
		{"version v. 2 is unsupported", false},
		{"U.S. State code is unknown", false},
		{"wymcp_tool_x. Then", true},
		{"at key.x. Then", false},
	} {
		if got := severalSentences(c.text); got != c.several {
			t.Errorf("severalSentences(%q) = %v, want %v", c.text, got, c.several)
		}
	}
}
