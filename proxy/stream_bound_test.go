package proxy

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transport"
)

// boundJudged is what a bound test compares of the relay's exchange and
// check's: whether the reading stopped at a bound before the response
// (Truncated), the failure that says so, the messages judged, and every
// verdict.
type boundJudged struct {
	Truncated bool
	Failure   string
	Messages  int
	Rows      []string
}

func judgedOf(j *judge, ex *envelope.Exchange) boundJudged {
	b := boundJudged{Failure: ex.Failure, Rows: rows(j.verdicts(ex))}
	if r := ex.Response; r != nil {
		b.Truncated, b.Messages = r.Truncated, len(r.Messages)
	}
	return b
}

// writeEvents writes n events of data, flushing now and then.
func writeEvents(w http.ResponseWriter, n int, event string) {
	for i := range n {
		io.WriteString(w, event)
		if i%64 == 63 {
			w.(http.Flusher).Flush()
		}
	}
	w.(http.Flusher).Flush()
}

// TestHTTPStreamBoundsAsCheck: a POST's stream is judged within the
// bounds check's transport reads it in, and the relay says so as check
// does. A stream whose text passes Limits.MaxBytes, or that carries
// transport.DefaultMaxEvents events (messages or not), before its
// response is not judged: Response.Truncated, and check's failure, an
// error ("could not judge"). Each twin under the bound is judged as
// check judges it. Past the response, the look ends at the same bounds,
// and a response that comes after it ends is neither judged nor makes
// the first judged again. Each case runs the same server through the
// relay and through check's transport, and the two must agree. Before,
// a stream past the byte bound with no response failed RPC1006 (or,
// held open, waited for the relay to stop), one with its response was
// an error in words of the relay's own, and the bound was met by the
// chunk read, not the event: a response whole within it, read with
// bytes past it, was not judged. The events were counted only past the
// response, from there on: a response after the 1000th event was
// judged, 1000 events without one failed RPC1006, and the look past a
// response took 1000 events more.
func TestHTTPStreamBoundsAsCheck(t *testing.T) {
	const bound = 16 << 10
	note := "event: message\ndata: " + logMessage("info") + "\n\n"
	other := "event: other\ndata: {}\n\n" // an event, no message: counted all the same
	answer := "data: " + callResult + "\n\n"
	flood := 2 * bound / len(note) // that many notes pass the byte bound
	tests := []struct {
		name     string
		maxBytes int64 // 0: bound
		serve    func(w http.ResponseWriter, r *http.Request)
		holdOpen bool // the server keeps the stream open: no end of the stream comes
		gzip     bool // the server sends the stream with Content-Encoding: gzip
		// quiet is the look past the response (0: long enough for any
		// case that ends by a bound or the stream's end, on a loaded
		// machine too).
		quiet time.Duration
		want  boundJudged
	}{
		{name: "past the byte bound before the response, then the response",
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, flood, note)
				writeEvents(w, 1, answer)
			},
			want: boundJudged{Truncated: true, Failure: "reply exceeds 16384 bytes", Messages: bound / len(note)}},
		{name: "past the byte bound, and no response",
			serve: func(w http.ResponseWriter, r *http.Request) { writeEvents(w, flood, note) },
			want:  boundJudged{Truncated: true, Failure: "reply exceeds 16384 bytes", Messages: bound / len(note)}},
		{name: "past the byte bound, no response, held open", holdOpen: true,
			serve: func(w http.ResponseWriter, r *http.Request) { writeEvents(w, flood, note); hangUntilGone(r) },
			want:  boundJudged{Truncated: true, Failure: "reply exceeds 16384 bytes", Messages: bound / len(note)}},
		{name: "one event past the byte bound, before the response",
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, 1, "data: "+strings.Repeat(" ", bound)+logMessage("info")+"\n\n")
				writeEvents(w, 1, answer)
			},
			want: boundJudged{Truncated: true, Failure: "reply exceeds 16384 bytes"}},
		{name: "gzip: past the byte bound, decoded, before the response", gzip: true,
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, flood, note)
				writeEvents(w, 1, answer)
			},
			want: boundJudged{Truncated: true, Failure: "Content-Encoding gzip: the body decodes to more than 16384 bytes, the checker's bound", Messages: bound / len(note)}},
		{name: "gzip: under the byte bound, then the response", gzip: true,
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, flood/4, note)
				writeEvents(w, 1, answer)
			},
			want: boundJudged{Messages: flood/4 + 1}},
		{name: "under the byte bound, then the response",
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, flood/4, note)
				writeEvents(w, 1, answer)
			},
			want: boundJudged{Messages: flood/4 + 1}},
		{name: "the response, then past the byte bound",
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, 1, answer)
				writeEvents(w, flood, note)
			},
			want: boundJudged{Messages: 1 + (bound-len(answer))/len(note)}},
		{name: "1000 events before the response", maxBytes: 1 << 20,
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, transport.DefaultMaxEvents, note)
				writeEvents(w, 1, answer)
			},
			want: boundJudged{Truncated: true, Failure: "no response in the first 1000 events", Messages: 1000}},
		{name: "1000 events and no response", maxBytes: 1 << 20,
			serve: func(w http.ResponseWriter, r *http.Request) { writeEvents(w, transport.DefaultMaxEvents, note) },
			want:  boundJudged{Truncated: true, Failure: "no response in the first 1000 events", Messages: 1000}},
		{name: "1000 events, half of them no message, before the response", maxBytes: 1 << 20,
			serve: func(w http.ResponseWriter, r *http.Request) {
				for range transport.DefaultMaxEvents / 2 {
					writeEvents(w, 1, note)
					writeEvents(w, 1, other)
				}
				writeEvents(w, 1, answer)
			},
			want: boundJudged{Truncated: true, Failure: "no response in the first 1000 events", Messages: 500}},
		{name: "1000 comments, then the response", maxBytes: 1 << 20,
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, transport.DefaultMaxEvents, ": keep-alive\n\n") // no event: not counted
				writeEvents(w, 1, answer)
			},
			want: boundJudged{Messages: 1}},
		{name: "the response the 1000th event", maxBytes: 1 << 20,
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, transport.DefaultMaxEvents-1, note)
				writeEvents(w, 1, answer)
				writeEvents(w, 1, note)
			},
			want: boundJudged{Messages: 1000}},
		{name: "the response, then more than 1000 events", maxBytes: 1 << 20,
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, 1, answer)
				writeEvents(w, transport.DefaultMaxEvents+100, note)
			},
			want: boundJudged{Messages: 1000}},
		{name: "a second and a third response within the look",
			serve: func(w http.ResponseWriter, r *http.Request) { writeEvents(w, 3, answer) },
			want:  boundJudged{Messages: 3}},
		{name: "a second and a third response past the look", quiet: 100 * time.Millisecond,
			serve: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, 1, answer)
				time.Sleep(time.Second) // ten times the look
				writeEvents(w, 2, answer)
			},
			want: boundJudged{Messages: 1}},
	}
	j := newJudge()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.gzip {
					w.Header().Set("Content-Encoding", "gzip")
					gz := gzipStream{w, gzip.NewWriter(w)}
					defer gz.gz.Close()
					w = gz
				}
				sseHead(w)
				tc.serve(w, r)
			})
			lim := Limits{MaxBytes: tc.maxBytes, Quiet: tc.quiet, Timeout: 10 * time.Second}
			if lim.MaxBytes == 0 {
				lim.MaxBytes = bound
			}
			if lim.Quiet == 0 {
				lim.Quiet = 5 * time.Second
			}

			relayed, checked := relayAndCheck(t, up, lim, tc.holdOpen)
			relay := judgedOf(j, relayed)
			if diff := cmp.Diff(tc.want, relay, cmpRowsIgnored); diff != "" {
				t.Errorf("the relay's exchange (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(judgedOf(j, checked), relay); diff != "" {
				t.Errorf("the relay judges otherwise than check (-check +relay):\n%s", diff)
			}
		})
	}
}

