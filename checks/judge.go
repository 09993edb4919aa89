package checks

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
)

// SchemaValidator validates a reply against the protocol schema of a
// version. It is an interface so the judge stays free of schema loading.
type SchemaValidator interface {
	ValidateReply(version, method string, raw []byte) ([]envelope.DistilledEntry, error)
}

// A Warmer is a SchemaValidator that can compile the schemas of the
// versions a run may judge before the first reply needs them.
type Warmer interface {
	Warm(versions ...string)
}

// A Reply is what came back for one exchange, split into messages once
// for all checks (by envelope.ReadReply, the one reader of replies), with
// the request's strings gathered lazily for the checks that quote them.
type Reply struct {
	*envelope.Reply

	req     *requestStrings // lazy
	reqDone bool

	data     []pathString // lazy: see errorDataStrings
	dataDone bool

	texts     []requestText // lazy: see requestTexts
	textsDone bool
	nValues   int // how many of texts are values, not keys

	body     string // lazy: see requestBody
	bodyDone bool
}

// A requestText is a string of the request body (a member name or a
// string value), as walkTexts meets it.
type requestText struct {
	str      string
	index    int  // where its JSON text starts in the body (gjson's Index)
	verbatim bool // see verbatim
	key      bool
}

// requestTexts are the strings of the expectation's request body, in
// the order they stand, walked once for every reader of them (the
// request's strings, the echo scan's sources): each walk parses the
// body again.
func (r *Reply) requestTexts(exp *expect.Expectation) []requestText {
	if !r.textsDone {
		r.textsDone = true
		if exp.Request.Valid {
			// Every string has two quote marks of its own. A list kept
			// from the last exchange (Scratch) serves unless far larger.
			n := bytes.Count(exp.Request.Raw, []byte{'"'}) / 2
			if c := cap(r.texts); c < n || c > 4*n+64 {
				r.texts = make([]requestText, 0, n)
			}
			walkTexts(exp.Request.Root(), func(v gjson.Result, key bool) {
				r.texts = append(r.texts, requestText{v.Str, v.Index, verbatim(v), key})
				if !key {
					r.nValues++
				}
			})
		}
	}
	return r.texts
}

// A pathString is a string of a reply and its display path.
type pathString struct{ path, s string }

// errorDataStrings are the strings under the response's error.data (data
// itself included), in the order walkStrings meets them, walked once for
// every check that reads them all. The response must be an error object.
func (r *Reply) errorDataStrings() []pathString {
	if !r.dataDone {
		r.dataDone = true
		walkStrings(r.Response.Get("error.data"), "error.data", func(path, s string) {
			r.data = append(r.data, pathString{path, s})
		})
	}
	return r.data
}

// requestStrings are the request's strings, gathered once for every check
// that asks whether a reply quotes the request, in one list: a request of
// 50,000 values costs one string header per value, not one per use.
type requestStrings struct {
	// all holds the body's string values (not keys), sorted, then every
	// other text a reply could quote (the raw body, the keys, the header
	// values, and each text as a server decodes a header value), sorted:
	// a prefix search is then a binary search in each part.
	all []string
	nv  int // how many of all are values
	// keys are the body's member names alone, sorted: what a distilled
	// location may name (the rest of all also holds header values, a
	// credential among them).
	keys []string
	// body is the raw body as text, for the echo checks as well.
	body string
	// decoded are the values with a percent sign, decoded, sorted; set
	// on first use (decodedValues).
	decoded     []string
	decodedDone bool
}

// request returns the request's strings, gathered on first use: most
// exchanges never need them.
func (r *Reply) request(ex *envelope.Exchange, exp *expect.Expectation) *requestStrings {
	if !r.reqDone {
		r.reqDone = true
		r.req = gatherRequest(ex, exp, r.requestTexts(exp), r.requestBody(ex, exp))
	}
	return r.req
}

// requestBody is the raw request body as text, made once: the echo scan
// needs it for every error, the sorted strings of request only for
// some.
func (r *Reply) requestBody(ex *envelope.Exchange, exp *expect.Expectation) string {
	if !r.bodyDone {
		r.bodyDone = true
		r.body = requestBody(ex, exp)
	}
	return r.body
}

// eachValue calls fn for each string value of the request body (no
// keys), in no set order; it sorts nothing, unlike values.
func (r *Reply) eachValue(ex *envelope.Exchange, exp *expect.Expectation, fn func(v string)) {
	if r.reqDone {
		for _, v := range r.values(ex, exp) {
			fn(v)
		}
		return
	}
	for _, t := range r.requestTexts(exp) {
		if !t.key {
			fn(t.str)
		}
	}
}

