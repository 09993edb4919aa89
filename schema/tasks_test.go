package schema

import (
	"testing"
)

// taskResults are hand-written, valid results of 2025-11-25's tasks/*
// methods and of a task-augmented request, by the official type that
// covers each (upstream ships no 2025 examples, and the 2026-07-28 ones
// have no tasks).
func taskResults() map[string]string {
	const task = `"taskId":"786512e2","status":"working","statusMessage":"in progress","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttl":60000,"pollInterval":5000`
	return map[string]string{
		"GetTaskResult":        `{` + task + `,"_meta":{"k":1}}`,
		"GetTaskResult#null":   `{"taskId":"t","status":"input_required","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttl":null}`,
		"ListTasksResult":      `{"tasks":[{` + task + `},{"taskId":"t2","status":"completed","createdAt":"2025-11-25T09:15:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttl":null}],"nextCursor":"next"}`,
		"CancelTaskResult":     `{"taskId":"t","status":"cancelled","statusMessage":"by request","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttl":30000,"pollInterval":5000}`,
		"CreateTaskResult":     `{"task":{` + task + `},"_meta":{"io.modelcontextprotocol/model-immediate-response":"working on it"}}`,
		"GetTaskPayloadResult": `{"content":[{"type":"text","text":"72F"}],"isError":false,"structuredContent":{"t":72},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"786512e2"}}}`,
	}
}

// knownTaskDisagreements are the verdicts the 2025-11-25 task types give
// on purpose against the official ones, and why. (CancelTaskResult's
// status must be cancelled: no mutation here makes it another valid
// status, so TestDeliberateDifferences pins that one.)
func knownTaskDisagreements() []knownDisagreement {
	return []knownDisagreement{
		{types: []string{"GetTaskPayloadResult"}, path: "/**", ours: "rejects",
			reason: "the official GetTaskPayloadResult is any object; a server's tasks/result answers its tools/call's CallToolResult, tagged with io.modelcontextprotocol/related-task (tasks.mdx § Result Retrieval, § Related Task Metadata)"},
	}
}

// TestDifferentialTasks compares the 2025-11-25 task types with the
// official ones on hand-written results and their mutations.
func TestDifferentialTasks(t *testing.T) {
	const version = "2025-11-25"
	off := loadOfficial(t, version)
	our := loadOurs(t, version)
	l := newLedger(knownTaskDisagreements())
	compareSamples(t, version, off, our, l, taskResults())
	l.report(t)
	t.Logf("%d results, %d mutations, %d known disagreements", len(taskResults()), l.checked, sum(l.used))
}
