package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// resumingServer ends a tools/call's stream after an event with id ev-1
// and no response (T-HTTP-15); a GET with Last-Event-ID gets the stream
// the script gives for that id (none: 405).
func resumingServer(t *testing.T, script map[string]string, breaks bool, tail string) *upstream {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			events, ok := script[r.Header.Get("Last-Event-ID")]
			if !ok {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			sseHead(w)
			events, broken := strings.CutSuffix(events, breakMark)
			io.WriteString(w, events)
			if broken {
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}
			return
		}
		body, _ := io.ReadAll(r.Body)
		if gjson.GetBytes(body, "method").Str != "tools/call" {
			pong(w, r, body)
			return
		}
		sseHead(w)
		io.WriteString(w, "id: ev-1\nretry: 10\ndata: \n\n"+tail)
		if breaks {
			// Broken off after the event, not ended: resumed alike.
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
	})
}

// breakMark ends a scripted GET stream that the server breaks off.
const breakMark = "<break>"

const resumedAnswer = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}`

// TestHTTPResumedStreamJoined: a POST's stream that ends after an event
// id without its response is held, and the GET that resumes it (in its
// session, with that Last-Event-ID) has its events joined to the
// exchange, as check's transport joins them: one pair, judged when the
// response comes, Resumed counting the GETs. The GET's own head is
// paired as before, and nothing of its stream is judged on its own.
// Twins: never resumed (paired at the bound, as before: RPC1006 warns);
// resumed and refused (the POST's closed stream stands as its end);
// resumed to a stream that ends with nothing (judged then: RPC1006
// fails); resumed twice.
func TestHTTPResumedStreamJoined(t *testing.T) {
	tests := []struct {
		name    string
		script  map[string]string
		resume  []string // the Last-Event-IDs the client resumes with
		resumed int
		answer  bool
		body    string // the exchange's body: the POST's stream, then the GETs'
		breaks  bool   // the server breaks the POST's stream off after its event
		tail    string // bytes after the POST's event that end no event
		// ended: the last stream read for the exchange was one the
		// server closed, read to its end (Response.Ended, as check's
		// transport records it: the last GET's, unless none brought a
		// stream).
		ended bool
		// refused: the last GET got no stream (Response.ResumeRefused).
		refused bool
	}{
		{name: "resumed", script: map[string]string{"ev-1": "id: ev-2\ndata: " + resumedAnswer + "\n\n"}, resume: []string{"ev-1"},
			resumed: 1, answer: true, ended: true, body: "id: ev-1\nretry: 10\ndata: \n\nid: ev-2\ndata: " + resumedAnswer + "\n\n"},
		{name: "resumed twice", script: map[string]string{
			"ev-1": "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n",
			"ev-2": "data: " + resumedAnswer + "\n\n"}, resume: []string{"ev-1", "ev-2"},
			resumed: 2, answer: true, ended: true, body: "id: ev-1\nretry: 10\ndata: \n\nid: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\ndata: " + resumedAnswer + "\n\n"},
		{name: "resumed to nothing", script: map[string]string{"ev-1": ": nothing left\n\n"}, resume: []string{"ev-1"},
			resumed: 1, ended: true, body: "id: ev-1\nretry: 10\ndata: \n\n: nothing left\n\n"},
		{name: "never resumed", ended: true, body: "id: ev-1\nretry: 10\ndata: \n\n"},
		{name: "resumed, refused", resume: []string{"ev-1"}, resumed: 1, ended: true, refused: true, body: "id: ev-1\nretry: 10\ndata: \n\n"},
		{name: "broken off, resumed", breaks: true, script: map[string]string{"ev-1": "id: ev-2\ndata: " + resumedAnswer + "\n\n"}, resume: []string{"ev-1"},
			resumed: 1, answer: true, ended: true, body: "id: ev-1\nretry: 10\ndata: \n\nid: ev-2\ndata: " + resumedAnswer + "\n\n"},
		{name: "broken off, never resumed", breaks: true, body: "id: ev-1\nretry: 10\ndata: \n\n"},
		// A client drops bytes that end no event and resumes from the
		// last id it dispatched; the resumed stream joins the last
		// whole event, as in check's transport (review rev8).
		{name: "broken off inside an event, resumed", breaks: true, tail: "id: ev-9\ndata: {\"jsonr", script: map[string]string{"ev-1": "id: ev-2\ndata: " + resumedAnswer + "\n\n"}, resume: []string{"ev-1"},
			resumed: 1, answer: true, ended: true, body: "id: ev-1\nretry: 10\ndata: \n\nid: ev-2\ndata: " + resumedAnswer + "\n\n"},
		{name: "ended after a comment, resumed", tail: ": keepalive\n", script: map[string]string{"ev-1": "id: ev-2\ndata: " + resumedAnswer + "\n\n"}, resume: []string{"ev-1"},
			resumed: 1, answer: true, ended: true, body: "id: ev-1\nretry: 10\ndata: \n\nid: ev-2\ndata: " + resumedAnswer + "\n\n"},
		{name: "a resumed stream broken off after an id, resumed again", script: map[string]string{
			"ev-1": "id: ev-2\ndata: \n\n" + breakMark,
			"ev-2": "data: " + resumedAnswer + "\n\n"}, resume: []string{"ev-1", "ev-2"},
			resumed: 2, answer: true, ended: true, body: "id: ev-1\nretry: 10\ndata: \n\nid: ev-2\ndata: \n\ndata: " + resumedAnswer + "\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := resumingServer(t, tc.script, tc.breaks, tc.tail)
			rec := &recorder{}
			h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: 2 * silenceTimeout}})
			c := silenceClient{t, base}
			got, cancel := c.call(toolsCall)
			defer cancel()
			if g := <-got; !strings.HasSuffix(g, "id: ev-1\nretry: 10\ndata: \n\n"+tc.tail) || tc.breaks != strings.HasPrefix(g, "error: ") {
				t.Fatalf("the POST's stream: %q", g)
			}
			var gotGET string
			for _, id := range tc.resume {
				req, _ := http.NewRequest("GET", base+"/mcp", nil)
				req.Header = http.Header{"Accept": {"text/event-stream"}, "Mcp-Session-Id": {"s-1"}, "Mcp-Protocol-Version": {"2025-11-25"}, "Last-Event-Id": {id}}
				resp, err := http.DefaultTransport.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				gotGET += string(b)
			}
			if want := strings.ReplaceAll(strings.Join(mapValues(tc.script, tc.resume), ""), breakMark, ""); gotGET != want {
				t.Errorf("the client's GETs read %q, want %q", gotGET, want)
			}
			obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
			time.Sleep(silenceTimeout)
			obs, pairs = rec.snapshot()
			h.Close()
			if n := len(theCall(pairs)); n != 1 {
				t.Fatalf("%d pairs for the request\n%s", n, describe(obs, pairs))
			}
			p := theCall(pairs)[0]
			ex := p.Exchange
			if ex.Failure != "" || ex.Note != "" || ex.Response == nil || ex.Response.Resumed != tc.resumed || ex.Response.Status != 200 {
				t.Fatalf("failure %q, note %q, response %+v; want resumed %d", ex.Failure, ex.Note, ex.Response, tc.resumed)
			}
			if ex.Response.Ended != tc.ended {
				t.Errorf("Ended %v, want %v", ex.Response.Ended, tc.ended)
			}
			if ex.Response.ResumeRefused != tc.refused {
				t.Errorf("ResumeRefused %v, want %v", ex.Response.ResumeRefused, tc.refused)
			}
			if diff := cmp.Diff(tc.body, string(ex.Response.Body)); diff != "" {
				t.Errorf("the exchange's body (-want +got):\n%s", diff)
			}
			// The body is what the judge reads: its messages are those kept.
			msgs, _, _ := envelope.SplitSSE(ex.Response.Body, len(ex.Response.Body)+1)
			if len(msgs) != len(ex.Response.Messages) {
				t.Errorf("the body splits into %d messages, the exchange holds %d", len(msgs), len(ex.Response.Messages))
			}
			hasAnswer := len(ex.Response.Messages) > 0 && strings.Contains(string(ex.Response.Messages[len(ex.Response.Messages)-1]), `"result"`)
			if hasAnswer != tc.answer || tc.answer && p.ReplySeq == 0 {
				t.Errorf("answer %v (reply #%d), want %v", hasAnswer, p.ReplySeq, tc.answer)
			}
			for _, q := range pairs {
				if q.Tail {
					t.Errorf("an event of a resumed stream was judged on its own: %+v", q.Exchange.Response)
				}
			}
			if gets := pairsOf(pairs, ClientToServer, ""); len(gets) != len(tc.resume) {
				t.Errorf("%d GET pairs, want one per GET (its head)\n%s", len(gets), describe(obs, pairs))
			}
		})
	}
}

func mapValues(m map[string]string, keys []string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// TestHTTPResumedStreamSilent: a resumed stream that stays open without
// the response past --timeout is the server's silence, judged as for
// any stream (a liveness probe), with the resumption in the exchange;
// it is cut, not Ended, though the POST's stream before it was closed.
func TestHTTPResumedStreamSilent(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodGet:
			sseHead(w)
			io.WriteString(w, ": working\n\n")
			w.(http.Flusher).Flush()
			hangUntilGone(r)
		case gjson.GetBytes(body, "method").Str == "tools/call":
			sseHead(w)
			io.WriteString(w, "id: ev-1\ndata: \n\n")
		default:
			pong(w, r, body)
		}
	})
	rec := &recorder{}
	h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Timeout: silenceTimeout}})
	got, cancel := silenceClient{t, base}.call(toolsCall)
	defer cancel()
	<-got
	req, _ := http.NewRequest("GET", base+"/mcp", nil)
	req.Header = http.Header{"Accept": {"text/event-stream"}, "Mcp-Session-Id": {"s-1"}, "Mcp-Protocol-Version": {"2025-11-25"}, "Last-Event-Id": {"ev-1"}}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(theCall(pairs)) == 1 })
	h.Close()
	ex := theCall(pairs)[0].Exchange
	if ex.Failure != "" || !strings.HasPrefix(ex.Note, "no response within 200ms") || !strings.Contains(ex.Note, "the server answered a liveness probe") ||
		ex.Response == nil || ex.Response.Resumed != 1 || !ex.Response.Cut || ex.Response.Ended || string(ex.Response.Body) != "id: ev-1\ndata: \n\n: working\n\n" {
		t.Errorf("failure %q, note %q, response %+v\n%s", ex.Failure, ex.Note, ex.Response, describe(obs, pairs))
	}
}
