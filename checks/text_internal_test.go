package checks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// visibleLen counts every rune below firstMark without looking it up:
// none of them is a mark, nor any rune it skips.
func TestFirstMark(t *testing.T) {
	for r := rune(0); r < firstMark; r++ {
		if unicode.In(r, unicode.Mn, unicode.Me) || r == '\u200d' || r >= '\ufe00' && r <= '\ufe0f' {
			t.Fatalf("%U is below firstMark and skipped by visibleLen", r)
		}
	}
	if !unicode.In(firstMark, unicode.Mn) {
		t.Errorf("firstMark %U is no mark: the bound could be higher", firstMark)
	}
}

// textCases reads the cases of testdata/text/file, at least min of them:
// a test of fewer means nothing.
func textCases[C any](t *testing.T, file string, min int) []C {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "text", file))
	if err != nil {
		t.Fatal(err)
	}
	var cases []C
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(cases) < min {
		t.Fatalf("%s holds %d cases; the test means nothing without them", file, len(cases))
	}
	return cases
}

// visibleLen counts what a reader sees as one character once: a letter
// and its marks, a flag, an emoji with its skin tone or its ZWJ family
// (testdata/text/visible.json).
func TestVisibleLen(t *testing.T) {
	for _, c := range textCases[struct {
		Text string
		Len  int
	}](t, "visible.json", 10) {
		if got := visibleLen(c.Text); got != c.Len {
			t.Errorf("visibleLen(%q) = %d, want %d", c.Text, got, c.Len)
		}
	}
}

// severalSentences finds a sentence break, not an abbreviation's period
// nor punctuation inside what the phrase quotes (testdata/text).
func TestSeveralSentences(t *testing.T) {
	for _, c := range textCases[struct {
		Text    string
		Several bool
	}](t, "sentences.json", 20) {
		if got := severalSentences(c.Text); got != c.Several {
			t.Errorf("severalSentences(%q) = %v, want %v", c.Text, got, c.Several)
		}
	}
}

// readProse on the sentences and values reviews found misread: the data
// file holds each with its reading (prose, maybe, value).
func TestReadProse(t *testing.T) {
	name := map[proseReading]string{surelyProse: "prose", maybeProse: "maybe", notProse: "value", stoppedPhrase: "stopped"}
	for _, c := range textCases[struct{ Text, Reading string }](t, "prose.json", 20) {
		if got := name[readProse(c.Text)]; got != c.Reading {
			t.Errorf("readProse(%q) = %s, want %s", c.Text, got, c.Reading)
		}
	}
}

// TestMergeReadingsSaysOneReading: what one reading of a reply finds and
// the other does not, warnings included, says it holds under one reading
// only (a sweep found a warning from the 2026 reading of a request a
// dual-era server read as 2025 stated as if sure).
func TestMergeReadingsSaysOneReading(t *testing.T) {
	fail := Verdict{Status: StatusFail, Findings: []Finding{{Status: StatusFail, Path: "a", Message: "bad"}, {Status: StatusWarn, Path: "b", Message: "odd"}}}
	warn := Verdict{Status: StatusWarn, Findings: []Finding{{Status: StatusWarn, Path: "b", Message: "odd"}}}
	pass := Verdict{Status: StatusPass}
	for _, tt := range []struct {
		name string
		a, b Verdict
		want []Finding
	}{
		{"fail beside pass", fail, pass, []Finding{{Status: StatusWarn, Path: "a", Message: "bad (under one reading only: why)"}, {Status: StatusWarn, Path: "b", Message: "odd (under one reading only: why)"}}},
		{"fail beside warn", fail, warn, []Finding{{Status: StatusWarn, Path: "a", Message: "bad (under one reading only: why)"}, {Status: StatusWarn, Path: "b", Message: "odd"}}},
		{"warn beside pass", pass, warn, []Finding{{Status: StatusWarn, Path: "b", Message: "odd (under one reading only: why)"}}},
		{"warn beside warn", warn, warn, []Finding{{Status: StatusWarn, Path: "b", Message: "odd"}}},
	} {
		got := mergeReadings(tt.a, tt.b, "why")
		if diff := cmp.Diff(tt.want, got.Findings); diff != "" || got.Status != StatusWarn {
			t.Errorf("%s: status %s, findings (-want +got):\n%s", tt.name, got.Status, diff)
		}
	}
}

// A value clipped inside a string is closed again, so that the rule a
// finding cites after it is read as the checker's, not as quoted server
// text (rules.CitedUnquoted).
func TestClipClosesAString(t *testing.T) {
	long := strings.Repeat("x", 60)
	for _, c := range []struct{ raw, want string }{
		{`"task-` + long + `"`, `"task-` + long[:34] + `…"`},
		{`{"a":"` + long + `"}`, `{"a":"` + long[:34] + `…"`},
		// Its twins: a cut outside any string, or no cut, adds nothing.
		{`[` + strings.Repeat(`"x",`, 12) + `"y"]`, `[` + strings.Repeat(`"x",`, 9) + `"x"…`},
		{`12345`, `12345`},
		{`"short"`, `"short"`},
	} {
		if got := clip(c.raw); got != c.want {
			t.Errorf("clip(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}

// TestStartsChallenge: a WWW-Authenticate value begins with an
// auth-scheme, alone, with parameters or a token68, or before another
// challenge, after any empty list elements; auth-params alone, or
// nothing, are no challenge.
func TestStartsChallenge(t *testing.T) {
	for v, want := range map[string]bool{
		"Bearer": true, `Bearer realm="x"`: true, "Bearer, Basic realm=x": true, ", Bearer": true, "Basic dXNlcg==": true,
		`resource_metadata="https://x", scope="s"`: false, `resource_metadata = "x"`: false, " ": false, ", , ": false, "": false,
	} {
		if got := startsChallenge(v); got != want {
			t.Errorf("startsChallenge(%q) = %v, want %v", v, got, want)
		}
	}
}
