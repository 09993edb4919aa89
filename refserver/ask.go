package refserver

import (
	"encoding/json"
	"net/http"

	"github.com/tidwall/gjson"
)

// askTool is the fourth tool: read-only, and in 2026-07-28 it asks the
// user for a confirmation before it answers, so the checker has an
// input_required result to judge (T-MRTR-2..4) and a retry to make
// (T-MRTR-8..10). It needs form-mode elicitation: a request that does
// not declare it gets -32021 (T-LIFE-13, T-MRTR-3). In 2025-xx the
// checker declares no elicitation and the server asks nothing: the tool
// answers that nothing was confirmed.
func askTool() map[string]any {
	return map[string]any{
		"name":        "ask",
		"title":       "Ask for a confirmation",
		"description": "Asks the user to confirm, and says whether they did; it changes nothing.",
		"inputSchema": map[string]any{
			"type":                 "object",
			"properties":           map[string]any{},
			"additionalProperties": false,
		},
		"annotations": map[string]any{"readOnlyHint": true},
	}
}

// askKey is the key of the tool's one input request, and askState the
// requestState it issues: tampering with it can do nothing worse than
// make the request fail, so it is not integrity-protected (T-MRTR-5).
const (
	askKey   = "confirm"
	askState = "ask:confirm:v1"
)

func (s *Server) callAsk(m *message, version string, args gjson.Result) reply {
	if closedExtra(args, nil) {
		return s.refuseArguments(m, version, []problem{{"/params/arguments", "has an unexpected property"}})
	}
	if version != version2026 {
		return s.ok(m, s.toolResult(version, map[string]any{
			"content": []any{textContent("not confirmed: this client cannot be asked")},
		}))
	}
	meta := member(m.params, "_meta")
	if !formElicitation(member(member(meta, keyClientCaps), "elicitation")) {
		// T-LIFE-13: the capability the tool needs and the request
		// lacked; the request's other capabilities do not count.
		return s.fail(m, &rpcError{
			code:    codeMissingCap,
			message: "the ask tool needs form-mode elicitation, which the request did not declare",
			data:    map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}},
			status:  http.StatusBadRequest,
		})
	}
	answer := member(member(m.params, "inputResponses"), askKey)
	if !answer.Exists() {
		// The first round, or a retry without the answer the tool needs:
		// ask (again, T-MRTR-9).
		return s.ok(m, s.inputRequired())
	}
	if rs := member(m.params, "requestState"); rs.Str != askState {
		// A state this server did not issue: the request fails, nothing
		// more (T-MRTR-5).
		return s.fail(m, s.invalidParams("invalid tools/call params", []problem{{"/params/requestState", "is not a state this server issued"}}, http.StatusOK))
	}
	text := "not confirmed"
	if member(answer, "action").Str == "accept" && member(member(answer, "content"), askKey).Type == gjson.True {
		text = "confirmed"
	}
	return s.ok(m, s.toolResult(version, map[string]any{"content": []any{textContent(text)}}))
}

// inputRequired is the tool's InputRequiredResult: one form-mode
// elicitation, bare {method, params} (T-MRTR-2), and its requestState;
// no cache hints (T-MRTR-4).
func (s *Server) inputRequired() map[string]any {
	ask := map[string]any{
		"method": "elicitation/create",
		"params": map[string]any{
			"mode":    "form",
			"message": "Confirm?",
			"requestedSchema": map[string]any{
				"type":       "object",
				"properties": map[string]any{askKey: map[string]any{"type": "boolean"}},
				"required":   []string{askKey},
			},
		},
	}
	if s.fault == faultBadInputRequest {
		// A JSON-RPC request where a bare request object belongs.
		ask["jsonrpc"], ask["id"] = "2.0", json.RawMessage("1")
	}
	r := s.finish(version2026, map[string]any{
		"inputRequests": map[string]any{askKey: ask},
		"requestState":  askState,
	})
	if _, ok := r["resultType"]; ok { // (the no-resultType fault leaves it out)
		r["resultType"] = "input_required"
	}
	return r
}

// formElicitation reports whether an elicitation capability includes
// form mode: an empty object (form, the mode every client supports) or
// one that names form.
func formElicitation(c gjson.Result) bool {
	if !c.IsObject() {
		return false
	}
	empty := true
	c.ForEach(func(gjson.Result, gjson.Result) bool { empty = false; return false })
	return empty || member(c, "form").IsObject()
}
