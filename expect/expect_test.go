package expect_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

var update = flag.Bool("update", false, "rewrite the want of every case in testdata/expect.json")

// expectCase is one row of testdata/expect.json: a request, optionally
// the facts of the run and a fixture override, and what Build must make
// of it. Bodies may hold \xNN escapes for bytes JSON cannot carry.
type expectCase struct {
	Name      string              `json:"name"`
	Transport string              `json:"transport"`
	Version   string              `json:"version,omitempty"`
	Method    string              `json:"method,omitempty"`
	Headers   map[string][]string `json:"headers,omitempty"`
	Body      string              `json:"body"`
	Facts     json.RawMessage     `json:"facts,omitempty"`
	Override  json.RawMessage     `json:"override,omitempty"`
	Want      want                `json:"want"`
}

// want is the part of an Expectation a case pins; levels are written as
// their names (must, contract, should, open), free ones left out.
type want struct {
	Condition  string   `json:"condition"`
	Version    string   `json:"version"`
	Reply      string   `json:"reply,omitempty"`
	NoReply    string   `json:"noReply,omitempty"`
	Error      string   `json:"error,omitempty"`
	Codes      []int    `json:"codes,omitempty"`
	Code       string   `json:"code,omitempty"`
	AlsoCodes  []int    `json:"alsoCodes,omitempty"`
	AnyCode    bool     `json:"anyCode,omitempty"`
	ReadCodes  []int    `json:"readCodes,omitempty"`
	ReadStatus []int    `json:"readStatus,omitempty"`
	AnyStatus  bool     `json:"anyStatus,omitempty"`
	Status     []int    `json:"status,omitempty"`
	StatusWant string   `json:"statusWant,omitempty"`
	Echo       []string `json:"echo,omitempty"`
	Lost       string   `json:"lost,omitempty"`
	Rounded    string   `json:"rounded,omitempty"`
	Refusal    string   `json:"refusal,omitempty"`
	Output     bool     `json:"outputSchema,omitempty"`
	Quote      string   `json:"quote,omitempty"`
	Empty      string   `json:"emptyContents,omitempty"`
	Stream     bool     `json:"stream,omitempty"`
}

func level(w expect.Want) string {
	if !w.Set() {
		return ""
	}
	return w.Level.String()
}

func summarize(e *expect.Expectation) want {
	w := want{Condition: string(e.Condition), Version: e.Version, Reply: level(e.Reply), NoReply: level(e.NoReply),
		Error: level(e.Error), Codes: e.Codes, Code: level(e.Code), AlsoCodes: e.AlsoCodes, AnyCode: e.AnyCode,
		ReadCodes: e.ReadCodes, ReadStatus: e.ReadStatus, AnyStatus: e.AnyStatus, Status: e.Status,
		StatusWant: level(e.StatusWant), Lost: level(e.ID.Lost), Rounded: level(e.ID.Rounded), Quote: e.Quote,
		Empty: level(e.EmptyContents), Stream: e.Stream}
	for _, id := range e.ID.Echo {
		w.Echo = append(w.Echo, id.Raw)
	}
	if e.Tool != nil {
		w.Refusal, w.Output = level(e.Tool.Refusal), e.Tool.OutputSchema != nil
	}
	return w
}

var hexEsc = regexp.MustCompile(`\\x([0-9a-f]{2})`)

