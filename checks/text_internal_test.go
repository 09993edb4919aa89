package checks

import (
	"testing"
	"unicode"
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
