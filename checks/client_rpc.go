package checks

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

var ClientEnvelope = &Check{
	ID:       "CLI1001",
	Title:    "Each client message is one JSON-RPC 2.0 object in UTF-8",
	SpecRef:  "T-RPC-1, T-RPC-2, T-RPC-12, T-RPC-13, T-HTTP-3, T-STDIO-1, T-STDIO-4",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `Every message the client sends (a stdio line, a POST body) is one
JSON-RPC 2.0 message: valid JSON in UTF-8 (T-RPC-2), a single object, not a
batch array (removed in 2025-06-18; T-RPC-12, T-HTTP-3, T-STDIO-4; a
session that speaks 2025-03-26 may send one, T-V0326-1, but never
with an initialize request in it: "The initialize request MUST NOT be
part of a JSON-RPC batch", 2025-03-26 lifecycle, Initialization, and
never empty: JSON-RPC §6 answers "[]" as an Invalid Request), with
"jsonrpc": "2.0" (T-RPC-1), a string method or else an id, result or error,
and params, when present, an object (T-RPC-13). A POST with no body carries
no message (T-HTTP-3). A byte order mark fails over HTTP (RFC 8259 §8.1
forbids adding one to JSON sent over a network) and warns on stdio, as
for a server's message (RPC1001); a repeated member name (RFC 8259 §4:
names SHOULD be unique) and an empty stdio line warn: receivers may
cope, but need not. An HTTP GET or DELETE
carries no message and is not judged here.`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		if cp.kind == kindNone {
			return skipNoMessage
		}
		m := &cp.msg
		if len(cp.in.Message.Body) == 0 {
			if cp.in.Message.Transport == envelope.HTTP {
				p.Failf("message", "the POST carries no message (T-HTTP-3: every POST body is one JSON-RPC message)")
			} else {
				p.Warnf("message", "an empty line is no message (T-STDIO-1: messages are separated by newlines)")
			}
			return nil
		}
		switch {
		case !m.UTF8:
			p.Failf("message", "the message is not valid UTF-8 (T-RPC-2)")
			return nil
		case m.TooDeep:
			return fmt.Errorf("the message nests deeper than %d levels, beyond what the checker reads", envelope.MaxDepth)
		case !m.Valid:
			p.Failf("message", "the message is not valid JSON (T-RPC-1)")
			return nil
		case m.IsArray() && batchHoldsInitialize(m):
			p.Failf("message", "the batch holds an initialize request, which is never part of a JSON-RPC batch (2025-03-26 lifecycle, Initialization: \"The initialize request MUST NOT be part of a JSON-RPC batch\"; later versions have no batches, T-RPC-12)")
			return nil
		case m.IsArray() && cp.version == envelope.V20250326 && !envelope.NonEmpty(m.Root()):
			// (Review rev90: the server's side knew it, the client's not.)
			p.Failf("message", "the message is an empty JSON array: JSON-RPC §6 answers it as an Invalid Request, for a batch holds at least one message (T-V0326-1)")
			return nil
		case m.IsArray() && cp.version == envelope.V20250326:
			return Skip("a batch, which 2025-03-26 allows (T-V0326-1)")
		case m.IsArray():
			p.Failf("message", "the message is a JSON array (a batch): since 2025-06-18 every POST body and stdio line holds exactly one message (T-RPC-12, T-HTTP-3, T-STDIO-4)")
			return nil
		case !m.IsObject():
			p.Failf("message", "the message is a JSON %s, not an object (T-RPC-1)", envelope.Kind(m.Root()))
			return nil
		}
		if m.BOM {
			p.Deviate(bomWant(cp.in.Message.Transport), "message", "the message starts with a byte order mark, which RFC 8259 §8.1 forbids a sender of JSON over a network to add; many parsers refuse it")
		}
		if len(m.Duplicates) > 0 {
			p.Warnf(m.Duplicates[0], "the message repeats the member name %s (RFC 8259 §4: names SHOULD be unique; a receiver may keep either)", Quote(m.Duplicates[0], quoteN))
		}
		switch v := m.Get("jsonrpc"); {
		case !v.Exists():
			p.Failf("jsonrpc", `jsonrpc is missing; every message has "jsonrpc": "2.0" (T-RPC-1)`)
		case v.Type != gjson.String || v.Str != "2.0":
			p.Failf("jsonrpc", `jsonrpc is %s, want the string "2.0" (T-RPC-1)`, idText(v.Raw))
		}
		if v := m.Get("method"); v.Exists() && v.Type != gjson.String {
			p.Failf("method", "method is %s, not a string (T-RPC-1)", envelope.Kind(v))
		}
		if cp.kind == kindOther {
			p.Failf("message", "the object is no request, notification or response: it has no method, id, result or error (T-RPC-1)")
		}
		if v := m.Get("params"); v.Exists() && !v.IsObject() {
			p.Failf("params", "params is %s, not an object (T-RPC-13)", envelope.Kind(v))
		}
		return nil
	},
}