// valueCount is how many string values the request body holds.
func (r *Reply) valueCount(exp *expect.Expectation) int {
	r.requestTexts(exp)
	return r.nValues
}

// values returns the string values of the request body.
func (r *Reply) values(ex *envelope.Exchange, exp *expect.Expectation) []string {
	rs := r.request(ex, exp)
	return rs.all[:rs.nv]
}

// sortedTexts returns the two sorted parts of the request's texts: its
// values, and the rest.
func (r *Reply) sortedTexts(ex *envelope.Exchange, exp *expect.Expectation) (values, rest []string) {
	rs := r.request(ex, exp)
	return rs.all[:rs.nv], rs.all[rs.nv:]
}

// Input is one exchange to judge.
type Input struct {
	Fixture  string
	Exchange *envelope.Exchange
	// Expect is what a conforming reply is, built by expect.Build from
	// the request, the run's facts and the fixture's override. Nil: built
	// from the request alone.
	Expect   *expect.Expectation
	Contract *envelope.Contract
	Schemas  SchemaValidator
	// Secrets are the --header values of a live run (never recorded).
	Secrets []envelope.Secret
	// ToolCache, when set, compiles each tool schema a reply lists once
	// per run; nil compiles it for every reply.
	ToolCache *schema.ToolCache
	// Reused are the SSE event ids of the reply's stream that an earlier
	// stream of its session used (Streams.Reused, called by a caller that
	// judges a session's exchanges in report order); nil: none known.
	Reused []Reuse
	// Scratch, when set, is memory the judge reuses from one exchange to
	// the next: a caller judging a stream of exchanges keeps one per
	// goroutine (it is not safe for concurrent use). Nil: judging
	// allocates its own.
	Scratch *Scratch
}

// Scratch is memory judging reuses from one exchange to the next: the
// echo scan's window index and list of request texts, a few KB per error
// reply that a stream of replies would otherwise allocate each time. It
// holds nothing from one exchange that the next reads.
type Scratch struct {
	index   windowIndex
	sources []source
	// judged is JudgeInto's pass and reply, made afresh for each
	// exchange in the same memory: nothing keeps a pass or a reply past
	// the judging (verdicts hold copies of what they say).
	judged judgeState
	// scan is the echo scan's own struct, and path the stack of member
	// names its shape walk keeps (see newEchoScan, structures): the
	// scans of one pass run one after another, as do the passes of one
	// Scratch.
	scan echoScan
	path []string
	// answers is the memory the responses of a 2025-03-26 batch's
	// answer are judged in, one by one (judgeAnswers), beside the
	// batch's own pass.
	answers *Scratch
}

// judgeState is the pass and the reply as read, in one allocation
// (or none, in a Scratch): most replies have one reading.
type judgeState struct {
	pass  Pass
	reply Reply
	one   [1]*Reply
}

// Judge applies every check in list to one exchange. It returns exactly
// one verdict per check, in list order; checks of area client judge the
// client's own messages (JudgeClient) and are left out.
func Judge(in Input, list []*Check) []Verdict { return JudgeInto(nil, in, list) }

