package schema

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// JSON Schema patterns are ECMA-262 regular expressions (2020-12 §6.4),
// which Go's regexp (RE2) reads differently in places: \s and . cover
// other characters, and \uXXXX, \u{…}, \cX, [^] and a class's [ mean
// something else or nothing to RE2. translateECMA rewrites a pattern into
// RE2 syntax with ECMA-262's meaning, so that the checker keeps RE2's
// linear time (a server's patterns and strings may be hostile) and still
// matches what a JavaScript validator matches.
//
// The spec names no flags. Where the u flag changes a pattern's meaning
// (\u{…}, a surrogate pair written as two \u escapes, \p{…}, what . and a
// class match outside the BMP, identity escapes of letters), the
// translation reads it with the u flag: code points, not UTF-16 code
// units, which is how a JSON string is text, and how Ajv compiles
// patterns (new RegExp(p, "u")). What RE2 cannot express at all
// (lookaround, back-references, flag groups) and what is no ECMA-262
// pattern under the u flag is ErrUnreadablePattern.

// ErrUnreadablePattern marks a pattern the translation cannot give to
// RE2, and a validation failure of a schema that holds one: the checker
// reads such a pattern as matching every string, which is laxer than the
// schema under pattern but stricter under not, oneOf, if or
// patternProperties, so the failure is not sure.
var ErrUnreadablePattern = errors.New("the schema has a pattern the checker cannot read")

// errNotECMA marks a pattern that is no ECMA-262 regular expression
// under any flags (an unterminated class or group, a reversed range,
// unbalanced parentheses, a quantifier with nothing to repeat), as
// opposed to one RE2 merely cannot express: JSON Schema asks a pattern
// to be one (SHOULD, 2020-12 Validation §6.3.3).
var errNotECMA = errors.New("no ECMA-262 regular expression")

// ECMA-262 WhiteSpace and LineTerminator (§12.2, §12.3), what \s matches:
// RE2's \s is only [\t\n\f\r ].
var ecmaSpace = [][2]rune{
	{0x09, 0x0D}, {0x20, 0x20}, {0xA0, 0xA0}, {0x1680, 0x1680},
	{0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F},
	{0x3000, 0x3000}, {0xFEFF, 0xFEFF},
}

// ecmaLineTerminators are what . does not match (RE2's . excludes \n only).
var ecmaLineTerminators = [][2]rune{{0x0A, 0x0A}, {0x0D, 0x0D}, {0x2028, 0x2029}}

// complement is the ranges of code points outside rs (sorted, disjoint).
func complement(rs [][2]rune) [][2]rune {
	var out [][2]rune
	next := rune(0)
	for _, r := range rs {
		if r[0] > next {
			out = append(out, [2]rune{next, r[0] - 1})
		}
		next = r[1] + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, [2]rune{next, utf8.MaxRune})
	}
	return out
}

// rangesText is ranges as the inside of an RE2 character class.
func rangesText(rs [][2]rune) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(runeText(r[0]))
		if r[1] != r[0] {
			b.WriteString("-" + runeText(r[1]))
		}
	}
	return b.String()
}

func runeText(r rune) string { return fmt.Sprintf(`\x{%X}`, r) }

var (
	spaceClass    = rangesText(ecmaSpace)
	nonSpaceClass = rangesText(complement(ecmaSpace))
	dotClass      = "[" + rangesText(complement(ecmaLineTerminators)) + "]"
)

// compileECMA compiles an ECMA-262 pattern with RE2; the error wraps
// ErrUnreadablePattern when RE2 cannot read it.
func compileECMA(pattern string) (*regexp.Regexp, error) {
	src, err := translateECMA(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(src)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) && (se.Code == syntax.ErrMissingParen || se.Code == syntax.ErrUnexpectedParen || se.Code == syntax.ErrMissingRepeatArgument) {
			// The translation keeps parentheses and quantifiers as
			// written: these faults are the pattern's own.
			err = fmt.Errorf("%w: %s", errNotECMA, se.Code)
		}
		return nil, fmt.Errorf("%w: %w", ErrUnreadablePattern, err)
	}
	return re, nil
}

// translateECMA rewrites an ECMA-262 pattern (u flag) as RE2 syntax.
func translateECMA(p string) (string, error) {
	t := translator{src: []rune(p)}
	if err := t.run(); err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnreadablePattern, err)
	}
	return t.out.String(), nil
}

type translator struct {
	src []rune
	i   int
	out strings.Builder
}

func (t *translator) peek(k int) rune {
	if t.i+k < len(t.src) {
		return t.src[t.i+k]
	}
	return -1
}

