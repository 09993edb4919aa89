package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/wymcp/wymcp-check/report"
)

// runEnv is runMain with an environment.
func runEnv(t *testing.T, env map[string]string, args ...string) (exitCode, string, string) {
	t.Helper()
	s, out, errOut := testStreams()
	s.Getenv = func(k string) string { return env[k] }
	code := Main(args, s)
	return code, out.String(), errOut.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSeveralReports: one run, the human report on stdout and every
// other format in its file, GitHub annotations beside the human report
// and the step summary in the file $GITHUB_STEP_SUMMARY names.
func TestSeveralReports(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	os.WriteFile(p("summary.md"), []byte("earlier step\n"), 0o644)
	code, out, errOut := runEnv(t, map[string]string{"GITHUB_STEP_SUMMARY": p("summary.md")},
		"check", "--demo", "--demo-fault", "wrong-id",
		"--report", "junit="+p("r.xml"), "--report", "json="+p("r.json"), "--report", "html="+p("r.html"), "--report", "github")
	if code != exitFindings {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFindings, out, errOut)
	}
	for _, want := range []string{"FAIL id/string", "RPC1004  fails in 1 fixture", "::error title=RPC1004 fails in 1 fixture", "::notice title=wymcp-check FAILED::"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Time      string `xml:"time,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(readFile(t, p("r.xml"))), &suites); err != nil {
		t.Fatalf("junit: %v", err)
	}
	seen := map[string]bool{}
	cases := 0
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			id := c.Classname + " " + c.Name
			if seen[id] || c.Time == "" {
				t.Errorf("junit: test case %q repeated or without time", id)
			}
			seen[id] = true
			cases++
		}
	}
	if suites.Tests != cases || suites.Failures != 1 || !seen["id/string RPC1004"] {
		t.Errorf("junit totals: tests=%d (cases %d), failures=%d", suites.Tests, cases, suites.Failures)
	}
	validateJSONReport(t, []byte(readFile(t, p("r.json"))))
	if h := readFile(t, p("r.html")); !strings.Contains(h, `class="verdict failed">FAILED`) || !strings.Contains(h, "id/string") {
		t.Errorf("html report lacks the verdict or the fixture")
	}
	sum := readFile(t, p("summary.md"))
	if !strings.HasPrefix(sum, "earlier step\n") || !strings.Contains(sum, "## ❌ wymcp-check: FAILED") || !strings.Contains(sum, "**RPC1004**") {
		t.Errorf("step summary not appended as expected:\n%s", sum)
	}
}

// TestOutputsNeverOverwriteInputs: a report, a recording or a baseline
// written over a file the run reads, or over another output, however
// the path is spelled, is a usage error before anything is written; the
// input is left whole.
func TestOutputsNeverOverwriteInputs(t *testing.T) {
	dir := t.TempDir()
	transcript := filepath.Join(dir, "demo.jsonl")
	raw := readFile(t, "../../examples/demo.jsonl")
	contract := filepath.Join(dir, "contract.json")
	base := filepath.Join(dir, "known.txt")
	for p, body := range map[string]string{transcript: raw, contract: `{"extends":"strict"}`, base: ""} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(transcript, link); err != nil {
		t.Fatal(err)
	}
	dotted := filepath.Join(dir, ".", "demo.jsonl")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"lint", transcript, "-o", transcript}, "-o " + transcript + " is also read (transcript " + transcript + "): writing it would destroy it"},
		{[]string{"lint", transcript, "-o", dotted}, "is also read (transcript " + transcript + ")"},
		{[]string{"lint", transcript, "--report", "json=" + link}, "--report " + link + " is also read"},
		{[]string{"lint", transcript, "--contract", contract, "--report", "html=" + contract}, "is also read (--contract " + contract + ")"},
		{[]string{"lint", transcript, "--baseline", base, "-o", base}, "is also read (--baseline " + base + ")"},
		{[]string{"check", "--demo", "--record", transcript, "-o", dotted}, "is written twice (-o " + dotted + ", --record " + transcript + ")"},
		{[]string{"check", "--demo", "--write-baseline", transcript, "--report", "json=" + link}, "is written twice"},
		{[]string{"wrap", "--report", filepath.Join(dir, "w.txt"), "--log", filepath.Join(dir, ".", "w.txt"), "--", "true"}, "is written twice (--report " + filepath.Join(dir, "w.txt")},
	}
	for _, tt := range tests {
		code, out, errOut := runMain(t, "", tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut, tt.want)
		}
		if out != "" {
			t.Errorf("%v: a report was started before the usage error: %q", tt.args, out)
		}
	}
	if got := readFile(t, transcript); got != raw {
		t.Errorf("the transcript was changed (%d bytes, want %d)", len(got), len(raw))
	}
	// The baseline a run reads is the one it may rewrite.
	if code, _, errOut := runMain(t, "", "lint", transcript, "--baseline", base, "--write-baseline", base); code == exitUsage {
		t.Errorf("--baseline and --write-baseline of one file: exit 2, %s", errOut)
	}
}

func TestReportFlagErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--report", "xml=" + filepath.Join(dir, "a")}, `format "xml" is not one of`},
		{[]string{"--report", "json"}, "want json=PATH"},
		{[]string{"--report", "json="}, "the path is empty"},
		{[]string{"--report", "json=" + filepath.Join(dir, "a"), "--report", "html=" + filepath.Join(dir, "a")}, "is written twice"},
		{[]string{"--format", "github", "--report", "github"}, "github is written twice"},
		{[]string{"--report", "json=" + filepath.Join(dir, "no", "such", "dir", "r.json")}, "report json:"},
	}
	for _, tt := range tests {
		code, out, errOut := runMain(t, "", append([]string{"check", "--demo"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut, tt.want)
		}
		if out != "" {
			t.Errorf("%v: a report was started before the usage error: %q", tt.args, out)
		}
	}
}

// TestBaselineWorkflow: write the failures of a faulty server as a
// baseline; with it the same run passes and says what is known; once the
// server is fixed the entry is stale and fails the gate; a run of other
// fixtures leaves it alone.
func TestBaselineWorkflow(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "known.txt")
	fault := []string{"check", "--demo", "--demo-fault", "wrong-id"}

	code, out, errOut := runMain(t, "", append(fault, "--write-baseline", base)...)
	if code != exitFindings {
		t.Fatalf("writing: exit %d\n%s%s", code, out, errOut)
	}
	got := readFile(t, base)
	if m := regexp.MustCompile(`\nid/string RPC1004 id: id is integer (\d+), want string "(\d+)"\n`).FindStringSubmatch(got); m == nil || m[1] != m[2] {
		t.Fatalf("baseline written:\n%s", got)
	}

	code, out, _ = runMain(t, "", append(fault, "--baseline", base)...)
	if code != exitOK || !strings.Contains(out, "KNOWN id/string") || !strings.Contains(out, "baseline: 1 known, 0 stale") {
		t.Errorf("with the baseline: exit %d, want 0 with the failure known:\n%s", code, out)
	}

	code, out, _ = runMain(t, "", "check", "--demo", "--baseline", base)
	if code != exitFindings || !strings.Contains(out, "1 stale baseline entry") || !strings.Contains(out, "id/string RPC1004") {
		t.Errorf("fixed server: exit %d, want 1 with a stale entry:\n%s", code, out)
	}

	code, out, _ = runMain(t, "", "check", "--demo", "--run", "headers/*", "--baseline", base)
	if code != exitOK || !strings.Contains(out, "not judged in this run") {
		t.Errorf("other fixtures: exit %d, want 0 and the entry noted as not judged:\n%s", code, out)
	}

	// Rewriting keeps the reasons a person wrote.
	os.WriteFile(base, []byte("id/string RPC1004 ids are normalised by our proxy (issue 7)\n"), 0o644)
	if code, _, _ := runMain(t, "", append(fault, "--baseline", base, "--write-baseline", base)...); code != exitOK {
		t.Errorf("rewrite: exit %d", code)
	}
	if got := readFile(t, base); !strings.Contains(got, "id/string RPC1004 ids are normalised by our proxy (issue 7)\n") {
		t.Errorf("the reason was not kept:\n%s", got)
	}
}

func TestBaselineProblems(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "known.txt")
	os.WriteFile(base, []byte("id/string RPC1004 known\nid/string NOPE1234 a check that does not exist\n"), 0o644)
	js := filepath.Join(dir, "r.json")
	code, out, errOut := runMain(t, "", "check", "--demo", "--demo-fault", "wrong-id", "--baseline", base, "--report", "json="+js)
	if code != exitUsage {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(errOut, "known.txt:2: unknown check \"NOPE1234\"") {
		t.Errorf("stderr does not name file, line and cause: %s", errOut)
	}
	// The run went on with the good line, and the report was written.
	if !strings.Contains(out, "KNOWN id/string") || !strings.Contains(readFile(t, js), `"known":1`) {
		t.Errorf("the good entry was not used:\n%s", out)
	}
	// A run that could not drive its target leaves the baseline alone.
	kept := filepath.Join(dir, "kept.txt")
	os.WriteFile(kept, []byte("id/string RPC1004 known\n"), 0o644)
	if code, out, _ := runMain(t, "", "check", "--timeout", "2s", "--baseline", kept, "--write-baseline", kept, "http://127.0.0.1:1/mcp"); code != exitTarget || !strings.Contains(out, "not written, the run judged nothing") {
		t.Errorf("aborted run: exit %d:\n%s", code, out)
	}
	if got := readFile(t, kept); got != "id/string RPC1004 known\n" {
		t.Errorf("an aborted run rewrote the baseline:\n%s", got)
	}
	code, out, errOut = runMain(t, "", "check", "--demo", "--baseline", filepath.Join(dir, "none.txt"))
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--baseline: reading baseline") {
		t.Errorf("missing file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// validateJSONReport holds a JSON report to report.schema.json.
func validateJSONReport(t *testing.T, raw []byte) {
	t.Helper()
	if err := jsonReportSchema(t).Validate(mustJSON(t, raw)); err != nil {
		t.Errorf("the JSON report does not match report.schema.json: %v", err)
	}
}

func jsonReportSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(report.JSONSchema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("report.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("report.schema.json")
	if err != nil {
		t.Fatalf("report.schema.json does not compile: %v", err)
	}
	return s
}

func mustJSON(t *testing.T, raw []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, raw)
	}
	return v
}

// TestJSONReportSchema: real reports of live runs and of lint match the
// schema kept in the repository, and the schema has teeth.
func TestJSONReportSchema(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "known.txt")
	os.WriteFile(base, []byte("id/string RPC1004 known\nrpc/garbage RPC1001 stale on purpose\n"), 0o644)
	// (Two inputs are two files: one named twice is refused.)
	second := filepath.Join(dir, "again.jsonl")
	os.WriteFile(second, []byte(readFile(t, "../../examples/demo.jsonl")), 0o644)
	tests := []struct {
		name string
		args []string
		want exitCode
	}{
		{"demo", []string{"check", "--demo"}, exitOK},
		{"demo with fault and baseline", []string{"check", "--demo", "--demo-fault", "wrong-id", "--baseline", base, "--protocol", "2025-11-25"}, exitFindings},
		{"lint", []string{"lint", "../../examples/demo.jsonl"}, exitFindings},
		{"lint two files", []string{"lint", "../../examples/demo.jsonl", second}, exitFindings},
		{"aborted", []string{"check", "--timeout", "2s", "http://127.0.0.1:1/mcp"}, exitTarget},
	}
	var last []byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".json")
			code, stdout, errOut := runMain(t, "", append(tt.args, "--report", "json="+out)...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.want, stdout, errOut)
			}
			raw := []byte(readFile(t, out))
			validateJSONReport(t, raw)
			var rep struct {
				ProtocolVersion string `json:"protocolVersion"`
				Results         []struct {
					DurationMs *float64 `json:"durationMs"`
					Line       int      `json:"line"`
				} `json:"results"`
			}
			json.Unmarshal(raw, &rep)
			live := tt.args[0] == "check" && tt.want != exitTarget
			if live && (rep.ProtocolVersion == "" || len(rep.Results) == 0 || rep.Results[0].DurationMs == nil) {
				t.Errorf("a live run's report lacks the negotiated protocol or durations: %.300s", raw)
			}
			if tt.args[0] == "lint" && (len(rep.Results) == 0 || rep.Results[0].Line == 0 || rep.Results[0].DurationMs != nil) {
				t.Errorf("a lint report lacks file and line, or claims a duration: %.300s", raw)
			}
			last = raw
		})
	}
	// A report with a field the schema does not know, or a status it
	// does not allow, is refused.
	s := jsonReportSchema(t)
	for _, bad := range []string{
		strings.Replace(string(last), `"version":1,`, `"version":1,"extra":true,`, 1),
		strings.Replace(string(last), `"gate":"aborted"`, `"gate":"maybe"`, 1),
	} {
		if bad == string(last) {
			t.Fatal("the mutation did not apply")
		}
		if s.Validate(mustJSON(t, []byte(bad))) == nil {
			t.Errorf("the schema accepts a malformed report: %.200s", bad)
		}
	}
}

// spoolWatch is a stdout that, when the report first reaches it, notes
// the spool files in dir and their sizes.
type spoolWatch struct {
	bytes.Buffer
	dir    string
	seen   bool
	spools map[string]int64
}

func (w *spoolWatch) Write(p []byte) (int, error) {
	if !w.seen {
		w.seen, w.spools = true, map[string]int64{}
		entries, _ := os.ReadDir(w.dir)
		for _, e := range entries {
			if info, err := e.Info(); err == nil {
				w.spools[e.Name()] = info.Size()
			}
		}
	}
	return w.Buffer.Write(p)
}

// TestJUnitStdoutSpooled: a JUnit report on stdout, which cannot be
// rewritten in place, waits in a temporary file in $TMPDIR, not in
// memory (a long transcript's report runs to gigabytes). The document is
// the one written to a file (less the header's padding), and the spool
// is gone after the run.
func TestJUnitStdoutSpooled(t *testing.T) {
	files, err := filepath.Glob("../../testdata/recorded/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded transcripts: %v", err)
	}
	tmp, dir := t.TempDir(), t.TempDir()
	s, _, _ := testStreams()
	s.Getenv = func(k string) string { return map[string]string{"TMPDIR": tmp}[k] }
	out := &spoolWatch{dir: tmp}
	s.Out = out
	if code := Main(append([]string{"lint", "--format", "junit"}, files...), s); code != exitFindings {
		t.Fatalf("lint to stdout: exit %d", code)
	}
	var spooled int64
	for name, size := range out.spools {
		if strings.HasPrefix(name, "wymcp-check-junit-") {
			spooled += size
		}
	}
	if spooled < int64(out.Len())/2 {
		t.Errorf("the suites were not spooled: at the first write to stdout $TMPDIR held %v; the report is %d bytes", out.spools, out.Len())
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the spool was left behind: %v", left)
	}
	file := filepath.Join(dir, "r.xml")
	if code, _, _ := runMain(t, "", append([]string{"lint", "--format", "junit", "-o", file}, files...)...); code != exitFindings {
		t.Fatalf("lint -o: exit %d", code)
	}
	lines := strings.SplitAfter(readFile(t, file), "\n")
	lines[1] = strings.TrimRight(strings.TrimSuffix(lines[1], ">\n"), " ") + ">\n"
	if diff := cmp.Diff(strings.Join(lines, ""), out.String()); diff != "" {
		t.Errorf("stdout report differs from the file's (-file +stdout):\n%s", diff)
	}
	if err := xml.Unmarshal(out.Bytes(), new(struct{})); err != nil {
		t.Errorf("stdout report is not XML: %v", err)
	}
}

// TestJUnitStdoutNoSpool: where no spool can be made ($TMPDIR missing),
// a JUnit report on stdout is held in memory and written whole, the one
// written to a file.
func TestJUnitStdoutNoSpool(t *testing.T) {
	files, err := filepath.Glob("../../testdata/recorded/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded transcripts: %v", err)
	}
	dir := t.TempDir()
	code, out, errOut := runEnv(t, map[string]string{"TMPDIR": filepath.Join(dir, "missing")}, append([]string{"lint", "--format", "junit"}, files...)...)
	if code != exitFindings {
		t.Fatalf("lint to stdout without a spool: exit %d: %s", code, errOut)
	}
	file := filepath.Join(dir, "r.xml")
	if code, _, _ := runMain(t, "", append([]string{"lint", "--format", "junit", "-o", file}, files...)...); code != exitFindings {
		t.Fatalf("lint -o: exit %d", code)
	}
	lines := strings.SplitAfter(readFile(t, file), "\n")
	lines[1] = strings.TrimRight(strings.TrimSuffix(lines[1], ">\n"), " ") + ">\n"
	if diff := cmp.Diff(strings.Join(lines, ""), out); diff != "" {
		t.Errorf("stdout report differs from the file's (-file +stdout):\n%s", diff)
	}
}
