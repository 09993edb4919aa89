package report_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
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

// A scenario is one way a run reaches the writers.
type scenario struct {
	lint     bool // results come from transcript records: file and line, no times
	baseline bool // some failures are known, and two baseline entries are stale
}

// knownFailures is the baseline of the baseline scenario.
var knownFailures = map[string]string{
	"garbage ERR1002":       "the SDK maps every decode failure to -32600 (issue 12)",
	"wrong-id-type RPC1004": "ids are normalised to integers by the proxy",
}

// results judges the demo transcript plus a could-not-judge exchange.
func results(t testing.TB, sc scenario, failOnWarn bool) ([]*report.Result, report.Summary) {
	t.Helper()
	f, err := os.Open("../examples/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*report.Result
	var sum report.Summary
	add := func(r *report.Result) {
		for _, v := range r.Verdicts {
			sum.Add(v)
			reason, ok := knownFailures[r.Fixture+" "+v.Check.ID]
			if sc.baseline && ok && report.Gates(v.Status, failOnWarn) {
				if r.Known == nil {
					r.Known = map[string]string{}
				}
				r.Known[v.Check.ID] = reason
				sum.Known++
			}
		}
		if !sc.lint {
			r.Timed, r.Duration = true, time.Duration(len(out)+1)*1500*time.Microsecond
		}
		out = append(out, r)
	}
	tr := transcript.NewReader("demo", f)
	for {
		rec, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		r := &report.Result{Fixture: rec.Fixture, Exchange: &rec.Exchange,
			Verdicts: checks.Judge(checks.Input{Fixture: rec.Fixture, Exchange: &rec.Exchange}, checks.All())}
		if sc.lint {
			r.File, r.Line = "examples/demo.jsonl", rec.Line
		}
		add(r)
	}
	// A hung server: every check could not judge; a hostile fixture name.
	hung := &envelope.Exchange{Transport: envelope.HTTP, Request: envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)}, Failure: "no reply within 2s"}
	r := &report.Result{Fixture: "hang\x1b[2J", Exchange: hung, Verdicts: checks.Judge(checks.Input{Fixture: "hang", Exchange: hung}, checks.All())}
	if sc.lint {
		r.File, r.Line = "examples/demo.jsonl", 10
	}
	add(r)
	sum.Notes = []string{"demo:9: not valid JSON"}
	sum.Duration = 1500 * time.Millisecond
	if !sc.lint {
		sum.Protocol, sum.Negotiation = "2026-07-28", "auto: server/discover lists 2026-07-28"
		// The demo's exchanges, as fixtures citing the rules they probe.
		cov := report.NewCoverageTracker(map[string][]string{
			"discover": {"T-LIFE-8"}, "unknown-method": {"T-ERR-3", "T-HTTP-9"}, "garbage": {"T-ERR-1"},
			"unknown-tool-echo": {"T-TOOL-6"}, "wrong-id-type": {"T-RPC-5"}, "text-plain": {"T-COMPAT-1"},
			"unknown-tool-400": {"T-HTTP-11"}, "hang": {"T-RPC-6"}, "tools/list": {"T-TOOL-2"},
		}, checks.All())
		for _, r := range out {
			cov.Add(r)
		}
		cov.Add(&report.Result{Fixture: "tools/list", Verdicts: []checks.Verdict{{Fixture: "tools/list", Check: checks.All()[0], Status: checks.StatusSkip, Reason: "the server lists no tools"}}})
		sum.Coverage = cov.Summary("2026-07-28", "http")
	}
	if sc.baseline {
		sum.Stale = []report.Stale{
			{Fixture: "text-plain", Check: "ERR2001", Reason: "message had a newline | <b>until v2</b>"},
			{Fixture: "unknown-tool-400", Check: "HTTP1002", Reason: "status 400 for unknown tools"},
		}
	}
	return out, sum
}

