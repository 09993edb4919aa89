package expect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// An Override is what a fixture knows about its probe beyond what the
// request and the facts say: that the cursor it sends is invalid, that
// the spec fixes a status, that a point is open. Corpus fixtures, check
// test cases and transcripts share this one vocabulary (the expect-*
// keys), so a recorded exchange is judged with exactly the override its
// fixture applied.
//
//	expect-reply: open RULE          whether a response must come (must | should RULE |
//	                                 open RULE | false); a request with an id needs one
//	expect-code: -32602              codes naming the condition (comma list), or any
//	expect-status: 403               statuses the spec fixes (comma list), or any
//	expect-status-open: RULE         the spec leaves the status open by RULE: the
//	                                 listed statuses are the contract's (a 5xx
//	                                 fails it and warns under the spec)
//	expect-error: must | should RULE | open RULE | false
//	                                 a result is wrong (at that level), or right
//	expect-served: must RULE         an error is wrong: the request is valid and the
//	                                 fixture only spells it another legal way (header
//	                                 names in lowercase), so a refusal breaks RULE
//	expect-error: local RULE         a result is wrong (must) from a server the
//	                                 facts show local (loopback, private, link-local),
//	                                 open by RULE from any other (a foreign Origin)
//	expect-ambiguity: RULE | none    the reaction is open: every deviation warns
//	                                 (none: the request's own ambiguities do not apply)
//	expect-code-ambiguity: RULE      only the code is open: another code warns
//	expect-page-scope: private       the request asks a later page of a list whose
//	                                 first page gave this cacheScope, which every
//	                                 page keeps (T-CACHE-3)
//	expect-page-cursors: ["c1"]      the nextCursors the earlier pages of the
//	                                 listing handed out, the one that asked this
//	                                 page last (a JSON array): one handed out
//	                                 again is a loop (T-PAGE-3)
//	expect-page-names: ["add"]       the tool names the earlier pages of the
//	                                 tools/list listed (T-TOOL-5)
//	expect-tool-refusal: true        the call breaks the tool's inputSchema
//	                                 (when the facts cannot show it)
//	expect-id: optional | lenient    the error may leave the id out (lenient: that warns)
//	expect-body: optional            the rejection may come without a body
//	expect-condition: TEXT           how reports name the condition
//	expect-session: none | unknown | live
//	                                 the request carries no session id, one the server
//	                                 never issued, or the run's own open one (judged
//	                                 only when the facts show the server issued one)
//	expect-missing: true             what the request names does not exist: the
//	                                 fixture made it up (a resource URI)
//	expect-state: tampered | replayed
//	                                 the request is a second round (2026-07-28) whose
//	                                 requestState the checker changed in one character
//	                                 (T-MRTR-5) or took from a call with other arguments
//	                                 (T-MRTR-6): an error (any code) or a fresh
//	                                 input_required is right; a complete result warns
type Override struct {
	fields []Field // as given, for transcripts

	codes         []int
	anyCode       bool
	status        []int
	anyStatus     bool
	err           *Want
	errLocal      string // expect-error: local RULE
	served        *Want
	page          Listing
	reply         *Want
	ambiguity     string
	noAmbiguity   bool
	codeAmbiguity string
	statusOpen    string
	toolRefusal   bool
	missing       bool
	idOptional    bool
	idLenient     bool
	bodyOptional  bool
	condition     string
	session       string
	state         string
}

// A Field is one key: value line of an override.
type Field struct{ Key, Value string }

// Keys lists the override vocabulary.
func Keys() []string {
	return []string{"expect-reply", "expect-code", "expect-status", "expect-error", "expect-served", "expect-ambiguity", "expect-code-ambiguity",
		"expect-status-open", "expect-tool-refusal", "expect-page-scope", "expect-page-cursors", "expect-page-names", "expect-id", "expect-body", "expect-condition", "expect-session", "expect-missing", "expect-state"}
}

// IsKey reports whether key belongs to the override vocabulary.
func IsKey(key string) bool {
	for _, k := range Keys() {
		if k == key {
			return true
		}
	}
	return false
}

