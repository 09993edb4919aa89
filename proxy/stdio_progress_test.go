package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStdioProgressForAnsweredRequest: progress a server writes for a
// request it already answered names no active request (T-PROG-1, MUST),
// and PRO1003 fails it, as check fails it on the same bytes. On one pipe
// the order is the server's own. Right after the response, it joins
// that request's exchange (the relay looks Limits.Quiet past a response
// to a request that offered a token, as check and the HTTP relay read
// past one); later, its token is no longer among those the exchange it
// lands in lists as offered. wrap showed it and judged nothing (no
// request waiting), or warned that another request might be in flight
// (the list held every token ever offered). Progress for a request
// still active is its own, wherever it lands on the pipe (review rev95:
// it warned as maybe another's); so is a 2025-11-25 task's, whose token
// lives on.
func TestStdioProgressForAnsweredRequest(t *testing.T) {
	const (
		call      = progressCall // id 1, token "t1"
		list      = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"progressToken":"t2"}}}`
		batch     = `[{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"progressToken":7}}}]`
		init25    = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
		initAns   = `initialize=result:{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}`
		taskCall  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{},"task":{"ttl":60000},"_meta":{"progressToken":"t1"}}}`
		taskAns   = `result:{"task":{"taskId":"k1","status":"working","createdAt":"2025-01-01T00:00:00Z","lastUpdatedAt":"2025-01-01T00:00:00Z","ttl":60000}}`
		lateFail  = "fail messages[1]: progress notification after the response; progress stops when the request completes (T-PROG-1)"
		unoffered = `fail messages[0].params.progressToken: progress for token "t1", which no request sent to the server still active offered (T-PROG-1)`
	)
	tests := []struct {
		name, script string
		steps        []string
		want         []string // per client request: "#seq method: PRO1003 status findings"
	}{
		{"right after the response, the pipe idle", "tools/call=ok progress",
			[]string{call, "wait:notifications/progress", "sleep:200"},
			[]string{"#1 tools/call: " + lateFail}},
		{"before the response (twin)", "tools/call=progress ok",
			[]string{call, "wait:result", "sleep:200"},
			[]string{"#1 tools/call: pass"}},
		{"a 2025-11-25 task's, right after its answer with the task (twin)", initAns + ";tools/call=" + taskAns + " progress",
			[]string{init25, "wait:protocolVersion", taskCall, "wait:notifications/progress", "sleep:200", list, "sleep:200"},
			[]string{"#1 initialize: skip", "#3 tools/call: skip", "#6 tools/list: skip"}},
		{"later, the pipe idle until the next request", "tools/call=ok sleep:250 progress",
			[]string{call, "wait:notifications/progress", list, "sleep:300"},
			[]string{"#1 tools/call: skip", "#4 tools/list: " + unoffered}},
		{"later, while a request sent after the answer waits", "tools/call=ok sleep:250 progress;tools/list=sleep:500 ok",
			[]string{call, "wait:result", "sleep:50", list, "sleep:800"},
			[]string{"#1 tools/call: skip", "#3 tools/list: " + unoffered}},
		{"later, while a request sent before the answer waits", "tools/call=sleep:100 ok sleep:250 progress;tools/list=sleep:600 ok",
			[]string{call, list, "sleep:900"},
			[]string{"#1 tools/call: skip", "#2 tools/list: " + unoffered}},
		{"for a request still active, while another waits (twin)", "tools/call=sleep:100 progress:7 sleep:100 ok",
			[]string{batch, call, "sleep:500"},
			[]string{"#2 tools/call: pass"}},
		{"for a 2025-11-25 task answered with its task, while another waits (twin)", initAns + ";tools/call=" + taskAns + " sleep:250 progress;tools/list=sleep:500 ok",
			[]string{init25, "wait:protocolVersion", taskCall, "wait:k1", "sleep:50", list, "sleep:800"},
			[]string{"#1 initialize: skip", "#3 tools/call: skip", "#5 tools/list: pass"}},
	}
	j := newJudge()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startScript(t, tc.script, Limits{Timeout: 5 * time.Second, Quiet: 50 * time.Millisecond})
			s.play(t, tc.steps...)
			obs, pairs := s.rec.snapshot()
			var got []string
			for _, p := range pairs {
				if p.Asker != ClientToServer || p.Method == "" || strings.HasPrefix(p.Method, "notifications/") {
					continue
				}
				line := fmt.Sprintf("#%d %s: ", p.RequestSeq, p.Method)
				for _, v := range j.verdicts(relayed(t, p.Exchange)) {
					if v.Check.ID != "PRO1003" {
						continue
					}
					line += string(v.Status)
					for _, f := range v.Findings {
						line += " " + f.Path + ": " + f.Message
					}
				}
				got = append(got, line)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PRO1003 by request (-want +got):\n%s\n%s", diff, describe(obs, pairs))
			}
		})
	}
}

// TestStdioLookHoldsPair: the response to a request that offered a
// token is delivered Later, its pair after the progress that followed it
// (the watcher prints the response with its verdict then); a request
// that offered none is paired at its response, as before.
func TestStdioLookHoldsPair(t *testing.T) {
	// (A look long enough that the ping is surely answered within it.)
	s := startScript(t, "tools/call=ok progress", Limits{Timeout: 5 * time.Second, Quiet: 400 * time.Millisecond})
	s.play(t, progressCall, "wait:notifications/progress", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "wait:\"id\":2", "sleep:600")
	obs, pairs := s.rec.snapshot()
	later := map[string]bool{}
	for _, o := range obs {
		if o.Completes {
			later[o.ID] = o.Later
		}
	}
	if !later["1"] || later["2"] {
		t.Errorf("Later by reply id: %v, want the tools/call's only\n%s", later, describe(obs, pairs))
	}
	if got := clientPairs(pairs); len(got) != 2 || !strings.HasPrefix(got[1], "#1 tools/call replied #2 messages=2") {
		t.Errorf("pairs %q, want the tools/call's last, with the progress\n%s", got, describe(obs, pairs))
	}
}
