package envelope

import (
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// ValidJSON reports, in one iterative pass over s, whether it nests
// deeper than MaxDepth (tooDeep, as TooDeep measures it, on any input)
// and otherwise whether it is one valid JSON value (valid, as
// gjson.Valid judges it). It stands for TooDeep followed by gjson.Valid,
// which read the text twice, the second time recursively.
func ValidJSON(s string) (valid, tooDeep bool) {
	valid, tooDeep, _ = check(s, false)
	return valid, tooDeep
}

// check is ValidJSON, and with dups the paths of the keys repeated in
// the same object, in document order (nil unless valid). gjson's
// validator is followed step by step (whitespace is space, tab, CR and
// LF; a string holds no byte below 0x20 and only JSON's escapes; bytes
// beyond ASCII are not judged), but with a stack of the open containers
// in place of recursion. An object's keys are kept while it is open: a
// linear scan of them while they are few, a map past smallObject, so
// 100,000 keys cost linear time. A path is joined only when a duplicate
// is found.
func check(s string, dups bool) (valid, tooDeep bool, paths []string) {
	var levelBuf [16]level
	var keyBuf [32]string
	levels, keys := levelBuf[:0], keyBuf[:0]
	// start is where the token being read starts; the text before it
	// is valid so far, and at it the depth is len(levels). Invalid text
	// is measured on from there, as Depth measures it.
	start := 0
	fail := func() (bool, bool, []string) {
		return false, deeperFrom(s, start, len(levels)), nil
	}
	i := skipWS(s, 0)
value:
	start = i
	if i >= len(s) {
		return fail()
	}
	switch c := s[i]; c {
	case '{', '[':
		if len(levels) >= MaxDepth {
			return false, true, nil
		}
		l := level{object: c == '{', keys: len(keys)}
		if n := len(levels); n > 0 {
			switch p := &levels[n-1]; {
			case p.object:
				l.name = keys[len(keys)-1]
			default:
				l.index, l.indexed = p.elem, true
			}
		}
		levels = append(levels, l)
		i = skipWS(s, i+1)
		if i < len(s) && (c == '{' && s[i] == '}' || c == '[' && s[i] == ']') {
			goto closeContainer
		}
		if c == '{' {
			goto key
		}
		goto value
	case '"':
		end, ok := validString(s, i+1)
		if !ok {
			return fail()
		}
		i = end
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		end, ok := validNumber(s, i)
		if !ok {
			return fail()
		}
		i = end
	case 't':
		if !strings.HasPrefix(s[i:], "true") {
			return fail()
		}
		i += 4
	case 'f':
		if !strings.HasPrefix(s[i:], "false") {
			return fail()
		}
		i += 5
	case 'n':
		if !strings.HasPrefix(s[i:], "null") {
			return fail()
		}
		i += 4
	default:
		return fail()
	}
	// after a value: a comma, the container's end, or the text's end
next:
	i = skipWS(s, i)
	start = i
	if len(levels) == 0 {
		if i < len(s) {
			return fail()
		}
		return true, false, paths
	}
	if i >= len(s) {
		return fail()
	}
	switch top := &levels[len(levels)-1]; {
	case s[i] == ',':
		i = skipWS(s, i+1)
		if top.object {
			goto key
		}
		top.elem++
		goto value
	case s[i] == '}' && top.object, s[i] == ']' && !top.object:
		goto closeContainer
	}
	return fail()
closeContainer:
	keys = keys[:levels[len(levels)-1].keys]
	levels = levels[:len(levels)-1]
	i++
	goto next
key:
	start = i
	if i >= len(s) || s[i] != '"' {
		return fail()
	}
	{
		end, ok := validString(s, i+1)
		if !ok {
			return fail()
		}
		if dups {
			top := &levels[len(levels)-1]
			k := s[i+1 : end-1]
			if strings.IndexByte(k, '\\') >= 0 {
				k = gjson.Parse(s[i:end]).Str
			}
			var dup bool
			switch own := keys[top.keys:]; {
			case top.many != nil:
				dup = top.many[k]
				top.many[k] = true
			case len(own) < smallObject:
				dup = slices.Contains(own, k)
			default:
				top.many = make(map[string]bool, 4*smallObject)
				for _, o := range own {
					top.many[o] = true
				}
				dup = top.many[k]
				top.many[k] = true
			}
			if top.many != nil {
				keys = keys[:top.keys] // the map holds them; only the last is kept, to name a child
			}
			keys = append(keys, k)
			if dup {
				paths = append(paths, joinLevels(levels, k))
			}
		} else {
			keys = append(keys[:levels[len(levels)-1].keys], "")
		}
		i = skipWS(s, end)
		start = i
		if i >= len(s) || s[i] != ':' {
			return fail()
		}
		i = skipWS(s, i+1)
	}
	goto value
}

// skipWS is the index of the first byte at or after i that is not JSON
// whitespace.
func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// validString reads a string's contents from i, just past its opening
// quote, to just past its closing one, as gjson's validator does.
func validString(s string, i int) (int, bool) {
	for ; i < len(s); i++ {
		c := s[i]
		if plainByte[c] {
			// Most bytes of a string: one lookup, not three tests.
			continue
		}
		switch {
		case c < ' ':
			return i, false
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i++; i >= len(s) {
				return i, false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) || !isHex(s[i+3]) || !isHex(s[i+4]) {
					return i, false
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

// plainByte holds the bytes a string's contents take as they are: all
// but the control characters, the quote mark and the backslash.
var plainByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= ' ' && c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validNumber reads a number from its first byte, as gjson's validator
// does: the end is where a digit, point or exponent can no longer go on.
func validNumber(s string, i int) (int, bool) {
	if s[i] == '-' {
		if i++; i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
	}
	if s[i] == '0' {
		i++
	} else {
		i = digits(s, i)
	}
	if i < len(s) && s[i] == '.' {
		if i++; i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		i = digits(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		if i++; i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		i = digits(s, i)
	}
	return i, true
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// deeperFrom continues Depth from s[i], outside any string, at depth d
// (never above MaxDepth so far): whether the text nests deeper than
// MaxDepth.
func deeperFrom(s string, i, d int) bool {
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			end := StringEnd(s, i)
			if end < 0 {
				return false
			}
			i = end
		case '{', '[':
			if d++; d > MaxDepth {
				return true
			}
		case '}', ']':
			d--
		}
	}
	return false
}
