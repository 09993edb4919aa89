package checks

import (
	"fmt"
	"slices"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// A 2026-07-28 server may answer tools/call, prompts/get or
// resources/read with an input_required result; the client then retries
// the request with inputResponses and the requestState the result gave.
// T-MRTR-10 (a MUST on the client): the retry uses a new JSON-RPC id and
// echoes requestState byte for byte (omits it when none was given). The
// tracker keeps the input_required rounds it saw, so that a retry is
// judged against the round it retries: its id by CLI1003, its state by
// CLI1014.

// Bounds on what the rounds remember (see maxOpen).
const maxRounds = 1024

// mrtrState is what a conversation keeps of its multi round-trip calls.
type mrtrState struct {
	// calls are the client's MRTR-capable requests still open, by Seq.
	calls map[uint64]mrtrCall
	// rounds are the requests answered input_required, oldest first.
	rounds []mrtrRound
}

// mrtrCall is one request that an input_required result may answer.
type mrtrCall struct {
	method, name string // the method and the tool's or prompt's name, the resource's URI
	idKey        string
	id           string // the id as written, for findings
}

// mrtrRound is one request answered input_required.
type mrtrRound struct {
	mrtrCall
	seq      uint64 // the request's Seq
	state    string // requestState as decoded
	hasState bool
	asked    []string // the inputRequests keys
	retried  bool     // a retry carrying its state came
}

// mrtrTarget names what an MRTR-capable request is about: "" when the
// method is none of the three.
func mrtrTarget(method string, msg *envelope.Message) (string, bool) {
	switch method {
	case "tools/call", "prompts/get":
		v := msg.Get("params.name")
		return v.Str, v.Type == gjson.String
	case "resources/read":
		v := msg.Get("params.uri")
		return v.Str, v.Type == gjson.String
	}
	return "", false
}

// mrtrSent takes in a client request (seq) that an input_required result
// may answer.
func (c *conversation) mrtrSent(seq uint64, msg *envelope.Message) {
	method := msg.Get("method").Str
	name, ok := mrtrTarget(method, msg)
	key := envelope.IDKey(msg.Get("id"))
	if !ok || key == "" {
		return
	}
	if c.mrtr == nil {
		c.mrtr = &mrtrState{}
	}
	if c.mrtr.calls == nil {
		c.mrtr.calls = map[uint64]mrtrCall{}
	}
	if len(c.mrtr.calls) >= maxOpen {
		for s := range c.mrtr.calls {
			if _, open := c.open[s]; !open {
				delete(c.mrtr.calls, s)
			}
		}
		if len(c.mrtr.calls) >= maxOpen {
			return
		}
	}
	c.mrtr.calls[seq] = mrtrCall{method: method, name: name, idKey: key, id: msg.Get("id").Raw}
	st, resp := msg.Get("params.requestState"), msg.Get("params.inputResponses")
	switch {
	case st.Type == gjson.String:
		// A retry carrying a state marks the rounds that issued it as
		// retried: a later retry that drops a state is not theirs.
		for i := range c.mrtr.rounds {
			r := &c.mrtr.rounds[i]
			if r.hasState && r.state == st.Str && r.method == method && r.name == name {
				r.retried = true
			}
		}
	case !st.Exists() && resp.Exists():
		// A retry without a state that only one round not yet retried
		// can be the retry of marks that one retried.
		only := -1
		for i, r := range c.mrtr.rounds {
			if !r.retried && r.method == method && r.name == name && coversKeys(r.asked, resp) {
				if only >= 0 {
					return
				}
				only = i
			}
		}
		if only >= 0 {
			c.mrtr.rounds[only].retried = true
		}
	}
}

// mrtrClosed takes in the end of request e.Request's exchange: an
// input_required answer makes it a round a retry answers.
func (c *conversation) mrtrClosed(e *Closed) {
	if c.mrtr == nil {
		return
	}
	call, ok := c.mrtr.calls[e.Request]
	if !ok {
		return
	}
	delete(c.mrtr.calls, e.Request)
	if !gjson.ValidBytes(e.Answer) {
		return
	}
	res := gjson.GetBytes(e.Answer, "result")
	if !res.IsObject() || res.Get("resultType").Str != "input_required" {
		return
	}
	id := gjson.GetBytes(e.Answer, "id")
	if envelope.IDKey(id) != call.idKey {
		return // an answer to another request
	}
	r := mrtrRound{mrtrCall: call, seq: e.Request}
	if st := res.Get("requestState"); st.Type == gjson.String {
		r.state, r.hasState = st.Str, true
	}
	res.Get("inputRequests").ForEach(func(k, _ gjson.Result) bool {
		r.asked = append(r.asked, k.Str)
		return true
	})
	if len(c.mrtr.rounds) >= maxRounds {
		c.mrtr.rounds = c.mrtr.rounds[1:]
	}
	c.mrtr.rounds = append(c.mrtr.rounds, r)
}

// mrtrRetry is what a retry is judged against: the rounds it may retry.
type mrtrRetry struct {
	state    gjson.Result // the retry's requestState (may not exist)
	rounds   []mrtrRound  // the rounds it may retry
	byState  bool         // they issued the very state the retry carries
	issuedTo []mrtrRound  // rounds of the same request (method and name) seen
}

// retryOf finds the rounds the client request may retry: conservatively,
// a request of the same method and name carrying inputResponses or
// requestState, after an input_required result to such a request. With
// a requestState, the rounds that issued it; without one, the rounds not
// yet retried whose inputRequests keys hold every inputResponses key.
// nil: the request is no retry the relay can pair.
func (cp *clientPass) retryOf() *mrtrRetry {
	c := cp.view.c
	if cp.kind != kindRequest || cp.version != envelope.V20260728 || c.mrtr == nil || len(c.mrtr.rounds) == 0 {
		return nil
	}
	m := &cp.msg
	name, ok := mrtrTarget(cp.method, m)
	if !ok {
		return nil
	}
	st, resp := m.Get("params.requestState"), m.Get("params.inputResponses")
	if !st.Exists() && !resp.Exists() {
		return nil // a fresh call
	}
	rt := &mrtrRetry{state: st}
	for _, r := range c.mrtr.rounds {
		if r.method != cp.method || r.name != name {
			continue
		}
		rt.issuedTo = append(rt.issuedTo, r)
		switch {
		case st.Type == gjson.String:
			if r.hasState && r.state == st.Str {
				rt.rounds = append(rt.rounds, r)
			}
		case !st.Exists() && !r.retried && coversKeys(r.asked, resp):
			rt.rounds = append(rt.rounds, r)
		}
	}
	rt.byState = st.Type == gjson.String
	if len(rt.issuedTo) == 0 {
		return nil
	}
	return rt
}

// coversKeys: every key of the inputResponses object is one of asked.
func coversKeys(asked []string, resp gjson.Result) bool {
	if !resp.IsObject() {
		return false
	}
	ok := true
	resp.ForEach(func(k, _ gjson.Result) bool {
		found := false
		for _, a := range asked {
			if a == k.Str {
				found = true
				break
			}
		}
		ok = ok && found
		return ok
	})
	return ok
}

// retryIDReuse judges a 2026-07-28 retry's id (CLI1003): it fails when
// every round the retry may retry had that very id (T-MRTR-10: a retry
// uses a new JSON-RPC id). A round the retry cannot be told from another
// of a different id is not judged.
func retryIDReuse(p *Pass, cp *clientPass) {
	rt := cp.retryOf()
	if rt == nil || len(rt.rounds) == 0 {
		return
	}
	key := envelope.IDKey(cp.msg.Get("id"))
	if key == "" || cp.view.c.inFlight[key] > 0 {
		return // no valid id (CLI1002), or in flight (judged as such)
	}
	for _, r := range rt.rounds {
		if r.idKey != key {
			return
		}
	}
	r := rt.rounds[len(rt.rounds)-1]
	how := "the requestState it echoes"
	if !rt.byState {
		how = "its method, name and inputResponses"
	}
	// Over HTTP without a session the relay cannot tell clients apart:
	// an id only proves a reuse where the rounds pair by a state no
	// earlier retry carried (a fixed state may be given to every client).
	if cp.view.c.stateless && (!rt.byState || slices.ContainsFunc(rt.rounds, func(r mrtrRound) bool { return r.retried })) {
		p.Warnf("id", "id %s is that of the request %s this retry answers (paired by %s) with the input_required result it got; a retry uses a new JSON-RPC id (T-MRTR-10), though over HTTP without a session the relay cannot tell clients apart", idText(cp.msg.Get("id").Raw), seqText(r.seq), how)
		return
	}
	p.Failf("id", "id %s is that of the request %s this retry answers (paired by %s) with the input_required result it got; a retry uses a new JSON-RPC id (T-MRTR-10)", idText(cp.msg.Get("id").Raw), seqText(r.seq), how)
}

var ClientRetryState = &Check{
	ID:       "CLI1014",
	Title:    "A 2026 client's retry echoes the requestState it was given",
	SpecRef:  "T-MRTR-10",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `In 2026-07-28 a server may answer tools/call, prompts/get or
resources/read with an input_required result carrying a requestState;
the client's retry of that request (the same method and name, with
inputResponses) echoes requestState byte for byte, or omits it when the
result gave none (the client's duty of multi round-trip requests,
mrtr.mdx § Client Requirements; the digest's T-MRTR-10). The relay pairs a
retry with the round it retries by method, name and inputResponses
keys, never by guess: a request with neither inputResponses nor
requestState is a fresh call. A retry whose requestState no
input_required result of that request issued (changed, or taken from
another request) warns, as does one that drops the state every round
it may retry was given: the relay may not have seen the round that
issued the state (it started mid-way, or another client on stateless
HTTP), so it does not fail. A retry's id is CLI1003's.`,
	Run: func(p *Pass) error {
		cp, err := needClientRequest(p)
		if err != nil {
			return err
		}
		if cp.version != envelope.V20260728 {
			return skipLegacy
		}
		if cp.view.c.lost {
			return skipLost
		}
		rt := cp.retryOf()
		if rt == nil {
			return Skip("no retry of an input_required result the relay saw")
		}
		const path = "params.requestState"
		last := rt.issuedTo[len(rt.issuedTo)-1]
		switch {
		case rt.state.Exists() && rt.state.Type != gjson.String:
			return Skip("requestState is no string (see CLI1011)")
		case rt.byState && len(rt.rounds) == 0:
			p.Warnf(path, "requestState %s is none that an input_required result of %s %s issued (the last, %s, gave %s%s); a retry echoes requestState byte for byte (T-MRTR-10)", Quote(rt.state.Str, quoteN), cp.method, Quote(last.name, quoteN), seqText(last.seq), stateText(last), differAt(rt.state.Str, last))
		case !rt.byState && len(rt.rounds) > 0:
			for _, r := range rt.rounds {
				if !r.hasState {
					return nil // it may retry a round that gave no state
				}
			}
			r := rt.rounds[len(rt.rounds)-1]
			p.Warnf(path, "the retry of %s %s carries no requestState, but the input_required result to %s gave %s; a retry echoes requestState byte for byte (T-MRTR-10)", cp.method, Quote(r.name, quoteN), seqText(r.seq), stateText(r))
		}
		return nil
	},
}

func stateText(r mrtrRound) string {
	if !r.hasState {
		return "none"
	}
	return Quote(r.state, quoteN)
}

// differAt names the first byte where a state differs from the one round
// r issued, when the quoted texts may not show it ("" else).
func differAt(got string, r mrtrRound) string {
	if !r.hasState || len(got) <= quoteN && len(r.state) <= quoteN {
		return ""
	}
	i := 0
	for i < len(got) && i < len(r.state) && got[i] == r.state[i] {
		i++
	}
	return fmt.Sprintf("; the two first differ at byte %d", i)
}