// JudgeInto is Judge appending to dst[:0], for callers that judge a
// stream of exchanges and are done with each batch of verdicts before
// the next (lint writes them out at once).
//
// What the checker could not do (send, read, stay within its own bounds)
// is one error verdict for the exchange, never one per check: the other
// checks skip and point to it. A reply whose member names repeat is
// judged under both readings RFC 8259 allows, and a check fails only if
// it fails under both; under one, it warns.
func JudgeInto(dst []Verdict, in Input, list []*Check) []Verdict {
	exp := in.Expect
	if exp == nil {
		exp = expect.Build(in.Exchange, nil, nil)
	}
	if in.Contract == nil {
		in.Contract = envelope.Strict()
	}
	ex := in.Exchange
	out := dst[:0]
	if ex.NotSent {
		// A recording's fixture the run could not send: the verdicts the
		// run gave it.
		return append(out, NotSent(in.Fixture, ex.Failure, list)...)
	}
	base := exp.ReadReply(ex.Response)
	var ce *envelope.CodingError
	corrupt := base.SplitErr != nil && ex.Malformed == "" && errors.As(base.SplitErr, &ce) && ce.Corrupt()
	if corrupt && plainBody(ex.Response) {
		// The body reads as it is: a capture that decoded it and kept
		// its Content-Encoding (a HAR export, mitmproxy) records that,
		// and so would a server that named a coding it never applied;
		// which, the recording does not tell (review rev65).
		why := fmt.Sprintf("the body does not decode in the coding it names (%s), yet reads as plain text: a capture that decoded it and kept Content-Encoding records that, as a server that named a coding it did not apply would send it; drop Content-Encoding from the recording to judge the body", ce.Error())
		return notJudged(out, in, exp, base, list, why, errorOwner(list, ReplyIsJSON.ID))
	}
	if corrupt {
		// A recording still coded (check, send and the proxy record
		// bodies decoded, and fail such a body where they read it): a
		// body that does not decode in the coding it names is no reply
		// a client can read, judged as there (HTTP1006), not the
		// checker's limit.
		cp := *ex
		cp.Malformed, cp.Response = ce.Error(), nil
		ex, in.Exchange = &cp, &cp
		base = exp.ReadReply(nil)
	}
	why, owner := unjudgeable(ex, exp, base, list)
	if why == "" {
		return judgeReply(out, in, exp, base, list)
	}
	whole, ok := wholeBeforeBound(ex, exp, base)
	if !ok {
		return notJudged(out, in, exp, base, list, why, owner)
	}
	// The messages that came whole before the checker's bound are
	// judged as any reply's: the bound withheld the rest, not them
	// (review rev56: a flood of broken notifications was "could not
	// judge" and nothing else, so a baseline of that error, or
	// --checks without RPC1006, passed them). The owner of the reply
	// that could not be had says so, unless what did come already
	// fails it (two responses stay two, whatever followed).
	cp := *ex
	cp.Response = whole.resp
	in.Exchange = &cp
	out = judgeReply(out, in, exp, whole.reply, list)
	for i := range out {
		if out[i].Check == owner && out[i].Status != StatusFail {
			out[i] = Verdict{Fixture: in.Fixture, Check: owner, Status: StatusError, Reason: why}
		}
	}
	return out
}

// judgeReply is JudgeInto for an exchange whose reply can be judged.
func judgeReply(out []Verdict, in Input, exp *expect.Expectation, base *envelope.Reply, list []*Check) []Verdict {
	ex := in.Exchange
	var st *judgeState
	var texts []requestText
	var data []pathString
	if in.Scratch != nil {
		st = &in.Scratch.judged
		// The last reply's lists of strings are done with: their memory
		// is kept, their strings (the last exchange's bodies) are not.
		texts, data = st.reply.texts, st.reply.data
		clear(texts)
		clear(data)
		texts, data = texts[:0], data[:0]
	} else {
		st = &judgeState{}
	}
	*st = judgeState{pass: Pass{Exchange: ex, Expect: exp, Contract: in.Contract, Schemas: in.Schemas, Secrets: in.Secrets, ToolCache: in.ToolCache, Reused: in.Reused, scratch: in.Scratch}}
	st.reply.texts, st.reply.data = texts, data
	p := &st.pass
	var readings []*Reply
	if hasReadings(base) {
		readings = replyReadings(base)
	} else {
		st.reply.Reply, st.one[0] = base, &st.reply
		readings = st.one[:]
	}
	// The verdicts under the request's legacy reading, by check: that
	// reading explains the reply only if the reply breaks none of its
	// rules (a result for a method the legacy version does not have, an
	// invalid request served, is wrong in either era).
	var legacy map[*Check]Verdict
	if exp.Legacy != nil {
		legacy = legacyVerdicts(p, exp.Legacy, ex.Response, list)
	}
	// A 2025-03-26 batch answered with responses: each is judged by the
	// checks of a single reply against the element it answers (see
	// judgeAnswers); the rest of the reply as ever.
	var answers []batchAnswer
	if exp.Condition == expect.CondBatch {
		// (Read in the reply as it came: a response that repeats a
		// member name is judged under both readings as its element's
		// reply.)
		p.Expect, p.Reply = exp, &Reply{Reply: base}
		answers = batchAnswers(p)
	}
	if len(readings) == 1 && legacy == nil && answers == nil {
		// The common case, one reading and no legacy one: each verdict
		// is the check's own, made in its place in out.
		p.Reply = readings[0]
		for _, c := range list {
			if c.Area == AreaClient {
				continue
			}
			p.Expect = exp
			out = append(out, runOne(p, c))
			out[len(out)-1].Fixture = in.Fixture
		}
		return out
	}
	var folds []answerFold
	var rest *Reply
	if answers != nil {
		folds = judgeAnswers(in, exp, list, answers)
		rest = withoutAnswer(readings[0], answers)
	}
	for _, c := range list {
		if c.Area == AreaClient {
			continue
		}
		if answers != nil && !judgesWhole(c) {
			// The reply but the answers, then each answer; the folds
			// stand in list order, as judgeAnswers made them.
			p.Expect, p.Reply = exp, rest
			f := &folds[0]
			folds = folds[1:]
			f.add(runOne(p, c), "")
			out = append(out, f.verdict(in.Fixture, c))
			continue
		}
		v := Verdict{Fixture: in.Fixture, Check: c}
		p.Expect = exp
		for i, rd := range readings {
			p.Reply = rd
			rv := runOne(p, c)
			if i == 0 {
				v.Status, v.Findings, v.Reason = rv.Status, rv.Findings, rv.Reason
				continue
			}
			v = mergeReadings(v, rv, duplicateWhy)
		}
		if lv, ok := legacy[c]; ok && v.Status == StatusFail {
			// The literal reading fails the reply: it warns if the
			// legacy reading, which the server may have taken, passes it.
			v = mergeReadings(v, lv, exp.LegacyReason)
		}
		out = append(out, v)
	}
	return out
}

