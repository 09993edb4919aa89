package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/proxy"
)

// TestNoReplyText: the line of an exchange judged without its answer
// says what the relay saw: nothing, a reply still open or broken off when
// its silence was judged, or a stream the server ended.
func TestNoReplyText(t *testing.T) {
	for _, tc := range []struct {
		transport string
		resp      *envelope.Response
		want      string
	}{
		{envelope.HTTP, nil, "no reply"},
		{envelope.HTTP, &envelope.Response{Status: 200, Cut: true}, "no answer in the reply"},
		{envelope.HTTP, &envelope.Response{Status: 200, Ended: true}, "the stream ended without the answer"},
		{envelope.Stdio, nil, "no reply"},
		{envelope.Stdio, &envelope.Response{Messages: [][]byte{[]byte(`{"jsonrpc":"2.0","id":"k","method":"ping"}`)}}, "no response among the lines that came"},
	} {
		if got := noReplyText(&envelope.Exchange{Transport: tc.transport, Response: tc.resp}); got != tc.want {
			t.Errorf("noReplyText(%+v) = %q, want %q", tc.resp, got, tc.want)
		}
	}
}

// TestWatcherUnansweredIsAnError: a request whose server answered
// neither it nor the relay's liveness probe could not be judged: an
// error that fails the gate and is recorded, so that lint gives it too,
// as check and send give it (review rev9: the relay counted it "not
// judged" and passed). The twin: a client that went away leaves nothing
// of the server's to judge.
func TestWatcherUnansweredIsAnError(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	req := []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{}}}`)
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {envelope.V20251125}}
	for _, tc := range []struct {
		name       string
		unanswered bool
		failure    string
	}{
		{"neither the request nor the probe answered", true, "no reply within 10s; the server did not answer a liveness probe either"},
		{"the client went away", false, "the client went away before the reply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, out := testWatcher(t)
			rec := &bytes.Buffer{}
			w.record = rec
			w.Message(proxy.Observation{Seq: 1, Dir: proxy.ClientToServer, Time: at, Raw: req, Kind: proxy.KindRequest, Method: "tools/call", ID: "5",
				HTTP: &proxy.HTTPMeta{Request: 1, Method: "POST", Endpoint: true, Header: hdr}})
			ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20251125, Request: envelope.Request{Method: "POST", Header: hdr, Body: req},
				Failure: tc.failure, Unanswered: tc.unanswered}
			w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/call", Sent: at, Done: at, RequestSeq: 1, Exchange: ex})
			got := out.w.(*bytes.Buffer).String()
			errored := strings.Contains(got, "error RPC1006") && strings.Contains(got, "did not answer a liveness probe either")
			if errored != tc.unanswered || w.gate(false) != tc.unanswered || (w.notJudged == 1) == tc.unanswered {
				t.Errorf("error %v, gate fails %v, not judged %d; want an error: %v\n%s", errored, w.gate(false), w.notJudged, tc.unanswered, got)
			}
			if !tc.unanswered {
				return
			}
			file := filepath.Join(t.TempDir(), "rec.jsonl")
			if err := os.WriteFile(file, rec.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, lintOut, _ := runMain(t, "", "lint", file); code != exitFindings || !strings.Contains(lintOut, "did not answer a liveness probe either") {
				t.Errorf("lint of the recording: exit %d\n%s\nrecording:\n%s", code, lintOut, rec)
			}
		})
	}
}

// TestWatcherCancelledLeftSaysSo: a request the client cancelled and
// then left is owed no reply: its line says so, not "no reply" (review
// rev72: it read as a reply lost). The twin, not cancelled, says "no
// reply".
func TestWatcherCancelledLeftSaysSo(t *testing.T) {
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	req := []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{}}}`)
	cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}`)
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {envelope.V20251125}}
	for _, cancelled := range []bool{false, true} {
		w, out := testWatcher(t)
		w.Message(proxy.Observation{Seq: 1, Dir: proxy.ClientToServer, Time: at, Raw: req, Kind: proxy.KindRequest, Method: "tools/call", ID: "5",
			HTTP: &proxy.HTTPMeta{Request: 1, Method: "POST", Endpoint: true, Header: hdr}})
		if cancelled {
			w.Message(proxy.Observation{Seq: 2, Dir: proxy.ClientToServer, Time: at, Raw: cancel, Kind: proxy.KindNotification, Method: "notifications/cancelled",
				HTTP: &proxy.HTTPMeta{Request: 2, Method: "POST", Endpoint: true, Header: hdr}})
		}
		// (The reply's stream had begun: a cancelled request with none
		// at all ends as the cancellation asked, and is judged so.)
		stream := &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Cut: true}
		ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20251125, Request: envelope.Request{Method: "POST", Header: hdr, Body: req},
			Response: stream, Failure: "the client went away during the reply"}
		w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/call", Sent: at, Done: at, RequestSeq: 1, Exchange: ex})
		got := out.w.(*bytes.Buffer).String()
		want := "tools/call: no reply: the client went away during the reply"
		if cancelled {
			want = "tools/call: cancelled by the client, no reply owed: the client went away during the reply"
		}
		if !strings.Contains(got, want) {
			t.Errorf("cancelled %v: want %q in\n%s", cancelled, want, got)
		}
	}
}
