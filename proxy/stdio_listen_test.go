package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A request that ends without its response (a listen the client
// cancelled, then the session ended; or one whose id a later request
// took) keeps what the server wrote for it meanwhile: the listen's
// acknowledgment is judged with it, as the HTTP relay keeps what a
// stream carried before it closed. It was dropped, and PRO1009 warned
// that no acknowledgment arrived. The twin is a request the server wrote
// nothing for: its exchange has no reply.
func TestStdioEndedRequestKeepsWhatCame(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct {
		name, method, then string
		want               []string // the first request's messages
	}{
		{"listen cancelled, session ended", "subscriptions/listen", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L1"}}`,
			[]string{`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"notifications":{}}}`}},
		{"listen, id reused", "subscriptions/listen", `{"jsonrpc":"2.0","id":"L1","method":"tools/list","params":{` + meta + `}}`,
			[]string{`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"notifications":{}}}`}},
		{"nothing came", "never", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L1"}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startStdio(t, "listen-ack", Limits{Quiet: 50 * time.Millisecond}, nil)
			fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":"L1","method":"%s","params":{"notifications":{"toolsListChanged":true},%s}}`+"\n", tc.method, meta)
			if tc.method == "subscriptions/listen" {
				waitContains(t, s.out, "acknowledged")
			}
			fmt.Fprintln(s.in, tc.then)
			time.Sleep(100 * time.Millisecond)
			s.in.Close()
			s.wait(t, 10*time.Second)
			_, pairs := s.rec.snapshot()
			var first *Pair
			for i := range pairs {
				if pairs[i].RequestSeq == 1 {
					first = &pairs[i]
				}
			}
			if first == nil {
				t.Fatalf("no exchange for the first request: %s", describe(s.rec.snapshot()))
			}
			if first.Exchange.Failure == "" {
				t.Errorf("the exchange ended without a response, yet has no failure")
			}
			var got []string
			if r := first.Exchange.Response; r != nil {
				for _, m := range r.Messages {
					got = append(got, string(m))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("messages of the first request:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if tc.want == nil && first.Exchange.Response != nil {
				t.Errorf("a reply where nothing came: %+v", first.Exchange.Response)
			}
		})
	}
}
