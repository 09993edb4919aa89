package expect

import (
	"strconv"
	"strings"
	"testing"
)

// TestShortQuote holds shortQuote to the rune-slice cut it replaces,
// invalid UTF-8 included.
func TestShortQuote(t *testing.T) {
	runeCut := func(s string) string {
		if r := []rune(s); len(r) > 40 {
			return strconv.QuoteToGraphic(string(r[:40])) + "…"
		}
		return strconv.QuoteToGraphic(s)
	}
	for _, s := range []string{"", "a", strings.Repeat("x", 40), strings.Repeat("x", 41), strings.Repeat("é", 39) + "ab",
		strings.Repeat("日本", 30), "bad\xffbyte" + strings.Repeat("y", 50), "\xff", strings.Repeat("z", 39) + "\xff\xfe",
		strings.Repeat("q", 40) + "\U0001F600"} {
		if got, want := shortQuote(s), runeCut(s); got != want {
			t.Errorf("shortQuote(%q) = %q, want %q", s, got, want)
		}
	}
}
