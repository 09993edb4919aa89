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

// TestWatcherOversizedIsAnError: an exchange the relay kept only the
// beginning of (its reply or request over --max-bytes) could not be
// judged: an error, which fails the gate as check's and send's does,
// and lint of the recording gives the same error. The twin, the same
// reply within the bound, passes.
func TestWatcherOversizedIsAnError(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	req := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	reply := []byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
	for _, tc := range []struct {
		name      string
		oversized bool
	}{
		{name: "oversized", oversized: true},
		{name: "within the bound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, out := testWatcher(t)
			w.maxBytes = 64
			rec := &bytes.Buffer{}
			w.record = rec
			hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {envelope.V20251125}}
			w.Message(proxy.Observation{Seq: 1, Dir: proxy.ClientToServer, Time: at, Raw: req, Kind: proxy.KindRequest, Method: "tools/list", ID: "2",
				HTTP: &proxy.HTTPMeta{Request: 1, Method: "POST", Endpoint: true, Header: hdr}})
			ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20251125,
				Request:  envelope.Request{Method: "POST", Header: hdr, Body: req},
				Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: reply, Truncated: tc.oversized}}
			w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/list", Sent: at, Done: at, RequestSeq: 1, Exchange: ex, Oversized: tc.oversized})
			got := out.w.(*bytes.Buffer).String()
			errored := strings.Contains(got, "error RPC1006") && strings.Contains(got, "could not judge: the request or its reply is larger than --max-bytes (64 bytes)")
			if errored != tc.oversized || w.gate(false) != tc.oversized {
				t.Errorf("error: %v, gate fails: %v; want both %v; lines:\n%s", errored, w.gate(false), tc.oversized, got)
			}
			if w.notJudged != 0 {
				t.Errorf("%d exchange(s) counted as not judged, want 0 (it is judged, an error or a pass)", w.notJudged)
			}
			file := filepath.Join(t.TempDir(), "rec.jsonl")
			if err := os.WriteFile(file, rec.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			code, lintOut, errOut := runMain(t, "", "lint", file)
			wantCode := exitOK
			if tc.oversized {
				wantCode = exitFindings
			}
			if code != wantCode || strings.Contains(lintOut, "could not judge: the request or its reply is larger than --max-bytes") != tc.oversized {
				t.Errorf("lint of the recording: exit %d, want %d\n%s%s\nrecording:\n%s", code, wantCode, lintOut, errOut, rec)
			}
		})
	}
}

// TestWatcherStreamBoundIsAnError: a POST's stream the relay stopped
// judging at check's bounds before its response (Response.Truncated, the
// bound named in Failure, as the relay pairs it) could not be judged: an
// error that fails the gate, as check's is, and lint of the recording
// says the same. The twin, a request the client gave up on (Failure, no
// truncation), is no reply of the server's and is not judged.
func TestWatcherStreamBoundIsAnError(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	req := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	for _, tc := range []struct {
		name, failure string
		truncated     bool
	}{
		{name: "past the byte bound", failure: "reply exceeds 100 bytes", truncated: true},
		{name: "past the event bound", failure: "no response in the first 1000 events", truncated: true},
		{name: "the client went away", failure: "the client closed the connection before the reply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, out := testWatcher(t)
			rec := &bytes.Buffer{}
			w.record = rec
			hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {envelope.V20251125}}
			w.Message(proxy.Observation{Seq: 1, Dir: proxy.ClientToServer, Time: at, Raw: req, Kind: proxy.KindRequest, Method: "tools/list", ID: "2",
				HTTP: &proxy.HTTPMeta{Request: 1, Method: "POST", Endpoint: true, Header: hdr}})
			ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20251125, Failure: tc.failure,
				Request:  envelope.Request{Method: "POST", Header: hdr, Body: req},
				Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(": keep-alive\n\n"), Truncated: tc.truncated}}
			w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "tools/list", Sent: at, Done: at, RequestSeq: 1, Exchange: ex})
			got := out.w.(*bytes.Buffer).String()
			errored := strings.Contains(got, "error RPC1006") && strings.Contains(got, "could not judge: "+tc.failure)
			if errored != tc.truncated || w.gate(false) != tc.truncated {
				t.Errorf("error: %v, gate fails: %v; want both %v; lines:\n%s", errored, w.gate(false), tc.truncated, got)
			}
			if judged := w.notJudged == 0; judged != tc.truncated {
				t.Errorf("%d exchange(s) counted as not judged; judged wanted: %v", w.notJudged, tc.truncated)
			}
			if !tc.truncated {
				return
			}
			file := filepath.Join(t.TempDir(), "rec.jsonl")
			if err := os.WriteFile(file, rec.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			code, lintOut, errOut := runMain(t, "", "lint", file)
			if code != exitFindings || !strings.Contains(lintOut, "could not judge: "+tc.failure) {
				t.Errorf("lint of the recording: exit %d, want %d\n%s%s\nrecording:\n%s", code, exitFindings, lintOut, errOut, rec)
			}
		})
	}
}