var ClientRequestID = &Check{
	ID:       "CLI1002",
	Title:    "A client request id is a string or an integer",
	SpecRef:  "T-RPC-3",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `MCP request ids are strings or integers, never null, never fractional
(T-RPC-3; JSON-RPC would allow both). A null id, a fractional number, a
boolean, object or array fails. An integer spelled as a float (1.0, 1e2) is
an integer in value, as JSON Schema reads it, but a receiver may read it as
a float: it warns. So does an integer beyond 2^53, which receivers that read
numbers as IEEE doubles cannot hold exactly (RFC 8259 §6). The ids of the
client's answers to server requests are CLI1004's.`,
	Run: func(p *Pass) error {
		cp, err := needClientRequest(p)
		if err != nil {
			return err
		}
		id := cp.msg.Get("id")
		switch id.Type {
		case gjson.String:
		case gjson.Number:
			switch {
			case !envelope.IsInteger(id.Raw):
				p.Failf("id", "id %s is a fractional number; MCP ids are strings or integers (T-RPC-3)", idText(id.Raw))
			case strings.ContainsAny(id.Raw, ".eE"):
				p.Warnf("id", "id %s is an integer written as a float; a receiver may read it as one (T-RPC-3)", idText(id.Raw))
			case envelope.BeyondDouble(id):
				p.Warnf("id", "id %s is beyond 2^53: receivers that read numbers as doubles cannot hold it exactly (RFC 8259 §6)", idText(id.Raw))
			}
		case gjson.Null:
			p.Failf("id", "id is null; MCP request ids are strings or integers, never null (T-RPC-3)")
		default:
			p.Failf("id", "id is %s; MCP request ids are strings or integers (T-RPC-3)", envelope.Kind(id))
		}
		return nil
	},
}

