package proxy

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
)

// strayJudged is what a stray test compares of the relay's exchange and
// check's: the bound test's, and the findings (the verdicts that fail,
// warn or err) that tell how the stray was judged.
type strayJudged struct {
	Judged   boundJudged
	Findings []string
}

func strayJudgedOf(j *judge, ex *envelope.Exchange) strayJudged {
	s := strayJudged{Judged: judgedOf(j, ex)}
	for _, r := range s.Judged.Rows {
		if strings.HasSuffix(r, " fail") || strings.HasSuffix(r, " warn") || strings.HasSuffix(r, " error") {
			s.Findings = append(s.Findings, r)
		}
	}
	return s
}

// TestHTTPStreamStrayAsCheck: on a POST's stream, the message that
// answers the request is the one check's transport waits for
// (transport.Answers): a response to another request's id, or one that
// is no JSON, answers nothing, and a batch answers only when it holds a
// response. Such a message is kept as one of the exchange's, and the
// relay reads on for the request's own response, as check does, past
// its look (Limits.Quiet) too: the two judge the same messages alike.
// Before, the relay took any response-shaped message (or any batch) for
// the answer and paired the exchange Limits.Quiet after it, without the
// real response that came later: a stray then the response failed
// RPC1004 (the stray read as the reply, with the wrong id) where check
// warns of the stray beside the response (RPC1006, T-HTTP-15).
func TestHTTPStreamStrayAsCheck(t *testing.T) {
	const (
		stray      = `{"jsonrpc":"2.0","id":99,"result":{"content":[]}}`
		strayBatch = `[{"jsonrpc":"2.0","id":99,"result":{"content":[]}}]`
		cutShort   = `{"jsonrpc":"2.0","id":1,"result":{"content":[`
		quiet      = 100 * time.Millisecond
		past       = time.Second // ten times the look
	)
	notes := "[" + logMessage("info") + "," + logMessage("info") + "]"
	type ev struct {
		after time.Duration // the pause before the event
		data  string
	}
	tests := []struct {
		name   string
		events []ev
		want   strayJudged
	}{
		{name: "a stray response, then the response past the look",
			events: []ev{{0, stray}, {past, callResult}},
			want:   strayJudged{Judged: boundJudged{Messages: 2}, Findings: []string{"RPC1006 warn"}}},
		{name: "the response, then a stray response within the look",
			events: []ev{{0, callResult}, {0, stray}},
			want:   strayJudged{Judged: boundJudged{Messages: 2}, Findings: []string{"RPC1006 warn"}}},
		{name: "a stray response, and the stream ends",
			events: []ev{{0, stray}},
			want:   strayJudged{Judged: boundJudged{Messages: 1}, Findings: []string{"RPC1004 fail"}}},
		{name: "the id as a string answers, with the wrong id",
			events: []ev{{0, `{"jsonrpc":"2.0","id":"1","result":{"content":[]}}`}, {past, callResult}},
			want:   strayJudged{Judged: boundJudged{Messages: 1}, Findings: []string{"HTTP1005 warn", "RPC1004 fail"}}},
		{name: "a response cut short, then the response past the look",
			events: []ev{{0, cutShort}, {past, callResult}},
			want:   strayJudged{Judged: boundJudged{Messages: 2}, Findings: []string{"RPC1001 fail"}}},
		{name: "a batch of notifications, then the response past the look",
			events: []ev{{0, notes}, {past, callResult}},
			want:   strayJudged{Judged: boundJudged{Messages: 2}, Findings: []string{"RPC1001 fail"}}},
		{name: "a batch holding a stray response answers",
			events: []ev{{0, strayBatch}, {past, callResult}},
			want:   strayJudged{Judged: boundJudged{Messages: 1}, Findings: []string{"HTTP1005 warn", "RPC1001 fail"}}},
	}
	j := newJudge()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				sseHead(w)
				for _, e := range tc.events {
					select {
					case <-time.After(e.after):
					case <-r.Context().Done():
						return
					}
					writeEvents(w, 1, "event: message\ndata: "+e.data+"\n\n")
				}
			})
			lim := Limits{MaxBytes: 1 << 20, Quiet: quiet, Timeout: 10 * time.Second}

			relayed, checked := relayAndCheck(t, up, lim, false)
			relay := strayJudgedOf(j, relayed)
			if diff := cmp.Diff(tc.want, relay, cmpRowsIgnored); diff != "" {
				t.Errorf("the relay's exchange (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(strayJudgedOf(j, checked), relay); diff != "" {
				t.Errorf("the relay judges otherwise than check (-check +relay):\n%s", diff)
			}
		})
	}
}
