package checks

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
)

var ClientSchemaValid = &Check{
	ID:       "CLI1011",
	Title:    "A client message matches the protocol schema",
	SpecRef:  "T-RPC-1, T-RPC-11, T-RPC-13, T-LIFE-7, T-TOOL-7, T-META-1, T-META-2",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `Every request and notification the client sends, and every answer it
gives to a server request, validates against the checker's own client-side
schema of its version (schema/client/*.json, JSON Schema 2020-12, tested
against the official schemas): the envelope, and the params of each method
the version defines (initialize's capabilities and clientInfo, tools/call's
name and arguments object, 2026-07-28's _meta, …), and the result of an
answer (roots, sampling, elicitation). Each violation is reported once per
location, distilled. Every _meta key it sends follows the grammar a
server's do (PRO1006: T-META-1 fails, a reserved prefix's unknown key
warns, T-META-2), with or without schema validation. A method the version does not define is not judged,
unless MCP defines it for the other kind of message or the other side: a
notification method sent with an id, as a request (notifications carry
no id, T-RPC-11); a method only servers send (sampling/createMessage,
elicitation/create, roots/list, the server's notifications); a request
method of the version sent without an id, which no server answers. No
version's ClientRequest or ClientNotification is such a message, and it
fails. The version is the one the message names or its session negotiated, else
2025-11-25. A session that speaks 2025-03-26 is not judged here: its
schema is draft-07 and the checker does not carry it (T-V0326-4); nor is
one of an older version (2024-11-05). An answer to a task-augmented
request (2025-11-25) may be the task the client created. A client's
tasks are held to what a server's are: its answer to tasks/cancel is
the task cancelled, to tasks/result carries the related-task _meta, and
the task its answer to tasks/get, tasks/cancel or tasks/result names is
the one the server's request named (the tasks page). A fraction in an
elicitation answer warns: the generated JSON Schema says integer,
schema.ts (and a NumberSchema's request) number.`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		switch cp.kind {
		case kindRequest, kindNotification, kindResponse:
		default:
			return Skip("not a JSON-RPC message (see CLI1001)")
		}
		version := cp.version
		switch {
		case version == "":
			version = envelope.V20251125
		case version == envelope.V20250326:
			return Skip("the session speaks 2025-03-26, whose own schema (draft-07) the checker does not carry (T-V0326-4)")
		case !slices.Contains(schema.Versions(), version):
			// An older version a server may still answer (2024-11-05):
			// not judged, as the checker carries no schema of it.
			return Skipf("the session speaks %s, whose schema the checker does not carry", Quote(version, quoteN))
		}
		// A client's _meta keys follow the grammar a server's do (T-META-1,
		// T-META-2; review rev71: PRO1006 judged only the server's).
		metas := 0
		if mayHoldMeta(cp.in.Message.Body) {
			metas = judgeMetaKeys(p, cp.msg.Root(), make([]string, 0, 16), version, func() string { return "" }, nil)
		}
		sv := cp.in.Schemas
		if sv == nil {
			if metas > 0 {
				return nil
			}
			return Skip("schema validation is off (--schema)")
		}
		method, answers, taskID := cp.method, "", ""
		if cp.kind == kindResponse {
			if a, ok := cp.view.c.match(cp.msg.Get("id")); ok {
				method, answers, taskID = a.method, a.method, a.taskID
				if a.task {
					method = schema.TaskAugmented(method)
				}
			}
		}
		es, covered, err := sv.ValidateClient(version, method, cp.in.Message.Body)
		if err != nil {
			return err
		}
		if !covered && cp.kind != kindResponse {
			if judged, err := judgeMisdirected(p, cp, sv, version); judged || err != nil {
				return err
			}
		}
		if !covered {
			what := "method " + Quote(method, quoteN)
			if cp.kind == kindResponse {
				what = "answer from a client"
			}
			return Skipf("%s defines no %s", version, what)
		}
		payloadOf := "" // the method whose answer a tasks/result returns, when known
		if of := cp.view.c.taskOf[taskID]; answers == "tasks/result" && taskID != "" && of != "" && cp.msg.Get("result").Exists() {
			// The payload is what the task's request would have returned
			// (the tasks page, Result Retrieval): judged as that
			// request's answer too (review rev68), each problem once
			// (the envelope's are both schemas', review rev69).
			payloadOf = of
			more, ok, err := sv.ValidateClient(version, of, cp.in.Message.Body)
			if err != nil {
				return err
			}
			if ok {
				es = mergeEntries(es, more)
			}
		}
		for _, e := range es {
			for _, pr := range e.Problems {
				p.Failf(clientPath(e.Location), "%s", pr)
			}
		}
		if taskID != "" && version == envelope.V20251125 {
			// The request's taskId is the source of truth for the task
			// meant (the tasks page, Associating Task-Related Messages),
			// for a client's tasks as for a server's (PRO1008; review
			// rev66).
			path, got := "result.taskId", cp.msg.Get("result.taskId")
			if answers == "tasks/result" {
				path = envelope.JoinPath("result._meta", envelope.MetaRelatedTask) + ".taskId"
				got = cp.msg.Get(envelope.JoinPath("result._meta", envelope.MetaRelatedTask) + ".taskId")
			}
			if got.Type == gjson.String && got.Str != taskID && (answers == "tasks/get" || answers == "tasks/cancel" || answers == "tasks/result") {
				p.Failf(path, "the answer names task %s, the server's request task %s: the request's taskId is the source of truth for the task meant (the tasks page, Associating Task-Related Messages)", Quote(got.Str, quoteN), Quote(taskID, quoteN))
			}
		}
		// A fraction in an elicitation answer: in 2025-xx the response
		// to elicitation/create, in 2026-07-28 an answer among a retry's
		// inputResponses (an ElicitResult: it has an action).
		fractions := func(content gjson.Result, at string) {
			content.ForEach(func(k, v gjson.Result) bool {
				if v.Type == gjson.Number && !envelope.IsInteger(v.Raw) {
					p.Deviate(expect.Want{Level: expect.Open, Rule: "the generated JSON Schema types an elicitation answer's numbers as integer, schema.ts as number"}, envelope.JoinPath(at, k.Str), "value %s is no integer", clip(v.Raw))
				}
				return true
			})
		}
		if answers == "elicitation/create" || payloadOf == "elicitation/create" {
			fractions(cp.msg.Get("result.content"), "result.content")
		}
		if cp.kind != kindResponse {
			cp.msg.Get("params.inputResponses").ForEach(func(k, v gjson.Result) bool {
				if v.Get("action").Type == gjson.String {
					fractions(v.Get("content"), envelope.JoinPath("params.inputResponses", k.Str)+".content")
				}
				return true
			})
		}
		return nil
	},
}

