package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/refserver"
)

// TestSessionEndedReadingLintAlike: a 2025 server that answers a request
// with an unknown MCP-Protocol-Version 404 (where T-HTTP-7 wants 400)
// says what a server that ended the session says, as it may at any time
// (T-SESS-5). The run begins one new session for the fixture, and the
// 404 it gets there too is judged under both readings: HTTP1002 warns,
// in check as in lint of its recording. Check failed it (its
// expectation was built before the reply, which opens the reading) and
// chased the fixture through all eight renewals. The twin: the 400 the
// rule wants passes.
func TestSessionEndedReadingLintAlike(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		srv, err := refserver.New(refserver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if v := r.Header.Get("MCP-Protocol-Version"); r.Method == http.MethodPost && v != "" && !envelope.KnownVersion(v) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unsupported protocol version"}}`)
				return
			}
			srv.ServeHTTP(w, r)
		}))
		t.Cleanup(func() { hs.Close(); srv.Close() })
		dir := t.TempDir()
		rec, live, linted := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.json"), filepath.Join(dir, "lint.json")
		code, _, errOut := runMain(t, "", "check", "--protocol", "2025-11-25", "--run", "version/bad-header", "--record", rec, "--format", "json", "-o", live, hs.URL+"/mcp")
		if code != exitOK && code != exitFindings {
			t.Fatalf("%d: check: exit %d: %s", status, code, errOut)
		}
		if code, _, errOut := runMain(t, "", "lint", "--format", "json", "-o", linted, rec); code != exitOK && code != exitFindings {
			t.Fatalf("%d: lint: exit %d: %s", status, code, errOut)
		}
		rows := reportRows(t, live)
		if diff := cmp.Diff(rows, reportRows(t, linted)); diff != "" {
			t.Errorf("%d: lint of the recording (-check +lint):\n%s", status, diff)
		}
		want := "version/bad-header HTTP1002 pass"
		if status == http.StatusNotFound {
			want = "version/bad-header HTTP1002 warn"
		}
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, want) }) {
			t.Errorf("%d: no row %q in\n%s", status, want, strings.Join(rows, "\n"))
		}
		renewals := strings.Count(readFile(t, rec), "session/renew-")
		if wantN := map[int]int{http.StatusNotFound: 1, http.StatusBadRequest: 0}[status]; renewals != wantN {
			t.Errorf("%d: the recording holds %d renewals, want %d", status, renewals, wantN)
		}
	}
}
