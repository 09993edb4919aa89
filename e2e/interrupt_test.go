//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startChecker starts the built checker and returns it running, with its
// stdout captured; the test ends it if it still runs.
func startChecker(t *testing.T, args ...string) (*exec.Cmd, *capped, <-chan error) {
	t.Helper()
	cmd := exec.Command(checkerBin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out capped
	out.max = 1 << 20
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = killGroup(cmd.Process) })
	return cmd, &out, done
}

// waitExit waits for the checker to exit within bound and returns its
// exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, done <-chan error, bound time.Duration) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-ctx.Done():
		t.Fatalf("the checker did not exit within %v of the signal", bound)
	}
	return -1
}

// TestInterruptWritesEveryReport: SIGTERM in the middle of a run (a tool
// call the server never answers) stops the run: nothing more is sent,
// what was judged is reported, every report file is complete and marked
// interrupted, and the exit code is 4.
func TestInterruptWritesEveryReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	human, js, junit, html := filepath.Join(dir, "human.txt"), filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	cmd, out, done := startChecker(t, "check", "--demo", "--demo-fault", "hang", "--call-tools=all", "--timeout", "30s",
		"-o", human, "--report", "json="+js, "--report", "junit="+junit, "--report", "html="+html)
	time.Sleep(2 * time.Second) // the corpus reaches the hanging tool call within milliseconds
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, done, 10*time.Second); code != 4 {
		t.Fatalf("exit %d, want 4 (interrupted)\n%s", code, out.String())
	}

	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct{ Fixture, Check, Status, Message string }
		Summary struct {
			Pass        int
			Interrupted string
			Gate        string
		}
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("the JSON report is not complete JSON: %v", err)
	}
	if rep.Summary.Gate != "interrupted" || !strings.Contains(rep.Summary.Interrupted, "interrupted by terminated") {
		t.Errorf("JSON summary not marked interrupted: gate %q, interrupted %q", rep.Summary.Gate, rep.Summary.Interrupted)
	}
	if rep.Summary.Pass < 100 {
		t.Errorf("only %d passes: what ran before the signal was not reported", rep.Summary.Pass)
	}
	for _, r := range rep.Results {
		if strings.HasPrefix(r.Fixture, "tools/call-valid") && r.Status == "error" {
			t.Errorf("the exchange cut by the signal is an error (%s); it is not judged", r.Message)
		}
	}

	rawXML, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name  string    `xml:"name,attr"`
				Error *struct{} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(rawXML, &suites); err != nil {
		t.Fatalf("the JUnit report is not complete XML: %v", err)
	}
	marked := false
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			marked = marked || s.Name == "run" && c.Name == "interrupted" && c.Error != nil
		}
	}
	if !marked {
		t.Error("the JUnit report has no interrupted error case")
	}

	for file, want := range map[string]string{human: "INTERRUPTED", html: "INTERRUPTED"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not say %s", filepath.Base(file), want)
		}
		if filepath.Ext(file) == ".html" && !strings.HasSuffix(strings.TrimSpace(string(b)), "</html>") {
			t.Error("the HTML report is cut off")
		}
	}
}
