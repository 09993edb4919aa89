package checks_test

import (
	"bytes"
	"flag"
	"fmt"
	"github.com/tidwall/gjson"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
	"golang.org/x/tools/txtar"
)

// A case file is a txtar archive:
//
//	-- meta --      key: value lines (all optional)
//	                transport: http|stdio (default http)
//	                version: 2026-07-28 (default: inferred from the request)
//	                contract: strict|spec (default strict)
//	                method: GET (HTTP method of the request; default POST)
//	                facts: {…} (what the server declared in the run, the
//	                       transcript form: protocolVersion, supportedVersions,
//	                       capabilities, tools, toolsListed)
//	                expect-…: the fixture override vocabulary (see expect.Override)
//	                secret: Name: value (a --header value of a live run)
//	                status: 400 (HTTP status of the reply; default 200)
//	                no-reply: true (nothing came back)
//	                malformed: cause (the reply was no HTTP/1.1 message)
//	                request-header: Name: value (repeatable)
//	                reply-header: Name: value (repeatable; default Content-Type: application/json on HTTP)
//	                no-content-type: true (no default Content-Type)
//	                cut: true (the checker cut the reply off: a stream held open)
//	                ended: true (the server closed the event stream)
//	                held-open: true (the stream carried its response and was still open when the checker stopped reading)
//	                offered: ["tok"] (stdio: the progress tokens the run had offered)
//	                log-floor: error (beside offered: the lowest log level a request on the pipe had set)
//	                listens: ["L1"] (beside offered: the listen requests sent on the pipe)
//	                unsent: ["x"] (stdio: ids of lines naming no request the run wrote)
//	                skips: ID… / passes: ID… (checks that must skip / pass, which want cannot tell apart)
//	                again: [7] (stdio: ids of lines naming a request already answered)
//	                answered: true (stdio: the request's response came in an earlier exchange)
//	                exited: true / lingered: true (stdio, method: EOF: the server exited within
//	                       the grace after its stdin closed / still ran when it ran out)
//	                session-live: true (a GET answered 404 in the run's session, after which
//	                       a ping in that session was served)
//	-- request --   the raw request body (trailing newline dropped)
//	-- reply --     the raw reply body; on stdio, one message per line
//	-- want --      one finding per line: CHECKID fail|warn PATH
//
// Unexpected findings and missing ones both fail the test, as in
// analysistest: a case with an empty want asserts the reply conforms.
type testCase struct {
	name     string
	ex       envelope.Exchange
	contract *envelope.Contract
	want     []string
	facts    *expect.Facts    // what the run learned, as a live run knows it
	override *expect.Override // the fixture's, as a live run applies it
	secrets  []envelope.Secret
	// skips are checks that must skip (a skip is no finding, so want
	// cannot tell it from a pass).
	skips []string
	// passes are checks that must pass, not skip: a check that judged
	// the reply and found it right.
	passes []string
	// cites: "CHECK PATH RULE…", the rules a finding names in its own
	// words (for the coverage table), where a case pins them.
	cites []string
}

var caseFile = flag.String("case", "", "run only the case files matching this glob")

func loadCases(t *testing.T) []testCase {
	t.Helper()
	glob := "*.txtar"
	if *caseFile != "" {
		glob = *caseFile
	}
	files, err := filepath.Glob(filepath.Join("testdata", glob))
	if err != nil || len(files) == 0 {
		t.Fatalf("no case files in testdata (%v)", err)
	}
	var out []testCase
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "client_") {
			continue // a client's traffic, not an exchange: client_test.go
		}
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, parseCase(t, f, ar))
	}
	return out
}

