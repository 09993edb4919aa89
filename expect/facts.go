package expect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/schema"
)

// Facts are what the server declared about itself in this run. A verdict
// may rest on them because the server said them: a tool it did not list
// does not exist, a version it listed is one it serves. They are built
// once, when the run has learned them, and shared read-only by every
// expectation after (safe for concurrent use).
type Facts struct {
	// Version is the protocol version negotiated; Negotiated says how.
	Version    string
	Negotiated string
	// Supported are the versions the server declared it serves:
	// server/discover's supportedVersions, or in 2025-xx the versions an
	// initialize confirmed by answering them unchanged.
	Supported []string
	// Declined are the versions an initialize asked for and the server
	// answered with another: by T-LIFE-2 (a server that serves the
	// version asked echoes it) versions it does not serve.
	Declined []string
	// Capabilities is the server's capabilities object as declared; nil
	// when unknown.
	Capabilities json.RawMessage
	// ClientCapabilities are the capabilities the client declared in its
	// initialize (2025-xx); nil when unknown. The checker declares none.
	ClientCapabilities json.RawMessage
	// Tools are the tools the server listed.
	Tools []*Tool
	// ToolsListed: tools/list was answered in full (every page), so a
	// name not among Tools is a tool the server does not have.
	ToolsListed bool
	// ToolOrder are the tool names in the order the server listed them
	// (Tools are sorted by name), for the rules on a stable order.
	ToolOrder []string
	// Prompts, Resources (URIs) and Templates (URI templates) are what
	// the server listed; each *Listed says the list was answered in full.
	Prompts         []Prompt
	PromptsListed   bool
	Resources       []string
	ResourcesListed bool
	Templates       []string
	TemplatesListed bool
	// Session: the server issued an Mcp-Session-Id at initialize (2025-xx
	// HTTP), so it relies on sessions.
	Session bool
	// Local: the server is reached on a loopback, private or link-local
	// address (HTTP), where a page of any other origin is the
	// DNS-rebinding attack T-HTTP-14 names; which origins a remote server
	// accepts is its own policy.
	Local bool
	// Spoken is the version the server negotiated when it is not the one
	// replies are judged by: "2025-03-26", judged as Version (2025-06-18)
	// where that revision does not differ (digest §1a). "" otherwise.
	Spoken string
	// clientsDiffer: two initializes of the traffic declared different
	// client capabilities (two clients behind one relay, each in its own
	// session): which client a later exchange belongs to is not known, so
	// neither declaration is.
	clientsDiffer bool
	// toolsSession is the HTTP session whose tools/list the tools are;
	// toolsVary: two sessions were given different lists (a server that
	// lists tools by the client's capabilities, two clients behind one
	// relay). Which list a later call was made against is not known, so
	// the tools are the union of the lists, and no list is whole.
	toolsSession string
	toolsVary    bool
	// issued are the session ids initialize answers issued in the
	// traffic, and ended those a DELETE ended (each the latest
	// maxSessions): a request naming an issued session not ended is in a
	// session the server holds.
	issued, ended []string
	// pages are the list pages the traffic showed: for a method's
	// nextCursor, what the pages of the listing that last handed it out
	// showed (the latest maxPages), so that the page it leads to is
	// judged by them.
	pages []page
	// bySession are what each HTTP session of the traffic negotiated
	// (the latest maxSessions): a relay before several clients judges an
	// exchange in a session by that session's version and capabilities,
	// not by those learned last (another client's initialize, or a 2026
	// client's server/discover). Requests outside every session are
	// judged by the facts learned last, as before.
	bySession []negotiation
}

// A negotiation is what one session's initialize settled: the version
// and the capabilities of both sides.
type negotiation struct {
	Session      string          `json:"session"`
	Version      string          `json:"protocolVersion,omitempty"`
	Negotiated   string          `json:"negotiated,omitempty"`
	Spoken       string          `json:"spoken,omitempty"`
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	ClientCaps   json.RawMessage `json:"clientCapabilities,omitempty"`
}

// maxSessions bounds the session ids Facts remembers.
const maxSessions = 64

// inSession returns the facts an exchange in session sid is judged
// with: those of its own session's negotiation where the traffic showed
// it, else f. Where they are what f holds (one client), f itself.
func (f *Facts) inSession(sid string) *Facts {
	if f == nil || sid == "" || len(f.bySession) == 0 {
		return f
	}
	i := slices.IndexFunc(f.bySession, func(n negotiation) bool { return n.Session == sid })
	if i < 0 {
		return f
	}
	s := &f.bySession[i]
	if s.Version == f.Version && s.Negotiated == f.Negotiated && s.Spoken == f.Spoken &&
		sameBytes(s.Capabilities, f.Capabilities) && sameBytes(s.ClientCaps, f.ClientCapabilities) {
		return f
	}
	n := *f
	n.Version, n.Negotiated, n.Spoken = s.Version, s.Negotiated, s.Spoken
	n.Capabilities, n.ClientCapabilities, n.clientsDiffer = s.Capabilities, s.ClientCaps, false
	return &n
}

// inSessionOf is inSession for the session an HTTP exchange's request
// names.
func (f *Facts) inSessionOf(ex *envelope.Exchange) *Facts {
	if f == nil || len(f.bySession) == 0 || ex.Transport != envelope.HTTP {
		return f
	}
	return f.inSession(envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id"))
}

// sameBytes: a and b are the same slice or equal text (facts share the
// slices they learned, so the first test settles the common case).
func sameBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0] || bytes.Equal(a, b)
}

// negotiated keeps session sid's negotiation: the version n now holds,
// and the capabilities this session's answer and client declared (nil
// where they declared none, not another session's); it replaces an
// earlier one of sid, and drops the oldest beyond maxSessions.
func (n *Facts) negotiated(sid string, caps, clientCaps json.RawMessage) {
	list := slices.DeleteFunc(slices.Clone(n.bySession), func(x negotiation) bool { return x.Session == sid })
	list = append(list, negotiation{Session: sid, Version: n.Version, Negotiated: n.Negotiated, Spoken: n.Spoken,
		Capabilities: caps, ClientCaps: clientCaps})
	if len(list) > maxSessions {
		list = list[len(list)-maxSessions:]
	}
	n.bySession = list
}

// WithSession returns facts that know sid as a session the server issued
// (a live run's own).
func (f *Facts) WithSession(sid string) *Facts {
	n := &Facts{}
	if f != nil {
		*n = *f
	}
	n.issued = remember(n.issued, sid)
	return n
}

