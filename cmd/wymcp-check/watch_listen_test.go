package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/proxy"
)

// Over stdio, a subscriptions/listen the client cancelled ends with no
// response, owed none (T-STDIO-7): what the server wrote for it, its
// acknowledgment, is judged with it, and nothing is missing (T-SUB-1).
// The relay dropped those messages, and PRO1009 warned that no
// acknowledgment arrived. The twin, a listen with none, still warns.
func TestWatcherCancelledStdioListenKeepsItsAcknowledgment(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	req := []byte(`{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`)
	ack := []byte(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"notifications":{"toolsListChanged":true}}}`)
	cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L1"}}`)
	for _, tc := range []struct {
		name  string
		acked bool
	}{
		{name: "acknowledged", acked: true},
		{name: "no acknowledgment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, out := testWatcher(t)
			rec := &bytes.Buffer{}
			w.record = rec
			w.Message(proxy.Observation{Seq: 1, Dir: proxy.ClientToServer, Time: at, Raw: req, Kind: proxy.KindRequest, Method: "subscriptions/listen", ID: `"L1"`})
			ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20260728, Request: envelope.Request{Body: req},
				Failure: "no reply before the server ended (exit status 0)"}
			if tc.acked {
				w.Message(proxy.Observation{Seq: 2, Dir: proxy.ServerToClient, Time: at, Raw: ack, Kind: proxy.KindNotification, Method: "notifications/subscriptions/acknowledged"})
				ex.Response = &envelope.Response{Messages: [][]byte{ack}}
			}
			w.Message(proxy.Observation{Seq: 3, Dir: proxy.ClientToServer, Time: at, Raw: cancel, Kind: proxy.KindNotification, Method: "notifications/cancelled"})
			w.Exchange(proxy.Pair{Asker: proxy.ClientToServer, Method: "subscriptions/listen", Sent: at, Done: at, RequestSeq: 1, Exchange: ex})
			got := out.w.(*bytes.Buffer).String()
			if warns := strings.Contains(got, "warn PRO1009"); warns == tc.acked {
				t.Errorf("PRO1009 warns: %v, want %v; lines:\n%s", warns, !tc.acked, got)
			}
			if w.notJudged != 0 || strings.Contains(got, "no reply before the server ended") {
				t.Errorf("the cancelled listen was not judged; lines:\n%s", got)
			}
			if strings.Contains(rec.String(), `"failure"`) {
				t.Errorf("recording keeps the failure, so lint would not judge it:\n%s", rec)
			}
		})
	}
}
