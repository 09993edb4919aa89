package lint_test

import (
	"bytes"
	"net/http"
	"slices"
	"testing"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/lint"
	"github.com/wymcp/wymcp-check/transcript"
)

// TestSessionRefusalNeedsAnUnheldSession: a 2025 request answered 400
// with a session error and no id is excused (RPC1004) only where the
// session may be one the server does not hold. The traffic shows the
// server issue session "s1": a request in s1 so answered fails RPC1004;
// after a DELETE ended s1, or in a session never issued ("s9"), the same
// reply is a refusal on the header alone, as server-everything makes it.
func TestSessionRefusalNeedsAnUnheldSession(t *testing.T) {
	hdr := func(sid string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {envelope.V20251125}}
		if sid != "" {
			h.Set("Mcp-Session-Id", sid)
		}
		return h
	}
	json := http.Header{"Content-Type": {"application/json"}}
	initialize := &envelope.Exchange{Transport: envelope.HTTP,
		Request: envelope.Request{Method: "POST", Header: hdr(""), Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)},
		Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"s1"}},
			Body: []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`)}}
	refused := func(sid string) *envelope.Exchange {
		return &envelope.Exchange{Transport: envelope.HTTP,
			Request:  envelope.Request{Method: "POST", Header: hdr(sid), Body: []byte(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)},
			Response: &envelope.Response{Status: 400, Header: json, Body: []byte(`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)}}
	}
	deleted := &envelope.Exchange{Transport: envelope.HTTP,
		Request:  envelope.Request{Method: "DELETE", Header: hdr("s1")},
		Response: &envelope.Response{Status: 200, Header: http.Header{}}}
	// A live run records its facts as a line of their own ahead of its
	// exchanges, and a facts line replaces what the traffic taught: the
	// sessions must travel in it, or lint excuses what check failed.
	held := (*expect.Facts)(nil).Learn(initialize)
	for _, tc := range []struct {
		name    string
		facts   *expect.Facts // a facts line first, as check --record writes
		traffic []*envelope.Exchange
		fail    bool
	}{
		{"a session the server holds", nil, []*envelope.Exchange{initialize, refused("s1")}, true},
		{"a session it ended", nil, []*envelope.Exchange{initialize, deleted, refused("s1")}, false},
		{"a session it never issued", nil, []*envelope.Exchange{initialize, refused("s9")}, false},
		{"a recorded run's session", held, []*envelope.Exchange{refused("s1")}, true},
		{"a recorded run's ended session", held.Learn(deleted), []*envelope.Exchange{refused("s1")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := lintLast(t, tc.facts, tc.traffic)
			i := slices.IndexFunc(last, func(v checks.Verdict) bool { return v.Check.ID == "RPC1004" })
			if i < 0 {
				t.Fatal("no RPC1004 verdict")
			}
			if failed := last[i].Status == checks.StatusFail; failed != tc.fail {
				t.Errorf("RPC1004 %s %v, want a fail: %v", last[i].Status, last[i].Findings, tc.fail)
			}
		})
	}
}