func parseCase(t *testing.T, file string, ar *txtar.Archive) testCase {
	t.Helper()
	tc := testCase{name: filepath.Base(file), contract: envelope.Strict(), override: &expect.Override{}}
	tc.ex = envelope.Exchange{Transport: envelope.HTTP, Request: envelope.Request{Header: http.Header{}}}
	resp := &envelope.Response{Status: 200, Header: http.Header{}}
	var replyBody []byte
	noContentType := false
	seen := map[string]bool{}
	for _, f := range ar.Files {
		if seen[f.Name] {
			t.Fatalf("%s: section %q twice", file, f.Name)
		}
		seen[f.Name] = true
		data := bytes.TrimSuffix(f.Data, []byte("\n"))
		switch f.Name {
		case "meta":
			for i, line := range strings.Split(string(data), "\n") {
				if strings.TrimSpace(line) == "" {
					continue
				}
				k, v, ok := strings.Cut(line, ":")
				if !ok {
					t.Fatalf("%s: meta line %d: want key: value", file, i+1)
				}
				v = strings.TrimSpace(v)
				switch k {
				case "transport":
					tc.ex.Transport = v
				case "version":
					tc.ex.Version = v
				case "contract":
					c, err := envelope.LoadContract(v)
					if err != nil {
						t.Fatal(err)
					}
					tc.contract = c
				case "method":
					tc.ex.Request.Method = v
				case "facts":
					f, err := expect.ParseFacts([]byte(v))
					if err != nil {
						t.Fatalf("%s: facts: %v", file, err)
					}
					tc.facts = f
				case "secret":
					sk, sv, _ := strings.Cut(v, ":")
					tc.secrets = append(tc.secrets, envelope.Secret{Name: strings.TrimSpace(sk), Value: strings.TrimSpace(sv)})
				case "status":
					n, err := strconv.Atoi(v)
					if err != nil {
						t.Fatalf("%s: status: %v", file, err)
					}
					resp.Status = n
				case "resumed":
					n, err := strconv.Atoi(v)
					if err != nil {
						t.Fatalf("%s: resumed: %v", file, err)
					}
					resp.Resumed = n
				case "resume-refused":
					// The last GET meant to resume the stream was refused.
					resp.ResumeRefused = v == "true"
				case "log-floor":
					// The lowest log level a request on the pipe had set
					// (beside offered).
					tc.ex.LogFloor = v
				case "listens":
					tc.ex.Listens = []string{}
					for _, id := range gjson.Parse(v).Array() {
						tc.ex.Listens = append(tc.ex.Listens, id.Raw)
					}
				case "unsent", "again", "copies":
					ids := gjson.Parse(v)
					if !ids.IsArray() {
						t.Fatalf("%s: %s: want a JSON array of ids", file, k)
					}
					list := map[string]*[]string{"unsent": &resp.Unsent, "again": &resp.Again, "copies": &resp.Copies}[k]
					for _, id := range ids.Array() {
						*list = append(*list, id.Raw)
					}
				case "offered":
					toks := gjson.Parse(v)
					if !toks.IsArray() {
						t.Fatalf("%s: offered: want a JSON array of tokens", file)
					}
					tc.ex.Offered = []string{}
					for _, tok := range toks.Array() {
						tc.ex.Offered = append(tc.ex.Offered, tok.Raw)
					}
				case "answered":
					resp.Answered = v == "true"
				case "exited":
					tc.ex.Exited = v == "true"
				case "lingered":
					tc.ex.Lingered = v == "true"
				case "session-live":
					tc.ex.SessionLive = v == "true"
				case "ended":
					// The server closed the event stream, read to its end.
					resp.Ended = v == "true"
				case "truncated":
					// The checker stopped reading at its own bound (with
					// the failure that names it).
					resp.Truncated = v == "true"
				case "held-open":
					resp.HeldOpen = v == "true"
				case "no-content-type":
					// The reply carries no Content-Type at all (else an
					// HTTP body gets application/json).
					noContentType = v == "true"
				case "cut":
					// The reply was cut off by the checker (its look at a
					// stream ended while the server held it open).
					resp.Cut = v == "true"
				case "no-reply":
					resp = nil
				case "skips":
					tc.skips = append(tc.skips, strings.Fields(v)...)
				case "passes":
					tc.passes = append(tc.passes, strings.Fields(v)...)
				case "failure":
					tc.ex.Failure = v
				case "died":
					tc.ex.Died = v
				case "malformed":
					// The reply was no HTTP message: none came to judge.
					tc.ex.Malformed, resp = v, nil
				case "request-header", "reply-header":
					hk, hv, _ := strings.Cut(v, ":")
					h := tc.ex.Request.Header
					if k == "reply-header" {
						h = resp.Header
					}
					h.Add(strings.TrimSpace(hk), unescape(strings.TrimSpace(hv)))
				default:
					if !expect.IsKey(k) {
						t.Fatalf("%s: unknown meta key %q", file, k)
					}
					if err := tc.override.Set(k, v); err != nil {
						t.Fatalf("%s: %s: %v", file, k, err)
					}
				}
			}
		case "request":
			tc.ex.Request.Body = unescapeBytes(data)
		case "reply":
			// SSE events end in a blank line: keep the body's end as written.
			replyBody = unescapeBytes(f.Data)
		case "want":
			for _, line := range strings.Split(string(data), "\n") {
				if line = strings.TrimSpace(line); line != "" {
					tc.want = append(tc.want, line)
				}
			}
		case "cites":
			for _, line := range strings.Split(string(data), "\n") {
				if line = strings.TrimSpace(line); line != "" {
					tc.cites = append(tc.cites, line)
				}
			}
		default:
			t.Fatalf("%s: unknown section %q", file, f.Name)
		}
	}
	if !seen["request"] || !seen["want"] {
		t.Fatalf("%s: needs request and want sections", file)
	}
	if resp != nil {
		if tc.ex.Transport == envelope.Stdio {
			resp.Status, resp.Header = 0, nil
			// Each line of stdout is read, a blank one too (as the
			// transport reads it); the text after the last newline is a
			// line only if it holds something.
			lines := bytes.Split(replyBody, []byte("\n"))
			if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
				lines = lines[:len(lines)-1]
			}
			for i, l := range lines {
				// (The transport drops a CR before the LF, as here.)
				lines[i] = bytes.TrimSuffix(l, []byte("\r"))
			}
			// As the transport reads stdout: a value over several lines
			// is one message.
			resp.Messages = append([][]byte{}, envelope.Rejoin(lines)...)
		} else {
			if resp.Header.Get("Content-Type") == "" && len(replyBody) > 0 && !noContentType {
				resp.Header.Set("Content-Type", "application/json")
			}
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				replyBody = bytes.TrimSuffix(replyBody, []byte("\n"))
			}
			resp.Body = replyBody
		}
		tc.ex.Response = resp
	}
	return tc
}

