package refserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// The server's features besides its tools: prompts, resources with a
// template, argument completion, logging (2025-xx) and, in 2026-07-28,
// subscriptions/listen. Each exists so that the checker's fixtures for
// the method's rules have something to probe; each keeps the contract.

// capabilities is what the server declares in each era. 2026-07-28 has
// no logging/setLevel (a per-request logLevel instead) and list-change
// notifications only through subscriptions/listen.
func (s *Server) capabilities(version string) map[string]any {
	c := map[string]any{
		"tools":       map[string]any{},
		"prompts":     map[string]any{},
		"resources":   map[string]any{},
		"completions": map[string]any{},
	}
	if version == version2026 {
		c["tools"] = map[string]any{"listChanged": true}
	} else {
		c["logging"] = map[string]any{}
	}
	return c
}

// A promptDef is one prompt the server offers.
type promptDef struct {
	name, title, description string
	args                     []promptArg
}

type promptArg struct {
	name, description string
	required          bool
	values            []string // what completion/complete offers
}

func prompts() []promptDef {
	return []promptDef{
		{name: "greet", title: "Greet someone", description: "Asks for a greeting.", args: []promptArg{
			{name: "name", description: "who to greet", required: true, values: []string{"Ada", "Alan", "Grace"}},
			{name: "style", description: "formal or casual", values: []string{"casual", "formal"}},
		}},
		{name: "summary", title: "Summarise the server", description: "Asks for a summary of what the server offers."},
	}
}

func findPrompt(name string) (promptDef, bool) {
	for _, p := range prompts() {
		if p.name == name {
			return p, true
		}
	}
	return promptDef{}, false
}

