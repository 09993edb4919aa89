package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
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

// TestNotECMA: a pattern that is no ECMA-262 regular expression under any
// flags is named, with why; one RE2 merely cannot read (a repetition
// over 1,000, a back-reference, lookaround, a class escape ending a
// range, which Annex B allows) is not: naming it would be a false alarm.
func TestNotECMA(t *testing.T) {
	for _, tt := range []struct {
		pattern, want string
	}{
		{`^[a-`, "unterminated class"},
		{`(ab`, "missing closing )"},
		{`ab)`, "unexpected )"},
		{`^[z-a]+$`, "class range out of order"},
		{`*x`, "missing argument to repetition operator"},
		{`(?<name`, "unterminated group name"},
		{`ab\`, "trailing backslash"},
		{`^a{1001}$`, ""},
		{`^(a)\1$`, ""},
		{`^(?=.*\d).{8,}$`, ""},
		{`^[\d-z]+$`, ""},
		{`^[a-z]+$`, ""},
		// Without the u flag \u{7f} is a "u" repeated: the range reads
		// "}-~", in order (a review).
		{`^[\u{7f}-~]$`, ""},
	} {
		doc := `{"type":"string","pattern":` + strconv.Quote(tt.pattern) + `}`
		ts, err := CompileToolSchema([]byte(doc), "2025-11-25")
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		got := strings.Join(ts.NotECMA(), "; ")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("NotECMA of %s = %q, want it to say %q", tt.pattern, got, tt.want)
		}
	}
}

// TestNotECMAShownInOrder: of many such patterns the same first 8 are
// named in every run, and the rest counted (a review found a different 8
// each run: the library compiles keywords in no fixed order).
func TestNotECMAShownInOrder(t *testing.T) {
	var props []string
	for i := 11; i >= 0; i-- {
		props = append(props, fmt.Sprintf(`"p%02d":{"type":"string","pattern":"(x%02d"}`, i, i))
	}
	doc := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	want := ""
	for range 5 {
		ts, err := CompileToolSchema([]byte(doc), "2025-11-25")
		if err != nil {
			t.Fatal(err)
		}
		got := ts.NotECMA()
		if len(got) != 9 || got[0] != `'(x00': missing closing )` || got[8] != "and 4 more" {
			t.Fatalf("NotECMA = %q, want the first 8 in order and the rest counted", got)
		}
		if s := strings.Join(got, "; "); want == "" {
			want = s
		} else if s != want {
			t.Errorf("NotECMA varies: %q, then %q", want, s)
		}
	}
}
