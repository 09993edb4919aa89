package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// errTooLarge stops a reply at Limits.MaxBytes.
var errTooLarge = errors.New("reply exceeds the byte bound")

// readBody reads a non-stream reply into r.Body, up to the byte bound.
// A body without a declared length ends where the server closes the
// connection (RFC 9112 §6.3), and a reset closes it too: a server that
// refuses an oversized request with 431 and then resets the connection
// over the bytes it never read has still answered 431. A reset may also
// erase bytes not yet read (RFC 9112 §9.6), so only a refusal (resetEnds:
// a 4xx or 5xx without a declared length) that brought no body at all
// ends there; a body cut short stays "could not judge".
//
// malformed is net/http's cause when the body's chunked framing broke
// HTTP/1.1's syntax: the server's finding (see MalformedHTTP), whatever
// was read before.
func readBody(b bound, body io.Reader, r *envelope.Response, resetEnds, sized bool) (failure, malformed string) {
	data, err := io.ReadAll(io.LimitReader(body, b.lim.MaxBytes+1))
	if cause := MalformedHTTP(err); cause != "" {
		return "", cause
	}
	if resetEnds && len(data) == 0 && errors.Is(err, syscall.ECONNRESET) {
		err = nil
	}
	if int64(len(data)) > b.lim.MaxBytes || errors.Is(err, errTooLarge) {
		r.Body, r.Truncated = data[:min(int64(len(data)), b.lim.MaxBytes)], true
		return b.tooLarge(err), ""
	}
	r.Body = data
	var ce *envelope.CodingError
	if errors.As(err, &ce) {
		// The server's bytes came: never silence. A body that does not
		// decode in the coding it names is no message a client can read,
		// the server's finding, as a broken framing is (review rev56);
		// an unknown coding or a bound is the checker's limit. (Errors
		// of the connection itself are no CodingError.)
		if ce.Corrupt() {
			return "", ce.Error()
		}
		return ce.Error(), ""
	}
	if err != nil && !sized && !b.timedOut() && len(bytes.TrimSpace(data)) > 0 && gjson.ValidBytes(data) {
		// A body without a length ends when the connection does: bytes
		// that already form a whole JSON value are the reply, however the
		// connection then ended (a reset after the last byte). A body
		// that never ends (the time bound ran out) is no reply: a client
		// reading to its end waits for ever.
		err = nil
	}
	if err != nil {
		r.Cut = true
		return b.describe(
			fmt.Sprintf("reply incomplete after %s (%d bytes read)", b.lim.Timeout, len(data)),
			fmt.Sprintf("reading the reply: %v (%d bytes read)", err, len(data))), ""
	}
	return "", ""
}

// sseEnd is what a client needs to resume a stream that ended: whether
// it carried the awaited response, the last event id and retry it set,
// and whether it ended inside an event (whose bytes a resumed stream's
// would then join mid-event).
type sseEnd struct {
	answered bool
	lastID   string
	retry    string
	// partial: the stream stopped after bytes that end no event (an
	// event cut short, a comment); whole is where its last whole event
	// ended. A client drops such bytes (the SSE processing model
	// dispatches only whole events) and resumes from the last id it
	// dispatched, so a resumption joins the next stream at whole.
	partial bool
	whole   int64
	size    int64 // the bytes of the stream read
	// events counts the events the exchange read: a resumed stream's
	// count on from the POST's, so a message and the MaxEvents bound
	// speak of the whole exchange.
	events int
	// malformed is net/http's cause when the stream's chunked framing
	// broke HTTP/1.1's syntax before the response (see MalformedHTTP).
	malformed string
}

// decoded is resp's body as a client reads it: its content codings
// undone as the bytes arrive, so each event is seen when it comes (a
// stream kept open after its response is no silence), and the decoded
// bytes count against the byte bound as a body sent plain does; the
// coded bytes are bounded too, in case they decode to nothing. coding
// names the codings undone, "" when there were none.
func decoded(lim Limits, resp *http.Response) (body io.Reader, coding string) {
	codings := envelope.Codings(resp.Header)
	if codings == nil {
		return resp.Body, ""
	}
	return &decoding{src: &capped{r: resp.Body, max: lim.MaxBytes, err: errCodedTooLarge}, codings: codings}, strings.Join(codings, ", ")
}

// recordDecoded is what an exchange records of a reply read decoded:
// its header without the Content-Encoding and Content-Length that
// described the coded bytes, as the relay records it, so that the body
// is never decoded a second time (envelope.ReadReply decodes a body
// whose header names a coding).
func recordDecoded(h http.Header) http.Header {
	h = h.Clone()
	h.Del("Content-Encoding")
	h.Del("Content-Length")
	return h
}

