//go:build unix

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A deliberately broken client — the test itself, writing by hand what
// an SDK would get right — through proxy and wrap against the reference
// server: its faults are reported in area client, under its own lines, in
// --report and in lint of the recording, verdict for verdict.

const (
	acceptBoth = "application/json, text/event-stream"
	initialize = `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"broken","version":"0"}}}`
)

func TestRelayBrokenClientHTTP(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	if _, err := startGroup(t, exec.Command(checkerBin, "refserver", "--addr", "127.0.0.1:"+port)); err != nil {
		t.Fatal(err)
	}
	waitPort(t, "127.0.0.1:"+port)
	dir := t.TempDir()
	rec, rep := filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "rep.json")
	px := startProxy(t, "http://127.0.0.1:"+port+"/mcp", "--record", rec, "--report", rep)

	hc := &http.Client{Timeout: 20 * time.Second}
	post := func(h map[string]string, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, px.url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", acceptBoth)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", body, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	post(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`) // before initialize
	sid := post(nil, fmt.Sprintf(initialize, 2)).Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("the reference server issued no session id")
	}
	session := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	with := func(k, v string) map[string]string {
		h := map[string]string{k: v}
		for sk, sv := range session {
			if _, ok := h[sk]; !ok {
				h[sk] = sv
			}
		}
		return h
	}
	post(with("MCP-Protocol-Version", "2025-13-45"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)      // a version that names none
	post(map[string]string{"MCP-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`) // no session id
	post(with("Accept", "application/json"), `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)                      // a narrow Accept
	post(session, `{"jsonrpc":"2.0","id":4,"method":"prompts/list"}`)                                               // an id used before in the session

	code, lines := px.stop(t)
	t.Logf("proxy output:\n%s", lines)
	if code != 1 {
		t.Errorf("proxy exit %d, want 1: the client's failures fail the gate", code)
	}
	checkInOrder(t, lines, []string{
		"→ #1 POST tools/list id 1", "warn CLI1005  method: the first message the relay saw is \"tools/list\", not initialize",
		"POST notifications/initialized", "FAIL 1", `fail CLI1006  http.header.mcp-protocol-version: MCP-Protocol-Version is "2025-13-45", which names no MCP version; the session negotiated "2025-11-25"`,
		"POST tools/list id 3", "fail CLI1007  http.header.mcp-session-id: Mcp-Session-Id is missing",
		"POST tools/list id 4", "fail CLI1010  http.header.accept: Accept does not list text/event-stream",
		"POST prompts/list id 4", "fail CLI1003  id: id 4 was used before in this session",
		"6 client messages judged",
	})
	checkRelayOutput(t, lines)
	got := clientRows(readReport(t, rep))
	for _, want := range []string{
		"client #1 tools/list CLI1005 warn method",
		"client #5 notifications/initialized CLI1006 fail http.header.mcp-protocol-version",
		"client #7 tools/list CLI1007 fail http.header.mcp-session-id",
		"client #9 tools/list CLI1010 fail http.header.accept",
		"client #11 prompts/list CLI1003 fail id",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("the report lacks %q in area client:\n%s", want, strings.Join(got, "\n"))
		}
	}
	checkClientParity(t, rep, rec)
}

func TestRelayBrokenClientStdio(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	logf, rec, rep := filepath.Join(dir, "wrap.log"), filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "rep.json")
	cmd := exec.Command(checkerBin, "wrap", "--log", logf, "--record", rec, "--report", rep, "--color", "never",
		"--", checkerBin, "refserver", "--stdio")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	done, err := startGroup(t, cmd)
	if err != nil {
		t.Fatal(err)
	}
	replies := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outPipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			replies <- sc.Text()
		}
		close(replies)
	}()
	await := func(n int) {
		t.Helper()
		for range n {
			select {
			case _, ok := <-replies:
				if !ok {
					t.Fatal("the server's stdout ended early")
				}
			case <-time.After(20 * time.Second):
				t.Fatal("no reply within 20s")
			}
		}
	}
	send := func(lines ...string) {
		t.Helper()
		// One write: the relay sees every line before the server answers
		// any, so two requests with one id are in flight together.
		if _, err := io.WriteString(in, strings.Join(lines, "\n")+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`) // before initialize
	await(1)
	send(fmt.Sprintf(initialize, 2))
	await(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":7,"method":"prompts/list"}`) // one id twice in flight
	await(2)
	in.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("wrap still runs 30s after the client closed stdin")
	}
	lines := waitFileContains(t, logf, "\nsummary: ")
	t.Logf("wrap log:\n%s", lines)
	checkInOrder(t, lines, []string{
		"→ #1 tools/list id 1", `fail CLI1005  method: "tools/list" before initialize`,
		"→ #3 initialize id 2", "→ #5 notifications/initialized",
		"→ #6 tools/list id 7", "→ #7 prompts/list id 7", "FAIL 1", "fail CLI1003  id: id 7 is reused while the request #6 with it still awaits its answer",
		"✗ #6 tools/list: no reply: a later request reused its id",
		"✗ #7 prompts/list: not judged: its id was the id of an earlier request still waiting", "← #8 result id 7",
		"5 client messages judged",
	})
	// The server is not blamed for the client's fault: both requests
	// with the id go unjudged, whichever the reply answered.
	for _, bad := range []string{"could not judge", "SCH1001", "PRO1001", "\x1b"} {
		if strings.Contains(lines, bad) {
			t.Errorf("the wrap log holds %q", bad)
		}
	}
	got := clientRows(readReport(t, rep))
	for _, want := range []string{"client #1 tools/list CLI1005 fail method", "client #7 prompts/list CLI1003 fail id"} {
		if !slices.Contains(got, want) {
			t.Errorf("the report lacks %q in area client:\n%s", want, strings.Join(got, "\n"))
		}
	}
	checkClientParity(t, rep, rec)
}

// clientRows are a report's rows of area client, one line each:
// fixture, check, status and path.
func clientRows(rep *report) []string {
	var out []string
	for _, r := range rep.Results {
		if r.Area == "client" {
			out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", r.Fixture, r.Check, r.Status, r.Path)))
		}
	}
	slices.Sort(out)
	return out
}

// checkClientParity: lint of a relay's recording gives the client's
// messages the verdicts the relay gave them live, row for row (passes and
// skips included).
func checkClientParity(t *testing.T, rep, rec string) {
	t.Helper()
	out := filepath.Join(filepath.Dir(rep), "lint.json")
	r := runChecker(t, time.Minute, nil, "lint", "--format", "json", "-o", out, rec)
	if r.code == 2 {
		t.Fatalf("lint could not read the recording:\n%s", r.stderr)
	}
	live, linted := clientRows(readReport(t, rep)), clientRows(readReport(t, out))
	if len(live) == 0 {
		t.Fatal("the relay reported no client verdicts")
	}
	if diff := cmp.Diff(live, linted); diff != "" {
		t.Errorf("client verdicts: the relay's (-) and lint's of its recording (+) differ:\n%s", diff)
	}
	if _, err := os.Stat(rec); err != nil {
		t.Error(err)
	}
}
