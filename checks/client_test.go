package checks_test

import (
	"bytes"
	"fmt"
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

// A client case (testdata/client_*.txtar) is a client's traffic as a
// relay sees it, in order, and the findings the client checks must
// report on it:
//
//	-- meta --     transport: http|stdio (default stdio)
//	               header: Name: value (repeatable: sent on every HTTP
//	                       client message unless the message drops it)
//	               facts: {…} (what the server declared; transcript form)
//	               schema: off (no schema validation)
//	-- traffic --  one event a line, numbered by its place in the order:
//	   #N > [METHOD] [Name: value]… [-Name]… [+Name: value]… BODY
//	               a client message (HTTP: METHOD, one of GET, DELETE,
//	               POST, OPTIONS, HEAD, defaults to POST; the
//	               brackets set, drop or add a field line to headers;
//	               BODY may be empty)
//	   #N < #M [status=S] [session=ID] BODY
//	               the server answers client request #M (an empty BODY:
//	               #M ended without an answer)
//	   #N <? [on=#M] BODY
//	               a request of the server's, on client request #M's reply
//	               stream (HTTP)
//	   gap K       K messages were not observed
//	-- want --     one finding a line: #N CHECKID fail|warn PATH
//
// Every client message is judged; unexpected findings and missing ones
// both fail, and "#N CHECKID error" names a check that could not judge.
type clientCase struct {
	name      string
	transport string
	headers   http.Header
	facts     *expect.Facts
	schemas   checks.ClientSchemaValidator
	events    []clientEvent
	want      []string
}

type clientEvent struct {
	seq     uint64
	client  *checks.ClientMessage
	closed  *checks.Closed
	request *checks.ServerRequest
	gap     int64
}

var clientSchemas = checks.ClientSchemas(schema.NewClientRegistry())

var (
	eventLine = regexp.MustCompile(`^#(\d+) (>|<\?|<)(?: (.*))?$`)
	headerSet = regexp.MustCompile(`^\[([-+]?[A-Za-z][A-Za-z0-9-]*)(?:: ([^\]]*))?\]\s*`)
	optionArg = regexp.MustCompile(`^(#\d+|status=\d+|session=\S+|on=#\d+)\s*`)
)

func loadClientCases(t *testing.T) []clientCase {
	t.Helper()
	glob := "client_*.txtar"
	if *caseFile != "" {
		glob = *caseFile
	}
	files, err := filepath.Glob(filepath.Join("testdata", glob))
	if err != nil || (len(files) == 0 && *caseFile == "") {
		t.Fatalf("no client cases in testdata (%v)", err)
	}
	var out []clientCase
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "client_") {
			continue
		}
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, parseClientCase(t, f, ar))
	}
	return out
}

func parseClientCase(t *testing.T, file string, ar *txtar.Archive) clientCase {
	t.Helper()
	cc := clientCase{name: filepath.Base(file), transport: envelope.Stdio, headers: http.Header{}, schemas: clientSchemas}
	seen := map[string]bool{}
	for _, f := range ar.Files {
		if seen[f.Name] {
			t.Fatalf("%s: section %q twice", file, f.Name)
		}
		seen[f.Name] = true
		lines := strings.Split(string(bytes.TrimSuffix(f.Data, []byte("\n"))), "\n")
		switch f.Name {
		case "meta":
			for i, line := range lines {
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
					cc.transport = v
				case "header":
					hk, hv, _ := strings.Cut(v, ":")
					cc.headers.Add(strings.TrimSpace(hk), strings.TrimSpace(hv))
				case "facts":
					fs, err := expect.ParseFacts([]byte(v))
					if err != nil {
						t.Fatalf("%s: facts: %v", file, err)
					}
					cc.facts = fs
				case "schema":
					if v == "off" {
						cc.schemas = nil
					}
				default:
					t.Fatalf("%s: unknown meta key %q", file, k)
				}
			}
		case "traffic":
			for i, line := range lines {
				if strings.TrimSpace(line) == "" {
					continue
				}
				ev, err := cc.parseEvent(line)
				if err != nil {
					t.Fatalf("%s: traffic line %d: %v", file, i+1, err)
				}
				cc.events = append(cc.events, ev)
			}
		case "want":
			for _, line := range lines {
				if line = strings.TrimSpace(line); line != "" {
					cc.want = append(cc.want, line)
				}
			}
		default:
			t.Fatalf("%s: unknown section %q", file, f.Name)
		}
	}
	if !seen["traffic"] || !seen["want"] {
		t.Fatalf("%s: needs traffic and want sections", file)
	}
	return cc
}

