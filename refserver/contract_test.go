package refserver

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// TestCleanRepliesKeepContract reads every clean reply in the case files
// and checks the strict contract on it, written here a second time and
// independently of the checker: codes from the version's table, one-line
// lowercase messages, data keys from the vocabulary, distilled
// data.errors, no request value longer than the quote bound echoed, and
// the 2026-07-28 result fields.
func TestCleanRepliesKeepContract(t *testing.T) {
	n := 0
	for _, c := range loadCases(t, "testdata/http/*.txtar") {
		for i, x := range c.exchanges {
			head, reqBody, _ := strings.Cut(x.request, "\n\n")
			status, replyBody, _ := strings.Cut(x.want[""], "\n\n")
			// 403 (Origin), 405 and 413 refuse the request before its
			// body is read: their errors carry no id (T-HTTP-14).
			if strings.HasPrefix(status, "403") || strings.HasPrefix(status, "405") || strings.HasPrefix(status, "413") {
				reqBody = ""
			}
			for _, msg := range replyMessages(replyBody) {
				n++
				for _, p := range contractProblems(legacyCase(c), []byte(reqBody), head, msg) {
					t.Errorf("%s request %d: %s\nreply: %s", c.name, i+1, p, msg)
				}
			}
		}
	}
	for _, c := range loadCases(t, "testdata/stdio/*.txtar") {
		byID := map[string]string{}
		for _, line := range strings.Split(c.stdin, "\n") {
			if id := gjson.Get(line, "id"); id.Exists() {
				byID[id.Raw] = line
			}
		}
		for _, msg := range strings.Split(strings.TrimSuffix(c.stdout[""], "\n"), "\n") {
			n++
			req := byID[gjson.Get(msg, "id").Raw] // "" when the id was unreadable
			for _, p := range contractProblems(legacyCase(c), []byte(req), c.stdin, []byte(msg)) {
				t.Errorf("%s: %s\nreply: %s", c.name, p, msg)
			}
		}
	}
	if n < 100 {
		t.Errorf("checked only %d replies; the case files went missing?", n)
	}
}

// replyMessages splits an HTTP reply body into its JSON-RPC messages: the
// body itself, or each data field of an SSE stream.
func replyMessages(body string) [][]byte {
	if body == "" {
		return nil
	}
	if !strings.HasPrefix(body, "event:") && !strings.HasPrefix(body, "data:") {
		return [][]byte{[]byte(body)}
	}
	var msgs [][]byte
	for _, l := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			msgs = append(msgs, []byte(d))
		}
	}
	return msgs
}

var vocabulary = []string{"errors", "header", "expected", "received", "supported", "requested"}

// legacyCase tells the case files that run a 2025-xx session.
func legacyCase(c *caseFile) bool { return strings.Contains(c.name, "2025") }

// contractProblems judges one reply message. req is the JSON request it
// answers ("" if unknown); context is anything else the client sent
// (headers, other lines), whose long values must not come back either. In
// a legacy case, requests without a _meta protocol version are 2025-xx.
func contractProblems(legacy bool, req []byte, context string, msg []byte) []string {
	var ps []string
	bad := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	reply := gjson.ParseBytes(msg)
	if !utf8.Valid(msg) || !gjson.ValidBytes(msg) || !reply.IsObject() {
		return []string{"reply is not one JSON object"}
	}
	if reply.Get("jsonrpc").String() != "2.0" {
		bad("jsonrpc is not 2.0")
	}
	for _, v := range longValues(req, context) {
		if bytes.Contains(msg, []byte(v)) {
			bad("reply echoes a request value of %d bytes", len(v))
		}
	}
	metaVersion := gjson.GetBytes(req, `params._meta.io\.modelcontextprotocol/protocolVersion`)
	version := version2026
	if legacy && !metaVersion.Exists() {
		version = "2025"
	}
	if e := reply.Get("error"); e.Exists() {
		code := e.Get("code").Int()
		allowed := []int64{codeParse, codeInvalidRequest, codeMethodNotFound, codeInvalidParams, codeInternal}
		if version == version2026 {
			allowed = append(allowed, codeHeaderMismatch, codeUnsupported, codeMissingCap)
		} else {
			allowed = append(allowed, codeResourceNotFound) // T-ERR-6
		}
		if e.Get("code").Type != gjson.Number || !slices.Contains(allowed, code) {
			bad("code %s is not in the %s table", e.Get("code").Raw, version)
		}
		m := e.Get("message").String()
		first, _ := utf8.DecodeRuneInString(m)
		if m == "" || unicode.IsUpper(first) || strings.IndexFunc(m, unicode.IsControl) >= 0 || len(m) > 300 {
			bad("message %q is not one short lowercase line", m)
		}
		if d := e.Get("data"); d.Exists() {
			if !d.IsObject() {
				bad("data is not an object")
			}
			d.ForEach(func(k, _ gjson.Result) bool {
				// The schema's own key of -32021 is always allowed
				// (DESIGN: a contract cannot forbid what MCP requires).
				if !slices.Contains(vocabulary, k.Str) && (code != codeMissingCap || k.Str != "requiredCapabilities") {
					bad("data key %q is not in the vocabulary", k.Str)
				}
				return true
			})
			if errs := d.Get("errors"); errs.Exists() && !distilled(errs) {
				bad("data.errors is not distilled")
			}
		}
		// An id is readable when it is a string or an integer token; only
		// then must it come back, byte for byte.
		reqID := gjson.GetBytes(req, "id")
		readable := reqID.Type == gjson.String || reqID.Type == gjson.Number && !strings.ContainsAny(reqID.Raw, ".eE")
		switch {
		case readable && reply.Get("id").Raw != reqID.Raw && e.Get("code").Int() != codeParse:
			bad("error id %s is not the request id %s", reply.Get("id").Raw, reqID.Raw)
		case !readable && reply.Get("id").Exists():
			bad("error id %s for a request without a readable id", reply.Get("id").Raw)
		}
		return ps
	}
	if !reply.Get("id").Exists() { // a notification the server sent
		return ps
	}
	r := reply.Get("result")
	if !r.IsObject() {
		bad("result is not an object")
	}
	if id := gjson.GetBytes(req, "id"); reply.Get("id").Raw != id.Raw {
		bad("result id %s is not the request id %s", reply.Get("id").Raw, id.Raw)
	}
	if metaVersion.String() == version2026 {
		switch rt := r.Get("resultType").String(); {
		case rt == "input_required" && gjson.GetBytes(req, "method").Str == "tools/call":
			// The ask tool's first round (T-MRTR-2): a bare request
			// object per entry, and no cache hints (T-MRTR-4).
			r.Get("inputRequests").ForEach(func(_, ir gjson.Result) bool {
				if ir.Get("jsonrpc").Exists() || ir.Get("id").Exists() || ir.Get("method").Str != "elicitation/create" {
					bad("input request %s is not a bare elicitation/create", ir.Raw)
				}
				return true
			})
			if r.Get("ttlMs").Exists() || r.Get("cacheScope").Exists() {
				bad("input_required result with cache hints")
			}
		case rt != "complete":
			bad("2026-07-28 result without resultType complete")
		}
		if !r.Get(`_meta.io\.modelcontextprotocol/serverInfo.name`).Exists() {
			bad("2026-07-28 result without _meta serverInfo")
		}
		switch gjson.GetBytes(req, "method").String() {
		case "server/discover", "tools/list":
			if !r.Get("ttlMs").Exists() || !r.Get("cacheScope").Exists() {
				bad("2026-07-28 %s result without ttlMs and cacheScope", gjson.GetBytes(req, "method"))
			}
		}
	}
	return ps
}

