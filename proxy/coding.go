package proxy

import (
	"io"
	"strings"

	"github.com/wymcp/wymcp-check/envelope"
)

// An inflater undoes a reply's Content-Encoding as its bytes pass, so
// the relay observes and judges the messages the client reads while the
// bytes go on as the server sent them. The decoder runs on a goroutine
// of its own, reading the coded bytes write hands it; write returns once
// the decoder has turned out all it can from them and waits for more.
// So an event is observed before the bytes that carry it are written
// on, as without a coding, and nothing is decoded ahead of the traffic.
type inflater struct {
	codings []string
	max     int64 // bound on the bytes decoded; < 0: none (a stream)
	in      chan []byte
	out     chan inflated
	started bool
	ended   bool
	closed  bool
	// err says why decoding ended before the end of the body: a
	// *envelope.CodingError (envelope.ErrDecodedTooLarge past max).
	err error
}

// inflated is what the decoder hands back: decoded bytes, or that it
// waits for more input, or that it ended.
type inflated struct {
	p    []byte
	wait bool
	end  bool
	err  error
}

func newInflater(codings []string, max int64) *inflater {
	return &inflater{codings: codings, max: max, in: make(chan []byte), out: make(chan inflated)}
}

// write decodes p, handing each decoded piece to emit before it returns.
// emit must be done with a piece when it returns. Once decoding ended
// (its error, or the bound), write does nothing.
func (f *inflater) write(p []byte, emit func([]byte)) {
	if f.ended || f.closed || len(p) == 0 {
		return
	}
	if !f.started {
		f.started = true
		go f.run()
	}
	f.in <- p
	f.collect(emit)
}

// close ends the input: what the decoder still holds is emitted, and a
// body that ends before its coding does sets err.
func (f *inflater) close(emit func([]byte)) {
	if f.closed {
		return
	}
	f.closed = true
	if !f.started || f.ended {
		return
	}
	close(f.in)
	f.collect(emit)
}

func (f *inflater) collect(emit func([]byte)) {
	for {
		r := <-f.out
		switch {
		case r.end:
			f.ended, f.err = true, r.err
			return
		case r.wait:
			return
		}
		emit(r.p)
	}
}

// run is the decoder. Two buffers take turns: the one handed over is
// the feeder's until it asks for the next piece, as an unbuffered
// channel hands over only when the feeder has done with the last.
func (f *inflater) run() {
	// The first piece is taken at once: a coding refused before any
	// reading (an unknown one) must not leave write waiting to hand it.
	first := <-f.in
	r, err := envelope.NewDecoder(&feedReader{f: f, cur: first, fed: true}, f.codings)
	if err != nil {
		f.out <- inflated{end: true, err: err}
		return
	}
	var bufs [2][]byte
	bufs[0], bufs[1] = make([]byte, 16<<10), make([]byte, 16<<10)
	var total int64
	for turn := 0; ; turn ^= 1 {
		buf := bufs[turn]
		if f.max >= 0 {
			// One byte past the bound tells a body that ends there from
			// one that goes on.
			buf = buf[:min(int64(len(buf)), f.max+1-total)]
		}
		n, err := r.Read(buf)
		total += int64(n)
		if n > 0 {
			f.out <- inflated{p: buf[:n]}
		}
		switch {
		case f.max >= 0 && total > f.max:
			f.out <- inflated{end: true, err: &envelope.CodingError{Coding: strings.Join(f.codings, ", "), Max: f.max, Err: envelope.ErrDecodedTooLarge}}
			return
		case err == io.EOF:
			f.out <- inflated{end: true}
			return
		case err != nil:
			f.out <- inflated{end: true, err: err}
			return
		}
	}
}

// feedReader is the decoder's input: the pieces write hands over. It
// tells the feeder when it has used one up and needs the next.
type feedReader struct {
	f   *inflater
	cur []byte
	fed bool
}

func (s *feedReader) Read(p []byte) (int, error) {
	for len(s.cur) == 0 {
		if s.fed {
			s.f.out <- inflated{wait: true}
		}
		c, ok := <-s.f.in
		if !ok {
			return 0, io.EOF
		}
		s.cur, s.fed = c, true
	}
	n := copy(p, s.cur)
	s.cur = s.cur[n:]
	return n, nil
}