// decodedNote tells the report that the reply was judged decoded.
func decodedNote(coding string) string {
	return "Content-Encoding " + coding + ": judged decoded, as the client reads it"
}

// decoding undoes codings on src, starting at the first byte: an empty
// body (a 202's) is empty, whatever coding its header names, as
// envelope.ReadReply reads one.
type decoding struct {
	src     io.Reader
	codings []string
	dec     io.Reader
	err     error
}

func (d *decoding) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.dec == nil {
		br := bufio.NewReader(d.src)
		if _, err := br.Peek(1); err != nil {
			d.err = err
			return 0, err
		}
		if d.dec, d.err = envelope.NewDecoder(br, d.codings); d.err != nil {
			return 0, d.err
		}
	}
	return d.dec.Read(p)
}

// errCodedTooLarge stops coded bytes at Limits.MaxBytes, whatever they
// decode to.
var errCodedTooLarge = fmt.Errorf("coded %w", errTooLarge)

// tooLarge is the failure of a reply past the byte bound: its decoded
// bytes, when it was coded, else the bytes as they came.
func (b bound) tooLarge(err error) string {
	if b.coding != "" && !errors.Is(err, errCodedTooLarge) {
		return (&envelope.CodingError{Coding: b.coding, Max: b.lim.MaxBytes, Err: envelope.ErrDecodedTooLarge}).Error()
	}
	return fmt.Sprintf("reply exceeds %d bytes", b.lim.MaxBytes)
}

// readSSE reads an event stream until its end, or a bound. It waits for
// the first message that answers the request (answers, see Answers: a
// response to another request's id answers nothing, and is kept as a
// message of the exchange); past that response it reads on for
// at most Limits.Quiet (linger ends it then, as a server that keeps the
// stream open is not wrong to), so that what the server still sends on
// the request's stream is judged as lint and the relays judge it: a
// second response, progress after the response. r.Body gets the raw
// bytes of the events read; the reader reads ahead, and what it read
// past the last whole event is dropped. end says how the stream ended.
func readSSE(b bound, body io.Reader, r *envelope.Response, answers func(msg []byte) bool, linger func(), end *sseEnd) string {
	rec := &capped{r: body, max: b.lim.MaxBytes, err: errTooLarge, keep: new(bytes.Buffer)}
	cut := int64(-1) // where the last event ended, once the response came
	defer func() {
		r.Body = rec.keep.Bytes()
		end.size = int64(len(r.Body))
		if cut >= 0 && cut < int64(len(r.Body)) {
			// What was read ahead is not part of the exchange, and a
			// transcript of the body must split into exactly Messages.
			r.Body = r.Body[:cut]
		}
	}()
	sr := envelope.NewSSEReader(rec, int(b.lim.MaxBytes)+1)
	var stop *time.Timer
	var lingered atomic.Bool
	var ce *envelope.CodingError
	defer func() {
		if stop != nil {
			stop.Stop()
		}
	}()
	for {
		ev, err := sr.Next()
		switch {
		case err == io.EOF:
			r.Ended = true
			end.partial = !endsAtBlankLine(rec.keep.Bytes())
			return ""
		case err != nil && cut >= 0:
			// Past the response, the end of the look, a bound or a
			// broken stream ends what is read; the exchange had its
			// answer.
			r.HeldOpen = lingered.Load()
			return ""
		case errors.Is(err, errTooLarge), errors.Is(err, envelope.ErrEventTooLarge):
			r.Truncated = true
			return b.tooLarge(err)
		case errors.As(err, &ce) && ce.Corrupt():
			// Events coded in a way no client can undo: as a broken
			// framing (review rev56).
			end.malformed = ce.Error()
			return ""
		case errors.As(err, &ce):
			// The events came, coded in a way the checker cannot undo:
			// not the server's silence.
			return ce.Error()
		case err != nil && MalformedHTTP(err) != "":
			end.malformed = MalformedHTTP(err)
			return ""
		case err != nil:
			// A stream the server broke off before its response withholds
			// the answer, as a JSON body cut short does.
			r.Cut = true
			end.partial = !endsAtBlankLine(rec.keep.Bytes())
			return b.describe(
				fmt.Sprintf("no response within %s: %s", b.lim.Timeout, countWithout(end.events, "event")),
				fmt.Sprintf("reading the event stream: %v (%s)", err, countWithout(end.events, "event")))
		}
		end.events++
		end.whole = sr.Consumed()
		if cut >= 0 {
			cut = sr.Consumed()
		}
		if ev.IDSet {
			end.lastID = ev.ID
		}
		if ev.Retry != "" {
			end.retry = ev.Retry
		}
		if len(ev.Data) > 0 && ev.IsMessage() {
			r.Messages = append(r.Messages, ev.Data)
			if b.answer != nil {
				b.answer(ev.Data)
			}
			if cut < 0 && answers(ev.Data) {
				cut = sr.Consumed()
				end.answered = true
				if linger == nil {
					return ""
				}
				stop = time.AfterFunc(b.lim.Quiet, func() { lingered.Store(true); linger() })
			}
		}
		if end.events >= b.lim.MaxEvents {
			if cut >= 0 {
				return ""
			}
			r.Truncated = true
			// Nothing read past the bounding event is the exchange's: a
			// response the same read brought along would be judged, or
			// not, as the server's writes fell (review of stop 62).
			cut = sr.Consumed()
			return fmt.Sprintf("no response in the first %d events", end.events)
		}
	}
}

