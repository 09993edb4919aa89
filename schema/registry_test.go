package schema

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wymcp/wymcp-check/envelope"
)

type entries = []envelope.DistilledEntry

func TestValidateReply(t *testing.T) {
	cases := []struct {
		name, version, method, reply string
		want                         entries
	}{
		{"discover ok", "2026-07-28", "server/discover",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`,
			nil},
		{"discover without cache hints", "2026-07-28", "server/discover",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'cacheScope'", "missing property 'ttlMs'"}}}},
		{"bad cache hints", "2026-07-28", "tools/list",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[],"ttlMs":1.5,"cacheScope":"shared"}}`,
			entries{
				{Location: "/result/cacheScope", Problems: []string{"must be one of 'public', 'private'"}},
				{Location: "/result/ttlMs", Problems: []string{"got number, want integer"}},
			}},
		{"input_required on a list", "2026-07-28", "tools/list",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","tools":[],"ttlMs":0,"cacheScope":"public"}}`,
			entries{{Location: "/result/resultType", Problems: []string{"must be 'complete'"}}}},
		{"input_required tool call", "2026-07-28", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"abc"}}`,
			nil},
		{"input_required without anything", "2026-07-28", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'inputRequests' or 'requestState'"}}}},
		{"structured content may be an array in 2026", "2026-07-28", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[],"structuredContent":[1,2]}}`,
			nil},
		{"structured content is an object in 2025", "2025-11-25", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":[1,2]}}`,
			entries{{Location: "/result/structuredContent", Problems: []string{"got array, want object"}}}},
		{"content blocks", "2026-07-28", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text"},{"type":"video"},{"type":"image","data":1,"mimeType":"image/png"},7],"isError":"yes"}}`,
			entries{
				{Location: "/result/content/0", Problems: []string{"missing property 'text'"}},
				{Location: "/result/content/1/type", Problems: []string{"must be one of 'text', 'image', 'audio', 'resource_link', 'resource'"}},
				{Location: "/result/content/2/data", Problems: []string{"got number, want string"}},
				{Location: "/result/content/3", Problems: []string{"got number, want object"}},
				{Location: "/result/isError", Problems: []string{"got string, want boolean"}},
			}},
		{"result and error", "2026-07-28", "tools/list",
			`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-32603,"message":"boom"}}`,
			entries{{Location: "/result", Problems: []string{"not allowed"}}}},
		{"neither result nor error", "2025-06-18", "tools/list",
			`{"jsonrpc":"2.0","id":1}`,
			entries{{Location: "", Problems: []string{"missing property 'result'"}}}},
		{"error with null id", "2025-06-18", "tools/list",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			nil},
		{"error without id", "2026-07-28", "",
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`,
			nil},
		{"error object shape", "2026-07-28", "tools/list",
			`{"jsonrpc":"2.0","id":{},"error":{"code":"-32601","message":["x"]}}`,
			entries{
				{Location: "/error/code", Problems: []string{"got string, want integer"}},
				{Location: "/error/message", Problems: []string{"got array, want string"}},
				{Location: "/id", Problems: []string{"got object, want null or integer or string"}},
			}},
		{"-32021 without data", "2026-07-28", "tools/call",
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32021,"message":"elicitation capability required"}}`,
			entries{{Location: "/error", Problems: []string{"missing property 'data'"}}}},
		{"-32021 ok", "2026-07-28", "tools/call",
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32021,"message":"elicitation capability required","data":{"requiredCapabilities":{"elicitation":{}}}}}`,
			nil},
		{"-32022 data", "2026-07-28", "server/discover",
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":[],"requested":7}}}`,
			entries{
				{Location: "/error/data/requested", Problems: []string{"got number, want string"}},
				{Location: "/error/data/supported", Problems: []string{"got 0 items, want at least 1"}},
			}},
		{"-32042 data", "2025-11-25", "tools/call",
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32042,"message":"authorization required","data":{"elicitations":[{"mode":"url","url":"https://example.com","message":"log in"}]}}}`,
			entries{{Location: "/error/data/elicitations/0", Problems: []string{"missing property 'elicitationId'"}}}},
		{"-32042 means nothing in 2025-06-18", "2025-06-18", "tools/call",
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32042,"message":"whatever"}}`,
			nil},
		{"initialize", "2025-11-25", "initialize",
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s"}}}`,
			entries{{Location: "/result/serverInfo", Problems: []string{"missing property 'version'"}}}},
		{"ping", "2025-06-18", "ping",
			`{"jsonrpc":"2.0","id":"p","result":{"pong":true}}`,
			entries{{Location: "/result", Problems: []string{"unexpected property 'pong'"}}}},
		{"2025 output schema root", "2025-06-18", "tools/list",
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"array"}}]}}`,
			entries{{Location: "/result/tools/0/outputSchema/type", Problems: []string{"must be 'object'"}}}},
		{"completion bound", "2025-06-18", "completion/complete",
			`{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":[` + repeatJSON(`"v"`, 101) + `]}}}`,
			entries{{Location: "/result/completion/values", Problems: []string{"got 101 items, want at most 100"}}}},
		{"resource contents", "2026-07-28", "resources/read",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private","contents":[{"uri":"a"},{"uri":"b","text":"t","blob":"Yg=="},{"uri":"c","text":5},{"uri":"d","blob":"!"},{"uri":7,"text":"t"},"x"]}}`,
			entries{
				{Location: "/result/contents/0", Problems: []string{"missing property 'text' or 'blob'"}},
				{Location: "/result/contents/2/text", Problems: []string{"got number, want string"}},
				{Location: "/result/contents/3/blob", Problems: []string{"not Base64 in either alphabet"}},
				{Location: "/result/contents/4/uri", Problems: []string{"got number, want string"}},
				{Location: "/result/contents/5", Problems: []string{"got string, want object"}},
			}},
		{"resource contents with both text and blob, as the official anyOf accepts", "2025-06-18", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource","resource":{"uri":"b","text":"t","blob":"Yg=="}}]}}`,
			nil},
		{"tasks/get answers the whole Task", "2025-11-25", "tasks/get",
			`{"jsonrpc":"2.0","id":1,"result":{}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'createdAt'", "missing property 'lastUpdatedAt'", "missing property 'status'", "missing property 'taskId'", "missing property 'ttl'"}}}},
		{"task status is a TaskStatus", "2025-11-25", "tasks/get",
			`{"jsonrpc":"2.0","id":1,"result":{"taskId":"t","status":"running","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":1.5,"pollInterval":"1s"}}`,
			entries{
				{Location: "/result/pollInterval", Problems: []string{"got string, want integer"}},
				{Location: "/result/status", Problems: []string{"must be one of 'working', 'input_required', 'completed', 'failed', 'cancelled'"}},
				{Location: "/result/ttl", Problems: []string{"got number, want null or integer"}},
			}},
		{"tasks/list", "2025-11-25", "tasks/list",
			`{"jsonrpc":"2.0","id":1,"result":{"items":[]}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'tasks'"}}}},
		{"tasks/cancel answers the cancelled task", "2025-11-25", "tasks/cancel",
			`{"jsonrpc":"2.0","id":1,"result":{"taskId":"t","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null}}`,
			entries{{Location: "/result/status", Problems: []string{"must be 'cancelled'"}}}},
		{"tasks/result answers the tool call's result, tagged with its task", "2025-11-25", "tasks/result",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}}`,
			nil},
		{"tasks/result without content or related task", "2025-11-25", "tasks/result",
			`{"jsonrpc":"2.0","id":1,"result":{"isError":true}}`,
			entries{{Location: "/result", Problems: []string{"missing property '_meta'", "missing property 'content'"}}}},
		{"tasks/result with a related task that is not one", "2025-11-25", "tasks/result",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"id":"t"}}}}`,
			entries{{Location: "/result/_meta/io.modelcontextprotocol~1related-task", Problems: []string{"missing property 'taskId'"}}}},
		{"tasks/result may answer the tool call's error", "2025-11-25", "tasks/result",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}`,
			nil},
		{"tasks/* are not methods of 2025-06-18", "2025-06-18", "tasks/get",
			`{"jsonrpc":"2.0","id":1,"result":{}}`,
			nil},
		{"a task-augmented tools/call answers a CreateTaskResult", "2025-11-25", TaskAugmented("tools/call"),
			`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":5000}}}`,
			nil},
		{"or, from a server without task support, its CallToolResult", "2025-11-25", TaskAugmented("tools/call"),
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`,
			nil},
		{"a task-augmented tools/call answered with neither", "2025-11-25", TaskAugmented("tools/call"),
			`{"jsonrpc":"2.0","id":1,"result":{}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'content'"}}}},
		{"a CreateTaskResult whose task is not a Task", "2025-11-25", TaskAugmented("tools/call"),
			`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t","status":"running"}}}`,
			entries{
				{Location: "/result/task", Problems: []string{"missing property 'createdAt'", "missing property 'lastUpdatedAt'", "missing property 'ttl'"}},
				{Location: "/result/task/status", Problems: []string{"must be one of 'working', 'input_required', 'completed', 'failed', 'cancelled'"}},
			}},
		{"a plain tools/call answered with a CreateTaskResult", "2025-11-25", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":5000}}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'content'"}}}},
		{"2025-06-18 has no tasks: a task member is ignored", "2025-06-18", TaskAugmented("tools/call"),
			`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":5000}}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'content'"}}}},
		{"no request but tools/call runs as a task in 2025-11-25", "2025-11-25", TaskAugmented("prompts/get"),
			`{"jsonrpc":"2.0","id":1,"result":{"task":{}}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'messages'"}}}},
		{"2026-07-28's tasks are an extension: the plain reply", "2026-07-28", TaskAugmented("tools/call"),
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}`,
			nil},
		{"unknown method: envelope and generic result", "2026-07-28", "vendor/thing",
			`{"jsonrpc":"2.0","id":1,"result":{"anything":true}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'resultType'"}}}},
		{"unknown method in 2025: any object", "2025-11-25", "vendor/thing",
			`{"jsonrpc":"2.0","id":1,"result":{"anything":true}}`,
			nil},
		{"2025-03-26: initialize without serverInfo (T-LIFE-1)", "2025-03-26", "initialize",
			`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{}}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'serverInfo'"}}}},
		{"2025-03-26: a tool without inputSchema", "2025-03-26", "tools/list",
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"}]}}`,
			entries{{Location: "/result/tools/0", Problems: []string{"missing property 'inputSchema'"}}}},
		{"2025-03-26: a tools/call result without content", "2025-03-26", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"isError":false}}`,
			entries{{Location: "/result", Problems: []string{"missing property 'content'"}}}},
		{"2025-03-26: what 2025-06-18 added is not judged, whatever its shape (T-V0326-4)", "2025-03-26", "tools/list",
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","title":7,"inputSchema":{"type":"object"},"outputSchema":"none","_meta":[]}]}}`,
			nil},
		{"2025-03-26: structuredContent and _meta on content are unknown members", "2025-03-26", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"[1,2]","_meta":"m","annotations":{"lastModified":1}}],"structuredContent":[1,2]}}`,
			nil},
		{"2025-03-26: no resource_link content, as the official anyOf of content types", "2025-03-26", "tools/call",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}}`,
			entries{{Location: "/result/content/0/type", Problems: []string{"must be one of 'text', 'image', 'audio', 'resource'"}}}},
		{"2025-03-26: a title on serverInfo is an unknown member", "2025-03-26", "initialize",
			`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1","title":{"x":1}}}}`,
			nil},
		{"not json", "2026-07-28", "tools/list", `{"jsonrpc":"2.0",`,
			entries{{Location: "", Problems: []string{"not valid json"}}}},
		{"not an object", "2026-07-28", "tools/list", `[{"jsonrpc":"2.0"}]`,
			entries{{Location: "", Problems: []string{"got array, want object"}}}},
		{"wrong jsonrpc", "2026-07-28", "tools/list",
			`{"jsonrpc":"1.0","id":1,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"public"}}`,
			entries{{Location: "/jsonrpc", Problems: []string{"must be '2.0'"}}}},
	}
	r := NewRegistry()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := r.Version(c.version)
			if err != nil {
				t.Fatal(err)
			}
			got := valid(t)(s.ValidateReply(c.method, []byte(c.reply)))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", c.version, c.method, diff)
			}
		})
	}
}