// mergeEntries adds to es the problems of more it lacks, at their
// locations: two schemas that judge one message name a problem both
// find once.
func mergeEntries(es, more []envelope.DistilledEntry) []envelope.DistilledEntry {
	for _, m := range more {
		i := slices.IndexFunc(es, func(e envelope.DistilledEntry) bool { return e.Location == m.Location })
		if i < 0 {
			es = append(es, m)
			continue
		}
		for _, pr := range m.Problems {
			if !slices.Contains(es[i].Problems, pr) {
				es[i].Problems = append(slices.Clip(es[i].Problems), pr)
			}
		}
	}
	return es
}

// isNotification: method is a notification MCP defines, sent by either
// side in any version; none is ever a request.
func isNotification(method string) bool {
	return strings.HasPrefix(method, "notifications/") && (sentByAnyVersion(method) || schema.ClientSends(method))
}

// serverOnly: method is sent only by servers, in every version that
// defines it: the requests a client answers, and the server's own
// notifications (ping, tasks/*, notifications/cancelled, progress and
// tasks/status go both ways).
func serverOnly(method string) bool {
	return sentByAnyVersion(method) && !schema.ClientSends(method)
}

// judgeMisdirected judges a request or notification whose method the
// version's client schema has no entry for, when MCP defines the method
// for the other kind of message or the other side: a notification method
// sent with an id, a method only servers send, a request method of the
// version sent without an id. No ClientRequest or ClientNotification of
// any version's schema is such a message. judged is false for a method MCP
// does not define so (an extension's, or one of another version): that
// is not judged.
func judgeMisdirected(p *Pass, cp *clientPass, sv ClientSchemaValidator, version string) (judged bool, err error) {
	m := Quote(cp.method, quoteN)
	switch {
	case serverOnly(cp.method) && cp.kind == kindRequest && !isNotification(cp.method):
		p.Failf("method", "%s is a request only servers send, which the client answers; no version of MCP has a client send it (no ClientRequest of the schema is one)", m)
	case serverOnly(cp.method):
		p.Failf("method", "%s is a notification only servers send; no version of MCP has a client send it (no ClientNotification of the schema is one)", m)
	case cp.kind == kindRequest && isNotification(cp.method):
		p.Failf("id", "%s is a notification, sent here as a request with id %s: a notification carries no id and gets no answer (T-RPC-11), so the receiver never reads it as the notification", m, idText(cp.msg.Get("id").Raw))
	case cp.kind == kindNotification:
		// A request of the version's, sent without an id?
		probe, merr := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": cp.method})
		if merr != nil {
			return false, nil
		}
		if _, covered, err := sv.ValidateClient(version, cp.method, probe); err != nil || !covered {
			return false, err
		}
		p.Failf("message", "%s is a request, sent here without an id: as a notification it gets no answer, and %s defines no such ClientNotification", m, version)
	default:
		return false, nil
	}
	return true, nil
}

