package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgress: on a terminal the line counts fixtures and names the
// slowest in flight, redrawn in place and erased at the end; off a
// terminal, or in CI, nothing is drawn.
func TestProgress(t *testing.T) {
	s, _, errOut := testStreams()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return clock }
	if p := newProgress(s, 3); p != nil {
		t.Fatal("a progress line on a stderr that is not a terminal")
	}
	s.ErrTTY = true
	s.Getenv = func(k string) string {
		if k == "CI" {
			return "true"
		}
		return ""
	}
	if p := newProgress(s, 3); p != nil {
		t.Fatal("a progress line in CI")
	}
	s.Getenv = func(string) string { return "" }
	p := newProgress(s, 3)
	p.Started("a/slow")
	clock = clock.Add(time.Second)
	p.Started("b/fast")
	clock = clock.Add(1500 * time.Millisecond)
	p.Finished("b/fast")
	got := errOut.String()
	if want := "1/3 fixtures, slowest in flight: a/slow (2.5s)"; !strings.Contains(got, want) {
		t.Errorf("progress %q, want it to contain %q", got, want)
	}
	p.end()
	if !strings.HasSuffix(errOut.String(), "\r") || !bytes.Contains(errOut.Bytes(), []byte("\r     ")) {
		t.Errorf("the line was not erased at the end: %q", errOut.String())
	}
}
