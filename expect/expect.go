// Package expect says what a conforming reply to one request is, and how
// sure each part of that is. An Expectation is built once, by Build, from
// three things only: the request as it went on the wire, what the server
// declared in this run (Facts: the negotiated version, the versions it
// serves, its capabilities, its tools), and a fixture's Override. It is
// read-only after that. Live runs, send, lint and the proxy all judge
// through it, and a transcript carries the facts and the override, so the
// same exchange gets the same verdict wherever it is judged.
//
// Every expected property carries a Want: the level of the rule behind it
// (a MUST, the strict contract, a SHOULD, a point the spec leaves open)
// and the rule's name. The judge turns a deviation into fail or warn from
// the Want alone, in one place, so a check never decides how sure it is.
package expect

import (
	"fmt"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// A Level is how sure an expected property is.
type Level uint8

const (
	// Free: nothing is expected; any reply is right.
	Free Level = iota
	// Open: the spec leaves the point open (an AMB-… or UNSPEC rule, or a
	// reading a receiver may choose); a deviation warns and says why.
	Open
	// Should: a SHOULD of the spec; a deviation warns.
	Should
	// Contract: a rule of the strict error-envelope contract; a deviation
	// fails under it and is not judged under --contract spec.
	Contract
	// Must: a MUST of the spec (or of JSON-RPC 2.0, which MCP adopts); a
	// deviation fails.
	Must
)

func (l Level) String() string {
	switch l {
	case Open:
		return "open"
	case Should:
		return "should"
	case Contract:
		return "contract"
	case Must:
		return "must"
	}
	return "free"
}

// A Want is how sure one expected property is, and the rule that says so.
type Want struct {
	Level Level
	Rule  string // "T-TOOL-6", "AMB-7: the reaction to a batch is unspecified"
}

// Set reports whether anything is expected.
func (w Want) Set() bool { return w.Level != Free }

func must(rule string) Want     { return Want{Must, rule} }
func should(rule string) Want   { return Want{Should, rule} }
func open(rule string) Want     { return Want{Open, rule} }
func contract(rule string) Want { return Want{Contract, rule} }

// weaker returns the less sure of two wants: what holds under both of
// two readings of a request.
func weaker(a, b Want) Want {
	if b.Level < a.Level {
		return b
	}
	return a
}

// soften caps w at Open with rule: the spec leaves the whole reaction
// open, so a deviation can only warn.
func soften(w Want, rule string) Want {
	if w.Level > Open {
		return Want{Open, rule}
	}
	return w
}

// A Condition is what a request provokes, as far as the protocol fixes
// the reply.
type Condition string

const (
	CondParseError         Condition = "parse error"
	CondInvalidRequest     Condition = "invalid request"
	CondBatch              Condition = "batch"
	CondNotification       Condition = "notification"
	CondResponsePosted     Condition = "response sent to the server"
	CondHTTPMethod         Condition = "http method other than POST"
	CondUnknownMethod      Condition = "unknown method"
	CondLegacyInitialize   Condition = "legacy initialize"
	CondHeaderMismatch     Condition = "header mismatch"
	CondUnsupportedVersion Condition = "unsupported protocol version"
	CondMissingMeta        Condition = "missing _meta field"
	CondUnknownTool        Condition = "unknown tool"
	CondMalformedCall      Condition = "malformed tools/call"
	CondInvalidParams      Condition = "invalid params"
	CondUndeclared         Condition = "method of an undeclared capability"
	CondUnknownName        Condition = "a prompt or resource the server did not declare"
	CondSession            Condition = "a request outside the session"
	CondTaskRequired       Condition = "a tool that requires a task called without one"
	CondTaskForbidden      Condition = "a tool that takes no task called with one"
	CondCall               Condition = "method call"
	// CondEndOfInput: no message; the checker closed a stdio server's
	// stdin (envelope.EndOfInput).
	CondEndOfInput Condition = "end of input"
)

// An Expectation says what a conforming reply to one request is. Build
// makes it; nothing changes it after.
type Expectation struct {
	Condition     Condition
	Detail        string // the exact malformation, e.g. "method is missing"
	Version       string // protocol version the reply is judged against
	VersionSource string // "declared", "facts", "header", "_meta", "initialize" or "default"
	Method        string // the request's method, when readable
	HTTPMethod    string // POST, GET, DELETE; "" on stdio
	Request       envelope.Message
	// Facts are what the server declared in this run; nil when unknown
	// (lint of a transcript that does not carry them).
	Facts *Facts
	// Legacy is the expectation of a second reading the server may take
	// of the request, in another version (see LegacyWhy), or of the
	// server's own state (see EndedWhy); nil when there is none. A check
	// fails the reply only if it fails under both. LegacyReason says
	// which.
	Legacy       *Expectation
	LegacyReason string

	// Reply: a response must arrive (RPC1006).
	Reply Want
	// NoReply: nothing may answer (a notification, RPC1007).
	NoReply Want
	// VersionRefused: a notification's POST names a version in its
	// MCP-Protocol-Version that T-HTTP-7 refuses a request for (Quote
	// holds it); accepting it deviates so (HTTP1002).
	VersionRefused Want
	// Error: a result is wrong; the request must be refused (PRO1001).
	Error Want
	// StateRefused: the request carries a requestState the server did
	// not issue for it (expect-state): a fresh input_required result
	// refuses it as an error does, so only a complete result breaks
	// Error.
	StateRefused bool
	// Served: an error is wrong; the request must be served (PRO1001):
	// it is valid, spelled another way the spec allows.
	Served Want
	// ServedAsJSONRPC: Served binds only an answer the server made as
	// JSON-RPC (over HTTP, a 2xx); an HTTP refusal may be its
	// transport's.
	ServedAsJSONRPC bool
	// ServedExcept are codes that name a condition of their own (a URL
	// the user must visit, a capability the client lacks, a validator's
	// rule): an error with one of them does not break Served.
	ServedExcept []int
	// Page is what the earlier pages of the listing showed, when the
	// request asks a later page.
	Page Listing
	// Codes name the condition, preferred first; Code says how sure. With
	// Code Free any code of the version's table is right.
	Codes []int
	Code  Want
	// AnyCode: the spec names no code for the condition (a fixture says
	// so); any code of the version's table is right.
	AnyCode bool
	// AnyError: any error reply passes, even -32700 for bytes that parse,
	// under either contract (DESIGN rulings: an id MCP forbids and
	// JSON-RPC allows, such as 1.5 or null, which a server's decoder may
	// fail to hold).
	AnyError bool
	// AlsoCodes are defensible but not the literal reading: they warn,
	// naming AlsoWhy.
	AlsoCodes []int
	AlsoWhy   string
	// ReadCodes and ReadStatus are the codes and statuses some reading of
	// the request names: right under that reading, even where the
	// readings together fix none (a request read two ways).
	ReadCodes  []int
	ReadStatus []int
	// Status lists acceptable HTTP statuses, preferred first; StatusWant
	// says how sure. Free: the status is open (HTTP1002's general rules).
	Status     []int
	StatusWant Want
	// AnyStatus: the spec names no status for the condition (a fixture
	// says so): only a 5xx for a client's mistake is wrong.
	AnyStatus bool
	// BodyOptional: the rejection may come without a body (T-HTTP-14).
	BodyOptional bool
	ID           IDRule
	// Tool is set for a tools/call of a tool the server listed.
	Tool *ToolCall
	// Quote is the condition's single value a reply may quote (within the
	// contract's bound): the requested version, the received header.
	Quote string
	// EmptyContents says how sure a resources/read result with an empty
	// contents list is wrong (T-RES-2: a resource that does not exist).
	EmptyContents Want
	// ParamsSound: the facts show the call's params valid (a listed tool
	// whose schema accepts the arguments, a listed resource, a listed
	// prompt given its required arguments), so a refusal of them is the
	// server's own rule or an upstream's, not proof of a fault.
	ParamsSound bool
	// Declared: the request and its params keep the method's schema, and
	// only what the server declared refuses them (a prompt argument it
	// requires, a prompt or resource it does not list): -32600, JSON-RPC's
	// code for a request object that is not valid, is of the wrong kind
	// (T-ERR-2).
	Declared bool
	// Stream: the response ends a stream that may stay open longer than
	// the checker reads it (subscriptions/listen); its absence is no
	// finding.
	Stream bool
}

// An IDRule says which ids a response may carry (T-RPC-5, T-RPC-9).
type IDRule struct {
	// Echo are the ids the response may carry: the request's id as each
	// reading of it gives it. Empty: no id could be read.
	Echo []gjson.Result
	// Lost is how sure leaving the id out (or null) is a fault. Free: it
	// is right (the id could not be read, AMB-1).
	Lost Want
	// Other is how sure any other id is a fault.
	Other Want
	// Invented is how sure an error's id is a fault where no id could be
	// read from the request (T-RPC-9: left out, or null): the id was made
	// up, not echoed wrong.
	Invented Want
	// Rounded: an echo equal to Echo[0] read through a float64 (an integer
	// beyond 2^53) deviates at this level rather than Other's (RFC 8259 §6).
	Rounded Want
}

// A ToolCall is a tools/call of a tool the server listed.
type ToolCall struct {
	Name string
	// Refusal: the arguments break the tool's own inputSchema, so the tool
	// must not run (T-TOOL-8; the tools page: servers MUST validate tool
	// inputs). How it refuses is PRO1004's to judge per version.
	Refusal Want
	// Problems are the validation failures of the arguments, distilled.
	Problems []envelope.DistilledEntry
	// OutputSchema is the tool's outputSchema when the arguments are valid
	// (T-TOOL-10); nil otherwise.
	OutputSchema []byte
	// Judged: the tool's own schema judged the arguments (valid or not,
	// or left open by AMB-15), so a fixture's expect-tool-refusal, meant
	// for when the facts cannot show it, does not override it.
	Judged bool
	// TaskRefused: the call and the tool's taskSupport disagree (2025-11-25):
	// a tool that requires a task called without one, or one that takes
	// none called with one. -32601 refuses it as T-TASK-1 and T-TASK-2 ask,
	// whatever else is wrong with the call.
	TaskRefused bool
}

// IDs are the ids a response may echo, for envelope.ReadReply.
func (e *Expectation) IDs() []gjson.Result { return e.ID.Echo }

// ReadReply splits an exchange's reply the way every judge of it must.
func (e *Expectation) ReadReply(resp *envelope.Response) *envelope.Reply {
	return envelope.ReadReply(resp, envelope.ReadOptions{IDs: e.ID.Echo, NotRPC: e.Condition == CondHTTPMethod, Batches: e.Batches(), Batch: e.Condition == CondBatch || e.Request.IsArray()})
}

// Batches: the reply to this single request may come inside a batch,
// which 2025-03-26 has (T-V0326-1): the server speaks it, or the request
// is the initialize whose answer says which version the server speaks.
// A batch request's reply is judged as the array it is.
func (e *Expectation) Batches() bool {
	return ReadsBatches(e.Facts, e.Method, e.Condition == CondBatch || e.Request.IsArray())
}

// ReadsBatches: the reply to a request of method, sent to a server of
// the facts f, is read into a batch's elements (see Batches); batch is
// whether the request is one.
func ReadsBatches(f *Facts, method string, batch bool) bool {
	return !batch && (f.Speaks() == envelope.V20250326 || method == "initialize")
}

// Cause names the condition for a finding: "unknown tool (\"x\")", or the
// bare condition when there is no detail to add.
func (e *Expectation) Cause() string {
	if e.Detail == "" {
		return string(e.Condition)
	}
	return fmt.Sprintf("%s (%s)", e.Condition, e.Detail)
}

func (e *Expectation) String() string {
	return fmt.Sprintf("%s (%s); reply %s, error %s, codes %v %s, status %v %s",
		e.Condition, e.Detail, e.Reply.Level, e.Error.Level, e.Codes, e.Code.Level, e.Status, e.StatusWant.Level)
}