// Set reads one key: value line into the override.
func (o *Override) Set(key, value string) error {
	value = strings.TrimSpace(value)
	var err error
	switch key {
	case "expect-code":
		if value == "any" {
			o.anyCode, o.codes = true, nil
			break
		}
		o.codes, err = ints(value)
	case "expect-status":
		if value == "any" {
			o.anyStatus, o.status = true, nil
			break
		}
		o.status, err = ints(value)
		for _, st := range o.status {
			if err == nil && (st < 100 || st > 599) {
				// A status no server can send (RFC 9110 §15: three
				// digits, 100 to 599) would fail every reply.
				err = fmt.Errorf("%d is not an HTTP status (want 100 to 599)", st)
			}
		}
	case "expect-error":
		if rule, ok := strings.CutPrefix(value, "local "); ok {
			// Fixed where the server is local; elsewhere open by rule.
			if strings.TrimSpace(rule) == "" {
				return errors.New("local needs the rule that leaves a remote server's reaction open")
			}
			o.errLocal = strings.TrimSpace(rule)
			break
		}
		var w Want
		w, err = parseLevel(value)
		o.err = &w
	case "expect-served":
		var w Want
		w, err = parseLevel(value)
		o.served = &w
	case "expect-reply":
		var w Want
		w, err = parseLevel(value)
		o.reply = &w
	case "expect-ambiguity":
		if value == "none" {
			o.noAmbiguity = true
			break
		}
		if value == "" {
			return errors.New("name the rule that leaves the reaction open, or none")
		}
		o.ambiguity = value
	case "expect-code-ambiguity":
		if value == "" {
			return errors.New("name the rule that leaves the code open")
		}
		o.codeAmbiguity = value
	case "expect-status-open":
		if value == "" {
			return errors.New("name the rule that leaves the status open")
		}
		o.statusOpen = value
	case "expect-page-scope":
		if value == "" {
			return errors.New("name the cacheScope of the list's first page")
		}
		o.page.Scope = value
	case "expect-page-cursors":
		o.page.Cursors, err = jsonStrings(value)
	case "expect-page-names":
		o.page.Names, err = jsonStrings(value)
	case "expect-tool-refusal":
		o.toolRefusal, err = strconv.ParseBool(value)
	case "expect-id":
		switch value {
		case "optional":
			o.idOptional = true
		case "lenient":
			o.idLenient = true
		default:
			return fmt.Errorf("%q: want optional or lenient", value)
		}
	case "expect-body":
		if value != "optional" {
			return fmt.Errorf("%q: only optional is allowed", value)
		}
		o.bodyOptional = true
	case "expect-condition":
		if value == "" {
			return errors.New("name the condition")
		}
		o.condition = value
	case "expect-missing":
		o.missing, err = strconv.ParseBool(value)
	case "expect-session":
		if value != "none" && value != "unknown" && value != "live" {
			return fmt.Errorf("%q: want none, unknown or live", value)
		}
		o.session = value
	case "expect-state":
		if value != StateTampered && value != StateReplayed {
			return fmt.Errorf("%q: want %s or %s", value, StateTampered, StateReplayed)
		}
		o.state = value
	default:
		return fmt.Errorf("unknown key %q (want one of %s)", key, strings.Join(Keys(), ", "))
	}
	if err != nil {
		return err
	}
	o.fields = append(o.fields, Field{key, value})
	return nil
}

// parseLevel reads "must", "true", "should RULE", "open RULE" or "false".
func parseLevel(v string) (Want, error) {
	word, rule, _ := strings.Cut(v, " ")
	rule = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rule), ":"))
	switch strings.TrimSuffix(word, ":") {
	case "true", "must":
		return Want{Must, rule}, nil
	case "should":
		if rule == "" {
			// A SHOULD is some rule's; a warn that names none tells the
			// server's author nothing to look up.
			return Want{}, errors.New("should needs the rule that asks it")
		}
		return Want{Should, rule}, nil
	case "open":
		if rule == "" {
			return Want{}, errors.New("open needs the rule that leaves it open")
		}
		return Want{Open, rule}, nil
	case "false":
		return Want{}, nil
	}
	return Want{}, fmt.Errorf("%q: want must, should RULE, open RULE or false", v)
}

func ints(v string) ([]int, error) {
	var out []int
	for _, x := range strings.Split(v, ",") {
		x = strings.TrimSpace(x)
		if x == "" {
			continue
		}
		n, err := strconv.Atoi(x)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", x)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("want a comma list of integers")
	}
	return out, nil
}

