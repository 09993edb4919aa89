package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/proxy"
	"github.com/wymcp/wymcp-check/refserver"
	"github.com/wymcp/wymcp-check/transport"
)

func TestRelayUsage(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"proxy needs a URL", []string{"proxy"}, "accepts 1 arg"},
		{"proxy wants http", []string{"proxy", "ftp://x/mcp"}, `want an http:// or https:// URL`},
		{"proxy refuses a public address", []string{"proxy", "http://127.0.0.1:1/mcp", "--listen", "0.0.0.0:0"}, "not a loopback address"},
		{"proxy bad listen", []string{"proxy", "http://127.0.0.1:1/mcp", "--listen", "nope"}, "want HOST:PORT"},
		{"proxy bad header", []string{"proxy", "http://127.0.0.1:1/mcp", "-H", "Authorization secret"}, "--header #1"},
		{"wrap needs a command", []string{"wrap"}, "want the server command after --"},
		{"wrap takes nothing before --", []string{"wrap", "x", "--", "y"}, "want the server command after --"},
		{"wrap bad format", []string{"wrap", "--format", "xml", "--", "true"}, `"xml" is not one of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q (stdout %q)", code, errOut, exitUsage, tt.wantErr, out)
			}
			if strings.Contains(out+errOut, "secret") {
				t.Errorf("a --header value was printed")
			}
		})
	}
}

// TestWrapRun runs wrap around a one-line shell server: stdout carries
// the server's bytes alone, the lines and the verdict go to stderr, the
// exit status is the server's, and the recording lints the same way.
func TestWrapRun(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	rec, rep := filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "rep.json")
	// Its reply carries raw terminal escapes (clear the screen, set the
	// title), which makes it invalid JSON (RPC1001): -v shows the body,
	// escaped.
	reply := "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"note\":\"\x1b[2J hi \x1b]0;owned\x07\"}}"
	format := strings.NewReplacer("\x1b", `\033`, "\x07", `\007`).Replace(reply)
	// It leaves once its stdin has closed, so the client's close comes
	// first, as the note below says, however the two are scheduled.
	server := `read line; printf '` + format + `\n'; echo "server log line" >&2; cat >/dev/null; exit 5`
	request := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}` + "\n"
	code, out, errOut := runMain(t, request, "wrap", "-v", "--record", rec, "--report", rep, "--", "/bin/sh", "-c", server)
	if code != 5 {
		t.Errorf("exit %d, want the server's 5\nstderr:\n%s", code, errOut)
	}
	if out != reply+"\n" {
		t.Errorf("stdout %q, want the server's bytes alone %q", out, reply+"\n")
	}
	for _, want := range []string{"wrap: relaying the stdio of /bin/sh -c", "→ #1 tools/list id 1 (58 B)", "← #2 result id \"1\" (65 B) — not valid JSON", "FAIL 1",
		`{"note":"\x1b[2J hi \x1b]0;owned\x07"}`,
		"fail RPC1001  reply: the message is not valid JSON", "server log line", "summary: 2 messages", "note: the client closed its end; the server then ended (exit status 5)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.ContainsRune(errOut, 0x1b) {
		t.Errorf("stderr carries a raw terminal escape:\n%q", errOut)
	}
	if code, lintOut, _ := runMain(t, "", "lint", rec); code != exitFindings || !strings.Contains(lintOut, "fail RPC1001") {
		t.Errorf("lint of the recording: exit %d\n%s", code, lintOut)
	}
	raw, err := os.ReadFile(rep)
	if err != nil || !bytes.Contains(raw, []byte(`"check":"RPC1001","area":"envelope","severity":"error","status":"fail"`)) {
		t.Errorf("report: %v\n%s", err, raw)
	}
}

// TestWrapJudgesServerMessages: what a server writes while a request of
// the client's waits (progress, a log message, a request of its own) is
// judged with that request's reply, as check judges it; before, wrap only
// showed such lines, and a progress notification whose progress is a
// string passed.
func TestWrapJudgesServerMessages(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	tests := []struct {
		name     string
		progress string
		wantCode exitCode
		want     string
	}{
		{"progress as a string", `{"progressToken":"t","progress":"half"}`, exitFindings, `fail PRO1003  messages[0].params.progress: progress is string "half", want a number`},
		{"progress as a number", `{"progressToken":"t","progress":1,"total":2}`, 0, "4 exchanges judged: 4 ok, 0 warn, 0 fail"}, // the fourth, the end of input
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			server := `read line; printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}'; ` +
				`read line; read line; printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/progress","params":` + tt.progress + `}'; ` +
				`printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'; cat >/dev/null`
			client := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":"t"}}}` + "\n"
			_, _, errOut := runMain(t, client, "wrap", "--record", rec, "--", "/bin/sh", "-c", server)
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, errOut)
			}
			code, lintOut, _ := runMain(t, "", "lint", rec)
			if code != tt.wantCode {
				t.Errorf("lint of the recording: exit %d, want %d\n%s", code, tt.wantCode, lintOut)
			}
		})
	}
}