// clientPath turns a JSON Pointer into the dotted path findings use.
func clientPath(ptr string) string {
	if ptr == "" {
		return "message"
	}
	r := strings.NewReplacer("~1", "/", "~0", "~")
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, s := range parts {
		parts[i] = r.Replace(s)
	}
	return strings.Join(parts, ".")
}

var ClientToolArguments = &Check{
	ID:       "CLI1012",
	Title:    "tools/call arguments match the tool's inputSchema",
	SpecRef:  "T-TOOL-2, T-TOOL-6, T-TOOL-8, T-SCHEMA-1, AMB-15",
	Severity: SHOULD,
	Area:     AreaClient,
	Doc: `A tools/call names a tool the server listed and passes arguments that
validate against that tool's inputSchema, from the server's own tools/list
in this session (T-TOOL-2; JSON Schema 2020-12 unless the schema declares
another dialect, T-SCHEMA-1). The spec puts the MUST on the server, which
refuses such a call (T-TOOL-6, T-TOOL-8), so a client's breach warns: the
call will fail, and a model that produced the arguments needs to know why.
Each violation is reported at its place in the arguments. A tool the
server did not list warns only when the relay saw the whole list; without
one, the call is not judged. In 2025-06-18, which names no dialect
(AMB-15), arguments only one of 2020-12 and draft-07 rejects are not
judged.`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		if cp.kind != kindRequest || cp.method != "tools/call" {
			return Skip("not a tools/call")
		}
		name, args := cp.msg.Get("params.name"), cp.msg.Get("params.arguments")
		if name.Type != gjson.String || (args.Exists() && !args.IsObject()) {
			return Skip("a malformed tools/call (see CLI1011)")
		}
		f := cp.in.Facts
		t := f.Tool(name.Str)
		if t == nil {
			if f != nil && f.ToolsListed {
				p.Failf("params.name", "calls %s, a tool the server's tools/list did not list; the server refuses it (T-TOOL-6)", Quote(name.Str, quoteN))
				return nil
			}
			return Skip("the server's tools are not known (the relay saw no whole tools/list)")
		}
		version := cp.version
		if version == "" {
			version = envelope.V20251125
		}
		in := []byte("{}")
		if args.Exists() {
			in = []byte(args.Raw)
		}
		probs, agree, err := t.CheckArgs(in, version)
		switch {
		case errors.Is(err, schema.ErrBeyondBounds):
			return err
		case errors.Is(err, schema.ErrUnreadablePattern):
			return Skipf("the arguments fail the tool's inputSchema only as the checker reads it: %v, read as matching every string", err)
		case err != nil:
			return Skip("the tool's inputSchema does not compile (SCH1002 judges it)")
		case !agree:
			return Skip("2020-12 and draft-07 disagree on these arguments, and 2025-06-18 names no dialect (AMB-15)")
		}
		for _, e := range probs {
			for _, pr := range e.Problems {
				path := "params.arguments"
				if e.Location != "" {
					path += "." + clientPath(e.Location)
				}
				p.Failf(path, "%s (the tool's inputSchema; T-TOOL-8)", pr)
			}
		}
		return nil
	},
}