// Answers tells whether a message on the event stream of the request in
// body answers that request. The first one that does is the request's
// response: a client's reader stops waiting there, and check's transport
// and the HTTP relay (proxy) read on past it for Limits.Quiet, no
// longer; both tell it with this one function. A message answers
// when it is a response (envelope.IsResponse: an object with no method,
// or a batch holding a response or nothing) and does not name another
// request: a response whose id is a string or a number that matches
// none of the request's ids, even in the other JSON type ("7" for 7
// answers it, with the wrong id), answers nothing. The stream goes on
// past such a stray, as a client's reader does, to the response it
// waits for; the stray is a message of the exchange, and the checks
// judge it (RPC1006: a POST's stream carries its request's own
// response; RPC1004 when it is the only response that came). For a
// request whose ids cannot all be read, the first response answers.
func Answers(body []byte) func(msg []byte) bool {
	other := answersOther(body)
	return func(msg []byte) bool {
		return envelope.IsResponse(msg) && (other == nil || !other(msg))
	}
}

// answersOther tells a response to another request than the one in
// body (see Answers); nil when the request's ids cannot all be read.
func answersOther(body []byte) func(msg []byte) bool {
	m := envelope.Parse(body)
	if !m.IsObject() {
		return nil
	}
	var ids []gjson.Result
	ok := true
	m.Root().ForEach(func(k, v gjson.Result) bool {
		if k.Str == "id" {
			ok = envelope.IDKey(v) != ""
			ids = append(ids, v)
		}
		return ok
	})
	if !ok || len(ids) == 0 {
		return nil
	}
	return func(msg []byte) bool {
		id := gjson.GetBytes(msg, "id")
		key := envelope.IDKey(id)
		return key != "" && !slices.ContainsFunc(ids, func(want gjson.Result) bool {
			// The same number as a float64 holds it (RFC 8259 §6 lets a
			// server read 12345678901234567890 so) answers it too, and
			// is judged for it.
			return envelope.SameID(want, id) || key == envelope.OtherTypeKey(envelope.IDKey(want)) ||
				want.Type == gjson.Number && id.Type == gjson.Number && want.Num == id.Num
		})
	}
}

func countWithout(n int, unit string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s without a response", unit)
	}
	return fmt.Sprintf("%d %ss without a response", n, unit)
}

// capped passes reads through, at most max bytes of them. It lets one
// byte more through to see that there is more, drops it and fails with
// err from then on; keep, when set, gets a copy of what it passed,
// exactly max bytes at most. One type bounds both a coded body's bytes
// and the decoded bytes an event stream records.
type capped struct {
	r    io.Reader
	max  int64
	err  error
	keep *bytes.Buffer
	n    int64
	over bool
}

func (c *capped) Read(p []byte) (int, error) {
	if c.over {
		return 0, c.err
	}
	if room := c.max + 1 - c.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		n -= int(c.n - c.max)
		c.over = true
		err = c.err
	}
	if c.keep != nil {
		c.keep.Write(p[:n])
	}
	return n, err
}

// endsAtBlankLine: an event stream's bytes end where an event does, at a
// blank line (two line ends, each CRLF, LF or CR), or hold nothing.
func endsAtBlankLine(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	for _, end := range []string{"\n\n", "\n\r\n", "\r\r", "\n\r", "\r\r\n"} {
		if bytes.HasSuffix(b, []byte(end)) {
			return true
		}
	}
	return false
}
