package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/refserver"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transport"
)

// collect is a sink that keeps every verdict.
type collect struct {
	verdicts []checks.Verdict
	notes    []string
}

func (c *collect) Exchange(j runner.Judged) error {
	c.verdicts = append(c.verdicts, j.Verdicts...)
	return nil
}
func (c *collect) Facts(*expect.Facts) {}
func (c *collect) Note(n string)       { c.notes = append(c.notes, n) }

// bad returns the IDs of the checks that failed, warned or erred, and a
// readable list of the findings for failure messages.
func (c *collect) bad() ([]string, string) {
	var ids []string
	var b strings.Builder
	for _, v := range c.verdicts {
		if v.Status == checks.StatusPass || v.Status == checks.StatusSkip {
			continue
		}
		ids = append(ids, v.Check.ID)
		fmt.Fprintf(&b, "  %s %s %s %s", v.Fixture, v.Check.ID, v.Status, v.Reason)
		for _, f := range v.Findings {
			fmt.Fprintf(&b, " [%s: %s]", f.Path, f.Message)
		}
		b.WriteString("\n")
	}
	slices.Sort(ids)
	return slices.Compact(ids), b.String()
}

func serve(t *testing.T, fault string) string {
	t.Helper()
	srv, err := refserver.New(refserver.Options{Fault: fault})
	if err != nil {
		t.Fatal(err)
	}
	url := serveHandler(t, srv)
	// (Cleanups run last first: the server ends its hanging requests
	// before the listener waits for them.)
	t.Cleanup(func() { srv.Close() })
	return url
}

// serveHandler serves h on a loopback port for the test's life and
// returns its MCP endpoint's URL.
func serveHandler(t *testing.T, h http.Handler) string {
	t.Helper()
	hs := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs.Listener.Close()
	hs.Listener = l
	hs.Start()
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// serveRefIntercepted serves the reference server over HTTP behind
// intercept, which sees each request and its body first and answers it
// itself by returning true.
func serveRefIntercepted(t *testing.T, intercept func(w http.ResponseWriter, r *http.Request, body []byte) bool) string {
	t.Helper()
	srv, err := refserver.New(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !intercept(w, r, body) {
			srv.ServeHTTP(w, r)
		}
	}))
}

func runHTTP(t *testing.T, fault, protocol string) *collect {
	t.Helper()
	target := &runner.HTTPTarget{T: &transport.HTTP{URL: serve(t, fault), Limits: transport.Limits{Timeout: time.Second}}}
	return runCorpus(t, target, protocol)
}