// unescape expands \xNN so cases can hold invalid UTF-8 and control bytes.
var hexEsc = regexp.MustCompile(`\\x([0-9a-fA-F]{2})`)

func unescape(s string) string { return string(unescapeBytes([]byte(s))) }

func unescapeBytes(b []byte) []byte {
	return hexEsc.ReplaceAllFunc(b, func(m []byte) []byte {
		n, _ := strconv.ParseUint(string(m[2:]), 16, 8)
		return []byte{byte(n)}
	})
}

// schemas is shared by every case: compiled once per version, as in a run.
var schemas = checks.ProtocolSchemas(schema.NewRegistry())

// input builds what a live run would judge: the expectation from the
// request, the run's facts and the fixture's override, in one call.
func input(tc testCase, ex *envelope.Exchange) checks.Input {
	return checks.Input{Fixture: tc.name, Exchange: ex, Contract: tc.contract,
		Expect: expect.Build(ex, tc.facts, tc.override), Schemas: schemas, Secrets: tc.secrets}
}

func findings(vs []checks.Verdict) []string {
	var got []string
	for _, v := range vs {
		for _, f := range v.Findings {
			got = append(got, fmt.Sprintf("%s %s %s", v.Check.ID, f.Status, f.Path))
		}
		if v.Status == checks.StatusError {
			got = append(got, fmt.Sprintf("%s error %s", v.Check.ID, v.Reason))
		}
	}
	slices.Sort(got)
	return slices.Compact(got)
}