func TestBuild(t *testing.T) {
	raw, err := os.ReadFile("testdata/expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []expectCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for i := range cases {
		c := &cases[i]
		t.Run(c.Name, func(t *testing.T) {
			body := hexEsc.ReplaceAllFunc([]byte(c.Body), func(m []byte) []byte {
				n, _ := strconv.ParseUint(string(m[2:]), 16, 8)
				return []byte{byte(n)}
			})
			ex := &envelope.Exchange{Transport: c.Transport, Version: c.Version,
				Request: envelope.Request{Method: c.Method, Header: http.Header(c.Headers), Body: body}}
			var f *expect.Facts
			if c.Facts != nil {
				if f, err = expect.ParseFacts(c.Facts); err != nil {
					t.Fatal(err)
				}
			}
			var o *expect.Override
			if c.Override != nil {
				if o, err = expect.ParseOverride(c.Override); err != nil {
					t.Fatal(err)
				}
			}
			got := summarize(expect.Build(ex, f, o))
			if *update {
				c.Want = got
				return
			}
			if diff := cmp.Diff(c.Want, got); diff != "" {
				t.Errorf("Build mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if *update {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(cases); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("testdata/expect.json", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOverrideRoundTrip: a transcript carries an override in its JSON
// form; reading it back gives the same lines.
func TestOverrideRoundTrip(t *testing.T) {
	o := &expect.Override{}
	for _, f := range []expect.Field{{"expect-code", "-32602"}, {"expect-error", "should T-TOOL-6"}, {"expect-id", "lenient"}, {"expect-error", "local AMB-19: remote policy"}} {
		if err := o.Set(f.Key, f.Value); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := expect.ParseOverride(raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(o.Fields(), back.Fields()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"expect-nope":"1"}`, `{"expect-code":"x"}`, `{"expect-error":"maybe"}`, `{"expect-error":"local "}`, `{"expect-code":1}`, `[]`} {
		if _, err := expect.ParseOverride([]byte(bad)); err == nil {
			t.Errorf("ParseOverride(%s) accepted it", bad)
		}
	}
}

// TestLearn: the facts a relay learns from traffic: initialize declares
// the version and capabilities, server/discover the versions, a whole
// tools/list the tools; a list asked from a cursor, or one that goes on,
// says nothing of which tools exist; an error declares nothing.
const initOK25 = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`

func TestLearn(t *testing.T) {
	ex := func(req, rep string) *envelope.Exchange {
		return &envelope.Exchange{Transport: envelope.Stdio, Request: envelope.Request{Body: []byte(req)},
			Response: &envelope.Response{Messages: [][]byte{[]byte(rep)}}}
	}
	var f *expect.Facts
	f = f.Learn(ex(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`))
	if f == nil || f.Version != "2025-06-18" || string(f.ClientCapabilities) != `{"roots":{}}` {
		t.Fatalf("initialize: %+v", f)
	}
	if declared, known := f.Declares("tools"); !declared || !known {
		t.Errorf("tools capability not learned")
	}
	// An initialize answered with another version than it asked says the
	// server does not serve the one asked (T-LIFE-2).
	if !f.Declines("2025-11-25") || f.Declines("2025-06-18") {
		t.Errorf("declined versions learned: %v, want [2025-11-25]", f.Declined)
	}
	// A page says its tools exist, with their schemas, but not which
	// others do not: no list is whole, and the facts before it do not
	// change.
	paged := f.Learn(ex(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"c"}}`, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}}`))
	if paged.ToolsListed || paged.Tool("b") == nil || f.Tool("b") != nil {
		t.Errorf("a page asked from a cursor: listed %v, tool b known %v (want false, true; the old facts unchanged)", paged.ToolsListed, paged.Tool("b") != nil)
	}
	paged = paged.Learn(ex(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"n"}}`))
	if paged.ToolsListed || paged.Tool("a") == nil || paged.Tool("b") == nil {
		t.Errorf("a list that goes on: listed %v, tools %v (want both pages' tools, no list whole)", paged.ToolsListed, paged.ToolOrder)
	}
	g := f.Learn(ex(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`))
	if g == f || !g.ToolsListed || g.Tool("a") == nil || f.ToolsListed {
		t.Errorf("a whole list: learned %+v, and the old facts must not change (%+v)", g, f)
	}
	changed := &envelope.Exchange{Transport: envelope.Stdio, Request: envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a"}}`)},
		Response: &envelope.Response{Messages: [][]byte{[]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`), []byte(`{"jsonrpc":"2.0","id":9,"result":{"content":[]}}`)}}}
	if k := g.Learn(changed); k.ToolsListed || k.Tool("a") != nil || !g.ToolsListed {
		t.Errorf("a reply carrying tools/list_changed: learned %+v; the tools must be forgotten, and the old facts kept", k)
	}
	if h := g.Learn(ex(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad"}}`)); h != g {
		t.Error("an error taught something")
	}
	if h := g.Learn(ex(`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":6,"result":{"protocolVersion":"2026-07-28","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)); h != g {
		t.Errorf("an initialize answered 2026-07-28, a version with no initialize, set the session's version: %+v", h)
	}
	if f.Session {
		t.Error("stdio learned a session")
	}
	// Two clients behind one relay, each in its own session, declare
	// different capabilities: a later exchange may be either's, so
	// neither declaration is known, and a third does not settle it.
	a := (*expect.Facts)(nil).Learn(ex(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}}}}`, initOK25))
	b := a.Learn(ex(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`, initOK25))
	c := b.Learn(ex(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}}}}`, initOK25))
	again := a.Learn(ex(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{ "sampling" : {} }}}`, initOK25))
	if string(a.ClientCapabilities) != `{"sampling":{}}` || b.ClientCapabilities != nil || c.ClientCapabilities != nil || string(again.ClientCapabilities) == "" {
		t.Errorf("client capabilities learned: %s, then %s, then %s; the same again: %s", a.ClientCapabilities, b.ClientCapabilities, c.ClientCapabilities, again.ClientCapabilities)
	}
	// Two HTTP sessions given different tool lists (a server that lists
	// tools by the client's capabilities): a later call may be either
	// session's, so the tools are both lists' and no list is whole; one
	// session listing again the same way replaces its list.
	inSession := func(sid, req, rep string) *envelope.Exchange {
		return &envelope.Exchange{Transport: envelope.HTTP, Request: envelope.Request{Body: []byte(req), Header: http.Header{"Mcp-Session-Id": {sid}}},
			Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(rep)}}
	}
	listA := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"sample","inputSchema":{"type":"object"}}]}}`
	listB := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`
	s1 := (*expect.Facts)(nil).Learn(inSession("s1", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, listA))
	s1again := s1.Learn(inSession("s1", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, listB))
	if !s1again.ToolsListed || s1again.Tool("sample") != nil {
		t.Errorf("one session listing again: the new list replaces the old (listed %v, sample %v)", s1again.ToolsListed, s1again.Tool("sample") != nil)
	}
	s2 := s1.Learn(inSession("s2", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, listB))
	if s2.ToolsListed || s2.Tool("sample") == nil || s2.Tool("a") == nil {
		t.Errorf("two sessions, two lists: tools %v, listed %v; want both lists' tools, no list whole", s2.ToolOrder, s2.ToolsListed)
	}
	if s2same := s1.Learn(inSession("s2", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, listA)); !s2same.ToolsListed {
		t.Error("two sessions given the same list: that list is whole")
	}
	// Two sessions listing one name with two schemas (one per client):
	// a call may be either session's, so only what both schemas refuse
	// is surely refused (review rev40).
	strict := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}}]}}`
	loose := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}]}}`
	both := (*expect.Facts)(nil).Learn(inSession("s1", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, strict)).
		Learn(inSession("s2", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, loose))
	if a := both.Tool("a"); a == nil || a.Rejects([]byte(`{}`), "2025-11-25") || !a.Rejects([]byte(`{"x":5}`), "2025-11-25") || both.ToolsListed {
		t.Errorf("two sessions' schemas of one tool: %+v; want {} not surely refused, {\"x\":5} refused, no list whole", a)
	}
	// One list naming a tool twice, differently, is one tool judged as
	// both listings read a call, and a facts line keeps both listings.
	twice := (*expect.Facts)(nil).Learn(ex(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object","required":["x"]},"annotations":{"readOnlyHint":true}},{"name":"a","inputSchema":{"type":"object"}}]}}`))
	line, err := json.Marshal(twice)
	if err != nil {
		t.Fatal(err)
	}
	back, err := expect.ParseFacts(line)
	if err != nil {
		t.Fatal(err)
	}
	// The same listing written again with other spacing is one listing.
	spaced := (*expect.Facts)(nil).Learn(ex(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object","required":["x"]}},{"name": "a", "inputSchema": {"type": "object", "required": ["x"]}}]}}`))
	if a := spaced.Tool("a"); a == nil || len(a.Again) != 0 || !a.Rejects([]byte(`{}`), "2025-11-25") {
		t.Errorf("a tool listed twice alike, spaced otherwise: %+v; want one listing, {} refused", a)
	}
	for _, g := range []*expect.Facts{twice, back} {
		if a := g.Tool("a"); a == nil || len(g.Tools) != 1 || a.ReadOnly || a.Rejects([]byte(`{}`), "2025-11-25") || len(a.Again) != 1 {
			t.Errorf("a tool listed twice, differently: %+v (facts line %s); want one tool, not read-only, {} not surely refused, both listings kept", a, line)
		}
	}
	// A server that speaks only 2025-03-26 is judged as a live run judges
	// it: under 2025-06-18's rules, knowing what it speaks.
	old := (*expect.Facts)(nil).Learn(ex(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`))
	if old == nil || old.Version != envelope.V20250618 || old.Speaks() != envelope.V20250326 {
		t.Errorf("initialize answered 2025-03-26: learned %+v", old)
	}
	if back := old.Learn(ex(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)); back.Speaks() != envelope.V20251125 {
		t.Errorf("a later initialize answered 2025-11-25 still speaks %s", back.Speaks())
	}
	esc := (*expect.Facts)(nil).Learn(ex(`{"jsonrpc":"2.0","id":1,"method":"initi\u0061lize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`))
	if esc == nil || esc.Version != "2025-11-25" {
		t.Errorf("an initialize whose method is spelled with an escape taught nothing: %+v", esc)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`
	initOK := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	for _, sid := range []string{"s-1", ""} {
		h := &envelope.Exchange{Transport: envelope.HTTP, Request: envelope.Request{Body: []byte(init)},
			Response: &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(initOK)}}
		if sid != "" {
			h.Response.Header.Set("Mcp-Session-Id", sid)
		}
		if s := (*expect.Facts)(nil).Learn(h); s == nil || s.Session != (sid != "") {
			t.Errorf("initialize over HTTP with Mcp-Session-Id %q: learned %+v", sid, s)
		}
	}
	d := (*expect.Facts)(nil).Learn(ex(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{}}}`))
	if d == nil || d.Version != "2026-07-28" || !d.Serves("2025-11-25") {
		t.Errorf("discover: %+v", d)
	}
}

// A finding names its cause; an empty detail must not leave "()" behind.
func TestCause(t *testing.T) {
	for _, tc := range []struct {
		e    expect.Expectation
		want string
	}{
		{expect.Expectation{Condition: expect.CondCall}, "method call"},
		{expect.Expectation{Condition: expect.CondUnknownTool, Detail: `the server lists no tool "x"`}, `unknown tool (the server lists no tool "x")`},
	} {
		if got := tc.e.Cause(); got != tc.want {
			t.Errorf("Cause() = %q, want %q", got, tc.want)
		}
	}
}
