package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/proxy"
	"github.com/wymcp/wymcp-check/transcript"
)

// TestServerRequestTraffic: a request the server sent is taken in, and so
// is a batch (its requests member by member, 2025-03-26); one over the
// byte bound, whose id and token are not known, says the session is no
// longer seen whole, so the client's answer and progress for it are not
// judged as answering nothing (review rev58: both failed CLI1004).
func TestServerRequestTraffic(t *testing.T) {
	req := []byte(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`)
	for _, tc := range []struct {
		name string
		o    proxy.Observation
		want *transcript.Traffic
	}{
		{"request", proxy.Observation{Seq: 4, Kind: proxy.KindRequest, Raw: req},
			&transcript.Traffic{Kind: transcript.TrafficRequest, Seq: 4, Transport: "stdio", Body: req}},
		{"batch", proxy.Observation{Seq: 4, Kind: proxy.KindBatch, Raw: []byte("[" + string(req) + "]")},
			&transcript.Traffic{Kind: transcript.TrafficRequest, Seq: 4, Transport: "stdio", Body: []byte("[" + string(req) + "]")}},
		{"over the bound", proxy.Observation{Seq: 4, Kind: proxy.KindRequest, Raw: req[:20], Oversized: true},
			&transcript.Traffic{Kind: transcript.TrafficLost, Lost: 1}},
		{"notification", proxy.Observation{Seq: 4, Kind: proxy.KindNotification, Raw: req}, nil},
	} {
		if diff := cmp.Diff(tc.want, serverRequestTraffic(&tc.o)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
