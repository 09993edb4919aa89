package schema

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wymcp/wymcp-check/envelope"
)

// serverMessages are hand-written, valid messages a server may send
// besides its response, by the official type that covers each. The 2026
// examples carry no 2025 server requests (they show input requests, with
// no jsonrpc or id), so these are what the requests are compared on.
func serverMessages(version string) map[string]string {
	common := map[string]string{
		"CancelledNotification":           `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1","reason":"took too long"}}`,
		"ProgressNotification":            `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1.5,"total":3,"message":"half"}}`,
		"LoggingMessageNotification":      `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"db","data":{"retry":2}}}`,
		"ResourceUpdatedNotification":     `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a.txt"}}`,
		"ResourceListChangedNotification": `{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"k":1}}}`,
		"PromptListChangedNotification":   `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`,
		"ToolListChangedNotification":     `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`,
	}
	requests := map[string]string{
		"PingRequest":          `{"jsonrpc":"2.0","id":"p1","method":"ping","params":{"_meta":{"progressToken":"t"}}}`,
		"ListRootsRequest":     `{"jsonrpc":"2.0","id":3,"method":"roots/list"}`,
		"CreateMessageRequest": `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}},{"role":"assistant","content":{"type":"image","data":"aGk=","mimeType":"image/png"}}],"maxTokens":100,"systemPrompt":"be brief","includeContext":"thisServer","temperature":0.5,"stopSequences":["END"],"metadata":{"a":1},"modelPreferences":{"hints":[{"name":"m"}],"costPriority":0.2,"speedPriority":1,"intelligencePriority":0}}}`,
		"ElicitRequest":        `{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"Name","minLength":1,"format":"email"},"age":{"type":"integer","minimum":0},"ok":{"type":"boolean","default":true},"color":{"type":"string","enum":["r","g"]}},"required":["name"]}}}`,
	}
	out := map[string]string{}
	switch version {
	case "2026-07-28":
		for k, v := range common {
			out[k] = v
		}
		out["SubscriptionsAcknowledgedNotification"] = `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5},"notifications":{"toolsListChanged":true,"promptsListChanged":false,"resourcesListChanged":true,"resourceSubscriptions":["file:///a.txt"]}}}`
	case "2025-11-25":
		for k, v := range common {
			out[k] = v
		}
		for k, v := range requests {
			out[k] = v
		}
		out["ElicitationCompleteNotification"] = `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e9"}}`
		out["TaskStatusNotification"] = `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"working","statusMessage":"busy","createdAt":"2025-11-25T10:00:00Z","lastUpdatedAt":"2025-11-25T10:00:01Z","ttl":null,"pollInterval":500}}`
		out["CreateMessageRequest#tools"] = `{"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"add","input":{"a":1}}]},{"role":"user","content":{"type":"tool_result","toolUseId":"u1","content":[{"type":"text","text":"2"}],"structuredContent":{"sum":2},"isError":false}}],"maxTokens":10,"tools":[{"name":"add","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"auto"},"task":{"ttl":1000}}}`
		out["GetTaskRequest"] = `{"jsonrpc":"2.0","id":"g1","method":"tasks/get","params":{"taskId":"c-1"}}`
		out["GetTaskPayloadRequest"] = `{"jsonrpc":"2.0","id":"g2","method":"tasks/result","params":{"taskId":"c-1"}}`
		out["CancelTaskRequest"] = `{"jsonrpc":"2.0","id":"g3","method":"tasks/cancel","params":{"taskId":"c-1"}}`
		out["ListTasksRequest"] = `{"jsonrpc":"2.0","id":"g4","method":"tasks/list","params":{"cursor":"page-2","_meta":{"progressToken":"p"}}}`
		out["ListTasksRequest#bare"] = `{"jsonrpc":"2.0","id":"g5","method":"tasks/list"}`
		out["ElicitRequest#url"] = `{"jsonrpc":"2.0","id":"e2","method":"elicitation/create","params":{"mode":"url","message":"sign in","url":"https://example.com/login","elicitationId":"e2"}}`
		out["ElicitRequest#enums"] = `{"jsonrpc":"2.0","id":"e3","method":"elicitation/create","params":{"mode":"form","message":"pick","requestedSchema":{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X"}]},"b":{"type":"array","items":{"type":"string","enum":["p","q"]},"minItems":1},"c":{"type":"array","items":{"anyOf":[{"const":"p","title":"P"}]}},"d":{"type":"string","enum":["u"],"enumNames":["U"]}}}}}`
	case "2025-06-18":
		for k, v := range common {
			out[k] = v
		}
		for k, v := range requests {
			out[k] = v
		}
	case "2025-03-26":
		// No elicitation yet; the other requests and the notifications
		// are 2025-06-18's, _meta on a request's params included.
		for k, v := range common {
			out[k] = v
		}
		for k, v := range requests {
			if k != "ElicitRequest" {
				out[k] = v
			}
		}
	}
	return out
}

// knownServerDisagreements are the verdicts the project's server-message
// schemas give on purpose against the official types, and why. (In
// 2025-06-18 the claimed types are bare, as the official ones: the
// *Message wrappers add jsonrpc and id and claim nothing.)
func knownServerDisagreements(version string) []knownDisagreement {
	var out []knownDisagreement
	if version == "2025-11-25" {
		// (2026-07-28 sends no elicitation/create of its own: MRTR.)
		out = append(out, knownDisagreement{op: "token", path: "/params/url", ours: "rejects", reason: urlFormatReason})
	}
	if version == "2025-06-18" || version == "2025-03-26" {
		out = append(out,
			knownDisagreement{op: "token", path: "/**/uri", ours: "accepts",
				reason: "the official " + version + " schema is draft-07, where format (here uri) asserts; ours treats format as an annotation"},
		)
	}
	return out
}

