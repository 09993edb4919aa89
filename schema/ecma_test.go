package schema

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"
)

// ecmaCase is one pattern of testdata/ecma/patterns.json, whose results
// JavaScript's own RegExp gave (testdata/ecma/gen.js).
type ecmaCase struct {
	Pattern string `json:"pattern"`
	Strings []struct {
		S     string `json:"s"`
		Match *bool  `json:"match"` // with the u flag; null: not a pattern under it
		Plain *bool  `json:"plain"` // without it
	} `json:"strings"`
}

// beyondRE2 are the patterns of the table JavaScript reads (u flag) but
// RE2 cannot, even translated: lookaround, back-references and long
// property value names.
var beyondRE2 = []string{`^(?!count$)[a-z]+$`, `(?<=@)example\.com$`, `^(a)\1$`, `^\p{Letter}$`}

// TestECMAPatterns: a translated pattern matches what JavaScript's RegExp
// matches with the u flag; a pattern RE2 cannot express is
// ErrUnreadablePattern; one that is no pattern under the u flag is
// either unreadable or read as JavaScript reads it without the flag.
func TestECMAPatterns(t *testing.T) {
	raw, err := os.ReadFile("testdata/ecma/patterns.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []ecmaCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		re, err := compileECMA(c.Pattern)
		if err != nil && !errors.Is(err, ErrUnreadablePattern) {
			t.Errorf("%q: error %v does not wrap ErrUnreadablePattern", c.Pattern, err)
		}
		if slices.Contains(beyondRE2, c.Pattern) {
			if err == nil {
				t.Errorf("%q: read, want unreadable", c.Pattern)
			}
			continue
		}
		for _, s := range c.Strings {
			switch {
			case s.Match == nil && err != nil:
			case s.Match == nil && re.MatchString(s.S) != *s.Plain:
				t.Errorf("%q on %q: %v, JavaScript without u says %v", c.Pattern, s.S, !*s.Plain, *s.Plain)
			case s.Match == nil:
			case err != nil:
				t.Errorf("%q: %v, JavaScript (u) reads it", c.Pattern, err)
			case re.MatchString(s.S) != *s.Match:
				t.Errorf("%q on %q: %v, JavaScript (u) says %v", c.Pattern, s.S, !*s.Match, *s.Match)
			}
		}
	}
}
