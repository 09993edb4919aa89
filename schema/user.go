package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wymcp/wymcp-check/envelope"
)

// maxUserSchemaBytes bounds a --schema file; the official schemas are
// about 200 KB.
const maxUserSchemaBytes = 16 << 20

const (
	userSchemaURL      = "mem://wymcp/user-schema.json"
	defMessage         = "JSONRPCMessage"
	defInputRequired   = "InputRequiredResult"
	resultTypeInputReq = "input_required"
)

// ResultTypeNames maps each method whose result the checker validates to
// the name of its result type in the official MCP schemas; a
// [TaskAugmented] method maps to the type of a result that carries task
// (a result without task is of the plain method's type). It returns a
// fresh map each call; callers may change it and pass it to
// LoadUserSchema.
func ResultTypeNames() map[string]string {
	return map[string]string{
		"server/discover":           "DiscoverResult",
		"initialize":                "InitializeResult",
		"ping":                      "EmptyResult",
		"tools/list":                "ListToolsResult",
		"tools/call":                "CallToolResult",
		"resources/list":            "ListResourcesResult",
		"resources/read":            "ReadResourceResult",
		"resources/templates/list":  "ListResourceTemplatesResult",
		"prompts/list":              "ListPromptsResult",
		"prompts/get":               "GetPromptResult",
		"completion/complete":       "CompleteResult",
		"subscriptions/listen":      "SubscriptionsListenResult",
		"tasks/get":                 "GetTaskResult",
		"tasks/list":                "ListTasksResult",
		"tasks/result":              "GetTaskPayloadResult",
		"tasks/cancel":              "CancelTaskResult",
		TaskAugmented("tools/call"): "CreateTaskResult",
	}
}

// ServerMessageTypeNames maps each method of a notification or request a
// server sends besides its response to the name of its type in the
// official MCP schemas; a file that lacks a type (an older version, or
// 2026-07-28's requests, which the server never sends) leaves the method
// unvalidated. It returns a fresh map each call.
func ServerMessageTypeNames() map[string]string {
	return map[string]string{
		"notifications/cancelled":                  "CancelledNotification",
		"notifications/progress":                   "ProgressNotification",
		"notifications/message":                    "LoggingMessageNotification",
		"notifications/resources/updated":          "ResourceUpdatedNotification",
		"notifications/resources/list_changed":     "ResourceListChangedNotification",
		"notifications/prompts/list_changed":       "PromptListChangedNotification",
		"notifications/tools/list_changed":         "ToolListChangedNotification",
		"notifications/elicitation/complete":       "ElicitationCompleteNotification",
		"notifications/tasks/status":               "TaskStatusNotification",
		"notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
		"ping":                   "PingRequest",
		"sampling/createMessage": "CreateMessageRequest",
		"elicitation/create":     "ElicitRequest",
		"roots/list":             "ListRootsRequest",
		"tasks/get":              "GetTaskRequest",
		"tasks/result":           "GetTaskPayloadRequest",
		"tasks/cancel":           "CancelTaskRequest",
		"tasks/list":             "ListTasksRequest",
	}
}

// A UserSchema is a protocol schema the user supplied with --schema, for
// example the official schema.json of a version. It is immutable and safe
// for concurrent use.
type UserSchema struct {
	path          string
	revision      string // see Revision
	message       *jsonschema.Schema
	results       map[string]*jsonschema.Schema
	inputRequired *jsonschema.Schema
	// messages: a server-sent message's method → its official type
	// (ServerMessageTypeNames), for the types the file defines
	messages map[string]*jsonschema.Schema
	// recursions bound the replies each compiled type validates by the
	// work its recursion would do on them (checkDepth).
	recursions map[*jsonschema.Schema]*recursion
}

