package refserver

import (
	"errors"
	"fmt"
	"strings"
)

// A Fault is a deliberate defect the server can be started with. Each one
// breaks exactly one rule, in one documented situation, and leaves every
// other reply byte-for-byte as the clean server sends it, so that exactly
// the matching check of the checker fails.
type Fault struct {
	Name   string // the value of Options.Fault
	Breaks string // the rule broken: a spec-digest ID (T-…) or a contract clause
	When   string // the situation it fires in, and what it changes there
}

// Fault names. The server compares Options.Fault against these.
const (
	faultWrongCode         = "wrong-code"
	faultCodeZero          = "code-zero"
	faultParseAsInvalid    = "parse-as-invalid"
	faultMultilineMessage  = "multiline-message"
	faultProseData         = "prose-data"
	faultUnknownDataKey    = "unknown-data-key"
	faultEchoRequest       = "echo-request"
	faultWrongID           = "wrong-id"
	faultMissingID         = "missing-id"
	faultTextPlainError    = "text-plain-error"
	faultWrongStatus       = "wrong-status"
	faultUndistilledErrors = "undistilled-errors"
	faultNoResultType      = "no-resultType"
	faultNotificationReply = "notification-reply"
	faultHang              = "hang"
	faultCrash             = "crash"
	faultGenericMessage    = "generic-message"
	faultWrongVersionData  = "wrong-version-data"
	faultUncheckedName     = "unchecked-name"
	faultEndedSession      = "ended-session-served"
)

// Faults lists every fault the server knows, in a stable order. The list is
// built on each call so that no caller can change what New accepts.
func Faults() []Fault {
	return []Fault{
		{faultWrongCode,
			"T-ERR-3: an unknown method is answered -32601 (contract clause 1: the code fits the condition)",
			"a request for an unknown method: the error code is -32603 instead of -32601; message and HTTP status (404 in 2026-07-28, 200 in 2025-xx) unchanged"},
		{faultCodeZero,
			"contract clause 1: the error code comes from the version's error-code table",
			"tools/call of an unknown tool: the error code is 0 instead of -32602"},
		{faultParseAsInvalid,
			"T-ERR-1: bytes that are not JSON are answered -32700",
			"a message that is not valid JSON: the error code is -32600 instead of -32700"},
		{faultMultilineMessage,
			"contract clause 2: error.message is a single line (T-RPC-8)",
			"a request for an unknown method: the message gains a second line"},
		{faultProseData,
			"contract clause 3: error.data keys come from the vocabulary and no value is prose",
			`tools/call of an unknown tool: the error gains data {"detail":"The tool you asked for does not exist."}`},
		{faultUnknownDataKey,
			"contract clause 3: error.data keys come from the closed vocabulary",
			`a request for an unknown method: the error gains data {"stack":"refserver.dispatch:1"}`},
		{faultEchoRequest,
			"contract no-echo rule: a quoted request value is bounded to 64 bytes",
			"any reply that quotes a request value (unknown method or tool name, header value, version) longer than 64 bytes: the value is quoted in full instead of truncated"},
		{faultWrongID,
			"T-RPC-5: the reply id has the request id's value and JSON type",
			`a request whose id is a string of ASCII digits, e.g. "7": the reply id is the number 7`},
		{faultMissingID,
			"T-RPC-9: an error reply carries the request id when it could be read",
			"a request for an unknown method: the error reply has no id"},
		{faultTextPlainError,
			"contract HTTP rule: a rejection carries a JSON-RPC error body (T-COMPAT-1, T-HTTP-5)",
			"HTTP only, a body that cannot be parsed (not JSON, not UTF-8): the 400 reply is text/plain (what http.Error writes) instead of the -32700 JSON-RPC error"},
		{faultWrongStatus,
			"T-HDR-2 / T-ERR-12: a header mismatch is rejected with HTTP 400",
			"HTTP only, 2026-07-28, a -32020 header rejection: the HTTP status is 200 instead of 400; the body is unchanged"},
		{faultUndistilledErrors,
			"contract distilled rule: data.errors is sorted by location, one entry per location, problems de-duplicated",
			"every error carrying data.errors (invalid params, missing _meta, malformed tools/call, 2025-06-18 argument validation): the entries come in reverse order, each twice, each problem twice"},
		{faultNoResultType,
			"T-LIFE-10: every 2026-07-28 result has resultType",
			"2026-07-28 tools/call that returns a result (valid or isError): resultType is left out"},
		{faultNotificationReply,
			"T-RPC-10 / T-HTTP-4: a notification gets no reply (HTTP 202 with an empty body)",
			`any notification: the server answers {"jsonrpc":"2.0","id":null,"result":{…}} (HTTP 200), the result shaped for the era`},
		{faultHang,
			"JSON-RPC §5: every request is answered",
			"tools/call of the add tool with valid arguments (any version): no reply is ever sent; HTTP blocks until the request context ends or Close is called, stdio goes on reading and never answers that id"},
		{faultCrash,
			"the server stays up: a request never kills the transport",
			"tools/call of the add tool with valid arguments (any version): HTTP closes the connection without a response; ServeStdio returns ErrCrash"},
		{faultGenericMessage,
			"contract clause 2: error.message states the cause, not only the generic string",
			`tools/call of an unknown tool: message is "Invalid params" and the cause moves to data.errors`},
		{faultWrongVersionData,
			"T-ERR-14 / T-LIFE-9: -32022 data.requested is the version the client sent",
			"2026-07-28 request whose _meta protocolVersion is not served: data.requested names 2026-07-28 instead of the version sent"},
		{faultUncheckedName,
			"T-HDR-2: an Mcp-Name header that differs from the body is rejected with 400 + -32020",
			"HTTP only, 2026-07-28 tools/call, prompts/get or resources/read whose Mcp-Name differs from the body (params.name or params.uri): the request is served instead of rejected"},
		{faultEndedSession,
			"T-SESS-3: a request in an ended session gets HTTP 404",
			"HTTP only, 2025-xx, a request carrying the id of a session ended by DELETE: it is served as if the session were alive"},
	}
}

// ErrUnknownFault is returned by New for a fault name not in Faults.
var ErrUnknownFault = errors.New("unknown fault")

// ErrCrash is what ServeStdio returns when the crash fault fires: a real
// server would have died, and the caller (the CLI's stdio demo) should exit
// as a crashed process would.
var ErrCrash = errors.New("crash fault: stopped at a tools/call request")

func checkFault(name string) error {
	if name == "" {
		return nil
	}
	var names []string
	for _, f := range Faults() {
		if f.Name == name {
			return nil
		}
		names = append(names, f.Name)
	}
	return fmt.Errorf("%w %q (known: %s)", ErrUnknownFault, name, strings.Join(names, ", "))
}