// NewOverride makes an override of the given lines; the first line that
// is not in the vocabulary is an error.
func NewOverride(fields ...Field) (*Override, error) {
	o := &Override{}
	for _, f := range fields {
		if err := o.Set(f.Key, f.Value); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Key, err)
		}
	}
	return o, nil
}

// Fields returns the lines as given, in order.
func (o *Override) Fields() []Field {
	if o == nil {
		return nil
	}
	return o.fields
}

// Empty reports whether the override says nothing.
func (o *Override) Empty() bool { return o == nil || len(o.fields) == 0 }

// MarshalJSON writes the transcript form: an object of the lines.
func (o *Override) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o.Fields() {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		v, _ := json.Marshal(f.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ParseOverride reads the transcript form.
func ParseOverride(raw []byte) (*Override, error) {
	v := gjson.ParseBytes(raw)
	if !v.IsObject() {
		return nil, errors.New("expect must be an object of expect-* keys")
	}
	o := &Override{}
	var err error
	v.ForEach(func(k, val gjson.Result) bool {
		if val.Type != gjson.String {
			err = fmt.Errorf("expect.%s must be a string", k.Str)
			return false
		}
		if e := o.Set(k.Str, val.Str); e != nil {
			err = fmt.Errorf("expect.%s: %w", k.Str, e)
			return false
		}
		return true
	})
	return o, err
}

// apply folds the override into an expectation under construction.
func (o *Override) apply(e *Expectation) {
	if o.Empty() {
		return
	}
	// A fixture about a method's own processing (a bad cursor) is written
	// for a server that offers the method; when the facts show it does
	// not (an undeclared capability), the method is not found first, so
	// -32601 stays right beside the fixture's own code, which is right
	// too for a server that serves the method anyway. A fixture that
	// names a status or its own condition is about what comes before any
	// method (Origin, Host, Accept): that holds whatever the method.
	// Where the facts do not say whether the capability is declared (lint
	// of a transcript without them), the server may be one without it:
	// its -32601 is as right as the fixture's code.
	aboutMethod := o.condition == "" && len(o.status) == 0 && !o.anyStatus
	undeclared := e.Condition == CondUndeclared && aboutMethod
	var unknownCap string
	if c := CapabilityOf(e.Method); c != "" && aboutMethod && !undeclared && !e.Facts.listed(c) {
		if _, known := e.Facts.Declares(c); !known {
			unknownCap = c
		}
	}
	switch {
	case o.anyCode:
		e.Codes, e.Code, e.AlsoCodes, e.AnyCode = nil, Want{}, nil, true
	case len(o.codes) > 0 && undeclared:
		e.Codes = union(e.Codes, o.codes)
	case len(o.codes) > 0:
		// The fixture's code is about its body; a header fault the
		// request also carries may be answered first (AMB-4), and stays
		// defensible.
		e.Codes = o.codes
		// So does a malformed tools/call's -32600, the reading of a
		// server that decodes params into its types before dispatch.
		e.AlsoCodes = slices.DeleteFunc(e.AlsoCodes, func(c int) bool {
			return c != envelope.CodeHeaderMismatch && c != envelope.CodeUnsupportedVer &&
				!(c == envelope.CodeInvalidRequest && e.Condition == CondMalformedCall)
		})
		if len(e.AlsoCodes) == 0 {
			e.AlsoWhy = ""
		}
		if e.Code.Level < Must {
			e.Code = must(e.Code.Rule)
		}
		if e.Code.Rule == "" && o.err != nil && o.err.Level == Must {
			// The rule that fixes the refusal fixes its code too
			// (T-TASK-3: -32602 for an unknown taskId): a wrong code
			// breaks it, not the code table at large.
			e.Code.Rule = o.err.Rule
		}
		if unknownCap != "" {
			e.Codes = union(e.Codes, []int{envelope.CodeMethodNotFound})
			why := "the server's capabilities are not known: one without " + unknownCap + " answers -32601 (T-LIFE-4, T-ERR-3)"
			if e.Detail != "" {
				why = e.Detail + "; " + why
			}
			e.Detail = why
			if e.Version != envelope.V20260728 {
				// Before 2026-07-28 a server without the capability is
				// held to T-LIFE-4, a SHOULD (CondUndeclared): knowing
				// less must not judge more strictly than either reading.
				e.Code = weaker(e.Code, should("T-LIFE-4"))
			}
		}
	}
	switch {
	case o.anyStatus:
		e.Status, e.StatusWant, e.AnyStatus = nil, Want{}, true
	case len(o.status) > 0 && o.statusOpen != "":
		// The spec leaves it open (T-HTTP-11): the statuses are the
		// contract's, and a 5xx, the worse choice, warns under the spec.
		e.Status, e.StatusWant = o.status, contract(o.statusOpen)
	case len(o.status) > 0:
		// A fixture names a status only where the spec fixes it.
		e.Status, e.StatusWant = o.status, must("")
	}
	if o.err != nil && !(undeclared && o.err.Level < e.Error.Level) {
		e.Error = *o.err
	}
	if o.served != nil {
		e.Served, e.ServedAsJSONRPC = *o.served, false
	}
	e.Page = o.page
	if o.errLocal != "" {
		w := open(o.errLocal)
		if e.Facts != nil && e.Facts.Local {
			w = must("T-HTTP-14: a server on a local address refuses a foreign Origin")
		}
		// The Origin's ambiguity softens nothing the request and the facts
		// fix on their own (a method of an undeclared capability).
		if w.Level >= e.Error.Level {
			e.Error = w
		}
	}
	if o.reply != nil {
		e.Reply = *o.reply
	}
	if o.missing {
		e.missingResource()
	}
	if o.toolRefusal && e.Tool == nil {
		e.Tool = &ToolCall{Name: e.Request.Get("params.name").Str}
	}
	if o.toolRefusal && !e.Tool.Judged {
		// The fixture generated arguments its reading of the schema
		// breaks; where the tool's own schema judged them, that verdict
		// stands (a catch-all patternProperties may admit the "extra").
		// Where it did not (the schema is not known, or does not
		// compile), the fault is the fixture's word alone: it may be one
		// a validating server only drops or converts, which the schema
		// would warn of (see build), and knowing less must not judge
		// more strictly.
		e.Tool.Refusal, e.Tool.OutputSchema = should("T-TOOL-8: the tool's inputSchema is not known here, so how the arguments break it is the fixture's word"), nil
	}
	switch {
	case o.idOptional:
		e.ID.Lost = Want{}
	case o.idLenient:
		rule := o.ambiguity
		if rule == "" {
			rule = "AMB-17: the server may refuse before reading the body"
		}
		e.ID.Lost = open(rule)
	}
	if o.bodyOptional {
		e.BodyOptional = true
	}
	if o.state != "" {
		e.stateRound(o.state)
	}
	if o.condition != "" {
		e.Detail = o.condition
	}
	if o.noAmbiguity {
		// The fixture made the request up (a method no extension defines):
		// what the request alone leaves open is fixed.
		for _, w := range []*Want{&e.Error, &e.Code, &e.StatusWant} {
			if w.Level == Open {
				*w = must("")
			}
		}
	}
	if r := o.ambiguity; r != "" {
		// The reaction is open; that a request with an id gets an answer
		// is not (JSON-RPC §5), so Reply keeps its level, and neither is
		// the answer's id: a request whose id reads gets it back, never
		// another (T-RPC-5, T-RPC-9). A refusal that may come before the
		// body is read says so with expect-id, or RPC1004 reads it off
		// the status.
		e.Error, e.Code, e.Served = soften(e.Error, r), soften(e.Code, r), soften(e.Served, r)
		if !e.NoReply.Set() {
			// (A notification's open reaction, accepted or refused, is
			// the 202 or the 4xx it already allows: no other status.)
			e.StatusWant = soften(e.StatusWant, r)
		}
	}
	if r := o.codeAmbiguity; r != "" {
		e.Code = soften(e.Code, r)
	}
	if o.session != "" {
		// After the fixture's ambiguity, which leaves open how a server
		// reacts to the request itself: a session rule binds whatever
		// the request is (a request before initialize without the
		// session id warns under T-SESS-2, not under the open point;
		// review rev28).
		e.session(o.session)
	}
}

// The values of expect-state: how the requestState of a second round
// (2026-07-28) was made from the first round's.
const (
	// StateTampered: the state the server issued, one character changed.
	StateTampered = "tampered"
	// StateReplayed: the state the server issued for the same tool called
	// with other arguments.
	StateReplayed = "replayed"
)

// stateRound refines the expectation of a second round whose
// requestState the server did not issue for this request. The server
// treats the state as input an attacker controls (T-MRTR-5) and binds it
// to the request it was issued for (T-MRTR-6): an error refuses it, with
// any code (none is set, AMB-12), and a fresh input_required asks again
// without using it; both are right. A complete result may have used the
// state, but whether that matters the checker cannot know: a server may
// leave the state unprotected when tampering can do nothing worse than
// fail the request (T-MRTR-5), and T-MRTR-6 is a SHOULD. So it warns.
func (e *Expectation) stateRound(how string) {
	var what string
	switch how {
	case StateTampered:
		what = "a requestState changed in one character"
		e.Error = open("T-MRTR-5: state that fails verification is rejected, unless tampering can do no worse than fail the request, which the checker cannot tell")
	case StateReplayed:
		what = "a requestState the server issued for other arguments"
		e.Error = should("T-MRTR-6: state presented on a request other than the one it was issued for is rejected")
	}
	e.StateRefused = true
	e.Codes, e.Code, e.AlsoCodes, e.AlsoWhy, e.AnyCode = nil, Want{}, nil, "", true
	e.Served, e.ServedExcept, e.ServedAsJSONRPC = Want{}, nil, false
	e.ParamsSound = false
	if e.Tool != nil {
		what = "tool " + shortQuote(e.Tool.Name) + " called with " + what
	}
	e.Detail = what
}

// EndedByClient is the expectation of a request in a session the client
// ended with a DELETE the server accepted: refused, 404 (T-SESS-3), with
// any code, and without its id, as a session is checked before the body
// is read (DESIGN, transport-level rejections). The run's own
// session/reuse-after-delete and a relay's client that does the same
// are held to it alike.
func EndedByClient() *Override {
	return MustOverride(
		Field{Key: "expect-error", Value: "must"},
		Field{Key: "expect-status", Value: "404"},
		Field{Key: "expect-code", Value: "any"},
		Field{Key: "expect-id", Value: "optional"},
		Field{Key: "expect-condition", Value: "a request in a session the client ended (T-SESS-3)"},
	)
}

// MustOverride is NewOverride of fields the checker writes itself: an
// error is a bug of the checker, not of any input.
func MustOverride(fields ...Field) *Override {
	o, err := NewOverride(fields...)
	if err != nil {
		panic("expect: the checker's own override: " + err.Error())
	}
	return o
}

// LegacyPing is how a ping with no _meta, served on a 2026-07-28 stdio
// pipe, is judged: as a legacy client's ping (see legacyPing), whose
// refusal a modern-only server owes.
func LegacyPing() *Override {
	return MustOverride(
		Field{Key: "expect-error", Value: "should T-LIFE-7: a 2026-07-28 request without _meta is refused; a server that also serves 2025-xx clients (T-COMPAT-2) may answer a ping before initialize as theirs"},
		Field{Key: "expect-condition", Value: "a ping with no _meta on a 2026-07-28 pipe, which a legacy client may send before initialize"},
	)
}

// LegacyDiscover is the override of a server/discover a legacy server
// answered (T-COMPAT-4): any error, any status but a 5xx, or none at all
// mark a server of the 2025 era, whose rules bind its answer, not
// 2026-07-28's (404 for an unknown method, its table of codes). The run
// gives it to its own probe once initialize negotiated a legacy
// version; Build gives it where nothing else names the server's version
// and the reply marks the server legacy. condition says which.
func LegacyDiscover(condition string) *Override {
	return MustOverride(
		Field{Key: "expect-reply", Value: "false"},
		Field{Key: "expect-code", Value: "any"},
		Field{Key: "expect-status", Value: "any"},
		Field{Key: "expect-error", Value: "open T-COMPAT-4: a legacy server answers server/discover with an error"},
		Field{Key: "expect-ambiguity", Value: "T-COMPAT-4: a legacy server may answer server/discover with any error, or not at all"},
		Field{Key: "expect-condition", Value: condition},
	)
}