// judgesWhole: c judges a 2025-03-26 batch's answer as a whole (the
// transport, the stream, how the answers pair with the batch's
// elements, what else came beside them), not each response in it
// against the element it answers (JudgeInto). Every other check judges
// a single reply, and judges each response of a batch's answer as one.
func judgesWhole(c *Check) bool {
	switch c {
	case ReplyIsJSON, // the array, and which element each response answers
		JSONRPCVersion,      // every object of the reply; an array's responses are RPC1001's
		IDEcho,              // the ids are the pairing's, RPC1001's
		OneReply,            // the count of answers, and the strays beside them
		NotificationNoReply, // a notification's answers
		ServerMessages,      // the server's own messages on the stream
		Survives,            // the server's life
		Subscriptions,       // a listen stream
		ServerSchemaValid:   // the server's own messages on the stream
		return true
	}
	return c.Area == AreaHTTP || c.Area == AreaClient
}

// judgeAnswers judges each response of a 2025-03-26 batch's answer as
// the reply to the element of the batch it answers, with the checks of
// list that judge single replies (not judgesWhole): the element's
// expectation is expect.Build's for that element sent alone, in the
// exchange's session and with the run's facts (a fixture's override
// speaks of the batch, not of its elements). It returns one fold per
// such check, in list order, each holding the verdicts of every answer,
// their findings at the answer's path. Time is linear in the batch: each
// answer is judged against its element alone.
func judgeAnswers(in Input, exp *expect.Expectation, list []*Check, answers []batchAnswer) []answerFold {
	var sub []*Check
	for _, c := range list {
		if c.Area != AreaClient && !judgesWhole(c) {
			sub = append(sub, c)
		}
	}
	folds := make([]answerFold, len(sub))
	// One scratch for every answer, apart from the exchange's own (whose
	// pass is the batch's, still in use).
	sc := &Scratch{}
	if in.Scratch != nil {
		if in.Scratch.answers == nil {
			in.Scratch.answers = &Scratch{}
		}
		sc = in.Scratch.answers
	}
	ex := in.Exchange
	var vs []Verdict
	for _, a := range answers {
		el := *ex
		// (Each answer came whole: a bound that cut the batch's reply
		// after it is the batch's, RPC1006's to say.)
		el.Failure = ""
		el.Request.Body = []byte(a.request.Raw)
		el.Response = &envelope.Response{Messages: [][]byte{[]byte(a.answer.Raw)}}
		if r := ex.Response; r != nil {
			el.Response.Status, el.Response.Header = r.Status, r.Header
		}
		vs = JudgeInto(vs, Input{Fixture: in.Fixture, Exchange: &el, Expect: expect.Build(&el, exp.Facts, nil),
			Contract: in.Contract, Schemas: in.Schemas, Secrets: in.Secrets, ToolCache: in.ToolCache, Scratch: sc}, sub)
		for i, v := range vs {
			folds[i].add(v, a.path)
		}
	}
	return folds
}

// withoutAnswer is r as the checks of single replies read it beside a
// batch's answers: its response is none when it is one of the answers
// (an SSE event of its own), which are judged one by one. (An array
// of answers is no response they read.)
func withoutAnswer(r *Reply, answers []batchAnswer) *Reply {
	at := -1
	for i := range r.Messages {
		if &r.Messages[i] == r.Response {
			at = i
		}
	}
	if at < 0 || !slices.ContainsFunc(answers, func(a batchAnswer) bool { return a.msg == at }) {
		return r
	}
	cp := *r.Reply
	cp.Response = nil
	return &Reply{Reply: &cp}
}

