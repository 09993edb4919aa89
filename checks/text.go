package checks

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// isLineBreak: the characters that end a line for a reader of text. CR
// and LF are not the only ones: NEL, LINE SEPARATOR and PARAGRAPH
// SEPARATOR break lines too (Unicode UAX #14, and JavaScript, in which
// many clients render messages, treats U+2028 and U+2029 as line ends).
func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// lineCount counts the lines of s: CRLF is one break.
func lineCount(s string) int {
	n := 1
	prev := rune(0)
	for _, r := range s {
		if isLineBreak(r) && !(r == '\n' && prev == '\r') {
			n++
		}
		prev = r
	}
	return n
}

// hasLineBreak: s spans more than one line.
func hasLineBreak(s string) bool { return strings.ContainsFunc(s, isLineBreak) }

// firstMark is below every nonspacing and enclosing mark (U+0300, the
// first combining diacritic) and every other rune visibleLen skips.
const firstMark = '\u0300'

// visibleLen counts the characters of s a reader sees: a combining mark,
// a variation selector, an emoji's skin tone or tag adds to the character
// before it, not a character of its own; a zero-width joiner joins the
// symbol after it to the one before (👨‍👩‍👧 is one), and two regional
// indicators are one flag.
func visibleLen(s string) int {
	n := 0
	joined, flagHalf := false, false
	for _, r := range s {
		if r < firstMark {
			n++ // most text: spares unicode.In its table search
			joined, flagHalf = false, false
			continue
		}
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me) || r >= '\ufe00' && r <= '\ufe0f' ||
			r >= 0x1F3FB && r <= 0x1F3FF || r >= 0xE0020 && r <= 0xE007F:
			continue
		case r == '\u200d':
			joined = true
			continue
		case joined:
			joined = false
			continue
		case r >= 0x1F1E6 && r <= 0x1F1FF:
			if flagHalf = !flagHalf; !flagHalf {
				continue // the second of a flag's pair
			}
			n++
			continue
		}
		flagHalf = false
		n++
	}
	return n
}

// readLen is how many characters of s a bound counts: those a reader
// sees, or its code points where combining marks pile past four to a
// character (a Zalgo text of 16 letters and 6 KB is no short text).
func readLen(s string, bound int) int {
	if cps := utf8.RuneCountInString(s); cps > 4*bound {
		return cps
	}
	return visibleLen(s)
}

// hasControl: s holds a control character other than a line break
// (an escape sequence reaches a terminal and a model's context alike), a
// bidirectional override or an unbalanced embedding or isolate among
// them (see isControl, strayBidi).
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return isControl(r) && !isLineBreak(r) }) || strayBidi(s) >= 0
}

// isControl: r is a control character, C0 and C1 (category Cc), or a
// bidirectional override (U+202D, U+202E): a format character by
// category, but a control by its Unicode name and in effect, since it
// reverses what a terminal or a page shows of the text it covers, so that
// the text read is not the text sent ("Trojan Source", CVE-2021-42574).
// Embeddings and isolates are controls only where they stand unbalanced
// (strayBidi); the direction marks (U+200E, U+200F, U+061C) place a
// neutral and reorder nothing. Right-to-left letters alone (Hebrew,
// Arabic) are no control either.
func isControl(r rune) bool {
	if r < 0x80 {
		return unicode.IsControl(r) // most text: spares the table search
	}
	return unicode.IsControl(r) || r == 0x202D || r == 0x202E
}

// maxBidiDepth is the Unicode bidirectional algorithm's own bound on
// nested embeddings and isolates (UAX #9, max_depth).
const maxBidiDepth = 125

