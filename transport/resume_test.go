package transport

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
)

// TestHTTPResumeSSE: a 2025-11-25 server may close a POST's stream after
// an event with an id, before the response, and deliver the response on
// the stream a GET with Last-Event-ID resumes (T-HTTP-15); the exchange
// follows it as a client does, bounded. Before, the exchange ended at the
// close and every check but one skipped.
func TestHTTPResumeSSE(t *testing.T) {
	tests := []struct {
		name      string
		version   string
		pending   int  // GETs that again end with an id and no response
		partial   bool // the POST's stream ends inside an event
		comment   bool // the POST's stream ends with a comment after its last event
		broken    bool // the server breaks the POST's stream off (no clean end)
		getBroken bool // the pending GETs are broken off after their id
		bom       bool // the GET's stream starts with a byte order mark
		refuse    int  // the GETs from this one on are refused (405); 0: none
		wantGets  int
		refused   bool // the last GET was refused (Response.ResumeRefused)
		want      []string
		note      string
	}{
		{name: "resumed once", version: "2025-11-25", wantGets: 1, want: []string{pong}, note: `resumed with GET and Last-Event-ID`},
		{name: "resumed twice", version: "2025-11-25", pending: 1, wantGets: 2, want: []string{pong}, note: `after event id "e2"`},
		{name: "bounded", version: "2025-11-25", pending: 100, wantGets: maxResumes, want: nil},
		// The count alone does not tell these two apart (review rev58).
		{name: "the last GET refused", version: "2025-11-25", pending: 100, refuse: maxResumes, wantGets: maxResumes, refused: true, want: nil, note: `the GET was answered 405`},
		{name: "the first GET refused", version: "2025-11-25", refuse: 1, wantGets: 1, refused: true, want: nil, note: `the GET was answered 405`},
		{name: "a stream the server broke off is resumed as one it ended", version: "2025-11-25", broken: true, wantGets: 1, want: []string{pong}, note: `resumed with GET and Last-Event-ID`},
		{name: "a stream broken off inside an event is resumed from its last whole event", version: "2025-11-25", broken: true, partial: true, wantGets: 1, want: []string{pong}, note: `dropped, as a client drops them`},
		{name: "a stream that ends with a comment after its last event is resumed", version: "2025-11-25", comment: true, wantGets: 1, want: []string{pong}, note: `resumed with GET and Last-Event-ID`},
		{name: "a resumed stream broken off after a new id is resumed again", version: "2025-11-25", pending: 1, getBroken: true, wantGets: 2, want: []string{pong}, note: `after event id "e2"`},
		{name: "2025-06-18 is resumed too", version: "2025-06-18", wantGets: 1, want: []string{pong}, note: `resumed with GET and Last-Event-ID`},
		{name: "2026-07-28 is not resumed", version: "2026-07-28", wantGets: 0, want: nil},
		{name: "a stream that ends inside an event is resumed from its last whole event", version: "2025-11-25", partial: true, wantGets: 1, want: []string{pong}, note: `dropped, as a client drops them`},
		{name: "a resumed stream may start with a byte order mark", version: "2025-11-25", bom: true, wantGets: 1, want: []string{pong}, note: `resumed with GET and Last-Event-ID`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var gets []http.Header
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					s := startSSE(w)
					s.send("id: e1\nretry: 10\ndata:\n\n")
					if tc.partial {
						// An event cut short: a client drops it, and the
						// resumed stream's bytes must not join it.
						s.send("id: e9\ndata: {\"jsonrpc\":")
					}
					if tc.comment {
						s.send(": keepalive\n")
					}
					if tc.broken {
						panic(http.ErrAbortHandler) // no last chunk: the client reads a broken stream
					}
					return // the connection closes before the response
				}
				mu.Lock()
				gets = append(gets, r.Header.Clone())
				n := len(gets)
				mu.Unlock()
				if tc.refuse > 0 && n >= tc.refuse {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				s := startSSE(w)
				if n <= tc.pending {
					s.send(fmt.Sprintf("id: e%d\ndata:\n\n", n+1))
					if tc.getBroken {
						panic(http.ErrAbortHandler)
					}
					return
				}
				if tc.bom {
					s.send("\ufeffdata: " + pong + "\nid: r1\n\n")
					return
				}
				s.send("id: r1\ndata: " + pong + "\n\n")
			})
			req := post(ping)
			req.Header.Set("MCP-Protocol-Version", tc.version)
			req.Header.Set("Mcp-Session-Id", "s-1")
			ex := (&HTTP{URL: url, Limits: Limits{Timeout: 5 * time.Second}}).Do(context.Background(), req)
			if ex.Failure != "" {
				t.Fatalf("failure %q", ex.Failure)
			}
			var got []string
			for _, m := range ex.Response.Messages {
				got = append(got, string(m))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(gets) != tc.wantGets || ex.Response.Resumed != tc.wantGets {
				t.Fatalf("%d GETs, %d recorded as resumptions, want %d", len(gets), ex.Response.Resumed, tc.wantGets)
			}
			if ex.Response.ResumeRefused != tc.refused {
				t.Errorf("ResumeRefused %v, want %v", ex.Response.ResumeRefused, tc.refused)
			}
			if len(gets) > 0 {
				h := gets[0]
				if h.Get("Last-Event-ID") != "e1" || h.Get("Mcp-Session-Id") != "s-1" || h.Get("MCP-Protocol-Version") != tc.version || h.Get("Accept") != "text/event-stream" || h.Get("Content-Type") != "" {
					t.Errorf("the GET's headers: %v", h)
				}
			}
			if !strings.Contains(ex.Note, tc.note) {
				t.Errorf("note %q, want it to say %q", ex.Note, tc.note)
			}
			if tc.want != nil && !strings.Contains(string(ex.Response.Body), "id: r1") {
				t.Errorf("the resumed stream's bytes are not in the body:\n%s", ex.Response.Body)
			}
			// The body is what a transcript keeps and the judge reads:
			// it must give the messages the live reader gave (a review
			// found a resumed stream's byte order mark hiding the
			// response there, and RPC1006 failing a correct server).
			raw, lastID, err := envelope.SplitSSE(ex.Response.Body, envelope.MaxSSELine)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != nil && lastID != "r1" {
				t.Errorf("the last event id read from the body is %q, want r1", lastID)
			}
			var read []string
			for _, m := range raw {
				if string(m) != "" {
					read = append(read, string(m))
				}
			}
			if diff := cmp.Diff(tc.want, read); diff != "" {
				t.Errorf("messages read from the body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHTTPResumeInitialize: the initialize that negotiates carries no
// version header yet; one asking 2025-11-25 is resumed as any other
// request of that version, its GET in the session the POST's answer
// opened. Before, the run could not negotiate at all (exit 3) against a
// server that closes every stream after its priming event. One asking
// 2025-06-18 is resumed as well (that version asks the server not to
// close the stream, which HTTP1005 warns of, but has resumption); one
// asking 2025-03-26 is not.
func TestHTTPResumeInitialize(t *testing.T) {
	for _, tc := range []struct {
		asked    string
		wantGets int
	}{{"2025-11-25", 1}, {"2025-06-18", 1}, {"2025-03-26", 0}} {
		t.Run(tc.asked, func(t *testing.T) {
			initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + tc.asked + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
			result := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + tc.asked + `","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
			var mu sync.Mutex
			var gets []http.Header
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					w.Header().Set("Mcp-Session-Id", "s-9")
					startSSE(w).send("id: e1\nretry: 10\ndata:\n\n")
					return
				}
				mu.Lock()
				gets = append(gets, r.Header.Clone())
				mu.Unlock()
				startSSE(w).send("id: r1\ndata: " + result + "\n\n")
			})
			ex := (&HTTP{URL: url, Limits: Limits{Timeout: 5 * time.Second}}).Do(context.Background(), post(initialize))
			mu.Lock()
			defer mu.Unlock()
			if len(gets) != tc.wantGets {
				t.Fatalf("%d GETs, want %d", len(gets), tc.wantGets)
			}
			if tc.wantGets == 0 {
				return
			}
			if h := gets[0]; h.Get("Last-Event-ID") != "e1" || h.Get("Mcp-Session-Id") != "s-9" || h.Get("MCP-Protocol-Version") != tc.asked {
				t.Errorf("the GET's headers: %v", h)
			}
			if ex.Failure != "" || ex.Response == nil || len(ex.Response.Messages) != 1 || string(ex.Response.Messages[0]) != result {
				t.Errorf("exchange %+v, want the initialize result resumed", ex)
			}
		})
	}
}

// TestHTTPResumedSilenceCountsTheExchange: a resumed stream that brings
// nothing until the timeout (held open, or its headers never sent) is
// the exchange's silence, and its message counts the events of the whole
// exchange (the POST's priming event): before, the first said "0 events"
// and the second left the exchange without a failure, its silence read
// as a stream that ended.
func TestHTTPResumedSilenceCountsTheExchange(t *testing.T) {
	for _, headers := range []bool{true, false} {
		t.Run(fmt.Sprintf("headers sent %v", headers), func(t *testing.T) {
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					startSSE(w).send("id: e1\nretry: 10\ndata:\n\n")
					return
				}
				if headers {
					startSSE(w).send("")
				}
				<-r.Context().Done()
			})
			req := post(ping)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			req.Header.Set("Mcp-Session-Id", "s-1")
			ex := (&HTTP{URL: url, Limits: Limits{Timeout: 300 * time.Millisecond}}).Do(context.Background(), req)
			if want := "no response within 300ms: 1 event without a response"; ex.Failure != want {
				t.Errorf("failure %q, want %q", ex.Failure, want)
			}
		})
	}
}