// An answerFold is one verdict of a check built from several: the
// verdict on each response of a batch's answer, and on the rest of the
// reply. It keeps maxFindings findings, as one pass does.
type answerFold struct {
	status   Status // StatusSkip until a pass judged something
	findings []Finding
	reason   string // the first skip's, or the error's
	unlisted int
	worst    Status
	rules    []string
	unnamed  bool
}

// add folds in v, whose findings stand at the answer at (the whole
// reply when at is ""). A failure to judge one answer is the check's
// error; a skip says only that the answer was no business of the check.
func (f *answerFold) add(v Verdict, at string) {
	switch v.Status {
	case StatusError:
		if f.status != StatusError {
			f.status, f.reason = StatusError, v.Reason
			if at != "" {
				f.reason = at + ": " + v.Reason
			}
		}
		return
	case StatusSkip:
		if f.status == "" {
			f.status, f.reason = StatusSkip, v.Reason
		}
		return
	}
	if f.status != StatusError {
		f.status = StatusPass
	}
	for _, fd := range v.Findings {
		if at != "" {
			fd.Path = answerPath(at, fd.Path)
		}
		if len(f.findings) < maxFindings {
			f.findings = append(f.findings, fd)
			continue
		}
		f.unlisted++
		if fd.Status == StatusFail || f.worst == "" {
			f.worst = fd.Status
		}
		if fd.Rule == "" {
			f.unnamed = true
		} else if !slices.Contains(f.rules, fd.Rule) {
			f.rules = append(f.rules, fd.Rule)
		}
	}
}

// verdict is the fold's one verdict of check c.
func (f *answerFold) verdict(fixture string, c *Check) Verdict {
	v := Verdict{Fixture: fixture, Check: c, Status: f.status}
	switch f.status {
	case StatusError, StatusSkip:
		v.Reason = f.reason
		return v
	}
	v.Findings = f.findings
	if f.unlisted > 0 {
		v.Findings = append(v.Findings, moreFindings(f.unlisted, f.worst, f.rules, f.unnamed))
	}
	v.Status = statusOf(v.Findings)
	return v
}

// answerPath is where a finding on a response of a batch's answer
// stands in the whole reply: path, read in the response alone ("reply"
// for the response itself, "error.code" or "/result" in it), placed at
// the response's own path at ("reply.1"). An HTTP path names the
// exchange's one HTTP response, whatever the answer.
func answerPath(at, path string) string {
	switch {
	case path == "" || path == "reply":
		return at
	case strings.HasPrefix(path, "http."):
		return path
	case strings.HasPrefix(path, "/"):
		// A schema's instance location (SCH1001), dotted under the
		// message as SCH1004 places its messages' locations.
		return boundPath(at + strings.ReplaceAll(path, "/", "."))
	}
	return boundPath(at + "." + path)
}

// legacyVerdicts runs the server checks of list under the legacy
// reading l of the request; nil when the reply fails one of them.
func legacyVerdicts(p *Pass, l *expect.Expectation, resp *envelope.Response, list []*Check) map[*Check]Verdict {
	p.Expect = l
	defer func() { p.Expect = nil }()
	out := map[*Check]Verdict{}
	for _, rd := range replyReadings(l.ReadReply(resp)) {
		p.Reply = rd
		for _, c := range list {
			if c.Area == AreaClient {
				continue
			}
			v := runOne(p, c)
			if v.Status == StatusFail {
				return nil
			}
			if prev, ok := out[c]; ok {
				v = mergeReadings(prev, v, duplicateWhy)
			}
			out[c] = v
		}
	}
	return out
}

// duplicateWhy is why a reply whose response repeats a member name is
// judged under two readings.
const duplicateWhy = "the response repeats a member name, and RFC 8259 §4 lets a receiver keep either"

// runOne applies one check to the reply in p.
func runOne(p *Pass, c *Check) Verdict {
	p.Check, p.findings, p.unlisted, p.worst = c, nil, 0, ""
	err := run(c, p)
	p.closeFindings()
	v := Verdict{Check: c, Findings: p.findings}
	switch {
	case err == nil:
		v.Status = statusOf(p.findings)
	default:
		if se, ok := asSkip(err); ok {
			v.Status, v.Reason, v.Findings = StatusSkip, string(se), nil
			break
		}
		v.Status, v.Reason, v.Findings = StatusError, err.Error(), nil
	}
	return v
}

