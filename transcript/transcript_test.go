package transcript_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/transcript"
)

// readAll returns a line per record ("line:fixture") or error.
func readAll(t *testing.T, name string, r io.Reader) ([]transcript.Record, []string) {
	t.Helper()
	tr := transcript.NewReader(name, r)
	var recs []transcript.Record
	var errs []string
	for {
		rec, err := tr.Next()
		if err == io.EOF {
			return recs, errs
		}
		var le *transcript.LineError
		if !errors.As(err, &le) && err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		recs = append(recs, rec)
	}
}

func TestReaderReportsLinesAndGoesOn(t *testing.T) {
	f, err := os.Open("testdata/mixed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, errs := readAll(t, "mixed.jsonl", f)
	wantErrs := []string{
		"mixed.jsonl:3: not valid JSON at byte 2: invalid character 'o' in literal null (expecting 'u')",
		`mixed.jsonl:4: "transport" is "smoke", want "http" or "stdio"`,
		`mixed.jsonl:6: "response" is required (null when no reply arrived)`,
		`mixed.jsonl:7: "response.status" is required for http`,
		`mixed.jsonl:9: "protocolVersion" is "1999-01-01", want one of [2026-07-28 2025-11-25 2025-06-18]`,
		`mixed.jsonl:10: "request.body" must be a string (the raw text); use bodyBase64 for bytes`,
		`mixed.jsonl:12: "response.cut" is "yes", want true or false`,
	}
	if diff := cmp.Diff(wantErrs, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Fixture)
	}
	if diff := cmp.Diff([]string{"line:1", "line:5", "named", "line:11"}, got); diff != "" {
		t.Errorf("fixtures (-want +got):\n%s", diff)
	}
	h := recs[0].Exchange.Request.Header
	if h.Get("Mcp-Method") != "tools/list" || len(h.Values("X")) != 2 {
		t.Errorf("headers not read: %v", h)
	}
	stdio := recs[1].Exchange
	if !bytes.Equal(stdio.Request.Body, []byte{0xff}) {
		t.Errorf("bodyBase64 = %q", stdio.Request.Body)
	}
	if diff := cmp.Diff([][]byte{[]byte("line1"), []byte("line2")}, stdio.Response.Messages); diff != "" {
		t.Errorf("stdio messages (-want +got):\n%s", diff)
	}
	if recs[2].Exchange.Version != "2026-07-28" || recs[2].Exchange.Response != nil {
		t.Errorf("named record: %+v", recs[2].Exchange)
	}
}