var ClientIDReuse = &Check{
	ID:       "CLI1003",
	Title:    "A client reuses no request id nor active progress token",
	SpecRef:  "T-RPC-4, T-PROG-1",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `A request id is never one of the client's requests still awaiting an
answer; in 2025-06-18 and 2025-11-25 it is never reused within the session
at all (T-RPC-4). Ids compare by value, as the MCP schema's JSON Schema
does: 1.0 and 1e0 are the id 1, and reuse it (CLI1002 warns for the
spelling). The relay follows the session: on stdio, the wrapped
server's whole life; on Streamable HTTP, the Mcp-Session-Id the server
issued. Where it cannot tell clients apart (stateless 2026-07-28 HTTP, or a
server that issued no session id) an id in flight twice warns, as it may be
two clients', and reuse after the answer is not judged. A request the HTTP
layer refused (a 4xx with no JSON-RPC response to it: a 401, a 403
insufficient_scope, a 413 or 429; an error with a null id) never entered
the session, so its ids (a batch's members' too) are free: the TypeScript
SDK re-sends the same message once it has refreshed its token. One that
ended in a 5xx without its response (a gateway's 504, a crash handler's
error with a null id) may have run before the failure: its id reused
warns. What the relay did
not see (it started mid-session, or its output fell behind and messages
were dropped) is not judged either. The id of a 2026-07-28 probe
(server/discover) sent before a 2025 session's initialize, by a dual-era
client that then fell back, warns when reused, answered or not (the
2026-07-28 backward compatibility rules let silence mark a server legacy,
and the probe is abandoned): whether the probe belongs to the session is
open. The requests inside a batch (2025-03-26) are judged member by
member as single requests are: an id already in flight or used before
in the session fails, and so do two members with one id (two requests
in flight with it); their ids are used in the session, so a later
request reusing one fails.

A 2026-07-28 retry of a request answered input_required (tools/call,
prompts/get, resources/read) uses a new JSON-RPC id (T-MRTR-10), though
2026-07-28 otherwise lets an answered id be used again. The relay pairs
a retry with the round it retries without guessing: the same method and
name, with the requestState that round's result issued, or, with no
requestState, inputResponses whose keys that round asked for (a round
not yet retried with its state). A retry with the id of every round it
may retry fails; where it may retry rounds of other ids it is not
judged. Over HTTP without a session the relay cannot tell clients
apart, so it warns where the pairing is by inputResponses alone, or by
a state an earlier retry carried already (a server may give every
client one fixed state). The retry's requestState is CLI1014's.

A progressToken (params._meta.progressToken) is likewise never that of
another of the client's requests still awaiting its answer: progress
tokens are unique across all active requests (progress, Progress Flow: a
MUST on the requester), else the server's progress for the two cannot be
told apart. Tokens compare by value as ids do; one reused after the
first request was answered or cancelled is free. Where the relay cannot
tell clients apart it warns, as for ids. A task-augmented request's
token stays active for the task's life (2025-11-25), past the
CreateTaskResult that answers it; the relay does not follow the task,
so its reuse then is not judged.`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		if cp.kind == kindOther && cp.msg.IsArray() {
			if cp.view.c.lost {
				return skipLost
			}
			return batchIDReuse(p, cp)
		}
		if cp.kind != kindRequest {
			return skipNotRequest
		}
		if cp.view.c.lost {
			return skipLost
		}
		idErr := clientIDReuse(p, cp, cp.msg.Get("id"), "")
		if idErr == nil {
			retryIDReuse(p, cp)
		}
		if tokErr := clientTokenReuse(p, cp); tokErr != nil {
			return idErr
		}
		return nil
	},
}

// clientTokenReuse judges the request's progressToken against those of
// the client's requests still open; a skip when it offers none.
func clientTokenReuse(p *Pass, cp *clientPass) error {
	tok := cp.msg.Get("params._meta.progressToken")
	if !tok.Exists() {
		return Skip("no progressToken")
	}
	tk := envelope.IDKey(tok)
	if tk == "" {
		return Skip("the progressToken is no string or number (see CLI1011)")
	}
	c := cp.view.c
	first := c.activeToken(tk)
	if first == 0 {
		return nil
	}
	const path = "params._meta.progressToken"
	if c.stateless {
		p.Warnf(path, "progressToken %s is that of the request %s, which still awaits its answer; over HTTP without a session the relay cannot tell clients apart, so it may be another client's (T-PROG-1: tokens are unique across all active requests)", idText(tok.Raw), seqText(first))
		return nil
	}
	p.Failf(path, "progressToken %s%s is that of the request %s, which still awaits its answer; progress tokens are unique across all active requests, else the server's progress for the two cannot be told apart (T-PROG-1)", idText(tok.Raw), inValue(tok, tk), seqText(first))
	return nil
}

// batchHoldsInitialize: a member of the batch is an initialize request.
func batchHoldsInitialize(m *envelope.Message) bool {
	for _, member := range m.Root().Array() {
		if member.IsObject() && member.Get("method").Str == "initialize" && member.Get("id").Exists() {
			return true
		}
	}
	return false
}

// batchIDReuse judges the ids of a batch's requests (2025-03-26, T-V0326-1)
// as a single request's are judged, and against each other: two members
// with one id are two requests in flight with it (T-RPC-4).
func batchIDReuse(p *Pass, cp *clientPass) error {
	seen := map[string]int{}
	requests := false
	for i, member := range cp.msg.Root().Array() {
		if !member.IsObject() || !member.Get("method").Exists() || !member.Get("id").Exists() {
			continue
		}
		requests = true
		id := member.Get("id")
		key := envelope.IDKey(id)
		if key == "" {
			continue // CLI1002's (a member's id is not judged there)
		}
		where := fmt.Sprintf(" (the batch's member %d)", i+1)
		if j, ok := seen[key]; ok {
			if cp.view.c.stateless {
				p.Warnf("id", "id %s%s is that of the batch's member %d too; over HTTP without a session the relay cannot tell clients apart, but one batch is one client's (T-RPC-4)", idText(id.Raw), where, j+1)
				continue
			}
			p.Failf("id", "id %s%s%s is that of the batch's member %d too: two requests in flight with one id, whose answers cannot be told apart (T-RPC-4)", idText(id.Raw), inValue(id, key), where, j+1)
			continue
		}
		seen[key] = i
		clientIDReuse(p, cp, id, where)
	}
	if !requests {
		return Skip("a batch of no requests")
	}
	return nil
}

