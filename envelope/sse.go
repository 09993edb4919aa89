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
}

// ErrEventTooLarge is returned when a single SSE line exceeds the reader's
// bound: a flooding server must not make the checker buffer without end.
var ErrEventTooLarge = errors.New("sse event exceeds the size bound")

// An SSEReader splits a text/event-stream into events as the WHATWG
// grammar says: lines end in LF, CR or CRLF; a blank line ends an event;
// lines starting with ':' are comments (keep-alives).
type SSEReader struct {
	sc       *bufio.Scanner
	consumed int64 // bytes of the stream the events so far took
	bomDone  bool  // the stream's start was looked at for a byte order mark
}

// NewSSEReader reads events from r; no line may exceed maxLine bytes.
func NewSSEReader(r io.Reader, maxLine int) *SSEReader {
	sr := &SSEReader{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if sr.consumed == 0 && !sr.bomDone {
			// The grammar lets a stream start with a byte order mark:
			// stream = [ bom ] *event.
			switch {
			case len(data) >= len(bom):
				sr.bomDone = true
				if string(data[:len(bom)]) == bom {
					sr.consumed += int64(len(bom))
					return len(bom), nil, nil
				}
			case !atEOF && bytes.HasPrefix([]byte(bom), data):
				return 0, nil, nil // too few bytes to tell yet
			default:
				sr.bomDone = true
			}
		}
		n, tok, err := scanSSELines(data, atEOF)
		sr.consumed += int64(n)
		return n, tok, err
	})
	sr.sc = sc
	return sr
}

// Consumed is how many bytes of the stream the events read so far took
// (the reader reads ahead of them): a recording cut there holds exactly
// those events.
func (r *SSEReader) Consumed() int64 { return r.consumed }

// Next returns the next event. It returns io.EOF when the stream ends; a
// partial event at EOF is dropped, as the SSE spec says.
func (r *SSEReader) Next() (Event, error) {
	var ev Event
	var data bytes.Buffer
	seen, dataLines := false, 0
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if !seen {
				continue
			}
			ev.Data = bytes.Clone(data.Bytes())
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if dataLines > 0 {
				data.WriteByte('\n')
			}
			data.Write(value)
			dataLines++
			seen = true
		case "id":
			if !bytes.Contains(value, []byte{0}) { // an id with NULL is ignored
				ev.ID, ev.IDSet = string(value), true
			}
			seen = true
		case "event":
			ev.Name = string(value)
			seen = true
		case "retry":
			ev.Retry = string(value)
			seen = true
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, ErrEventTooLarge
		}
		return Event{}, fmt.Errorf("reading sse stream: %w", err)
	}
	return Event{}, io.EOF
}

// SplitSSE parses a whole SSE body into the data of its events, and the
// last event id the stream set (what a client resumes from).
func SplitSSE(body []byte, maxLine int) ([][]byte, string, error) {
	r := NewSSEReader(bytes.NewReader(body), maxLine)
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
		if len(ev.Data) > 0 {
			out = append(out, ev.Data)
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