// strayBidi returns the byte offset of the first bidirectional embedding
// or isolate of s that is left open, or of a closer with nothing to
// close (U+202A, U+202B and U+202C; U+2066 to U+2069), -1 when there is
// none. A balanced pair is how Unicode has text of unknown direction
// inserted (Project Fluent wraps every value it interpolates in U+2068
// and U+2069): it reorders nothing outside itself. One left open reorders
// what follows the text, its quoting and the rest of the line (Trojan
// Source); so does a closer ending what the text around it opened.
func strayBidi(s string) int {
	if strings.IndexByte(s, 0xe2) < 0 {
		return -1 // all of them are encoded E2 80 xx or E2 81 xx
	}
	type open struct {
		isolate bool
		at      int
	}
	var stack []open
	for i, r := range s {
		switch r {
		case 0x202A, 0x202B, 0x202D, 0x202E: // embeddings, overrides: closed by U+202C
			stack = append(stack, open{false, i})
		case 0x2066, 0x2067, 0x2068:
			stack = append(stack, open{true, i})
		case 0x202C:
			if len(stack) == 0 || stack[len(stack)-1].isolate {
				return i
			}
			stack = stack[:len(stack)-1]
		case 0x2069:
			// A PDI closes its isolate and whatever was opened inside it.
			k := len(stack) - 1
			for k >= 0 && !stack[k].isolate {
				k--
			}
			if k < 0 {
				return i
			}
			stack = stack[:k]
		}
		if len(stack) > maxBidiDepth {
			return stack[maxBidiDepth].at
		}
	}
	if len(stack) > 0 {
		return stack[0].at
	}
	return -1
}

// length says how long s reads, "" when it is within max: the characters
// a reader sees, and the code points too when combining marks pile past
// four to a character (a Zalgo text of 16 letters and 6 KB is no short
// cause).
func length(s string, max int) string {
	n, cps := visibleLen(s), utf8.RuneCountInString(s)
	switch {
	case cps > 4*max:
		return fmt.Sprintf("%d characters of %d code points", n, cps)
	case n > max:
		return fmt.Sprintf("%d characters", n)
	}
	return ""
}

// bareControl: r is a control character (isControl) other than a tab
// or a line break, which have rules of their own.
func bareControl(r rune) bool { return isControl(r) && r != '\t' && !isLineBreak(r) }

// bareControlAt returns the byte offset of the first bare control of s
// (bareControl), or of a stray bidirectional embedding or isolate
// (strayBidi), -1 when there is none.
func bareControlAt(s string) int {
	i, j := strings.IndexFunc(s, bareControl), strayBidi(s)
	if i < 0 || j >= 0 && j < i {
		return j
	}
	return i
}

// stackFrame recognises one line of a stack trace, as runtimes print
// them: JavaScript's, Java's, C#'s and Rust's "at f (file.js:12:9)",
// Python's "Traceback (most recent call last)" and "File \"x.py\", line
// 12, in f", Go's "goroutine 1 [running]" and "/src/x.go:12 +0x1d",
// Ruby's "x.rb:12:in `f'", PHP's "#0 /x.php(12): f()". A frame names a
// file and a line of the server's code: its internals, in pieces.
var stackFrame = regexp.MustCompile(`^\s*(?:` +
	`at\s+(?:[^\s(]+\s*)?\([^\s()]*[./\\][^\s()]*:\d+(?::\d+)?\)` +
	`|at\s+[^\s()]*[./\\][^\s()]*:\d+:\d+` +
	`|at\s+[\w$./<>]+\((?:Native Method|Unknown Source)\)` +
	`|at\s+\S+\(.*\) in \S+:line \d+` +
	`|Traceback \(most recent call last\):?` +
	`|File "[^"]+", line \d+(?:, in \S+)?` +
	`|goroutine \d+ \[[^\]]+\]:?` +
	`|/\S+\.go:\d+(?: \+0x[0-9a-f]+)?` +
	`|\S+:\d+:in [\x60'].*'` +
	`|#\d+ \S+\(\d+\): .*` +
	`)\s*$`)

// maxFrame bounds the strings read as a stack frame: a frame names a
// function, a file and a line, and a longer text is no frame.
const maxFrame = 1024

// isStackFrame: s is one line of a stack trace (stackFrame). Every frame
// holds a space or a colon, and most values and names neither: they are
// spared the expression.
func isStackFrame(s string) bool {
	return len(s) <= maxFrame && strings.ContainsAny(s, " :") && stackFrame.MatchString(s)
}
