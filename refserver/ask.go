package refserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// askTool is the fourth tool: read-only, and in 2026-07-28 it asks the
// user for a confirmation before it answers, so the checker has an
// input_required result to judge (T-MRTR-2..4) and a retry to make
// (T-MRTR-5, T-MRTR-6, T-MRTR-8..10). It needs form-mode elicitation: a
// request that does not declare it gets -32021 (T-LIFE-13, T-MRTR-3). In
// 2025-xx the checker declares no elicitation and the server asks
// nothing: the tool answers that nothing was confirmed. Its one,
// optional, argument names what is confirmed; the requestState is bound
// to it (T-MRTR-6).
func askTool() map[string]any {
	return map[string]any{
		"name":        "ask",
		"title":       "Ask for a confirmation",
		"description": "Asks the user to confirm, and says whether they did; it changes nothing.",
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				askSubject: map[string]any{"type": "string", "description": "What to confirm (optional)."},
			},
			"additionalProperties": false,
		},
		"annotations": map[string]any{"readOnlyHint": true},
	}
}

// askKey is the key of the tool's one input request, askSubject its
// argument, and askStatePrefix how the requestState it issues begins.
const (
	askKey         = "confirm"
	askSubject     = "subject"
	askStatePrefix = "ask:confirm:v1."
)

// askState is the requestState the tool issues for a call with args:
// askStatePrefix and an HMAC-SHA256, with the server's key, of the
// method, the tool and the arguments (T-MRTR-5: integrity-protected;
// T-MRTR-6: bound to the request it answers), Base64url without padding.
// The replayed-state-accepted fault leaves the arguments out.
func (s *Server) askState(args gjson.Result) string {
	canon := "{}"
	if sub := member(args, askSubject); sub.Exists() && s.fault != faultReplayedState {
		b, _ := json.Marshal(map[string]string{askSubject: sub.Str})
		canon = string(b)
	}
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write([]byte("tools/call\x00ask\x00" + canon))
	return askStatePrefix + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// stateIssued reports whether rs is the state the tool issues for args.
// The tampered-state-accepted fault takes any state.
func (s *Server) stateIssued(rs gjson.Result, args gjson.Result) bool {
	if s.fault == faultTamperedState {
		return true
	}
	return rs.Type == gjson.String && hmac.Equal([]byte(rs.Str), []byte(s.askState(args)))
}

func (s *Server) callAsk(m *message, version string, args gjson.Result) reply {
	if closedExtra(args, []string{askSubject}) {
		return s.refuseArguments(m, version, []problem{{"/params/arguments", "has an unexpected property"}})
	}
	if sub := member(args, askSubject); sub.Exists() && sub.Type != gjson.String {
		return s.refuseArguments(m, version, []problem{{"/params/arguments/" + askSubject, "must be a string"}})
	}
	text := "not confirmed"
	if sub := member(args, askSubject); sub.Str != "" {
		// (The subject is the caller's own words, in a result.)
		text += ": " + strings.ReplaceAll(sub.Str, "\n", " ")
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
		return s.ok(m, s.inputRequired(args))
	}
	if rs := member(m.params, "requestState"); !s.stateIssued(rs, args) {
		// A state this server did not issue, or issued for another
		// request: rejected (T-MRTR-5, T-MRTR-6).
		return s.fail(m, s.invalidParams("invalid tools/call params", []problem{{"/params/requestState", "is not a state this server issued for this call"}}, http.StatusOK))
	}
	if member(answer, "action").Str == "accept" && member(member(answer, "content"), askKey).Type == gjson.True {
		text = strings.TrimPrefix(text, "not ")
	}
	return s.ok(m, s.toolResult(version, map[string]any{"content": []any{textContent(text)}}))
}

// inputRequired is the tool's InputRequiredResult for a call with args:
// one form-mode elicitation, bare {method, params} (T-MRTR-2), and its
// requestState; no cache hints (T-MRTR-4).
func (s *Server) inputRequired(args gjson.Result) map[string]any {
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
		"requestState":  s.askState(args),
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
