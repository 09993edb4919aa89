//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLintSignal: a SIGTERM stops lint of an input that is still open
// (a relay's output through a pipe): what was read is judged, and every
// report is written whole and marked interrupted, exit 4, as check's
// are. Before, lint caught no signal: it died by it (143) and left a
// JSON and a JUnit report cut short, neither of them valid.
func TestLintSignal(t *testing.T) {
	dir := t.TempDir()
	jsonPath, junitPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The writer stays open until the test ends: lint waits for more.
	t.Cleanup(func() { w.Close(); r.Close() })
	if _, err := w.WriteString(readFile(t, "../../examples/demo.jsonl")); err != nil {
		t.Fatal(err)
	}
	s, _, errOut := testStreams()
	s.In = r
	watching := make(chan struct{})
	s.Interrupts = func(ctx context.Context) (context.Context, func()) {
		c, release := watchSignalsExit(ctx, func(code int) { t.Errorf("exited (%d) on one signal", code) })
		close(watching)
		return c, release
	}
	done := make(chan exitCode, 1)
	go func() {
		done <- Main([]string{"lint", "--format", "json", "-o", jsonPath, "--report", "junit=" + junitPath, "-"}, s)
	}()
	select {
	case <-watching:
	case <-time.After(20 * time.Second):
		// (No signal is sent: with no watch, it would end the tests.)
		t.Fatal("lint watches no signal while it reads")
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var code exitCode
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("lint did not end within 20s of SIGTERM")
	}
	if code != exitStopped {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitStopped, errOut)
	}
	var rep struct {
		Summary struct {
			Interrupted string `json:"interrupted"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(readFile(t, jsonPath)), &rep); err != nil {
		t.Errorf("JSON report: %v", err)
	} else if !strings.Contains(rep.Summary.Interrupted, "interrupted by terminated") {
		t.Errorf("JSON report: interrupted %q, want it to name the signal", rep.Summary.Interrupted)
	}
	junit := readFile(t, junitPath)
	if err := wellFormedXML(junit); err != nil {
		t.Errorf("JUnit report: %v", err)
	}
	if !strings.Contains(junit, `type="interrupted"`) {
		t.Errorf("JUnit report: not marked interrupted:\n%s", junit)
	}
}

// wellFormedXML reads every token of doc to its end.
func wellFormedXML(doc string) error {
	d := xml.NewDecoder(bytes.NewReader([]byte(doc)))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
