package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transcript"
)

// A judge judges exchanges as the proxy's watcher and lint do: the
// expectation from the request, the builtin protocol schemas.
type judge struct{ schemas checks.SchemaValidator }

func newJudge() *judge { return &judge{schemas: checks.ProtocolSchemas(schema.NewRegistry())} }

func (j *judge) verdicts(ex *envelope.Exchange) []checks.Verdict {
	return checks.Judge(checks.Input{Exchange: ex, Expect: expect.Build(ex, nil, nil), Schemas: j.schemas}, checks.All())
}

// rows are verdicts as "CHECK status", every one (passes and skips too).
func rows(vs []checks.Verdict) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s %s", v.Check.ID, v.Status))
	}
	return out
}

// relayed is ex written as --record writes it and read back, as lint
// reads it.
func relayed(t *testing.T, ex *envelope.Exchange) *envelope.Exchange {
	t.Helper()
	var line bytes.Buffer
	if err := transcript.Write(&line, "x", ex, nil); err != nil {
		t.Fatal(err)
	}
	rec, err := transcript.NewReader("t.jsonl", &line).Next()
	if err != nil {
		t.Fatal(err)
	}
	return &rec.Exchange
}

// checkJudged judges ex live and as lint would from its transcript: the
// verdicts must agree, and the failures be wantFail (nil: none fails,
// errs nor warns).
func checkJudged(t *testing.T, j *judge, ex *envelope.Exchange, wantFail []string) {
	t.Helper()
	live := j.verdicts(ex)
	if diff := cmp.Diff(rows(live), rows(j.verdicts(relayed(t, ex)))); diff != "" {
		t.Errorf("lint of the recorded exchange judges otherwise (-live +lint):\n%s", diff)
	}
	var got []string
	for _, v := range live {
		if v.Status == checks.StatusFail || v.Status == checks.StatusError || v.Status == checks.StatusWarn {
			got = append(got, fmt.Sprintf("%s %s", v.Check.ID, v.Status))
			for _, f := range v.Findings {
				t.Logf("%s %s: %s", v.Check.ID, f.Path, f.Message)
			}
		}
	}
	if wantFail == nil && len(got) > 0 {
		t.Errorf("findings %v, want none", got)
	}
	for _, w := range wantFail {
		if !slices.Contains(got, w) {
			t.Errorf("findings %v lack %q", got, w)
		}
	}
}

// sseEvent is one event of a fake server's stream, after a pause.
type sseEvent struct {
	after time.Duration
	data  string
}

// streamingServer answers a POST with an event stream of events, then
// ends it, or holds it open until the client goes away.
func streamingServer(t *testing.T, events []sseEvent, holdOpen bool) *upstream {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for _, e := range events {
			select {
			case <-time.After(e.after):
			case <-r.Context().Done():
				return
			}
			io.WriteString(w, "event: message\ndata: "+e.data+"\n\n")
			w.(http.Flusher).Flush()
		}
		if holdOpen {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
		}
	})
}

const (
	callWithToken  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"progressToken":"t"}}}`
	callResult     = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	progressString = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":"half"}}`
)