// NeverHeld reports whether sid is surely no session the server holds:
// one a DELETE ended, or, while every id the server issued is still
// remembered (fewer than maxSessions), one it never issued. An id that
// fell out of the bounded list may be held still.
func (f *Facts) NeverHeld(sid string) bool {
	if f == nil || sid == "" {
		return false
	}
	if slices.Contains(f.ended, sid) {
		return true
	}
	return len(f.issued) > 0 && len(f.issued) < maxSessions && !slices.Contains(f.issued, sid)
}

// EndedByClient: ex is a 2025 POST in a session the client ended with a
// DELETE the server accepted, which the server then answers 404 (T-SESS-3).
func (f *Facts) EndedByClient(ex *envelope.Exchange) bool {
	if f == nil || ex.Transport != envelope.HTTP || ex.Request.HTTPMethod() != "POST" {
		return false
	}
	sid := envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id")
	return sid != "" && slices.Contains(f.ended, sid)
}

// SessionHeld reports whether sid is a session the server issued and no
// DELETE ended; known is false when no issued session is known.
func (f *Facts) SessionHeld(sid string) (held, known bool) {
	if f == nil || len(f.issued) == 0 {
		return false, false
	}
	return slices.Contains(f.issued, sid) && !slices.Contains(f.ended, sid), true
}

// Sessions says whether the server issued an Mcp-Session-Id at
// initialize (2025-xx HTTP), and whether that is known: facts of a run
// know it, facts learned from traffic once they saw the version settled.
// Where it is not known, a refusal a server that keeps sessions may give
// stays defensible, and nothing is owed that only a server without them
// owes.
func (f *Facts) Sessions() (issued, known bool) {
	if f == nil || f.Version == "" {
		return false, false
	}
	return f.Session, true
}

// MayRefuseSession: ex's reply may be the refusal of a request outside
// the server's session: the server issued one at initialize, or that is
// not known and the reply says it is about a session (namesSession, as
// the SDKs' 400 "No valid session ID provided" does), or is a 404 to a
// request naming one (endedSession). Otherwise a refusal in traffic of
// unknown facts is judged as the request's own.
func (f *Facts) MayRefuseSession(ex *envelope.Exchange) bool {
	issued, known := f.Sessions()
	return issued || !known && (namesSession(ex) || endedSession(ex))
}

// endedSession: a 404 to a request that names a session: the session
// the client holds came from the server, which may have ended it since
// (T-SESS-3 asks 404 then, T-SESS-5 lets it end one at any time).
func endedSession(ex *envelope.Exchange) bool {
	return ex.Response != nil && ex.Response.Status == 404 && envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id") != ""
}

// listed: the traffic showed the server list the capability's items (a
// whole tools/list, say), so it has the capability whatever was declared.
func (f *Facts) listed(capability string) bool {
	if f == nil {
		return false
	}
	switch capability {
	case "tools":
		return f.ToolsListed || len(f.Tools) > 0
	case "prompts":
		return f.PromptsListed || len(f.Prompts) > 0
	case "resources":
		return f.ResourcesListed || f.TemplatesListed || len(f.Resources) > 0 || len(f.Templates) > 0
	}
	return false
}

// namesSession: a 400 or 404 (T-SESS-2, T-SESS-3) whose error message,
// or whose first bytes when it holds no JSON, names a session, or the
// initialization no session follows yet (the TypeScript SDK's "Bad
// Request: Server not initialized" to a request before any initialize;
// review rev90).
func namesSession(ex *envelope.Exchange) bool {
	if ex.Response == nil || ex.Response.Status != 400 && ex.Response.Status != 404 {
		return false
	}
	b := ex.Response.Body
	text := gjson.GetBytes(b, "error.message").Str
	if text == "" && !gjson.ValidBytes(b) {
		text = string(b[:min(len(b), 512)])
	}
	text = strings.ToLower(text)
	return strings.Contains(text, "session") || notInitialized.MatchString(text)
}

// notInitialized says the server or its connection is not initialized
// yet ("Server not initialized", "before initialization was complete"),
// not some state of a tool's ("Tool state not initialized", review
// rev92).
var notInitialized = regexp.MustCompile(`\b(?:server|connection|mcp|session)\b[^.;]{0,40}?(?:\bnot\b|n't\b|\bun)(?:\s+yet)?(?:\s+been)?\s*initiali[sz]ed\b|\bbefore\s+(?:the\s+)?initiali[sz](?:ation|e)\b|\binitiali[sz]ation\s+(?:is\s+|has\s+)?(?:not|n't)\s+(?:yet\s+)?(?:been\s+)?complet|\binitiali[sz]e\s+first\b|\buninitiali[sz]ed\s+(?:server|connection|session)\b`)

// remember appends s to a bounded list of ids, as a new slice (facts
// share their slices), dropping the oldest.
func remember(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	out := append(slices.Clone(list), s)
	if len(out) > maxSessions {
		out = out[len(out)-maxSessions:]
	}
	return out
}

// Speaks is the version the server negotiated.
func (f *Facts) Speaks() string {
	if f == nil {
		return ""
	}
	if f.Spoken != "" {
		return f.Spoken
	}
	return f.Version
}

// A Tool is one entry of the server's tools/list.
type Tool struct {
	Name     string
	Raw      json.RawMessage // the tool object as listed
	Input    []byte          // inputSchema
	Output   []byte          // outputSchema; nil when none
	ReadOnly bool            // annotations.readOnlyHint
	// Again are the other listings of the same name, when the server
	// listed it more than once, not alike (see AddTool); listings are
	// then all of them, read (Raw's first).
	Again    []json.RawMessage
	listings []*Tool

	once    sync.Once
	first   string // the version once compiled for
	compile *schema.ToolSchema
	cerr    error
	once7   sync.Once
	draft7  *schema.ToolSchema // the draft-07 reading, for 2025-06-18 (AMB-15)
	err7    error
	// compiled holds the compilations of this inputSchema, shared with
	// the same tool listed again (Learn): a server relisted in every
	// session would have the same schema compiled for each list. Another
	// version than the first one asked for (a relay's client check and
	// server check may name one session's version differently) is
	// compiled there too. Set when the tool is
	// made, never after.
	compiled *compiledSchemas
}

// compiledSchemas are the compilations of one inputSchema, by version
// ("" for the draft-07 reading).
type compiledSchemas struct {
	mu sync.Mutex
	by map[string]compiledSchema
}

type compiledSchema struct {
	s   *schema.ToolSchema
	err error
}

