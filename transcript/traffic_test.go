package transcript_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/transcript"
)

// TestTrafficRoundTrip: a relay's traffic lines come back as written, in
// order among the exchanges, with the facts in force; bytes that are not
// UTF-8 survive.
func TestTrafficRoundTrip(t *testing.T) {
	want := []*transcript.Traffic{
		{Kind: transcript.TrafficClient, Seq: 1, Fixture: "#1 initialize", Transport: "http", Method: "POST",
			Header: http.Header{"Accept": {"application/json, text/event-stream"}, "Authorization": {"<redacted>"}},
			Body:   []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`)},
		{Kind: transcript.TrafficClosed, Transport: "http", Request: 1, Status: 200, SessionID: "s-1", Body: []byte(`{"jsonrpc":"2.0","id":0,"result":{}}`)},
		{Kind: transcript.TrafficRequest, Seq: 4, Transport: "http", On: 3, Body: []byte(`{"jsonrpc":"2.0","id":0,"method":"roots/list"}`)},
		{Kind: transcript.TrafficClient, Seq: 5, Fixture: "#5 message", Transport: "stdio", Body: []byte("\xff{")},
		{Kind: transcript.TrafficClosed, Transport: "stdio", Request: 5},
		{Kind: transcript.TrafficLost, Lost: 3},
	}
	var buf bytes.Buffer
	buf.WriteString(`{"facts":{"protocolVersion":"2025-11-25"}}` + "\n")
	for _, tr := range want {
		if err := transcript.WriteTraffic(&buf, tr); err != nil {
			t.Fatal(err)
		}
	}
	recs, errs := readAll(t, "traffic", &buf)
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	var got []*transcript.Traffic
	for i, r := range recs {
		if r.Traffic == nil || r.Facts == nil || r.Facts.Version != "2025-11-25" || r.Line != i+2 {
			t.Errorf("record %d: %+v", i, r)
			continue
		}
		got = append(got, r.Traffic)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestTrafficLineErrors(t *testing.T) {
	in := strings.Join([]string{
		`{"traffic":{"kind":"gossip","transport":"http"}}`,
		`{"traffic":{"kind":"client","transport":"smoke"}}`,
		`{"traffic":{"kind":"client","seq":-1,"transport":"stdio"}}`,
		`{"traffic":[1]}`,
		`{"traffic":{"kind":"lost","lost":-1}}`,
		`{"traffic":{"kind":"client","transport":"stdio","body":"{}"}}`,
	}, "\n")
	recs, errs := readAll(t, "bad", strings.NewReader(in))
	want := []string{
		`bad:1: "traffic.kind" is "gossip", want one of client, request, closed, lost`,
		`bad:2: "traffic.transport" is "smoke", want "http" or "stdio"`,
		`bad:3: "traffic" numbers must be non-negative integers, not -1`,
		`bad:4: "traffic" must be an object`,
		`bad:5: "traffic" numbers must be non-negative integers, not -1`,
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if len(recs) != 1 || recs[0].Line != 6 || string(recs[0].Traffic.Body) != "{}" {
		t.Errorf("the good line after the bad ones: %+v", recs)
	}
}
