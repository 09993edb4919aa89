package envelope_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

func TestParseKeepsWhatIsWrong(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		valid     bool
		utf8      bool
		dups      []string
		idKind    string
		methodAbs bool
	}{
		{"plain", `{"jsonrpc":"2.0","id":1,"method":"m"}`, true, true, nil, "integer", false},
		{"null id is not absent", `{"jsonrpc":"2.0","id":null}`, true, true, nil, "null", true},
		{"keys are case-sensitive", `{"jsonrpc":"2.0","ID":1,"Method":"m"}`, true, true, nil, "absent", true},
		{"duplicate keys", `{"id":1,"id":2,"a":{"b":1,"b":2}}`, true, true, []string{"id", "a.b"}, "integer", true},
		{"fraction id", `{"id":1.5}`, true, true, nil, "number", true},
		{"invalid utf-8", "{\"id\":\"\xff\"}", true, false, nil, "string", true},
		{"garbage", `{"id":`, false, true, nil, "absent", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := envelope.Parse([]byte(tt.raw))
			m2 := m // the cached members survive a copy
			if m.Valid != tt.valid || m.UTF8 != tt.utf8 {
				t.Errorf("Valid, UTF8 = %v, %v; want %v, %v", m.Valid, m.UTF8, tt.valid, tt.utf8)
			}
			if diff := cmp.Diff(tt.dups, m.Duplicates); diff != "" {
				t.Errorf("Duplicates (-want +got):\n%s", diff)
			}
			if k := envelope.Kind(m2.Get("id")); k != tt.idKind {
				t.Errorf("Kind(id) = %s, want %s", k, tt.idKind)
			}
			if m.Get("method").Exists() == tt.methodAbs {
				t.Errorf("method exists = %v", !tt.methodAbs)
			}
		})
	}
}

func TestSameID(t *testing.T) {
	tests := []struct {
		req, reply string
		same       bool
	}{
		{`7`, `7`, true},
		{`7`, `"7"`, false},
		{`"7"`, `"\u0037"`, true},
		{`1.5`, `1`, false},
		{`12345678901234567890`, `12345678901234567000`, false},
		{`12345678901234567890`, `12345678901234567890`, true},
		{`1e2`, `100`, true},
		{`"a"`, `"b"`, false},
		// Lone surrogates: each stays itself, or becomes U+FFFD in the
		// reply (a receiver's reading); never another one.
		{`"\ud800"`, `"\udc00"`, false},
		{`"\ud800"`, `"\ud800"`, true},
		{`"\ud800"`, `"\uD800"`, true},
		{`"x\ud800"`, `"x\ufffd"`, true},
		{`"x\ufffd"`, `"x\ud800"`, false},
		{`"\ud83d\ude00"`, `"😀"`, true},
		{`"a\/b\n"`, `"a/b\u000a"`, true},
	}
	for _, tt := range tests {
		mreq, mrep := envelope.Parse([]byte(`{"id":`+tt.req+`}`)), envelope.Parse([]byte(`{"id":`+tt.reply+`}`))
		req, rep := mreq.Get("id"), mrep.Get("id")
		if got := envelope.SameID(req, rep); got != tt.same {
			t.Errorf("SameID(%s, %s) = %v, want %v", tt.req, tt.reply, got, tt.same)
		}
	}
}

// TestSplitSSELastID: an empty id field resets the last event id (the
// SSE spec), so a stream that ends after it cannot be resumed.
func TestSplitSSELastID(t *testing.T) {
	for stream, want := range map[string]string{
		"id: e0\ndata:\n\n":                  "e0",
		"id: e0\ndata:\n\nid:\ndata: {}\n\n": "",
		"id: e0\ndata:\n\ndata: {}\n\n":      "e0",
		"id: e\x00x\ndata:\n\n":              "", // an id with NULL is ignored
		"\ufeffid: b1\ndata: {}\n\n":         "b1",
	} {
		_, got, err := envelope.SplitSSE([]byte(stream), 1024)
		if err != nil || got != want {
			t.Errorf("SplitSSE(%q): last id %q (%v), want %q", stream, got, err, want)
		}
	}
}