// runCorpus runs the whole embedded corpus, tools called, schemas on.
func runCorpus(t *testing.T, target runner.Target, protocol string) *collect {
	t.Helper()
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	c := &collect{}
	_, err = runner.Run(context.Background(), target, runner.Options{
		Protocol: protocol, Fixtures: fx, CallTools: runner.CallAll, Contract: envelope.Strict(),
		Schemas: checks.ProtocolSchemas(schema.NewRegistry()), Deadline: time.Minute,
	}, c)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCleanServer: the reference server keeps every rule, so the whole
// corpus, in every version, yields no fail, warn or error. A check that
// false-alarms on a conforming server shows up here.
func TestCleanServer(t *testing.T) {
	for _, p := range []string{"auto", envelope.V20251125, envelope.V20250618} {
		t.Run(p, func(t *testing.T) {
			c := runHTTP(t, "", p)
			if ids, detail := c.bad(); len(ids) > 0 {
				t.Errorf("the clean server drew findings:\n%s", detail)
			}
			passed := 0
			for _, v := range c.verdicts {
				if v.Status == checks.StatusPass {
					passed++
				}
			}
			if passed < 500 {
				t.Errorf("only %d passes: the corpus did not run", passed)
			}
		})
	}
}

// TestFaults: each named fault breaks one rule, and the checks for that
// rule, and only those, fail (or, where the spec is a SHOULD, warn).
func TestFaults(t *testing.T) {
	want := map[string][]string{
		"wrong-code":         {"ERR1002"},
		"code-zero":          {"ERR1001", "ERR1002"}, // not in the table, and not the -32602 an unknown tool wants
		"parse-as-invalid":   {"ERR1002"},
		"multiline-message":  {"ERR2001"},
		"prose-data":         {"ERR3002", "ERR3003"}, // an unknown key holding prose: two clauses
		"unknown-data-key":   {"ERR3002"},
		"echo-request":       {"ERR2002", "ERR4001"}, // a 4 KB echo is also far from concise
		"wrong-id":           {"RPC1004"},
		"missing-id":         {"RPC1004"},
		"text-plain-error":   {"HTTP1001"}, // an error status's body that is not JSON-RPC is judged by the contract, not read as a message
		"wrong-status":       {"HTTP1002"},
		"undistilled-errors": {"ERR5001"},
		"no-resultType":      {"PRO1002", "SCH1001"},
		"notification-reply": {"HTTP1002", "RPC1007"},
		"generic-message":    {"ERR2003"},
		"wrong-version-data": {"ERR3004"},
		// A mismatched Mcp-Name served with a result (PRO1001), plain and
		// in an uppercase =?BASE64? marker. (A call of a tool that does
		// not exist may be answered -32602 first: AMB-4.)
		"unchecked-name": {"PRO1001"},
		// Mcp-Param-* headers not read: a call missing one, with another
		// value, or with a raw non-ASCII byte is served (PRO1001); the
		// null twin owes none, so nothing changes there.
		"unchecked-param": {"PRO1001"},
		// hang and crash hit the opt-in tools/call-valid fixture: over
		// HTTP the reply never comes (hang) or the connection is dropped
		// (crash), while the server still answers a liveness probe: the
		// silence fails RPC1006, once, and nothing else is judged.
		"hang":  {"RPC1006"},
		"crash": {"RPC1006"},
		// The faults of the features the coverage corpus probes; each
		// breaks one rule a fixture of it exercises (the 2025-only ones
		// in TestFaults2025).
		"cursor-ignored":              {"PRO1001"},            // T-PAGE-1 is a SHOULD: warns
		"unknown-prompt-served":       {"PRO1001"},            // T-PROMPT-1, T-COMP-2: warn
		"empty-contents":              {"PRO1001", "PRO1008"}, // refusing is a SHOULD; empty contents fail (T-RES-2)
		"resource-not-found-internal": {"ERR1002"},            // -32603 where 2026-07-28 wants -32602 (T-RES-1)
		"completion-null":             {"RPC1008", "SCH1001"},
		// The 2026 reference server declares no logging: a logLevel rule
		// is the logging page's, not its to keep (TestFaults2025 has it).
		"log-level-accepted":    nil,
		"ack-without-id":        {"PRO1009"},
		"format-internal-error": {"HTTP1002"}, // a 500 for a valid call warns (T-HTTP-11)
		"origin-unchecked":      {"PRO1001"},
		"host-unchecked":        {"PRO1001"}, // AMB-19: warns
		"large-header-error":    {"HTTP1002"},
		// AMB-17: the spec sets no reaction to a narrower Accept, and a
		// refusal over a request's headers may say -32600: nothing to report.
		"accept-strict": nil,
		// Read past the response on the POST's stream (as lint and the
		// relays read a recording of it), the late progress is seen.
		"progress-after-response": {"PRO1003"},
		// The integer token of progress/token-integer comes back a
		// string: not the token the request gave (T-PROG-1).
		"progress-token-string": {"PRO1003"},
		// A debug message for logging/meta-level-error's "error" (T-LOG-2).
		"log-below-level": {"PRO1003"},
		// mrtr/input-required's input_required result carries a JSON-RPC
		// request where a bare {method, params} belongs (T-MRTR-2): the
		// check and the schema both refuse it.
		"bad-input-request": {"PRO1002", "SCH1001"},
		// mrtr/state-tampered's and mrtr/state-replayed's second rounds
		// complete on a state the server did not issue for them: a
		// complete result warns (T-MRTR-5 heuristic, T-MRTR-6 a SHOULD).
		"tampered-state-accepted": {"PRO1001"},
		"replayed-state-accepted": {"PRO1001"},
		// A discover result without supportedVersions is no legacy
		// server's answer: judged as 2026-07-28's (T-LIFE-8), though the
		// run goes on as 2025-11-25 (review rev21).
		"discover-no-versions": {"SCH1001"},
		// 2025-xx only: nothing of the 2026-07-28 run changes.
		"initialize-code-zero":       nil,
		"sessionless-wrong-status":   nil,
		"initialize-refuses-version": nil,
	}
	for _, f := range refserver.Faults() {
		if f.Name == "ended-session-served" {
			continue // TestFaultEndedSession: needs a 2025 session
		}
		t.Run(f.Name, func(t *testing.T) {
			w, ok := want[f.Name]
			if !ok {
				t.Fatalf("fault %q has no expectation here", f.Name)
			}
			c := runHTTP(t, f.Name, "auto")
			got, detail := c.bad()
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("checks that did not pass (-want +got):\n%s\n%s", diff, detail)
			}
		})
	}
}

