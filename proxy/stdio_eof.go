package proxy

import (
	"fmt"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
)

// The end of a stdio server's input. When the client closes its end
// while the server runs, the relay closes the server's stdin, as check
// does after its last fixture, and what the server writes after that
// joins an exchange of its own (envelope.EndOfInput), judged as check
// judges it: a goodbye line on stdout breaks T-STDIO-2 as a startup
// banner does (RPC1001), and a 2026-07-28 server still running when the
// grace runs out breaks T-STDIO-6 (PRO1011). Without it, a line written
// then waited for a next request that never came, and was judged
// nowhere (a false pass found in review). A server that ends while the client is still
// connected has no such exchange: its input never ended.

// endInputLocked opens the exchange of the end of the server's input:
// the client closed its end first. It takes the lines held for a next
// request that will not come (see held): they joined no exchange, and
// are judged with this one.
func (r *stdioRelay) endInputLocked() {
	w := &waiting{sent: r.now(),
		ex: &envelope.Exchange{Transport: envelope.Stdio, Request: envelope.Request{Method: envelope.EndOfInput}}}
	w.besides, w.besidesSize = r.held, r.heldSize
	r.held, r.heldSize = nil, 0
	r.eof = w
}

// eofKeepLocked adds o, a line of the server's that no request's
// exchange takes, to the end of input's reply, within the bounds of one
// request's (see keepLocked): a line that does not fit leaves the reply
// not whole, and the exchange is not judged (an error, as a reply over
// --max-bytes). unsent is the id of a response to no request sent (see
// unsentLocked).
func (r *stdioRelay) eofKeepLocked(o *Observation, unsent string) {
	what := "judged with the end of input"
	switch {
	case r.keepLocked(r.eof, o.Raw, o.Oversized, true, unsent):
	case r.eof.over:
		what = "past --max-bytes in the end of input, which is not judged"
	default:
		what = fmt.Sprintf("past the %d lines the end of input holds, not judged", maxBesides)
	}
	if o.Note == "" {
		o.Note = "after the client closed stdin; " + what
		return
	}
	o.Note += " (" + what + ")"
}

// inputEnded takes in how the server took the end of its input, once it
// ended: exited within check's wait (Limits.Exit) after its
// stdin closed, or lingered (still running past it); neither: the relay
// stopped waiting first (--grace shorter, stopped, a signal passed on).
// The note reads as check's (transport.Stdio.EndInput).
func (r *stdioRelay) inputEnded(exited, lingered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.eof
	if w == nil {
		return
	}
	w.ex.InputEnded(exited, lingered, r.lim.Exit, "the relay stopped waiting, or was signalled")
}

// eofPairLocked closes the exchange of the end of input, if there is
// one: its reply is what it took, and it asks what the client's
// requests asked so far, as check's does. It is numbered after the last
// message, as the relay names its exchanges ("#7 EOF"): no message
// passes after it, and the messages keep their numbers.
func (r *stdioRelay) eofPairLocked(done time.Time) []event {
	w := r.eof
	if w == nil {
		return nil
	}
	r.eof = nil
	r.seq++
	w.seq = r.seq
	if len(w.besides) > 0 {
		w.ex.Response = &envelope.Response{Messages: w.besides, Unsent: w.unsent}
	}
	r.offeredLocked(w)
	w.ex.Version = r.version
	return []event{pairEvent(&Pair{Asker: ClientToServer, Exchange: w.ex, Sent: w.sent, Done: done, RequestSeq: w.seq, Oversized: w.over})}
}
