//go:build unix

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The real peer: @modelcontextprotocol/server-everything, the MCP
// project's own reference server, pinned in testdata/package.json and
// installed by .ci/run (npm ci). It speaks 2025-11-25 (it has no
// server/discover), over Streamable HTTP and stdio.

// everythingEnv names the installed package's directory.
const everythingEnv = "WYMCP_EVERYTHING_DIR"

// everythingDir returns the installed server-everything, or skips the
// test — except in CI, where a missing peer is a broken CI script.
func everythingDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(everythingEnv)
	if dir == "" {
		msg := everythingEnv + " is not set: it names the installed @modelcontextprotocol/server-everything. Install it with\n" +
			"  mkdir -p .ci/npm && cp e2e/testdata/package*.json .ci/npm/ && npm ci --prefix .ci/npm --no-audit --no-fund --ignore-scripts\n" +
			"  export " + everythingEnv + "=$PWD/.ci/npm/node_modules/@modelcontextprotocol/server-everything\n" +
			"(from the repository root; .ci/run does this)"
		if inCI() {
			t.Fatal("CI=true but " + msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "dist", "index.js")); err != nil {
		t.Fatalf("%s=%s: not an installed server-everything: %v", everythingEnv, dir, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if inCI() {
			t.Fatalf("CI=true but node is not on PATH: %v", err)
		}
		t.Skipf("node is not on PATH (%v): server-everything needs it", err)
	}
	return dir
}

// A finding server-everything must produce, with the real violation it
// reports. status may list alternatives, "warn|fail", where the checker's
// severity is in question (see the comment at the finding).
type finding struct {
	fixture, check, status string
	why                    string // what the server does wrong, and the rule
}

// Findings of both transports: the server's tool and error-message code
// is the same over HTTP and stdio.
var everythingFindings = []finding{
	{"tools/missing-name", "ERR2001", "fail",
		"tools/call without name gets -32603 whose message is zod's pretty-printed issue list: 11 lines (contract clause 2: message is one line; T-RPC-8: one short sentence)"},
	{"tools/missing-name", "ERR2002", "fail",
		"same message: 183 characters, over the contract's 160 (contract clause 2: concise)"},
	{"tools/missing-name", "ERR1002", "fail",
		"-32603 Internal error for a client's malformed call whose own message (zod's issue list for params.name) says the params are invalid: T-TOOL-7 does not pin the code, but -32602 is JSON-RPC's for invalid params (T-ERR-4), as for initialize's"},
	{"tools/arguments-not-object", "ERR2001", "fail",
		"tools/call with arguments \"str\" gets the same multi-line zod dump as its message (contract clause 2; T-RPC-8)"},
	{"tools/arguments-not-object", "ERR2002", "fail",
		"185 characters, over the contract's 160 (contract clause 2)"},
	// T-TOOL-6 is a SHOULD: a warning for an isError result (DESIGN:
	// a SHOULD is a warn, even where the digest's probe reads stricter).
	{"tools/unknown-tool", "PRO1001", "warn",
		"an unknown tool comes back as an isError result (\"MCP error -32602: Tool … not found\"), not as a JSON-RPC error (T-TOOL-6)"},
	{"canary/tool-name", "PRO1001", "warn",
		"same for a 4 KB unknown tool name (T-TOOL-6)"},
	{"canary/tool-name", "ERR4002", "fail",
		"the 4096-character tool name is copied whole into the isError text (contract: no echo)"},
	{"tools/bad-cursor", "PRO1001", "warn",
		"tools/list with cursor \"!!wymcp-not-a-cursor!!\" is served the first page instead of -32602 (T-PAGE-1, a SHOULD)"},
}

// Over Streamable HTTP the SDK's transport layer answers malformed input
// itself, with -32700 for everything and id null.
var everythingHTTPFindings = []finding{
	// T-ERR-2: valid JSON that is not a valid request is -32600 Invalid
	// Request; -32700 Parse error is for bytes that are not JSON (T-ERR-1),
	// a different kind of condition.
	{"rpc/jsonrpc-1.0", "ERR1002", "fail", `-32700 for {"jsonrpc":"1.0",…}, valid JSON (T-ERR-2: -32600)`},
	{"rpc/jsonrpc-missing", "ERR1002", "fail", "-32700 for a request without jsonrpc (T-ERR-2: -32600)"},
	{"rpc/method-missing", "ERR1002", "fail", "-32700 for a request without method (T-ERR-2: -32600)"},
	{"rpc/method-number", "ERR1002", "fail", `-32700 for "method":42 (T-ERR-2: -32600)`},
	{"rpc/not-object", "ERR1002", "fail", `-32700 for the JSON string "tools/list" (T-ERR-2: -32600)`},
	{"id/array", "ERR1002", "fail", "-32700 for an array id (T-ERR-2: a forbidden id type is -32600)"},
	{"id/boolean", "ERR1002", "fail", "-32700 for a boolean id (T-ERR-2)"},
	{"id/object", "ERR1002", "fail", "-32700 for an object id (T-ERR-2)"},
	{"id/large-integer", "ERR1002", "warn",
		"-32700 for id 12345678901234567890, valid JSON a parser may refuse to hold (RFC 8259 §6 lets it limit the numbers it accepts; the literal reading serves it)"},
	// T-RPC-9 (AMB-1): an error that says -32700 leaves the id out or
	// null, so the null ids of the rows above go with the code they claim:
	// one finding for one cause, ERR1002's (RPC1004 passes them).
	{"rpc/params-array", "ERR1002", "fail", "-32700 for params [1,2], valid JSON (T-ERR-1)"},
	{"rpc/params-string", "ERR1002", "fail", `-32700 for params "x", valid JSON (T-ERR-1)`},
	{"version/bad-header", "ERR1001", "warn",
		"-32000, an implementation-defined code receivers give no shared meaning (contract clause 1: the legacy range warns)"},
	// T-HTTP-14: 2025-11-25 servers MUST validate Origin and answer an
	// invalid one with 403; this one sends Access-Control-Allow-Origin: *
	// and serves http://evil.example.
	{"http/origin-foreign", "PRO1001", "fail", "a request from Origin http://evil.example is served (T-HTTP-14: 403)"},
	// T-SESS-3: once a session is ended (the DELETE was accepted), a
	// request carrying its id MUST get 404; this one gets 400 -32000 "No
	// valid session ID provided".
	{"session/reuse-after-delete", "HTTP1002", "fail", "400 for a request in an ended session (T-SESS-3: 404)"},
	// AMB-7: the reaction to a batch is unspecified, hence warnings.
	{"rpc/batch", "PRO1001", "warn", "a one-element batch is served: one bare response object on the SSE stream (T-RPC-12, AMB-7)"},
	{"rpc/batch-two", "PRO1001", "warn", "a two-element batch is served: one response event per request on the SSE stream, never an array (T-RPC-12, AMB-7)"},
	{"rpc/empty-batch", "RPC1006", "warn", "[] gets 202 with an empty body; JSON-RPC wants one -32600 (T-RPC-12, AMB-7)"},
}

// Exchanges server-everything gets right on both transports: no fail,
// no error, at least one pass. A prefix ending in "/" covers a fixture's
// variants.
var everythingConforming = []string{
	"negotiate/initialize", "negotiate/initialized",
	"tools/list", "lifecycle/ping", "method/unknown", "canary/method",
	"id/integer", "id/string", "id/zero", "id/negative", "id/unicode-string",
	"rpc/notification", "rpc/unknown-notification",
	"tools/wrong-arguments/",
}

// Over HTTP also the malformed bodies that are not JSON at all, and the
// GET stream of the session (200 text/event-stream, T-HTTP-12).
//
// So are ids JSON-RPC allows and MCP forbids (1.5, null) refused -32700
// too: for such an id any error reply passes (DESIGN rulings), as a
// decoder that cannot hold the id may call the request unparseable.
var everythingHTTPConforming = []string{"rpc/garbage", "rpc/truncated", "rpc/empty-body", "http/get", "id/fraction", "id/null"}

// Over stdio the server writes nothing at all in reply to any of these
// requests: not JSON, not a valid request, or a batch. Every request
// gets a response, errors included (JSON-RPC §5; T-ERR-1 -32700, T-ERR-2
// -32600); for the batches the reaction is unspecified (AMB-7), and a null
// id may be read as a notification's (JSON-RPC §4).
var everythingStdioSilent = []string{
	"rpc/garbage", "rpc/truncated",
	"rpc/jsonrpc-1.0", "rpc/jsonrpc-missing", "rpc/method-missing", "rpc/method-number",
	"rpc/not-object", "rpc/params-array", "rpc/params-string",
	"id/array", "id/boolean", "id/fraction", "id/large-integer", "id/null", "id/object",
	"rpc/batch", "rpc/batch-two", "rpc/empty-batch",
}

// Exchanges the DESIGN rulings made conforming: a transport-level
// rejection (a refused Accept, Content-Type, version header or session,
// answered before the body is read) may carry no id, and the spec names
// no status for a refused Accept or Content-Type (AMB-17).
var everythingHTTPTransportRejections = []string{
	"http/accept-json-only", "http/accept-missing", "http/content-type-text-plain",
}

// TestEverythingHTTP checks server-everything over Streamable HTTP.
func TestEverythingHTTP(t *testing.T) {
	t.Parallel()
	dir := everythingDir(t)
	url := startEverythingHTTP(t, dir)
	out := filepath.Join(t.TempDir(), "r.json")
	r := runChecker(t, 3*time.Minute, nil, "check", "--format", "json", "-o", out, "--timeout", "5s", "--deadline", "2m", url)
	r.checkExit(t, 1)
	r.checkWall(t, 2*time.Minute+30*time.Second)
	rep := readReport(t, out)
	t.Logf("report: %s", rep.digest())
	rep.checkComplete(t, "")
	if !rep.hasNote("protocol 2025-11-25 (") {
		t.Errorf("no note of the negotiated protocol 2025-11-25: %q", rep.Summary.Notes)
	}
	checkFindings(t, rep, slices.Concat(everythingFindings, everythingHTTPFindings))
	checkConforming(t, rep, slices.Concat(everythingConforming, everythingHTTPConforming, everythingHTTPTransportRejections))
	for _, fx := range []string{"version/bad-header", "session/reuse-after-delete"} {
		checkPasses(t, rep, fx, "RPC1004")
	}
	checkNoErrors(t, rep, nil)
}

// TestEverythingStdio checks server-everything over stdio.
func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	dir := everythingDir(t)
	pids := pidFile(t)
	out := filepath.Join(t.TempDir(), "r.json")
	// sh records the server's pid (exec keeps it), so that the test can
	// tell the checker ended every server it started.
	// --timeout 3s: the server answers in milliseconds, and each of the
	// 17 requests it ignores costs the checker a whole timeout.
	r := runChecker(t, 3*time.Minute, nil, "check", "--format", "json", "-o", out, "--timeout", "3s", "--deadline", "2m",
		"--", "/bin/sh", "-c", `echo $$ >> "$0" && exec "$@"`, pids, "node", filepath.Join(dir, "dist", "index.js"), "stdio")
	r.checkExit(t, 1)
	r.checkWall(t, 2*time.Minute+30*time.Second)
	rep := readReport(t, out)
	t.Logf("report: %s", rep.digest())
	rep.checkComplete(t, "")
	if !rep.hasNote("protocol 2025-11-25 (") {
		t.Errorf("no note of the negotiated protocol 2025-11-25: %q", rep.Summary.Notes)
	}
	if raw, _ := os.ReadFile(pids); len(strings.Fields(string(raw))) == 0 {
		t.Errorf("no server pid recorded: the leak check saw nothing")
	}
	checkFindings(t, rep, everythingFindings)
	checkConforming(t, rep, everythingConforming)
	for _, fx := range everythingStdioSilent {
		checkSilence(t, rep, fx)
	}
	checkNoErrors(t, rep, nil)
}

