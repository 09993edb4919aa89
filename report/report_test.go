package report_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/report"
	"github.com/wymcp/wymcp-check/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// run judges the demo transcript plus a could-not-judge exchange and
// writes it in one format.
func run(t *testing.T, format string, color, verbose, failOnWarn bool) []byte {
	t.Helper()
	f, err := os.Open("../examples/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	w, err := report.New(format, &out, color)
	if err != nil {
		t.Fatal(err)
	}
	meta := report.Meta{Tool: "wymcp-check", Version: "test", Target: "demo", Protocol: "per exchange", Contract: "strict",
		Started: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Verbose: verbose, FailOnWarn: failOnWarn}
	if err := w.Begin(meta); err != nil {
		t.Fatal(err)
	}
	var sum report.Summary
	tr := transcript.NewReader("demo", f)
	for {
		rec, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		vs := checks.Judge(checks.Input{Fixture: rec.Fixture, Exchange: &rec.Exchange}, checks.All())
		for _, v := range vs {
			sum.Add(v)
		}
		if err := w.Exchange(rec.Fixture, vs); err != nil {
			t.Fatal(err)
		}
	}
	// A hung server: every check could not judge; a hostile fixture name.
	hung := &envelope.Exchange{Transport: envelope.HTTP, Request: envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)}, Failure: "no reply within 2s"}
	vs := checks.Judge(checks.Input{Fixture: "hang\x1b[2J", Exchange: hung}, checks.All())
	for _, v := range vs {
		sum.Add(v)
	}
	if err := w.Exchange("hang\x1b[2J", vs); err != nil {
		t.Fatal(err)
	}
	sum.Notes = []string{"demo:9: not valid JSON"}
	sum.Duration = 1500 * time.Millisecond
	if err := w.End(sum); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name, format            string
		color, verbose, failOnW bool
	}{
		{"human.golden", "human", false, false, false},
		{"human-color.golden", "human", true, false, false},
		{"human-verbose.golden", "human", false, true, false},
		{"json.golden", "json", false, false, false},
		{"junit.golden", "junit", false, false, false},
		{"junit-failonwarn.golden", "junit", false, false, true},
		{"github.golden", "github", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.format, tt.color, tt.verbose, tt.failOnW)
			path := filepath.Join("testdata", tt.name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", tt.name, diff)
			}
			if !tt.color && bytes.Contains(got, []byte("\x1b")) {
				t.Errorf("%s: a raw escape byte reached the output", tt.name)
			}
		})
	}
}

func TestNewRejectsUnknownFormat(t *testing.T) {
	if _, err := report.New("sarif2", io.Discard, false); err == nil {
		t.Fatal("want an error for an unknown format")
	}
}

func TestGate(t *testing.T) {
	tests := []struct {
		s          report.Summary
		failOnWarn bool
		want       bool
	}{
		{report.Summary{Pass: 3}, false, false},
		{report.Summary{Pass: 3, Warn: 1}, false, false},
		{report.Summary{Pass: 3, Warn: 1}, true, true},
		{report.Summary{Fail: 1}, false, true},
		{report.Summary{Error: 1}, false, true},
	}
	for _, tt := range tests {
		if got := tt.s.Gate(tt.failOnWarn); got != tt.want {
			t.Errorf("Gate(%+v, %v) = %v, want %v", tt.s, tt.failOnWarn, got, tt.want)
		}
	}
}

// TestAborted: a run that judged nothing must not read like a clean one
// in any format.
func TestAborted(t *testing.T) {
	for _, format := range report.Formats() {
		var out bytes.Buffer
		w, err := report.New(format, &out, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Begin(report.Meta{Tool: "wymcp-check", Target: "x", Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
		s := report.Summary{Aborted: "target could not be driven: connection refused"}
		if err := w.End(s); err != nil {
			t.Fatal(err)
		}
		if !s.Gate(false) {
			t.Error("an aborted run passes the gate")
		}
		got := out.String()
		if !strings.Contains(got, "connection refused") {
			t.Errorf("%s: the reason is missing:\n%s", format, got)
		}
		if format == "human" && strings.Contains(got, "PASSED") {
			t.Errorf("human report says PASSED:\n%s", got)
		}
		if format == "junit" && !strings.Contains(got, `errors="1"`) {
			t.Errorf("junit report has no error:\n%s", got)
		}
	}
}
