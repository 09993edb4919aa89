package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func runMain(t *testing.T, stdin string, args ...string) (exitCode, string, string) {
	t.Helper()
	s, out, errOut := testStreams()
	s.In = strings.NewReader(stdin)
	code := Main(args, s)
	return code, out.String(), errOut.String()
}

func TestMainExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	demo, err := os.ReadFile("../../examples/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, append(append([]byte{}, demo...), "not json\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	clean := `{"transport":"http","protocolVersion":"2025-11-25","request":{"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"},"response":{"status":200,"headers":{"Content-Type":"application/json"},"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}"}}` + "\n"
	warnOnly := `{"transport":"http","protocolVersion":"2025-11-25","request":{"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}"},"response":{"status":400,"headers":{"Content-Type":"application/json"},"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"unknown tool\"}}"}}` + "\n"
	badContract := filepath.Join(dir, "badc.json")
	if err := os.WriteFile(badContract, []byte(`{"dataKey":["uri"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	unknownKey := `{"transport":"http","protocolVersion":"2025-11-25","request":{"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope/x\"}"},"response":{"status":200,"headers":{"Content-Type":"application/json"},"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"method not found\",\"data\":{\"stack\":\"x\"}}}"}}` + "\n"
	tests := []struct {
		name    string
		stdin   string
		args    []string
		want    exitCode
		wantOut string
		wantErr string
	}{
		{"version", "", []string{"version"}, exitOK, "wymcp-check " + version, ""},
		{"list", "", []string{"list"}, exitOK, "ERR3002", ""},
		{"explain", "", []string{"explain", "rpc1004"}, exitOK, "Spec:     T-RPC-5", ""},
		{"explain unknown", "", []string{"explain", "XYZ9999"}, exitUsage, "", `unknown check "XYZ9999"`},
		{"unknown command", "", []string{"frobnicate"}, exitUsage, "", "unknown command"},
		{"bad flag value", "", []string{"lint", "--format", "xml", "-"}, exitUsage, "", `"xml" is not one of human, json, junit, github`},
		{"missing contract", "", []string{"lint", "--contract", filepath.Join(dir, "nope.json"), "-"}, exitUsage, "", "--contract: reading contract"},
		{"lint clean stdin", clean, []string{"lint", "-"}, exitOK, "PASSED", ""},
		{"lint findings", "", []string{"lint", "../../examples/demo.jsonl"}, exitFindings, "FAILED", ""},
		{"lint warn passes the default gate", warnOnly, []string{"lint", "-"}, exitOK, "PASSED", ""},
		{"lint warn fails with --fail-on warn", warnOnly, []string{"lint", "--fail-on", "warn", "-"}, exitFindings, "FAILED", ""},
		{"lint bad line still reports", "", []string{"lint", bad}, exitUsage, "INVALID", "bad.jsonl:9: not valid JSON"}, // and where, and why,
		{"lint missing file", "", []string{"lint", filepath.Join(dir, "none.jsonl")}, exitUsage, "", "opening transcript"},
		// Nothing to judge fails no server, and passes no gate either.
		{"lint empty input", "", []string{"lint", "-"}, exitUsage, "INPUT PROBLEMS: -: the input holds no exchange to judge", "-: the input holds no exchange"},
		{"lint blank input", "\n\n", []string{"lint", "-"}, exitUsage, "INVALID", "holds no exchange"},
		// A recording of a run whose target went away ends as that run did.
		{"lint aborted recording", clean + `{"aborted":{"why":"target could not be driven: the server died"}}` + "\n", []string{"lint", "-"}, exitTarget, "NOT JUDGED: the recorded run was aborted: target could not be driven: the server died", ""},
		{"lint recording not aborted", clean, []string{"lint", "-"}, exitOK, "PASSED", ""},
		// The run line after blank lines is still the run's: judged under
		// its contract (spec), the unknown key in data passes.
		{"lint run line after blank lines", "\n \n" + `{ "run" : {"contract":"spec"}}` + "\n" + unknownKey, []string{"lint", "-"}, exitOK, "judged with --contract spec", ""},
		{"lint without run line", unknownKey, []string{"lint", "-"}, exitFindings, "ERR3002", ""},
		// A run line whose settings cannot be used leaves its input
		// unjudged, an input problem named with it, the report written
		// (review rev78: the run stopped as a usage error of a flag the
		// user never gave, with no report).
		{"lint run line of no check", `{"run":{"checks":"NOPE*"}}` + "\n" + unknownKey, []string{"lint", "-"}, exitUsage, "note: -: --checks: check selection", "-: --checks: check selection"},
		{"lint run line of a bad contract", `{"run":{"contract":` + strconv.Quote(badContract) + `}}` + "\n" + unknownKey, []string{"lint", "-"}, exitUsage, "the file is not judged", `unknown key "dataKey"`},
		{"lint needs a file", "", []string{"lint"}, exitUsage, "", "requires at least 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.stdin, tt.args...)
			if code != tt.want {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, out, errOut)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantOut, out)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantErr, errOut)
			}
		})
	}
}

func TestLintJSONAndOutputFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, _ := runMain(t, "", "lint", "--format", "json", "-o", out, "../../examples/demo.jsonl")
	if code != exitFindings || stdout != "" {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Version int `json:"version"`
		Results []struct {
			Fixture, Check, Area, Severity, Status, Message, Path string
		} `json:"results"`
		Summary map[string]any `json:"summary"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report is not JSON: %v", err)
	}
	if rep.Version != 1 || len(rep.Results) == 0 {
		t.Fatalf("report: %+v", rep)
	}
	found := false
	for _, r := range rep.Results {
		if r.Fixture == "wrong-id-type" && r.Check == "RPC1004" && r.Status == "fail" && r.Area == "envelope" && r.Path == "id" {
			found = true
		}
	}
	if !found {
		t.Error("the JSON report lacks RPC1004's failure on wrong-id-type")
	}
}

// TestLintInputsOwnSettings: inputs whose run lines differ are each
// judged with their own settings, as each recorded run judged; all were
// judged with lint's flags (strict), and the spec-contract recording's
// unknown data key failed. A flag the user sets still wins.
func TestLintInputsOwnSettings(t *testing.T) {
	dir := t.TempDir()
	line := `{"transport":"http","fixture":"unknown-key","protocolVersion":"2025-11-25","request":{"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope/x\"}"},"response":{"status":200,"headers":{"Content-Type":"application/json"},"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"method not found\",\"data\":{\"stack\":\"x\"}}}"}}` + "\n"
	spec, strict := filepath.Join(dir, "spec.jsonl"), filepath.Join(dir, "strict.jsonl")
	for file, run := range map[string]string{spec: `{"run":{"contract":"spec"}}`, strict: `{"run":{"contract":"strict","checks":"ERR*"}}`} {
		if err := os.WriteFile(file, []byte(run+"\n"+line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	failed := func(args ...string) []string {
		t.Helper()
		out := filepath.Join(dir, "r.json")
		runMain(t, "", append([]string{"lint", "--format", "json", "-o", out}, args...)...)
		var got []string
		for _, r := range reportResults(t, out) {
			if r.Status == "fail" {
				got = append(got, filepath.Base(r.File)+" "+r.Check)
			}
		}
		return got
	}
	if diff := cmp.Diff([]string{"strict.jsonl ERR2003", "strict.jsonl ERR3002"}, failed(spec, strict)); diff != "" {
		t.Errorf("each with its own settings: fails (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"spec.jsonl ERR2003", "spec.jsonl ERR3002", "strict.jsonl ERR2003", "strict.jsonl ERR3002"}, failed("--contract", "strict", spec, strict)); diff != "" {
		t.Errorf("--contract strict given: fails (-want +got):\n%s", diff)
	}
}

// TestLintParallelSameReport: the report of many workers is the report of
// one, byte for byte, on the recorded transcripts and the demo (line
// errors, relay traffic and facts among them).
func TestLintParallelSameReport(t *testing.T) {
	files, err := filepath.Glob("../../testdata/recorded/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded transcripts: %v", err)
	}
	files = append(files, "../../examples/demo.jsonl", "../../lint/testdata/mixed.jsonl")
	// Every writer: none may keep a verdict past the exchange, as their
	// memory is reused for the next.
	for _, format := range []string{"json", "human", "junit", "github", "html"} {
		report := func(parallel string) string {
			code, out, _ := runMain(t, "", append([]string{"lint", "--format", format, "--color", "never", "--parallel", parallel}, files...)...)
			if code != exitFindings && code != exitUsage {
				t.Fatalf("--format %s --parallel %s: exit %d", format, parallel, code)
			}
			return out
		}
		one := report("1")
		if !strings.Contains(one, "RPC1004") {
			t.Fatalf("the serial %s report lacks the demo's RPC1004 failures:\n%.2000s", format, one)
		}
		for _, p := range []string{"2", "7"} {
			if diff := cmp.Diff(one, report(p)); diff != "" {
				t.Errorf("--format %s --parallel %s report (-serial +parallel):\n%s", format, p, diff)
			}
		}
	}
}

func TestColor(t *testing.T) {
	s, _, _ := testStreams()
	s.OutTTY = true
	if !s.colorOn("auto") || s.colorOn("never") {
		t.Error("auto on a TTY colors; never does not")
	}
	s.Getenv = func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}
	if s.colorOn("auto") || !s.colorOn("always") {
		t.Error("NO_COLOR turns auto off; always wins")
	}
	s, out, _ := testStreams()
	Main([]string{"lint", "--color", "always", "../../examples/demo.jsonl"}, s)
	if !bytes.Contains(out.Bytes(), []byte("\x1b[")) {
		t.Error("--color always did not color")
	}
}

// BenchmarkLint measures lint throughput on typical error replies: a
// transcript file judged and written by the JSON writer, with and
// without schema validation, at two sizes. The file is written before
// the clock starts, so the figure is lint's alone. Bytes allocated per
// exchange and the peak heap show whether memory stays flat as the
// transcript grows; -cpu 1,2 shows what judging on more cores gives.
func BenchmarkLint(b *testing.B) {
	lines := []string{
		`{"transport":"http","protocolVersion":"2026-07-28","request":{"headers":{"Content-Type":"application/json","MCP-Protocol-Version":"2026-07-28","Mcp-Method":"tools/call","Mcp-Name":"nope"},"body":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\",\"arguments\":{},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}"},"response":{"status":200,"headers":{"Content-Type":"application/json"},"body":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"error\":{\"code\":-32602,\"message\":\"unknown tool \\\"nope\\\"\"}}"}}`,
		`{"transport":"http","request":{"headers":{"Content-Type":"application/json"},"body":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"},"response":{"status":400,"headers":{"Content-Type":"application/json"},"body":"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"parse error at offset %d\"}}"}}`,
		`{"transport":"http","protocolVersion":"2025-06-18","request":{"headers":{"Content-Type":"application/json"},"body":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":\"x\"}}}"},"response":{"status":200,"headers":{"Content-Type":"application/json"},"body":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"error\":{\"code\":-32602,\"message\":\"invalid arguments for tool add\",\"data\":{\"errors\":[{\"location\":\"/params/arguments\",\"problems\":[\"missing required property \\\"b\\\"\"]},{\"location\":\"/params/arguments/a\",\"problems\":[\"must be integer\"]}]}}}"}}`,
	}
	for _, schemaFlag := range []string{"off", "builtin"} {
		for _, n := range []int{1000, 20000} {
			b.Run(fmt.Sprintf("schema=%s/exchanges=%d", schemaFlag, n), func(b *testing.B) {
				path := writeLines(b, n, func(w io.Writer, j int) {
					fmt.Fprintf(w, lines[j%len(lines)]+"\n", j, j)
				})
				b.ReportAllocs()
				b.ResetTimer()
				var peak uint64
				for b.Loop() {
					s, _, _ := testStreams()
					s.Out = io.Discard
					stop := sampleHeap(&peak)
					code := Main([]string{"lint", "--format", "json", "--schema", schemaFlag, path}, s)
					stop()
					if code != exitOK && code != exitFindings {
						b.Fatalf("exit %d", code)
					}
				}
				b.StopTimer()
				perEx := b.Elapsed().Seconds() / float64(b.N*n)
				b.ReportMetric(1/perEx, "exchanges/s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// writeLines writes a transcript of n lines made by line to a file of
// its own and returns its path. The text is not held after: a large
// live buffer would space out the collections of the run measured and
// flatter it beside the command, whose heap holds only what it judges.
func writeLines(b *testing.B, n int, line func(w io.Writer, j int)) string {
	var file bytes.Buffer
	for j := range n {
		line(&file, j)
	}
	path := filepath.Join(b.TempDir(), "transcript.jsonl")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	runtime.GC() // the text is garbage now: it is no part of lint's heap
	return path
}

// sampleHeap records the largest heap in use until stop is called. It
// reads runtime/metrics, which does not stop the world: ReadMemStats
// every few milliseconds would cost a multi-core run more than it
// measures.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if inuse := sample[0].Value.Uint64() + sample[1].Value.Uint64(); inuse > *peak {
				*peak = inuse
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// gcSettings reads the collector's GOGC and soft memory limit.
func gcSettings() (percent, limit uint64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// TestTuneGC: lint's collector settings hold while it runs and are
// restored after; a GOGC or GOMEMLIMIT the user set is left to rule.
func TestTuneGC(t *testing.T) {
	before, beforeLimit := gcSettings()
	restore := tuneGC(func(string) string { return "" })
	p, l := gcSettings()
	restore()
	if p != lintGCPercent || l != lintMemoryLimit {
		t.Errorf("while linting: GOGC %d, limit %d; want %d, %d", p, l, lintGCPercent, lintMemoryLimit)
	}
	if p, l := gcSettings(); p != before || l != beforeLimit {
		t.Errorf("after: GOGC %d, limit %d; want %d, %d restored", p, l, before, beforeLimit)
	}
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		restore := tuneGC(func(k string) string {
			if k == env {
				return "100"
			}
			return ""
		})
		p, l := gcSettings()
		restore()
		if p != before || l != beforeLimit {
			t.Errorf("%s set: GOGC %d, limit %d while linting; want %d, %d left alone", env, p, l, before, beforeLimit)
		}
	}
}

// gcWriter records the collector's settings at each write of a report.
type gcWriter struct{ percent, limit []uint64 }

func (w *gcWriter) Write(b []byte) (int, error) {
	p, l := gcSettings()
	w.percent, w.limit = append(w.percent, p), append(w.limit, l)
	return len(b), nil
}

// TestLintTunesGC: lint runs with its collector settings, as the report
// is written, and leaves the process's as they were; with GOGC or
// GOMEMLIMIT in the environment, those rule.
func TestLintTunesGC(t *testing.T) {
	before, beforeLimit := gcSettings()
	wantP, wantL := uint64(lintGCPercent), uint64(lintMemoryLimit)
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		wantP, wantL = before, beforeLimit
	}
	s, _, _ := testStreams()
	w := &gcWriter{}
	s.Out = w
	if code := Main([]string{"lint", "--format", "json", "../../examples/demo.jsonl"}, s); code != exitFindings {
		t.Fatalf("exit %d", code)
	}
	if len(w.percent) == 0 {
		t.Fatal("no report was written")
	}
	for i := range w.percent {
		if w.percent[i] != wantP || w.limit[i] != wantL {
			t.Fatalf("write %d: GOGC %d, limit %d; want %d, %d", i, w.percent[i], w.limit[i], wantP, wantL)
		}
	}
	if p, l := gcSettings(); p != before || l != beforeLimit {
		t.Errorf("after lint: GOGC %d, limit %d; want %d, %d restored", p, l, before, beforeLimit)
	}
}

// brokenWriter fails every write, as a full disk or a closed pipe does.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestLintReportWriteFails: lint writes its report in blocks, and a
// block that cannot be written, the last one included, still fails the
// run, naming the report.
func TestLintReportWriteFails(t *testing.T) {
	for _, format := range []string{"json", "human"} {
		s, _, errOut := testStreams()
		s.Out = brokenWriter{}
		code := Main([]string{"lint", "--format", format, "../../examples/demo.jsonl"}, s)
		if code == exitOK || code == exitFindings || !strings.Contains(errOut.String(), "writing report") {
			t.Errorf("--format %s: exit %d, stderr %q; want a failure writing the report", format, code, errOut.String())
		}
	}
}