// checkFindings asserts each finding is in the report.
func checkFindings(t *testing.T, rep *report, want []finding) {
	t.Helper()
	for _, f := range want {
		var got []string
		found := false
		for _, x := range rep.rows(f.fixture) {
			if x.Check != f.check {
				continue
			}
			got = append(got, x.Status+": "+x.Message)
			found = found || slices.Contains(strings.Split(f.status, "|"), x.Status)
		}
		if !found {
			t.Errorf("%s %s: want %s — %s\n  got %q", f.fixture, f.check, f.status, f.why, got)
		}
	}
}

// checkConforming asserts that each fixture (or prefix ending in "/")
// was judged with at least one pass and no fail or error.
func checkConforming(t *testing.T, rep *report, fixtures []string) {
	t.Helper()
	for _, fx := range fixtures {
		var pass int
		for _, x := range rep.Results {
			if x.Fixture != fx && !(strings.HasSuffix(fx, "/") && strings.HasPrefix(x.Fixture, fx)) {
				continue
			}
			switch x.Status {
			case "pass":
				pass++
			case "fail", "error":
				t.Errorf("%s %s: %s (%s), but the server gets this exchange right", x.Fixture, x.Check, x.Status, x.Message)
			}
		}
		if pass == 0 {
			t.Errorf("%s: no pass verdict (not judged?)", fx)
		}
	}
}

