package checks

import "strings"

// All lists every check, sorted by ID. IDs are never reused; a retired
// check keeps a comment here with the reason.
// Retired: (none yet)
func All() []*Check {
	return []*Check{
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
