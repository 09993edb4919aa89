package checks

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// SchemaValidator validates a reply against the protocol schema of a
// version. It is an interface so the judge stays free of schema loading.
type SchemaValidator interface {
	ValidateReply(version, method string, raw []byte) ([]envelope.DistilledEntry, error)
}

// A Reply is what came back for one exchange, split into messages once
// for all checks.
type Reply struct {
	// Messages are every message that came back, in order.
	Messages []envelope.Message
	// Response is the JSON-RPC response to the request: the one whose id
	// matches, else the first response-shaped message. Nil when none came.
	Response *envelope.Message
	// Responses counts response-shaped messages (no "method" member).
	Responses int
	// SplitErr is set when an SSE body could not be split into events.
	SplitErr error

	requestTexts []string // request texts, for the echo checks; lazy
	textsDone    bool
	reqValues    []string // the request's string values (not keys); lazy
	valuesDone   bool
}

// values returns the string values of the request body, gathered on
// first use.
func (r *Reply) values(exp *envelope.Expectation) []string {
	if !r.valuesDone {
		r.valuesDone = true
		if exp.Request.Valid {
			r.reqValues = collectValues(exp.Request.Root(), nil)
		}
	}
	return r.reqValues
}

func collectValues(v gjson.Result, out []string) []string {
	switch {
	case v.Type == gjson.String:
		return append(out, v.Str)
	case v.IsObject(), v.IsArray():
		v.ForEach(func(_, val gjson.Result) bool {
			out = collectValues(val, out)
			return true
		})
	}
	return out
}

// texts returns every value of the request a reply could echo, gathered
// on first use: most exchanges never need them.
func (r *Reply) texts(ex *envelope.Exchange, exp *envelope.Expectation) []string {
	if !r.textsDone {
		r.requestTexts, r.textsDone = requestTexts(ex, exp), true
	}
	return r.requestTexts
}

// Has reports whether a JSON-RPC response arrived.
func (r *Reply) Has() bool { return r.Response != nil }

// maxSSELine bounds one SSE line when a transcript's body is split.
const maxSSELine = 16 << 20

// NewReply splits a response into messages and finds the reply to the
// request among them.
func NewReply(resp *envelope.Response, exp *envelope.Expectation) *Reply {
	r := &Reply{}
	if resp == nil {
		return r
	}
	raw := resp.Messages
	if raw == nil && len(resp.Body) > 0 {
		switch {
		case isSSE(resp):
			raw, r.SplitErr = envelope.SplitSSE(resp.Body, maxSSELine)
		case exp.Condition == envelope.CondHTTPMethod:
			// The body of a GET or DELETE answer is no JSON-RPC message.
		default:
			raw = [][]byte{resp.Body}
		}
	}
	first, garbage := -1, -1
	for _, b := range raw {
		m := envelope.Parse(b)
		r.Messages = append(r.Messages, m)
		i := len(r.Messages) - 1
		if !m.IsObject() {
			if garbage < 0 {
				garbage = i
			}
			continue
		}
		if m.Get("method").Exists() {
			continue // a notification or a server request
		}
		r.Responses++
		if first < 0 {
			first = i
		}
		if r.Response == nil && exp.IDReadable && envelope.SameID(exp.ID, m.Get("id")) {
			r.Response = &r.Messages[i]
		}
	}
	switch {
	case exp.Condition == envelope.CondHTTPMethod:
		// A GET or DELETE asks for no JSON-RPC response: none is "the"
		// reply, and one that came anyway is a finding (HTTP1002).
		r.Response = nil
	case r.Response != nil:
	case first >= 0:
		r.Response = &r.Messages[first]
	case garbage >= 0:
		// No response, but something that is not JSON stood where it
		// should: judge that, so a malformed reply is reported, not missed.
		r.Response = &r.Messages[garbage]
	}
	return r
}

func isSSE(resp *envelope.Response) bool {
	return envelope.MediaType(resp.Header.Get("Content-Type")) == "text/event-stream"
}

// Input is one exchange to judge.
type Input struct {
	Fixture  string
	Exchange *envelope.Exchange
	// Expect overrides what the request alone implies (a fixture may know
	// more, e.g. that the tool it calls does not exist). Nil: Expect(ex).
	Expect   *envelope.Expectation
	Contract *envelope.Contract
	Schemas  SchemaValidator
}

// Judge applies every check in list to one exchange. It returns exactly
// one verdict per check, in list order.
func Judge(in Input, list []*Check) []Verdict { return JudgeInto(nil, in, list) }

// JudgeInto is Judge appending to dst[:0], for callers that judge a
// stream of exchanges and are done with each batch of verdicts before
// the next (lint writes them out at once).
func JudgeInto(dst []Verdict, in Input, list []*Check) []Verdict {
	exp := in.Expect
	if exp == nil {
		e := envelope.Expect(in.Exchange)
		exp = &e
	}
	if in.Contract == nil {
		in.Contract = envelope.Strict()
	}
	reply := NewReply(in.Exchange.Response, exp)
	out := dst[:0]
	p := &Pass{Exchange: in.Exchange, Expect: exp, Contract: in.Contract, Reply: reply, Schemas: in.Schemas}
	for _, c := range list {
		v := Verdict{Fixture: in.Fixture, Check: c}
		if f := in.Exchange.Failure; f != "" && !c.JudgesFailures {
			// A partial reply cut off by the checker's own bounds would be
			// judged as malformed: say "could not judge" instead. When the
			// server died, that is the finding (PRO1005); the reply checks
			// have nothing to judge.
			v.Status, v.Reason = StatusError, f
			if in.Exchange.Died != "" {
				v.Status, v.Reason = StatusSkip, "the server died handling this message (see PRO1005)"
			}
			out = append(out, v)
			continue
		}
		p.Check, p.findings = c, nil
		err := run(c, p)
		v.Findings = p.findings
		var se *SkipError
		switch {
		case err == nil:
			v.Status = statusOf(p.findings)
		case errors.As(err, &se):
			v.Status, v.Reason, v.Findings = StatusSkip, se.Reason, nil
		default:
			v.Status, v.Reason, v.Findings = StatusError, err.Error(), nil
		}
		out = append(out, v)
	}
	return out
}

// run shields the judge from a check that panics on some odd reply: the
// verdict becomes an error, the rest of the run goes on.
func run(c *Check, p *Pass) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: %v", errCheckBroken, c.ID, r)
		}
	}()
	return c.Run(p)
}

func statusOf(fs []Finding) Status {
	st := StatusPass
	for _, f := range fs {
		if f.Status == StatusFail {
			return StatusFail
		}
		st = StatusWarn
	}
	return st
}

// requestTexts gathers every value a reply could echo: the raw body, each
// string in it, and each header value.
func requestTexts(ex *envelope.Exchange, exp *envelope.Expectation) []string {
	var out []string
	if len(ex.Request.Body) > 0 {
		out = append(out, string(ex.Request.Body))
	}
	if exp.Request.Valid {
		out = collectStrings(exp.Request.Root(), out)
	}
	keys := make([]string, 0, len(ex.Request.Header))
	for k := range ex.Request.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, ex.Request.Header[k]...)
	}
	return out
}

func collectStrings(v gjson.Result, out []string) []string {
	switch {
	case v.Type == gjson.String:
		return append(out, v.Str)
	case v.IsObject():
		v.ForEach(func(k, val gjson.Result) bool {
			out = append(out, k.Str)
			out = collectStrings(val, out)
			return true
		})
	case v.IsArray():
		v.ForEach(func(_, val gjson.Result) bool {
			out = collectStrings(val, out)
			return true
		})
	}
	return out
}
