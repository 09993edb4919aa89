package envelope

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// An Event is one Server-Sent Event (only the fields MCP uses).
type Event struct {
	// ID is the event's id field; IDSet says the event had one (an empty
	// one resets the last event id, as the SSE spec says).
	ID    string
	IDSet bool
	Name  string // the "event" field; empty means "message"
	Data  []byte // data lines joined with "\n"
	Retry string
	// HasData: a data field came, empty or not. A block without one
	// dispatches no event (WHATWG); its id only sets the last event id.
	HasData bool
}

// IsMessage: the event is one a client reads as a JSON-RPC message. A
// named event of another type is not a message event (WHATWG dispatch);
// EventSource's onmessage and the SDKs' clients pass it by.
func (e Event) IsMessage() bool { return e.Name == "" || e.Name == "message" }

// ErrEventTooLarge is returned when a single SSE line exceeds the reader's
// bound: a flooding server must not make the checker buffer without end.
var ErrEventTooLarge = errors.New("sse event exceeds the size bound")

// An SSEReader splits a text/event-stream into events as the WHATWG
// grammar says: lines end in LF, CR or CRLF; a blank line ends an event;
// lines starting with ':' are comments (keep-alives).
type SSEReader struct {
	sc *bufio.Scanner // a stream; nil for a body in memory
	// mem is a body in memory, read from pos: its lines are slices of
	// it, which stay valid, so an event's single data line is handed
	// out without a copy.
	mem      []byte
	pos      int
	maxLine  int
	tooLong  bool
	consumed int64 // bytes of the stream the events so far took
	bomDone  bool  // the stream's start was looked at for a byte order mark
	// afterCR: the last line of a stream ended in a CR that was the last
	// byte read, so an LF that comes next is the rest of its CRLF.
	afterCR bool
}

// scanBuffer is the first buffer of a stream's scanner.
const scanBuffer = 4096

// NewSSEReader reads events from r; no line may exceed maxLine bytes.
func NewSSEReader(r io.Reader, maxLine int) *SSEReader {
	sr := &SSEReader{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, scanBuffer), maxLine)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		// Bytes passed over (a byte order mark, the LF of a CRLF) go
		// with the next line, never alone: at the end of the stream a
		// scanner given no token stops, and would drop the rest (a
		// stream written whole before its close arrives with the end).
		skip := 0
		if sr.consumed == 0 && !sr.bomDone {
			// The grammar lets a stream start with a byte order mark:
			// stream = [ bom ] *event.
			switch {
			case len(data) >= len(bom):
				sr.bomDone = true
				if string(data[:len(bom)]) == bom {
					skip = len(bom)
				}
			case !atEOF && bytes.HasPrefix([]byte(bom), data):
				return 0, nil, nil // too few bytes to tell yet
			default:
				sr.bomDone = true
			}
		}
		if sr.afterCR && len(data) > skip {
			sr.afterCR = false
			if data[skip] == '\n' {
				skip++
			}
		}
		rest := data[skip:]
		if i := len(rest) - 1; !atEOF && i >= 0 && rest[i] == '\r' && bytes.IndexAny(rest, "\r\n") == i {
			// A line ended by a CR that is the last byte yet: it is a line
			// end whatever follows (an LF would only complete it), so the
			// line is given now. A held-open stream whose events end in
			// lone CRs would otherwise give its last event only when
			// more came.
			sr.afterCR = true
			sr.consumed += int64(skip + i + 1)
			return skip + i + 1, rest[:i], nil
		}
		n, tok, err := scanSSELines(rest, atEOF)
		sr.consumed += int64(skip + n)
		return skip + n, tok, err
	})
	sr.sc = sc
	return sr
}

// NewSSEBodyReader reads the events of a whole body in memory (a reply
// already read, a recording): SplitSSE and the checks read a body the
// same way.
func NewSSEBodyReader(body []byte, maxLine int) *SSEReader {
	sr := &SSEReader{mem: body, maxLine: maxLine, bomDone: true}
	if bytes.HasPrefix(body, []byte(bom)) {
		sr.pos = len(bom)
	}
	return sr
}