func (cc *clientCase) parseEvent(line string) (clientEvent, error) {
	if n, ok := strings.CutPrefix(line, "gap "); ok {
		k, err := strconv.ParseInt(n, 10, 64)
		return clientEvent{gap: k}, err
	}
	m := eventLine.FindStringSubmatch(line)
	if m == nil {
		return clientEvent{}, fmt.Errorf("want #N >, #N <, #N <? or gap K: %q", line)
	}
	seq, _ := strconv.ParseUint(m[1], 10, 64)
	rest := m[3]
	ev := clientEvent{seq: seq}
	switch m[2] {
	case ">":
		cm := &checks.ClientMessage{Seq: seq, Transport: cc.transport}
		if cc.transport == envelope.HTTP {
			cm.HTTPMethod, cm.Header = http.MethodPost, cc.headers.Clone()
			for _, verb := range []string{http.MethodGet, http.MethodDelete, http.MethodPost, http.MethodOptions, http.MethodHead} {
				if r, ok := strings.CutPrefix(rest, verb+" "); ok || rest == verb {
					cm.HTTPMethod, rest = verb, r
					break
				}
			}
			for {
				h := headerSet.FindStringSubmatch(rest)
				if h == nil {
					break
				}
				name, drop := strings.CutPrefix(h[1], "-")
				if name, again := strings.CutPrefix(name, "+"); again {
					cm.Header[name] = append(cm.Header[name], unescape(h[2])) // one more field line
					rest = rest[len(h[0]):]
					continue
				}
				for k := range cm.Header {
					if strings.EqualFold(k, name) {
						delete(cm.Header, k)
					}
				}
				if !drop {
					cm.Header[name] = []string{unescape(h[2])} // as written: odd case on purpose
				}
				rest = rest[len(h[0]):]
			}
		}
		cm.Body = unescapeBytes([]byte(rest))
		ev.client = cm
	case "<":
		cl := &checks.Closed{}
		for {
			o := optionArg.FindStringSubmatch(rest)
			if o == nil {
				break
			}
			k, v, _ := strings.Cut(strings.TrimSpace(o[1]), "=")
			switch {
			case strings.HasPrefix(k, "#"):
				cl.Request, _ = strconv.ParseUint(k[1:], 10, 64)
			case k == "status":
				cl.Status, _ = strconv.Atoi(v)
			case k == "session":
				cl.SessionID = v
			default:
				return ev, fmt.Errorf("unknown option %q", o[1])
			}
			rest = rest[len(o[0]):]
		}
		if cl.Request == 0 {
			return ev, fmt.Errorf("a server answer names the request it closes: #N < #M …")
		}
		if cc.transport == envelope.HTTP && cl.Status == 0 {
			cl.Status = 200
		}
		if rest != "" {
			cl.Answer = []byte(rest)
		}
		ev.closed = cl
	case "<?":
		r := &checks.ServerRequest{Seq: seq}
		if o := optionArg.FindStringSubmatch(rest); o != nil && strings.HasPrefix(o[1], "on=#") {
			r.On, _ = strconv.ParseUint(strings.TrimSpace(o[1])[4:], 10, 64)
			rest = rest[len(o[0]):]
		}
		r.Body = []byte(rest)
		ev.request = r
	}
	return ev, nil
}

// run feeds the traffic to a tracker as a relay does, judging each
// client message against what came before it.
func (cc *clientCase) run() [][]checks.Verdict {
	tr := checks.NewClientTracker()
	var out [][]checks.Verdict
	for _, ev := range cc.events {
		switch {
		case ev.client != nil:
			vs := checks.JudgeClient(checks.ClientInput{Fixture: fmt.Sprintf("#%d", ev.seq), Message: ev.client,
				View: tr.View(ev.client), Facts: cc.facts, Schemas: cc.schemas}, checks.All())
			out = append(out, vs)
			tr.Client(ev.client)
		case ev.closed != nil:
			tr.Close(ev.closed)
		case ev.request != nil:
			tr.Server(ev.request)
		default:
			tr.Lost(ev.gap)
		}
	}
	return out
}

func clientFindings(vss [][]checks.Verdict) []string {
	var got []string
	for _, vs := range vss {
		for _, v := range vs {
			for _, f := range v.Findings {
				got = append(got, fmt.Sprintf("%s %s %s %s", v.Fixture, v.Check.ID, f.Status, f.Path))
			}
			if v.Status == checks.StatusError {
				got = append(got, fmt.Sprintf("%s %s error", v.Fixture, v.Check.ID))
			}
		}
	}
	slices.Sort(got)
	return slices.Compact(got)
}