// asSkip is errors.As for a SkipError. Checks return their skips
// unwrapped, and most checks skip most exchanges: the type assertion
// spares errors.As's reflection, and its target's allocation, on every
// one.
func asSkip(err error) (SkipError, bool) {
	if se, ok := err.(SkipError); ok {
		return se, true
	}
	var se SkipError
	ok := errors.As(err, &se)
	return se, ok
}

// replyReadings are the replies to judge: the reply as read, and, when
// the response repeats a member name, one reply per reading of it.
func replyReadings(r *envelope.Reply) []*Reply {
	if !hasReadings(r) {
		return []*Reply{{Reply: r}}
	}
	at := -1
	for i := range r.Messages {
		if &r.Messages[i] == r.Response {
			at = i
		}
	}
	var out []*Reply
	for _, m := range r.Response.Readings() {
		cp := *r
		// The reading keeps what was repeated (RPC1001 says so under
		// either), and stands for the response among the messages too,
		// which the envelope checks read.
		m.Duplicates = r.Response.Duplicates
		if at >= 0 {
			cp.Messages = slices.Clone(r.Messages)
			cp.Messages[at] = m
			cp.Response = &cp.Messages[at]
		} else {
			cp.Response = &m
		}
		out = append(out, &Reply{Reply: &cp})
	}
	return out
}

// hasReadings: the response repeats a member name, and is read both ways.
func hasReadings(r *envelope.Reply) bool {
	return r.Response != nil && len(r.Response.Duplicates) > 0 && r.Response.IsObject()
}

// mergeReadings combines the verdicts of one check under two readings of
// a reply, or of the request it answers: what fails under one reading
// only is no sure failure, so it warns, saying why.
func mergeReadings(a, b Verdict, why string) Verdict {
	if a.Status == b.Status {
		return a
	}
	if a.Status != StatusFail && b.Status != StatusFail {
		// Neither reading fails: keep the one with something to say,
		// and say when the other reading has nothing against it.
		keep := a
		if rank(b.Status) > rank(a.Status) {
			keep = b
		}
		if keep.Status == StatusWarn {
			fs := make([]Finding, 0, len(keep.Findings))
			for _, f := range keep.Findings {
				f.Message += " (under one reading only: " + why + ")"
				fs = append(fs, f)
			}
			keep.Findings = fs
		}
		return keep
	}
	failing, other := a, b
	if b.Status == StatusFail {
		failing, other = b, a
	}
	clean := other.Status == StatusPass || other.Status == StatusSkip
	v := failing
	v.Status, v.Findings = StatusWarn, nil
	for _, f := range failing.Findings {
		if f.Status == StatusFail || clean {
			// (A warning the other reading does not share holds under
			// one reading too.)
			f.Status = StatusWarn
			f.Message += " (under one reading only: " + why + ")"
		}
		v.Findings = append(v.Findings, f)
	}
	return v
}

// rank orders verdicts by how much they say, for mergeReadings.
func rank(s Status) int {
	switch s {
	case StatusWarn:
		return 3
	case StatusPass:
		return 2
	case StatusSkip:
		return 1
	}
	return 0
}

// errorOwner is the check of list that carries an error verdict of the
// kind id judges (RPC1006: no reply could be had), or the first server
// check when id is not in the list.
func errorOwner(list []*Check, id string) *Check {
	for _, c := range list {
		if c.ID == id {
			return c
		}
	}
	for _, c := range list {
		if c.Area != AreaClient {
			return c
		}
	}
	return nil
}

// NotSent gives the verdicts of a fixture the checker could not send:
// one error, on the check that owns a reply that could not be had
// (RPC1006), as for an exchange that failed; every other check skips.
func NotSent(fixture, reason string, list []*Check) []Verdict {
	owner := errorOwner(list, OneReply.ID)
	out := make([]Verdict, 0, len(list))
	for _, c := range list {
		v := Verdict{Fixture: fixture, Check: c, Status: StatusSkip, Reason: "not judged: " + reason}
		if c == owner {
			v.Status, v.Reason = StatusError, reason
		}
		out = append(out, v)
	}
	return out
}

