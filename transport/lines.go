package transport

import (
	"bufio"
	"errors"
	"io"
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