// clientIDReuse judges a request's id against those the client used;
// where names the batch member it is ("" a single request).
func clientIDReuse(p *Pass, cp *clientPass, id gjson.Result, where string) error {
	key := envelope.IDKey(id)
	if key == "" {
		return Skip("the id is no valid RequestId (see CLI1002)")
	}
	c := cp.view.c
	if c.inFlight[key] > 0 && c.probed[key] && c.initSeq == 0 && cp.legacy() && c.inFlight[key] == 1 {
		// The id of a 2026-07-28 probe (server/discover) the server
		// left unanswered, reused by the client that fell back to a
		// 2025 session: silence marks the server legacy (2026-07-28
		// backward compatibility) and the probe is abandoned, so this is open as for an
		// answered probe's id.
		p.Warnf("id", "id %s%s is that of a 2026-07-28 request sent before this session's initialize (%s) and left unanswered; a client that falls back on silence abandons it, and whether that probe belongs to the session is open (T-RPC-4)", idText(id.Raw), where, seqText(c.used[key]))
		return nil
	}
	if c.inFlight[key] > 0 {
		var first uint64
		for seq, k := range c.open {
			if k == key && (first == 0 || seq < first) {
				first = seq
			}
		}
		earlier := seqText(first)
		if c.stateless {
			p.Warnf("id", "id %s%s is already in flight (%s); over stateless HTTP the relay cannot tell clients apart, so it may be another client's (T-RPC-4)", idText(id.Raw), where, earlier)
			return nil
		}
		p.Failf("id", "id %s%s%s is reused while the request %s with it still awaits its answer (T-RPC-4)", idText(id.Raw), inValue(id, key), where, earlier)
		return nil
	}
	if cp.legacy() && !c.stateless {
		if first, ok := c.used[key]; ok {
			if c.probed[key] {
				// Used by a 2026-07-28 probe (server/discover) before
				// the session's initialize, by a client that then fell
				// back: whether the probe belongs to the session is
				// open.
				p.Warnf("id", "id %s%s was used by a 2026-07-28 request before this session's initialize (%s); whether that probe belongs to the session is open (T-RPC-4)", idText(id.Raw), where, seqText(first))
				return nil
			}
			if c.doubted[key] {
				// That request ended in a 5xx without its answer: the
				// server, or a gateway, may have failed before or after
				// it ran.
				p.Warnf("id", "id %s%s was used by a request that ended in an HTTP 5xx without its answer (%s); whether it was used in this session is not known, as the server may have failed before or after it ran (T-RPC-4)", idText(id.Raw), where, seqText(first))
				return nil
			}
			if c.refusedInit[key] {
				// The server refused that initialize: whether a
				// session held it, or began with the one after, is
				// open.
				p.Warnf("id", "id %s%s was used by an initialize the server refused (%s); whether that request belongs to this session is open (T-RPC-4)", idText(id.Raw), where, seqText(first))
				return nil
			}
			p.Failf("id", "id %s%s%s was used before in this session (%s); in 2025 versions an id is never reused within a session (T-RPC-4)", idText(id.Raw), inValue(id, key), where, seqText(first))
		}
	}
	return nil
}

