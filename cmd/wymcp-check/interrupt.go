package main

import (
	"context"
	"errors"
	"io"

	"github.com/wymcp/wymcp-check/runner"
)

// markInterrupted says whether a signal stopped the run whose context
// s.Interrupts gave, and if so marks the summary interrupted, with what
// the reports hold: finish then writes every report whole and returns
// errStopped (exit 4). check and lint both end so.
func (ss *session) markInterrupted(ctx context.Context, holds string) bool {
	cause := context.Cause(ctx)
	if !errors.Is(cause, runner.ErrInterrupted) {
		return false
	}
	ss.sum.Interrupted = cause.Error() + "; " + holds
	return true
}

// stoppableReader reads r until ctx ends; from then on Read returns the
// context's cause at once, even while r's own Read waits on a pipe that
// may never be written to again (lint - behind a relay, a FIFO whose
// writer sleeps). r is read by a goroutine of its own into a buffer of
// its own, only when the last chunk has been taken: a Read abandoned
// when ctx ends then writes into nothing the caller holds. (That
// goroutine ends with the read it waits in, at the latest when the
// process exits.)
type stoppableReader struct {
	ctx     context.Context
	want    chan struct{}
	got     chan chunk
	pending []byte
	err     error // r's error, once pending is drained
	asked   bool
}

type chunk struct {
	b   []byte
	err error
}

// stoppable returns r as a stoppableReader, or r itself checked before
// each Read when r never waits long (a regular file): the goroutine
// costs a hand-over per chunk for nothing there.
func stoppable(ctx context.Context, r io.Reader, waits bool) io.Reader {
	if !waits {
		return checkedReader{ctx, r}
	}
	sr := &stoppableReader{ctx: ctx, want: make(chan struct{}), got: make(chan chunk)}
	go func() {
		buf := make([]byte, 64<<10)
		for {
			select {
			case <-sr.want:
			case <-ctx.Done():
				return
			}
			n, err := r.Read(buf)
			select {
			case sr.got <- chunk{buf[:n], err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return sr
}

func (sr *stoppableReader) Read(p []byte) (int, error) {
	for len(sr.pending) == 0 {
		if sr.err != nil {
			return 0, sr.err
		}
		if err := context.Cause(sr.ctx); err != nil {
			return 0, err
		}
		if !sr.asked {
			select {
			case sr.want <- struct{}{}:
				sr.asked = true
			case <-sr.ctx.Done():
				return 0, context.Cause(sr.ctx)
			}
		}
		select {
		case c := <-sr.got:
			sr.asked = false
			sr.pending, sr.err = c.b, c.err
		case <-sr.ctx.Done():
			return 0, context.Cause(sr.ctx)
		}
	}
	n := copy(p, sr.pending)
	sr.pending = sr.pending[n:]
	return n, nil
}

// checkedReader is a reader that stops at its next Read once ctx ends.
type checkedReader struct {
	ctx context.Context
	r   io.Reader
}

func (c checkedReader) Read(p []byte) (int, error) {
	if err := context.Cause(c.ctx); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