func TestRegistryUnknownVersion(t *testing.T) {
	_, err := NewRegistry().Version("2024-11-05")
	if err == nil || !strings.Contains(err.Error(), `unknown protocol version "2024-11-05"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestRegistryCompilesOnceConcurrently(t *testing.T) {
	r := NewRegistry()
	var wg sync.WaitGroup
	sets := make([]*Set, 16)
	for i := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := r.Version("2026-07-28")
			if err != nil {
				t.Error(err)
				return
			}
			sets[i] = s
			if got := valid(t)(s.ValidateReply("tools/list", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))); len(got) == 0 {
				t.Error("an invalid reply passed")
			}
		}()
	}
	wg.Wait()
	for _, s := range sets[1:] {
		if s != sets[0] {
			t.Fatal("Version compiled more than once")
		}
	}
}

func TestSetMethodsAndCovers(t *testing.T) {
	r := NewRegistry()
	want := map[string][]string{
		"2026-07-28": {"completion/complete", "prompts/get", "prompts/list", "resources/list", "resources/read", "resources/templates/list", "server/discover", "subscriptions/listen", "tools/call", "tools/list"},
		"2025-11-25": {"completion/complete", "initialize", "ping", "prompts/get", "prompts/list", "resources/list", "resources/read", "resources/templates/list", "tasks/cancel", "tasks/get", "tasks/list", "tasks/result", "tools/call", "tools/list"},
		"2025-06-18": {"completion/complete", "initialize", "ping", "prompts/get", "prompts/list", "resources/list", "resources/read", "resources/templates/list", "tools/call", "tools/list"}, "2025-03-26": {"completion/complete", "initialize", "ping", "prompts/get", "prompts/list", "resources/list", "resources/read", "resources/templates/list", "tools/call", "tools/list"},
	}
	for v, methods := range want {
		s, err := r.Version(v)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(methods, s.Methods()); diff != "" {
			t.Errorf("%s methods (-want +got):\n%s", v, diff)
		}
		if s.Version() != v {
			t.Errorf("Version() = %q, want %q", s.Version(), v)
		}
	}
	s, _ := r.Version("2026-07-28")
	for name, want := range map[string]bool{"CallToolResult": true, "InputRequiredResult": true, "resultEnvelope": false, "CallToolRequest": false} {
		if got := s.Covers(name); got != want {
			t.Errorf("Covers(%q) = %v, want %v", name, got, want)
		}
	}
}
