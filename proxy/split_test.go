package proxy

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/wymcp/wymcp-check/envelope"

	"github.com/google/go-cmp/cmp"
)

// frames renders what a splitter emitted, one string per frame.
func frames(fs []frame) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%q size=%d over=%v open=%v", f.raw, f.size, f.oversized, f.open))
	}
	return out
}

// feedAll feeds the chunks one by one, as reads would deliver them.
func feedAll(feed func([]byte, func(frame)), chunks ...string) []frame {
	var got []frame
	for _, c := range chunks {
		feed([]byte(c), func(f frame) { got = append(got, f) })
	}
	return got
}

func TestLineSplitter(t *testing.T) {
	tests := []struct {
		name   string
		max    int64
		chunks []string
		want   []string
	}{
		{"one line", 100, []string{"{}\n"}, []string{`"{}" size=2 over=false open=false`}},
		{"split across reads", 100, []string{`{"a`, `":1}`, "\n{}", "\n"}, []string{`"{\"a\":1}" size=7 over=false open=false`, `"{}" size=2 over=false open=false`}},
		{"CRLF loses its CR", 100, []string{"{}\r\n"}, []string{`"{}" size=2 over=false open=false`}},
		{"CR split from its LF", 100, []string{"{}\r", "\n"}, []string{`"{}" size=2 over=false open=false`}},
		{"empty line", 100, []string{"\n"}, []string{`"" size=0 over=false open=false`}},
		{"over the bound", 4, []string{"abcdefgh\nxy\n"}, []string{`"abcd" size=8 over=true open=false`, `"xy" size=2 over=false open=false`}},
		{"over the bound, many reads", 4, []string{"ab", "cdef", "gh", "\n"}, []string{`"abcd" size=8 over=true open=false`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := &lineSplitter{max: tt.max}
			got := frames(feedAll(ls.feed, tt.chunks...))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a last line without newline", func(t *testing.T) {
		ls := &lineSplitter{max: 100}
		feedAll(ls.feed, "{}\n{")
		var got []frame
		if !ls.flush(func(f frame) { got = append(got, f) }) || len(got) != 1 || string(got[0].raw) != "{" || !got[0].open {
			t.Errorf("flush: %v", frames(got))
		}
		if ls.flush(func(frame) { t.Error("flushed twice") }) {
			t.Error("flush reported a line after the last")
		}
	})
}

func TestSSESplitter(t *testing.T) {
	tests := []struct {
		name     string
		max      int64
		chunks   []string
		wantData []string // each event's data, as eventData reads it
	}{
		{"LF", 100, []string{"data: {\"a\":1}\n\n"}, []string{`{"a":1}`}},
		{"CRLF, split everywhere", 100, []string{"da", "ta: {}\r", "\n", "\r", "\n"}, []string{`{}`}},
		{"lone CRs", 100, []string{"data: 1\r\rdata: 2\r\r"}, []string{"1", "2"}},
		{"multi-line data", 100, []string{"event: message\nid: 9\ndata: {\"a\":\ndata: 1}\n\n"}, []string{"{\"a\":\n1}"}},
		{"comment and retry carry no message", 100, []string{": ping\n\nretry: 10\n\ndata: x\n\n"}, []string{"x"}},
		{"blank lines between events", 100, []string{"\n\n\ndata: x\n\n\n"}, []string{"x"}},
		{"an event over the bound keeps its beginning", 12, []string{"data: 0123456789abcdef\n\ndata: y\n\n"}, []string{"012345", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &sseSplitter{max: tt.max}
			var got []string
			for _, f := range feedAll(s.feed, tt.chunks...) {
				if int64(len(f.raw)) > tt.max {
					t.Errorf("a frame keeps %d bytes, over %d", len(f.raw), tt.max)
				}
				if d := eventData(f); d != nil {
					got = append(got, string(d))
				}
			}
			if diff := cmp.Diff(tt.wantData, got); diff != "" {
				t.Errorf("event data (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		raw        string
		kind       Kind
		method, id string
		valid      bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, KindRequest, "ping", "1", true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, KindNotification, "notifications/initialized", "", true},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, KindResponse, "", `"a"`, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, KindResponse, "", "null", true},
		{`{"jsonrpc":"2.0","id":3}`, KindResponse, "", "3", true},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, KindBatch, "", "", true},
		{`"tools/list"`, KindOther, "", "", true},
		{`{}`, KindOther, "", "", true},
		{`not json`, KindOther, "", "", false},
		{"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"t\":\"\x1b[2J\"}}", KindResponse, "", "2", false},
	}
	for _, tt := range tests {
		k, m, id, valid := classify([]byte(tt.raw))
		if k != tt.kind || m != tt.method || id != tt.id || valid != tt.valid {
			t.Errorf("classify(%q) = %v %q %q %v, want %v %q %q %v", tt.raw, k, m, id, valid, tt.kind, tt.method, tt.id, tt.valid)
		}
	}
}

// TestLedgerBatches: two batches in flight (2025-03-26) share no id, so
// neither gives the other up as a reused id (review rev90: the first was
// dropped unjudged, "a later request reused its id"), and a batch reply
// goes to the batch whose requests it names, whichever came first; one
// that names none of them goes to the first batch, where it is judged.
func TestLedgerBatches(t *testing.T) {
	batch := func(method, body string) *waiting {
		return &waiting{key: batchKey, method: method, ex: &envelope.Exchange{Request: envelope.Request{Body: []byte(body)}}}
	}
	var l ledger
	for _, w := range []*waiting{
		batch("first", `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`),
		batch("second", `[{"jsonrpc":"2.0","id":4,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/x"}]`),
	} {
		if dropped, why := l.add(w); dropped != nil {
			t.Fatalf("adding batch %s gave up batch %s: %s", w.method, dropped.method, why)
		}
	}
	var got []string
	for _, reply := range []string{`[{"jsonrpc":"2.0","id":4,"result":{}}]`, `[{"jsonrpc":"2.0","id":99,"result":{}}]`} {
		w := l.matchBatch([]byte(reply))
		if w == nil {
			t.Fatalf("reply %s matched no batch", reply)
		}
		got = append(got, w.method)
	}
	if want := []string{"second", "first"}; !slices.Equal(got, want) {
		t.Errorf("replies matched batches %v, want %v", got, want)
	}
}

func TestLedgerMatch(t *testing.T) {
	req := func(id string) *waiting { return &waiting{key: idKey(id), id: id, method: "m" + id} }
	quiet := func() *waiting { return &waiting{quiet: true, method: "note"} }
	garbage := func() *waiting { return &waiting{} } // a line that is no message: method ""
	batch := func() *waiting { return &waiting{key: "[", method: "batch"} }
	cut := func() *waiting {
		return &waiting{key: idKey("2"), method: "mcut", ex: &envelope.Exchange{Request: envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"`)}}}
	}
	tests := []struct {
		name    string
		waiting []*waiting
		reply   string // the reply's id
		isError bool
		want    string // the method of the request matched, "" for none
	}{
		{"a null-id error answers a malformed line before an earlier notification", []*waiting{quiet(), garbage()}, "null", true, "(the line)"},
		{"a null-id result answers no malformed line", []*waiting{quiet(), garbage()}, "null", false, "note"},
		{"a null-id result answers a null-id request before an earlier notification", []*waiting{quiet(), req("null")}, "null", false, "mnull"},
		{"a null-id error answers a batch before a notification", []*waiting{quiet(), batch()}, "null", true, "batch"},
		{"a null-id error answers a line cut short, whatever id it seems to hold", []*waiting{quiet(), cut()}, "null", true, "mcut"},
		{"a null-id result does not answer a line cut short", []*waiting{quiet(), cut()}, "null", false, "note"},
		{"same id", []*waiting{req("1"), req("2")}, "2", false, "m2"},
		{"string is not number", []*waiting{req(`"7"`), req("7")}, "7", false, "m7"},
		{"the id in the other type, when it alone fits", []*waiting{req(`"7"`), req("8")}, "7", false, `m"7"`},
		{"null answers a notification", []*waiting{req("1"), quiet()}, "null", false, "note"},
		{"null answers an unreadable id first", []*waiting{req("true"), quiet()}, "null", false, "mtrue"},
		{"an object id echoed answers its own request, not an earlier null-id one", []*waiting{req("null"), req(`{"a":1}`)}, `{"a":1}`, false, `m{"a":1}`},
		{"a null id still answers the null-id request", []*waiting{req("null"), req(`{"a":1}`)}, "null", false, "mnull"},
		{"an object id written back with other spacing answers its request", []*waiting{req("null"), req(`{"a":1}`)}, `{"a": 1}`, false, `m{"a":1}`},
		{"a mangled id answers the only request", []*waiting{req("1")}, "99", false, "m1"},
		{"a mangled id among several answers none", []*waiting{req("1"), req("2")}, "99", false, ""},
		{"nothing waits", nil, "1", false, ""},
		{"a notification alone is not the only request", []*waiting{quiet()}, "5", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger{list: tt.waiting}
			got := ""
			w := l.match(tt.reply, tt.isError)
			switch {
			case w != nil && w.method == "" && !w.quiet:
				got = "(the line)"
			case w != nil:
				got = w.method
			}
			if got != tt.want {
				t.Errorf("match(%s) = %q, want %q", tt.reply, got, tt.want)
			}
		})
	}
	t.Run("a reused id gives up the earlier request", func(t *testing.T) {
		l := &ledger{}
		l.add(req("1"))
		old, why := l.add(req("1"))
		if old == nil || why == "" || len(l.list) != 1 || !l.list[0].ambiguous {
			t.Errorf("add: %v %q, %d waiting (the later one must be marked ambiguous)", old, why, len(l.list))
		}
	})
	t.Run("bounded", func(t *testing.T) {
		l := &ledger{}
		var dropped int
		for i := range maxWaiting + 10 {
			if old, _ := l.add(req(fmt.Sprint(i))); old != nil {
				dropped++
			}
		}
		if len(l.list) != maxWaiting || dropped != 10 {
			t.Errorf("%d waiting, %d dropped", len(l.list), dropped)
		}
	})
}

// TestLedgerCancelIn: a cancellation marks the one request it names in
// its session, which stays to pair with an answer sent anyway, holds no
// clock up (waitingIn) and, unanswered, is not owed at the end
// (drainOwed). Both relays keep their requests so.
func TestLedgerCancelIn(t *testing.T) {
	cancel := func(id string) *Observation {
		return &Observation{Raw: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)}
	}
	req := func(session, id string) *waiting {
		return &waiting{key: idKey(id), id: id, session: session, method: "sampling/createMessage"}
	}
	tests := []struct {
		name      string
		waiting   []*waiting
		session   string
		cancel    *Observation
		marked    int  // the index of the request marked, -1 for none
		stillWait bool // waitingIn(session) after
	}{
		{"names the request in its session", []*waiting{req("a", `"s1"`), req("b", `"s1"`)}, "b", cancel(`"s1"`), 1, false},
		{"another id", []*waiting{req("", `"s1"`)}, "", cancel(`"s2"`), -1, true},
		{"a number is not its string", []*waiting{req("", `"7"`)}, "", cancel(`7`), -1, true},
		{"no readable id", []*waiting{req("", `"s1"`)}, "", cancel(`null`), -1, true},
		{"a notification waiting", []*waiting{{key: idKey(`"s1"`), quiet: true, method: "notifications/x"}}, "", cancel(`"s1"`), -1, false},
		{"one cancelled already", []*waiting{{key: idKey(`"s1"`), cancelled: true, method: "roots/list"}}, "", cancel(`"s1"`), -1, false},
		{"oversized", []*waiting{req("", `"s1"`)}, "", &Observation{Oversized: true, Raw: cancel(`"s1"`).Raw}, -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger{list: slices.Clone(tt.waiting)}
			got := slices.Index(tt.waiting, l.cancelIn(tt.session, tt.cancel))
			if got != tt.marked {
				t.Errorf("cancelIn marked #%d, want #%d", got, tt.marked)
			}
			if len(l.list) != len(tt.waiting) {
				t.Errorf("%d waiting after, want %d: a cancelled request stays", len(l.list), len(tt.waiting))
			}
			if w := l.waitingIn(tt.session); w != tt.stillWait {
				t.Errorf("waitingIn = %v, want %v", w, tt.stillWait)
			}
			owed := l.drainOwed()
			if slices.ContainsFunc(owed, func(w *waiting) bool { return w.cancelled }) || len(l.list) != 0 {
				t.Errorf("drainOwed returned a cancelled request, or left %d", len(l.list))
			}
		})
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor(http.Header{"X-Api-Key": {"key-1234"}})
	got := r.Header(http.Header{"Authorization": {"Bearer tok-5678"}, "Cookie": {"s=abcd"}, "X-Api-Key": {"other-9999"}, "Accept": {"*/*"}})
	want := http.Header{"Authorization": {Redacted}, "Cookie": {Redacted}, "X-Api-Key": {Redacted}, "Accept": {"*/*"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Header (-want +got):\n%s", diff)
	}
	body := `{"error":{"message":"bad token Bearer tok-5678, or tok-5678 alone, or key-1234, or other-9999, not 123"}}`
	wantBody := `{"error":{"message":"bad token <redacted:Authorization>, or <redacted:Authorization> alone, or <redacted:X-Api-Key>, or <redacted:X-Api-Key>, not 123"}}`
	if got := string(r.Scrub([]byte(body))); got != wantBody {
		t.Errorf("Scrub:\n got %s\nwant %s", got, wantBody)
	}
	if n := len(r.Secrets()); n != 5 {
		t.Errorf("%d secrets learned, want 5 (key, the whole Authorization, its token, the cookie, the client's key): %v", n, r.Secrets())
	}
}

// A value learned by name (the upstream URL's query key) is scrubbed
// wherever it comes back, as a header's is; a short one, as ever, is not.
func TestRedactorLearn(t *testing.T) {
	r := NewRedactor(nil)
	r.Learn("Query-api_key", "S3CRET-key-42")
	r.Learn("Query-x", "ab")
	body := `{"error":{"message":"GET /mcp?api_key=S3CRET-key-42&x=ab refused"}}`
	want := `{"error":{"message":"GET /mcp?api_key=<redacted:Query-Api_key>&x=ab refused"}}`
	if got := string(r.Scrub([]byte(body))); got != want {
		t.Errorf("Scrub:\n got %s\nwant %s", got, want)
	}
}
