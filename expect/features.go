package expect

import (
	"regexp"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// What the server declared beyond its tools, and what a request of the
// methods that name those things (prompts/get, resources/read,
// completion/complete) must get when it names something the server did
// not declare. A name the server did not list is not proof that it does
// not exist (a server may serve more than it lists), so refusing it is a
// SHOULD; what the spec fixes once it is refused (the code, no empty
// contents) keeps its own level.

// A Prompt is one entry of the server's prompts/list.
type Prompt struct {
	Name     string
	Required []string // the names of its required arguments
	Args     []string // the names of all its arguments
}

// Prompt is the prompt the server listed named name, nil when it listed
// none (or the facts are not known).
func (f *Facts) Prompt(name string) *Prompt { return f.prompt(name) }

// prompt finds a listed prompt; nil when the server did not list it.
func (f *Facts) prompt(name string) *Prompt {
	if f == nil {
		return nil
	}
	for i := range f.Prompts {
		if f.Prompts[i].Name == name {
			return &f.Prompts[i]
		}
	}
	return nil
}

// NewPrompt reads a prompt object of a prompts/list result; ok is false
// when it has no string name.
func NewPrompt(raw []byte) (Prompt, bool) {
	p := gjson.ParseBytes(raw)
	name := p.Get("name")
	if name.Type != gjson.String {
		return Prompt{}, false
	}
	out := Prompt{Name: name.Str}
	for _, a := range p.Get("arguments").Array() {
		n := a.Get("name")
		if n.Type != gjson.String {
			continue
		}
		out.Args = append(out.Args, n.Str)
		if a.Get("required").Type == gjson.True {
			out.Required = append(out.Required, n.Str)
		}
	}
	return out, true
}

// knownResource reports whether the server declared uri: listed it, or
// listed a template it matches. known is false when the lists are not
// complete (a URI outside them may still be one the server has).
func (f *Facts) knownResource(uri string) (declared, known bool) {
	if f == nil || !f.ResourcesListed || !f.TemplatesListed {
		return false, false
	}
	return f.declaresURI(uri), true
}

// declaresURI: the server listed the resource at uri, or a template of
// its own matches it.
func (f *Facts) declaresURI(uri string) bool {
	if f == nil {
		return false
	}
	if slices.Contains(f.Resources, uri) {
		return true
	}
	return slices.ContainsFunc(f.Templates, func(t string) bool { return templateRE(t).MatchString(uri) })
}

var templateExpr = regexp.MustCompile(`\{[^{}]*\}`)

// templateRE matches the URIs an RFC 6570 template can expand to, read
// generously: every expression matches any text, so a URI is called
// unknown only when no expansion of any template could give it.
func templateRE(t string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range templateExpr.FindAllStringIndex(t, -1) {
		b.WriteString(regexp.QuoteMeta(t[last:m[0]]))
		b.WriteString(".*")
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(t[last:]))
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile(".*")
	}
	return re
}

// getPrompt: prompts/get of a prompt the server did not list, or without
// a required argument, SHOULD get -32602 (T-PROMPT-1).
func (e *Expectation) getPrompt(req *envelope.Message) {
	name, args := req.Get("params.name"), req.Get("params.arguments")
	switch {
	case name.Type != gjson.String:
		e.invalidParams("params.name is "+envelope.Kind(name)+", not a string", should("T-PROMPT-1"))
		return
	case args.Exists() && !args.IsObject():
		e.invalidParams("params.arguments is "+envelope.Kind(args)+", not an object", should("T-PROMPT-1"))
		return
	}
	f := e.Facts
	p := f.prompt(name.Str)
	if p == nil {
		if f != nil && f.PromptsListed {
			e.Condition, e.Detail = CondUnknownName, "the server lists no prompt "+shortQuote(name.Str)
			e.Error, e.Codes, e.Code = should("T-PROMPT-1"), []int{envelope.CodeInvalidParams}, should("T-PROMPT-1")
			e.Quote = name.Str
		}
		return
	}
	for _, r := range p.Required {
		if !args.Get(envelope.JoinPath("", r)).Exists() {
			e.invalidParams("required prompt argument "+shortQuote(r)+" is missing", should("T-PROMPT-1"))
			e.Declared = true
			return
		}
	}
	e.ParamsSound = true
}

