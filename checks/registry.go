package checks

import (
	"fmt"
	"path"
	"strings"
)

// All lists every check, sorted by ID. IDs are never reused; a retired
// check keeps a comment here with the reason.
// Retired: (none yet)
func All() []*Check {
	return []*Check{
		ClientEnvelope,        // CLI1001
		ClientRequestID,       // CLI1002
		ClientIDReuse,         // CLI1003
		ClientAnswers,         // CLI1004
		ClientLifecycle,       // CLI1005
		ClientVersionHeader,   // CLI1006
		ClientSessionHeader,   // CLI1007
		ClientStandardHeaders, // CLI1008
		ClientModernMeta,      // CLI1009
		ClientAcceptHeaders,   // CLI1010
		ClientSchemaValid,     // CLI1011
		ClientToolArguments,   // CLI1012
		ClientCapabilityUse,   // CLI1013
		ClientRetryState,      // CLI1014

		CodeInTable,         // ERR1001
		CodeFits,            // ERR1002
		MessageOneLine,      // ERR2001
		MessageConcise,      // ERR2002
		MessageNotGeneric,   // ERR2003
		DataObject,          // ERR3001
		DataKeys,            // ERR3002
		DataNoProse,         // ERR3003
		DataShapes,          // ERR3004
		NoEcho,              // ERR4001
		NoEchoInToolError,   // ERR4002
		Distilled,           // ERR5001
		ErrorStatusBody,     // HTTP1001
		StatusFits,          // HTTP1002
		ReplyContentType,    // HTTP1003
		SessionAndAuth,      // HTTP1004
		SSEStream,           // HTTP1005
		WellFormedHTTP,      // HTTP1006
		Refused,             // PRO1001
		ResultType,          // PRO1002
		ServerMessages,      // PRO1003
		ToolRefusal,         // PRO1004
		Survives,            // PRO1005
		MetaKeys,            // PRO1006
		Negotiation,         // PRO1007
		MethodResults,       // PRO1008
		Subscriptions,       // PRO1009
		ToolListing,         // PRO1010
		ExitsAtEOF,          // PRO1011
		ReplyIsJSON,         // RPC1001
		JSONRPCVersion,      // RPC1002
		ResultXorError,      // RPC1003
		IDEcho,              // RPC1004
		ErrorObject,         // RPC1005
		OneReply,            // RPC1006
		NotificationNoReply, // RPC1007
		ResultObject,        // RPC1008
		SchemaValid,         // SCH1001
		ToolSchemas,         // SCH1002
		StructuredContent,   // SCH1003
		ServerSchemaValid,   // SCH1004
	}
}

// Lookup finds a check by ID, case-insensitively; nil when unknown.
func Lookup(id string) *Check {
	for _, c := range All() {
		if strings.EqualFold(c.ID, id) {
			return c
		}
	}
	return nil
}

// Select reads a check selection: a comma list of check IDs, globs
// (ERR4*), area names (echo) and "all", each optionally prefixed with
// "-" to remove it. It starts from every check when the list is empty or
// begins with a removal, from none otherwise; the result keeps registry
// order. An item that selects nothing is an error naming it.
func Select(spec string) ([]*Check, error) {
	all := All()
	items := strings.Split(spec, ",")
	on := map[string]bool{}
	if strings.TrimSpace(spec) == "" || strings.HasPrefix(strings.TrimSpace(items[0]), "-") {
		for _, c := range all {
			on[c.ID] = true
		}
	}
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		neg := strings.HasPrefix(item, "-")
		pat := strings.TrimPrefix(item, "-")
		hit := false
		for _, c := range all {
			ok, err := path.Match(strings.ToUpper(pat), c.ID)
			if err != nil {
				return nil, fmt.Errorf("check selection %q: %w", item, err)
			}
			if ok || strings.EqualFold(pat, "all") || strings.EqualFold(pat, string(c.Area)) {
				on[c.ID], hit = !neg, true
			}
		}
		if !hit {
			return nil, fmt.Errorf("check selection %q names no check, area or glob of checks (wymcp-check list shows them)", item)
		}
	}
	var out []*Check
	for _, c := range all {
		if on[c.ID] {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("check selection %q leaves no check", spec)
	}
	return out, nil
}
