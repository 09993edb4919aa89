package main

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestProxyServerNeverReached: a proxy whose server is never reached (a
// wrong URL) does not pass: each request the proxy answered 502 itself
// could not be judged (an error), and a run in which no request reached
// the server ends as check's with an unreachable target, exit 3, the
// report saying so. Before, each was "not judged", the summary said
// "→ ok", the --report gate "passed" and the proxy exited 0.
func TestProxyServerNeverReached(t *testing.T) {
	// A port that was free a moment ago: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	rep := filepath.Join(t.TempDir(), "r.json")
	endpoint, out, stop := startProxy(t, down, time.Second, "", rep)
	for id := range 2 {
		body := `{"jsonrpc":"2.0","id":` + string(rune('1'+id)) + `,"method":"tools/list"}`
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("status %d, want the proxy's 502", resp.StatusCode)
		}
	}
	waitForOutput(t, out, regexp.MustCompile(`(?s)could not be reached.*could not be reached`))
	err = stop()
	var te *targetError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "no request reached the server") {
		t.Errorf("proxy ended with %v, want a target that could not be driven (exit 3)\n%s", err, out)
	}
	if strings.Contains(out.String(), "→ ok") {
		t.Errorf("the summary passes a server never reached:\n%s", out)
	}
	var r struct {
		Summary struct {
			Error   int    `json:"error"`
			Aborted string `json:"aborted"`
			Gate    string `json:"gate"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(readFile(t, rep)), &r); err != nil {
		t.Fatalf("report: %v", err)
	}
	if r.Summary.Gate == "passed" || r.Summary.Error != 2 || !strings.Contains(r.Summary.Aborted, "no request reached the server") {
		t.Errorf("report summary %+v: want 2 errors, aborted saying the server was never reached, gate not passed", r.Summary)
	}
}