var testMeta = report.Meta{Tool: "wymcp-check", Version: "test", Target: "demo", Protocol: "per exchange", Contract: "strict",
	Started: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}

// run writes a scenario in one format; the github format's step summary
// follows its annotations after a separator line.
func run(t *testing.T, format string, sc scenario, color, verbose, failOnWarn bool) []byte {
	t.Helper()
	var out, summary bytes.Buffer
	w, err := report.New(format, &out, report.Options{Color: color, StepSummary: &summary})
	if err != nil {
		t.Fatal(err)
	}
	meta := testMeta
	meta.Verbose, meta.FailOnWarn = verbose, failOnWarn
	if sc.baseline {
		meta.Baseline = "known-failures.txt"
	}
	if err := w.Begin(meta); err != nil {
		t.Fatal(err)
	}
	rs, sum := results(t, sc, failOnWarn)
	for _, r := range rs {
		if err := w.Exchange(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(sum); err != nil {
		t.Fatal(err)
	}
	if summary.Len() > 0 {
		out.WriteString("--- step summary ---\n")
		out.Write(summary.Bytes())
	}
	return out.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
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
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestGolden(t *testing.T) {
	scenarios := map[string]scenario{"run": {}, "lint": {lint: true}, "baseline": {baseline: true}}
	type variant struct {
		name, format, scenario  string
		color, verbose, failOnW bool
	}
	var tests []variant
	for _, format := range report.Formats() {
		for _, sc := range []string{"run", "lint", "baseline"} {
			tests = append(tests, variant{name: format + "-" + sc + ".golden", format: format, scenario: sc})
		}
	}
	tests = append(tests,
		variant{"human-color.golden", "human", "run", true, false, false},
		variant{"human-verbose.golden", "human", "run", false, true, false},
		variant{"junit-failonwarn.golden", "junit", "run", false, false, true},
		variant{"github-failonwarn.golden", "github", "run", false, false, true},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.format, scenarios[tt.scenario], tt.color, tt.verbose, tt.failOnW)
			golden(t, tt.name, got)
			if !tt.color && bytes.Contains(got, []byte("\x1b")) {
				t.Errorf("%s: a raw escape byte reached the output", tt.name)
			}
		})
	}
}

func TestNewRejectsUnknownFormat(t *testing.T) {
	if _, err := report.New("sarif2", io.Discard, report.Options{}); err == nil {
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
		{report.Summary{Fail: 2, Known: 2}, false, false},
		{report.Summary{Fail: 2, Error: 1, Known: 2}, false, true},
		{report.Summary{Fail: 1, Warn: 1, Known: 1}, true, true},
		{report.Summary{Fail: 1, Warn: 1, Known: 2}, true, false},
		{report.Summary{Pass: 3, Stale: []report.Stale{{Fixture: "a", Check: "RPC1001"}}}, false, true},
		{report.Summary{Aborted: "refused"}, false, true},
		{report.Summary{Pass: 3, Invalid: "1 input problem"}, false, true},
	}
	for _, tt := range tests {
		if got := tt.s.Gate(tt.failOnWarn); got != tt.want {
			t.Errorf("Gate(%+v, %v) = %v, want %v", tt.s, tt.failOnWarn, got, tt.want)
		}
	}
}