func TestClientCases(t *testing.T) {
	for _, cc := range loadClientCases(t) {
		t.Run(cc.name, func(t *testing.T) {
			vss := cc.run()
			want := slices.Clone(cc.want)
			slices.Sort(want)
			if diff := cmp.Diff(want, clientFindings(vss)); diff != "" {
				t.Errorf("findings mismatch (-want +got):\n%s", diff)
				for _, vs := range vss {
					for _, v := range vs {
						for _, f := range v.Findings {
							t.Logf("%s %s %s %s: %s", v.Fixture, v.Check.ID, f.Status, f.Path, f.Message)
						}
						if v.Status == checks.StatusError {
							t.Logf("%s %s error: %s", v.Fixture, v.Check.ID, v.Reason)
						}
					}
				}
			}
			for _, vs := range vss {
				if len(vs) != clientChecks() {
					t.Errorf("%d verdicts for a client message, want one per client check (%d)", len(vs), clientChecks())
				}
				for _, v := range vs {
					for _, f := range v.Findings {
						if !utf8.ValidString(f.Message) || strings.ContainsAny(f.Message, "\r\n\x1b") {
							t.Errorf("%s: finding message is not one clean line: %q", v.Check.ID, f.Message)
						}
					}
				}
			}
		})
	}
}

func clientChecks() int {
	n := 0
	for _, c := range checks.All() {
		if c.Area == checks.AreaClient {
			n++
		}
	}
	return n
}

// TestClientEveryCheckFailsAndPasses: each client check fails (or warns)
// in some case and passes in another.
func TestClientEveryCheckFailsAndPasses(t *testing.T) {
	if *caseFile != "" {
		t.Skip("-case selects a subset")
	}
	failed, passed := map[string]bool{}, map[string]bool{}
	for _, cc := range loadClientCases(t) {
		for _, vs := range cc.run() {
			for _, v := range vs {
				switch v.Status {
				case checks.StatusFail, checks.StatusWarn:
					failed[v.Check.ID] = true
				case checks.StatusPass:
					passed[v.Check.ID] = true
				}
			}
		}
	}
	for _, c := range checks.All() {
		if c.Area != checks.AreaClient {
			continue
		}
		if !failed[c.ID] {
			t.Errorf("%s: no client case makes it fail or warn", c.ID)
		}
		if !passed[c.ID] {
			t.Errorf("%s: no client case makes it pass", c.ID)
		}
	}
}

// TestJudgeKeepsTheAreasApart: the reply judge never runs a client check,
// and the client judge never runs a reply check.
func TestJudgeKeepsTheAreasApart(t *testing.T) {
	ex := envelope.Exchange{Transport: envelope.Stdio, Request: envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		Response: &envelope.Response{Messages: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}}}
	for _, v := range checks.Judge(checks.Input{Exchange: &ex}, checks.All()) {
		if v.Check.Area == checks.AreaClient {
			t.Errorf("Judge ran client check %s", v.Check.ID)
		}
	}
	// A run whose selection lacks the owner of an unjudgeable exchange
	// still reports the error once, on a reply check.
	ex.Response, ex.Failure = nil, "the connection broke"
	list, _ := checks.Select("CLI*,ERR1001")
	vs := checks.Judge(checks.Input{Exchange: &ex}, list)
	if len(vs) != 1 || vs[0].Check.ID != "ERR1001" || vs[0].Status != checks.StatusError {
		t.Errorf("an unjudgeable exchange under CLI*,ERR1001: %+v", vs)
	}
	m := &checks.ClientMessage{Transport: envelope.Stdio, Body: ex.Request.Body}
	for _, v := range checks.JudgeClient(checks.ClientInput{Message: m}, checks.All()) {
		if v.Check.Area != checks.AreaClient {
			t.Errorf("JudgeClient ran reply check %s", v.Check.ID)
		}
	}
}

// TestClientTrackerBounds: a client that sends more requests than the
// tracker keeps without ever getting answers costs bounded memory, and
// what the tracker stopped keeping is no longer judged.
func TestClientTrackerBounds(t *testing.T) {
	tr := checks.NewClientTracker()
	msg := func(seq uint64, body string) *checks.ClientMessage {
		return &checks.ClientMessage{Seq: seq, Transport: envelope.Stdio, Body: []byte(body)}
	}
	tr.Client(msg(1, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	for i := range 5000 {
		tr.Client(msg(uint64(i+2), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)))
	}
	m := msg(6000, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	for _, v := range checks.JudgeClient(checks.ClientInput{Message: m, View: tr.View(m)}, checks.All()) {
		if v.Check.ID == "CLI1003" && v.Status != checks.StatusSkip {
			t.Errorf("CLI1003 past the tracker's bound: %s %v, want a skip", v.Status, v.Findings)
		}
	}
}
