package proxy

import (
	"bytes"

	"github.com/wymcp/wymcp-check/envelope"
)

// The splitters find message boundaries in bytes as they pass, chunk by
// chunk, and keep at most max bytes of any one message: the relay has
// already forwarded the bytes, and observing them must not grow with a
// side that never ends a line or an event.

// A frame is one message found by a splitter.
type frame struct {
	raw       []byte // at most max bytes; owned by the receiver
	size      int64  // the whole frame's length
	oversized bool   // size > max: raw is its beginning
	open      bool   // the stream ended before the line's "\n"
	// end is where an SSE event ends in its stream, counted in bytes from
	// the stream's start: the text up to it splits into whole events.
	end int64
}

// keep appends p to buf up to max bytes.
func keep(buf []byte, p []byte, max int64) []byte {
	if room := max - int64(len(buf)); room > 0 {
		buf = append(buf, p[:min(int64(len(p)), room)]...)
	}
	return buf
}

// A lineSplitter splits a stdio stream into lines.
type lineSplitter struct {
	max  int64
	cur  []byte
	size int64
}

// feed emits every line that p completes: its bytes without the "\n"
// and a "\r" before it.
func (l *lineSplitter) feed(p []byte, emit func(frame)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.cur = keep(l.cur, p, l.max)
			l.size += int64(len(p))
			return
		}
		l.cur = keep(l.cur, p[:i], l.max)
		l.size += int64(i)
		emit(l.take())
		p = p[i+1:]
	}
}

// flush emits a last line that no "\n" ended, if any.
func (l *lineSplitter) flush(emit func(frame)) bool {
	if l.size == 0 {
		return false
	}
	f := l.take()
	f.open = true
	emit(f)
	return true
}

func (l *lineSplitter) take() frame {
	f := frame{raw: l.cur, size: l.size, oversized: l.size > l.max}
	if !f.oversized && len(f.raw) > 0 && f.raw[len(f.raw)-1] == '\r' {
		f.raw = f.raw[:len(f.raw)-1]
		f.size--
	}
	l.cur, l.size = nil, 0
	return f
}

// An sseSplitter finds the events of a text/event-stream: lines end in
// LF, CR or CRLF, and a blank line ends an event (WHATWG HTML §9.2.6).
// It emits each event's whole text, which envelope.SplitSSE then reads,
// so the relay and the judge parse events one way.
type sseSplitter struct {
	max     int64
	cur     []byte // the current event's text, at most max bytes
	size    int64
	lineLen int64 // bytes of the current line so far
	prevCR  bool  // the last byte was a CR: an LF now belongs to it
	content bool  // the current event has a non-blank line
	pos     int64 // bytes of the stream split so far
}

func (s *sseSplitter) feed(p []byte, emit func(frame)) {
	for len(p) > 0 {
		if s.prevCR && p[0] == '\n' {
			s.prevCR = false
			s.add(p[:1])
			p = p[1:]
			continue
		}
		s.prevCR = false
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			s.add(p)
			s.lineLen += int64(len(p))
			s.content = true
			return
		}
		if i > 0 {
			s.add(p[:i])
			s.lineLen += int64(i)
			s.content = true
		}
		s.add(p[i : i+1])
		s.prevCR = p[i] == '\r'
		blank := s.lineLen == 0
		s.lineLen = 0
		p = p[i+1:]
		if blank {
			if s.content {
				emit(frame{raw: s.cur, size: s.size, oversized: s.size > s.max, end: s.pos})
			}
			s.cur, s.size, s.content = nil, 0, false
		}
	}
}

func (s *sseSplitter) add(p []byte) {
	s.cur = keep(s.cur, p, s.max)
	s.size += int64(len(p))
	s.pos += int64(len(p))
}

// eventData reads the data of one event's text: nil when the event
// carries none (a comment, a bare id or retry), which is no message. A
// cut text lacks its blank line; one is added so that its beginning is
// still read.
func eventData(f frame) []byte {
	text := f.raw
	if f.oversized {
		text = append(bytes.Clone(text), "\n\n"...)
	}
	ds, _, _ := envelope.SplitSSE(text, len(text)+1)
	if len(ds) == 0 {
		return nil
	}
	return ds[0]
}