// lockedBuf is a buffer the proxy writes while the test reads it.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProxyRun puts the proxy between a hand-made client and the
// reference server with a fault: the fault is reported under the reply,
// secrets never show, the recording lints to the same finding, and the
// gate fails.
func TestProxyRun(t *testing.T) {
	srv, err := refserver.New(refserver.Options{Fault: "notification-reply"})
	if err != nil {
		t.Fatal(err)
	}
	hs := newLoopbackServer(srv)
	defer hs.Close()
	defer srv.Close()
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	s, _, _ := testStreams()
	out := &lockedBuf{}
	s.Out = out
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := &proxyOptions{URL: hs.URL + "/mcp", Listen: "127.0.0.1:0", Headers: []string{"X-Api-Key: key-from-the-flag"}}
	o.MaxBytes, o.Record, o.Format, o.Contract, o.Schema, o.FailOn, o.Color = proxy.DefaultMaxBytes, rec, "json", "strict", "builtin", "fail", "never"
	done := make(chan error, 1)
	go func() { done <- proxyRun(ctx, s, o) }()

	addr := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/mcp)`)
	var endpoint string
	for deadline := time.Now().Add(10 * time.Second); endpoint == ""; time.Sleep(10 * time.Millisecond) {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			endpoint = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listening line:\n%s", out.String())
		}
	}
	post := func(body string, hdr map[string]string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer client-token-xyz")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, _ := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	if resp, body := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr); resp.StatusCode != 200 || !strings.Contains(body, `"id":null`) {
		t.Fatalf("the fault did not fire through the proxy: %d %s", resp.StatusCode, body)
	}
	post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, hdr)
	// Wait for the last reply's line, then stop as Ctrl-C would.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "#6 200 result id 2"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no line for the last reply:\n%s", out.String())
		}
	}
	cancel()
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the proxy did not stop")
	}
	if !errors.Is(runErr, errFindings) {
		t.Errorf("proxyRun: %v, want the gate to fail", runErr)
	}
	text := out.String()
	for _, want := range []string{"→ #3 POST notifications/initialized", "← #4 200 result id null", "FAIL 2", "fail RPC1007", "summary: 6 messages", "3 exchanges judged: 2 ok, 0 warn, 1 fail"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	raw, _ := os.ReadFile(rec)
	for _, secret := range []string{"client-token-xyz", "key-from-the-flag"} {
		if strings.Contains(text, secret) || bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the secret %q was printed or recorded", secret)
		}
	}
	if code, lintOut, _ := runMain(t, "", "lint", rec); code != exitFindings || !strings.Contains(lintOut, "RPC1007") {
		t.Errorf("lint of the recording: exit %d\n%s", code, lintOut)
	}
}

// TestWatcherHeldLines: a reply line waits for its verdict; a reply
// whose pair was dropped is still printed, without one; a client
// message's findings come under its own line (a ping is fine before
// initialize, a cancellation is not).
// testWatcher is a watcher judging with the strict contract and no
// schemas, writing to its own buffer.
func testWatcher(t *testing.T) (*watcher, *watchOutput) {
	t.Helper()
	out := &watchOutput{w: &bytes.Buffer{}}
	w, err := newWatcher(&relayOptions{Contract: "strict", Schema: "off"}, out, proxy.NewRedactor(nil))
	if err != nil {
		t.Fatal(err)
	}
	return w, out
}

func TestWatcherHeldLines(t *testing.T) {
	w, out := testWatcher(t)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	w.Message(proxy.Observation{Seq: 1, Dir: proxy.ClientToServer, Time: at, Raw: req, Size: int64(len(req)), Kind: proxy.KindRequest, Method: "ping", ID: "1"})
	w.Message(proxy.Observation{Seq: 2, Dir: proxy.ServerToClient, Time: at, Raw: reply, Size: int64(len(reply)), Kind: proxy.KindResponse, ID: "1", Completes: true})
	w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "ping", Sent: at, Done: at.Add(3 * time.Millisecond), RequestSeq: 1, ReplySeq: 2,
		Exchange: &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125, Request: envelope.Request{Body: req}, Response: &envelope.Response{Messages: [][]byte{reply}}}})
	w.Message(proxy.Observation{Seq: 3, Dir: proxy.ServerToClient, Time: at, Raw: reply, Size: int64(len(reply)), Kind: proxy.KindResponse, ID: "1", Completes: true})
	cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	w.Message(proxy.Observation{Seq: 4, Dir: proxy.ClientToServer, Time: at, Raw: cancel, Kind: proxy.KindNotification, Method: "notifications/cancelled"})
	want := "12:00:00.000 → #1 ping id 1 (40 B)\n" +
		"12:00:00.000 ← #2 result id 1 (36 B)  3ms  ok\n" +
		"12:00:00.000 ← #3 result id 1 (36 B)\n" +
		"12:00:00.000 → #4 notifications/cancelled  FAIL 1\n" +
		"      fail CLI1005  method: \"notifications/cancelled\" before initialize: the initialize request is the first exchange of a session (T-LIFE-1)\n"
	if got := out.w.(*bytes.Buffer).String(); got != want {
		t.Errorf("lines:\n%s\nwant:\n%s", got, want)
	}
}

// A request the client cancelled is owed no reply: its stream may end
// without one (T-STDIO-7). The same stream without the cancellation
// leaves the request unanswered (RPC1006). The recording carries what
// the relay knew, so lint judges it the same way.
func TestWatcherCancelledRequest(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	req := []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	hdr := http.Header{"Mcp-Session-Id": {"s-1"}, "Mcp-Protocol-Version": {"2025-11-25"}, "Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name     string
		cancel   bool
		fails    bool
		override string
		silent   bool // the relay's pair of a request left unanswered past --timeout
	}{
		{name: "cancelled", cancel: true, override: `"expect":{"expect-reply":"false"}`},
		{name: "not cancelled", fails: true},
		{name: "silent, cancelled", cancel: true, silent: true, override: `"expect":{"expect-reply":"false"}`},
		{name: "silent, not cancelled", silent: true, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, out := testWatcher(t)
			rec := &bytes.Buffer{}
			w.record = rec
			w.Message(proxy.Observation{Seq: 1, Dir: proxy.ClientToServer, Time: at, Raw: req, Kind: proxy.KindRequest, Method: "tools/list", ID: "5",
				HTTP: &proxy.HTTPMeta{Request: 1, Method: "POST", Endpoint: true, Header: hdr}})
			if tc.cancel {
				w.Message(proxy.Observation{Seq: 2, Dir: proxy.ClientToServer, Time: at, Raw: cancel, Kind: proxy.KindNotification, Method: "notifications/cancelled",
					HTTP: &proxy.HTTPMeta{Request: 2, Method: "POST", Endpoint: true, Header: hdr}})
			}
			ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20251125,
				Request:  envelope.Request{Method: "POST", Header: hdr, Body: req},
				Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(": working\n\n")}}
			if tc.silent {
				ex.Response, ex.Note = nil, "no reply within 10s; the server answered a liveness probe, so it is alive and left this request unanswered"
			}
			w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/list", Sent: at, Done: at, RequestSeq: 1, Exchange: ex})
			got := out.w.(*bytes.Buffer).String()
			if fails := strings.Contains(got, "fail RPC1006"); fails != tc.fails {
				t.Errorf("RPC1006 fails: %v, want %v; lines:\n%s", fails, tc.fails, got)
			}
			if tc.override != "" && !strings.Contains(rec.String(), tc.override) {
				t.Errorf("recording lacks %s:\n%s", tc.override, rec)
			}
		})
	}
}

// TestWatcherCancelledStdioNoReply: over stdio, a request the client
// cancelled that the server, rightly, never answered before the session
// ended is owed no reply: judged and recorded so, not "✗ no reply". The
// twin, not cancelled, is a request the server left unanswered.
func TestWatcherCancelledStdioNoReply(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	req := []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`)
	for _, tc := range []struct {
		name  string
		noted bool // "✗ … no reply", not judged; else cancelled
	}{
		{name: "cancelled"},
		{name: "not cancelled", noted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, out := testWatcher(t)
			rec := &bytes.Buffer{}
			w.record = rec
			w.Message(proxy.Observation{Seq: 1, Dir: proxy.ClientToServer, Time: at, Raw: req, Kind: proxy.KindRequest, Method: "tools/call", ID: "4"})
			if !tc.noted {
				w.Message(proxy.Observation{Seq: 2, Dir: proxy.ClientToServer, Time: at, Raw: cancel, Kind: proxy.KindNotification, Method: "notifications/cancelled"})
			}
			ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125, Request: envelope.Request{Body: req},
				Failure: "no reply before the server ended (exit status 0)"}
			w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/call", Sent: at, Done: at, RequestSeq: 1, Exchange: ex})
			got := out.w.(*bytes.Buffer).String()
			if noted := strings.Contains(got, "no reply before the server ended"); noted != tc.noted || (w.notJudged == 1) != tc.noted {
				t.Errorf("noted as unanswered: %v (not judged %d), want %v; lines:\n%s", noted, w.notJudged, tc.noted, got)
			}
			if !tc.noted && (!strings.Contains(rec.String(), `"expect":{"expect-reply":"false"}`) || strings.Contains(rec.String(), `"failure"`)) {
				t.Errorf("recording wants the override and no failure:\n%s", rec)
			}
		})
	}
}

