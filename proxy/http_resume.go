package proxy

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// A 2025-xx server may end a POST's stream after an event with an id and
// before the response, which the client then gets on a GET with
// Last-Event-ID (T-HTTP-15). check's transport resumes such a stream
// itself, and judges the exchange with the resumed stream's events
// joined to the POST's (Response.Resumed). The relay holds such an
// exchange for the client to resume (at most Limits.Timeout, the
// request's clock), joins the GET's events to it as check does, and
// judges it when its response comes, as check judges a resumed
// exchange. Unresumed, it is judged as the stream ended (RPC1006 warns).

// eventIDLocked keeps the last event id of the stream (an empty id
// resets it, as the SSE spec says). It reports whether the frame is an
// event as check's transport counts one against its event bound: one
// with a field (data, id, event, retry), not a comment alone; one over
// the byte bound counts, though it is past that bound anyway.
func (x *httpExchange) eventIDLocked(f frame) bool {
	if f.oversized {
		return true
	}
	ev, err := envelope.NewSSEReader(bytes.NewReader(f.raw), len(f.raw)+1).Next()
	if err == nil && ev.IDSet {
		x.lastID = ev.ID
	}
	return err == nil
}

// holdLocked holds a POST's stream that ended without the response after
// an event id, for the client to resume it; false when it is not to be
// held (judged now).
func (x *httpExchange) holdLocked() bool {
	switch {
	case !x.stream || x.req.HTTP.Method != http.MethodPost || x.lastID == "":
		// (A stream that stopped inside an event, or after a comment,
		// is resumed too: a client drops the bytes that end no event
		// and resumes from the last id it dispatched, and the resumed
		// stream joins at the last whole event: see resumeLocked.)
		return false
	case !x.owedLocked() || !x.resumable() || x.reply.Resumed >= envelope.MaxResumes:
		return false
	}
	x.held = true
	x.restartLocked()
	return true
}

// resumable: the request speaks a version with resumption, as check's
// transport reads it: its version header, or an initialize's body.
func (x *httpExchange) resumable() bool {
	v, ok := envelope.HeaderValue(x.silence.header, "MCP-Protocol-Version")
	if !ok {
		if x.method != "initialize" {
			return false
		}
		v = gjson.GetBytes(x.ex.Request.Body, "params.protocolVersion").Str
	}
	v = strings.TrimSpace(v)
	return v == envelope.V20251125 || v == envelope.V20250618
}

// resumeLocked joins a GET to the held POST it resumes: one in its
// session whose stream ended at the event id the GET names.
func (h *HTTP) resumeLocked(g *httpExchange, hdr http.Header) {
	vs, ok := hdr["Last-Event-Id"]
	if !ok || len(vs) != 1 {
		return
	}
	sid := hdr.Get("Mcp-Session-Id")
	var held *httpExchange
	for x := range h.open {
		if x.held && x.resumer == nil && x.lastID == vs[0] && x.session() == sid && (held == nil || x.req.Seq < held.req.Seq) {
			held = x
		}
	}
	if held == nil {
		return
	}
	held.held, held.resumer, g.resumes = false, g, held
	held.reply.Resumed++
	if held.text > held.whole {
		// Bytes that end no event, dropped as a client drops them (and
		// as check's transport does): the resumed stream's join the
		// last whole event.
		if int64(len(held.body)) > held.whole {
			held.body = held.body[:held.whole]
		}
		held.text = held.whole
	}
	// The response may take --timeout to come on the resumed stream.
	held.restartLocked()
}

// joinLocked takes an event of the resuming GET's stream into the
// POST's text, as check's transport joins the resumed stream's body to
// the POST's; it returns the frame with its end in that text.
func (x *httpExchange) joinLocked(f frame) frame {
	raw := f.raw
	if x.joined == 0 {
		// A stream may begin with a byte order mark; after the POST's
		// events it would begin a field's name.
		raw = bytes.TrimPrefix(raw, []byte("\ufeff"))
	}
	x.joined++
	x.text += int64(len(raw))
	x.body = keep(x.body, raw, x.h.c.lim.MaxBytes)
	f.end = x.text
	return f
}

// resumedEndLocked: the GET g that resumed x's stream ended (failure:
// how, "" for an end the server made; broken: the server broke it off). x is judged now, with what came
// on it, unless the GET's stream ended after an event id without the
// response: the client may resume it again, as check's transport does.
func (x *httpExchange) resumedEndLocked(g *httpExchange, failure string, broken bool) {
	if x.paired || x.frozen() || x.resumer != g {
		return
	}
	x.resumer = nil
	if g.stream {
		// A GET answered with no stream leaves the end of the stream
		// before it as it was, as check's transport leaves it.
		x.reply.Ended = g.reply.Ended
	} else if g.reply.Status != 0 {
		// The server answered it with no stream: it refused the
		// resumption, as check's transport records it.
		x.reply.ResumeRefused = true
	}
	if x.answer != nil {
		x.settleLocked() // the stream it came on ended
		return
	}
	if (failure == "" || broken) && g.lastID != "" {
		// Ended or broken off after an id, as the POST's may be: the
		// client may resume it again.
		x.lastID = g.lastID
		x.brokeOff = ""
		if broken {
			x.brokeOff = failure
		}
		if x.holdLocked() {
			return
		}
	}
	if failure != "" && !broken && x.brokeOff != "" && x.owedLocked() {
		// The resumption got no stream, after the server broke the
		// POST's off: whether it went away (PRO1005) or is alive and
		// left the request unanswered (RPC1006), its probe tells, as
		// for a dropped connection.
		x.freezeLocked(x.brokeOff, true)
		return
	}
	if ev, ok := x.pairLocked(failure, nil); ok {
		x.h.c.q.put(ev)
	}
}