// LoadUserSchema reads and compiles the protocol schema in the file at
// path. Its $defs (or draft-07 definitions) must hold JSONRPCMessage,
// which every reply is validated against; resultTypes maps methods to
// the $defs type their result is validated against (nil means
// ResultTypeNames), and methods whose type the file lacks are skipped.
// The messages a server sends besides its response are validated against
// the types ServerMessageTypeNames names, where the file has them.
// The dialect is the file's $schema, 2020-12 when it has none. Nothing
// outside the file is fetched. Errors name the file and the cause.
func LoadUserSchema(path string, resultTypes map[string]string) (*UserSchema, error) {
	if resultTypes == nil {
		resultTypes = ResultTypeNames()
	}
	fail := func(err error) (*UserSchema, error) {
		return nil, fmt.Errorf("schema file %s: %w", path, err)
	}
	raw, err := readUserSchemaFile(path)
	if err != nil {
		return fail(err)
	}
	doc, err := decode(raw)
	if errors.Is(err, errNotJSON) {
		return fail(describeSyntax(raw, err))
	}
	if err != nil {
		return fail(err)
	}
	if ptr, pattern, why := badPattern(doc); why != nil {
		return fail(fmt.Errorf("pattern %s at %s is no ECMA-262 regular expression: %w", quote(pattern), ptr, why))
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return fail(fmt.Errorf("not a json object"))
	}
	key, defs := defsOf(obj)
	if defs == nil {
		return fail(fmt.Errorf("no %s in $defs or definitions", defMessage))
	}
	c := newCompiler(jsonschema.Draft2020)
	// The library asserts format in a draft-07 file (the official
	// 2025-03-26 and 2025-06-18 schemas are), and only annotates it in a
	// 2020-12 one: the same reply would pass or fail by the file's
	// dialect. Format is an annotation under every dialect here, as for
	// tool schemas.
	annotateFormats(c, doc)
	if err := c.AddResource(userSchemaURL, doc); err != nil {
		return fail(err)
	}
	u := &UserSchema{path: path, revision: revisionOf(defs), results: map[string]*jsonschema.Schema{}, messages: map[string]*jsonschema.Schema{},
		recursions: map[*jsonschema.Schema]*recursion{}}
	compile := func(name string) (*jsonschema.Schema, error) {
		sch, err := c.Compile(userSchemaURL + "#/" + key + "/" + name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, describeCompileError(err, userSchemaURL, doc))
		}
		// As for a tool schema (compileTool): what its references make
		// a validation do is bounded before any reply meets it.
		if err := checkVisits(sch); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if _, ok := u.recursions[sch]; !ok {
			u.recursions[sch] = newRecursion(sch)
		}
		return sch, nil
	}
	if u.message, err = compile(defMessage); err != nil {
		return fail(err)
	}
	for method, name := range resultTypes {
		if _, ok := defs[name]; !ok {
			continue
		}
		if u.results[method], err = compile(name); err != nil {
			return fail(err)
		}
	}
	for method, name := range ServerMessageTypeNames() {
		if _, ok := defs[name]; !ok {
			continue
		}
		if u.messages[method], err = compile(name); err != nil {
			return fail(err)
		}
	}
	if _, ok := defs[defInputRequired]; ok {
		if u.inputRequired, err = compile(defInputRequired); err != nil {
			return fail(err)
		}
	}
	return u, nil
}

// defsOf finds the definitions that hold JSONRPCMessage: $defs (2019-09
// and later) or definitions (draft-07 and earlier).
func defsOf(doc map[string]any) (string, map[string]any) {
	for _, key := range []string{"$defs", "definitions"} {
		if defs, ok := doc[key].(map[string]any); ok {
			if _, ok := defs[defMessage]; ok {
				return key, defs
			}
		}
	}
	return "", nil
}

// Path is the file the schema was loaded from.
func (u *UserSchema) Path() string { return u.path }

// Revision is the MCP version whose official schema the file is, told
// from the names it defines (revisionOf); "" when it is none of them (a
// schema of the user's own, an official file with any definition removed,
// or one merged from two versions), which then describes every version.
func (u *UserSchema) Revision() string { return u.revision }