// Resources: two listed ones and a template of numbered notes.
const (
	resourceReadme   = "mem://wymcp/readme.txt"
	resourcePixel    = "mem://wymcp/pixel.png"
	templateNote     = "mem://wymcp/notes/{id}"
	templateNoteHead = "mem://wymcp/notes/"
	// pixelPNG is a 1×1 transparent PNG.
	pixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

func resources() []any {
	return []any{
		map[string]any{"uri": resourceReadme, "name": "readme", "title": "Read me", "mimeType": "text/plain"},
		map[string]any{"uri": resourcePixel, "name": "pixel", "title": "A pixel", "mimeType": "image/png"},
	}
}

// listPage answers a list method of one page: a cursor can only be one
// the server never issued (T-PAGE-1), unless the cursor-ignored fault
// serves it as the first page.
func (s *Server) listPage(m *message, version, key string, items []any) reply {
	if c := member(m.params, "cursor"); c.Exists() && s.fault != faultCursorIgnored {
		return s.fail(m, &rpcError{code: codeInvalidParams, message: "invalid cursor", status: http.StatusOK})
	}
	r := map[string]any{key: items}
	if version == version2026 {
		r["ttlMs"] = 300000
		r["cacheScope"] = "public"
	}
	return s.ok(m, s.finish(version, r))
}

func (s *Server) listPrompts(m *message, version string) reply {
	var items []any
	for _, p := range prompts() {
		it := map[string]any{"name": p.name, "title": p.title, "description": p.description}
		if len(p.args) > 0 {
			var args []any
			for _, a := range p.args {
				args = append(args, map[string]any{"name": a.name, "description": a.description, "required": a.required})
			}
			it["arguments"] = args
		}
		items = append(items, it)
	}
	return s.listPage(m, version, "prompts", items)
}

// getPrompt serves prompts/get: an unknown name or a missing required
// argument is -32602 (T-PROMPT-1).
func (s *Server) getPrompt(m *message, version string) reply {
	name := member(m.params, "name")
	ps := nameProblems(m.params, name)
	args := member(m.params, "arguments")
	if args.Exists() {
		if !args.IsObject() {
			ps = append(ps, problem{"/params/arguments", "must be an object"})
		}
		args.ForEach(func(k, v gjson.Result) bool {
			if v.Type != gjson.String {
				ps = append(ps, problem{"/params/arguments/" + pointerToken(k.Str), "must be a string"})
			}
			return true
		})
	}
	if len(ps) > 0 {
		return s.fail(m, s.invalidParams("invalid prompts/get params", ps, http.StatusOK))
	}
	p, ok := findPrompt(name.Str)
	if !ok {
		if s.fault == faultPromptUnknownServed {
			return s.ok(m, s.finish(version, map[string]any{"messages": []any{}}))
		}
		return s.fail(m, &rpcError{code: codeInvalidParams, message: `unknown prompt "` + s.quote(name.Str) + `"`, status: http.StatusOK})
	}
	for _, a := range p.args {
		if a.required && !member(args, a.name).Exists() {
			ps = append(ps, problem{"/params/arguments", `missing property "` + a.name + `"`})
		}
	}
	if len(ps) > 0 {
		return s.fail(m, s.invalidParams("invalid prompt arguments", ps, http.StatusOK))
	}
	text := "Summarise what this server offers."
	if p.name == "greet" {
		text = "Write a greeting."
	}
	return s.ok(m, s.finish(version, map[string]any{
		"description": p.description,
		"messages":    []any{map[string]any{"role": "user", "content": textContent(text)}},
	}))
}

func (s *Server) listResources(m *message, version string) reply {
	return s.listPage(m, version, "resources", resources())
}

func (s *Server) listTemplates(m *message, version string) reply {
	return s.listPage(m, version, "resourceTemplates", []any{
		map[string]any{"uriTemplate": templateNote, "name": "note", "title": "A numbered note", "mimeType": "text/plain"},
	})
}

// noteID reads the id of a note URI: one to nine digits.
func noteID(uri string) (string, bool) {
	id, ok := strings.CutPrefix(uri, templateNoteHead)
	if !ok || id == "" || len(id) > 9 || strings.Trim(id, "0123456789") != "" {
		return "", false
	}
	return id, true
}

// readResource serves resources/read. A URI the server does not have is
// -32602 in 2026-07-28 (T-RES-1, a MUST) and -32002 before (a SHOULD);
// never an empty contents list (T-RES-2).
func (s *Server) readResource(m *message, version string) reply {
	uri := member(m.params, "uri")
	var ps []problem
	switch {
	case !m.params.Exists():
		ps = append(ps, problem{"", `missing property "params"`})
	case !uri.Exists():
		ps = append(ps, problem{"/params", `missing property "uri"`})
	case uri.Type != gjson.String:
		ps = append(ps, problem{"/params/uri", "must be a string"})
	}
	if len(ps) > 0 {
		return s.fail(m, s.invalidParams("invalid resources/read params", ps, http.StatusOK))
	}
	var content map[string]any
	switch u := uri.Str; {
	case u == resourceReadme:
		content = map[string]any{"uri": u, "mimeType": "text/plain", "text": "The wymcp reference server."}
	case u == resourcePixel:
		content = map[string]any{"uri": u, "mimeType": "image/png", "blob": pixelPNG}
	default:
		if id, ok := noteID(u); ok {
			content = map[string]any{"uri": u, "mimeType": "text/plain", "text": "note " + id}
		}
	}
	if content == nil {
		switch s.fault {
		case faultEmptyContents:
			return s.ok(m, s.cacheable(version, map[string]any{"contents": []any{}}))
		case faultResourceInternal:
			return s.fail(m, &rpcError{code: codeInternal, message: "resource lookup failed", status: http.StatusOK})
		}
		code := codeInvalidParams
		if version != version2026 {
			code = codeResourceNotFound
		}
		return s.fail(m, &rpcError{code: code, message: `resource "` + s.quote(uri.Str) + `" not found`, status: http.StatusOK})
	}
	return s.ok(m, s.cacheable(version, map[string]any{"contents": []any{content}}))
}

// cacheable adds the 2026-07-28 caching hints (T-CACHE-1) and the era's
// result members.
func (s *Server) cacheable(version string, r map[string]any) map[string]any {
	if version == version2026 {
		r["ttlMs"] = 60000
		r["cacheScope"] = "public"
	}
	return s.finish(version, r)
}

// complete serves completion/complete: a reference to an unknown prompt
// or template, or an argument it does not have, is -32602 (T-COMP-2);
// at most 100 values (T-COMP-1).
func (s *Server) complete(m *message, version string) reply {
	ref, arg := member(m.params, "ref"), member(m.params, "argument")
	var ps []problem
	switch {
	case !m.params.Exists():
		ps = append(ps, problem{"", `missing property "params"`})
	case !ref.Exists():
		ps = append(ps, problem{"/params", `missing property "ref"`})
	case !ref.IsObject():
		ps = append(ps, problem{"/params/ref", "must be an object"})
	}
	rt := member(ref, "type").Str
	if ref.IsObject() && rt != "ref/prompt" && rt != "ref/resource" {
		ps = append(ps, problem{"/params/ref/type", `must be "ref/prompt" or "ref/resource"`})
	}
	switch {
	case m.params.Exists() && !arg.Exists():
		ps = append(ps, problem{"/params", `missing property "argument"`})
	case arg.Exists() && !arg.IsObject():
		ps = append(ps, problem{"/params/argument", "must be an object"})
	case arg.Exists():
		if member(arg, "name").Type != gjson.String {
			ps = append(ps, problem{"/params/argument/name", "must be a string"})
		}
		if member(arg, "value").Type != gjson.String {
			ps = append(ps, problem{"/params/argument/value", "must be a string"})
		}
	}
	if len(ps) > 0 {
		return s.fail(m, s.invalidParams("invalid completion/complete params", ps, http.StatusOK))
	}
	name, prefix := member(arg, "name").Str, member(arg, "value").Str
	var values []string
	switch rt {
	case "ref/prompt":
		pn := member(ref, "name")
		p, ok := findPrompt(pn.Str)
		if pn.Type == gjson.String && !ok && s.fault == faultPromptUnknownServed {
			return s.ok(m, s.finish(version, map[string]any{"completion": map[string]any{"values": []string{}}}))
		}
		if pn.Type != gjson.String || !ok {
			return s.fail(m, &rpcError{code: codeInvalidParams, message: `unknown prompt "` + s.quote(pn.Str) + `"`, status: http.StatusOK})
		}
		i := slices.IndexFunc(p.args, func(a promptArg) bool { return a.name == name })
		if i < 0 {
			return s.fail(m, &rpcError{code: codeInvalidParams, message: `prompt has no argument "` + s.quote(name) + `"`, status: http.StatusOK})
		}
		values = p.args[i].values
	default:
		if u := member(ref, "uri"); u.Type != gjson.String || u.Str != templateNote {
			return s.fail(m, &rpcError{code: codeInvalidParams, message: `unknown resource template "` + s.quote(u.Str) + `"`, status: http.StatusOK})
		}
		if name != "id" {
			return s.fail(m, &rpcError{code: codeInvalidParams, message: `template has no variable "` + s.quote(name) + `"`, status: http.StatusOK})
		}
		values = []string{"1", "2", "3"}
	}
	if s.fault == faultCompletionNull {
		return reply{body: s.rawResult(m, "null"), status: http.StatusOK}
	}
	match := []string{}
	for _, v := range values {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(prefix)) {
			match = append(match, v)
		}
	}
	return s.ok(m, s.finish(version, map[string]any{
		"completion": map[string]any{"values": match, "total": len(match), "hasMore": false},
	}))
}

