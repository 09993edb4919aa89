package proxy

import (
	"net/http"
	"slices"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// The progress tokens of a session's requests, for its GET streams.
// Progress on a GET stream names a request of the session in flight,
// which the stream's messages SHOULD leave alone (T-HTTP-12, a warn);
// progress for a token no request of the session still active offered
// names no request at all (T-PROG-1, MUST), and PRO1003 fails it where
// the exchange lists what was offered (envelope.Exchange.Offered). The
// relay knows every request of a session whose initialize it relayed:
// the session is the client's, and the client's requests come through
// the relay.

// A sessionTokens is what one session's POSTs offered.
type sessionTokens struct {
	offers []*httpOffer
	// unknown: a request's tokens could not be read (too large, a token
	// of no allowed type), or more than envelope.MaxOffered were kept:
	// the session's GET exchanges say nothing of them.
	unknown bool
}

// An httpOffer is the tokens of one POST of the session.
type httpOffer struct {
	x    *httpExchange
	toks []string
	// answered is when the relay paired the request with its answer
	// (zero: still active: waiting, or closed with none, which may
	// still be at work on the server). Its tokens stay offered
	// Limits.Quiet past it: the answer and the GET stream's event come on
	// two connections, whose order the relay cannot know closer than
	// that.
	answered time.Time
	// lives: a 2025-11-25 task-augmented request answered with its task:
	// its token serves the task's lifetime (see offer).
	lives bool
}

// offerLocked notes the tokens a POST of a session known from its
// initialize offers.
func (h *HTTP) offerLocked(x *httpExchange, raw []byte, over bool) {
	sid := x.req.HTTP.Header.Get("Mcp-Session-Id")
	if x.req.HTTP.Method != http.MethodPost || sid == "" || h.sessions[sid] == "" {
		return
	}
	if h.tokens == nil {
		h.tokens = map[string]*sessionTokens{}
	}
	st := h.tokens[sid]
	if st == nil {
		if len(h.tokens) >= maxSessions {
			clear(h.tokens)
		}
		st = &sessionTokens{}
		h.tokens[sid] = st
	}
	if st.unknown {
		return
	}
	toks, ok := envelope.OfferedTokens(raw)
	n := len(toks)
	for _, f := range st.offers {
		n += len(f.toks)
	}
	if over || !ok || n > envelope.MaxOffered {
		st.unknown, st.offers = true, nil
		return
	}
	if len(toks) > 0 {
		st.offers = append(st.offers, &httpOffer{x: x, toks: toks})
	}
}

// answeredLocked takes in that x was paired with its answer at at.
func (h *HTTP) answeredLocked(x *httpExchange, at time.Time) {
	st := h.tokens[x.req.HTTP.Header.Get("Mcp-Session-Id")]
	if st == nil {
		return
	}
	i := slices.IndexFunc(st.offers, func(f *httpOffer) bool { return f.x == x })
	if i < 0 {
		return
	}
	f := st.offers[i]
	f.answered = at
	if r := x.ex.Response; r != nil {
		task := gjson.GetBytes(x.ex.Request.Body, "params.task")
		for _, m := range r.Messages {
			f.lives = f.lives || envelope.TaskLives(x.ex.Version, task, gjson.GetBytes(m, "result.task"))
		}
		if r.Messages == nil {
			f.lives = envelope.TaskLives(x.ex.Version, task, gjson.GetBytes(r.Body, "result.task"))
		}
	}
}

// offeredLocked is what a GET exchange of session sid lists as offered
// at at: the tokens of the session's requests still active (see
// httpOffer); nil when that is not known. It forgets the requests
// answered before, once past their margin.
func (h *HTTP) offeredLocked(sid string, at time.Time) []string {
	st := h.tokens[sid]
	if sid == "" || h.sessions[sid] == "" || st == nil && h.tokens != nil && len(h.tokens) >= maxSessions {
		return nil
	}
	if st == nil {
		return []string{} // no request of the session offered one
	}
	if st.unknown {
		return nil
	}
	st.offers = slices.DeleteFunc(st.offers, func(f *httpOffer) bool {
		return !f.lives && !f.answered.IsZero() && at.Sub(f.answered) > h.c.lim.Quiet
	})
	toks := []string{}
	for _, f := range st.offers {
		toks = append(toks, f.toks...)
	}
	return toks
}
