package expect

import (
	"strconv"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
)

// limitReadingByPasses is limitReading as it was first written, a pass
// for the depth and another for the tokens, each number parsed: the
// reference FuzzLimitReading holds the one-pass reading to.
func limitReadingByPasses(raw []byte, m envelope.Message) string {
	if envelope.Depth(raw) > limitDepth {
		return "RFC 8259 §9: a receiver may limit the nesting depth it accepts"
	}
	if !m.Valid {
		return ""
	}
	t := m.Root().Raw
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '"':
			j, escaped := i+1, false
			for {
				j += strings.IndexAny(t[j:], `"\`)
				if t[j] == '"' {
					break
				}
				j, escaped = j+2, true
			}
			if escaped && loneSurrogate(t[i:j+1]) {
				return "RFC 8259 §8.2: a string with an unpaired surrogate may be refused"
			}
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(t) && strings.IndexByte("0123456789+-.eE", t[j]) >= 0 {
				j++
			}
			if _, err := strconv.ParseFloat(t[i:j], 64); err != nil {
				return "RFC 8259 §9: a receiver may limit the range of numbers it accepts"
			}
			i = j - 1
		}
	}
	return ""
}

// FuzzLimitReading: limitReading says what reading the body in two
// passes says, whatever the bytes.
func FuzzLimitReading(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"a":[1.5,-2e3,"x"]}`, `[1e400]`, `{"s":"\ud800"}`, `{"s":"\ud83d\ude00"}`,
		strings.Repeat("[", 70) + strings.Repeat("]", 70), `[1e400,` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `]`,
		`{"a":"\"[[["}`, "0." + strings.Repeat("0", 330) + "1", strings.Repeat("9", 309), strings.Repeat("9", 308),
		"-" + strings.Repeat("9", 308) + ".5", `{"x":`, "\xef\xbb\xbf[[1]]", `[1,2]]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := envelope.Parse(raw)
		if got, want := limitReading(raw, m), limitReadingByPasses(raw, m); got != want {
			t.Errorf("limitReading(%q) = %q, want %q", raw, got, want)
		}
	})
}

// TestLimitReadingLongNumbers: numbers around float64's range, spelled
// without an exponent, read as the two passes read them.
func TestLimitReadingLongNumbers(t *testing.T) {
	for n := 290; n <= 340; n++ {
		for _, num := range []string{
			strings.Repeat("9", n), "-" + strings.Repeat("9", n-1), "1" + strings.Repeat("0", n-1),
			"0." + strings.Repeat("0", n-3) + "1", "-0." + strings.Repeat("0", n-4) + "5", strings.Repeat("1", n/2) + "." + strings.Repeat("7", n-n/2-1),
		} {
			raw := []byte(`{"a":[` + num + `]}`)
			m := envelope.Parse(raw)
			if got, want := limitReading(raw, m), limitReadingByPasses(raw, m); got != want {
				t.Errorf("a number of %d characters: %q, want %q", len(num), got, want)
			}
		}
	}
}