// TestFactsBySession: a relay before two clients sees each negotiate
// its own session. A request in one session is judged by that session's
// capabilities, not by those learned last (here a 2026 client's
// server/discover): logging/setLevel served in a session whose
// initialize declared logging passes, and the same in a session whose
// initialize declared none warns (T-LIFE-4), whichever declaration came
// last. Lint of the traffic alone and of a relay's recording (a facts
// line first) agree.
func TestFactsBySession(t *testing.T) {
	hdr := func(sid string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
		if sid != "" {
			h.Set("Mcp-Session-Id", sid)
			h.Set("Mcp-Protocol-Version", envelope.V20251125)
		}
		return h
	}
	reply := func(sid, body string) *envelope.Response {
		h := http.Header{"Content-Type": {"application/json"}}
		if sid != "" {
			h.Set("Mcp-Session-Id", sid)
		}
		return &envelope.Response{Status: 200, Header: h, Body: []byte(body)}
	}
	initialize := func(sid, caps string) *envelope.Exchange {
		return &envelope.Exchange{Transport: envelope.HTTP,
			Request:  envelope.Request{Method: "POST", Header: hdr(""), Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)},
			Response: reply(sid, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"s","version":"1"}}}`)}
	}
	discover := func(caps string) *envelope.Exchange {
		h := hdr("")
		h.Set("Mcp-Protocol-Version", envelope.V20260728)
		return &envelope.Exchange{Transport: envelope.HTTP,
			Request:  envelope.Request{Method: "POST", Header: h, Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)},
			Response: reply("", `{"jsonrpc":"2.0","id":2,"result":{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":`+caps+`,"serverInfo":{"name":"s","version":"1"}}}`)}
	}
	setLevel := func(sid string) *envelope.Exchange {
		return &envelope.Exchange{Transport: envelope.HTTP,
			Request:  envelope.Request{Method: "POST", Header: hdr(sid), Body: []byte(`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}`)},
			Response: reply("", `{"jsonrpc":"2.0","id":3,"result":{}}`)}
	}
	const withLogging, without = `{"logging":{},"tools":{}}`, `{"tools":{}}`
	for _, tc := range []struct {
		name    string
		learned []*envelope.Exchange // the traffic before the call
		sid     string
		warn    bool
	}{
		{"its session declared logging, a discover after did not", []*envelope.Exchange{initialize("s1", withLogging), discover(without)}, "s1", false},
		{"its session declared logging, another session after did not", []*envelope.Exchange{initialize("s1", withLogging), initialize("s2", without)}, "s1", false},
		{"its session declared no logging, a discover after did", []*envelope.Exchange{initialize("s2", without), discover(withLogging)}, "s2", true},
		{"its session declared no logging, another session after did", []*envelope.Exchange{initialize("s2", without), initialize("s1", withLogging)}, "s2", true},
	} {
		var facts *expect.Facts
		for _, ex := range tc.learned {
			facts = facts.Learn(ex)
		}
		for _, recorded := range []bool{false, true} {
			name := tc.name + ", traffic"
			if recorded {
				name = tc.name + ", recorded facts"
			}
			t.Run(name, func(t *testing.T) {
				traffic, recordedFacts := append(slices.Clone(tc.learned), setLevel(tc.sid)), (*expect.Facts)(nil)
				if recorded {
					traffic, recordedFacts = traffic[len(traffic)-1:], facts
				}
				last := lintLast(t, recordedFacts, traffic)
				var bad []string
				for _, v := range last {
					if v.Status == checks.StatusWarn || v.Status == checks.StatusFail {
						bad = append(bad, v.Check.ID+" "+string(v.Status)+": "+v.Reason)
					}
				}
				if warned := len(bad) > 0; warned != tc.warn {
					t.Errorf("setLevel in %s judged %q, want a warn: %v", tc.sid, bad, tc.warn)
				}
			})
		}
	}
}

// lintLast lints the traffic as a transcript, after a facts line when
// facts is not nil (as check --record writes), and returns the verdicts
// of its last exchange.
func lintLast(t *testing.T, facts *expect.Facts, traffic []*envelope.Exchange) []checks.Verdict {
	t.Helper()
	var lines bytes.Buffer
	if facts != nil {
		if err := transcript.WriteFacts(&lines, facts); err != nil {
			t.Fatal(err)
		}
	}
	for _, ex := range traffic {
		if err := transcript.Write(&lines, "s", ex, nil); err != nil {
			t.Fatal(err)
		}
	}
	var last []checks.Verdict
	err := lint.Judge(transcript.NewReader("t.jsonl", &lines), options(1, 0), func(it *lint.Item) error {
		if it.Err != nil {
			return it.Err
		}
		last = it.Verdicts
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return last
}