// revisionOf tells an official schema's version by its definition names:
// a file is of a revision only when it defines every name of that
// revision's official file and no name that only other revisions define.
// A handful of marks would take a small or trimmed schema of the user's
// own for an official one and skip it for the other versions, a false
// pass; a file that falls short is the user's own and applies to every
// version. The official files name no version ($id, title) of their own.
func revisionOf(defs map[string]any) string {
	found := ""
	for _, r := range officialRevisions {
		all := true
		for n := range r.names {
			if _, ok := defs[n]; !ok {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		for n := range defs {
			if officialNames[n] && !r.names[n] {
				all = false
				break
			}
		}
		if all {
			if found != "" {
				return ""
			}
			found = r.version
		}
	}
	return found
}

type officialRevision struct {
	version string
	names   map[string]bool
}

// officialRevisions holds the definition names of each official schema
// file, written as the changes from the revision before;
// TestOfficialRevisionNames pins them to the files.
var officialRevisions, officialNames = buildOfficialRevisions([]struct {
	version        string
	added, dropped string
}{
	{envelope.V20250326, `Annotations AudioContent BlobResourceContents CallToolRequest
		CallToolResult CancelledNotification ClientCapabilities ClientNotification
		ClientRequest ClientResult CompleteRequest CompleteResult CreateMessageRequest
		CreateMessageResult Cursor EmbeddedResource EmptyResult GetPromptRequest
		GetPromptResult ImageContent Implementation InitializeRequest InitializeResult
		InitializedNotification JSONRPCBatchRequest JSONRPCBatchResponse JSONRPCError
		JSONRPCMessage JSONRPCNotification JSONRPCRequest JSONRPCResponse
		ListPromptsRequest ListPromptsResult ListResourceTemplatesRequest
		ListResourceTemplatesResult ListResourcesRequest ListResourcesResult
		ListRootsRequest ListRootsResult ListToolsRequest ListToolsResult LoggingLevel
		LoggingMessageNotification ModelHint ModelPreferences Notification
		PaginatedRequest PaginatedResult PingRequest ProgressNotification ProgressToken
		Prompt PromptArgument PromptListChangedNotification PromptMessage
		PromptReference ReadResourceRequest ReadResourceResult Request RequestId
		Resource ResourceContents ResourceListChangedNotification ResourceReference
		ResourceTemplate ResourceUpdatedNotification Result Role Root
		RootsListChangedNotification SamplingMessage ServerCapabilities
		ServerNotification ServerRequest ServerResult SetLevelRequest SubscribeRequest
		TextContent TextResourceContents Tool ToolAnnotations
		ToolListChangedNotification UnsubscribeRequest`, ``},
	{envelope.V20250618, `BaseMetadata BooleanSchema ContentBlock ElicitRequest ElicitResult
		EnumSchema NumberSchema PrimitiveSchemaDefinition ResourceLink
		ResourceTemplateReference StringSchema`,
		`JSONRPCBatchRequest JSONRPCBatchResponse ResourceReference`},
	{envelope.V20251125, `CallToolRequestParams CancelTaskRequest CancelTaskResult
		CancelledNotificationParams CompleteRequestParams CreateMessageRequestParams
		CreateTaskResult ElicitRequestFormParams ElicitRequestParams
		ElicitRequestURLParams ElicitationCompleteNotification Error
		GetPromptRequestParams GetTaskPayloadRequest GetTaskPayloadResult
		GetTaskRequest GetTaskResult Icon Icons InitializeRequestParams
		JSONRPCErrorResponse JSONRPCResultResponse LegacyTitledEnumSchema
		ListTasksRequest ListTasksResult LoggingMessageNotificationParams
		MultiSelectEnumSchema NotificationParams PaginatedRequestParams
		ProgressNotificationParams ReadResourceRequestParams RelatedTaskMetadata
		RequestParams ResourceRequestParams ResourceUpdatedNotificationParams
		SamplingMessageContentBlock SetLevelRequestParams SingleSelectEnumSchema
		SubscribeRequestParams Task TaskAugmentedRequestParams TaskMetadata TaskStatus
		TaskStatusNotification TaskStatusNotificationParams
		TitledMultiSelectEnumSchema TitledSingleSelectEnumSchema ToolChoice
		ToolExecution ToolResultContent ToolUseContent URLElicitationRequiredError
		UnsubscribeRequestParams UntitledMultiSelectEnumSchema
		UntitledSingleSelectEnumSchema`, `JSONRPCError`},
	{envelope.V20260728, `CacheableResult CallToolResultResponse CompleteResultResponse
		DiscoverRequest DiscoverResult DiscoverResultResponse GetPromptResultResponse
		HeaderMismatchError InputRequest InputRequests InputRequiredResult
		InputResponse InputResponseRequestParams InputResponses InternalError
		InvalidParamsError InvalidRequestError JSONArray JSONObject JSONValue
		ListPromptsResultResponse ListResourceTemplatesResultResponse
		ListResourcesResultResponse ListToolsResultResponse MetaObject
		MethodNotFoundError MissingRequiredClientCapabilityError
		NotificationMetaObject ParseError ReadResourceResultResponse
		RequestMetaObject ResultMetaObject ResultType SubscriptionFilter
		SubscriptionsAcknowledgedNotification
		SubscriptionsAcknowledgedNotificationParams SubscriptionsListenRequest
		SubscriptionsListenRequestParams SubscriptionsListenResult
		SubscriptionsListenResultMetaObject SubscriptionsListenResultResponse
		UnsupportedProtocolVersionError`,
		`CancelTaskRequest CancelTaskResult CreateTaskResult
		ElicitationCompleteNotification GetTaskPayloadRequest GetTaskPayloadResult
		GetTaskRequest GetTaskResult InitializeRequest InitializeRequestParams
		InitializeResult InitializedNotification ListTasksRequest ListTasksResult
		PingRequest RelatedTaskMetadata RootsListChangedNotification ServerRequest
		SetLevelRequest SetLevelRequestParams SubscribeRequest SubscribeRequestParams
		Task TaskAugmentedRequestParams TaskMetadata TaskStatus TaskStatusNotification
		TaskStatusNotificationParams ToolExecution URLElicitationRequiredError
		UnsubscribeRequest UnsubscribeRequestParams`},
})

func buildOfficialRevisions(steps []struct {
	version        string
	added, dropped string
}) ([]officialRevision, map[string]bool) {
	var out []officialRevision
	every := map[string]bool{}
	cur := map[string]bool{}
	for _, s := range steps {
		cur = maps.Clone(cur)
		for _, n := range strings.Fields(s.dropped) {
			delete(cur, n)
		}
		for _, n := range strings.Fields(s.added) {
			cur[n] = true
			every[n] = true
		}
		out = append(out, officialRevision{s.version, cur})
	}
	return out, every
}

// ValidateReply validates raw, a whole reply to a request of method,
// against JSONRPCMessage and, when it carries a result and the file
// defines the method's result type, the result against that type (an
// input_required result against InputRequiredResult when the file has
// it). An error response's id may be absent or null, as under the
// checker's own schemas (withReadableErrorID). It returns nil when the
// reply is valid.
func (u *UserSchema) ValidateReply(method string, raw []byte) ([]envelope.DistilledEntry, error) {
	v, bad, err := decodeMessage(raw)
	if bad != nil || err != nil {
		return bad, err
	}
	depth := envelope.Depth(raw)
	if err := checkDepth(u.recursions[u.message], depth); err != nil {
		return nil, err
	}
	v = withReadableErrorID(v)
	out := Distill(u.message.Validate(v))
	obj, ok := v.(map[string]any)
	if !ok {
		return out, nil
	}
	result, ok := obj["result"]
	if _, isError := obj["error"]; !ok || isError {
		return out, nil
	}
	sch := u.results[method]
	r, _ := result.(map[string]any)
	if base, ok := strings.CutSuffix(method, taskSuffix); ok {
		// A server that accepted the task answers its CreateTaskResult;
		// one that did not declare task support, the plain result.
		if _, hasTask := r["task"]; !hasTask || sch == nil {
			sch = u.results[base]
		}
	}
	if r != nil && r["resultType"] == resultTypeInputReq && u.inputRequired != nil {
		sch = u.inputRequired
	}
	if sch == nil {
		return out, nil
	}
	// (The reply's depth: its result's is at most that.)
	if err := checkDepth(u.recursions[sch], depth); err != nil {
		return nil, err
	}
	return mergeEntries(out, prefixEntries("/result", Distill(sch.Validate(result)))), nil
}

// placeholderID stands in for an error response's absent or null id.
var placeholderID = json.Number("0")

// withReadableErrorID gives an error response whose id is absent or null
// an id the official schemas accept, as the checker's own schemas accept
// both (schema/protocol, errorId): JSON-RPC 2.0 §5 wants null when the
// request's id could not be read, 2025-11-25 and later leave it out, and
// the official schemas refuse one or the other (T-RPC-9, AMB-1). Whether
// the id fits the request is the checks' to judge, not the schema's; the
// rest of the response is validated as it stands.
func withReadableErrorID(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	_, isError := obj["error"]
	_, isResult := obj["result"]
	if id, has := obj["id"]; !isError || isResult || (has && id != nil) {
		return v
	}
	out := make(map[string]any, len(obj)+1)
	maps.Copy(out, obj)
	out["id"] = placeholderID
	return out
}

// ValidateServerMessage validates raw, one whole message the server sent
// besides its response, against JSONRPCMessage and the official type of
// method (ServerMessageTypeNames). covered is false when the file defines
// no type for method: nothing is validated then, not even the envelope,
// which RPC1002 and PRO1003 judge for every message.
func (u *UserSchema) ValidateServerMessage(method string, raw []byte) (problems []envelope.DistilledEntry, covered bool, err error) {
	sch, ok := u.messages[method]
	if !ok {
		return nil, false, nil
	}
	v, bad, err := decodeMessage(raw)
	if bad != nil || err != nil {
		return bad, true, err
	}
	depth := envelope.Depth(raw)
	for _, s := range []*jsonschema.Schema{u.message, sch} {
		if err := checkDepth(u.recursions[s], depth); err != nil {
			return nil, true, err
		}
	}
	return mergeEntries(Distill(u.message.Validate(v)), Distill(sch.Validate(v))), true, nil
}