// unjudgeable says why an exchange cannot be judged by the reply checks,
// and which check owns that verdict: the checker's own failure (an error,
// once), or the server's death (PRO1005's finding). A server that died
// after writing the response it owed is judged on that response: the
// exchange failed only by the exit (ex.Failure says so), which PRO1005
// judges beside the rest.
func unjudgeable(ex *envelope.Exchange, exp *expect.Expectation, r *envelope.Reply, list []*Check) (string, *Check) {
	owner := func(id string) *Check { return errorOwner(list, id) }
	answered := ex.Died != "" && wroteResponse(exp, r)
	switch {
	case ex.Died != "" && !answered:
		return "the server died handling this message (see PRO1005)", nil
	case ex.Malformed != "":
		return "the reply is no HTTP/1.1 message a client can read (see " + WellFormedHTTP.ID + ")", nil
	case ex.Failure != "" && !answered:
		return ex.Failure, owner(OneReply.ID)
	case redirected(ex):
		// A client may follow it, and the answer be there: the checker
		// follows none, so what the server answers is not known (review
		// rev56: judged as silence, and its status as a refusal's).
		return fmt.Sprintf("the server redirected (%d to %s); the checker follows no redirects, so the answer is not known: give it the URL the server redirects to", ex.Response.Status, Quote(envelope.HeaderGet(ex.Response.Header, "Location"), quoteN)), owner(OneReply.ID)
	case r.SplitErr != nil:
		return "the reply could not be read within the checker's bounds: " + r.SplitErr.Error(), owner(ReplyIsJSON.ID)
	}
	for _, m := range r.Messages {
		if m.TooDeep {
			return fmt.Sprintf("the reply nests deeper than %d levels, beyond what the checker reads (RFC 8259 §9 lets a receiver set such a limit)", envelope.MaxDepth), owner(ReplyIsJSON.ID)
		}
	}
	return "", nil
}

// plainBody: the body of a reply reads as it is, as text (JSON, an event
// stream, a plain refusal), so no coding was needed to read it: the
// output of a coding is binary, never UTF-8 text for long (review rev67:
// a plain-text 400 so sent failed where JSON was could not judge).
func plainBody(r *envelope.Response) bool {
	return r != nil && len(r.Body) > 0 && utf8.Valid(r.Body) && !bytes.ContainsRune(r.Body, 0)
}

// beforeBound is the part of a reply a bound of the checker's cut that
// it judges: the response as read up to the bound, and that read.
type beforeBound struct {
	resp  *envelope.Response
	reply *envelope.Reply
}

// wholeBeforeBound is the reply of an exchange the checker stopped
// reading at its own byte, event or line bound before the response came
// (Response.Truncated, with the failure that names the bound), cut to
// the messages that came whole before it: an event stream's whole
// events (a last event without its blank line is no message, as for a
// client), a pipe's whole lines (the line the byte bound cut, the last,
// is dropped). ok is false when there is no such part to judge: no
// bound, a JSON body (cut, it is no message at all), a server that died,
// nothing whole, or a reply otherwise past the checker's reading. (A
// batch's answers before the bound are judged too; the ones it withheld
// are not missing, RPC1001: review rev65, rev67.)
func wholeBeforeBound(ex *envelope.Exchange, exp *expect.Expectation, base *envelope.Reply) (beforeBound, bool) {
	r := ex.Response
	if ex.Failure == "" || ex.Died != "" || ex.Malformed != "" || r == nil || !r.Truncated || redirected(ex) {
		return beforeBound{}, false
	}
	switch {
	case ex.Transport == envelope.HTTP && envelope.IsEventStream(envelope.HeaderGet(r.Header, "Content-Type")):
	case ex.Transport == envelope.Stdio:
		if n := len(r.Messages); n > 0 && !gjson.ValidBytes(r.Messages[n-1]) {
			cut := *r
			cut.Messages = r.Messages[:n-1]
			r = &cut
			base = exp.ReadReply(r)
		}
	default:
		return beforeBound{}, false
	}
	if base.SplitErr != nil || len(base.Messages) == 0 {
		return beforeBound{}, false
	}
	for _, m := range base.Messages {
		if m.TooDeep {
			return beforeBound{}, false
		}
	}
	return beforeBound{resp: r, reply: base}, true
}