// A list-changed notification makes the listed tools stale: a call the
// old inputSchema forbids may be valid under the new one, so it is not
// judged against the old (the twin without the notification is).
func TestWatcherForgetsChangedLists(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	list := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	listed := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}]}}`)
	changed := []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	call := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":"x"}}}`)
	served := []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"x"}]}}`)
	for _, tc := range []struct {
		name    string
		changed bool
		fails   bool
	}{
		{name: "list changed", changed: true},
		{name: "list unchanged", fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, out := testWatcher(t)
			stdio := func(req, reply []byte) *envelope.Exchange {
				return &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125, Request: envelope.Request{Body: req}, Response: &envelope.Response{Messages: [][]byte{reply}}}
			}
			w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/list", Sent: at, Done: at, Exchange: stdio(list, listed)})
			if tc.changed {
				w.Message(proxy.Observation{Seq: 3, Dir: proxy.ServerToClient, Time: at, Raw: changed, Kind: proxy.KindNotification, Method: "notifications/tools/list_changed"})
			}
			w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/call", Sent: at, Done: at, Exchange: stdio(call, served)})
			got := out.w.(*bytes.Buffer).String()
			if fails := strings.Contains(got, "fail PRO1004"); fails != tc.fails {
				t.Errorf("PRO1004 fails: %v, want %v; lines:\n%s", fails, tc.fails, got)
			}
		})
	}
}

// A cancellation binds the request it cancelled, and only while that one
// awaits its answer: the same id used again later (another client
// without sessions, a restarted one) is owed its reply; a cancellation
// of a request answered already binds nothing.
func TestWatcherCancellationIsUsedUp(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	req := []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}}
	meta := func(seq uint64) *proxy.HTTPMeta {
		return &proxy.HTTPMeta{Request: seq, Method: "POST", Endpoint: true, Header: hdr}
	}
	w, out := testWatcher(t)
	unanswered := func() *envelope.Exchange {
		return &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20251125,
			Request:  envelope.Request{Method: "POST", Header: hdr, Body: req},
			Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(": working\n\n")}}
	}
	fails := func() int { return strings.Count(out.w.(*bytes.Buffer).String(), "fail RPC1006") }

	// Request A, cancelled while in flight: no finding.
	w.Message(proxy.Observation{Seq: 1, Dir: proxy.ClientToServer, Time: at, Raw: req, Kind: proxy.KindRequest, Method: "tools/list", ID: "5", HTTP: meta(1)})
	w.Message(proxy.Observation{Seq: 2, Dir: proxy.ClientToServer, Time: at, Raw: cancel, Kind: proxy.KindNotification, Method: "notifications/cancelled", HTTP: meta(2)})
	w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/list", Sent: at, Done: at, RequestSeq: 1, Exchange: unanswered()})
	if n := fails(); n != 0 {
		t.Fatalf("the cancelled request failed RPC1006:\n%s", out.w)
	}
	// Request B reuses id 5 and goes unanswered: it is owed its reply.
	w.Message(proxy.Observation{Seq: 3, Dir: proxy.ClientToServer, Time: at, Raw: req, Kind: proxy.KindRequest, Method: "tools/list", ID: "5", HTTP: meta(3)})
	w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/list", Sent: at, Done: at, RequestSeq: 3, Exchange: unanswered()})
	if n := fails(); n != 1 {
		t.Fatalf("a later request with the cancelled id: %d RPC1006 fails, want 1:\n%s", n, out.w)
	}
	// A cancellation of nothing in flight, then request C with that id.
	w.Message(proxy.Observation{Seq: 4, Dir: proxy.ClientToServer, Time: at, Raw: cancel, Kind: proxy.KindNotification, Method: "notifications/cancelled", HTTP: meta(4)})
	w.Message(proxy.Observation{Seq: 5, Dir: proxy.ClientToServer, Time: at, Raw: req, Kind: proxy.KindRequest, Method: "tools/list", ID: "5", HTTP: meta(5)})
	w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/list", Sent: at, Done: at, RequestSeq: 5, Exchange: unanswered()})
	if n := fails(); n != 2 {
		t.Fatalf("a request after a cancellation of nothing in flight: %d RPC1006 fails in all, want 2:\n%s", n, out.w)
	}
}

// TestRecordedFactsScrubbed: the facts a relay records quote the
// server's words (a tool's description), which may echo a credential the
// client sent: the facts line is scrubbed like every body.
func TestRecordedFactsScrubbed(t *testing.T) {
	out := &watchOutput{w: &bytes.Buffer{}}
	w, err := newWatcher(&relayOptions{Contract: "strict", Schema: "off"}, out, proxy.NewRedactor(http.Header{"X-Api-Key": {"key-from-the-flag"}}))
	if err != nil {
		t.Fatal(err)
	}
	var rec bytes.Buffer
	w.record = &rec
	f, err := expect.ParseFacts([]byte(`{"protocolVersion":"2025-11-25","tools":[{"name":"a","description":"calls upstream with key-from-the-flag","inputSchema":{"type":"object"}}],"toolsListed":true}`))
	if err != nil {
		t.Fatal(err)
	}
	w.setFacts(f)
	if !strings.Contains(rec.String(), `"facts"`) || !strings.Contains(rec.String(), envelope.SecretMarker("X-Api-Key")) {
		t.Fatalf("no scrubbed facts line recorded: %s", rec.String())
	}
	if strings.Contains(rec.String(), "key-from-the-flag") {
		t.Errorf("the secret reached the recorded facts: %s", rec.String())
	}
}

// streamsSession is the session streamsServer issues.
const streamsSession = "7c0f6a52-3b9e-4d21-a8f4-5e6b1c9d2e07"

// streamsServer is a 2025-11-25 server whose streams carry more than an
// answer: initialize is answered on a stream it then holds open (a
// client goes on at once), tools/call's stream carries a progress
// notification after its response whose progress is a string, and the
// GET stream carries a log message with a level that is none of the
// eight, then a valid one.
func streamsServer(t *testing.T) *httptest.Server {
	t.Helper()
	event := func(w http.ResponseWriter, msgs ...string) {
		for _, m := range msgs {
			io.WriteString(w, "event: message\ndata: "+m+"\n\n")
		}
		w.(http.Flusher).Flush()
	}
	hold := func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}
	hs := newLoopbackServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Mcp-Session-Id", streamsSession)
		if r.Method == "GET" {
			w.Header().Set("Content-Type", "text/event-stream")
			event(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":"x"}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"y"}}`)
			hold(r)
			return
		}
		switch method := gjson.GetBytes(body, "method").Str; method {
		case "initialize":
			w.Header().Set("Content-Type", "text/event-stream")
			event(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{}},"serverInfo":{"name":"streams","version":"1"}}}`)
			hold(r)
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			event(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
				`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":"half"}}`)
		case "tools/list":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(hs.Close)
	return hs
}

