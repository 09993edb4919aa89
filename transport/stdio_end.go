package transport

import (
	"context"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/wymcp/wymcp-check/envelope"
)

// EndInput closes the server's stdin, as a client ending the session
// does, and reads what stdout carries after that until it ends and the
// process exits, or Limits.Exit passes: the exchange of the end of input
// (envelope.EndOfInput). Its lines are the server's as any exchange's
// are: a goodbye banner on stdout breaks T-STDIO-2 as one at the start
// does, and without this exchange Close dropped it unread. Lingered says
// the process still ran when Limits.Exit ran out (T-STDIO-6); Close then
// stops it as it stops any process.
//
// ok is false when there was nothing to end: the transport closed, or
// stdin out of step after a request written in part (the server would
// read the part as a line of its own at the end).
func (s *Stdio) EndInput(ctx context.Context) (ex envelope.Exchange, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.stop:
		return ex, false
	default:
	}
	if s.broken != "" || ctx.Err() != nil {
		return ex, false
	}
	ex = envelope.Exchange{Transport: envelope.Stdio, Request: envelope.Request{Method: envelope.EndOfInput}}
	var c collector
	// full is the checker's byte bound broken by one line (no judging
	// it: an error, as in Do); stopped, a flood of lines past the
	// bounds, which are dropped: what came within them is judged.
	full, stopped := "", ""
	// lateSeen are the late replies taken here, by id key: the same id
	// again is a second response to that request (review rev51: it was
	// taken for the end of input's own reply).
	lateSeen := map[string]string{}
	var again, copies []string
	take := func(ln line) {
		if envelope.IsResponse(ln.data) {
			rid := gjson.GetBytes(ln.data, "id")
			k := idKey(rid)
			switch prev, seen := lateSeen[k]; {
			case k != "" && s.late[k]:
				// A late reply to a request that timed out: that
				// request's, for the caller (TakeLate), as in Do.
				delete(s.late, k)
				lateSeen[k] = string(ln.data)
				if len(s.lateLines) < s.lim.MaxEvents {
					s.lateLines = append(s.lateLines, ln.data)
				}
				return
			case seen && prev == string(ln.data):
				copies = append(copies, envelope.Compact(rid.Raw))
			case seen:
				again = append(again, envelope.Compact(rid.Raw))
			}
		}
		// Past the bounds the lines are still read, and dropped: a
		// server blocked on a full stdout cannot exit. A flood (review
		// rev50) is the server's: its first lines are judged, and the
		// exit, not lost to the checker's "could not judge".
		switch {
		case full != "" || stopped != "":
		case len(c.msgs) >= s.lim.MaxEvents || len(c.msgs) > 0 && !ln.cut && c.n+int64(len(ln.data)) > s.lim.MaxBytes:
			c.truncated = true
			stopped = fmt.Sprintf("%d lines after stdin closed; the checker stopped keeping them", len(c.msgs))
		default:
			full = c.add(ln, s.lim.MaxBytes)
		}
	}
	for _, ln := range s.waiting() {
		take(ln)
	}
	// An answer to a request of the server's may be on its way to stdin
	// (answerServer): the close waits for it, never cuts it.
	s.wmu.Lock()
	s.stdin.Close()
	s.wmu.Unlock()
	s.inputEnded.Store(time.Now().UnixNano())

	grace := time.NewTimer(s.lim.Exit)
	defer grace.Stop()
	lines, exited, hurry := s.lines, s.exited, s.lim.Hurry
	var short <-chan time.Time
wait:
	for lines != nil || exited != nil {
		select {
		case ln, open := <-lines:
			if !open {
				lines = nil
				continue
			}
			take(ln)
		case <-exited:
			// Its stdout may still be held by a child it left, which may
			// write yet: read on until stdout ends or the wait does
			// (review rev51: a child's goodbye a second after the exit
			// was lost to a 500 ms settle).
			exited = nil
		case <-grace.C:
			break wait
		case <-short:
			break wait
		case <-hurry:
			hurry, short = nil, time.After(HurryGrace)
		case <-ctx.Done():
			break wait
		}
	}
	ex.Response = c.response()
	if ex.Response != nil {
		ex.Response.Unsent, ex.Response.Again, ex.Response.Copies = s.strays(ex.Response, "")
		ex.Response.Again = append(ex.Response.Again, again...)
		ex.Response.Copies = append(ex.Response.Copies, copies...)
	}
	ex.Failure = full
	// Only a wait that ran its whole time tells of a lingering server:
	// one cut short by the run's deadline or an interrupt says nothing.
	gone := s.hasExited()
	ex.InputEnded(gone, !gone && short == nil && ctx.Err() == nil, s.lim.Exit, "the run stopped waiting")
	ex.Note = envelope.JoinNotes(ex.Note, stopped)
	return ex, true
}