func TestReaderSkipsOverlongLine(t *testing.T) {
	in := `{"transport":"http","request":{"body":"` + strings.Repeat("x", transcript.MaxLine) + `"},"response":null}` + "\n" +
		`{"transport":"http","request":{"body":"ok"},"response":null}` + "\n"
	recs, errs := readAll(t, "big", strings.NewReader(in))
	if len(errs) != 1 || !strings.Contains(errs[0], "big:1: line exceeds") {
		t.Errorf("errors = %v", errs)
	}
	if len(recs) != 1 || recs[0].Line != 2 {
		t.Errorf("records = %+v", recs)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	ex := envelope.Exchange{Transport: envelope.HTTP, Version: "2025-11-25", Failure: "reply exceeds 6 bytes", SessionLive: true,
		Request:  envelope.Request{Header: http.Header{"Mcp-Method": {"tools/list"}}, Body: []byte("{\"a\":\"\xff\"}")},
		Response: &envelope.Response{Status: 400, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"x":1`), Cut: true, Resumed: 2, Ended: true, HeldOpen: true, Truncated: true, ResumeRefused: true}}
	var buf bytes.Buffer
	if err := transcript.Write(&buf, "probe", &ex, nil); err != nil {
		t.Fatal(err)
	}
	recs, errs := readAll(t, "rt", &buf)
	if len(errs) != 0 || len(recs) != 1 {
		t.Fatalf("errs %v recs %d", errs, len(recs))
	}
	if diff := cmp.Diff(ex, recs[0].Exchange); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestOfferedRoundTrip: an exchange the run did not judge says why; a
// stdio exchange carries the progress tokens its
// run had offered (an empty list too: none was), and one that says
// nothing reads back as not known; a list elsewhere or of other values
// is refused with the line.
func TestOfferedRoundTrip(t *testing.T) {
	for _, offered := range [][]string{nil, {}, {`"wymcp-3"`, `7`, `"a\u003cb"`}} {
		ex := envelope.Exchange{Transport: envelope.Stdio, Version: "2025-11-25", Offered: offered,
			Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
			Response: &envelope.Response{Body: []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"), Messages: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}}}
		var buf bytes.Buffer
		if err := transcript.Write(&buf, "ping", &ex, nil); err != nil {
			t.Fatal(err)
		}
		recs, errs := readAll(t, "rt", &buf)
		if len(errs) != 0 || len(recs) != 1 {
			t.Fatalf("errs %v recs %d", errs, len(recs))
		}
		if got := recs[0].Exchange.Offered; got == nil != (offered == nil) || !slices.Equal(got, offered) {
			t.Errorf("offered %#v read back as %#v", offered, got)
		}
	}
	// What else the pipe's requests asked for goes with the tokens.
	ex := envelope.Exchange{Transport: envelope.Stdio, Offered: []string{}, LogFloor: "error", Listens: []string{`"L1"`, `4`},
		Request: envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}}
	var lbuf bytes.Buffer
	if err := transcript.Write(&lbuf, "ping", &ex, nil); err != nil {
		t.Fatal(err)
	}
	if recs, errs := readAll(t, "la", &lbuf); len(errs) != 0 || len(recs) != 1 || recs[0].Exchange.LogFloor != "error" || !slices.Equal(recs[0].Exchange.Listens, ex.Listens) {
		t.Errorf("logFloor and listens read back as %+v, %v", recs, errs)
	}
	// A recording made before the level was recorded says only that one
	// was asked: any may have been.
	before := `{"transport":"stdio","offered":[],"logAsked":true,"listens":[],"request":{"body":"{}"},"response":null}` + "\n"
	if recs, errs := readAll(t, "before", strings.NewReader(before)); len(errs) != 0 || len(recs) != 1 || recs[0].Exchange.LogFloor != "debug" {
		t.Errorf("logAsked without logFloor read back as %+v, %v", recs, errs)
	}
	for _, bad := range []string{`"logAsked":false,"logFloor":"error"`, `"logAsked":true,"logFloor":"loud"`, `"logAsked":true,"logFloor":3`} {
		line := `{"transport":"stdio","offered":[],` + bad + `,"listens":[],"request":{"body":"{}"},"response":null}` + "\n"
		if recs, errs := readAll(t, "bad", strings.NewReader(line)); len(errs) != 1 || len(recs) != 0 {
			t.Errorf("%s read back as %+v, %v; want a line error", bad, recs, errs)
		}
	}
	// None asked is written as such, and read back as known; a record
	// without them (made before they were recorded) reads as not known.
	ex.LogFloor, ex.Listens = "", []string{}
	lbuf.Reset()
	if err := transcript.Write(&lbuf, "ping", &ex, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lbuf.String(), `"logAsked":false,"listens":[]`) {
		t.Errorf("none asked written as %s", lbuf.String())
	}
	if recs, errs := readAll(t, "la", &lbuf); len(errs) != 0 || len(recs) != 1 || recs[0].Exchange.Listens == nil || recs[0].Exchange.LogFloor != "" {
		t.Errorf("none asked read back as %+v, %v", recs, errs)
	}
	old := `{"transport":"stdio","offered":[],"request":{"body":"{}"},"response":null}` + "\n"
	if recs, errs := readAll(t, "old", strings.NewReader(old)); len(errs) != 0 || len(recs) != 1 || recs[0].Exchange.Listens != nil {
		t.Errorf("an older record read back as %+v, %v", recs, errs)
	}
	var buf bytes.Buffer
	ex = envelope.Exchange{Transport: envelope.HTTP, Request: envelope.Request{Body: []byte("{}")}}
	if err := transcript.WriteUnjudged(&buf, "negotiate/initialize", &ex, nil, "no version negotiated"); err != nil {
		t.Fatal(err)
	}
	recs, errs := readAll(t, "uj", &buf)
	if len(errs) != 0 || len(recs) != 1 || recs[0].Unjudged != "no version negotiated" {
		t.Fatalf("unjudged record read back as %+v, %v", recs, errs)
	}
	in := `{"transport":"http","unjudged":"","request":{"body":""},"response":null}` + "\n" +
		`{"transport":"http","offered":[],"listens":[],"request":{"body":""},"response":null}` + "\n" +
		`{"transport":"stdio","offered":"a","request":{"body":""},"response":null}` + "\n" +
		`{"transport":"stdio","offered":[{"a":1}],"request":{"body":""},"response":null}` + "\n" +
		`{"transport":"stdio","offered":[1.5],"request":{"body":""},"response":null}` + "\n" +
		`{"transport":"stdio","logAsked":true,"request":{"body":""},"response":null}` + "\n" +
		`{"transport":"stdio","offered":[],"listens":[{}],"request":{"body":""},"response":null}` + "\n"
	_, errs = readAll(t, "of", strings.NewReader(in))
	want := []string{
		`of:1: "unjudged" is string, want why the run did not judge the exchange`,
		`of:2: "logAsked", "logFloor" and "listens" belong to stdio exchanges only`,
		`of:3: "offered" is string, want an array of progress tokens`,
		`of:4: "offered" holds object, want progress tokens (strings or integers)`,
		`of:5: "offered" holds number, want progress tokens (strings or integers)`,
		`of:6: "logAsked", "logFloor" and "listens" belong beside "offered" only`,
		`of:7: "listens" holds object, want request ids (strings or integers)`,
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// A transcript without facts lines learns them from its traffic, as a
// relay does: each exchange is judged with what the ones before it
// declared. Its first facts line ends the learning: recorded facts are
// what the run knew, and the traffic after them teaches nothing more.
func TestReaderLearnsFactsUntilRecorded(t *testing.T) {
	f, err := os.Open("testdata/learn.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, errs := readAll(t, "learn.jsonl", f)
	if len(errs) > 0 || len(recs) != 6 {
		t.Fatalf("read %d records, errors %v", len(recs), errs)
	}
	type seen struct {
		Fixture, Version string
		Session, Tools   bool
	}
	var got []seen
	for _, r := range recs {
		s := seen{Fixture: r.Fixture}
		if r.Facts != nil {
			s.Version, s.Session, s.Tools = r.Facts.Version, r.Facts.Session, r.Facts.Tool("add") != nil
		}
		got = append(got, s)
	}
	want := []seen{
		{Fixture: "before"},
		{Fixture: "initialize"},
		{Fixture: "list", Version: "2025-11-25", Session: true},
		{Fixture: "learned", Version: "2025-11-25", Session: true, Tools: true},
		{Fixture: "recorded", Version: "2025-06-18"},
		{Fixture: "still-recorded", Version: "2025-06-18"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("facts per record (-want +got):\n%s", diff)
	}
}

// A stdio reply's messages come back as the server wrote them, an empty
// line among them (the live run judged it as a message), wherever it
// stands, and a message the server pretty-printed over several lines
// (the live transport read it whole); and a body written by hand, ending in a newline or not, with
// CRLF or LF, reads as its lines.
func TestStdioMessagesRoundTrip(t *testing.T) {
	for _, msgs := range [][]string{{`{"a":1}`}, {"", `{"a":1}`}, {"{\n  \"a\": 1\n}", `{"b":2}`}, {`{"a":1}`, ""}, {`{"a":1}`, "", `{"b":2}`}, {""}, {}} {
		r := &envelope.Response{Body: []byte("ignored when messages are set")}
		for _, m := range msgs {
			r.Messages = append(r.Messages, []byte(m))
		}
		if r.Messages == nil {
			r.Messages = [][]byte{}
		}
		ex := envelope.Exchange{Transport: envelope.Stdio, Request: envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}, Response: r}
		var buf bytes.Buffer
		if err := transcript.Write(&buf, "stdio", &ex, nil); err != nil {
			t.Fatal(err)
		}
		recs, errs := readAll(t, "rt", &buf)
		if len(errs) != 0 || len(recs) != 1 {
			t.Fatalf("%q: errs %v recs %d", msgs, errs, len(recs))
		}
		var got []string
		for _, m := range recs[0].Exchange.Response.Messages {
			got = append(got, string(m))
		}
		if diff := cmp.Diff(msgs, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("messages %q (-want +got):\n%s", msgs, diff)
		}
	}
	for body, want := range map[string][]string{
		"{\"a\":1}\n{\"b\":2}":       {`{"a":1}`, `{"b":2}`},
		"{\"a\":1}\r\n{\"b\":2}\r\n": {`{"a":1}`, `{"b":2}`},
		"{\"a\":1}\n\n{\"b\":2}\n":   {`{"a":1}`, "", `{"b":2}`},
	} {
		line, _ := json.Marshal(map[string]any{"transport": "stdio", "request": map[string]string{"body": `{"jsonrpc":"2.0","id":1,"method":"ping"}`}, "response": map[string]string{"body": body}})
		recs, errs := readAll(t, "hand", bytes.NewReader(line))
		if len(errs) != 0 || len(recs) != 1 {
			t.Fatalf("%q: errs %v", body, errs)
		}
		var got []string
		for _, m := range recs[0].Exchange.Response.Messages {
			got = append(got, string(m))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("body %q (-want +got):\n%s", body, diff)
		}
	}
}

// TestRunLinesAndMarks: the run line and the marks of an exchange (its
// secrets redacted, unreported) survive a round trip; a second run line
// with other settings, as where two recordings were joined, is an error
// of its line, and the rest is read.
func TestRunLinesAndMarks(t *testing.T) {
	var buf bytes.Buffer
	run := transcript.Run{Contract: "spec", Schema: "builtin", Checks: "RPC*"}
	ex := envelope.Exchange{Transport: envelope.Stdio, Request: envelope.Request{Body: []byte(`{}`)}, Redacted: []string{"X-Api-Key"}}
	if err := transcript.WriteRun(&buf, run); err != nil {
		t.Fatal(err)
	}
	if err := transcript.WriteUnreported(&buf, "a", &ex, nil); err != nil {
		t.Fatal(err)
	}
	transcript.WriteRun(&buf, run) // the same again: no fault
	transcript.WriteRun(&buf, transcript.Run{Contract: "strict"})
	transcript.Write(&buf, "b", &ex, nil)
	got, err := transcript.ReadRun(bytes.NewReader(buf.Bytes()))
	if err != nil || got == nil || *got != run {
		t.Errorf("ReadRun = %+v, %v; want %+v", got, err, run)
	}
	recs, errs := readAll(t, "joined", &buf)
	if len(recs) != 2 || !recs[0].Unreported || recs[1].Unreported || !slices.Equal(recs[0].Exchange.Redacted, []string{"X-Api-Key"}) {
		t.Errorf("records %+v", recs)
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "joined:4:") || !strings.Contains(errs[0], "recordings joined") {
		t.Errorf("errors %q, want the fourth line's", errs)
	}
}

// TestReaderSkipsByteOrderMark: a transcript saved with a byte order mark
// (line 1), or files so saved joined with cat (line 3), reads as without
// one; the run line behind the mark is still the run line.
func TestReaderSkipsByteOrderMark(t *testing.T) {
	raw, err := os.ReadFile("testdata/bom.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	recs, errs := readAll(t, "bom.jsonl", bytes.NewReader(raw))
	if diff := cmp.Diff([]string{"bom.jsonl:4: not valid JSON at byte 2: invalid character 'o' in literal null (expecting 'u')"}, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Fixture)
	}
	if diff := cmp.Diff([]string{"first", "joined"}, got); diff != "" {
		t.Errorf("fixtures (-want +got):\n%s", diff)
	}
	run, err := transcript.ReadRun(bytes.NewReader(raw))
	if err != nil || run == nil || run.Contract != "spec" || run.Schema != "none" {
		t.Errorf("ReadRun = %+v, %v; want the run line behind the mark", run, err)
	}
}

// TestReaderReadsKindsAsJSON: a run, facts or traffic line is known by
// its member's name as JSON reads it, whatever space stands around it or
// escapes spell it (another recorder's, or a hand's); blank lines before
// the run line leave it the transcript's run line.
func TestReaderReadsKindsAsJSON(t *testing.T) {
	raw, err := os.ReadFile("testdata/spaced.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	run, err := transcript.ReadRun(bytes.NewReader(raw))
	if err != nil || run == nil || run.Contract != "spec" || run.Schema != "none" {
		t.Errorf("ReadRun = %+v, %v; want the run line after the blank ones", run, err)
	}
	recs, errs := readAll(t, "spaced.jsonl", bytes.NewReader(raw))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	type seen struct {
		Fixture, Version string
		Traffic          bool
	}
	var got []seen
	for _, r := range recs {
		s := seen{Fixture: r.Fixture, Traffic: r.Traffic != nil}
		if r.Facts != nil {
			s.Version = r.Facts.Version
		}
		got = append(got, s)
	}
	want := []seen{{Fixture: "first", Version: "2025-11-25"}, {Version: "2025-11-25", Traffic: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

// TestReaderSaysWhereJSONBreaks: a line that is no JSON is named with the
// byte where it breaks and why, control characters quoted escaped; a
// truncated line (a recording cut short, a 50 MB line copied in part)
// says so; a byte that is no UTF-8 is named as a byte, inside a string
// too (line 4: see testdata/input/utf8.txtar); a second byte order mark
// is named as one, where the first is read past (line 8).
func TestReaderSaysWhereJSONBreaks(t *testing.T) {
	good := `{"transport":"http","request":{"body":"x"},"response":null}`
	in := strings.Join([]string{
		good[:30],
		`{"transport":"http","request":{"body":"a` + "\x1b" + `"}}`,
		"\x00\x00",
		`{"transport":"http","request":{"body":"` + "\xff\xfe" + `"},"response":null}`,
		`{"transport":"http",,}`,
		"\xff" + good,
		"\ufeff\ufeff" + good,
		"\ufeff" + good,
		good,
	}, "\n")
	in = strings.NewReplacer(`\x1b`, "\x1b", `\x00`, "\x00", `\xff`, "\xff", `\xfe`, "\xfe").Replace(in)
	recs, errs := readAll(t, "t.jsonl", strings.NewReader(in))
	want := []string{
		"t.jsonl:1: not valid JSON: the line ends before its value does (30 bytes; truncated?)",
		`t.jsonl:2: not valid JSON at byte 41: invalid character '\x1b' in string literal`,
		`t.jsonl:3: not valid JSON at byte 1: invalid character '\x00' looking for beginning of value`,
		"t.jsonl:4: at byte 40: byte 0xff, which is no UTF-8 (a transcript is UTF-8 text, a body that is not goes in bodyBase64: was the file re-encoded?)",
		"t.jsonl:5: not valid JSON at byte 21: invalid character ',' looking for beginning of object key string",
		"t.jsonl:6: not valid JSON at byte 1: byte 0xff, which is no UTF-8",
		"t.jsonl:7: not valid JSON at byte 1: a byte order mark (U+FEFF) outside a string; one is read past at the start of a line, no more",
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	var lines []int
	for _, r := range recs {
		lines = append(lines, r.Line)
	}
	if diff := cmp.Diff([]int{8, 9}, lines); diff != "" {
		t.Errorf("records' lines (-want +got):\n%s", diff)
	}
}

// TestReaderNamesUnknownLineKinds: a line of a kind a newer recorder
// writes ({"kind":{…}}) is named as such, not as an exchange without a
// transport; the lines after it are read.
func TestReaderNamesUnknownLineKinds(t *testing.T) {
	in := `{"snapshot":{"v":2}}` + "\n" + `{"fixture":"x","request":{"body":"x"}}` + "\n" +
		`{"transport":"http","request":{"body":"x"},"response":null,"future":{"x":1}}` + "\n"
	recs, errs := readAll(t, "f.jsonl", strings.NewReader(in))
	want := []string{
		`f.jsonl:1: a "snapshot" line, which this checker does not know (a newer recorder's?); it reads exchange, run, facts, traffic and aborted lines`,
		`f.jsonl:2: "transport" is required ("http" or "stdio")`,
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if len(recs) != 1 || recs[0].Line != 3 {
		t.Errorf("records %+v, want line 3's (an unknown member is no error)", recs)
	}
}

// TestReaderNamesBadFacts: a facts line that breaks the facts' form is
// named with its line and the member at fault; the records after it are
// read, and a sound one's sessions reach them.
func TestReaderNamesBadFacts(t *testing.T) {
	ex := `{"transport":"http","request":{"headers":{"Mcp-Session-Id":"s1"},"body":"{}"},"response":null}`
	in := strings.Join([]string{
		`{"facts":{"protocolVersion":"1999-01-01"}}`,
		`{"facts":{"bySession":{"s1":{}}}}`,
		`{"facts":{"bySession":[{"protocolVersion":"2025-11-25"}]}}`,
		`{"facts":{"bySession":[{"session":"s1","protocolVersion":"2099-01-01"}]}}`,
		`{"facts":{"bySession":[{"session":"s1","capabilities":[]}]}}`,
		`{"facts":{"protocolVersion":"2025-11-25","bySession":[{"session":"s1","protocolVersion":"2025-06-18","capabilities":{"logging":{}}}]}}`,
		ex,
	}, "\n")
	recs, errs := readAll(t, "f.jsonl", strings.NewReader(in))
	want := []string{
		`f.jsonl:1: facts.protocolVersion is "1999-01-01", want one of [2026-07-28 2025-11-25 2025-06-18]`,
		"f.jsonl:2: facts.bySession must be an array of objects",
		"f.jsonl:3: facts.bySession[0] must be an object with a string session",
		`f.jsonl:4: facts.bySession[0].protocolVersion is "2099-01-01", want one of [2026-07-28 2025-11-25 2025-06-18]`,
		"f.jsonl:5: facts.bySession[0].capabilities must be an object",
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if len(recs) != 1 || recs[0].Line != 7 || recs[0].Facts == nil {
		t.Fatalf("records %+v, want line 7's with the facts of line 6", recs)
	}
	var line bytes.Buffer
	if err := transcript.WriteFacts(&line, recs[0].Facts); err != nil {
		t.Fatal(err)
	}
	if got := line.String(); !strings.Contains(got, `"bySession":[{"session":"s1","protocolVersion":"2025-06-18","capabilities":{"logging":{}}}]`) {
		t.Errorf("facts written again as %s, want line 6's bySession kept", got)
	}
}

// TestReaderNotSent: a fixture the run could not send is read with its
// failure and no response; "notSent" beside a response, or without the
// failure that says why, is refused by name, and the next line read.
func TestReaderNotSent(t *testing.T) {
	in := strings.Join([]string{
		`{"transport":"stdio","fixture":"a","notSent":true,"failure":"the run's deadline passed before this fixture","request":{},"response":null}`,
		`{"transport":"stdio","fixture":"b","notSent":true,"failure":"x","request":{},"response":{"body":"{}"}}`,
		`{"transport":"stdio","fixture":"c","notSent":true,"request":{},"response":null}`,
		`{"transport":"stdio","fixture":"d","notSent":"yes","failure":"x","request":{},"response":null}`,
	}, "\n")
	recs, errs := readAll(t, "n.jsonl", strings.NewReader(in))
	want := []string{
		`n.jsonl:2: "notSent" goes with a "failure" saying why and "response": null`,
		`n.jsonl:3: "notSent" goes with a "failure" saying why and "response": null`,
		`n.jsonl:4: "notSent" is "yes", want true or false`,
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if len(recs) != 1 || !recs[0].Exchange.NotSent || recs[0].Exchange.Failure == "" {
		t.Errorf("records %+v, want line 1's, not sent", recs)
	}
}

// TestStraysRoundTrip: what a stdio run knew of the stray responses on
// the pipe (ids no request carried, second responses) is written and
// read back, ids compacted; a list on HTTP, not a list, or a null id is
// refused with the line.
func TestStraysRoundTrip(t *testing.T) {
	ex := envelope.Exchange{Transport: envelope.Stdio, Version: "2025-11-25",
		Request: envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		Response: &envelope.Response{Body: []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"), Messages: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
			Unsent: []string{`"x-9"`, `{"a":1}`}, Again: []string{`5`}, Copies: []string{`"c"`}}}
	var buf bytes.Buffer
	if err := transcript.Write(&buf, "ping", &ex, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"unsent":["x-9",{"a":1}],"again":[5],"copies":["c"]}`) {
		t.Errorf("written as %s", buf.String())
	}
	recs, errs := readAll(t, "rt", &buf)
	if len(errs) != 0 || len(recs) != 1 {
		t.Fatalf("errs %v recs %d", errs, len(recs))
	}
	if got, want := recs[0].Exchange.Response, ex.Response; got == nil || !slices.Equal(got.Unsent, want.Unsent) || !slices.Equal(got.Again, want.Again) || !slices.Equal(got.Copies, want.Copies) {
		t.Errorf("unsent %q, again %q and copies %q read back as %+v", want.Unsent, want.Again, want.Copies, got)
	}
	in := `{"transport":"stdio","request":{"body":""},"response":{"body":"","unsent":[ { "a" : 1 } ]}}` + "\n" +
		`{"transport":"http","request":{"body":""},"response":{"status":200,"body":"","unsent":["x"]}}` + "\n" +
		`{"transport":"stdio","request":{"body":""},"response":{"body":"","again":5}}` + "\n" +
		`{"transport":"stdio","request":{"body":""},"response":{"body":"","again":[null]}}` + "\n" +
		`{"transport":"stdio","request":{"body":""},"response":{"body":"","copies":{}}}` + "\n"
	recs, errs = readAll(t, "st", strings.NewReader(in))
	want := []string{
		`st:2: "response.unsent" belongs to stdio exchanges only`,
		`st:3: "response.again" is integer, want an array of response ids`,
		`st:4: "response.again" holds null, want response ids`,
		`st:5: "response.copies" is object, want an array of response ids`,
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if len(recs) != 1 || recs[0].Exchange.Response == nil || !slices.Equal(recs[0].Exchange.Response.Unsent, []string{`{"a":1}`}) {
		t.Errorf("a spaced id read back as %+v", recs)
	}
}

// TestAnsweredRoundTrip: a relay's exchange of a later response to a
// request it had judged already says so ("answered"), and is read back
// so, for lint to judge it as the relay did; a record without it (every
// one written before) reads as not answered; "answered" on HTTP, or not
// a boolean, is refused with the line.
func TestAnsweredRoundTrip(t *testing.T) {
	ex := envelope.Exchange{Transport: envelope.Stdio, Version: "2025-11-25",
		Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		Response: &envelope.Response{Messages: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"result":[]}`)}, Again: []string{`1`}, Answered: true}}
	var buf bytes.Buffer
	if err := transcript.Write(&buf, "ping", &ex, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"again":[1],"answered":true}`) {
		t.Errorf("written as %s", buf.String())
	}
	in := buf.String() +
		`{"transport":"stdio","request":{"body":""},"response":{"body":"","again":[1]}}` + "\n" +
		`{"transport":"http","request":{"body":""},"response":{"status":200,"body":"","answered":true}}` + "\n" +
		`{"transport":"stdio","request":{"body":""},"response":{"body":"","answered":"yes"}}` + "\n"
	recs, errs := readAll(t, "an", strings.NewReader(in))
	want := []string{
		`an:3: "response.answered" belongs to stdio exchanges only`,
		`an:4: "response.answered" is "yes", want true or false`,
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	var got []bool
	for _, r := range recs {
		got = append(got, r.Exchange.Response != nil && r.Exchange.Response.Answered)
	}
	if diff := cmp.Diff([]bool{true, false}, got); diff != "" {
		t.Errorf("answered read back (-want +got):\n%s", diff)
	}
}

// TestMalformedRoundTrip: an HTTP reply that was no HTTP message is
// recorded as such and read back; "malformed" elsewhere, empty, or beside
// a response is refused with the line.
func TestMalformedRoundTrip(t *testing.T) {
	ex := envelope.Exchange{Transport: envelope.HTTP, Malformed: `bad Content-Length "-5"`,
		Request: envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}}
	var buf bytes.Buffer
	if err := transcript.Write(&buf, "ping", &ex, nil); err != nil {
		t.Fatal(err)
	}
	recs, errs := readAll(t, "rt", &buf)
	if len(errs) != 0 || len(recs) != 1 || recs[0].Exchange.Malformed != ex.Malformed || recs[0].Exchange.Response != nil {
		t.Fatalf("read back as %+v, %v", recs, errs)
	}
	in := `{"transport":"stdio","malformed":"x","request":{"body":""},"response":null}` + "\n" +
		`{"transport":"http","malformed":"x","request":{"body":""},"response":{"status":200,"body":""}}` + "\n" +
		`{"transport":"http","malformed":"","request":{"body":""},"response":null}` + "\n"
	_, errs = readAll(t, "mf", strings.NewReader(in))
	want := []string{
		`mf:1: "malformed" belongs to http exchanges with "response": null`,
		`mf:2: "malformed" belongs to http exchanges with "response": null`,
		`mf:3: "malformed" is string, want what made the reply no HTTP message`,
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestTextMembersTyped: "fixture", "failure", "died" and "note" hold
// text. One of another type is an error of its line, never read as
// absent: a "failure" recorded as true passed the gate as an exchange
// that went well (review rev29). null reads as absent, a string as
// itself.
func TestTextMembersTyped(t *testing.T) {
	line := func(member string) string {
		return `{"transport":"stdio",` + member + `"request":{"body":"{}"},"response":null}` + "\n"
	}
	in := line(`"failure":true,`) + line(`"died":["x"],`) + line(`"fixture":1,`) + line(`"note":{},`) +
		line(`"failure":null,`) + line(`"failure":"no response within 1s","fixture":"a/b","note":"n",`)
	recs, errs := readAll(t, "tm", strings.NewReader(in))
	want := []string{
		`tm:1: "failure" is boolean, want a string: what the checker could not do`,
		`tm:2: "died" is array, want a string: how the server died`,
		`tm:3: "fixture" is integer, want a string: the fixture's name`,
		`tm:4: "note" is object, want a string: a note`,
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if len(recs) != 2 || recs[0].Exchange.Failure != "" || recs[1].Exchange.Failure != "no response within 1s" || recs[1].Fixture != "a/b" || recs[1].Exchange.Note != "n" {
		t.Errorf("the sound lines read back as %+v", recs)
	}
}