// TestDifferentialServerMessages compares every type a server-message
// table names with the official type, on hand-written valid messages and
// their systematic mutations, as TestDifferential2026 does on examples.
func TestDifferentialServerMessages(t *testing.T) {
	for _, version := range ReplyVersions() {
		t.Run(version, func(t *testing.T) {
			off := loadOfficial(t, version)
			our := loadOurs(t, version)
			l := newLedger(knownServerDisagreements(version))
			compareSamples(t, version, off, our, l, serverMessages(version))
			l.report(t)
			t.Logf("%d messages, %d mutations, %d known disagreements", len(serverMessages(version)), l.checked, sum(l.used))
		})
	}
}

// TestServerMessageTables: every method of a version's table is covered
// by the test messages above, its def is the whole message of that
// method, and 2026-07-28 knows no server requests (T-LIFE-15).
func TestServerMessageTables(t *testing.T) {
	reg := NewRegistry()
	for _, version := range ReplyVersions() {
		set, err := reg.Version(version)
		if err != nil {
			t.Fatal(err)
		}
		msgs := serverMessages(version)
		byMethod := map[string]string{}
		for key, instance := range msgs {
			if !strings.Contains(key, "#") {
				byMethod[methodOf(t, instance)] = instance
			}
		}
		for _, m := range set.ServerMethods() {
			instance, ok := byMethod[m]
			if !ok {
				t.Errorf("%s: no test message for %s", version, m)
				continue
			}
			got, covered, err := set.ValidateServerMessage(m, []byte(instance))
			if err != nil || !covered || got != nil {
				t.Errorf("%s %s: got %v, covered %v, err %v; want a valid covered message", version, m, got, covered, err)
			}
		}
		if len(byMethod) != len(set.ServerMethods()) {
			t.Errorf("%s: %d test messages, %d methods in the table (%v)", version, len(byMethod), len(set.ServerMethods()), set.ServerMethods())
		}
		if version == "2026-07-28" {
			for _, m := range []string{"ping", "sampling/createMessage", "elicitation/create", "roots/list"} {
				if slices.Contains(set.ServerMethods(), m) {
					t.Errorf("2026-07-28 lists the server request %s; the server sends none (T-LIFE-15)", m)
				}
			}
		}
	}
}

func methodOf(t *testing.T, instance string) string {
	t.Helper()
	v, err := decode([]byte(instance))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := v.(map[string]any)["method"].(string)
	return m
}

func TestValidateServerMessage(t *testing.T) {
	reg := NewRegistry()
	cases := []struct {
		version, method, msg string
		covered              bool
		want                 []envelope.DistilledEntry
	}{
		{"2025-11-25", "notifications/message", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`,
			true, []envelope.DistilledEntry{{Location: "/params", Problems: []string{"missing property 'data'"}}}},
		{"2026-07-28", "notifications/resources/updated", `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{}}`,
			true, []envelope.DistilledEntry{{Location: "/params", Problems: []string{"missing property 'uri'"}}}},
		{"2025-06-18", "sampling/createMessage", `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[]}}`,
			true, []envelope.DistilledEntry{{Location: "/params", Problems: []string{"missing property 'maxTokens'"}}}},
		{"2025-11-25", "notifications/progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":"2","message":3}}`,
			true, []envelope.DistilledEntry{
				{Location: "/params/message", Problems: []string{"got number, want string"}},
				{Location: "/params/total", Problems: []string{"got string, want number"}},
			}},
		{"2025-11-25", "elicitation/create", `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"mode":"url","message":"m"}}`,
			true, []envelope.DistilledEntry{{Location: "/params", Problems: []string{"missing property 'elicitationId'", "missing property 'url'"}}}},
		{"2025-11-25", "tasks/get", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":7}}`,
			true, []envelope.DistilledEntry{{Location: "/params/taskId", Problems: []string{"got number, want string"}}}},
		{"2025-11-25", "tasks/cancel", `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel"}`,
			true, []envelope.DistilledEntry{{Location: "", Problems: []string{"missing property 'params'"}}}},
		{"2025-06-18", "tasks/get", `{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`,
			false, nil},
		{"2025-03-26", "notifications/message", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":1}}`,
			true, []envelope.DistilledEntry{{Location: "/params/level", Problems: []string{"must be one of 'debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'"}}}},
		{"2025-03-26", "elicitation/create", `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}`,
			false, nil},
		{"2026-07-28", "sampling/createMessage", `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}`,
			false, nil},
		{"2025-11-25", "notifications/vendor/thing", `{"jsonrpc":"2.0","method":"notifications/vendor/thing"}`,
			false, nil},
	}
	for _, c := range cases {
		set, err := reg.Version(c.version)
		if err != nil {
			t.Fatal(err)
		}
		got, covered, err := set.ValidateServerMessage(c.method, []byte(c.msg))
		if err != nil {
			t.Fatalf("%s %s: %v", c.version, c.method, err)
		}
		if covered != c.covered {
			t.Errorf("%s %s: covered %v, want %v", c.version, c.method, covered, c.covered)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s %s: (-want +got)\n%s", c.version, c.method, diff)
		}
	}
}
