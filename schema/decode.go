package schema

import (
	"encoding/json"
	"errors"
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

// decode parses one JSON value the way the validator wants it: objects,
// arrays, strings, bools, nil, and numbers as json.Number so that large
// integers stay exact. Anything but exactly one value (with surrounding
// whitespace) is errNotJSON. Decoding is the larger half of validating a
// typical reply, so it is one pass over bytes gjson has already checked,
// with strings sliced from one copy of the input.
func decode(raw []byte) (any, error) {
	if envelope.TooDeep(raw) {
		return nil, errTooDeep
	}
	if !gjson.ValidBytes(raw) {
		return nil, errNotJSON
	}
	p := parser{s: string(raw)}
	return p.value(), nil
}

// parser reads valid JSON; it relies on gjson.ValidBytes for every check.
type parser struct {
	s string
	i int
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
		return json.Number(p.s[start:p.i])
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
