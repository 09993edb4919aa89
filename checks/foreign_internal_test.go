package checks

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

// foreignByTokens is foreignIn as it was written first, on the list
// pointerTokens makes: the reference FuzzForeignTokens holds it to.
func foreignByTokens(names []string, loc string) []string {
	tokens, ok := pointerTokens(gjson.Result{Type: gjson.String, Str: loc})
	if !ok {
		return []string{loc}
	}
	var out []string
	for _, t := range tokens {
		if t != "" && strings.Trim(t, "0123456789") == "" {
			continue // an array index
		}
		if _, found := slices.BinarySearch(names, t); !found {
			out = append(out, t)
		}
	}
	return out
}

// FuzzForeignTokens: foreignIn reads a location as pointerTokens does,
// whatever its text and the request's names (a comma-separated list).
func FuzzForeignTokens(f *testing.F) {
	for _, s := range [][2]string{
		{"a,b", "/a/0/b"}, {"a", "/a/c"}, {"", ""}, {"", "/"}, {"a/b,~", "/a~1b/~0"},
		{"x", "/x/~2"}, {"x", "/x~"}, {"x", "x"}, {"", "//"}, {"0", "/0/01/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, names, loc string) {
		list := strings.Split(names, ",")
		slices.Sort(list)
		asked := false
		got := foreignIn(func() []string { asked = true; return list }, loc)
		want := foreignByTokens(list, loc)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("foreignIn(%q, %q) (-pointerTokens +foreignIn):\n%s", list, loc, diff)
		}
		if _, pointer := pointerTokens(gjson.Result{Type: gjson.String, Str: loc}); asked && (!pointer || loc == "") {
			t.Errorf("foreignIn(%q) asked for the names of no pointer", loc)
		}
	})
}

// FuzzWideStops: indexWideStop finds what strings.IndexAny finds, and
// the test severalSentences starts with is the one it replaced, on any
// bytes.
func FuzzWideStops(f *testing.F) {
	for _, s := range []string{"", "a。b", "x！y？z", "\xe3。", "\xef\xbc", "end.", "？。！", "\x80\xe3\x80\x82", "日本語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := indexWideStop(s), strings.IndexAny(s, "。！？"); got != want {
			t.Errorf("indexWideStop(%q) = %d, want %d", s, got, want)
		}
		if got, want := strings.ContainsAny(s, ".!?") || indexWideStop(s) >= 0, strings.ContainsAny(s, ".!?。！？"); got != want {
			t.Errorf("sentence punctuation in %q: %v, want %v", s, got, want)
		}
	})
}