// relayAndCheck posts the same tools/call to up through check's
// transport and through the relay, with the same limits, and returns the
// relay's one exchange and check's. The relay's is taken when the stream
// ends (every later event is in by then), or, holdOpen, when it is
// paired while the stream stays open.
func relayAndCheck(t *testing.T, up *upstream, lim Limits, holdOpen bool) (relayed, checked *envelope.Exchange) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &transport.HTTP{URL: up.url().String(), Limits: transport.Limits{
		MaxBytes: lim.MaxBytes, Quiet: lim.Quiet, Timeout: lim.Timeout}}
	ex := tr.Do(ctx, envelope.Request{Header: streamHeaders("application/json, text/event-stream"), Body: []byte(callWithToken)})

	rec := &recorder{}
	h, base := startRelay(t, up.url(), rec, HTTPConfig{Limits: lim})
	resp := postCall(t, base)
	go io.Copy(io.Discard, resp.Body)
	var pairs []Pair
	if holdOpen {
		_, pairs = rec.waitFor(t, "the pair", func(_ []Observation, pairs []Pair) bool { return len(pairs) > 0 })
	} else {
		rec.waitFor(t, "the end of the stream", func(obs []Observation, _ []Pair) bool {
			return len(obs) > 0 && strings.HasPrefix(obs[len(obs)-1].Note, "end of the stream")
		})
		h.Close()
		_, pairs = rec.snapshot()
	}
	if len(pairs) != 1 {
		t.Fatalf("%d pairs, want 1", len(pairs))
	}
	return pairs[0].Exchange, &ex
}

// gzipStream writes a response gzipped, each flush a gzip flush.
type gzipStream struct {
	http.ResponseWriter
	gz *gzip.Writer
}

func (g gzipStream) Write(p []byte) (int, error) { return g.gz.Write(p) }

func (g gzipStream) Flush() {
	g.gz.Flush()
	g.ResponseWriter.(http.Flusher).Flush()
}

// cmpRowsIgnored compares a boundJudged without its verdicts, which
// the comparison with check's covers.
var cmpRowsIgnored = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Rows" }, cmp.Ignore())