// rawResult is a response whose result is the given JSON text, for the
// faults that send what no Go value of a result would encode to.
func (s *Server) rawResult(m *message, result string) []byte {
	id := s.replyID(m)
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`)
}

// logLevels are the levels of the logging utility, least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func levelProblem() string { return "must be one of the eight log levels, debug to emergency" }

// setLevel serves logging/setLevel (2025-xx): an unknown level is -32602
// (T-LOG-1).
func (s *Server) setLevel(m *message, version string) reply {
	l := member(m.params, "level")
	if !l.Exists() || l.Type != gjson.String || (!slices.Contains(logLevels, l.Str) && s.fault != faultLogLevelAccepted) {
		loc := "/params/level"
		if !l.Exists() {
			return s.fail(m, s.invalidParams("invalid logging/setLevel params", []problem{{"/params", `missing property "level"`}}, http.StatusOK))
		}
		return s.fail(m, s.invalidParams("invalid log level", []problem{{loc, levelProblem()}}, http.StatusOK))
	}
	return s.ok(m, s.finish(version, map[string]any{}))
}

// metaLogLevel checks 2026-07-28's per-request log level (T-LOG-3).
func (s *Server) metaLogLevel(m *message) *rpcError {
	l := member(member(m.params, "_meta"), keyLogLevel)
	if !l.Exists() || (l.Type == gjson.String && slices.Contains(logLevels, l.Str)) || s.fault == faultLogLevelAccepted {
		return nil
	}
	// Not one of the required _meta fields (T-HTTP-10): an invalid param
	// of a valid request, 200 like the others.
	return s.invalidParams("invalid log level", []problem{{"/params/_meta/" + pointerToken(keyLogLevel), levelProblem()}}, http.StatusOK)
}

// listen opens a 2026-07-28 subscription: the acknowledgment names the
// subset of the requested notification types the server will send
// (T-SUB-1, T-SUB-2), tagged with the listen request's id (T-META-3). The
// stream then stays open until the client closes it or the server shuts
// down, when it ends with the closing result (T-SUB-4).
func (s *Server) listen(m *message, version string) reply {
	filter := member(m.params, "notifications")
	if !filter.IsObject() {
		p := problem{"/params", `missing property "notifications"`}
		if filter.Exists() {
			p = problem{"/params/notifications", "must be an object"}
		}
		return s.fail(m, s.invalidParams("invalid subscriptions/listen params", []problem{p}, http.StatusBadRequest))
	}
	honoured := map[string]any{}
	if member(filter, "toolsListChanged").Type == gjson.True {
		honoured["toolsListChanged"] = true
	}
	meta := map[string]any{keySubscriptionID: json.RawMessage(m.id)}
	if s.fault == faultAckWithoutID {
		meta = map[string]any{}
	}
	ack := encode(map[string]any{
		"jsonrpc": "2.0",
		"method":  "notifications/subscriptions/acknowledged",
		"params":  map[string]any{"notifications": honoured, "_meta": meta},
	})
	closing := s.resultBody(m, map[string]any{"resultType": "complete", "_meta": map[string]any{keySubscriptionID: json.RawMessage(m.id)}})
	return reply{status: http.StatusOK, listen: &subscription{ack: ack, closing: closing}}
}

// A subscription is an open subscriptions/listen stream.
type subscription struct {
	ack, closing []byte
}