// longValues are the strings the client sent that exceed the quote bound:
// every string value and member name in req, and every line of context
// (request headers, other stdio lines) longer than the bound.
func longValues(req []byte, context string) []string {
	var vs []string
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		if v.Type == gjson.String && len(v.Str) > quoteBound {
			vs = append(vs, v.Str)
		}
		if !v.IsObject() && !v.IsArray() {
			return // ForEach on a scalar yields the scalar itself
		}
		v.ForEach(func(k, e gjson.Result) bool {
			if len(k.Str) > quoteBound {
				vs = append(vs, k.Str)
			}
			walk(e)
			return true
		})
	}
	if gjson.ValidBytes(req) {
		walk(gjson.ParseBytes(req))
	}
	for _, l := range strings.Split(context, "\n") {
		if _, v, ok := strings.Cut(l, ": "); ok && len(v) > quoteBound {
			vs = append(vs, v)
		}
	}
	return vs
}

// distilled: one entry per location, locations sorted, problems sorted
// and unique.
func distilled(errs gjson.Result) bool {
	var locs []string
	ok := errs.IsArray()
	errs.ForEach(func(_, e gjson.Result) bool {
		locs = append(locs, e.Get("location").String())
		var probs []string
		for _, p := range e.Get("problems").Array() {
			probs = append(probs, p.String())
		}
		ok = ok && len(probs) > 0 && slices.IsSorted(probs) && len(slices.Compact(slices.Clone(probs))) == len(probs)
		return true
	})
	return ok && slices.IsSorted(locs) && len(slices.Compact(slices.Clone(locs))) == len(locs)
}

// TestFaultRepliesBreakContract shows the check above has teeth: for the
// faults that break a clause it judges, their replies in the case files
// are caught. (The other faults break rules it does not judge: which code
// fits which condition, HTTP statuses, silence.)
func TestFaultRepliesBreakContract(t *testing.T) {
	judged := []string{faultCodeZero, faultMultilineMessage, faultProseData, faultUnknownDataKey, faultEchoRequest,
		faultWrongID, faultMissingID, faultTextPlainError, faultUndistilledErrors, faultNoResultType,
		faultNotificationReply, faultGenericMessage}
	caught := map[string]int{}
	for _, c := range loadCases(t, "testdata/http/*.txtar") {
		for _, x := range c.exchanges {
			head, reqBody, _ := strings.Cut(x.request, "\n\n")
			for fault, want := range x.want {
				if fault == "" {
					continue
				}
				_, replyBody, _ := strings.Cut(want, "\n\n")
				msgs := replyMessages(replyBody)
				if strings.Contains(want, "Content-Type: text/plain") {
					msgs = [][]byte{[]byte(replyBody)}
				}
				for _, msg := range msgs {
					caught[fault] += len(contractProblems(legacyCase(c), []byte(reqBody), head, msg))
				}
			}
		}
	}
	for _, f := range judged {
		if caught[f] == 0 {
			t.Errorf("fault %s: its replies pass the contract check", f)
		}
	}
}