func progress(n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d,"total":3}}`, n)
}

func logMessage(level string) string {
	return `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"` + level + `","data":"hello"}}`
}

// streamHeaders are a 2025-11-25 client's headers in a session.
func streamHeaders(accept string) http.Header {
	return http.Header{"Accept": {accept}, "Content-Type": {"application/json"},
		"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {"s-1"}}
}

// TestHTTPStreamJudgedPastResponse: what a POST's stream carries after
// its response, within Limits.Quiet of it or to the stream's end, is
// judged with the exchange, as check judges it, and recorded in its body
// so that lint judges it alike; the client gets every event at once.
// Before, the exchange was paired at its response and all of this passed.
func TestHTTPStreamJudgedPastResponse(t *testing.T) {
	const late = 50 * time.Millisecond
	tests := []struct {
		name     string
		events   []sseEvent
		holdOpen bool // the server keeps the stream open: the pair comes Quiet after the response
		wantMsgs int
		wantFail []string // nil: no finding
	}{
		{name: "string progress after the response, stream held open",
			events:   []sseEvent{{0, callResult}, {late, progressString}},
			holdOpen: true, wantMsgs: 2, wantFail: []string{"PRO1003 fail"}},
		{name: "string progress after the response, stream ends",
			events:   []sseEvent{{0, callResult}, {late, progressString}},
			wantMsgs: 2, wantFail: []string{"PRO1003 fail"}},
		{name: "rising progress, the response, a log message after it",
			events:   []sseEvent{{0, progress(1)}, {late, progress(2)}, {0, callResult}, {late, logMessage("info")}},
			holdOpen: true, wantMsgs: 4, wantFail: []string{"PRO1003 warn"}}, // T-HTTP-15: the stream SHOULD end with the response
		{name: "rising progress after the response",
			events:   []sseEvent{{0, progress(1)}, {0, callResult}, {late, progress(2)}},
			holdOpen: true, wantMsgs: 3, wantFail: []string{"PRO1003 fail"}}, // T-PROG-1: none after the response
		{name: "a second response",
			events:   []sseEvent{{0, callResult}, {late, callResult}},
			holdOpen: true, wantMsgs: 2, wantFail: []string{"RPC1006 fail"}},
		{name: "a log message with an invalid level after the response",
			events:   []sseEvent{{0, callResult}, {late, logMessage("loud")}},
			wantMsgs: 2, wantFail: []string{"PRO1003 fail"}},
	}
	j := newJudge()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := streamingServer(t, tc.events, tc.holdOpen)
			rec := &recorder{}
			// Quiet is generous against the 50ms the late event takes: a
			// loaded machine may schedule the server late.
			_, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Quiet: 2 * time.Second}})
			resp := postCall(t, base)
			// The client gets every event while the server still writes:
			// judging waits, relaying does not.
			br := bufio.NewReader(resp.Body)
			for i, e := range tc.events {
				var got []string
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						t.Fatalf("event %d: %v after %q", i, err, got)
					}
					if line == "\n" {
						break
					}
					got = append(got, line)
				}
				if want := "data: " + e.data + "\n"; !slices.Contains(got, want) {
					t.Fatalf("event %d: the client read %q, want %q", i, got, want)
				}
			}
			obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
			p := pairs[0]
			ex := p.Exchange
			if ex.Failure != "" || ex.Response == nil {
				t.Fatalf("pair: failure %q, response %v\n%s", ex.Failure, ex.Response, describe(obs, pairs))
			}
			if n := len(ex.Response.Messages); n != tc.wantMsgs {
				t.Errorf("the exchange holds %d messages, want %d: %q", n, tc.wantMsgs, ex.Response.Messages)
			}
			split, _, err := envelope.SplitSSE(ex.Response.Body, 1<<20)
			if err != nil || len(split) != tc.wantMsgs {
				t.Errorf("the recorded body splits into %d messages (%v), want %d: %q", len(split), err, tc.wantMsgs, ex.Response.Body)
			}
			for _, o := range obs {
				if o.Completes != (o.Seq == p.ReplySeq) {
					t.Errorf("observation #%d completes %v; the pair's reply is #%d", o.Seq, o.Completes, p.ReplySeq)
				}
			}
			if o := obsBySeq(obs, p.ReplySeq); o == nil || o.Kind != KindResponse {
				t.Errorf("the pair's reply #%d is not the response\n%s", p.ReplySeq, describe(obs, pairs))
			}
			checkJudged(t, j, ex, tc.wantFail)
		})
	}
}

func obsBySeq(obs []Observation, seq uint64) *Observation {
	for i := range obs {
		if obs[i].Seq == seq {
			return &obs[i]
		}
	}
	return nil
}

// TestHTTPStreamPastResponseCutAtLastEvent: the window past the response
// ends at Limits.Quiet; what came after it, or the part of an event that
// came before its end, is not in the recorded body, which splits into
// exactly the messages judged.
func TestHTTPStreamPastResponseCutAtLastEvent(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// The response and a whole notification, then half of an event.
		io.WriteString(w, "data: "+callResult+"\n\ndata: "+logMessage("info")+"\n\ndata: {\"jsonrpc\":")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `"2.0","method":"notifications/message","params":{"level":"nope","data":1}}`+"\n\n")
	})
	rec := &recorder{}
	_, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Quiet: 200 * time.Millisecond}})
	resp := postCall(t, base)
	_, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
	close(release)
	io.Copy(io.Discard, resp.Body)
	ex := pairs[0].Exchange
	want := "data: " + callResult + "\n\ndata: " + logMessage("info") + "\n\n"
	if string(ex.Response.Body) != want {
		t.Errorf("recorded body %q, want %q", ex.Response.Body, want)
	}
	// (The notification after the response warns: T-HTTP-15.)
	checkJudged(t, newJudge(), ex, []string{"PRO1003 warn"})
}

// TestHTTPCloseFlushesPendingStream: an exchange whose response came and
// whose stream is still open when the proxy stops is paired with what
// came (it had its answer), not lost nor failed.
func TestHTTPCloseFlushesPendingStream(t *testing.T) {
	up := streamingServer(t, []sseEvent{{0, callResult}, {50 * time.Millisecond, progressString}}, true)
	rec := &recorder{}
	h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Quiet: time.Hour}})
	postCall(t, base)
	rec.waitFor(t, "the late notification", func(obs []Observation, _ []Pair) bool {
		return len(obs) > 0 && obs[len(obs)-1].Kind == KindNotification
	})
	h.Close()
	obs, pairs := rec.snapshot()
	if len(pairs) != 1 {
		t.Fatalf("%d pairs after Close, want 1\n%s", len(pairs), describe(obs, pairs))
	}
	ex := pairs[0].Exchange
	if ex.Failure != "" || ex.Response == nil || len(ex.Response.Messages) != 2 {
		t.Fatalf("pair: failure %q, response %+v", ex.Failure, ex.Response)
	}
	checkJudged(t, newJudge(), ex, []string{"PRO1003 fail"})
}

// getStreamServer answers a GET with an event stream of the messages
// given, held open until the client goes away; a POST with 202.
func getStreamServer(t *testing.T, msgs ...string) *upstream {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "GET" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for _, m := range msgs {
			io.WriteString(w, "data: "+m+"\n\n")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
}

// tailPairs are the pairs that judge a GET stream's messages.
func tailPairs(pairs []Pair) []Pair {
	var out []Pair
	for _, p := range pairs {
		if p.Tail {
			out = append(out, p)
		}
	}
	return out
}

// TestHTTPGetStreamJudged: each notification the server sends on the GET
// stream is judged, as an exchange of the GET request, the stream's
// status and headers and a body of that event alone, as check judges its
// GET fixture's stream; the recording judges alike. Before, the GET
// exchange was judged at its head and what came on it never was.
func TestHTTPGetStreamJudged(t *testing.T) {
	tests := []struct {
		name     string
		msg      string
		wantFail []string
		response bool // the message is a response (a fresh stream must carry none)
		other    bool // the event is no message (T-RPC-1), judged all the same
	}{
		{name: "response on a fresh stream", msg: `{"jsonrpc":"2.0","id":99,"result":{}}`, wantFail: []string{"HTTP1002 fail"}, response: true},
		{name: "log message with an invalid level", msg: logMessage("loud"), wantFail: []string{"PRO1003 fail"}},
		{name: "log message without data", msg: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`, wantFail: []string{"SCH1004 fail"}},
		{name: "no JSON", msg: `this is not json`, wantFail: []string{"RPC1001 fail"}, other: true},
		{name: "JSON that is no message", msg: `{"foo":1}`, wantFail: []string{"HTTP1002 fail", "RPC1002 fail", "RPC1003 fail", "SCH1001 fail"}, other: true},
		{name: "log message", msg: logMessage("info")},
		{name: "tools list changed", msg: `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
	}
	j := newJudge()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := getStreamServer(t, tc.msg)
			rec := &recorder{}
			_, base := startRelay(t, up.url(), rec, HTTPConfig{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/mcp", nil)
			req.Header = streamHeaders("text/event-stream")
			req.Header.Del("Content-Type")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if line, _ := bufio.NewReader(resp.Body).ReadString('\n'); line != "data: "+tc.msg+"\n" {
				t.Fatalf("the client read %q", line)
			}
			obs, pairs := rec.waitFor(t, "the notification's pair", func(_ []Observation, pairs []Pair) bool { return len(tailPairs(pairs)) == 1 })
			if len(pairs) != 2 || pairs[0].Tail {
				t.Errorf("want the stream's own pair, then the notification's:\n%s", describe(obs, pairs))
			}
			p := tailPairs(pairs)[0]
			ex := p.Exchange
			if p.Asker != ClientToServer || p.RequestSeq != pairs[0].RequestSeq || ex.Request.HTTPMethod() != "GET" || ex.Failure != "" {
				t.Errorf("pair %+v, request %s, failure %q", p, ex.Request.HTTPMethod(), ex.Failure)
			}
			if ex.Response == nil || ex.Response.Status != 200 || !envelope.IsEventStream(ex.Response.Header.Get("Content-Type")) {
				t.Fatalf("response %+v", ex.Response)
			}
			if got := string(ex.Response.Body); got != "data: "+tc.msg+"\n\n" {
				t.Errorf("body %q, want the event alone", got)
			}
			kind := KindNotification
			switch {
			case tc.response:
				kind = KindResponse
			case tc.other:
				kind = KindOther
			}
			if o := obsBySeq(obs, p.ReplySeq); o == nil || !o.Completes || o.Kind != kind {
				t.Errorf("the pair's reply #%d is not the notification, completing it\n%s", p.ReplySeq, describe(obs, pairs))
			}
			checkJudged(t, j, ex, tc.wantFail)
		})
	}
}

// TestHTTPGetStreamBounded: a GET stream that floods is judged up to the
// byte bound, then observed only: its judged exchanges do not grow
// without end.
func TestHTTPGetStreamBounded(t *testing.T) {
	const bound = 8 << 10
	msg := logMessage("info")
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; r.Context().Err() == nil && i < 2000; i++ {
			if _, err := io.WriteString(w, "data: "+msg+"\n\n"); err != nil {
				return
			}
		}
	})
	rec := &recorder{}
	h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{MaxBytes: bound}})
	req, _ := http.NewRequest("GET", base+"/mcp", nil)
	req.Header = streamHeaders("text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if want := int64(2000 * len("data: "+msg+"\n\n")); n != want {
		t.Fatalf("relayed %d bytes, want %d", n, want)
	}
	rec.waitFor(t, "the end of the stream", func(obs []Observation, _ []Pair) bool {
		return len(obs) > 0 && strings.HasPrefix(obs[len(obs)-1].Note, "end of the stream")
	})
	h.Close()
	obs, pairs := rec.snapshot()
	tails := tailPairs(pairs)
	var judged int
	for _, p := range tails {
		judged += len(p.Exchange.Response.Body)
	}
	if len(tails) == 0 || judged > bound {
		t.Errorf("%d judged exchanges of %d bytes in all, want some, at most %d bytes", len(tails), judged, bound)
	}
	var noted bool
	for _, o := range obs {
		noted = noted || strings.Contains(o.Note, "not judged")
	}
	if !noted {
		t.Errorf("no observation says the rest of the stream is not judged")
	}
}

// postCall posts the tools/call that offers a progress token through the
// relay at base, as a client that takes either reply type; the reply is
// closed when the test ends.
func postCall(t *testing.T, base string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(callWithToken))
	req.Header = streamHeaders("application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// streamEnd is how an exchange records the end of its stream.
type streamEnd struct{ Ended, HeldOpen, Cut bool }

// TestHTTPStreamEndRecorded: a POST's stream the server closed, read to
// its end, is recorded Ended, as check's transport records it, whether
// or not its response came (RPC1006 then gives no advice to raise
// --timeout, and the rules that need a closed stream judge it); one
// still open Limits.Quiet past its response is HeldOpen (HTTP1005 warns
// of it). A stream the relay stopped reading (its byte bound, the client
// gone) or the server broke off is neither: it is not known to have
// ended. Before, no relayed stream was Ended.
func TestHTTPStreamEndRecorded(t *testing.T) {
	const bound = 4 << 10
	tests := []struct {
		name   string
		serve  func(w http.ResponseWriter, r *http.Request)
		leave  bool // the client goes away once it has the response
		answer bool // the response comes (else the pair has none)
		want   streamEnd
	}{
		{name: "closed after the response", answer: true, want: streamEnd{Ended: true},
			serve: func(w http.ResponseWriter, r *http.Request) { sseHead(w); sendEvent(w, callResult) }},
		{name: "closed after the response and a notification", answer: true, want: streamEnd{Ended: true},
			serve: func(w http.ResponseWriter, r *http.Request) {
				sseHead(w)
				sendEvent(w, callResult)
				sendEvent(w, logMessage("info"))
			}},
		{name: "closed without the response", want: streamEnd{Ended: true},
			serve: func(w http.ResponseWriter, r *http.Request) { sseHead(w); sendEvent(w, logMessage("info")) }},
		{name: "held open past the response", answer: true, want: streamEnd{HeldOpen: true},
			serve: func(w http.ResponseWriter, r *http.Request) { sseHead(w); sendEvent(w, callResult); hangUntilGone(r) }},
		{name: "broken off after the response", answer: true,
			serve: func(w http.ResponseWriter, r *http.Request) {
				sseHead(w)
				sendEvent(w, callResult)
				panic(http.ErrAbortHandler)
			}},
		{name: "past the byte bound after the response", answer: true,
			serve: func(w http.ResponseWriter, r *http.Request) {
				sseHead(w)
				sendEvent(w, callResult)
				for range 2 * bound / len(logMessage("info")) {
					sendEvent(w, logMessage("info"))
				}
			}},
		{name: "the client gone after the response", answer: true, leave: true,
			serve: func(w http.ResponseWriter, r *http.Request) { sseHead(w); sendEvent(w, callResult); hangUntilGone(r) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, tc.serve)
			rec := &recorder{}
			quiet := time.Hour // the pair comes at the stream's end
			if tc.want.HeldOpen {
				quiet = 200 * time.Millisecond
			}
			_, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: Limits{Quiet: quiet, MaxBytes: bound}})
			resp := postCall(t, base)
			if tc.leave {
				if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "data: "+callResult+"\n" {
					t.Fatalf("the client read %q, %v", line, err)
				}
				resp.Body.Close()
			}
			obs, pairs := rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
			ex := pairs[0].Exchange
			if r := ex.Response; ex.Failure != "" || r == nil || tc.answer != (pairs[0].ReplySeq != 0) {
				t.Fatalf("failure %q, response %+v; want the response %v\n%s", ex.Failure, r, tc.answer, describe(obs, pairs))
			}
			r := ex.Response
			if diff := cmp.Diff(tc.want, streamEnd{r.Ended, r.HeldOpen, r.Cut}); diff != "" {
				t.Errorf("the stream's end (-want +got):\n%s", diff)
			}
			// The recording says so to lint.
			r = relayed(t, ex).Response
			if diff := cmp.Diff(tc.want, streamEnd{r.Ended, r.HeldOpen, r.Cut}); diff != "" {
				t.Errorf("the recorded stream's end (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHTTPListenClosedByClientJudged: a client ends its
// subscriptions/listen stream itself; what the stream carried until then
// is the exchange, judged as check judges its look at one: an
// acknowledgment without the listen request's subscriptionId fails
// PRO1009 (T-SUB-1), a right one passes. Before, the exchange failed as
// "the client went away" and was not judged, so the relay's gate passed
// (review rev33).
func TestHTTPListenClosedByClientJudged(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	j := newJudge()
	for _, tc := range []struct {
		name, ack string
		wantFail  []string
	}{
		{"ack without subscriptionId", `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true}}}`, []string{"PRO1009 fail"}},
		{"ack", `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}`, nil},
		// Closed before anything came: the acknowledgment may have been
		// on its way, so nothing is judged (review rev35).
		{"closed before the acknowledgment", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("X-Accel-Buffering", "no")
				w.WriteHeader(200)
				if tc.ack != "" {
					fmt.Fprintf(w, "data: %s\n\n", tc.ack)
				}
				w.(http.Flusher).Flush()
				<-r.Context().Done() // held open until the client goes
			})
			rec := &recorder{}
			_, base := startRelay(t, up.url(), rec, HTTPConfig{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(body))
			req.Header = http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"},
				"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"subscriptions/listen"}}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.ack != "" {
				if line, _ := bufio.NewReader(resp.Body).ReadString('\n'); line != "data: "+tc.ack+"\n" {
					t.Fatalf("the client read %q", line)
				}
			}
			cancel() // the client ends its subscription
			resp.Body.Close()
			obs, pairs := rec.waitFor(t, "the listen's pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) == 1 })
			ex := pairs[0].Exchange
			if tc.ack == "" {
				if ex.Failure == "" {
					t.Errorf("a stream left before any message was judged\n%s", describe(obs, pairs))
				}
				return
			}
			if ex.Failure != "" || ex.Response == nil || ex.Response.Ended {
				t.Fatalf("failure %q, response %+v, want the stream judged, not ended by the server\n%s", ex.Failure, ex.Response, describe(obs, pairs))
			}
			checkJudged(t, j, ex, tc.wantFail)
		})
	}
}
