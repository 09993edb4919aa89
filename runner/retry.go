package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/schema"
)

// retryAmbiguity is what leaves the second round's reply open: with its
// input declined, a tool may answer a result, an error, or ask again
// (T-MRTR-9 prefers asking again where input is missing; no rule fixes
// what a declined elicitation leads to).
const retryAmbiguity = "T-MRTR-9"

// retry builds the second round of a fixture whose first (v, answered
// in ex) got an input_required result (2026-07-28): the same request
// with a new id, each input request answered as a client whose user
// declines, and the result's requestState, as f.Retry says:
//
//   - RetryDecline echoes it byte for byte (T-MRTR-10); the reply is
//     open (T-MRTR-9);
//   - RetryTamper changes one character of it (T-MRTR-5);
//   - RetryReplay echoes it in a call of the same tool with other
//     arguments its inputSchema accepts (T-MRTR-6).
//
// The last two are judged by expect-state, which says what refuses such
// a state. ok is false when there is no second round to make; where the
// reason is the server's (no state to tamper with or replay) a note says
// so.
func (l *lane) retry(f *fixtures.Fixture, v variant, ex *envelope.Exchange, id int) (variant, bool) {
	return l.round(f, f.Retry, v, ex, id)
}

// round builds the second round of f as the kind of retry says (see
// retry): f's own, or RetryDecline for the control round of a tamper
// or replay (see control).
func (l *lane) round(f *fixtures.Fixture, kind string, v variant, ex *envelope.Exchange, id int) (variant, bool) {
	r := l.r
	if !slices.Contains([]string{fixtures.RetryDecline, fixtures.RetryTamper, fixtures.RetryReplay}, kind) ||
		r.sess.version != envelope.V20260728 || ex.Failure != "" || v.body != nil {
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
	name := variantID(f, v)
	state := res.Get("requestState")
	if state.Exists() && state.Type != gjson.String {
		l.out.Note(fmt.Sprintf("%s: the input_required result's requestState is %s, not a string: not answered in a second round", name, envelope.Kind(state)))
		return variant{}, false
	}
	// What goes in the second round: the state, the arguments, and the
	// override that judges the reply.
	stateRaw, argsRaw := state.Raw, ""
	o := &expect.Override{}
	switch kind {
	case fixtures.RetryDecline:
		if err := o.Set("expect-ambiguity", retryAmbiguity); err != nil {
			return variant{}, false
		}
	case fixtures.RetryTamper:
		if !state.Exists() || state.Str == "" {
			l.out.Note(fmt.Sprintf("%s: the input_required result carries no requestState to change: no second round with a tampered one (T-MRTR-5)", name))
			return variant{}, false
		}
		stateRaw = tamper(state.Str)
		if err := o.Set("expect-state", expect.StateTampered); err != nil {
			return variant{}, false
		}
	case fixtures.RetryReplay:
		if !state.Exists() {
			l.out.Note(fmt.Sprintf("%s: the input_required result carries no requestState to replay: no second round with other arguments (T-MRTR-6)", name))
			return variant{}, false
		}
		tool := params.Get("name").Str
		other, why := otherArgs(r.facts.Tool(tool), params.Get("arguments"), r.sess.version)
		if why != "" {
			l.out.Note(fmt.Sprintf("%s: the requestState is not replayed: tool %s has %s (T-MRTR-6)", name, strconv.Quote(tool), why))
			return variant{}, false
		}
		argsRaw = string(other)
		if err := o.Set("expect-state", expect.StateReplayed); err != nil {
			return variant{}, false
		}
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
	// The request's own members, as sent (the arguments replaced for a
	// replay), then the answers and state.
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
		raw := val.Raw
		if k.Str == "arguments" && argsRaw != "" {
			raw = argsRaw
		}
		b.WriteString(k.Raw + ":" + raw)
		return true
	})
	if answers.Len() > 0 {
		b.WriteString(`,"inputResponses":{` + answers.String() + `}`)
	}
	if state.Exists() {
		b.WriteString(`,"requestState":` + stateRaw)
	}
	b.WriteString("}}")
	rv := variant{suffix: "retry", ctx: v.ctx, body: b.Bytes(), o: o}
	if v.suffix != "" {
		rv.suffix = v.suffix + "/retry"
	}
	rv.ctx.ID = id
	return rv, true
}