func TestCases(t *testing.T) {
	for _, tc := range loadCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			ex := tc.ex
			vs := checks.Judge(input(tc, &ex), checks.All())
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if diff := cmp.Diff(want, findings(vs)); diff != "" {
				t.Errorf("findings mismatch (-want +got):\n%s", diff)
				for _, v := range vs {
					for _, f := range v.Findings {
						t.Logf("%s %s %s: %s", v.Check.ID, f.Status, f.Path, f.Message)
					}
				}
			}
			for _, c := range tc.cites {
				check, path, _ := strings.Cut(c, " ")
				path, want, _ := strings.Cut(path, " ")
				var got []string
				for _, v := range vs {
					for _, f := range v.Findings {
						if v.Check.ID == check && f.Path == path {
							got = append(got, strings.Join(f.Rules(), " "))
						}
					}
				}
				if diff := cmp.Diff([]string{want}, got); diff != "" {
					t.Errorf("%s %s: rules the finding names (-want +got):\n%s", check, path, diff)
				}
			}
			for _, id := range tc.skips {
				i := slices.IndexFunc(vs, func(v checks.Verdict) bool { return v.Check.ID == id })
				if i < 0 || vs[i].Status != checks.StatusSkip {
					t.Errorf("%s: want a skip, got %v", id, vs[max(i, 0)].Status)
				}
			}
			for _, id := range tc.passes {
				i := slices.IndexFunc(vs, func(v checks.Verdict) bool { return v.Check.ID == id })
				if i < 0 || vs[i].Status != checks.StatusPass {
					t.Errorf("%s: want a pass, got %v", id, vs[max(i, 0)].Status)
				}
			}
			for _, v := range vs {
				for _, f := range v.Findings {
					if !utf8.ValidString(f.Message) || strings.ContainsAny(f.Message, "\r\n\x1b") {
						t.Errorf("%s: finding message is not one clean line: %q", v.Check.ID, f.Message)
					}
				}
			}
		})
	}
}

// TestEveryCheckFailsAndPasses: a check that no case makes fail could be
// unable to fail; one that no case passes could be unable to pass.
func TestEveryCheckFailsAndPasses(t *testing.T) {
	failed, passed := map[string]bool{}, map[string]bool{}
	for _, tc := range loadCases(t) {
		ex := tc.ex
		for _, v := range checks.Judge(input(tc, &ex), checks.All()) {
			switch v.Status {
			case checks.StatusFail, checks.StatusWarn:
				failed[v.Check.ID] = true
			case checks.StatusPass:
				passed[v.Check.ID] = true
			}
		}
	}
	if *caseFile != "" {
		t.Skip("-case selects a subset")
	}
	for _, c := range checks.All() {
		if c.Area == checks.AreaClient {
			continue // judged on client traffic: TestClientEveryCheckFailsAndPasses
		}
		if !failed[c.ID] {
			t.Errorf("%s: no case makes it fail or warn", c.ID)
		}
		if !passed[c.ID] {
			t.Errorf("%s: no case makes it pass", c.ID)
		}
	}
}

var idPattern = regexp.MustCompile(`^[A-Z]{3,4}[0-9]{4}$`)

func TestRegistry(t *testing.T) {
	all := checks.All()
	areas := checks.Areas()
	for i, c := range all {
		switch {
		case !idPattern.MatchString(c.ID):
			t.Errorf("%s: ID does not match %s", c.ID, idPattern)
		case i > 0 && all[i-1].ID >= c.ID:
			t.Errorf("%s: registry not sorted by ID or ID repeated (after %s)", c.ID, all[i-1].ID)
		case c.Title == "" || len(c.Title) > 60 || strings.HasSuffix(c.Title, "."):
			t.Errorf("%s: title %q: want 1..60 characters, no trailing period", c.ID, c.Title)
		case strings.TrimSpace(c.Doc) == "" || c.SpecRef == "":
			t.Errorf("%s: Doc and SpecRef are required", c.ID)
		case c.Run == nil:
			t.Errorf("%s: Run is nil", c.ID)
		case c.Severity != checks.MUST && c.Severity != checks.SHOULD:
			t.Errorf("%s: severity %q", c.ID, c.Severity)
		case !slices.Contains(areas, c.Area):
			t.Errorf("%s: area %q not in %v", c.ID, c.Area, areas)
		}
		if checks.Lookup(strings.ToLower(c.ID)) != c {
			t.Errorf("%s: Lookup is not case-insensitive", c.ID)
		}
	}
	if checks.Lookup("NOPE0000") != nil {
		t.Error("Lookup of an unknown ID returned a check")
	}
}