// TestNotClean: a run that judged nothing, one stopped early and one
// whose input was in part unusable must not read like a clean run in any
// format: each says why, and none says passed.
func TestNotClean(t *testing.T) {
	for _, tt := range []struct {
		name, why string
		sum       report.Summary
	}{
		{"aborted", "connection refused", report.Summary{Pass: 2, Aborted: "target could not be driven: connection refused"}},
		{"interrupted", "SIGINT", report.Summary{Pass: 2, Interrupted: "SIGINT; no fixture was sent after it"}},
		{"invalid", "bad.jsonl:3", report.Summary{Pass: 2, Invalid: "1 input problem (bad.jsonl:3, in the notes); the rest was judged"}},
	} {
		if !tt.sum.Gate(false) {
			t.Errorf("%s: passes the gate", tt.name)
		}
		for _, format := range report.Formats() {
			var out bytes.Buffer
			w, err := report.New(format, &out, report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Begin(report.Meta{Tool: "wymcp-check", Target: "x", Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
				t.Fatal(err)
			}
			if err := w.End(tt.sum); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if !strings.Contains(got, tt.why) {
				t.Errorf("%s, %s: the reason is missing:\n%s", tt.name, format, got)
			}
			if strings.Contains(got, "PASSED") || strings.Contains(got, `"passed"`) {
				t.Errorf("%s, %s report says passed:\n%s", tt.name, format, got)
			}
			if format == "junit" && !strings.Contains(got, `errors="1"`) {
				t.Errorf("%s: junit report has no error:\n%s", tt.name, got)
			}
			if format == "json" && !strings.Contains(got, `"gate":"`+tt.name+`"`) {
				t.Errorf("%s: json gate is not %q:\n%s", tt.name, tt.name, got)
			}
		}
	}
}

// TestTee: every writer of a tee gets the run, even after one fails.
func TestTee(t *testing.T) {
	var a, b bytes.Buffer
	wa, _ := report.New("json", &a, report.Options{})
	wb, _ := report.New("human", &b, report.Options{})
	broken, _ := report.New("json", failingWriter{}, report.Options{})
	w := report.Tee(wa, broken, wb)
	err := w.Begin(testMeta)
	if err == nil {
		t.Error("a failing writer's error is lost")
	}
	rs, sum := results(t, scenario{}, false)
	for _, r := range rs {
		w.Exchange(r)
	}
	w.End(sum)
	if !strings.Contains(a.String(), `"gate":"failed"`) || !strings.Contains(b.String(), "FAILED") {
		t.Errorf("a writer after the failing one did not get the whole run:\n%s\n%s", a.String(), b.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// writeRun writes rs and sum as a run of format to out, with o.
func writeRun(t *testing.T, format string, out io.Writer, o report.Options, rs []*report.Result, sum report.Summary) {
	t.Helper()
	w, err := report.New(format, out, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Begin(testMeta); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := w.Exchange(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(sum); err != nil {
		t.Fatal(err)
	}
}

// TestJUnitFileIsPatched: written to a file, the JUnit report streams
// and its header's totals are filled in at the end; the document is the
// buffered one with padding in the start tag.
func TestJUnitFileIsPatched(t *testing.T) {
	buffered := run(t, "junit", scenario{}, false, false, false)
	f, err := os.Create(filepath.Join(t.TempDir(), "r.xml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, sum := results(t, scenario{}, false)
	writeRun(t, "junit", f, report.Options{}, rs, sum)
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(got), "\n")
	if !strings.HasSuffix(lines[1], "  >\n") {
		t.Errorf("the header is not padded: %q", lines[1])
	}
	lines[1] = strings.TrimRight(strings.TrimSuffix(lines[1], ">\n"), " ") + ">\n"
	if diff := cmp.Diff(string(buffered), strings.Join(lines, "")); diff != "" {
		t.Errorf("file output differs from buffered output (-buffered +file):\n%s", diff)
	}
	if err := xml.Unmarshal(got, new(struct{})); err != nil {
		t.Errorf("patched file is not XML: %v", err)
	}
}

// TestJUnitSpooled: written to a stream that cannot be rewritten in
// place, with a spool, the JUnit report's suites wait in the spool, and
// the document is the one buffered in memory.
func TestJUnitSpooled(t *testing.T) {
	buffered := run(t, "junit", scenario{}, false, false, false)
	spool, err := os.Create(filepath.Join(t.TempDir(), "spool"))
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	var out bytes.Buffer
	rs, sum := results(t, scenario{}, false)
	writeRun(t, "junit", &out, report.Options{Spool: spool}, rs, sum)
	if info, err := spool.Stat(); err != nil || info.Size() < int64(out.Len())/2 {
		t.Errorf("the suites did not wait in the spool: %v, %v; the report is %d bytes", info, err, out.Len())
	}
	if diff := cmp.Diff(string(buffered), out.String()); diff != "" {
		t.Errorf("spooled output differs from buffered output (-buffered +spooled):\n%s", diff)
	}
}

// fullSpool is a spool that takes limit bytes and fails after (a small
// tmpfs filling up), part of a write included.
type fullSpool struct {
	data  []byte
	limit int
	at    int
}

func (s *fullSpool) Write(p []byte) (int, error) {
	n := min(len(p), s.limit-len(s.data))
	s.data = append(s.data, p[:n]...)
	if n < len(p) {
		return n, errors.New("no space left on device")
	}
	return n, nil
}

func (s *fullSpool) Read(p []byte) (int, error) {
	if s.at >= len(s.data) {
		return 0, io.EOF
	}
	n := copy(p, s.data[s.at:])
	s.at += n
	return n, nil
}

func (s *fullSpool) Seek(off int64, whence int) (int64, error) {
	if off != 0 || whence != io.SeekStart {
		return 0, errors.New("only a rewind")
	}
	s.at = 0
	return 0, nil
}

// TestJUnitSpoolFills: a spool that fails part way (a write cut short)
// loses nothing: what it holds moves to memory, and the document is the
// one buffered in memory from the start.
func TestJUnitSpoolFills(t *testing.T) {
	rs, sum := results(t, scenario{}, false)
	// Repeated past two of the writer's 64 KB blocks, so that a spool
	// may fail on a later block as well as on the first.
	var many []*report.Result
	for range 4 {
		many = append(many, rs...)
	}
	write := func(o report.Options) string {
		var out bytes.Buffer
		writeRun(t, "junit", &out, o, many, sum)
		return out.String()
	}
	buffered := write(report.Options{})
	if len(buffered) < 150<<10 {
		t.Fatalf("the report is %d bytes: too short to fill two blocks", len(buffered))
	}
	for _, limit := range []int{0, 1000, 70 << 10, 150 << 10, 1 << 20} {
		spool := &fullSpool{limit: limit}
		if diff := cmp.Diff(buffered, write(report.Options{Spool: spool})); diff != "" {
			t.Errorf("limit %d: output differs from buffered output (-buffered +spooled):\n%s", limit, diff)
		}
		if limit == 1<<20 && len(spool.data) == 0 {
			t.Errorf("a spool with room held nothing")
		}
	}
}

// TestFindingRules: the rules a JSON row links a finding to, read as the
// coverage table reads them (testdata/finding-rules.json), all in one
// report, so that what the writer remembers of one finding never answers
// for another.
func TestFindingRules(t *testing.T) {
	raw, err := os.ReadFile("testdata/finding-rules.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name, Check, Rule, Message, Spec string
		Status                           checks.Status // fail unless given
		Transport, Version               string        // the exchange's, when given
		Cited                            []string      // the fixture's rules, when known
		Want                             []string
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatalf("testdata/finding-rules.json: %v", err)
	}
	var out bytes.Buffer
	w, _ := report.New("json", &out, report.Options{})
	if err := w.Begin(testMeta); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		ch := checks.Lookup(c.Check)
		if ch == nil {
			t.Fatalf("%s: no check %s", c.Name, c.Check)
		}
		st := c.Status
		if st == "" {
			st = checks.StatusFail
		}
		f := checks.Finding{Status: st, Path: "x", Message: c.Message, Rule: c.Rule, Spec: checks.Status(c.Spec)}
		v := checks.Verdict{Fixture: fmt.Sprintf("case-%d", i), Check: ch, Status: st, Findings: []checks.Finding{f}}
		res := &report.Result{Fixture: v.Fixture, Verdicts: []checks.Verdict{v}, Cited: c.Cited}
		if c.Transport != "" || c.Version != "" {
			res.Exchange = &envelope.Exchange{Transport: c.Transport, Version: c.Version}
		}
		if err := w.Exchange(res); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(report.Summary{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []struct {
			Fixture string
			Rules   []string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range doc.Results {
		got[r.Fixture] = r.Rules
	}
	for i, c := range cases {
		if diff := cmp.Diff(c.Want, got[fmt.Sprintf("case-%d", i)]); diff != "" {
			t.Errorf("%s: rules (-want +got):\n%s", c.Name, diff)
		}
	}
}

// TestNoTerminalControls: a server's text reaches a report through a
// fixture name (a tool's property), a finding's path (a data key), a
// reason and a note. No format writes a C0 or C1 control character raw
// (U+009B is CSI to a terminal that shows the report with cat), nor a
// format character (Cf: a bidi override such as U+202E shows the text
// after it reversed, "ok\u202etxt.exe" reads as "okexe.txt"; a zero
// width space or a tag character hides text); the JSON report still
// reads back to the same text.
func TestNoTerminalControls(t *testing.T) {
	const hostile = "t\x1b]0;title\x07\x1b[31m\u009b31m\u0085 ok\u202etxt.exe \u200b\u200f\u202a\u2066\u2069\ufeff\u00ad\U000e0041"
	c := checks.All()[0]
	r := &report.Result{Fixture: "tools/args/" + hostile, File: "dir/" + hostile + ".jsonl", Line: 3, Verdicts: []checks.Verdict{
		{Fixture: "tools/args/" + hostile, Check: c, Status: checks.StatusFail, Findings: []checks.Finding{{Status: checks.StatusFail, Path: "error.data." + hostile, Message: "key " + hostile}}},
		{Fixture: "tools/args/" + hostile, Check: checks.All()[1], Status: checks.StatusError, Reason: "reading " + hostile},
	}}
	sum := report.Summary{Fail: 1, Error: 1, Notes: []string{"server stderr: " + hostile}}
	c1 := regexp.MustCompile(`[\x00-\x08\x0b-\x1f\x7f\x{80}-\x{9f}\p{Cf}]`)
	for _, format := range report.Formats() {
		var out bytes.Buffer
		w, err := report.New(format, &out, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		meta := testMeta
		meta.Verbose = true
		if err := w.Begin(meta); err != nil {
			t.Fatal(err)
		}
		if err := w.Exchange(r); err != nil {
			t.Fatal(err)
		}
		if err := w.End(sum); err != nil {
			t.Fatal(err)
		}
		if loc := c1.FindIndex(out.Bytes()); loc != nil {
			t.Errorf("%s: a raw control character at byte %d: %q", format, loc[0], out.Bytes()[max(0, loc[0]-40):loc[1]])
		}
		if format != "json" {
			continue
		}
		var got struct {
			Results []struct{ Fixture, Path, Message string }
			Summary struct{ Notes []string }
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("json: %v", err)
		}
		if len(got.Results) == 0 || got.Results[0].Fixture != r.Fixture || got.Results[0].Path != "error.data."+hostile || got.Results[0].Message != "key "+hostile {
			t.Errorf("json: results %+v, want the fixture, path and message as they were", got.Results)
		}
		if len(got.Summary.Notes) != 1 || got.Summary.Notes[0] != sum.Notes[0] {
			t.Errorf("json: notes %q, want %q", got.Summary.Notes, sum.Notes)
		}
		// The escapes are encoding/json's spelling: lower-case hex, a
		// character past U+FFFF as its UTF-16 surrogate pair.
		for _, esc := range []string{`ok\u202etxt.exe`, `\u200b\u200f\u202a\u2066\u2069\ufeff\u00ad\udb40\udc41`} {
			if !strings.Contains(out.String(), esc) {
				t.Errorf("json: no %s in\n%s", esc, out.String())
			}
		}
	}
}