// tamper changes one character of a requestState s (not empty) and
// returns the result as a JSON string. The character is the ASCII letter
// or digit nearest the middle (at or after it first), turned into the
// next of its kind (a→b, z→a, Z→A, 9→0): in hex, Base64 and Base32 alike
// that changes the bytes the state decodes to, and a character in the
// middle is no padding. A state without such a character has its middle
// character replaced by "x".
func tamper(s string) string {
	rs := []rune(s)
	mid := len(rs) / 2
	at := -1
	for i := range rs {
		// mid, mid+1, …, the end, then mid-1, …, 0.
		j := mid + i
		if j >= len(rs) {
			j = len(rs) - 1 - i
		}
		if c := rs[j]; c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			at = j
			break
		}
	}
	switch {
	case at < 0:
		rs[mid] = 'x'
	case rs[at] == 'z':
		rs[at] = 'a'
	case rs[at] == 'Z':
		rs[at] = 'A'
	case rs[at] == '9':
		rs[at] = '0'
	default:
		rs[at]++
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(string(rs)) // a string always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// otherArgs finds arguments for tool t, other than args, that its
// inputSchema surely accepts: args with one more of the properties the
// schema declares (each in name order, with the value the generator of
// valid arguments gives it), else args without one of its optional
// members. why says what is missing when there are none.
func otherArgs(t *expect.Tool, args gjson.Result, version string) (json.RawMessage, string) {
	if t == nil || t.Input == nil {
		return nil, "no inputSchema the checker knows"
	}
	if !args.IsObject() {
		return nil, "arguments that are no object"
	}
	var in map[string]any
	d := json.NewDecoder(bytes.NewReader(t.Input))
	d.UseNumber()
	if d.Decode(&in) != nil {
		return nil, "an inputSchema that is no object"
	}
	props, _ := in["properties"].(map[string]any)
	required, _ := in["required"].([]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	accepts := func(c []byte) bool {
		probs, agree, err := t.CheckArgs(c, version)
		return err == nil && agree && len(probs) == 0
	}
	for _, n := range names {
		if args.Get(gjson.Escape(n)).Exists() {
			continue
		}
		// The schema with n required: the generator then gives it a
		// value, and the others what it gave them before.
		with := make(map[string]any, len(in))
		for k, v := range in {
			with[k] = v
		}
		with["required"] = append(slices.Clone(required), n)
		s, err := json.Marshal(with)
		if err != nil {
			continue
		}
		c, err := schema.GenerateValid(s)
		if err == nil && gjson.GetBytes(c, gjson.Escape(n)).Exists() && accepts(c) {
			return c, ""
		}
	}
	var members []string
	args.ForEach(func(k, _ gjson.Result) bool {
		if !slices.Contains(required, any(k.Str)) {
			members = append(members, k.Str)
		}
		return true
	})
	slices.Sort(members)
	for _, n := range members {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(args.Raw), &m) != nil {
			break
		}
		delete(m, n)
		c, err := json.Marshal(m)
		if err == nil && accepts(c) {
			return c, ""
		}
	}
	return nil, "no other arguments its inputSchema surely accepts that the checker can make"
}

// controls says whether the round that needs a control (a tamper or a
// replay, judged by what refuses the state) is worth sending after its
// control, the same request declined with the state as issued (ex): only
// a control that completed the call (a result, neither input_required
// nor a tool error) shows what the state changes. A server that refuses
// or asks again whatever the state (a declined elicitation it will not
// take, a sampling request the checker leaves unanswered) would pass the
// tampered round without its state ever being checked (review rev22).
// why says what the control got, when not.
func controls(ex *envelope.Exchange, f *expect.Facts) (ok bool, why string) {
	if ex == nil || ex.Failure != "" {
		return false, "it could not be judged"
	}
	m := reply(ex, f)
	res := m.Get("result")
	switch {
	case !res.IsObject():
		return false, "it was refused"
	case res.Get("resultType").Str == "input_required":
		return false, "the server asked again"
	case res.Get("isError").Type == gjson.True:
		return false, "the tool answered with an error"
	}
	return true, ""
}