func (t *translator) run() error {
	for t.i < len(t.src) {
		c := t.src[t.i]
		var err error
		switch c {
		case '\\':
			err = t.escape()
		case '[':
			err = t.class()
		case '(':
			err = t.group()
		case '.':
			t.out.WriteString(dotClass)
			t.i++
		default:
			// Quantifiers, anchors, alternation and literal characters
			// read the same in both (without the m and s flags, ^ and $
			// anchor at the text's ends in both).
			t.out.WriteRune(c)
			t.i++
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// group opens a group: (?: stays; a named group becomes a plain one (its
// name matters only to back-references, which RE2 lacks); lookaround and
// flag groups are beyond RE2.
func (t *translator) group() error {
	if t.peek(1) != '?' {
		t.out.WriteRune('(')
		t.i++
		return nil
	}
	switch {
	case t.peek(2) == ':':
		t.out.WriteString("(?:")
		t.i += 3
		return nil
	case t.peek(2) == '<' && t.peek(3) != '=' && t.peek(3) != '!':
		end := t.i + 3
		for end < len(t.src) && t.src[end] != '>' {
			end++
		}
		if end == len(t.src) || end == t.i+3 {
			return fmt.Errorf("%w: unterminated group name", errNotECMA)
		}
		t.out.WriteRune('(')
		t.i = end + 1
		return nil
	}
	return errors.New("lookaround or flag group")
}

// escape translates an escape outside a class.
func (t *translator) escape() error {
	switch t.peek(1) {
	case 's':
		t.out.WriteString("[" + spaceClass + "]")
		t.i += 2
		return nil
	case 'S':
		t.out.WriteString("[" + nonSpaceClass + "]")
		t.i += 2
		return nil
	case 'b', 'B':
		// Word boundaries: ASCII words in both.
		t.out.WriteString(string(t.src[t.i : t.i+2]))
		t.i += 2
		return nil
	}
	item, err := t.atomEscape(false)
	if err != nil {
		return err
	}
	t.out.WriteString(item)
	return nil
}

// atomEscape reads the escape at t.i (a backslash) that stands for one
// character or a class, and returns it as RE2 text.
func (t *translator) atomEscape(inClass bool) (string, error) {
	r, cls, err := t.escapeValue(inClass)
	if err != nil {
		return "", err
	}
	if cls != "" {
		return cls, nil
	}
	return runeText(r), nil
}

// escapeValue reads an escape: a character (cls empty) or a class as the
// inside of an RE2 bracket (\d, \w, \s, \p{…} and their negations, the
// negated ones bracketed on their own).
func (t *translator) escapeValue(inClass bool) (r rune, cls string, err error) {
	c := t.peek(1)
	t.i += 2
	switch c {
	case -1:
		return 0, "", fmt.Errorf("%w: trailing backslash", errNotECMA)
	case 'd', 'D', 'w', 'W':
		// ASCII digits and word characters in both (no i flag).
		return 0, `\` + string(c), nil
	case 's':
		return 0, spaceClass, nil
	case 'S':
		return 0, nonSpaceClass, nil
	case 'p', 'P':
		return t.property(c)
	case 't':
		return '\t', "", nil
	case 'n':
		return '\n', "", nil
	case 'v':
		return '\v', "", nil
	case 'f':
		return '\f', "", nil
	case 'r':
		return '\r', "", nil
	case 'b':
		if inClass {
			return '\b', "", nil
		}
	case '-':
		if inClass {
			return '-', "", nil
		}
	case 'c':
		if l := t.peek(0); ('a' <= l && l <= 'z') || ('A' <= l && l <= 'Z') {
			t.i++
			return l % 32, "", nil
		}
	case '0':
		if d := t.peek(0); d < '0' || d > '9' {
			return 0, "", nil
		}
	case 'x':
		return t.hex(2)
	case 'u':
		return t.unicodeEscape()
	}
	if strings.ContainsRune(`^$\.*+?()[]{}|/`, c) {
		return c, "", nil // an identity escape of a syntax character
	}
	// Back-references (\1, \k<name>) and, under the u flag, any other
	// escape.
	return 0, "", fmt.Errorf("escape \\%c", c)
}

// property reads \p{…} or \P{…}, which RE2 knows by the short names
// (\p{L}, \p{Greek}); long value names (\p{Letter}) and binary
// properties (\p{Emoji}) RE2 lacks are beyond it.
func (t *translator) property(c rune) (rune, string, error) {
	if t.peek(0) != '{' {
		return 0, "", errors.New("property escape without a name")
	}
	end := t.i
	for end < len(t.src) && t.src[end] != '}' {
		end++
	}
	if end == len(t.src) {
		return 0, "", errors.New("unterminated property escape")
	}
	name := string(t.src[t.i+1 : end])
	t.i = end + 1
	// RE2 knows scripts and general categories by their bare short
	// names; ECMA-262 writes a script as Script=Greek (a bare Greek is no
	// ECMA-262 pattern) and a category as Lu or gc=Lu.
	table := unicode.Categories
	if v, ok := cutAny(name, "Script=", "sc="); ok {
		name, table = v, unicode.Scripts
	} else if v, ok := cutAny(name, "General_Category=", "gc="); ok {
		name = v
	}
	if _, ok := table[name]; !ok {
		return 0, "", fmt.Errorf("property %s", quote(name))
	}
	return 0, `\` + string(c) + "{" + name + "}", nil
}

// hex reads n hex digits at t.i.
func (t *translator) hex(n int) (rune, string, error) {
	if t.i+n > len(t.src) {
		return 0, "", errors.New("short hex escape")
	}
	v, err := strconv.ParseUint(string(t.src[t.i:t.i+n]), 16, 32)
	if err != nil {
		return 0, "", errors.New("bad hex escape")
	}
	t.i += n
	return rune(v), "", nil
}

// unicodeEscape reads what follows \u: four hex digits (two escapes of a
// surrogate pair make one code point), or {…} with up to 10FFFF.
func (t *translator) unicodeEscape() (rune, string, error) {
	if t.peek(0) == '{' {
		end := t.i + 1
		for end < len(t.src) && t.src[end] != '}' {
			end++
		}
		if end == len(t.src) || end == t.i+1 {
			return 0, "", errors.New("bad \\u{} escape")
		}
		v, err := strconv.ParseUint(string(t.src[t.i+1:end]), 16, 32)
		if err != nil || v > utf8.MaxRune {
			return 0, "", errors.New("bad \\u{} escape")
		}
		t.i = end + 1
		return rune(v), "", nil
	}
	hi, _, err := t.hex(4)
	if err != nil {
		return 0, "", err
	}
	if 0xD800 <= hi && hi < 0xDC00 && t.peek(0) == '\\' && t.peek(1) == 'u' {
		save := t.i
		t.i += 2
		if lo, _, err := t.hex(4); err == nil && 0xDC00 <= lo && lo < 0xE000 {
			return 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00), "", nil
		}
		t.i = save
	}
	if 0xD800 <= hi && hi < 0xE000 {
		// A lone surrogate matches nothing in text decoded from JSON
		// (it became U+FFFD); RE2 takes no surrogate code point.
		return 0, "", errors.New("lone surrogate escape")
	}
	return hi, "", nil
}

// class translates a character class [...]: every member is written out
// as RE2 text, so that what RE2 reads specially inside brackets ([:alpha:]
// and friends) stays literal, and [] and [^] mean nothing and anything.
func (t *translator) class() error {
	t.i++
	negate := t.peek(0) == '^'
	if negate {
		t.i++
	}
	var items strings.Builder
	empty := true
	for {
		c := t.peek(0)
		switch c {
		case -1:
			return fmt.Errorf("%w: unterminated class", errNotECMA)
		case ']':
			t.i++
			t.writeClass(negate, empty, items.String())
			return nil
		}
		loEscaped := t.peek(0) == '\\'
		lo, cls, err := t.classAtom()
		if err != nil {
			return err
		}
		empty = false
		if t.peek(0) == '-' && t.peek(1) != ']' && t.peek(1) != -1 {
			if cls != "" {
				return errors.New("class escape in a range")
			}
			t.i++
			hiEscaped := t.peek(0) == '\\'
			hi, hcls, err := t.classAtom()
			if err != nil {
				return err
			}
			switch {
			case hcls != "":
				return errors.New("bad class range")
			case hi < lo && !loEscaped && !hiEscaped:
				// (An escape may read otherwise without the u flag:
				// \u{7f} is a "u" repeated there.)
				return fmt.Errorf("%w: class range out of order", errNotECMA)
			case hi < lo:
				return errors.New("bad class range")
			}
			items.WriteString(runeText(lo) + "-" + runeText(hi))
			continue
		}
		if cls != "" {
			items.WriteString(cls)
			continue
		}
		items.WriteString(runeText(lo))
	}
}

// writeClass writes a finished class: ECMA-262's [] matches nothing and
// [^] any character, which RE2 has no spelling for.
func (t *translator) writeClass(negate, empty bool, items string) {
	all := runeText(0) + "-" + runeText(utf8.MaxRune)
	switch {
	case empty && negate:
		t.out.WriteString("[" + all + "]")
	case empty:
		t.out.WriteString("[^" + all + "]")
	case negate:
		t.out.WriteString("[^" + items + "]")
	default:
		t.out.WriteString("[" + items + "]")
	}
}

// classAtom reads one member of a class: a character or a class escape.
func (t *translator) classAtom() (rune, string, error) {
	c := t.src[t.i]
	if c != '\\' {
		t.i++
		return c, "", nil
	}
	return t.escapeValue(true)
}

// cutAny cuts the first of prefixes s starts with.
func cutAny(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return rest, true
		}
	}
	return s, false
}