// checkSilence asserts that a request the server ignored is reported
// as such: RPC1006 (one reply per request) fails once — a warning for a
// batch, whose reaction is open (AMB-7) — as lint judges the same silence
// in a transcript, after a liveness probe showed the server alive. No
// check errs: the checker could judge.
func checkSilence(t *testing.T, rep *report, fx string) {
	t.Helper()
	rows := rep.rows(fx)
	if len(rows) == 0 {
		t.Errorf("%s: not in the report", fx)
		return
	}
	want := "fail"
	if strings.Contains(fx, "batch") || fx == "id/null" || fx == "rpc/method-missing" {
		// (AMB-7: the reaction to a batch is open; JSON-RPC 1.0 reads a
		// null id as a notification's, JSON-RPC §4; a message with an id
		// and no method may be read as an invalid response, which nothing
		// answers.)
		want = "warn"
	}
	found := false
	for _, x := range rows {
		switch {
		case x.Check == "RPC1006" && x.Status == want:
			found = true
		case x.Status == "error":
			t.Errorf("%s %s: error (%s); the server was alive and silent: that is a finding, not a failure to judge", fx, x.Check, x.Message)
		}
	}
	if !found {
		t.Errorf("%s: the server wrote nothing in reply: want RPC1006 %s", fx, want)
	}
}