// Consumed is how many bytes of the stream the events read so far took
// (the reader reads ahead of them): a recording cut there holds exactly
// those events.
func (r *SSEReader) Consumed() int64 {
	if r.sc == nil {
		return int64(r.pos)
	}
	return r.consumed
}

// line is the next line, without its end; false at the end or when a
// line breaks the bound.
func (r *SSEReader) line() ([]byte, bool) {
	if r.sc != nil {
		if !r.sc.Scan() {
			return nil, false
		}
		return r.sc.Bytes(), true
	}
	if r.pos >= len(r.mem) {
		return nil, false
	}
	n, tok, _ := scanSSELines(r.mem[r.pos:], true)
	// The bound a stream's reader applies: a line with the first byte of
	// its end (the CR of a CRLF is end enough) must fit a buffer of
	// maxLine bytes, or of 4096 (the scanner's first buffer) when that
	// is larger; a line with no end needs a byte more too, as the scanner
	// cuts it only once it sees the stream end.
	if len(tok)+1 > max(r.maxLine, scanBuffer) {
		r.tooLong = true
		return nil, false
	}
	r.pos += n
	return tok, true
}

// Next returns the next event. It returns io.EOF when the stream ends; a
// partial event at EOF is dropped, as the SSE spec says.
func (r *SSEReader) Next() (Event, error) {
	var ev Event
	var first []byte      // the first data line
	var more bytes.Buffer // the data lines joined, from the second on
	seen, dataLines := false, 0
	for {
		line, ok := r.line()
		if !ok {
			break
		}
		if len(line) == 0 {
			if !seen {
				continue
			}
			switch {
			case dataLines > 1:
				ev.Data = more.Bytes()
			case len(first) > 0:
				ev.Data = first
			}
			ev.HasData = dataLines > 0
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			switch dataLines {
			case 0:
				// A body in memory stays; a stream's scanner reuses its
				// buffer on the next Scan.
				first = value
				if r.sc != nil {
					first = bytes.Clone(value)
				}
			case 1:
				more.Grow(len(first) + 1 + len(value))
				more.Write(first)
				fallthrough
			default:
				more.WriteByte('\n')
				more.Write(value)
			}
			dataLines++
			seen = true
		case "id":
			if !bytes.Contains(value, []byte{0}) { // an id with NULL is ignored
				ev.ID, ev.IDSet = string(value), true
			}
			seen = true
		case "event":
			if string(value) == "message" {
				ev.Name = "message" // the usual name, without a copy each
			} else {
				ev.Name = string(value)
			}
			seen = true
		case "retry":
			ev.Retry = string(value)
			seen = true
		}
	}
	if r.tooLong {
		return Event{}, ErrEventTooLarge
	}
	if r.sc != nil {
		if err := r.sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return Event{}, ErrEventTooLarge
			}
			return Event{}, fmt.Errorf("reading sse stream: %w", err)
		}
	}
	return Event{}, io.EOF
}

// SplitSSE parses a whole SSE body into the data of its message events,
// and the last event id the stream set (what a client resumes from).
func SplitSSE(body []byte, maxLine int) ([][]byte, string, error) {
	r := NewSSEBodyReader(body, maxLine)
	var out [][]byte
	lastID := ""
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out, lastID, nil
		}
		if err != nil {
			return out, lastID, err
		}
		if ev.IDSet {
			lastID = ev.ID
		}
		if len(ev.Data) > 0 && ev.IsMessage() {
			out = append(out, ev.Data)
		}
	}
}

// HiddenResponse is the name of an event of a whole SSE body that is not
// a message event yet carries a JSON-RPC response: no client reads it
// (IsMessage). "" if there is none.
func HiddenResponse(body []byte) string {
	if !bytes.Contains(body, []byte("event:")) {
		return ""
	}
	r := NewSSEBodyReader(body, MaxSSELine)
	for {
		ev, err := r.Next()
		if err != nil {
			return ""
		}
		if !ev.IsMessage() && IsResponse(ev.Data) {
			return ev.Name
		}
	}
}

// scanSSELines splits on LF, CRLF or a lone CR.
func scanSSELines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	for i, b := range data {
		switch b {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // need more to know if LF follows
		}
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
