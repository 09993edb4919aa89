package checks

import (
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

var ResultType = &Check{
	ID:       "PRO1002",
	Title:    "A 2026-07-28 result has a valid resultType",
	SpecRef:  "T-LIFE-10, T-MRTR-1",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `In 2026-07-28 every result carries resultType: "complete", or
"input_required" (values an advertised extension defines are out of this
check's reach and warn). input_required may answer only tools/call,
prompts/get and resources/read (T-MRTR-1). Another string warns: an
extension the server advertises may define it, which one exchange cannot
show.`,
	Run: func(p *Pass) error {
		if p.Expect.Version != envelope.V20260728 {
			return Skip("resultType exists only in 2026-07-28")
		}
		if p.Expect.Condition == envelope.CondLegacyInitialize {
			return Skip("a served initialize answers with legacy semantics (T-COMPAT-2)")
		}
		m, err := needObject(p)
		if err != nil {
			return err
		}
		r := m.Get("result")
		if !r.IsObject() {
			return Skip("the reply is not a result object")
		}
		rt := r.Get("resultType")
		switch {
		case !rt.Exists():
			p.Failf("result.resultType", "resultType is missing")
		case rt.Type != gjson.String:
			p.Failf("result.resultType", `resultType is %s, want "complete" or "input_required"`, describe(rt))
		case rt.Str != "complete" && rt.Str != "input_required":
			// An extension the server advertises may define more values
			// (T-LIFE-10); one exchange does not show its capabilities.
			p.Warnf("result.resultType", `resultType is %s: not "complete" or "input_required"; valid only if an advertised extension defines it`, describe(rt))
		case rt.Str == "input_required" && nameField(p.Expect.Method) == "":
			p.Failf("result.resultType", "input_required answers %s; only tools/call, prompts/get and resources/read may", Quote(p.Expect.Method, quoteN))
		}
		return nil
	},
}

func nameField(method string) string {
	switch method {
	case "tools/call", "prompts/get", "resources/read":
		return method
	}
	return ""
}

var ServerMessages = &Check{
	ID:       "PRO1003",
	Title:    "Messages around the response are well-formed",
	SpecRef:  "T-RPC-11, T-LIFE-15, T-STDIO-5, T-HTTP-17",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `Messages the server sends besides the response (on an SSE stream or
stdout) are notifications, which carry no id (T-RPC-11), or, in 2025-xx
only, requests to the client. In 2026-07-28 the server sends no JSON-RPC
requests at all: needs travel inside input_required results (T-LIFE-15,
T-STDIO-5, T-HTTP-17). A server's request carries a string or integer id,
never null or a fraction (T-RPC-3).`,
	Run: func(p *Pass) error {
		n := 0
		for i, m := range p.Reply.Messages {
			if !m.IsObject() || !m.Get("method").Exists() {
				continue
			}
			n++
			id := m.Get("id")
			method := m.Get("method").Str
			switch {
			case id.Exists() && id.Type != gjson.String && !(id.Type == gjson.Number && envelope.IsInteger(id.Raw)):
				p.Failf(msgPath(p, i)+".id", "the server's request %s has id %s; a request id is a string or an integer (T-RPC-3)", Quote(method, quoteN), describe(id))
			case id.Exists() && p.Expect.Version == envelope.V20260728:
				p.Failf(msgPath(p, i), "the server sent a request (%s) in 2026-07-28", Quote(method, quoteN))
			case id.Exists() && strings.HasPrefix(method, "notifications/"):
				p.Failf(msgPath(p, i)+".id", "notification %s carries an id", Quote(method, quoteN))
			}
		}
		if n == 0 {
			return Skip("no notification or server request arrived")
		}
		return nil
	},
}

var SchemaValid = &Check{
	ID:       "SCH1001",
	Title:    "The reply matches the protocol schema",
	SpecRef:  "T-RPC-*, T-LIFE-1, T-LIFE-8, T-TOOL-2, T-TOOL-9, T-CACHE-1, T-CACHE-2",
	Severity: MUST,
	Area:     AreaSchema,
	Doc: `The reply validates against the checker's schema of the negotiated
version: the response envelope, the error object with the data shapes the
spec defines, and the result type of the method called (server/discover,
initialize, tools/list, tools/call, …). Each failure is reported once per
instance location, distilled. With --schema FILE the reply is validated
against a schema the user supplies instead.`,
	Run: func(p *Pass) error {
		if p.Schemas == nil {
			return Skip("no schema validator configured")
		}
		if p.Expect.NoReply {
			return Skip("nothing may answer this message (see RPC1007)")
		}
		m, err := needObject(p)
		if err != nil {
			return err
		}
		version := p.Expect.Version
		if p.Expect.Condition == envelope.CondLegacyInitialize && m.Get("result").Exists() {
			// A dual-era server served initialize: the reply is of the
			// legacy era it switched to (T-COMPAT-2).
			version = envelope.V20251125
			if v := m.Get("result.protocolVersion").Str; envelope.KnownVersion(v) && v != envelope.V20260728 {
				version = v
			}
		}
		method := p.Expect.Method
		if rt := m.Get("result.resultType"); version == envelope.V20260728 && rt.Type == gjson.String && rt.Str != "complete" && rt.Str != "input_required" {
			// A resultType an extension defines has that extension's
			// shape: judge the envelope only (PRO1002 warns about it).
			method = ""
		}
		entries, err := p.Schemas.ValidateReply(version, method, m.Raw)
		if err != nil {
			return err
		}
		for _, e := range entries {
			for _, pr := range e.Problems {
				p.Failf(pointerPath(e.Location), "%s", pr)
			}
		}
		return nil
	},
}

// pointerPath shows a JSON Pointer the way other findings show paths.
func pointerPath(ptr string) string {
	if ptr == "" {
		return "reply"
	}
	return ptr
}

var ToolRefusal = &Check{
	ID:       "PRO1004",
	Title:    "A tool refuses arguments its inputSchema forbids",
	SpecRef:  "T-TOOL-8, AMB-2",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `A fixture that calls a real tool with arguments violating the tool's own
inputSchema (wrong type, missing required property, extra property where
additionalProperties is false, a value outside an enum) must be refused,
not run. From 2025-11-25 the tools page asks for a tool execution error: a
result with isError true (pass); -32602 only warns, because the 2026-07-28
schema.ts and its example contradict the tools page (AMB-2). In 2025-06-18
either form passes. A result that is not an error means the tool ran on
input it declared invalid: a failure.`,
	Run: func(p *Pass) error {
		if !p.Expect.ToolRefusal {
			return Skip("not a schema-violating tool call")
		}
		m, err := needObject(p)
		if err != nil {
			return err
		}
		if e := m.Get("error"); e.Exists() {
			code := m.Get("error.code").Int()
			switch {
			case code != envelope.CodeInvalidParams:
				p.Failf("error.code", "the refusal has code %d, want an isError result or -32602", code)
			case p.Expect.Version != envelope.V20250618:
				p.Warnf("error.code", "refused with -32602; since 2025-11-25 the tools page asks for an isError result (AMB-2)")
			}
			return nil
		}
		if m.Get("result.isError").Type != gjson.True {
			p.Failf("result", "the tool ran on arguments its inputSchema forbids; want an isError result")
		}
		return nil
	},
}

var Survives = &Check{
	ID:       "PRO1005",
	Title:    "The server survives every message",
	SpecRef:  "T-PAGE-3 (handled gracefully); T-STDIO-1; robustness",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `Whatever a client sends, the server answers or ignores it as the rules
say; it never dies. A stdio server that exits while handling a message is
reported against that message, with its exit status and the tail of its
stderr, and is restarted for the next fixture.`,
	JudgesFailures: true,
	Run: func(p *Pass) error {
		if d := p.Exchange.Died; d != "" {
			p.Failf("server", "the server died: %s", d)
		}
		return nil
	},
}