// redirected: the HTTP reply is a redirect with a place to go (RFC 9110
// §15.4), which a client may follow.
func redirected(ex *envelope.Exchange) bool {
	r := ex.Response
	if ex.Transport != envelope.HTTP || r == nil || envelope.HeaderGet(r.Header, "Location") == "" {
		return false
	}
	switch r.Status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// wroteResponse: r holds the response a request owed, whole: a response
// object (no method; a result or an error) whose id is the request's, or,
// where no id could be read from the request (a line that is no JSON
// included), one with a null or absent id. A notification, a posted
// response and a batch owe no single response: false.
func wroteResponse(exp *expect.Expectation, r *envelope.Reply) bool {
	switch {
	case exp.Condition == expect.CondBatch, exp.Condition == expect.CondNotification, exp.Condition == expect.CondResponsePosted,
		exp.Request.IsArray(), exp.NoReply.Set():
		return false
	}
	for i := range r.Messages {
		m := &r.Messages[i]
		if !m.IsObject() || m.Get("method").Exists() || !m.Get("result").Exists() && !m.Get("error").Exists() {
			continue
		}
		id := m.Get("id")
		if len(exp.ID.Echo) == 0 && (!id.Exists() || id.Type == gjson.Null) ||
			slices.ContainsFunc(exp.ID.Echo, func(want gjson.Result) bool { return envelope.SameID(want, id) }) {
			return true
		}
	}
	return false
}

// notJudged gives the verdicts of an exchange the reply checks cannot
// judge: one error (the checker's own failure) or the checks that judge
// failures themselves (PRO1005 for a death); every other check skips,
// pointing to it.
func notJudged(out []Verdict, in Input, exp *expect.Expectation, r *envelope.Reply, list []*Check, why string, owner *Check) []Verdict {
	p := &Pass{Exchange: in.Exchange, Expect: exp, Contract: in.Contract, Schemas: in.Schemas, Secrets: in.Secrets, ToolCache: in.ToolCache, Reply: &Reply{Reply: r}}
	skip := "not judged: " + why
	if owner != nil {
		skip = "not judged: could not judge this exchange (see " + owner.ID + ")"
	}
	for _, c := range list {
		if c.Area == AreaClient {
			continue
		}
		v := Verdict{Fixture: in.Fixture, Check: c}
		switch {
		case c == owner:
			v.Status, v.Reason = StatusError, why
		case c.JudgesFailures:
			v = runOne(p, c)
			v.Fixture = in.Fixture
		default:
			v.Status, v.Reason = StatusSkip, skip
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
	if c.StrictOnly && !p.Contract.IsStrict() {
		return skipSpecOnly
	}
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

// gatherRequest gathers every text of the request a reply could quote:
// the raw body, each string in it, each header value, and the decoded
// form of each.
func gatherRequest(ex *envelope.Exchange, exp *expect.Expectation, texts []requestText, body string) *requestStrings {
	var all, keys []string
	if exp.Request.Valid {
		// Lists made once: all takes the keys too in the end. Most
		// members have a string value, so keys are about half the
		// strings; more only regrow.
		n := len(texts)
		all = make([]string, 0, n+len(ex.Request.Header)+2)
		keys = make([]string, 0, n/2+1)
		for _, t := range texts {
			if t.key {
				keys = append(keys, t.str)
			} else {
				all = append(all, t.str)
			}
		}
	}
	slices.Sort(keys)
	rs := &requestStrings{nv: len(all), keys: keys, body: body}
	slices.Sort(all)
	if len(ex.Request.Body) > 0 {
		all = append(all, rs.body)
	}
	all = append(all, keys...)
	var buf [16]string
	for _, k := range sortedKeys(buf[:0], ex.Request.Header) {
		all = append(all, ex.Request.Header[k]...)
	}
	for i := range len(all) {
		if d := decodedHeader(all[i]); d != all[i] {
			all = append(all, d)
		}
	}
	slices.Sort(all[rs.nv:])
	rs.all = all
	return rs
}

// sortedKeys appends the names of h to dst, sorted: a request has a
// few headers, and a buffer of the caller's holds them without an
// allocation.
func sortedKeys(dst []string, h http.Header) []string {
	for k := range h {
		dst = append(dst, k)
	}
	slices.Sort(dst)
	return dst
}

// requestBody is the raw request body as a string. The parse of the body
// holds it as a string already when the bytes are the same (no byte order
// mark, nothing before the first brace): that one is shared, not copied.
func requestBody(ex *envelope.Exchange, exp *expect.Expectation) string {
	raw := ex.Request.Body
	if r := exp.Request.Root(); exp.Request.Valid && !exp.Request.BOM && len(r.Raw) == len(raw) && bytes.Equal(exp.Request.Raw, raw) {
		return r.Raw
	}
	return string(raw)
}

// walkTexts calls fn for every string under v (v included): each member
// name with key true, each string value with key false, in the order
// they stand. Depth is bounded by the parser (envelope.MaxDepth).
func walkTexts(v gjson.Result, fn func(s gjson.Result, key bool)) {
	switch {
	case v.Type == gjson.String:
		fn(v, false)
	case v.IsObject(), v.IsArray():
		v.ForEach(func(k, val gjson.Result) bool {
			if k.Type == gjson.String {
				fn(k, true)
			}
			walkTexts(val, fn)
			return true
		})
	}
}