var ClientCapabilityUse = &Check{
	ID:       "CLI1013",
	Title:    "A client stays within the negotiated capabilities",
	SpecRef:  "T-LIFE-4, T-V0326-5",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `Both sides stay within the capabilities negotiated at initialize
(T-LIFE-4). A client asks a 2025-xx server only for the features its
initialize result advertised: tools/*, resources/* (subscribe and
unsubscribe need resources.subscribe), prompts/*, logging/setLevel,
completion/complete and tasks/* need tools, resources, prompts, logging,
completions and tasks. In 2025-11-25 it uses task augmentation on a
server's tools only where the server declared tasks.requests.tools.call,
and there never on a tool without task support, always on one whose
taskSupport is "required" (the tasks page, Tool-Level Negotiation). It
sends notifications/roots/list_changed only
when it declared roots.listChanged. A client that answers a server's sampling/createMessage,
elicitation/create or roots/list with a result declared sampling,
elicitation or roots in its initialize; in 2025-11-25 a URL-mode
elicitation needs elicitation.url, and a form needs elicitation.form (or
elicitation declared as {}, which means form); declining an elicitation
without the capability only warns, as it elicits nothing. In 2025-11-25
a client answers a task-augmented request with a CreateTaskResult only
where it declared tasks.requests for that request type (receivers that
did not process the request normally: the tasks page, Task Support and
Handling). Refusing with
an error is always right. The server's request was itself a breach of T-LIFE-4, judged
on the server's side. When the relay did not see the initialize, nothing
is judged; a session that negotiated 2025-03-26 only warns (T-V0326-5).`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		switch cp.kind {
		case kindRequest, kindNotification:
			return judgeClientAsk(p, cp)
		case kindResponse:
		default:
			return skipNotResponse
		}
		c := cp.view.c
		a, ok := c.match(cp.msg.Get("id"))
		if !ok {
			return Skip("it answers no server request the relay saw (see CLI1004)")
		}
		var need string
		switch a.method {
		case "sampling/createMessage":
			need = "sampling"
		case "elicitation/create":
			need = "elicitation"
		case "roots/list":
			need = "roots"
		default:
			return Skipf("the server's %s needs no client capability", Quote(a.method, quoteN))
		}
		if !cp.msg.Get("result").Exists() {
			return nil // a refusal
		}
		if !c.capsKnown {
			return Skip("the relay did not see the client's initialize")
		}
		caps := gjson.ParseBytes(c.caps)
		fail := p.Failf
		if c.initDone && !envelope.KnownVersion(c.version) {
			fail = p.Warnf // T-V0326-5: a SHOULD in 2025-03-26
		}
		decl := caps.Get(need)
		created := a.task && c.version == envelope.V20251125 && envelope.TaskCreation(cp.msg.Get("result"))
		if created {
			// "Receivers that do not declare the task capability for a
			// request type MUST process requests of that type normally,
			// ignoring any task-augmentation metadata" (the tasks page,
			// Task Support and Handling), as servers must (review rev49).
			if path := "tasks.requests." + strings.ReplaceAll(a.method, "/", "."); !expect.DeclaredIn(caps, path) {
				fail("result.task", "answers the server's task-augmented %s with a CreateTaskResult, but the client declared no %s: it processes such a request normally, ignoring the task (the tasks page, Task Support and Handling)", a.method, path)
			}
		}
		if need == "elicitation" && !created && cp.msg.Get("result.action").Str != "accept" {
			if !decl.IsObject() {
				// Declining elicits nothing, but answers as a client that
				// supports elicitation; an error says it does not. The
				// MUST is the server's, not to ask what was not declared.
				p.Warnf("result", "answers the server's elicitation/create with %s, though the client did not declare the elicitation capability: an error refusal says it does not support it (T-LIFE-4)", Quote(cp.msg.Get("result.action").Str, quoteN))
			}
			return nil
		}
		if !decl.IsObject() {
			fail("result", "answers the server's %s with a result, but the client did not declare the %s capability in its initialize (T-LIFE-4)", a.method, need)
			return nil
		}
		if need == "elicitation" && c.version == envelope.V20251125 {
			mode := a.mode
			if mode == "" {
				mode = "form"
			}
			if !elicitationModeDeclared(decl, mode) {
				fail("result", "answers a %s-mode elicitation, but the client declared elicitation without %s (T-LIFE-4)", mode, mode)
			}
		}
		return nil
	},
}

