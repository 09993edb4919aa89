package transport

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestLineReader(t *testing.T) {
	type out struct {
		Line string
		Cut  bool
	}
	tests := []struct {
		name string
		in   string
		max  int
		want []out
	}{
		{"plain", "a\nbb\n", 5, []out{{"a", false}, {"bb", false}}},
		{"crlf and lone cr", "a\r\nb\rc\n\r\n", 5, []out{{"a", false}, {"b\rc", false}, {"", false}}},
		{"empty lines", "\n\n", 5, []out{{"", false}, {"", false}}},
		{"final line without newline", "a\nlast", 5, []out{{"a", false}, {"last", false}}},
		{"exactly max", "12345\n12345\r\n", 5, []out{{"12345", false}, {"12345", false}}},
		{"one over max", "123456\nok\n", 5, []out{{"12345", true}, {"ok", false}}},
		{"one over max before crlf", "123456\r\nok\n", 5, []out{{"12345", true}, {"ok", false}}},
		{"far over max", strings.Repeat("x", 200<<10) + "\nok\n", 5, []out{{"xxxxx", true}, {"ok", false}}},
		{"over max at eof", "1234567", 5, []out{{"12345", true}}},
		{"bytes kept raw", "\x1b[2J\x00\xff\t \n", 10, []out{{"\x1b[2J\x00\xff\t ", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte per read: lines must survive any fragmentation.
			lr := newLineReader(iotest.OneByteReader(strings.NewReader(tt.in)), tt.max)
			var got []out
			for {
				line, cut, err := lr.next()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatalf("error %v, want io.EOF", err)
					}
					break
				}
				got = append(got, out{string(line), cut})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLineReaderBoundedMemory reads a 100 MB line: the reader must hand
// back the cut line long before the end, holding no more than the bound.
func TestLineReaderBoundedMemory(t *testing.T) {
	const max = 1 << 20
	src := &endless{b: 'x', n: 100 << 20}
	lr := newLineReader(src, max)
	line, cut, err := lr.next()
	if err != nil || !cut || len(line) != max {
		t.Fatalf("next = %d bytes, cut %v, err %v; want %d bytes cut", len(line), cut, err, max)
	}
	if src.read > 2*max {
		t.Errorf("read %d bytes before returning the cut line, want at most %d", src.read, 2*max)
	}
	if cap(line) > 4*max {
		t.Errorf("line buffer has capacity %d, want O(%d)", cap(line), max)
	}
	if _, _, err := lr.next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the rest is dropped: err %v, want io.EOF", err)
	}
}

// endless yields n copies of b, then io.EOF.
type endless struct {
	b       byte
	n, read int
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.n {
		return 0, io.EOF
	}
	p = p[:min(len(p), e.n-e.read)]
	for i := range p {
		p[i] = e.b
	}
	e.read += len(p)
	return len(p), nil
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 8}
	for _, w := range []string{"abc", "defgh", "ij", "0123456789abcdef", "XY"} {
		tb.Write([]byte(w))
	}
	if got, want := string(tb.Bytes()), "abcdefXY"; got != want {
		t.Errorf("tail = %q, want %q", got, want)
	}
}

// TestOpenLine: what a stream holds after its last newline is told,
// bounded and escaped, however the reads fell.
func TestOpenLine(t *testing.T) {
	const delim = " arrived without a terminating newline (the stdio message delimiter), so they are no message: "
	tests := []struct {
		name  string
		reads []string
		want  string
	}{
		{"nothing", nil, ""},
		{"every line ended", []string{"a\nb", "c\n"}, ""},
		{"one byte", []string{"x"}, "1 byte arrived without a terminating newline (the stdio message delimiter), so it is no message: \"x\""},
		{"after a line", []string{"done\n{\"id\"", ":1}"}, "8 bytes" + delim + `"{\"id\":1}"`},
		{"newline mid read", []string{"ab", "c\nde"}, "2 bytes" + delim + `"de"`},
		{"control bytes escaped", []string{"\x1b[2J\x00"}, "5 bytes" + delim + `"\x1b[2J\x00"`},
		{"long line cut", []string{strings.Repeat("x", 60), strings.Repeat("y", 100)}, "160 bytes" + delim + `"` + strings.Repeat("x", 60) + `yyyy…"`},
		{"cut inside a character", []string{strings.Repeat("x", 63) + "é"}, "65 bytes" + delim + `"` + strings.Repeat("x", 63) + `…"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &openLine{}
			for _, r := range tt.reads {
				o.saw([]byte(r))
			}
			if diff := cmp.Diff(tt.want, o.state().note(openState{})); diff != "" {
				t.Errorf("note (-want +got):\n%s", diff)
			}
		})
	}
}
