package runner

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
)

// retryAmbiguity is what leaves the second round's reply open: with its
// input declined, a tool may answer a result, an error, or ask again
// (T-MRTR-9 prefers asking again where input is missing; no rule fixes
// what a declined elicitation leads to).
const retryAmbiguity = "T-MRTR-9"

// retry builds the second round of a fixture whose first (v, answered
// in ex) got an input_required result (2026-07-28): the same request
// with a new id, each input request answered as f.Retry says, and the
// result's requestState echoed byte for byte (T-MRTR-10). ok is false
// when the reply asks for nothing a retry can answer.
func (l *lane) retry(f *fixtures.Fixture, v variant, ex *envelope.Exchange, id int) (variant, bool) {
	r := l.r
	if f.Retry != fixtures.RetryDecline || r.sess.version != envelope.V20260728 || ex.Failure != "" || v.body != nil {
		return variant{}, false
	}
	m := reply(ex, r.facts)
	res := m.Get("result")
	if res.Get("resultType").Str != "input_required" {
		return variant{}, false
	}
	req := gjson.ParseBytes(ex.Request.Body)
	params := req.Get("params")
	if !params.IsObject() {
		return variant{}, false
	}
	state := res.Get("requestState")
	if state.Exists() && state.Type != gjson.String {
		l.out.Note(fmt.Sprintf("%s: the input_required result's requestState is %s, not a string: not answered in a second round", variantID(f, v), envelope.Kind(state)))
		return variant{}, false
	}
	var answers bytes.Buffer
	res.Get("inputRequests").ForEach(func(key, ir gjson.Result) bool {
		var a string
		switch ir.Get("method").Str {
		case "elicitation/create":
			a = `{"action":"decline"}`
		case "roots/list":
			a = `{"roots":[]}`
		default:
			// Sampling is left unanswered: an answer would be text of
			// the checker's making for the tool to act on. A missing
			// answer is asked again (T-MRTR-9).
			return true
		}
		if answers.Len() > 0 {
			answers.WriteByte(',')
		}
		answers.WriteString(key.Raw + ":" + a)
		return true
	})
	if answers.Len() == 0 && !state.Exists() {
		return variant{}, false
	}
	// The request's own members, as sent, then the answers and state.
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":` + req.Get("method").Raw + `,"params":{`)
	first := true
	params.ForEach(func(k, val gjson.Result) bool {
		if k.Str == "inputResponses" || k.Str == "requestState" {
			return true
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(k.Raw + ":" + val.Raw)
		return true
	})
	if answers.Len() > 0 {
		b.WriteString(`,"inputResponses":{` + answers.String() + `}`)
	}
	if state.Exists() {
		b.WriteString(`,"requestState":` + state.Raw)
	}
	b.WriteString("}}")
	o := &expect.Override{}
	if err := o.Set("expect-ambiguity", retryAmbiguity); err != nil {
		return variant{}, false
	}
	rv := variant{suffix: "retry", ctx: v.ctx, body: b.Bytes(), o: o}
	if v.suffix != "" {
		rv.suffix = v.suffix + "/retry"
	}
	rv.ctx.ID = id
	return rv, true
}