var ClientAnswers = &Check{
	ID:       "CLI1004",
	Title:    "Each server request gets one answer with its id",
	SpecRef:  "T-RPC-5, T-RPC-6, T-HTTP-3, T-STDIO-4, T-PROG-1",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `A client's progress on a request of the server's names the
progressToken that request offered while it still awaits its answer
(T-PROG-1: progress refers only to a token given in an active request);
a task-augmented request's token lives on past the CreateTaskResult
(2025-11-25), which the relay does not follow, so it is not judged
there; where the relay did not see the whole session, nothing is.
The client answers each request the server sent (2025-06-18 and
2025-11-25: sampling, elicitation, roots, ping) with exactly one response:
the request's id, with the same value and the same JSON type (T-RPC-5), and
exactly one of result and error (T-RPC-6). A response to a request the
server did not send, or a second one, fails. An error with id null
answers a message whose id could not be read or an invalid request
(JSON-RPC §5): where the relay saw the whole session and the server sent
no such message (a line that is no JSON, an invalid request, an id
JSON-RPC forbids, a batch), which the record of a relay keeps for lint,
it warns (a server's response-shaped line is not among them, and a
client may refuse one). An answer whose POST the
HTTP layer refused (a 4xx with no JSON-RPC response, as CLI1003 reads
it: a 401 before a token refresh, a 400 of a malformed body) answered
nothing: the request still waits, and the answer sent again is no
second one. Ids compare by value, as the
MCP schema's JSON Schema does: an answer that spells the integer id 7 as
7.0 or 7e0 answers request 7, but a receiver may read it as a float or
match it by its text, so it warns (CLI1002's reading of such an id). In 2026-07-28 the server sends
no requests, so a client sends no responses (T-HTTP-3, T-STDIO-4); one
that answers a request a server sent all the same (T-LIFE-15 broken
first) only warns. When the
relay did not see the session begin, or lost messages of it, or the session
outgrew what the checker keeps and an exchange still open (a GET stream the
server may ask on) was forgotten, a response it cannot match is not judged. A request the client never answered before
the session ended is not judged: the relay cannot tell a forgotten answer
from one the user abandoned.`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		if cp.kind == kindNotification && cp.method == "notifications/progress" || cp.kind == kindOther && cp.msg.IsArray() && batchHasProgress(&cp.msg) {
			return judgeClientProgress(p, cp)
		}
		if cp.kind != kindResponse {
			return skipNotResponse
		}
		m := &cp.msg
		if cp.version == envelope.V20260728 {
			if _, ok := cp.view.c.asked[envelope.IDKey(m.Get("id"))]; ok {
				// The server broke T-LIFE-15 first; answering its request
				// (JSON-RPC §4: a request is answered) is no reading a
				// client could avoid, so only a warn (review rev23).
				p.Warnf("message", "the client answers a request the server sent, which a 2026-07-28 server never sends (T-LIFE-15); a 2026-07-28 client sends only requests and notifications (T-HTTP-3, T-STDIO-4)")
				return nil
			}
			p.Failf("message", "the client sends a response, but in 2026-07-28 the server sends no requests and a client sends only requests and notifications (T-HTTP-3, T-STDIO-4)")
			return nil
		}
		res, rerr := m.Get("result"), m.Get("error")
		switch {
		case res.Exists() && rerr.Exists():
			p.Failf("message", "the response has both result and error; exactly one of them (T-RPC-6)")
		case !res.Exists() && !rerr.Exists():
			p.Failf("message", "the response has neither result nor error; exactly one of them (T-RPC-6)")
		}
		id := m.Get("id")
		key := envelope.IDKey(id)
		c := cp.view.c
		if key == "" {
			if rerr.Exists() && (!id.Exists() || id.Type == gjson.Null) {
				if c.seenWhole() && !c.unreadable && id.Exists() {
					// JSON-RPC §5: null only when the id could not be
					// read, and the relay saw no such message of the
					// server's (review rev90). A warn: what the relay
					// reads as a response (one with no id) never reaches
					// this ledger, and a client may refuse such a line.
					p.Warnf("id", "the error's id is null, but every request the relay saw the server send was well formed with an id a client can read; an error answers the request it is about with its id (JSON-RPC §5, T-RPC-5)")
				}
				return nil // an error about a request whose id could not be read (JSON-RPC §5)
			}
			p.Failf("id", "the response's id is %s; it echoes the id of the request it answers (T-RPC-5)", idOrAbsent(id))
			return nil
		}
		if a, ok := c.asked[key]; ok {
			if envelope.Compact(id.Raw) != envelope.Compact(a.id.Raw) && id.Type == gjson.Number {
				// The same integer, spelled otherwise (7.0 for 7): the same
				// id in value, as JSON Schema reads it, but a receiver may
				// read the spelling as a float, or match ids by their text.
				p.Warnf("id", "id %s answers the server's request %s with the same integer spelled otherwise; a receiver that reads the spelling as a float, or matches ids by their text, may not match it (T-RPC-5)", idText(id.Raw), idText(a.id.Raw))
			}
			return nil
		}
		if a, ok := c.asked[envelope.OtherTypeKey(key)]; ok {
			p.Failf("id", "id %s answers the server's request %s with the id in another JSON type (T-RPC-5)", idText(id.Raw), idText(a.id.Raw))
			return nil
		}
		if first, ok := c.answers[key]; ok {
			p.Failf("id", "a second answer to the server's request %s (the first was %s); each request gets exactly one response (T-RPC-5)", idText(id.Raw), seqText(first))
			return nil
		}
		if !c.seenWhole() {
			// (Before naming the one request waiting: the answer may be
			// to one the relay never saw.)
			return Skip("it answers no request the relay saw, and the relay did not see the whole session")
		}
		if len(c.asked) == 1 {
			for _, a := range c.asked {
				p.Failf("id", "id %s matches no request of the server's; the one awaiting an answer has id %s (T-RPC-5)", idText(id.Raw), idText(a.id.Raw))
			}
			return nil
		}
		p.Failf("id", "id %s answers no request of the server's: none with that id awaits an answer (T-RPC-5)", idText(id.Raw))
		return nil
	},
}

