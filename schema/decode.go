package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// maxJSONDepth bounds nesting: parsing and validating recurse per level.
const maxJSONDepth = envelope.MaxDepth

// Causes of decode failures; their texts are problems as they stand.
var (
	errNotJSON = errors.New("not valid json")
	errTooDeep = errors.New("json nested deeper than 512 levels")
)

// ErrBeyondBounds marks an instance the checker does not validate: it
// holds a number the validator reads in time that grows faster than its
// length (the exact rational math/big makes of it: quadratic in the
// digits, exponential in the exponent's length). Judging it would let a
// reply of a few bytes take minutes, so the verdict is "could not judge",
// never a finding of the server (DESIGN: the checker's own limits).
var ErrBeyondBounds = errors.New("beyond what the checker validates")

// Bounds on a number the validator reads: far more digits than any
// int64, float64 or decimal a protocol or tool carries, and an exponent
// past what float64 and every schema bound in practice use. The validator
// parses a number again for each comparison (enum, const, uniqueItems),
// so the bound is on the cost of one parse: within it, a microsecond.
// What stays is the number of comparisons a schema asks for, which grows
// with the instance times the schema, both bounded in size.
const (
	maxNumberLen = 256
	maxExponent  = 400
)

// decode parses one JSON value the way the validator wants it: objects,
// arrays, strings, bools, nil, and numbers as json.Number so that large
// integers stay exact. Anything but exactly one value (with surrounding
// whitespace) is errNotJSON. Decoding is the larger half of validating a
// typical reply, so it is one pass over bytes already checked, with
// strings sliced from one copy of the input.
func decode(raw []byte) (any, error) {
	// One iterative pass for both bounds (envelope.ValidJSON stands for
	// TooDeep followed by gjson.Valid), over the copy the parser reads.
	s := string(raw)
	switch valid, deep := envelope.ValidJSON(s); {
	case deep:
		return nil, errTooDeep
	case !valid:
		return nil, errNotJSON
	}
	p := parser{s: s}
	v := p.value()
	if p.beyond != "" {
		return nil, fmt.Errorf("%w: %s", ErrBeyondBounds, p.beyond)
	}
	return v, nil
}

// parser reads valid JSON: decode has checked it (envelope.ValidJSON,
// gjson.Valid's judgement), and the parser checks nothing again.
type parser struct {
	s string
	i int
	// beyond says why a number is out of bounds, for the first one.
	beyond string
}

func (p *parser) skip() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() any {
	p.skip()
	switch c := p.s[p.i]; c {
	case '{':
		p.i++
		obj := map[string]any{}
		p.skip()
		if p.s[p.i] == '}' {
			p.i++
			return obj
		}
		for {
			p.skip()
			k := p.str()
			p.skip()
			p.i++ // ':'
			obj[k] = p.value()
			p.skip()
			if p.s[p.i] == '}' {
				p.i++
				return obj
			}
			p.i++ // ','
		}
	case '[':
		p.i++
		arr := []any{}
		p.skip()
		if p.s[p.i] == ']' {
			p.i++
			return arr
		}
		for {
			arr = append(arr, p.value())
			p.skip()
			if p.s[p.i] == ']' {
				p.i++
				return arr
			}
			p.i++ // ','
		}
	case '"':
		return p.str()
	case 't':
		p.i += 4
		return true
	case 'f':
		p.i += 5
		return false
	case 'n':
		p.i += 4
		return nil
	default:
		start := p.i
		for p.i < len(p.s) && strings.IndexByte("+-.0123456789eE", p.s[p.i]) >= 0 {
			p.i++
		}
		n := p.s[start:p.i]
		if p.beyond == "" {
			p.beyond = numberBeyond(n)
		}
		return json.Number(n)
	}
}

// str reads a string at p.i; one without escapes is a slice of the input.
func (p *parser) str() string {
	start := p.i
	p.i++
	escaped := false
	for {
		switch p.s[p.i] {
		case '\\':
			escaped = true
			p.i += 2
			continue
		case '"':
			p.i++
			if !escaped {
				return p.s[start+1 : p.i-1]
			}
			return gjson.Parse(p.s[start:p.i]).Str
		}
		p.i++
	}
}

// numberBeyond says why a valid JSON number literal is beyond the
// validator's bounds; "" when it is within them.
func numberBeyond(n string) string {
	if len(n) > maxNumberLen {
		return fmt.Sprintf("a number of %d characters (at most %d are validated)", len(n), maxNumberLen)
	}
	i := strings.IndexAny(n, "eE")
	if i < 0 {
		return ""
	}
	exp := strings.TrimLeft(strings.TrimLeft(n[i+1:], "+-"), "0")
	if len(exp) > 3 || (len(exp) == 3 && exp > strconv.Itoa(maxExponent)) {
		return fmt.Sprintf("a number with exponent %s (at most %d is validated)", clipNumber(n[i+1:]), maxExponent)
	}
	return ""
}

func clipNumber(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}