// get compiles with compile once per key, for every tool that shares c.
func (c *compiledSchemas) get(key string, compile func() (*schema.ToolSchema, error)) (*schema.ToolSchema, error) {
	if c == nil {
		return compile()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.by[key]; ok {
		return r.s, r.err
	}
	s, err := compile()
	if c.by == nil {
		c.by = map[string]compiledSchema{}
	}
	c.by[key] = compiledSchema{s, err}
	return s, err
}

// shareCompiled lets t, not yet shared with anyone, share the
// compilations of old, the same tool listed before, when its inputSchema
// is the same text. old is not written: other goroutines may be judging
// with it.
func (t *Tool) shareCompiled(old *Tool) {
	if old.compiled != nil && t.Input != nil && old.Name == t.Name && bytes.Equal(old.Input, t.Input) {
		t.compiled = old.compiled
	}
}

// NewTool reads a tool object of a tools/list result; ok is false when it
// has no string name. A tool whose inputSchema is not an object still
// exists (a call to it is no call of an unknown tool); its arguments are
// just not judged against it.
func NewTool(raw []byte) (*Tool, bool) {
	t := gjson.ParseBytes(raw)
	name, in := t.Get("name"), t.Get("inputSchema")
	if name.Type != gjson.String {
		return nil, false
	}
	tl := &Tool{Name: name.Str, Raw: json.RawMessage(raw), ReadOnly: t.Get("annotations.readOnlyHint").Type == gjson.True}
	if in.IsObject() {
		tl.Input = []byte(in.Raw)
		tl.compiled = &compiledSchemas{}
	}
	if out := t.Get("outputSchema"); out.Exists() {
		tl.Output = []byte(out.Raw)
	}
	return tl, true
}

// inputSchema compiles the tool's inputSchema once per version: the
// first one asked for without a lock (a run asks by one), any other
// through the shared cache. A 2025-03-26 session's tools are read by
// 2025-06-18's rules, as its exchanges are judged (digest §1a).
func (t *Tool) inputSchema(version string) (*schema.ToolSchema, error) {
	if t.Input == nil {
		return nil, errors.New("no inputSchema object")
	}
	if version == envelope.V20250326 {
		version = envelope.V20250618
	}
	compile := func() (*schema.ToolSchema, error) { return schema.CompileToolSchema(t.Input, version) }
	t.once.Do(func() {
		t.first = version
		t.compile, t.cerr = t.compiled.get(version, compile)
	})
	if version != t.first {
		// (The first compile's fields are set for good once Do returned.)
		return t.compiled.get(version, compile)
	}
	return t.compile, t.cerr
}

// inputSchemaDraft7 compiles the tool's inputSchema once as draft-07.
func (t *Tool) inputSchemaDraft7() (*schema.ToolSchema, error) {
	if t.Input == nil {
		return nil, errors.New("no inputSchema object")
	}
	t.once7.Do(func() {
		t.draft7, t.err7 = t.compiled.get("", func() (*schema.ToolSchema, error) { return schema.CompileToolSchemaDraft7(t.Input) })
	})
	return t.draft7, t.err7
}

// InputSchema is the tool's inputSchema compiled for version (once, as
// Build uses it): the client checks judge a client's arguments with the
// schema the server's own replies are judged by.
func (t *Tool) InputSchema(version string) (*schema.ToolSchema, error) { return t.inputSchema(version) }

// InputSchemaDraft7 is the inputSchema read as draft-07, the other
// reading 2025-06-18 allows (AMB-15).
func (t *Tool) InputSchemaDraft7() (*schema.ToolSchema, error) { return t.inputSchemaDraft7() }

// CheckArgs validates a call's arguments against the tool's inputSchema
// as version reads it. agree is false when the readings 2025-06-18
// allows for a schema that names no dialect (2020-12 and draft-07,
// AMB-15) disagree: then neither refusing nor running the call is sure.
// err: the schema does not compile, or the arguments are beyond what the
// checker validates (schema.ErrBeyondBounds); either way nothing is known.
func (t *Tool) CheckArgs(args []byte, version string) (probs []envelope.DistilledEntry, agree bool, err error) {
	if len(t.listings) > 0 {
		// Listed more than once, differently (AddTool): the arguments
		// are refused for sure only if every listing refuses them, and
		// accepted only if every listing accepts them.
		for i, l := range t.listings {
			p, a, err := l.CheckArgs(args, version)
			switch {
			case err != nil:
				return nil, false, err
			case !a || i > 0 && (len(p) > 0) != (len(probs) > 0):
				return probs, false, nil
			case i == 0:
				probs = p
			}
		}
		return probs, true, nil
	}
	s, err := t.inputSchema(version)
	if err != nil {
		return nil, false, err
	}
	if probs, err = s.Validate(args); err != nil {
		return nil, false, err
	}
	if version == envelope.V20250618 && !schema.Declared(t.Input) {
		if d7, err := t.inputSchemaDraft7(); err == nil {
			p7, err := d7.Validate(args)
			if err != nil || (len(p7) > 0) != (len(probs) > 0) {
				return probs, false, nil
			}
		}
	}
	return probs, true, nil
}

// Rejects reports whether the tool's own inputSchema surely rejects args
// (every reading the version allows). A schema or arguments the checker
// cannot judge show nothing rejected: it must assume the tool would run.
func (t *Tool) Rejects(args []byte, version string) bool {
	probs, agree, err := t.CheckArgs(args, version)
	return err == nil && agree && len(probs) > 0
}

// Inputs are the tool's inputSchemas: one, or each listing's when it
// was listed more than once, differently (AddTool); none when it has
// none.
func (t *Tool) Inputs() [][]byte {
	if t == nil {
		return nil
	}
	if len(t.listings) == 0 {
		if t.Input == nil {
			return nil
		}
		return [][]byte{t.Input}
	}
	var out [][]byte
	for _, l := range t.listings {
		if l.Input != nil {
			out = append(out, l.Input)
		}
	}
	return out
}

// Required are the arguments the tool's inputSchema requires at its top:
// those every listing requires, when it was listed more than once.
func (t *Tool) Required() []string {
	var out []string
	for i, in := range t.Inputs() {
		var req []string
		for _, r := range gjson.GetBytes(in, "required").Array() {
			if r.Type == gjson.String {
				req = append(req, r.Str)
			}
		}
		if i == 0 {
			out = req
			continue
		}
		out = slices.DeleteFunc(out, func(r string) bool { return !slices.Contains(req, r) })
	}
	if n := len(t.Inputs()); n > 0 && n < len(t.listings) {
		return nil // a listing without a schema requires nothing
	}
	return out
}

// AddTool adds a listing of a tool to tools. A name listed again alike
// is one tool. Listed again otherwise (T-TOOL-5 asks names be unique), it
// is one tool whose listing the checker cannot choose: a server keeping
// its tools by name serves the last, another the first (review rev40).
// Such a tool is known; arguments are sure to be refused or accepted
// only as every listing reads them (CheckArgs), its result is held to no
// outputSchema, and it is read-only only if every listing says so.
func AddTool(tools []*Tool, t *Tool) []*Tool {
	i := slices.IndexFunc(tools, func(o *Tool) bool { return o.Name == t.Name })
	if i < 0 {
		return append(tools, t)
	}
	o := tools[i]
	// (Alike as JSON: a listing written again with other spacing is the
	// same listing.)
	if envelope.SameText(o.Raw, t.Raw) || slices.ContainsFunc(o.Again, func(r json.RawMessage) bool { return envelope.SameText(r, t.Raw) }) {
		return tools
	}
	listings := o.listings
	if listings == nil {
		listings = []*Tool{o}
	}
	tools[i] = &Tool{Name: o.Name, Raw: o.Raw, ReadOnly: o.ReadOnly && t.ReadOnly, Again: append(slices.Clone(o.Again), t.Raw),
		listings: append(slices.Clone(listings), t)}
	return tools
}

// Tool finds a listed tool by name; nil when the server did not list it.
func (f *Facts) Tool(name string) *Tool {
	if f == nil {
		return nil
	}
	for _, t := range f.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Declares reports whether the server's capabilities hold the member at
// path ("prompts", "resources.subscribe"); known is false when the
// capabilities are not known.
func (f *Facts) Declares(path string) (declared, known bool) {
	if f == nil || f.Capabilities == nil {
		return false, false
	}
	return DeclaredIn(gjson.ParseBytes(f.Capabilities), path), true
}

// DeclaredIn: the capabilities object caps declares the capability at
// path (a member that is not null or false).
func DeclaredIn(caps gjson.Result, path string) bool {
	v := caps.Get(path)
	return v.Exists() && v.Type != gjson.Null && v.Type != gjson.False
}

// Capability is the member at path of the server's capabilities; it does
// not exist when they are not known.
func (f *Facts) Capability(path string) gjson.Result {
	if f == nil || f.Capabilities == nil {
		return gjson.Result{}
	}
	return gjson.GetBytes(f.Capabilities, path)
}

// Published reports whether the server itself listed a tool or a prompt
// named s, a resource at URI s, or the resource template s (not a URI a
// template merely matches: its variables are the client's).
func (f *Facts) Published(s string) bool {
	return f != nil && (f.Tool(s) != nil || f.prompt(s) != nil || slices.Contains(f.Resources, s) || slices.Contains(f.Templates, s))
}

// ListedInFull reports whether the run saw the whole list a request of
// method names its target from (a tool's or a prompt's name; a
// resource's URI when uri), so that a name the list lacks is known to be
// the client's own text. A method that names nothing from a list has
// none to see: true.
func (f *Facts) ListedInFull(method string, uri bool) bool {
	switch {
	case uri && (strings.HasPrefix(method, "resources/") || method == "completion/complete"):
		return f != nil && f.ResourcesListed
	case uri:
		return true
	case method == "tools/call":
		return f != nil && f.ToolsListed
	case method == "prompts/get", method == "completion/complete":
		return f != nil && f.PromptsListed
	}
	return true
}

// Serves reports whether the server declared it serves version.
func (f *Facts) Serves(version string) bool {
	return f != nil && slices.Contains(f.Supported, version)
}

// Declines reports whether an initialize of the run was answered with
// another version than version, which it asked for.
func (f *Facts) Declines(version string) bool {
	return f != nil && slices.Contains(f.Declined, version)
}

// servesLegacy reports whether the server declared it serves a version
// before 2026-07-28 (a dual-era server).
func (f *Facts) servesLegacy() bool {
	return f != nil && slices.ContainsFunc(f.Supported, func(v string) bool { return v != envelope.V20260728 })
}

// wireFacts is the transcript form of Facts (a "facts" line).
type wireFacts struct {
	ProtocolVersion   string            `json:"protocolVersion,omitempty"`
	Negotiated        string            `json:"negotiated,omitempty"`
	SupportedVersions []string          `json:"supportedVersions,omitempty"`
	DeclinedVersions  []string          `json:"declinedVersions,omitempty"`
	Capabilities      json.RawMessage   `json:"capabilities,omitempty"`
	ClientCaps        json.RawMessage   `json:"clientCapabilities,omitempty"`
	Tools             []json.RawMessage `json:"tools,omitempty"`
	ToolsListed       bool              `json:"toolsListed,omitempty"`
	ToolOrder         []string          `json:"toolOrder,omitempty"`
	Prompts           []wirePrompt      `json:"prompts,omitempty"`
	PromptsListed     bool              `json:"promptsListed,omitempty"`
	Resources         []string          `json:"resources,omitempty"`
	ResourcesListed   bool              `json:"resourcesListed,omitempty"`
	Templates         []string          `json:"resourceTemplates,omitempty"`
	TemplatesListed   bool              `json:"resourceTemplatesListed,omitempty"`
	Session           bool              `json:"session,omitempty"`
	Local             bool              `json:"local,omitempty"`
	Spoken            string            `json:"spoken,omitempty"`
	// Sessions and EndedSessions carry what SessionHeld reads, so that
	// lint of a recording judges a session refusal as the run did.
	Sessions      []string `json:"sessions,omitempty"`
	EndedSessions []string `json:"endedSessions,omitempty"`
	// BySession carries what each session negotiated, so that lint of
	// a relay's recording judges each exchange by its own session.
	BySession []negotiation `json:"bySession,omitempty"`
	// Pages carry what the list pages showed (see Facts.Listing).
	Pages []page `json:"pages,omitempty"`
}

// wirePrompt is the transcript form of a Prompt.
type wirePrompt struct {
	Name     string   `json:"name"`
	Args     []string `json:"arguments,omitempty"`
	Required []string `json:"required,omitempty"`
}

// MarshalJSON writes the transcript form.
func (f *Facts) MarshalJSON() ([]byte, error) {
	w := wireFacts{ProtocolVersion: f.Version, Negotiated: f.Negotiated, SupportedVersions: f.Supported, DeclinedVersions: f.Declined,
		Capabilities: f.Capabilities, ClientCaps: f.ClientCapabilities, ToolsListed: f.ToolsListed,
		ToolOrder: f.ToolOrder, PromptsListed: f.PromptsListed, Resources: f.Resources, ResourcesListed: f.ResourcesListed,
		Templates: f.Templates, TemplatesListed: f.TemplatesListed, Session: f.Session, Local: f.Local, Spoken: f.Spoken,
		Sessions: f.issued, EndedSessions: f.ended, BySession: f.bySession, Pages: f.pages}
	for _, t := range f.Tools {
		w.Tools = append(w.Tools, t.Raw)
		w.Tools = append(w.Tools, t.Again...)
	}
	for _, p := range f.Prompts {
		w.Prompts = append(w.Prompts, wirePrompt{p.Name, p.Args, p.Required})
	}
	return json.Marshal(w)
}

// ParseFacts reads the transcript form of Facts.
func ParseFacts(raw []byte) (*Facts, error) {
	v := gjson.ParseBytes(raw)
	if !v.IsObject() {
		return nil, errors.New("facts must be an object")
	}
	f := &Facts{}
	var err error
	v.ForEach(func(k, val gjson.Result) bool {
		if err = factTyped(k.Str, val); err != nil {
			return false
		}
		switch k.Str {
		case "protocolVersion":
			if !envelope.KnownVersion(val.Str) {
				err = fmt.Errorf("facts.protocolVersion is %s, want one of %v", val.Raw, envelope.Versions())
			}
			f.Version = val.Str
		case "negotiated":
			f.Negotiated = val.Str
		case "supportedVersions":
			if !val.IsArray() {
				err = errors.New("facts.supportedVersions must be an array of strings")
			}
			for _, s := range val.Array() {
				f.Supported = append(f.Supported, s.Str)
			}
		case "declinedVersions":
			if !val.IsArray() {
				err = errors.New("facts.declinedVersions must be an array of strings")
			}
			for _, s := range val.Array() {
				f.Declined = append(f.Declined, s.Str)
			}
		case "capabilities":
			if !val.IsObject() {
				err = errors.New("facts.capabilities must be an object")
			}
			f.Capabilities = json.RawMessage(val.Raw)
		case "clientCapabilities":
			if !val.IsObject() {
				err = errors.New("facts.clientCapabilities must be an object")
			}
			f.ClientCapabilities = json.RawMessage(val.Raw)
		case "tools":
			if !val.IsArray() {
				err = errors.New("facts.tools must be an array of tool objects")
			}
			for _, t := range val.Array() {
				if tl, ok := NewTool([]byte(t.Raw)); ok {
					f.Tools = AddTool(f.Tools, tl)
				}
			}
		case "toolsListed":
			f.ToolsListed = val.Type == gjson.True
		case "toolOrder":
			f.ToolOrder = stringList(val)
		case "sessions":
			for _, sid := range stringList(val) {
				f.issued = remember(f.issued, sid)
			}
		case "endedSessions":
			for _, sid := range stringList(val) {
				f.ended = remember(f.ended, sid)
			}
		case "bySession":
			f.bySession, err = parseNegotiations(val)
		case "pages":
			for _, pg := range val.Array() {
				if m, c := pg.Get("method"), pg.Get("cursor"); m.Type == gjson.String && c.Type == gjson.String {
					f.pages = append(f.pages, page{Method: m.Str, Cursor: c.Str, Session: pg.Get("session").Str, Listing: Listing{
						Scope: pg.Get("cacheScope").Str, Cursors: stringList(pg.Get("cursors")), Names: stringList(pg.Get("names"))}})
				}
			}
		case "prompts":
			for _, p := range val.Array() {
				if n := p.Get("name"); n.Type == gjson.String {
					f.Prompts = append(f.Prompts, Prompt{Name: n.Str, Args: stringList(p.Get("arguments")), Required: stringList(p.Get("required"))})
				}
			}
		case "promptsListed":
			f.PromptsListed = val.Type == gjson.True
		case "resources":
			f.Resources = stringList(val)
		case "resourcesListed":
			f.ResourcesListed = val.Type == gjson.True
		case "resourceTemplates":
			f.Templates = stringList(val)
		case "resourceTemplatesListed":
			f.TemplatesListed = val.Type == gjson.True
		case "session":
			f.Session = val.Type == gjson.True
		case "local":
			f.Local = val.Type == gjson.True
		case "spoken":
			f.Spoken = val.Str
		}
		return err == nil
	})
	return f, err
}

// factKinds are the JSON types a facts line's members hold; a member of
// another type is an error, never read as absent or false: a "local"
// of "true" read as not local would change a verdict's level without a
// word (review rev29).
var factKinds = map[string]string{
	"toolsListed": "bool", "promptsListed": "bool", "resourcesListed": "bool", "resourceTemplatesListed": "bool",
	"session": "bool", "local": "bool",
	"negotiated": "string", "spoken": "string",
	"supportedVersions": "strings", "declinedVersions": "strings", "toolOrder": "strings",
	"sessions": "strings", "endedSessions": "strings", "resources": "strings", "resourceTemplates": "strings",
	"tools": "objects", "prompts": "objects", "pages": "objects", "bySession": "objects",
}

// factTyped checks a facts member's JSON type (factKinds).
func factTyped(key string, val gjson.Result) error {
	switch kind := factKinds[key]; kind {
	case "bool":
		if val.Type != gjson.True && val.Type != gjson.False {
			return fmt.Errorf("facts.%s is %s, want true or false", key, envelope.Kind(val))
		}
	case "string":
		switch {
		case val.Type != gjson.String:
			return fmt.Errorf("facts.%s is %s, want a string", key, envelope.Kind(val))
		case key == "spoken" && val.Str != envelope.V20250326 && val.Str != "":
			// (Spoken names only a version judged by another's rules.)
			return fmt.Errorf("facts.spoken is no version judged by another's rules, want %q", envelope.V20250326)
		}
	case "strings", "objects":
		if !val.IsArray() || slices.ContainsFunc(val.Array(), func(e gjson.Result) bool {
			return kind == "strings" && e.Type != gjson.String || kind == "objects" && !e.IsObject()
		}) {
			return fmt.Errorf("facts.%s must be an array of %s", key, kind)
		}
	}
	return nil
}

// parseNegotiations reads a facts line's bySession.
func parseNegotiations(val gjson.Result) ([]negotiation, error) {
	if !val.IsArray() {
		return nil, errors.New("facts.bySession must be an array of objects")
	}
	var out []negotiation
	for i, s := range val.Array() {
		sid, v := s.Get("session"), s.Get("protocolVersion").Str
		switch {
		case !s.IsObject() || sid.Type != gjson.String:
			return nil, fmt.Errorf("facts.bySession[%d] must be an object with a string session", i)
		case v != "" && !envelope.KnownVersion(v):
			return nil, fmt.Errorf("facts.bySession[%d].protocolVersion is %s, want one of %v", i, s.Get("protocolVersion").Raw, envelope.Versions())
		}
		n := negotiation{Session: sid.Str, Version: v, Negotiated: s.Get("negotiated").Str, Spoken: s.Get("spoken").Str}
		for _, c := range []struct {
			name string
			dst  *json.RawMessage
		}{{"capabilities", &n.Capabilities}, {"clientCapabilities", &n.ClientCaps}} {
			switch m := s.Get(c.name); {
			case m.IsObject():
				*c.dst = json.RawMessage(m.Raw)
			case m.Exists():
				return nil, fmt.Errorf("facts.bySession[%d].%s must be an object", i, c.name)
			}
		}
		out = append(out, n)
	}
	if len(out) > maxSessions {
		out = out[len(out)-maxSessions:]
	}
	return out, nil
}

// holdsNone is f with what it shows of the server's undeclared
// capabilities made explicit: a server that did not declare tools,
// prompts or resources has none of them, so a name the request gives of
// such a kind is one it does not have (a list it never answered is
// empty).
func (f *Facts) holdsNone() *Facts {
	if f == nil {
		return f
	}
	n := *f
	for _, c := range []string{"tools", "prompts", "resources"} {
		if declared, known := f.Declares(c); !known || declared {
			continue
		}
		switch c {
		case "tools":
			n.Tools, n.ToolsListed, n.ToolOrder, n.toolsVary = nil, true, nil, false
		case "prompts":
			n.Prompts, n.PromptsListed = nil, true
		case "resources":
			n.Resources, n.ResourcesListed, n.Templates, n.TemplatesListed = nil, true, nil, true
		}
	}
	return &n
}

// Forget drops the list a list-changed notification from the server
// says is stale: tools, prompts, or resources and templates. Until the
// next full listing, a name missing from it is no longer known to be
// unknown, and a schema no longer binds a call. f itself is unchanged.
func (f *Facts) Forget(notification string) *Facts {
	if f == nil {
		return f
	}
	n := *f
	// The pages of a changed list before the change no longer judge the
	// pages after it: a tool an insertion moved onto the next page is
	// listed once at every moment (review rev27).
	changed := false
	forgetPages := func(methods ...string) {
		if slices.ContainsFunc(f.pages, func(p page) bool { return slices.Contains(methods, p.Method) }) {
			n.pages = slices.DeleteFunc(slices.Clone(f.pages), func(p page) bool { return slices.Contains(methods, p.Method) })
			changed = true
		}
	}
	switch notification {
	case "notifications/tools/list_changed":
		forgetPages("tools/list")
		if !f.ToolsListed && f.Tools == nil && !changed {
			return f
		}
		n.Tools, n.ToolsListed, n.ToolOrder = nil, false, nil
	case "notifications/prompts/list_changed":
		forgetPages("prompts/list")
		if !f.PromptsListed && f.Prompts == nil && !changed {
			return f
		}
		n.Prompts, n.PromptsListed = nil, false
	case "notifications/resources/list_changed":
		forgetPages("resources/list", "resources/templates/list")
		if !f.ResourcesListed && !f.TemplatesListed && f.Resources == nil && f.Templates == nil && !changed {
			return f
		}
		n.Resources, n.ResourcesListed, n.Templates, n.TemplatesListed = nil, false, nil, false
	default:
		return f
	}
	return &n
}

// Learn returns the facts an observed exchange adds to f (nil: none yet):
// what a server declares in answering initialize (its version and
// capabilities, the capabilities the client declared, and whether it
// issued a session), server/discover
// (its versions and capabilities) or a tools/list that needs no further
// page (its tools, listed in full); and what it unlearns: a list the
// reply's own list_changed notifications say changed. Facts are never
// changed: a learned fact makes a new value; nothing learned returns f
// itself.
func (f *Facts) Learn(ex *envelope.Exchange) *Facts {
	if ex == nil || ex.Response == nil || ex.Failure != "" {
		return f
	}
	f = f.forgetChanged(ex.Response)
	if ex.Transport == envelope.HTTP && ex.Request.HTTPMethod() == "DELETE" && ex.Response.Status/100 == 2 {
		if sid := envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id"); sid != "" && f != nil && slices.Contains(f.issued, sid) {
			n := *f
			n.ended = remember(n.ended, sid)
			return &n
		}
		return f
	}
	body := ex.Request.Body
	if !bytes.ContainsAny(body, `\`) && !bytes.Contains(body, []byte("initialize")) &&
		!bytes.Contains(body, []byte("server/discover")) && !bytes.Contains(body, []byte("list")) {
		return f // no method that teaches anything (none spelled with escapes): spared even the read of its name
	}
	method := gjson.GetBytes(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), "method").Str // a byte order mark, as Parse drops it
	if method != "initialize" && method != "server/discover" && listMembers[method] == "" {
		return f // most exchanges teach nothing: spared a full parse
	}
	req := envelope.Parse(ex.Request.Body)
	rep := envelope.ReadReply(ex.Response, envelope.ReadOptions{IDs: []gjson.Result{req.Get("id")}, Batches: ReadsBatches(f, method, req.IsArray())})
	if !rep.Has() {
		return f
	}
	res := rep.Response.Get("result")
	if !res.IsObject() {
		return f
	}
	n := &Facts{}
	if f != nil {
		*n = *f // the slices are shared, never written: a learned fact replaces them
	}
	switch method {
	case "initialize":
		v := res.Get("protocolVersion").Str
		if asked := req.Get("params.protocolVersion").Str; asked != "" && v != "" && v != asked && !slices.Contains(n.Declined, asked) {
			n.Declined = append(slices.Clone(n.Declined), asked)
		}
		n.Spoken = ""
		switch {
		case v == envelope.V20250326:
			// Judged under 2025-06-18's rules where 2025-03-26 does not
			// differ (digest §1a), as a live run judges such a server.
			n.Version, n.Spoken = envelope.V20250618, v
			n.Negotiated = "initialize answered " + v + "; judged under 2025-06-18's rules where 2025-03-26 does not differ"
		case !envelope.KnownVersion(v) || v == envelope.V20260728:
			// (2026-07-28 has no initialize: an answer naming it sets
			// no session version, PRO1007 fails it.)
			return f
		default:
			n.Version, n.Negotiated = v, "initialize answered "+v
		}
		if !slices.Contains(n.Supported, v) {
			n.Supported = append(slices.Clone(n.Supported), v)
		}
		var caps json.RawMessage // this answer's own, for its session
		if c := res.Get("capabilities"); c.IsObject() {
			caps = json.RawMessage(c.Raw)
			n.Capabilities = caps
		}
		var own json.RawMessage
		if c := req.Get("params.capabilities"); c.IsObject() {
			own = json.RawMessage(c.Raw)
			switch {
			case n.clientsDiffer:
			case n.ClientCapabilities != nil && !envelope.SameText(n.ClientCapabilities, []byte(c.Raw)):
				n.ClientCapabilities, n.clientsDiffer = nil, true
			default:
				n.ClientCapabilities = json.RawMessage(c.Raw)
			}
		}
		sid := envelope.HeaderGet(ex.Response.Header, "Mcp-Session-Id")
		n.Session = ex.Transport == envelope.HTTP && sid != ""
		if n.Session {
			n.issued = remember(n.issued, sid)
			n.negotiated(sid, caps, own)
		}
	case "server/discover":
		n.Supported = nil
		for _, s := range res.Get("supportedVersions").Array() {
			n.Supported = append(n.Supported, s.Str)
		}
		if slices.Contains(n.Supported, envelope.V20260728) {
			n.Version, n.Negotiated, n.Spoken = envelope.V20260728, "server/discover lists "+envelope.V20260728, ""
		}
		if c := res.Get("capabilities"); c.IsObject() {
			n.Capabilities = json.RawMessage(c.Raw)
		}
	default:
		// Only a whole list, asked from its start, says what exists.
		key := listMembers[method]
		items := res.Get(key)
		if !items.IsArray() {
			return f
		}
		paged := n.learnPage(method, envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id"), req, res)
		if req.Get("params.cursor").Exists() || res.Get("nextCursor").Exists() {
			// A page: the tools it lists exist, with their schemas (which
			// judge calls of them: arguments, Mcp-Param headers, output),
			// though a tool it lacks may be on another page.
			if n.pageNews(key, items) {
				// A whole list known before, and a page of a listing
				// that shows what it lacked: the list changed (a server
				// that declares no listChanged says nothing of it), so the
				// old one no longer says what does not exist, and what the
				// page shows exists (review rev40).
				n.unwhole(key, items)
				return n
			}
			if key != "tools" || n.ToolsListed {
				if paged {
					return n // (only the page it leads to learned)
				}
				return f
			}
			n.learnToolPage(items)
			return n
		}
		n.learnList(key, items, envelope.HeaderGet(ex.Request.Header, "Mcp-Session-Id"))
	}
	return n
}

// pageNews: a whole list of key is known, and the page items shows an
// entry it lacks, or a tool listed otherwise.
func (n *Facts) pageNews(key string, items gjson.Result) bool {
	news := false
	items.ForEach(func(_, it gjson.Result) bool {
		switch key {
		case "tools":
			t := n.Tool(it.Get("name").Str)
			news = n.ToolsListed && it.Get("name").Type == gjson.String && (t == nil || !envelope.SameText(t.Raw, []byte(it.Raw)) && len(t.Again) == 0)
		case "prompts":
			name := it.Get("name")
			news = n.PromptsListed && name.Type == gjson.String && !slices.ContainsFunc(n.Prompts, func(p Prompt) bool { return p.Name == name.Str })
		case "resources":
			u := it.Get("uri")
			news = n.ResourcesListed && u.Type == gjson.String && !slices.Contains(n.Resources, u.Str)
		case "resourceTemplates":
			u := it.Get("uriTemplate")
			news = n.TemplatesListed && u.Type == gjson.String && !slices.Contains(n.Templates, u.Str)
		}
		return !news
	})
	return news
}

// unwhole takes in a page of key that shows what the whole list known
// lacked (pageNews): the list is no longer known whole, and the page's
// entries exist.
func (n *Facts) unwhole(key string, items gjson.Result) {
	switch key {
	case "tools":
		n.ToolsListed = false
		n.learnToolPage(items)
	case "prompts":
		n.PromptsListed, n.Prompts = false, slices.Clone(n.Prompts)
		for _, it := range items.Array() {
			if p, ok := NewPrompt([]byte(it.Raw)); ok && !slices.ContainsFunc(n.Prompts, func(o Prompt) bool { return o.Name == p.Name }) {
				n.Prompts = append(n.Prompts, p)
			}
		}
	case "resources":
		n.ResourcesListed, n.Resources = false, slices.Clone(n.Resources)
		for _, it := range items.Array() {
			if u := it.Get("uri"); u.Type == gjson.String && !slices.Contains(n.Resources, u.Str) {
				n.Resources = append(n.Resources, u.Str)
			}
		}
	case "resourceTemplates":
		n.TemplatesListed, n.Templates = false, slices.Clone(n.Templates)
		for _, it := range items.Array() {
			if u := it.Get("uriTemplate"); u.Type == gjson.String && !slices.Contains(n.Templates, u.Str) {
				n.Templates = append(n.Templates, u.Str)
			}
		}
	}
}

// listMembers maps the list methods that teach what exists to the result
// member holding the list.
var listMembers = map[string]string{"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"}

// forgetChanged applies the list-change notifications a reply carries
// beside its response (Forget): a list the server says changed no longer
// says what exists, and a tool judged by its old schema would be judged
// wrong. Most replies carry none, and are not read for them.
func (f *Facts) forgetChanged(resp *envelope.Response) *Facts {
	mark := []byte("list_changed")
	found := bytes.Contains(resp.Body, mark)
	for _, m := range resp.Messages {
		found = found || bytes.Contains(m, mark)
	}
	if !found {
		return f
	}
	for _, m := range envelope.ReadReply(resp, envelope.ReadOptions{Batches: ReadsBatches(f, "", false)}).Messages {
		if method := m.Get("method").Str; strings.HasSuffix(method, "/list_changed") && !m.Get("id").Exists() {
			f = f.Forget(method)
		}
	}
	return f
}

// learnToolPage adds the tools of one page of a list to those known,
// the page's listing of a name winning; the list stays unknown as a
// whole, so no tool is unknown for its absence.
func (n *Facts) learnToolPage(items gjson.Result) {
	tools := slices.Clone(n.Tools)
	paged := map[string]bool{}
	for _, t := range items.Array() {
		tl, ok := NewTool([]byte(t.Raw))
		if !ok {
			continue
		}
		i, found := slices.BinarySearchFunc(tools, tl.Name, func(o *Tool, name string) int { return strings.Compare(o.Name, name) })
		switch {
		case found && paged[tl.Name]:
			// Listed twice in this listing (see AddTool).
			tools[i] = AddTool([]*Tool{tools[i]}, tl)[0]
		case found:
			tl.shareCompiled(tools[i])
			tools[i] = tl
		default:
			tools = slices.Insert(tools, i, tl)
		}
		paged[tl.Name] = true
	}
	n.Tools, n.ToolOrder = tools, nil
	for _, t := range tools {
		n.ToolOrder = append(n.ToolOrder, t.Name)
	}
}

// learnList takes in a whole list of what the server offers.
func (n *Facts) learnList(key string, items gjson.Result, session string) {
	switch key {
	case "tools":
		old, oldListed := n.Tools, n.ToolsListed
		n.Tools, n.ToolOrder, n.ToolsListed = nil, nil, true
		for _, t := range items.Array() {
			if tl, ok := NewTool([]byte(t.Raw)); ok {
				if i, found := slices.BinarySearchFunc(old, tl.Name, func(o *Tool, name string) int { return strings.Compare(o.Name, name) }); found {
					tl.shareCompiled(old[i])
				}
				// (A name listed twice in one list is one tool: AddTool.)
				was := len(n.Tools)
				if n.Tools = AddTool(n.Tools, tl); len(n.Tools) > was {
					n.ToolOrder = append(n.ToolOrder, tl.Name)
				}
			}
		}
		slices.SortStableFunc(n.Tools, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
		if n.toolsVary || oldListed && session != n.toolsSession && !sameTools(old, n.Tools) {
			// Another session's list differs: keep both lists' tools, and
			// claim neither is whole. A name both list, differently, is
			// either session's listing (AddTool): a schema that shapes
			// itself to a client's capabilities binds only its session
			// (review rev40).
			for _, t := range old {
				if i, found := slices.BinarySearchFunc(n.Tools, t.Name, func(o *Tool, name string) int { return strings.Compare(o.Name, name) }); !found {
					n.Tools = append(n.Tools, t)
				} else {
					n.Tools[i] = AddTool([]*Tool{n.Tools[i]}, t)[0]
				}
			}
			slices.SortStableFunc(n.Tools, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
			n.ToolOrder, n.ToolsListed, n.toolsVary = nil, false, true
			for _, t := range n.Tools {
				n.ToolOrder = append(n.ToolOrder, t.Name)
			}
		}
		n.toolsSession = session
	case "prompts":
		n.Prompts, n.PromptsListed = nil, true
		for _, p := range items.Array() {
			if pr, ok := NewPrompt([]byte(p.Raw)); ok {
				n.Prompts = append(n.Prompts, pr)
			}
		}
	case "resources":
		n.Resources, n.ResourcesListed = nil, true
		for _, r := range items.Array() {
			if u := r.Get("uri"); u.Type == gjson.String {
				n.Resources = append(n.Resources, u.Str)
			}
		}
	case "resourceTemplates":
		n.Templates, n.TemplatesListed = nil, true
		for _, t := range items.Array() {
			if u := t.Get("uriTemplate"); u.Type == gjson.String {
				n.Templates = append(n.Templates, u.Str)
			}
		}
	}
}

// sameTools: a and b (sorted by name) list the same tools alike.
func sameTools(a, b []*Tool) bool {
	return slices.EqualFunc(a, b, func(x, y *Tool) bool {
		return x.Name == y.Name && envelope.SameText(x.Raw, y.Raw) && slices.EqualFunc(x.Again, y.Again, func(r, s json.RawMessage) bool { return envelope.SameText(r, s) })
	})
}

// stringList reads an array of strings, skipping other values.
func stringList(v gjson.Result) []string {
	var out []string
	for _, x := range v.Array() {
		if x.Type == gjson.String {
			out = append(out, x.Str)
		}
	}
	return out
}

// A ParamArg is an argument of a call that the tool marks x-mcp-header:
// the header that mirrors it (T-HDR-4), where it stands, and its value.
type ParamArg struct {
	Header string   // the x-mcp-header name, without the Mcp-Param- prefix
	Path   []string // property names from params.arguments down
	Value  gjson.Result
}

// maxParamDepth bounds how deep ParamArgs follows properties: far beyond
// any real tool, shallow enough for a hostile schema.
const maxParamDepth = 32

// ParamArgs lists the arguments of a call to t that the tool's
// inputSchema marks x-mcp-header, reached from the root through
// properties alone (T-HDR-7), and that hold a value other than null:
// the Mcp-Param-* headers the call must carry (T-HDR-4). None when the
// tool has no inputSchema, or one whose declarations T-HDR-7 makes
// invalid: such a tool is dropped by a conforming client, and a header
// it declares may be one no client can send (review rev23).
func (t *Tool) ParamArgs(args gjson.Result) []ParamArg {
	if t != nil && len(t.listings) > 0 {
		// Listed more than once, differently (AddTool): a header is owed
		// where every listing owes it.
		var out []ParamArg
		for i, l := range t.listings {
			pa := l.ParamArgs(args)
			if i == 0 {
				out = pa
				continue
			}
			out = slices.DeleteFunc(out, func(a ParamArg) bool {
				return !slices.ContainsFunc(pa, func(b ParamArg) bool { return a.Header == b.Header && slices.Equal(a.Path, b.Path) })
			})
		}
		return out
	}
	if t == nil || t.Input == nil {
		return nil
	}
	in := gjson.ParseBytes(t.Input)
	if headersInvalid(in) {
		return nil
	}
	var out []ParamArg
	var walk func(s, v gjson.Result, path []string)
	walk = func(s, v gjson.Result, path []string) {
		if len(path) > maxParamDepth {
			return
		}
		s.Get("properties").ForEach(func(k, sub gjson.Result) bool {
			p := append(slices.Clip(path), k.Str)
			val := v.Get(envelope.JoinPath("", k.Str))
			if h := sub.Get("x-mcp-header"); h.Type == gjson.String && h.Str != "" && val.Exists() && val.Type != gjson.Null {
				out = append(out, ParamArg{Header: h.Str, Path: p, Value: val})
			}
			if sub.IsObject() && val.IsObject() {
				walk(sub, val, p)
			}
			return true
		})
	}
	walk(in, args, nil)
	return out
}
