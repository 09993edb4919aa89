package lint_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/lint"
	"github.com/wymcp/wymcp-check/transcript"
)

func gzipBody(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// A reply recorded with its Content-Encoding (a proxy in front of the
// server compressed it for a client that asked) is judged decoded, as
// the client reads it: its JSON passes or fails on its own merits; a
// body that does not decode in the coding it names (a bad checksum) is
// no reply a client can read (HTTP1006); a body the checker cannot
// decode (a coding it lacks, a bound, a body cut short) is an error
// (could not judge), never a finding against the server's JSON. The line goes through
// transcript.Write and back, as --record and lint do.
func TestLintDecodesContentEncoding(t *testing.T) {
	good := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	wrongVersion := []byte(`{"jsonrpc":"1.0","id":1,"result":{"tools":[]}}`)
	corrupt := gzipBody(t, good)
	corrupt[len(corrupt)-6] ^= 0xff
	tests := []struct {
		name   string
		coding string
		ctype  string
		body   []byte
		// want: every fail and error, "CHECK status", in check order.
		want []string
	}{
		{name: "gzip, well-formed", coding: "gzip", body: gzipBody(t, good)},
		{name: "gzip, wrong jsonrpc", coding: "gzip", body: gzipBody(t, wrongVersion), want: []string{"RPC1002 fail", "SCH1001 fail"}},
		{name: "gzip SSE, well-formed", coding: "gzip", ctype: "text/event-stream", body: gzipBody(t, []byte("event: message\ndata: "+string(good)+"\n\n"))},
		{name: "gzip SSE, wrong jsonrpc", coding: "gzip", ctype: "text/event-stream", body: gzipBody(t, []byte("data: "+string(wrongVersion)+"\n\n")), want: []string{"RPC1002 fail", "SCH1001 fail"}},
		// (No reply a client can read: HTTP1006, as check and the
		// proxy fail it where they decode it.)
		{name: "corrupt gzip", coding: "gzip", body: corrupt, want: []string{"HTTP1006 fail"}},
		{name: "gzip cut short", coding: "gzip", body: gzipBody(t, good)[:20], want: []string{"RPC1001 error"}},
		// A capture that decoded the body and kept the header (a HAR
		// export) cannot be told from a server that named a coding it
		// never applied: could not judge, not HTTP1006 (review rev65).
		{name: "plain JSON under gzip's name", coding: "gzip", body: good, want: []string{"RPC1001 error"}},
		{name: "plain SSE under gzip's name", coding: "gzip", ctype: "text/event-stream", body: []byte("data: " + string(good) + "\n\n"), want: []string{"RPC1001 error"}},
		{name: "plain text under gzip's name", coding: "gzip", ctype: "text/plain", body: []byte("Bad Request: no such tool"), want: []string{"RPC1001 error"}},
		{name: "bomb", coding: "gzip", body: gzipBody(t, make([]byte, 10<<20)), want: []string{"RPC1001 error"}},
		{name: "br", coding: "br", body: []byte{0x0b, 0x02, 0x80}, want: []string{"RPC1001 error"}},
		{name: "gzip SSE, an event id used twice", coding: "gzip", ctype: "text/event-stream",
			body: gzipBody(t, []byte("id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\nid: 7\ndata: "+string(good)+"\n\n")),
			want: []string{"HTTP1005 fail"}},
		{name: "codings stacked past the bound", coding: "gzip, gzip, gzip, gzip, gzip",
			body: gzipBody(t, gzipBody(t, gzipBody(t, gzipBody(t, gzipBody(t, good))))), want: []string{"RPC1001 error"}},
		{name: "plain, as before", coding: "", body: good},
		{name: "gzip bytes sent without Content-Encoding", coding: "", body: gzipBody(t, good), want: []string{"RPC1001 fail"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctype := tt.ctype
			if ctype == "" {
				ctype = "application/json"
			}
			h := http.Header{"Content-Type": {ctype}}
			if tt.coding != "" {
				h.Set("Content-Encoding", tt.coding)
			}
			ex := &envelope.Exchange{Transport: envelope.HTTP, Version: envelope.V20251125,
				Request: envelope.Request{Method: "POST", Header: http.Header{
					"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
					"Accept-Encoding": {"gzip, deflate"}, "Mcp-Protocol-Version": {envelope.V20251125}},
					Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
				Response: &envelope.Response{Status: 200, Header: h, Body: tt.body}}
			var line bytes.Buffer
			if err := transcript.Write(&line, "gz", ex, nil); err != nil {
				t.Fatal(err)
			}
			if tt.coding != "" && !utf8.Valid(tt.body) && !strings.Contains(line.String(), `"bodyBase64"`) {
				t.Fatalf("the coded body was not recorded as bodyBase64: %s", line.String())
			}
			var got []string
			var reasons []string
			err := lint.Judge(transcript.NewReader("t.jsonl", &line), options(1, 0), func(it *lint.Item) error {
				if it.Err != nil {
					return it.Err
				}
				for _, v := range it.Verdicts {
					if v.Status == checks.StatusFail || v.Status == checks.StatusError {
						got = append(got, fmt.Sprintf("%s %s", v.Check.ID, v.Status))
						reasons = append(reasons, fmt.Sprintf("%s %s %v", v.Check.ID, v.Reason, v.Findings))
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Errorf("fails and errors %q, want %q\n%s", got, tt.want, strings.Join(reasons, "\n"))
			}
			for _, r := range reasons {
				if strings.Contains(r, "UTF-8") && tt.coding != "" {
					t.Errorf("a coded body was judged as the server's bytes: %s", r)
				}
			}
		})
	}
}