// TestVocabularyDocumented keeps ERR3002's Doc and the vocabulary in step.
func TestVocabularyDocumented(t *testing.T) {
	for _, k := range envelope.DataVocabulary() {
		if !strings.Contains(checks.DataKeys.Doc, k) {
			t.Errorf("ERR3002 Doc does not list data key %q", k)
		}
	}
}

// TestHostileReplies: replies built to make a judge slow or crash are
// judged, with the right findings, in time linear in their size.
func TestHostileReplies(t *testing.T) {
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":"x"}}}`)
	judge := func(reply []byte) []string {
		ex := envelope.Exchange{Transport: envelope.HTTP, Version: "2025-06-18",
			Request:  envelope.Request{Header: http.Header{}, Body: req},
			Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: reply}}
		return findings(checks.Judge(checks.Input{Exchange: &ex, Schemas: schemas}, checks.All()))
	}
	// 80,000 distilled entries (about 4 MB): sorted, unique, each with
	// one problem its parent does not restate.
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid arguments for tool add","data":{"errors":[`)
	for i := 0; i < 80000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"location":"/params/arguments/a%06d","problems":["must be integer"]}`, i)
	}
	b.WriteString(`]}}}`)
	if got := judge([]byte(b.String())); len(got) != 0 {
		t.Errorf("80,000 distilled entries drew findings: %v", got)
	}
	// 200,000 levels of nesting: reported, not recursed into.
	deep := []byte(strings.Repeat("[", 200000) + strings.Repeat("]", 200000))
	// The checker's own bound: "could not judge", once, never a fail.
	if got := judge(deep); len(got) != 1 || !strings.HasPrefix(got[0], "RPC1001 error the reply nests deeper") {
		t.Errorf("deep nesting: %v", got)
	}
	// A 400 KB echo of a 400 KB argument.
	long := strings.Repeat("abcdefghij", 40000)
	req = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":"` + long + `"}}}`)
	if got := judge([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad a: ` + long + `"}}`)); !slices.Contains(got, "ERR4001 fail error.message") {
		t.Errorf("long echo: %v", got)
	}
}

func TestSelect(t *testing.T) {
	ids := func(cs []*checks.Check) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	all := ids(checks.All())
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains(drop, id) })
	}
	tests := []struct {
		spec string
		want []string
		err  bool
	}{
		{"", all, false},
		{"all", all, false},
		{"all,-ERR2002", without("ERR2002"), false},
		{"-echo", without("ERR4001", "ERR4002"), false},
		{"RPC1004,ERR4*", []string{"ERR4001", "ERR4002", "RPC1004"}, false},
		{"echo", []string{"ERR4001", "ERR4002"}, false},
		{"rpc1004", []string{"RPC1004"}, false},
		{"NOPE9999", nil, true},
		{"ERR4001,-ERR4001", nil, true},
	}
	for _, tt := range tests {
		got, err := checks.Select(tt.spec)
		if tt.err {
			if err == nil {
				t.Errorf("Select(%q): no error", tt.spec)
			}
			continue
		}
		if err != nil {
			t.Errorf("Select(%q): %v", tt.spec, err)
			continue
		}
		if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
			t.Errorf("Select(%q) (-want +got):\n%s", tt.spec, diff)
		}
	}
}

// A fixture the checker could not send is one error, on RPC1006 (no
// reply could be had), as for an exchange that failed; never on a check
// of the client's, and every other check skips.
func TestNotSent(t *testing.T) {
	var got []string
	for _, v := range checks.NotSent("f", "the server could not be restarted", checks.All()) {
		if v.Status != checks.StatusSkip {
			got = append(got, v.Check.ID+" "+string(v.Status))
		}
	}
	if diff := cmp.Diff([]string{"RPC1006 error"}, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}
