package report

import "testing"

// TestSanitize: what reaches a terminal has its escapes escaped.
func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"plain ünïcode":         "plain ünïcode",
		"\x1b[2Jclear":          `\x1b[2Jclear`,
		"title\x1b]0;x\x07":     `title\x1b]0;x\x07`,
		"c1 \u009b31m":          `c1 \x9b31m`,
		"bidi \u202eevil":       `bidi \u202eevil`,
		"cr\roverwrite":         `cr\x0doverwrite`,
		"bad utf8 \xff":         `bad utf8 \xff`,
		"line\u2028separator":   `line\u2028separator`,
		"zero\u200bwidth space": `zero\u200bwidth space`,
		"nonchar \uffff\ufdd0":  `nonchar \uffff\ufdd0`,
		"tag \U000e0001":        `tag \U000e0001`,
		"plane 1 \U0001fffe":    `plane 1 \U0001fffe`,
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}