func TestFaultEndedSession(t *testing.T) {
	c := runHTTP(t, "ended-session-served", envelope.V20251125)
	got, detail := c.bad()
	if diff := cmp.Diff([]string{"PRO1001"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s\n%s", diff, detail)
	}
}

// BenchmarkCorpus runs the whole default corpus against the in-process
// reference server over loopback HTTP, negotiation included, with the
// CLI's default --parallel 8. A look at a stream lasts at least 100 ms
// of it.
func BenchmarkCorpus(b *testing.B) {
	fx, err := fixtures.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	srv, _ := refserver.New(refserver.Options{})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	reg := schema.NewRegistry()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		target := &runner.HTTPTarget{T: &transport.HTTP{URL: hs.URL + "/mcp"}}
		c := &collect{}
		if _, err := runner.Run(context.Background(), target, runner.Options{Fixtures: fx, Contract: envelope.Strict(), Schemas: checks.ProtocolSchemas(reg), Parallel: 8}, c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNotMCPHint: an endpoint that is no MCP server (a web page, a wrong
// path, a login) cannot be driven, and the error says what it answered
// and what to try, with --protocol 2026-07-28 too (review rev89: a
// redirect was named without the hint there).
func TestNotMCPHint(t *testing.T) {
	tests := []struct {
		status    int
		ctype     string
		challenge string
		want      string
	}{
		{404, "text/plain", "", "HTTP 404: is this the URL of the MCP endpoint"},
		{200, "text/html; charset=utf-8", "", "the answer is an HTML page"},
		{401, "application/json", "", "the server wants credentials"},
		{403, "application/json", `Bearer error="insufficient_scope"`, "the server wants credentials"},
		// No challenge: Playwright MCP refuses a Host other than
		// localhost so; a token would not help (a sweep found the hint).
		{403, "text/plain", "", "without asking for credentials"},
		{302, "text/plain", "", "the server redirects"},
	}
	for _, tt := range tests {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", tt.ctype)
			if tt.status == 302 {
				w.Header().Set("Location", "/elsewhere")
			}
			if tt.challenge != "" {
				w.Header().Set("WWW-Authenticate", tt.challenge)
			}
			w.WriteHeader(tt.status)
			fmt.Fprint(w, "<html>not here</html>")
		}))
		for _, protocol := range []string{"auto", envelope.V20260728} {
			target := &runner.HTTPTarget{T: &transport.HTTP{URL: hs.URL, Limits: transport.Limits{Timeout: time.Second}}}
			_, err := runner.Run(context.Background(), target, runner.Options{Contract: envelope.Strict(), Protocol: protocol}, &collect{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("HTTP %d %s, --protocol %s: error %v, want it to say %q", tt.status, tt.ctype, protocol, err, tt.want)
			}
		}
		hs.Close()
	}
}

// TestFaults2025: the faults whose fixtures exist only in the 2025-xx
// lifecycle (staged connections, sessions, initialize) fail those.
func TestFaults2025(t *testing.T) {
	want := map[string][]string{
		// code 0 for a refused initialize (invalid params, a second
		// one): the official go-sdk's answer to both.
		"initialize-code-zero":       {"ERR1001", "ERR1002"},
		"sessionless-wrong-status":   {"HTTP1002"}, // T-SESS-2 is a SHOULD: warns
		"initialize-refuses-version": {"PRO1007"},  // AMB-3: warns
		"ended-session-served":       {"PRO1001"},
		"log-level-accepted":         {"PRO1001"}, // logging/setLevel with no level: T-LOG-1, a SHOULD: warns
	}
	for fault, w := range want {
		t.Run(fault, func(t *testing.T) {
			c := runHTTP(t, fault, envelope.V20251125)
			got, detail := c.bad()
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("checks that did not pass (-want +got):\n%s\n%s", diff, detail)
			}
		})
	}
}

// httpRun runs the embedded fixtures named by ids (every one when none)
// against the HTTP endpoint url, each exchange bounded by timeout, in
// protocol ("" probes) with parallel exchanges in flight (0: the
// default), and collects what it reports.
func httpRun(t *testing.T, url, protocol string, parallel int, timeout time.Duration, ids ...string) (*collect, runner.Result, error) {
	t.Helper()
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) > 0 {
		if fx, err = fixtures.Select(fx, ids, nil); err != nil {
			t.Fatal(err)
		}
	}
	c := &collect{}
	res, err := runner.Run(context.Background(), &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: timeout}}},
		runner.Options{Protocol: protocol, Parallel: parallel, Fixtures: fx, Contract: envelope.Strict(), Schemas: checks.ProtocolSchemas(schema.NewRegistry()), Deadline: time.Minute}, c)
	return c, res, err
}