func TestHiddenResponse(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"event: mcp\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", "mcp"},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", ""},
		{"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", ""},
		// A named event with a notification hides no response.
		{"event: log\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n", ""},
		{"event: endpoint\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,\"message\":\"m\"}}\r\n\r\n", "endpoint"},
	} {
		if got := envelope.HiddenResponse([]byte(tc.body)); got != tc.want {
			t.Errorf("HiddenResponse(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

// TestSSEReader reads one stream as a server may deliver it: whole, a
// byte at a time, in halves, and with its last bytes arriving together
// with the end (a stream written whole before its close; the reader lost
// every event of one that started with a byte order mark so).
func TestSSEReader(t *testing.T) {
	stream := "\ufeff: keep-alive\r\n" + // a stream may start with a byte order mark
		"id: 1\r\ndata:\r\n\r\n" + // priming event: id, empty data
		"event: message\ndata: {\"a\":\ndata: 1}\n\n" +
		"data: {\"b\":2}\r\r" + // lone CR line ends
		"id: 2\nretry: 10\r\n\r\n" + // no data: no event, but returned for its id
		"data: partial"
	want := []envelope.Event{
		{ID: "1", IDSet: true, HasData: true},
		{Name: "message", Data: []byte("{\"a\":\n1}"), HasData: true},
		{Data: []byte(`{"b":2}`), HasData: true},
		{ID: "2", IDSet: true, Retry: "10"},
	}
	// (The first bytes alone, the rest with the end: a BOM, and a CRLF,
	// split there.)
	split := func(n int) io.Reader {
		return io.MultiReader(strings.NewReader(stream[:n]), iotest.DataErrReader(strings.NewReader(stream[n:])))
	}
	for name, in := range map[string]io.Reader{
		"whole":                   strings.NewReader(stream),
		"byte by byte":            iotest.OneByteReader(strings.NewReader(stream)),
		"halves":                  iotest.HalfReader(strings.NewReader(stream)),
		"end with data":           iotest.DataErrReader(strings.NewReader(stream)),
		"8 bytes, the rest":       split(8),
		"2 bytes, the rest":       split(2),
		"a CR, the rest with end": split(strings.Index(stream, "\r\r") + 1),
		"CR of CRLF, the rest":    split(strings.Index(stream, "10\r\n") + 3),
	} {
		r := envelope.NewSSEReader(in, 1024)
		var got []envelope.Event
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ev)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", name, diff)
		}
	}
}

func TestSSEReaderBoundsLines(t *testing.T) {
	r := envelope.NewSSEReader(strings.NewReader("data: "+strings.Repeat("x", 5000)+"\n\n"), 1024)
	if _, err := r.Next(); err != envelope.ErrEventTooLarge {
		t.Fatalf("Next = %v, want ErrEventTooLarge", err)
	}
}

// TestSSEBoundStreamAsWhole: a body read whole meets the line bound
// exactly where a stream read as it comes does (a live check and lint of
// its recording must agree), at the bound's edge for every line end: a
// line and the first byte of its end fit (a line with no end needs the
// stream's end seen, one byte more).
func TestSSEBoundStreamAsWhole(t *testing.T) {
	const maxLine = 4000 // under the scanner's first buffer: the bound is 4096
	line := func(n int) string { return "data: " + strings.Repeat("a", n-6) }
	for _, tt := range []struct {
		name, body string
		tooLarge   bool
	}{
		{"LF fits", line(4095) + "\n\n", false},
		{"LF over", line(4096) + "\n\n", true},
		{"CRLF fits", line(4095) + "\r\n\r\n", false},
		{"CRLF over", line(4096) + "\r\n\r\n", true},
		{"lone CR, then more", line(4096) + "\rx\r\r", true},
		{"lone CR one shorter", line(4095) + "\rx\r\r", false},
		{"lone CR at the end", line(4095) + "\r", false},
		{"lone CR at the end, over", line(4096) + "\r", true},
		{"no end, at the bound", line(4096), true},
		{"no end, one shorter", line(4095), false},
	} {
		_, serr := sseEvents(envelope.NewSSEReader(strings.NewReader(tt.body), maxLine))
		_, werr := sseEvents(envelope.NewSSEBodyReader([]byte(tt.body), maxLine))
		if got := serr == envelope.ErrEventTooLarge; got != tt.tooLarge {
			t.Errorf("%s: stream ends with %v, want too large %v", tt.name, serr, tt.tooLarge)
		}
		if got := werr == envelope.ErrEventTooLarge; got != tt.tooLarge {
			t.Errorf("%s: whole body ends with %v, want too large %v", tt.name, werr, tt.tooLarge)
		}
	}
}

func TestClassifyCode(t *testing.T) {
	extra := []envelope.CodeRule{{Code: 1001, Name: "Rate limited"}, {Code: -32042, Name: "mine"}, {Code: -32001, Name: "session expired"}}
	tests := []struct {
		version string
		code    int
		want    envelope.CodeClass
	}{
		{"2026-07-28", -32601, envelope.CodeDefined},
		{"2026-07-28", -32022, envelope.CodeDefined},
		{"2025-11-25", -32022, envelope.CodeServerRange}, // JSON-RPC server-error range before 2026
		{"2026-07-28", -32002, envelope.CodeForbidden},
		{"2026-07-28", -32042, envelope.CodeForbidden}, // a contract cannot allow what the version forbids
		{"2026-07-28", -32050, envelope.CodeForbidden},
		{"2026-07-28", -32001, envelope.CodeLegacy},  // T-ERR-9 holds though the contract names it
		{"2025-11-25", -32001, envelope.CodeDefined}, // before 2026-07-28 the contract may name it
		{"2026-07-28", -32005, envelope.CodeLegacy},
		{"2025-06-18", -32002, envelope.CodeDefined},
		{"2025-06-18", -32042, envelope.CodeDefined}, // the contract declares it; 2025-06-18 does not forbid it
		{"2025-11-25", -32042, envelope.CodeDefined},
		{"2025-11-25", -32050, envelope.CodeServerRange},
		{"2025-11-25", -32500, envelope.CodeReserved},
		{"2025-11-25", 0, envelope.CodeUnlisted},
		{"2025-11-25", 1001, envelope.CodeDefined},
	}
	for _, tt := range tests {
		if got, _ := envelope.ClassifyCode(tt.version, tt.code, extra); got != tt.want {
			t.Errorf("ClassifyCode(%s, %d) = %v, want %v", tt.version, tt.code, got, tt.want)
		}
	}
}

func TestHostileNumbersAndNesting(t *testing.T) {
	if envelope.IsInteger("1e999999") {
		t.Error("1e999999 judged a plausible integer id")
	}
	m := envelope.Parse([]byte(`{"id":1e999999}`))
	r := envelope.Parse([]byte(`{"id":1e999998}`))
	if envelope.SameID(m.Get("id"), r.Get("id")) {
		t.Error("distinct huge numbers judged the same id")
	}
	deep := envelope.Parse([]byte(strings.Repeat("[", 200000) + strings.Repeat("]", 200000)))
	if !deep.TooDeep || deep.Valid {
		t.Errorf("200000 levels: TooDeep %v, Valid %v", deep.TooDeep, deep.Valid)
	}
	ok := envelope.Parse([]byte(strings.Repeat("[", envelope.MaxDepth) + strings.Repeat("]", envelope.MaxDepth)))
	if ok.TooDeep || !ok.Valid {
		t.Errorf("%d levels: TooDeep %v, Valid %v", envelope.MaxDepth, ok.TooDeep, ok.Valid)
	}
	if envelope.TooDeep([]byte(`"` + strings.Repeat("[", 2*envelope.MaxDepth) + `"`)) {
		t.Error("brackets inside a string counted as nesting")
	}
}

// A message read with its member cache and one read without (past the
// first messages of a long stream) answer every path alike: a top member
// is its first occurrence, and a path through it stays inside that one.
func TestGetWithAndWithoutCache(t *testing.T) {
	dup := []byte(`{"jsonrpc":"2.0","method":"notifications/message","error":{"message":"x"},"error":{"code":1,"data":{"a":2}},"params":{"p":1},"params":{"q":2}}`)
	msgs := make([][]byte, 100)
	for i := range msgs {
		msgs[i] = dup
	}
	r := envelope.ReadReply(&envelope.Response{Messages: msgs}, envelope.ReadOptions{})
	cached, lean := envelope.Parse(dup), r.Messages[99]
	for _, path := range []string{"error", "error.code", "error.message", "error.data", "error.data.a", "params.p", "params.q", "method", "jsonrpc", "id"} {
		c, l := cached.Get(path), lean.Get(path)
		if c.Raw != l.Raw || c.Exists() != l.Exists() {
			t.Errorf("Get(%q): cached %q, without the cache %q", path, c.Raw, l.Raw)
		}
	}
	if got := cached.Get("error.code"); got.Exists() {
		t.Errorf("Get(error.code) = %s, want nothing: the first error member has no code", got.Raw)
	}
	if got := cached.Get("params.q"); got.Exists() {
		t.Errorf("Get(params.q) = %s, want nothing: the first params member has no q", got.Raw)
	}
}

// TestIDKeyByValue: ids are keyed by value where their value is an
// integer (a server that writes id 62 back as 62.0 answers 62), by
// their spelling otherwise (1.5 and 15e-1 differ in spelling and are no
// id MCP allows: their reply is matched as written), and never across
// types. The cases are testdata/idkeys.json.
func TestIDKeyByValue(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "idkeys.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		ID    string   `json:"id"`
		Same  []string `json:"same"`
		Other []string `json:"other"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	key := func(s string) string { return envelope.IDKey(gjson.Parse(s)) }
	for _, c := range cases {
		want := key(c.ID)
		for _, s := range c.Same {
			if got := key(s); got != want {
				t.Errorf("IDKey(%s) = %q, want %q, the key of %s", s, got, want, c.ID)
			}
		}
		for _, s := range c.Other {
			if got := key(s); got == want {
				t.Errorf("IDKey(%s) = %q, the key of %s too", s, got, c.ID)
			}
		}
	}
}

// TestReadReplyAnswered: an exchange whose request was answered, and
// judged, earlier has no reply among its lines, not even a later
// response that echoes the request's id (which it would be taken for);
// it still counts the responses. The twin, not so marked, takes it.
func TestReadReplyAnswered(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":[]}`)
	ids := []gjson.Result{gjson.Parse("1")}
	for _, answered := range []bool{true, false} {
		resp := &envelope.Response{Messages: [][]byte{line}, Again: []string{"1"}, Answered: answered}
		r := envelope.ReadReply(resp, envelope.ReadOptions{IDs: ids})
		if r.Has() == answered || r.Responses != 1 {
			t.Errorf("answered %v: reply %v, %d responses; want a reply only when not answered, 1 response", answered, r.Has(), r.Responses)
		}
	}
}