// readResource: resources/read of a URI the server neither listed nor
// matches with a template. The server may still have it, so from the
// request and the facts alone nothing says it must refuse, nor which
// code a refusal names (an internal failure on a real resource is
// -32603): -32602 in 2026-07-28 and -32002 before are what a missing
// resource gets, and only a SHOULD here. A fixture that made the URI up
// knows the resource does not exist (expect-missing, missingResource).
func (e *Expectation) readResource(req *envelope.Message) {
	uri := req.Get("params.uri")
	if uri.Type != gjson.String {
		e.invalidParams("params.uri is "+envelope.Kind(uri)+", not a string", should("T-RES-1"))
		return
	}
	declared, known := e.Facts.knownResource(uri.Str)
	if !known || declared {
		e.ParamsSound = declared || e.Facts != nil && slices.Contains(e.Facts.Resources, uri.Str)
		return
	}
	e.unknownResource(uri.Str)
	if e.Version == envelope.V20260728 {
		e.Codes, e.Code = []int{envelope.CodeInvalidParams}, should("T-RES-1: the server may have a resource it does not list")
		return
	}
	e.Codes, e.Code = []int{envelope.CodeResourceNotFound}, should("T-ERR-6, T-RES-1")
}

func (e *Expectation) unknownResource(uri string) {
	e.Condition, e.Detail = CondUnknownName, "the server lists no resource or template for "+shortQuote(uri)
	e.Quote = uri
}

// missingResource: a resources/read of a URI the fixture made up gets
// what a missing resource gets, whatever the lists showed (they may not
// have been read): a refusal, -32602 and never empty contents in
// 2026-07-28 (T-RES-1, T-RES-2, MUSTs), -32002 before (T-RES-1, T-ERR-6,
// SHOULDs). A server that did not declare resources keeps -32601. One
// whose lists declare the URI after all (a template of its own matches
// it: a catch-all of a server that fetches any URI) may serve it: the
// URI is no longer made up to it, and it is judged as any declared one.
func (e *Expectation) missingResource() {
	uri := e.Request.Get("params.uri")
	if e.Method != "resources/read" || uri.Type != gjson.String || (e.Condition != CondCall && e.Condition != CondUnknownName) {
		return
	}
	if e.Facts.declaresURI(uri.Str) {
		if e.Version == envelope.V20260728 && !slices.Contains(e.Facts.Resources, uri.Str) {
			// Only a template matches it (a catch-all): the server may
			// fetch any URI, but empty contents for one the checker made
			// up are what a missing resource never gets, so they warn
			// (review rev76).
			e.EmptyContents = open("T-RES-2: the URI, made up by the checker, matches only a template the server listed, so it may exist to the server; a missing resource is an error, never empty contents")
		}
		return
	}
	e.unknownResource(uri.Str)
	if _, known := e.Facts.Declares("resources"); !known {
		// Without the server's capabilities, -32601 may be the answer
		// of a server without resources, which has no resources/read.
		e.ReadCodes = append(e.ReadCodes, envelope.CodeMethodNotFound)
		if e.Version == envelope.V20260728 {
			e.ReadStatus = append(e.ReadStatus, 404) // T-HTTP-9
		}
	}
	made := "T-RES-1: the URI was made up by the checker"
	if e.Version == envelope.V20260728 {
		e.Error, e.Codes, e.Code, e.EmptyContents = must(made), []int{envelope.CodeInvalidParams}, must("T-RES-1"), must("T-RES-2")
		return
	}
	e.Error, e.Codes, e.Code = should(made), []int{envelope.CodeResourceNotFound}, should("T-ERR-6, T-RES-1")
}

