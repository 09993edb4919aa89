//go:build unix

package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitUnsignalled waits for a relay to exit within bound, and fails the
// test if a signal ended it (SIGPIPE, when a write to a closed stdout
// killed it) rather than its own exit.
func waitUnsignalled(t *testing.T, cmd *exec.Cmd, done <-chan struct{}, bound time.Duration, out *capped) int {
	t.Helper()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("the relay still runs %v on:\n%s", bound, tail(out.String(), 3000))
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the relay was killed by %v:\n%s", ws.Signal(), tail(out.String(), 3000))
	}
	return cmd.ProcessState.ExitCode()
}

// checkReportWhole fails the test unless file holds one whole JSON
// document.
func checkReportWhole(t *testing.T, file string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("the report is not whole: %v\n%s", err, tail(string(raw), 500))
	}
}

// TestRelayWrapSIGPIPE: `wrap … | head -c 1000`: the client stops
// reading wrap's stdout while the server floods it. wrap takes the
// broken pipe for a client gone, not for its death: it reads the
// server on, and when the client closes stdin it stops the server,
// writes the summary and the whole report, and exits with the server's
// status. Go's runtime killed it with SIGPIPE (exit 141), the report
// cut short.
func TestRelayWrapSIGPIPE(t *testing.T) {
	t.Parallel()
	yes, err := exec.LookPath("yes")
	if err != nil {
		t.Skip("no yes command")
	}
	dir := t.TempDir()
	rep, log := filepath.Join(dir, "sp.json"), filepath.Join(dir, "wrap.log")
	line := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood"}}`
	cmd := exec.Command(checkerBin, "wrap", "--grace", "200ms", "--log", log, "--format", "json", "--report", rep, "--", yes, line)
	stdin, client, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	reads, stdout, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errOut := &capped{max: 1 << 20}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, errOut
	done, err := startGroup(t, cmd)
	if err != nil {
		t.Fatal(err)
	}
	stdin.Close() // the checker holds its own copies
	stdout.Close()
	if _, err := io.ReadFull(reads, make([]byte, 1000)); err != nil {
		t.Fatalf("reading the relayed flood: %v\n%s", err, errOut.String())
	}
	reads.Close() // as head does once it has its 1000 bytes
	// The client is still connected a while: wrap writes on into the
	// closed pipe.
	time.Sleep(300 * time.Millisecond)
	client.Close()
	code := waitUnsignalled(t, cmd, done, 30*time.Second, errOut)
	if code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want the server's, stopped by SIGTERM (%d)", code, 128+int(syscall.SIGTERM))
	}
	lines, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lines), "\nsummary: ") || !strings.Contains(string(lines), "note: the client stopped reading (write /dev/stdout: broken pipe)") {
		t.Errorf("the log lacks the summary or the client that stopped reading:\n%s", tail(string(lines), 2000))
	}
	checkReportWhole(t, rep)
}

// TestRelayProxySIGPIPE: `proxy URL | head -1`: the proxy's lines go to
// stdout, and whoever read them went away. The proxy relays on, and
// stops on SIGINT with its whole report, as it does when they are read.
// Go's runtime killed it with SIGPIPE at its next line.
func TestRelayProxySIGPIPE(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer up.Close()
	rep := filepath.Join(t.TempDir(), "proxy.json")
	cmd := exec.Command(checkerBin, "proxy", up.URL+"/mcp", "--listen", "127.0.0.1:0", "--color", "never", "--format", "json", "--report", rep)
	reads, stdout, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errOut := &capped{max: 1 << 20}
	cmd.Stdout, cmd.Stderr = stdout, errOut
	done, err := startGroup(t, cmd)
	if err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	first, err := bufio.NewReader(reads).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the proxy's first line: %v\n%s", err, errOut.String())
	}
	reads.Close() // as head -1 does
	m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+\S*),`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("the first line says nothing of where the proxy listens: %q", first)
	}
	for range 2 {
		resp, err := http.Post(m[1], "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Logf("through the proxy: %v", err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	time.Sleep(200 * time.Millisecond) // the lines of both are written, into the closed pipe
	cmd.Process.Signal(syscall.SIGINT)
	waitUnsignalled(t, cmd, done, 20*time.Second, errOut)
	checkReportWhole(t, rep)
}