// serverFeature is the server capability a client request needs (T-LIFE-4:
// the server offers only the methods its capabilities advertise); "" for
// a method that needs none.
func serverFeature(method string) string {
	switch {
	case method == "resources/subscribe" || method == "resources/unsubscribe":
		return "resources.subscribe"
	case method == "logging/setLevel":
		return "logging"
	case method == "completion/complete":
		return "completions"
	}
	for _, f := range []string{"tools", "resources", "prompts", "tasks"} {
		if strings.HasPrefix(method, f+"/") {
			return f
		}
	}
	return ""
}

// judgeClientAsk judges a client request or notification against the
// capabilities the session negotiated: what the server advertised, what
// the client declared. Only a 2025-xx session whose initialize the relay
// saw answered is judged; 2025-03-26 only warns (T-V0326-5).
func judgeClientAsk(p *Pass, cp *clientPass) error {
	c := cp.view.c
	if !c.initDone || c.version == envelope.V20260728 {
		return Skip("no 2025-xx initialize was seen answered in this session")
	}
	fail := p.Failf
	if !envelope.KnownVersion(c.version) {
		fail = p.Warnf // T-V0326-5: a SHOULD in 2025-03-26
	}
	if cp.kind == kindNotification {
		if cp.method != "notifications/roots/list_changed" {
			return Skipf("notification %s needs no capability", Quote(cp.method, quoteN))
		}
		if !c.capsKnown {
			return Skip("the relay did not see the client's initialize")
		}
		if v := gjson.GetBytes(c.caps, "roots.listChanged"); v.Type != gjson.True {
			fail("method", "notifications/roots/list_changed from a client that did not declare roots.listChanged (T-LIFE-4)")
		}
		return nil
	}
	need := serverFeature(cp.method)
	if need == "" {
		return Skipf("%s needs no server capability", Quote(cp.method, quoteN))
	}
	if c.serverCaps == nil {
		return Skip("the server's initialize result declared no capabilities object")
	}
	if v := gjson.GetBytes(c.serverCaps, need); !v.Exists() || v.Type == gjson.Null || v.Type == gjson.False {
		fail("method", "asks for %s, but the server did not declare %s in its initialize result (T-LIFE-4)", Quote(cp.method, quoteN), need)
		return nil
	}
	if cp.method == "tools/call" && c.version == envelope.V20251125 {
		clientTaskUse(p, cp, c.serverCaps)
	}
	return nil
}

// clientTaskUse judges a 2025-11-25 client's tools/call by the tasks
// page's Tool-Level Negotiation, whose MUSTs bind the client (review
// rev49): no task augmentation on a server that declared no
// tasks.requests.tools.call; and where it did, none for a tool whose
// taskSupport is absent or "forbidden", and always one for a tool that
// declares it "required".
func clientTaskUse(p *Pass, cp *clientPass, serverCaps []byte) {
	asks := envelope.AsksTask(&cp.msg)
	if !expect.DeclaredIn(gjson.ParseBytes(serverCaps), "tasks.requests.tools.call") {
		if asks {
			p.Failf("params.task", "a task-augmented tools/call, but the server declared no tasks.requests.tools.call: clients MUST NOT use task augmentation on its tools (the tasks page, Tool-Level Negotiation)")
		}
		return
	}
	name := cp.msg.Get("params.name")
	t := cp.in.Facts.Tool(name.Str)
	if name.Type != gjson.String || t == nil {
		return // an unlisted tool is CLI1012's
	}
	switch support := gjson.GetBytes(t.Raw, "execution.taskSupport").Str; {
	case asks && (support == "" || support == "forbidden"):
		p.Failf("params.task", "calls %s as a task, but the tool declares no task support: clients MUST NOT invoke it as a task (the tasks page, Tool-Level Negotiation)", Quote(t.Name, quoteN))
	case !asks && support == "required":
		p.Failf("params", "calls %s without a task, but the tool declares taskSupport \"required\": clients MUST invoke it as a task (the tasks page, Tool-Level Negotiation)", Quote(t.Name, quoteN))
	}
}