// complete: completion/complete with a malformed reference, or one to a
// prompt or resource template the server did not list, SHOULD get -32602
// (T-COMP-2).
func (e *Expectation) complete(req *envelope.Message) {
	ref, arg := req.Get("params.ref"), req.Get("params.argument")
	switch {
	case !ref.IsObject():
		e.invalidParams("params.ref is "+envelope.Kind(ref)+", not an object", should("T-COMP-2"))
		return
	case !arg.IsObject() || arg.Get("name").Type != gjson.String:
		e.invalidParams("params.argument is not an object with a string name", should("T-COMP-2"))
		return
	}
	f := e.Facts
	switch t := ref.Get("type").Str; t {
	case "ref/prompt":
		name := ref.Get("name")
		if name.Type == gjson.String && f != nil && f.PromptsListed && f.prompt(name.Str) == nil {
			e.invalidParams("the reference names no prompt the server lists: "+shortQuote(name.Str), should("T-COMP-2"))
			e.Quote, e.Declared = name.Str, true
		}
	case "ref/resource":
		uri := ref.Get("uri")
		// The reference names "the URI or URI template of the resource":
		// a template as listed, or a URI the server listed or one of its
		// templates expands to.
		if uri.Type == gjson.String && f != nil && f.TemplatesListed && f.ResourcesListed &&
			!slices.Contains(f.Templates, uri.Str) && !f.declaresURI(uri.Str) {
			e.invalidParams("the reference names no resource or template the server lists: "+shortQuote(uri.Str), should("T-COMP-2"))
			e.Quote, e.Declared = uri.Str, true
		}
	default:
		e.invalidParams("params.ref.type "+shortQuote(t)+" is not ref/prompt or ref/resource", should("T-COMP-2"))
	}
}

// session applies a fixture's knowledge of the 2025-xx session it sent
// (its own live one, none, or an id the server never issued) to what the
// facts say of the server: only a server that issued a session id relies
// on it. Where the facts do not say (lint of traffic recorded
// elsewhere), the session's refusal is allowed beside what a server
// without sessions owes.
func (e *Expectation) session(kind string) {
	issued, known := e.Facts.Sessions()
	if e.Version == envelope.V20260728 || e.HTTPMethod == "" || known && !issued {
		return
	}
	if !known {
		if kind == "live" {
			return // nothing to take away: no session rule was added
		}
		own := e.Status
		defer func() { e.Status = union(own, e.Status) }()
	}
	switch kind {
	case "live":
		// The checker's own session, open: no session rule excuses a
		// status.
		if e.Condition == CondHTTPMethod {
			e.Status = slices.DeleteFunc(e.Status, func(st int) bool { return st == 400 || st == 404 })
		}
	case "none":
		// T-SESS-2 binds a server that requires sessions, and issuing an
		// id does not say it requires one (T-SESS-1: it MAY issue one):
		// serving the request shows it does not, which is right. A
		// refusal is the required session's: 400, before the body
		// matters, so the id may be missing (DESIGN, transport-level
		// rejections), which RPC1004 reads off the status and the code.
		e.Condition, e.Detail = CondSession, "a request without the Mcp-Session-Id the server issued"
		e.Error, e.Codes, e.Code, e.AnyCode = Want{}, nil, Want{}, true
		e.Status, e.StatusWant = []int{400}, should("T-SESS-2")
	case "unknown":
		// T-SESS-3 fixes 404 only for ended sessions; for an id never
		// issued 404 is common and 400 seen (AMB-8).
		amb := "AMB-8: the reply to a session id never issued is not fixed"
		e.Condition, e.Detail = CondSession, "a request with a session id the server never issued"
		e.Error, e.Codes, e.Code, e.AnyCode = open(amb), nil, Want{}, true
		e.Status, e.StatusWant = []int{404, 400}, open(amb)
	}
}

// initialize: an initialize whose params lack what the handshake needs
// (a string protocolVersion, a capabilities object, a clientInfo object)
// cannot be served as asked. A lenient server may fill in defaults, so
// refusing is a SHOULD (T-LIFE-1); once it refuses, the code of invalid
// params is fixed (T-ERR-4), -32600 defensible.
func (e *Expectation) initialize(req *envelope.Message) {
	if e.Version == envelope.V20260728 {
		return
	}
	var missing []string
	if req.Get("params.protocolVersion").Type != gjson.String {
		missing = append(missing, "protocolVersion")
	}
	if !req.Get("params.capabilities").IsObject() {
		missing = append(missing, "capabilities")
	}
	if !req.Get("params.clientInfo").IsObject() {
		missing = append(missing, "clientInfo")
	}
	if len(missing) == 0 {
		return
	}
	e.Condition, e.Detail = CondInvalidParams, "initialize params lack "+strings.Join(missing, ", ")
	e.Error = should("T-LIFE-1: initialize needs protocolVersion, capabilities and clientInfo")
	e.Codes, e.Code = []int{envelope.CodeInvalidParams}, must("T-ERR-4")
	e.also("-32600: params that make no initialize make an invalid request", envelope.CodeInvalidRequest)
}
