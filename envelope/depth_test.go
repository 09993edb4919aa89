package envelope_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
)

// depthByByte is Depth as one byte-at-a-time pass: the reference the
// string-skipping Depth must agree with on any input.
func depthByByte(raw []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > deepest {
				if deepest = depth; deepest > envelope.MaxDepth {
					return deepest
				}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

func TestDepthAgreesWithByteScan(t *testing.T) {
	cases := []string{
		``, `"`, `"\`, `"\"`, `"\\"`, `"\\\"[`, `"\\\\"[`, `["\\"]`, `["\"]"]`,
		`{"a":[1,{"b":"[[[["}]}`, `[[["x\\\\\"[[[["]]]`, `"[" [ "]" [`,
		strings.Repeat("[", envelope.MaxDepth+5), `"` + strings.Repeat(`\"[`, 100) + `"[[`,
		`{"s":"` + strings.Repeat(`\\`, 51) + `"}`, `{"s":"` + strings.Repeat(`\\`, 50) + `\"}[`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = `"\[]{}a`
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := envelope.Depth([]byte(c)), depthByByte([]byte(c)); got != want {
			t.Errorf("Depth(%q) = %d, want %d", c, got, want)
		}
	}
}