// judgeClientProgress judges a client's notifications/progress: its
// token is one a request of the server's still awaiting its answer
// offered (T-PROG-1: progress refers only to a token given in an active
// request), or a task's the client took on (review rev57).
func judgeClientProgress(p *Pass, cp *clientPass) error {
	c := cp.view.c
	if !c.initDone || c.version == envelope.V20260728 {
		return Skip("no 2025-xx session whose server may ask the client for work")
	}
	if cp.kind == kindNotification {
		return progressToken(p, c, cp.msg.Get("params.progressToken"), "")
	}
	// A batch's progress (2025-03-26), member by member; a batch's
	// members are unordered, so its answers close nothing before them
	// (review rev58).
	var err error
	judged := false
	for i, m := range cp.msg.Root().Array() {
		if m.Get("method").Str == "notifications/progress" && !m.Get("id").Exists() {
			if e := progressToken(p, c, m.Get("params.progressToken"), fmt.Sprintf(" (the batch's member %d)", i+1)); e == nil {
				judged = true
			} else if err == nil {
				err = e
			}
		}
	}
	if judged {
		return nil
	}
	return err
}

// batchHasProgress: a member of the batch is a progress notification.
func batchHasProgress(m *envelope.Message) bool {
	for _, member := range m.Root().Array() {
		if member.Get("method").Str == "notifications/progress" && !member.Get("id").Exists() {
			return true
		}
	}
	return false
}

// progressToken judges one progress notification's token against the
// server's requests still awaiting the client's answer; where names the
// batch member it is ("" a single notification).
func progressToken(p *Pass, c *conversation, tok gjson.Result, where string) error {
	key := envelope.IDKey(tok)
	if key == "" || tok.Type != gjson.String && !envelope.IsInteger(tok.Raw) {
		return Skip("the progressToken is no string or integer (see CLI1011)")
	}
	for _, a := range c.asked {
		if a.token == key {
			return nil
		}
	}
	switch {
	case c.taskTokens[key]:
		return Skip("the token is a task's the client took on, active for the task's life, which the relay does not follow")
	case !c.seenWhole():
		return Skip("no request of the server's the relay saw offered the token, and the relay did not see the whole session")
	}
	p.Failf("params.progressToken", "progress for token %s%s, which no request of the server's still awaiting its answer offered; progress refers only to a token given in an active request (T-PROG-1)", idText(tok.Raw), where)
	return nil
}

// inValue names the integer an id spelled otherwise is (1.0 is 1), for a
// finding that compares ids by value; "" when the id is spelled plainly.
func inValue(id gjson.Result, key string) string {
	if id.Type != gjson.Number || "n"+id.Raw == key {
		return ""
	}
	return fmt.Sprintf(" (the integer %s in value)", idText(key[1:]))
}

func idOrAbsent(id gjson.Result) string {
	if !id.Exists() {
		return "absent"
	}
	return idText(id.Raw)
}