// refHTTP serves the reference server on loopback behind wrap, which
// sees every request first and hands it on (or not) to the server.
func refHTTP(t *testing.T, opts refserver.Options, wrap func(srv http.Handler) http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv, err := refserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(wrap(srv))
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return hs
}

// TestDiscoverOtherVersionsJudged: a server that answers server/discover
// with a 2026-07-28 result listing only other versions, and refuses
// every initialize, cannot be driven; its discover reply is still judged
// (PRO1007: a listing of 2027-01-01 alone fails, one of 2025-11-25 alone
// warns), where the run ended with nothing judged (review rev81); so is
// one that comes inside a JSON array (review rev84). A legacy server's
// catch-all result ({}) stays unjudged.
func TestDiscoverOtherVersionsJudged(t *testing.T) {
	tests := []struct {
		discover string
		want     []string
		array    bool // the response comes inside a JSON array
	}{
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete","supportedVersions":["2027-01-01"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}`, []string{"PRO1007 fail"}, false},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete","supportedVersions":["2025-11-25"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}`, []string{"PRO1007 warn"}, false},
		{`{}`, nil, false},
		// A response inside an array answers no single request, in any
		// version (review rev84: not judged at all).
		{`{"resultType":"complete"}`, []string{"RPC1001 fail"}, true},
	}
	for _, tt := range tests {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			id := gjson.GetBytes(body, "id").Raw
			w.Header().Set("Content-Type", "application/json")
			if gjson.GetBytes(body, "method").Str == "server/discover" {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, tt.discover)
				if tt.array {
					body = "[" + body + "]"
				}
				io.WriteString(w, body)
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2027-01-01"],"requested":"2025-11-25"}}}`, id)
		}))
		target := &runner.HTTPTarget{T: &transport.HTTP{URL: hs.URL, Limits: transport.Limits{Timeout: time.Second}}}
		c := &collect{}
		_, err := runner.Run(context.Background(), target, runner.Options{Contract: envelope.Strict(), Schemas: checks.ProtocolSchemas(schema.NewRegistry())}, c)
		hs.Close()
		if !errors.Is(err, runner.ErrNotDriven) {
			t.Errorf("discover %s: error %v, want %v", tt.discover, err, runner.ErrNotDriven)
		}
		var got []string
		for _, v := range c.verdicts {
			if v.Fixture == "negotiate/discover" && v.Status != checks.StatusPass && v.Status != checks.StatusSkip {
				got = append(got, v.Check.ID+" "+string(v.Status))
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("discover %s: findings on negotiate/discover (-want +got):\n%s", tt.discover, diff)
		}
	}
}