// reportRows reads a JSON report's verdicts as "fixture CHECK status
// path", every one, sorted.
func reportRows(t *testing.T, file string) []string {
	t.Helper()
	var rows []string
	for _, r := range reportResults(t, file) {
		rows = append(rows, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", r.Fixture, r.Check, r.Status, r.Path)))
	}
	slices.Sort(rows)
	return rows
}

// TestProxyJudgesStreamsAsLint: through the proxy, what a POST's stream
// carries after its response and what the GET stream carries are judged
// (PRO1003 fails the string progress and the level that is no level),
// each reply line with its verdict; a client that goes on at once after
// an answer on a stream left open is not judged as if the answer had not
// come; and lint of the recording gives every verdict the proxy gave.
func TestProxyJudgesStreamsAsLint(t *testing.T) {
	hs := streamsServer(t)
	dir := t.TempDir()
	rec, rep, linted := filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "proxy.json"), filepath.Join(dir, "lint.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	endpoint, out, stop := startProxy(t, hs.URL+"/mcp", proxy.DefaultTimeout, rec, rep)

	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	send := func(method, body string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, method, endpoint, strings.NewReader(body))
		req.Header = hdr.Clone()
		if method == "GET" {
			req.Header = http.Header{"Accept": {"text/event-stream"}}
			for _, k := range []string{"Mcp-Session-Id", "Mcp-Protocol-Version"} {
				req.Header[k] = hdr[k]
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// The answer to initialize comes on a stream the server holds open:
	// the client reads it and goes on at once, as clients do.
	init := send("POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	defer init.Body.Close()
	if line, _ := bufio.NewReader(init.Body).ReadString('\n'); !strings.HasPrefix(line, "event: message") {
		t.Fatalf("initialize: the client read %q", line)
	}
	hdr.Set("Mcp-Session-Id", streamsSession)
	hdr.Set("Mcp-Protocol-Version", "2025-11-25")
	resp := send("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	resp = send("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	get := send("GET", "")
	defer get.Body.Close()
	br := bufio.NewReader(get.Body)
	for seen := 0; seen < 2; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("GET stream: %v", err)
		}
		if strings.HasPrefix(line, "data: ") {
			seen++
		}
	}
	resp = send("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"progressToken":"t"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	// initialize is judged Quiet after its answer, the stream still open
	// (HTTP1005 warns of that: the response SHOULD end it).
	waitForOutput(t, out, regexp.MustCompile(`result id 0 \(\d+ B\)  \S+  WARN 1`))
	for deadline := time.Now().Add(10 * time.Second); strings.Count(out.String(), "fail PRO1003") < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the two PRO1003 failures were not reported:\n%s", out.String())
		}
	}
	if err := stop(); !errors.Is(err, errFindings) {
		t.Errorf("proxyRun: %v, want the gate to fail", err)
	}
	text := out.String()
	for _, re := range []string{
		`← #\d+ event 1 of #1: result id 0 \(\d+ B\)  \S+  WARN 1\n\s+warn HTTP1005\s+http\.body: the stream stayed open after its response`,
		`← #\d+ event 2 of #\d+: result id 2 \(\d+ B\)  \S+  FAIL 1\n\s+fail PRO1003  messages\[2\]: progress notification after the response.*\n\s+fail PRO1003  messages\[2\]\.params\.progress: progress is string "half"`,
		`← #\d+ event 1 of #\d+: notifications/message \(\d+ B\)  \S+  FAIL 1\n\s+fail PRO1003  reply\.params\.level: log level string "loud"`,
		`← #\d+ event 2 of #\d+: notifications/message \(\d+ B\)  \S+  ok\n`,
		`7 exchanges judged: 4 ok, 1 warn, 2 fail; 5 client messages judged: 5 ok, 0 warn, 0 fail`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("output lacks %s:\n%s", re, text)
		}
	}
	if code, lintOut, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != exitFindings {
		t.Fatalf("lint of the recording: exit %d\n%s%s", code, lintOut, errOut)
	}
	live := reportRows(t, rep)
	for _, want := range []string{"#12 tools/call PRO1003 fail messages[2].params.progress", "#8 GET PRO1003 fail reply.params.level"} {
		if !slices.Contains(live, want) {
			t.Errorf("the proxy's report lacks %q:\n%s", want, strings.Join(live, "\n"))
		}
	}
	if diff := cmp.Diff(live, reportRows(t, linted)); diff != "" {
		t.Errorf("verdicts: the proxy's (-) and lint's of its recording (+) differ:\n%s", diff)
	}
}

// startProxy runs the proxy command against url, recording to rec and
// reporting (JSON) to rep where they are not empty, and waits for it to
// listen. It returns the endpoint a client talks to, the proxy's lines,
// and stop, which ends the proxy as Ctrl-C does and returns its error.
func startProxy(t *testing.T, url string, timeout time.Duration, rec, rep string) (endpoint string, out *lockedBuf, stop func() error) {
	t.Helper()
	s, _, _ := testStreams()
	out = &lockedBuf{}
	s.Out = out
	ctx, cancel := context.WithCancel(context.Background())
	o := &proxyOptions{URL: url, Listen: "127.0.0.1:0"}
	o.MaxBytes, o.Timeout, o.Record, o.Report, o.Format, o.Contract, o.Schema, o.FailOn, o.Color = proxy.DefaultMaxBytes, timeout, rec, rep, "json", "strict", "builtin", "fail", "never"
	done := make(chan error, 1)
	go func() { done <- proxyRun(ctx, s, o) }()
	t.Cleanup(cancel)
	endpoint = waitForOutput(t, out, regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/mcp)`))[1]
	return endpoint, out, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			t.Fatal("the proxy did not stop")
			return nil
		}
	}
}

// waitForOutput waits for re in out and returns its submatches.
func waitForOutput(t *testing.T, out *lockedBuf, re *regexp.Regexp) []string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the output:\n%s", re, out.String())
		}
	}
}

// TestWatcherLaterAnswer: an answer on a POST's stream whose pair comes
// later is printed with its verdict when the pair comes, after the
// stream's later messages; one whose pair never comes is printed at the
// summary, without one.
func TestWatcherLaterAnswer(t *testing.T) {
	w, out := testWatcher(t)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	meta := func(event int) *proxy.HTTPMeta {
		return &proxy.HTTPMeta{Request: 1, Method: "POST", Endpoint: true, Status: 200, Stream: true, Event: event}
	}
	w.Message(proxy.Observation{Seq: 2, Dir: proxy.ServerToClient, Time: at, Raw: reply, Size: int64(len(reply)), Kind: proxy.KindResponse, ID: "1", Completes: true, Later: true, HTTP: meta(1)})
	w.Message(proxy.Observation{Seq: 3, Dir: proxy.ServerToClient, Time: at, Raw: note, Size: int64(len(note)), Kind: proxy.KindNotification, Method: "notifications/message", HTTP: meta(2)})
	w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "ping", Sent: at, Done: at.Add(2 * time.Millisecond), RequestSeq: 1, ReplySeq: 2,
		Exchange: &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20251125, Request: envelope.Request{Method: "POST", Body: req},
			Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte("data: " + string(reply) + "\n\ndata: " + string(note) + "\n\n")}}})
	w.Message(proxy.Observation{Seq: 5, Dir: proxy.ServerToClient, Time: at, Raw: reply, Size: int64(len(reply)), Kind: proxy.KindResponse, ID: "1", Completes: true, Later: true, HTTP: meta(1)})
	got := out.w.(*bytes.Buffer).String() + w.summary(proxy.Stats{}, nil)
	for _, want := range []string{
		// (The notification after the response warns: the stream
		// SHOULD end with the response, T-HTTP-15.)
		"12:00:00.000 ← #3 event 2 of #1: notifications/message (87 B)\n12:00:00.000 ← #2 event 1 of #1: result id 1 (36 B)  2ms  WARN 1\n",
		"← #5 event 1 of #1: result id 1 (36 B)\n\nsummary:",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lines lack %q:\n%s", want, got)
		}
	}
}

// The proxy names its upstream in the terminal and the reports without
// the secrets its URL may carry: a password, or a key in the query.
func TestShownURL(t *testing.T) {
	u, _ := url.Parse("http://user:pw@127.0.0.1:8080/api%2Fv1/mcp?api_key=S3&b=2")
	if got, want := shownURL(u), "http://user:xxxxx@127.0.0.1:8080/api%2Fv1/mcp?api_key=xxxxx&b=xxxxx"; got != want {
		t.Errorf("shownURL = %q, want %q", got, want)
	}
	if u.RawQuery != "api_key=S3&b=2" {
		t.Errorf("shownURL changed its argument: %q", u.RawQuery)
	}
	// check and send name their target so too (review rev85: the key
	// went raw into every report format).
	_, shown, cleanup, err := openTarget(context.Background(), &checkOptions{URL: u.String()}, nil, transport.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if strings.Contains(shown, "S3") || strings.Contains(shown, ":pw@") {
		t.Errorf("check's target is shown as %q, with a secret of its URL", shown)
	}
}

// The upstream URL's query values are scrubbed however a server echoes
// them: decoded, as written in the URL, or escaped anew.
func TestLearnQuery(t *testing.T) {
	up, _ := url.Parse("http://127.0.0.1:1/mcp?api_key=sk%2Flive%2Babc%3D42")
	red := proxy.NewRedactor(nil)
	learnQuery(red, up)
	for _, echoed := range []string{"sk/live+abc=42", "sk%2Flive%2Babc%3D42"} {
		if got := string(red.Scrub([]byte(`{"message":"key ` + echoed + `"}`))); strings.Contains(got, "abc") {
			t.Errorf("%s scrubbed to %s", echoed, got)
		}
	}
}

// TestProxyJudgesSilenceAsSend: the reference server left to hang on a
// tools/call, or dropping its connection (the crash fault over HTTP,
// which keeps serving), fails RPC1006 through the proxy as send fails
// it on the same server, and lint of the recording agrees; one that
// drops the request and then stops accepting connections died on it
// (PRO1005). The client sees what the server did: a dropped connection,
// not a reply the proxy made up. Twin: the clean server passes.
func TestProxyJudgesSilenceAsSend(t *testing.T) {
	tests := []struct {
		name, fault string
		gone        bool   // the server stops listening on the tools/call
		want        string // in the proxy's output, lint's and send's
		note        string // in the proxy's output
	}{
		{name: "answered", want: "ok"},
		{name: "hang", fault: "hang", want: "fail RPC1006", note: "no reply within 300ms; the server answered a liveness probe, so it is alive and left this request unanswered"},
		{name: "crash", fault: "crash", want: "fail RPC1006", note: "request failed: EOF; the server answered a liveness probe, so it is alive and left this request unanswered"},
		{name: "crash, then gone", fault: "crash", gone: true, want: "fail PRO1005", note: "the server died: it left the request unanswered, then stopped accepting connections"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := refserver.New(refserver.Options{Fault: tc.fault})
			if err != nil {
				t.Fatal(err)
			}
			var hs *httptest.Server
			hs = newLoopbackServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if tc.gone && gjson.GetBytes(body, "method").Str == "tools/call" {
					hs.Listener.Close()
				}
				srv.ServeHTTP(w, r)
			}))
			defer hs.Close()
			defer srv.Close()
			dir := t.TempDir()
			rec := filepath.Join(dir, "rec.jsonl")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			endpoint, out, stop := startProxy(t, hs.URL+"/mcp", 300*time.Millisecond, rec, "")

			hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
			post := func(body string, wait time.Duration) (string, error) {
				cctx, stop := context.WithTimeout(ctx, wait)
				defer stop()
				req, _ := http.NewRequestWithContext(cctx, "POST", endpoint, strings.NewReader(body))
				req.Header = hdr.Clone()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
					hdr.Set("Mcp-Session-Id", sid)
				}
				return fmt.Sprintf("%d %s", resp.StatusCode, b), err
			}
			if _, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			hdr.Set("Mcp-Protocol-Version", "2025-11-25")
			post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 5*time.Second)
			got, err := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`, time.Second)
			switch {
			case tc.fault == "" && (err != nil || !strings.HasPrefix(got, "200 ")):
				t.Errorf("tools/call: %q, %v", got, err)
			case tc.fault == "crash" && (err == nil || strings.Contains(got, "502")):
				t.Errorf("tools/call: the client got %q, %v; want the connection dropped, as the server dropped it", got, err)
			}
			waitForOutput(t, out, regexp.MustCompile(`tools/call: no reply .*|← #\d+ 200 result id 2 .*`))
			runErr := stop()
			text := out.String()
			if tc.fault == "" {
				if runErr != nil || !strings.Contains(text, "3 exchanges judged: 3 ok") {
					t.Errorf("proxyRun: %v\n%s", runErr, text)
				}
			} else if !errors.Is(runErr, errFindings) || !strings.Contains(text, tc.want) || !strings.Contains(text, tc.note) {
				t.Errorf("proxyRun: %v; want the gate to fail, with %q and %q:\n%s", runErr, tc.want, tc.note, text)
			}
			code, lintOut, _ := runMain(t, "", "lint", rec)
			if wantCode := map[bool]exitCode{true: exitOK, false: exitFindings}[tc.fault == ""]; code != wantCode || tc.fault != "" && !strings.Contains(lintOut, strings.TrimPrefix(tc.want, "fail ")) {
				t.Errorf("lint of the recording: exit %d, want %d and %q\n%s", code, wantCode, tc.want, lintOut)
			}
			if tc.gone {
				return // nothing left to send to
			}
			call := filepath.Join(dir, "call.json")
			os.WriteFile(call, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`), 0o600)
			_, sendOut, sendErr := runMain(t, "", "send", "--protocol", "2025-11-25", "--timeout", "300ms", hs.URL+"/mcp", call)
			if tc.fault != "" && !strings.Contains(sendOut+sendErr, tc.want) || tc.fault == "" && strings.Contains(sendOut+sendErr, "fail ") {
				t.Errorf("send on the same server gives other verdicts than the proxy's %q:\n%s%s", tc.want, sendOut, sendErr)
			}
		})
	}
}

// resumeServer is a 2025-11-25 server whose tools/call stream ends after
// an event with an id and no response, which it delivers on the GET
// that resumes the stream (T-HTTP-15); bad makes that response hold
// both a result and an error, code 0, with a two-line message.
func resumeServer(bad bool) *httptest.Server {
	const sid = "c0ffee-5e55-10n-1d-0f-some-length"
	var mu sync.Mutex
	pending := map[string]string{}
	return newLoopbackServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			mu.Lock()
			msg, ok := pending[r.Header.Get("Last-Event-ID")]
			delete(pending, r.Header.Get("Last-Event-ID"))
			mu.Unlock()
			if !ok {
				w.Header().Set("Allow", "POST")
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: ev-2\ndata: "+msg+"\n\n")
			return
		}
		body, _ := io.ReadAll(r.Body)
		m := gjson.ParseBytes(body)
		id := m.Get("id").Raw
		w.Header().Set("Content-Type", "application/json")
		switch m.Get("method").Str {
		case "":
			w.WriteHeader(http.StatusAccepted)
		case "initialize":
			w.Header().Set("Mcp-Session-Id", sid)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"resume","version":"1"}}}`)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "tools/list":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"tools":[{"name":"get-sum","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]},"annotations":{"readOnlyHint":true}}]}}`)
		case "tools/call":
			msg := `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"3"}]}}`
			if bad {
				msg = `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"3"}]},"error":{"code":0,"message":"x\ny"}}`
			}
			mu.Lock()
			pending["ev-1"] = msg
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: ev-1\nretry: 100\ndata: \n\n")
		default:
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
		}
	}))
}

