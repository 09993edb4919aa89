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
	faultWrongCode           = "wrong-code"
	faultCodeZero            = "code-zero"
	faultParseAsInvalid      = "parse-as-invalid"
	faultMultilineMessage    = "multiline-message"
	faultProseData           = "prose-data"
	faultUnknownDataKey      = "unknown-data-key"
	faultEchoRequest         = "echo-request"
	faultWrongID             = "wrong-id"
	faultMissingID           = "missing-id"
	faultTextPlainError      = "text-plain-error"
	faultWrongStatus         = "wrong-status"
	faultUndistilledErrors   = "undistilled-errors"
	faultNoResultType        = "no-resultType"
	faultNotificationReply   = "notification-reply"
	faultHang                = "hang"
	faultCrash               = "crash"
	faultGenericMessage      = "generic-message"
	faultWrongVersionData    = "wrong-version-data"
	faultUncheckedName       = "unchecked-name"
	faultUncheckedParam      = "unchecked-param"
	faultEndedSession        = "ended-session-served"
	faultCursorIgnored       = "cursor-ignored"
	faultPromptUnknownServed = "unknown-prompt-served"
	faultEmptyContents       = "empty-contents"
	faultResourceInternal    = "resource-not-found-internal"
	faultCompletionNull      = "completion-null"
	faultLogLevelAccepted    = "log-level-accepted"
	faultAckWithoutID        = "ack-without-id"
	faultFormatInternal      = "format-internal-error"
	faultOriginUnchecked     = "origin-unchecked"
	faultHostUnchecked       = "host-unchecked"
	faultInitCodeZero        = "initialize-code-zero"
	faultLargeHeader         = "large-header-error"
	faultSessionless         = "sessionless-wrong-status"
	faultInitRefusesVersion  = "initialize-refuses-version"
	faultAcceptStrict        = "accept-strict"
	faultProgressAfter       = "progress-after-response"
	faultProgressTokenString = "progress-token-string"
	faultLogBelowLevel       = "log-below-level"
	faultBadInputRequest     = "bad-input-request"
	faultTamperedState       = "tampered-state-accepted"
	faultReplayedState       = "replayed-state-accepted"
	faultDiscoverNoVersions  = "discover-no-versions"
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
			"every 2026-07-28 result except server/discover's (tools, prompts, resources, completion): resultType is left out"},
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
		{faultUncheckedParam,
			"T-HDR-4 / T-HDR-6: an Mcp-Param-* header that is missing, differs from the argument it mirrors, or holds invalid characters is rejected with 400 + -32020",
			"HTTP only, 2026-07-28 tools/call of the weather tool: its Mcp-Param-Region and Mcp-Param-Days headers are not read, so a call with one missing, differing or invalid is served instead of rejected"},
		{faultEndedSession,
			"T-SESS-3: a request in an ended session gets HTTP 404",
			"HTTP only, 2025-xx, a request carrying a session id the server does not know (ended by DELETE, or never issued): it is served as if the session were alive"},
		{faultCursorIgnored,
			"T-PAGE-1: an invalid cursor gets -32602",
			"tools/list, prompts/list, resources/list or resources/templates/list with a cursor the server never issued: the first page is served instead of -32602"},
		{faultPromptUnknownServed,
			"T-PROMPT-1: an unknown prompt name gets -32602",
			"prompts/get of a prompt the server does not have, or a completion reference to one: a result (no messages, no values) instead of -32602"},
		{faultEmptyContents,
			"T-RES-2: a resource that does not exist is never answered with empty contents",
			"resources/read of a URI the server does not have: a result with contents [] instead of the not-found error"},
		{faultResourceInternal,
			"T-RES-1: a missing resource is -32602 in 2026-07-28 (MUST), -32002 before (SHOULD)",
			"resources/read of a URI the server does not have: -32603 instead of the not-found code"},
		{faultCompletionNull,
			"T-RPC-7 / T-COMP-1: completion/complete answers a CompleteResult object",
			"completion/complete with a valid reference: the result is null (seen in the wild)"},
		{faultLogLevelAccepted,
			"T-LOG-1 / T-LOG-3: an unknown log level gets -32602",
			"logging/setLevel (2025-xx) or a 2026-07-28 _meta logLevel naming a level that does not exist: accepted instead of -32602"},
		{faultAckWithoutID,
			"T-SUB-1 / T-META-3: the acknowledgment of subscriptions/listen carries the subscriptionId",
			"HTTP, 2026-07-28 subscriptions/listen: the acknowledgment's _meta lacks io.modelcontextprotocol/subscriptionId"},
		{faultFormatInternal,
			"the server stays up and a client's mistake is no 5xx (T-HTTP-11)",
			`tools/call of search with a string that breaks its format (contact without "@", filter.since not a date): -32603 with HTTP 500 instead of serving it (format is an annotation)`},
		{faultOriginUnchecked,
			"T-HTTP-14: a foreign Origin is refused (403 from 2025-11-25)",
			"HTTP, a request whose Origin is neither loopback nor the request's host: served instead of 403"},
		{faultHostUnchecked,
			"DNS-rebinding defence (T-HTTP-14, AMB-19): a server on a loopback address refuses a foreign Host",
			"HTTP, a request to a loopback address whose Host header names another host: served instead of 403"},
		{faultInitCodeZero,
			"contract clause 1: the error code comes from the version's table (the official go-sdk answers 0)",
			"initialize refused (invalid params, or a second initialize in a session): the error code is 0"},
		{faultLargeHeader,
			"a client's mistake is never a 5xx (T-HTTP-11)",
			"HTTP, a request whose headers exceed 32 KiB: HTTP 500 with a -32603 error instead of serving it"},
		{faultSessionless,
			"T-SESS-2: a server that requires sessions refuses a request without Mcp-Session-Id with 400",
			"HTTP, 2025-xx, a request that names a 2025 MCP-Protocol-Version but carries no Mcp-Session-Id: refused 404, an ended session's status (T-SESS-3), instead of 400"},
		{faultInitRefusesVersion,
			"T-LIFE-2 / AMB-3: initialize for an unsupported version is answered with a result naming a supported one",
			"initialize for a version the server does not speak: -32602 with data {supported, requested} (the lifecycle page's error example) instead of a result"},
		{faultAcceptStrict,
			"T-HTTP-2 / AMB-17: the spec sets no reaction to a narrower Accept; refusing it is the common SDK choice",
			"HTTP POST whose Accept does not list both application/json and text/event-stream: 406 with -32600 instead of serving it"},
		{faultProgressAfter,
			"T-PROG-1: progress notifications stop when the request completes",
			"a tools/call that asked for progress: its notifications/progress comes after the response instead of before it (on the POST's SSE stream, or stdout)"},
		{faultProgressTokenString,
			"T-PROG-1: notifications/progress names the progressToken the request gave, with its JSON type",
			`a tools/call that asked for progress with an integer progressToken, e.g. 7: the notification names the string "7"`},
		{faultLogBelowLevel,
			"T-LOG-2: log messages go out only at or above the request's logLevel",
			`2026-07-28 tools/call of the add tool whose _meta sets a logLevel: its notifications/message is at level "debug" instead of the level asked for`},
		{faultBadInputRequest,
			"T-MRTR-2: each inputRequests entry is a bare {method, params} object",
			`2026-07-28 tools/call of the ask tool declaring elicitation: the input_required result's elicitation/create entry also carries "jsonrpc" and "id"`},
		{faultTamperedState,
			"T-MRTR-5: a requestState that fails verification is rejected",
			"2026-07-28 tools/call of the ask tool answering its elicitation: any requestState is taken, so a tampered one (or one issued for other arguments) completes the call instead of -32602"},
		{faultReplayedState,
			"T-MRTR-6: a requestState presented on a request other than its own is rejected",
			"2026-07-28 tools/call of the ask tool: the requestState is bound to the tool but not to its subject argument, so a state issued for a call with another subject (or none) completes the call instead of -32602; states of calls without a subject are unchanged"},
		{faultDiscoverNoVersions,
			"T-LIFE-8: a DiscoverResult lists the versions the server supports (supportedVersions)",
			"server/discover: the result leaves supportedVersions out, so a client cannot tell the server speaks 2026-07-28 (the checker goes on with initialize, 2025-11-25)"},
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