// checkPasses asserts that a check passed on a fixture.
func checkPasses(t *testing.T, rep *report, fx, check string) {
	t.Helper()
	for _, x := range rep.rows(fx) {
		if x.Check == check && x.Status == "pass" {
			return
		}
	}
	t.Errorf("%s %s: want pass", fx, check)
}

// checkNoErrors asserts there is no error verdict but on the fixtures
// in allowed.
func checkNoErrors(t *testing.T, rep *report, allowed map[string]bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, x := range rep.Results {
		if x.Status != "error" || allowed[x.Fixture] || seen[x.Fixture] {
			continue
		}
		seen[x.Fixture] = true
		t.Errorf("%s %s: error (%s): nothing should keep the checker from judging this exchange", x.Fixture, x.Check, x.Message)
	}
}

// startEverythingHTTP starts server-everything's Streamable HTTP
// transport on a free loopback port (the preload binds it to 127.0.0.1)
// and returns its MCP URL once the port answers. The server's process
// group is ended when the test ends.
func startEverythingHTTP(t *testing.T, dir string) string {
	t.Helper()
	preload, err := filepath.Abs(filepath.Join("testdata", "bind-localhost.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	// Another process may take the free port between our probe and
	// node's bind: try a few ports.
	for attempt := 1; attempt <= 3; attempt++ {
		port := freePort(t)
		var log capped
		log.max = 64 << 10
		cmd := exec.Command("node", "--require", preload, "dist/index.js", "streamableHttp")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PORT="+port)
		cmd.Stdout, cmd.Stderr = &log, &log
		exited, err := startGroup(t, cmd)
		if err != nil {
			t.Fatalf("starting server-everything: %v", err)
		}
		addr := net.JoinHostPort("127.0.0.1", port)
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				return fmt.Sprintf("http://%s/mcp", addr)
			}
			select {
			case <-exited:
				t.Logf("server-everything on port %s exited (attempt %d):\n%s", port, attempt, log.String())
				deadline = time.Time{}
			case <-time.After(100 * time.Millisecond):
			}
		}
		if !deadline.IsZero() {
			t.Fatalf("server-everything did not listen on %s within 30s:\n%s", addr, log.String())
		}
	}
	t.Fatal("server-everything did not start in 3 attempts")
	return ""
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