// TestProxyJudgesResumedStreamAsSend: a client that resumes a POST's
// stream with GET and Last-Event-ID gets the response there; the proxy
// judges it as send judges the same server (send resumes the stream
// itself): a correct server passes without RPC1006's warning, and a bad
// response fails as send fails it. lint of the recording agrees.
func TestProxyJudgesResumedStreamAsSend(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  bool
		want []string // the server's findings, in the proxy's output, lint's and send's
	}{
		{name: "correct"},
		{name: "bad response", bad: true, want: []string{"RPC1003", "ERR1001", "ERR2001", "SCH1001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := resumeServer(tc.bad)
			defer hs.Close()
			dir := t.TempDir()
			rec := filepath.Join(dir, "rec.jsonl")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			endpoint, out, stop := startProxy(t, hs.URL+"/mcp", 2*time.Second, rec, "")
			hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
			send := func(method, body string) string {
				req, _ := http.NewRequestWithContext(ctx, method, endpoint, strings.NewReader(body))
				req.Header = hdr.Clone()
				if method == "GET" {
					req.Header.Del("Content-Type")
					req.Header.Set("Accept", "text/event-stream")
					req.Header.Set("Last-Event-ID", "ev-1")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
					hdr.Set("Mcp-Session-Id", sid)
				}
				b, _ := io.ReadAll(resp.Body)
				return string(b)
			}
			send("POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			hdr.Set("Mcp-Protocol-Version", "2025-11-25")
			send("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			send("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			if got := send("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}`); !strings.Contains(got, "id: ev-1") {
				t.Fatalf("the POST's stream: %q", got)
			}
			if got := send("GET", ""); !strings.Contains(got, `"id":2`) {
				t.Fatalf("the resumed stream: %q", got)
			}
			waitForOutput(t, out, regexp.MustCompile(`event 1 of #\d+: (result|error 0) id 2 .*`))
			runErr := stop()
			text := out.String()
			if strings.Contains(text, "RPC1006") || strings.Contains(text, "ended without the answer") {
				t.Errorf("the resumed exchange drew RPC1006:\n%s", text)
			}
			_, lintOut, _ := runMain(t, "", "lint", "-v", rec)
			call := filepath.Join(dir, "call.json")
			os.WriteFile(call, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}`), 0o600)
			_, sendOut, sendErr := runMain(t, "", "send", "--protocol", "2025-11-25", hs.URL+"/mcp", call)
			if !tc.bad {
				if runErr != nil || !strings.Contains(lintOut, "PASSED") || strings.Contains(sendOut+sendErr, "fail ") {
					t.Errorf("proxyRun: %v\n%s\nlint:\n%s\nsend:\n%s%s", runErr, text, lintOut, sendOut, sendErr)
				}
				return
			}
			if !errors.Is(runErr, errFindings) {
				t.Errorf("proxyRun: %v, want the gate to fail", runErr)
			}
			for _, id := range tc.want {
				for what, got := range map[string]string{"proxy": text, "lint": lintOut, "send": sendOut + sendErr} {
					if !strings.Contains(got, "fail "+id) {
						t.Errorf("%s lacks fail %s:\n%s", what, id, got)
					}
				}
			}
		})
	}
}
