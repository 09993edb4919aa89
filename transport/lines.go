package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// A lineReader splits a stream into lines without ever holding more than
// limit bytes of one: a server that writes a line without end must not
// grow the checker's memory with it.
type lineReader struct {
	br    *bufio.Reader
	limit int
	skip  bool  // discarding the rest of a line that was cut
	err   error // the error to return once a final unterminated line is out
}

func newLineReader(r io.Reader, limit int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// next returns the next line, without its "\n" and a "\r" before it. A
// line longer than the limit comes back as its first limit bytes with cut set,
// as soon as those have arrived; the rest of it is then read and dropped.
// A final line with no "\n" is returned before the error that ended it.
func (lr *lineReader) next() (line []byte, cut bool, err error) {
	if lr.err != nil {
		return nil, false, lr.err
	}
	buf := []byte{} // an empty line is a line, not nil
	for {
		frag, err := lr.br.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		if lr.skip {
			if err == nil {
				lr.skip = false
			} else if !full {
				return nil, false, err
			}
			continue
		}
		ended := err == nil
		if ended {
			frag = frag[:len(frag)-1]
		}
		// One byte of headroom lets a "\r" ride along until it is known
		// to end the line.
		if len(buf)+len(frag) > lr.limit+1 {
			if room := lr.limit - len(buf); room > 0 {
				buf = append(buf, frag[:room]...)
			}
			buf = buf[:lr.limit]
			lr.skip = !ended
			return buf, true, nil
		}
		buf = append(buf, frag...)
		switch {
		case ended:
			if n := len(buf); n > 0 && buf[n-1] == '\r' {
				buf = buf[:n-1]
			}
			if len(buf) > lr.limit {
				return buf[:lr.limit], true, nil
			}
			return buf, false, nil
		case full:
			continue
		case len(buf) > 0:
			lr.err = err
			if len(buf) > lr.limit {
				return buf[:lr.limit], true, nil
			}
			return buf, false, nil
		default:
			return nil, false, err
		}
	}
}

// An openLine watches a stream as it is read for the line the server has
// begun and not ended: the bytes since its last "\n". The lineReader
// holding them cannot say so while it waits for the rest, and a reply
// written without its newline (the stdio message delimiter) is otherwise
// indistinguishable from silence.
type openLine struct {
	r io.Reader

	mu   sync.Mutex
	n    int64  // bytes since the last "\n"
	head []byte // the first openHead of them
	ends int64  // "\n"s read so far
}

// openHead is how much of an open line is kept to quote.
const openHead = 64

func (o *openLine) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	o.saw(p[:n])
	return n, err
}

func (o *openLine) saw(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		o.ends += int64(bytes.Count(b, []byte{'\n'}))
		o.n, o.head = 0, o.head[:0]
		b = b[i+1:]
	}
	o.n += int64(len(b))
	if room := openHead - len(o.head); room > 0 {
		o.head = append(o.head, b[:min(room, len(b))]...)
	}
}

// An openState is what an openLine saw up to a moment.
type openState struct {
	n    int64
	head string
	ends int64
}

func (o *openLine) state() openState {
	o.mu.Lock()
	defer o.mu.Unlock()
	return openState{n: o.n, head: string(o.head), ends: o.ends}
}

// note says what an open line means for an exchange that got no
// response; since is the state when its request was written. "" when
// every byte read ended a line.
func (st openState) note(since openState) string {
	if st.n == 0 {
		return ""
	}
	q := quoteBytes(st.head, st.n)
	if since.n > 0 && since.ends == st.ends {
		// The same line was open before the request went out: whatever
		// the server answered comes after it in the stream, and cannot
		// be read until the line ends.
		return fmt.Sprintf("%s arrived without a terminating newline (the stdio message delimiter) before this request was written, and no reply can be read past them: %s", bytesCount(st.n), q)
	}
	they := "they are"
	if st.n == 1 {
		they = "it is"
	}
	return fmt.Sprintf("%s arrived without a terminating newline (the stdio message delimiter), so %s no message: %s", bytesCount(st.n), they, q)
}

// quoteBytes quotes head, the first bytes of total, with control
// characters and invalid bytes escaped, and "…" when bytes were left
// out: server bytes put into a failure must neither echo a payload at
// length nor carry terminal escapes.
func quoteBytes(head string, total int64) string {
	cut := int64(len(head)) < total
	if cut {
		// A character split by the cut is not the server's invalid bytes.
		for k := 1; k < utf8.UTFMax && len(head) > 0; k++ {
			if r, size := utf8.DecodeLastRuneInString(head); r != utf8.RuneError || size != 1 {
				break
			}
			head = head[:len(head)-1]
		}
	}
	q := strconv.QuoteToGraphic(head)
	if cut {
		q = strings.TrimSuffix(q, `"`) + `…"`
	}
	return q
}

// bytesCount is n bytes, in words.
func bytesCount(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}
