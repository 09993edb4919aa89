package schema

import (
	"testing"
)

// TestDeliberateDifferences pins, on hand-made instances, the places where
// the project's schemas are stricter or looser than the official ones on
// purpose. Each row is checked against both schemas, so a row that stops
// being a difference fails.
func TestDeliberateDifferences(t *testing.T) {
	cases := []struct {
		version, typ, instance string
		oursValid              bool
		why                    string
	}{
		{"2026-07-28", "JSONRPCResultResponse",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"},"error":{"code":1,"message":"m"}}`,
			false, "exactly one of result and error (T-RPC-6)"},
		{"2026-07-28", "JSONRPCErrorResponse",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m"},"result":{"resultType":"complete"}}`,
			false, "exactly one of result and error (T-RPC-6)"},
		{"2026-07-28", "JSONRPCErrorResponse",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
			true, "null id for an unreadable request (T-RPC-9, AMB-1)"},
		{"2026-07-28", "InputRequiredResult",
			`{"resultType":"input_required","inputRequests":{"a":{"jsonrpc":"2.0","id":1,"method":"roots/list"}}}`,
			false, "input requests are {method, params}, not JSON-RPC messages (T-MRTR-2)"},
		{"2026-07-28", "InputRequiredResult",
			`{"resultType":"complete","requestState":"s"}`,
			false, "an InputRequiredResult says input_required"},
		{"2026-07-28", "ListToolsResult",
			`{"resultType":"input_required","tools":[],"ttlMs":0,"cacheScope":"public"}`,
			false, "tools/list never answers input_required (T-MRTR-1)"},
		{"2026-07-28", "UnsupportedProtocolVersionError",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m","data":{"supported":[],"requested":"1900-01-01"}}}`,
			false, "data.supported is non-empty (T-ERR-14)"},
		{"2025-11-25", "EmptyResult", `{"extra":1}`,
			false, "ping answers {} with _meta at most (T-LIFE-5)"},
		{"2025-11-25", "CompleteResult", `{"completion":{"values":[` + repeatJSON(`"v"`, 101) + `]}}`,
			false, "at most 100 completion values (T-COMP-1)"},
		{"2025-11-25", "URLElicitationRequiredError",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"m","data":{"elicitations":[]}}}`,
			false, "data.elicitations is non-empty (T-ERR-7)"},
		{"2025-11-25", "CancelTaskResult",
			`{"taskId":"t","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null}`,
			false, "tasks/cancel answers the task after moving it to cancelled (tasks.mdx § Task Cancellation)"},
		{"2025-11-25", "GetTaskPayloadResult", `{"anything":1}`,
			false, "a server's task is a tools/call, so tasks/result answers its CallToolResult (tasks.mdx § Result Retrieval)"},
		{"2025-11-25", "GetTaskPayloadResult", `{"content":[]}`,
			false, "tasks/result carries io.modelcontextprotocol/related-task in _meta (tasks.mdx § Related Task Metadata)"},
		{"2025-11-25", "JSONRPCErrorResponse",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
			true, "null id for an unreadable request (T-RPC-9)"},
		{"2025-06-18", "JSONRPCError",
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`,
			true, "absent id for an unreadable request, as in later versions (T-RPC-9)"},
		{"2025-06-18", "JSONRPCError",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
			true, "null id for an unreadable request (T-RPC-9)"},
		{"2025-06-18", "JSONRPCResponse",
			`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
			false, "exactly one of result and error (T-RPC-6)"},
	}
	offs := map[string]*official{}
	ourSets := map[string]*ours{}
	for _, c := range cases {
		if offs[c.version] == nil {
			offs[c.version] = loadOfficial(t, c.version)
			ourSets[c.version] = loadOurs(t, c.version)
		}
		v, err := decode([]byte(c.instance))
		if err != nil {
			t.Fatalf("%s %s: %v", c.version, c.typ, err)
		}
		oursValid := ourSets[c.version].compile(t, c.typ).Validate(v) == nil
		officialValid := offs[c.version].compile(t, c.typ).Validate(v) == nil
		if oursValid != c.oursValid {
			t.Errorf("%s %s (%s): ours valid=%v, want %v", c.version, c.typ, c.why, oursValid, c.oursValid)
		}
		if officialValid == c.oursValid {
			t.Errorf("%s %s (%s): the official schema agrees (valid=%v); not a difference any more", c.version, c.typ, c.why, officialValid)
		}
	}
}

func repeatJSON(item string, n int) string {
	out := make([]byte, 0, n*(len(item)+1))
	for i := range n {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, item...)
	}
	return string(out)
}
