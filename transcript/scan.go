package transcript

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// A scanner of JSON text already found valid (gjson.ValidBytes), which
// hands on members as written. gjson's ForEach would unescape every
// string value it passes, and a transcript's values are mostly bodies,
// escaped throughout, that parse then copies again. Every function here
// is iterative and reads each byte a bounded number of times.

// skipSpace is the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index just past the string literal opening at s[i].
func stringEnd(s string, i int) int {
	if end := envelope.StringEnd(s, i); end >= 0 {
		return end + 1
	}
	return len(s) // not reached on valid JSON
}

// valueEnd is the index just past the value starting at s[i].
func valueEnd(s string, i int) int {
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				i = stringEnd(s, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(s)
	}
	for ; i < len(s); i++ {
		switch s[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// forMembers calls fn with each member of the object obj (raw, opening
// at obj[0]) in order: the key as gjson reads it (unescaped) and the
// value's raw text. fn returns false to stop.
func forMembers(obj string, fn func(key, val string) bool) {
	scanMembers(obj, func(key, rest string) int {
		vend := valueEnd(rest, 0)
		if !fn(key, rest[:vend]) {
			return len(rest) // nothing left: the walk ends
		}
		return vend
	})
}

// forElements calls fn with the raw text of each element of the array
// arr (raw, opening at arr[0]) in order; fn returns false to stop.
func forElements(arr string, fn func(val string) bool) {
	i := 1
	for {
		i = skipSpace(arr, i)
		if i >= len(arr) || arr[i] == ']' {
			return
		}
		vend := valueEnd(arr, i)
		if !fn(arr[i:vend]) {
			return
		}
		i = skipSpace(arr, vend)
		if i < len(arr) && arr[i] == ',' {
			i++
		}
	}
}

// scanMembers walks the members of the object opening at obj[0], in
// order: fn gets a member's key as gjson reads it (unescaped) and the
// text from its value on, and returns the length of the value. It
// returns the length of the object.
func scanMembers(obj string, fn func(key, rest string) int) int {
	i := 1
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return min(i+1, len(obj)) // past the closing brace
		}
		end := stringEnd(obj, i)
		key := obj[i+1 : end-1]
		if strings.IndexByte(key, '\\') >= 0 {
			key = gjson.Parse(obj[i:end]).Str
		}
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // past the colon
		i += fn(key, obj[i:])
		i = skipSpace(obj, i)
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
}

// members sets out[i] to the raw value of the first member of obj named
// keys[i] ("" when none), as envelope.Members would find it, and returns
// the length of obj, and the first of keys that obj gives twice ("" when
// none): readers differ on which of the two counts.
func members(obj string, keys []string, out []string) (n int, dup string) {
	n = scanMembers(obj, func(key, rest string) int {
		n := valueEnd(rest, 0)
		for i, k := range keys {
			if key != k {
				continue
			}
			if out[i] == "" {
				out[i] = rest[:n]
			} else if dup == "" {
				dup = k
			}
			break
		}
		return n
	})
	return n, dup
}

// twice is the first member name the object obj (raw, valid JSON) gives
// more than once, "" when none. For the small objects whose every member
// counts (an expect override, a run line's settings); parse finds its
// own members' repeats on its one pass through the line.
func twice(obj string) string {
	var names []string
	dup := ""
	scanMembers(obj, func(key, rest string) int {
		if dup == "" && slices.Contains(names, key) {
			dup = key
		}
		names = append(names, key)
		return valueEnd(rest, 0)
	})
	return dup
}

// errTwice is the error for a member a line gives twice (RFC 8259 §4:
// names SHOULD be unique). JSON readers differ on which one counts (gjson
// takes the first; Python, JavaScript and encoding/json the last), so
// the line says two things and is not judged.
func errTwice(name string) error {
	return fmt.Errorf("%q is given twice, and JSON readers differ on which one counts (the first or the last)", name)
}

// appendUnescaped appends the text of a valid JSON string literal's
// contents (without its quotes) to dst, exactly as gjson unescapes it,
// whose Result.Str the transcript format was read by: a surrogate escape
// without its pair becomes U+FFFD.
func appendUnescaped(dst []byte, s string) []byte {
	// A byte loop: escapes stand a few bytes apart in a body.
	from := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		dst = append(dst, s[from:i]...)
		if i++; i >= len(s) {
			return dst // not reached on valid JSON
		}
		switch s[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if i+5 > len(s) {
				return dst // not reached on valid JSON
			}
			r := hexRune(s[i+1 : i+5])
			i += 4
			if r >= 0xD800 && r < 0xDC00 && i+7 <= len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2 := hexRune(s[i+3 : i+7]); r2 >= 0xDC00 && r2 < 0xE000 {
					r = utf16.DecodeRune(r, r2)
					i += 6
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // \\ \/ \"
			dst = append(dst, s[i])
		}
		from = i + 1
	}
	return append(dst, s[from:]...)
}

// hexRune reads four hex digits (valid JSON has them after \u).
func hexRune(s string) rune {
	var r rune
	for i := range 4 {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
