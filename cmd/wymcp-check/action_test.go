package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestActionStepsRunLocally runs the shell steps of the repository's
// composite action (action.yml) with bash, as a GitHub runner would:
// inputs and github.* expressions substituted into each step's env, the
// runner's files ($GITHUB_ENV, $GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY)
// emulated, the marketplace steps (setup-go, upload-artifact) checked
// but not run. The action builds the checker from this checkout and
// checks the demo server, once failing and once with a baseline.
func TestActionStepsRunLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the action test builds the checker")
	}
	for _, tool := range []string{"bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: the action needs it (%v)", tool, err)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseYAML(string(raw))
	if err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	runs := mapAt(t, doc, "runs")
	if runs["using"] != "composite" {
		t.Fatalf("runs.using = %v, want composite", runs["using"])
	}
	var uses []string
	for _, s := range listAt(t, runs, "steps") {
		if u, ok := s.(map[string]any)["uses"].(string); ok {
			uses = append(uses, u)
		}
	}
	if got := strings.Join(uses, " "); got != "actions/setup-go@v5 actions/upload-artifact@v4" {
		t.Errorf("marketplace steps: %s", got)
	}

	dir := t.TempDir()
	base := filepath.Join(dir, "known.txt")
	if err := os.WriteFile(base, []byte("id/string RPC1004 ids are normalised by our proxy (issue 7)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		inputs   map[string]string
		wantCode string
		wantGate int
		summary  string
	}{
		{"failing server", map[string]string{"args": "--demo\n  --demo-fault\nwrong-id\n"}, "1", 1, "## ❌ wymcp-check: FAILED"},
		{"known failure", map[string]string{"args": "--demo\n--demo-fault\nwrong-id", "baseline": base}, "0", 0, "## ✅ wymcp-check: PASSED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			r := newActionRunner(t, root, work, doc, tt.inputs)
			var gate int
			for _, s := range listAt(t, runs, "steps") {
				gate = r.step(s.(map[string]any))
			}
			if got := r.outputs["check"]["exit-code"]; got != tt.wantCode {
				t.Errorf("steps.check.outputs.exit-code = %q, want %q\n%s", got, tt.wantCode, r.log.String())
			}
			if gate != tt.wantGate {
				t.Errorf("the gate step exited %d, want %d", gate, tt.wantGate)
			}
			reports := filepath.Join(work, "wymcp-reports")
			for _, f := range []string{"junit.xml", "report.json", "report.html"} {
				if st, err := os.Stat(filepath.Join(reports, f)); err != nil || st.Size() == 0 {
					t.Errorf("report %s not written: %v", f, err)
				}
			}
			validateJSONReport(t, []byte(readFile(t, filepath.Join(reports, "report.json"))))
			if sum := readFile(t, r.files["GITHUB_STEP_SUMMARY"]); !strings.Contains(sum, tt.summary) {
				t.Errorf("step summary lacks %q:\n%s", tt.summary, sum)
			}
			if tt.wantGate == 1 && !strings.Contains(r.log.String(), "::error title=RPC1004 fails in 1 fixture") {
				t.Errorf("no annotation in the step's output:\n%s", r.log.String())
			}
		})
	}
}

// An actionRunner plays the GitHub runner for one job.
type actionRunner struct {
	t       *testing.T
	root    string // github.action_path
	work    string // the workspace, each step's directory
	inputs  map[string]string
	env     map[string]string // the job's env: $GITHUB_ENV accumulates here
	files   map[string]string
	outputs map[string]map[string]string
	log     bytes.Buffer
}

func newActionRunner(t *testing.T, root, work string, doc map[string]any, given map[string]string) *actionRunner {
	r := &actionRunner{t: t, root: root, work: work, inputs: map[string]string{}, env: map[string]string{}, files: map[string]string{}, outputs: map[string]map[string]string{}}
	for name, spec := range mapAt(t, doc, "inputs") {
		m := spec.(map[string]any)
		if v, ok := given[name]; ok {
			r.inputs[name] = v
		} else if m["required"] == "true" {
			t.Fatalf("required input %q not given", name)
		} else {
			r.inputs[name], _ = m["default"].(string)
		}
	}
	for name := range given {
		if _, ok := r.inputs[name]; !ok {
			t.Fatalf("input %q is not declared in action.yml", name)
		}
	}
	temp := t.TempDir()
	for _, f := range []string{"GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_PATH"} {
		r.files[f] = filepath.Join(temp, strings.ToLower(f))
		os.WriteFile(r.files[f], nil, 0o644)
	}
	r.env["RUNNER_TEMP"] = temp
	r.env["GITHUB_ACTIONS"] = "true"
	r.env["CI"] = "true"
	return r
}

var exprRE = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// expand substitutes the expressions a step's env may hold.
func (r *actionRunner) expand(s string) string {
	return exprRE.ReplaceAllStringFunc(s, func(m string) string {
		e := exprRE.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(e, "inputs."):
			v, ok := r.inputs[strings.TrimPrefix(e, "inputs.")]
			if !ok {
				r.t.Fatalf("expression %s: no such input", m)
			}
			return v
		case e == "github.action_path":
			return r.root
		case e == "github.action_ref":
			return "" // a local checkout has no ref: the development version
		}
		r.t.Fatalf("expression %s: the local runner does not know it", m)
		return ""
	})
}

// step runs one step and returns its exit status.
func (r *actionRunner) step(s map[string]any) int {
	t := r.t
	name, _ := s["name"].(string)
	if uses, ok := s["uses"].(string); ok {
		fmt.Fprintf(&r.log, "== %s: %s (not run locally)\n", name, uses)
		if strings.HasPrefix(uses, "actions/upload-artifact") && !strings.HasPrefix(fmt.Sprint(s["if"]), "always()") {
			t.Errorf("the upload step must run even when the check failed: if: %v", s["if"])
		}
		return 0
	}
	script, _ := s["run"].(string)
	if s["shell"] != "bash" || script == "" {
		t.Fatalf("step %q: want shell: bash and a run script", name)
	}
	env := os.Environ()
	for k, v := range r.env {
		env = append(env, k+"="+v)
	}
	for k, v := range r.files {
		env = append(env, k+"="+v)
	}
	if m, ok := s["env"].(map[string]any); ok {
		for k, v := range m {
			env = append(env, k+"="+r.expand(fmt.Sprint(v)))
		}
	}
	if exprRE.MatchString(script) {
		t.Fatalf("step %q: an expression inside run: is a script injection; pass it through env", name)
	}
	path := filepath.Join(r.t.TempDir(), "step.sh")
	os.WriteFile(path, []byte(script), 0o700)
	// GitHub's own invocation of a bash step.
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", path)
	cmd.Dir, cmd.Env = r.work, env
	fmt.Fprintf(&r.log, "== %s\n", name)
	cmd.Stdout, cmd.Stderr = &r.log, &r.log
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("step %q: %v", name, err)
		}
		code = ee.ExitCode()
	}
	for k, v := range readKV(t, r.files["GITHUB_ENV"]) {
		r.env[k] = v
	}
	if id, ok := s["id"].(string); ok {
		r.outputs[id] = readKV(t, r.files["GITHUB_OUTPUT"])
	}
	os.WriteFile(r.files["GITHUB_OUTPUT"], nil, 0o644)
	if code != 0 && name != "Gate" {
		t.Errorf("step %q exited %d:\n%s", name, code, r.log.String())
	}
	return code
}

// readKV reads a runner file of NAME=VALUE lines.
func readKV(t *testing.T, path string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(readFile(t, path), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

func mapAt(t *testing.T, m map[string]any, key string) map[string]any {
	t.Helper()
	v, ok := m[key].(map[string]any)
	if !ok {
		t.Fatalf("action.yml: %s is not a mapping", key)
	}
	return v
}

func listAt(t *testing.T, m map[string]any, key string) []any {
	t.Helper()
	v, ok := m[key].([]any)
	if !ok {
		t.Fatalf("action.yml: %s is not a list", key)
	}
	return v
}

// parseYAML reads the block-style subset of YAML that action.yml uses:
// mappings, sequences, plain and quoted scalars, and | and > block
// scalars. Anything else is an error, so the test notices a construct
// it would misread.
func parseYAML(src string) (map[string]any, error) {
	var lines []yline
	for _, raw := range strings.Split(src, "\n") {
		text := strings.TrimLeft(raw, " ")
		lines = append(lines, yline{indent: len(raw) - len(text), text: strings.TrimRight(text, " "), raw: raw})
	}
	p := &yparser{lines: lines}
	p.skip()
	v, err := p.block(0)
	if err != nil {
		return nil, err
	}
	if p.skip(); p.i < len(p.lines) {
		return nil, fmt.Errorf("line %d: unexpected %q", p.i+1, p.lines[p.i].raw)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document is not a mapping")
	}
	return m, nil
}

type yline struct {
	indent int
	text   string
	raw    string
}

type yparser struct {
	lines []yline
	i     int
}

// skip passes blank lines and comments.
func (p *yparser) skip() {
	for p.i < len(p.lines) && (p.lines[p.i].text == "" || strings.HasPrefix(p.lines[p.i].text, "#")) {
		p.i++
	}
}

func (p *yparser) block(indent int) (any, error) {
	p.skip()
	if p.i >= len(p.lines) {
		return nil, fmt.Errorf("unexpected end")
	}
	if strings.HasPrefix(p.lines[p.i].text, "- ") {
		return p.sequence(indent)
	}
	return p.mapping(indent)
}

func (p *yparser) sequence(indent int) (any, error) {
	var out []any
	for p.skip(); p.i < len(p.lines) && p.lines[p.i].indent == indent && strings.HasPrefix(p.lines[p.i].text, "- "); p.skip() {
		// "- key: value" opens a mapping whose first line is after the dash.
		p.lines[p.i].indent, p.lines[p.i].text = indent+2, p.lines[p.i].text[2:]
		v, err := p.block(indent + 2)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (p *yparser) mapping(indent int) (any, error) {
	out := map[string]any{}
	for p.skip(); p.i < len(p.lines) && p.lines[p.i].indent == indent; p.skip() {
		l := p.lines[p.i]
		key, rest, ok := strings.Cut(l.text, ":")
		if !ok || strings.HasPrefix(l.text, "- ") {
			return nil, fmt.Errorf("line %d: want key: value, got %q", p.i+1, l.raw)
		}
		rest = strings.TrimSpace(rest)
		p.i++
		switch {
		case rest == "":
			p.skip()
			if p.i < len(p.lines) && p.lines[p.i].indent > indent {
				v, err := p.block(p.lines[p.i].indent)
				if err != nil {
					return nil, err
				}
				out[key] = v
			} else {
				out[key] = ""
			}
		case rest == "|" || rest == ">" || rest == ">-" || rest == "|-":
			out[key] = p.blockScalar(indent, rest)
		default:
			out[key] = scalar(rest)
		}
	}
	if p.i < len(p.lines) && p.lines[p.i].indent > indent {
		return nil, fmt.Errorf("line %d: unexpected indentation: %q", p.i+1, p.lines[p.i].raw)
	}
	return out, nil
}

// blockScalar reads the lines indented deeper than the key.
func (p *yparser) blockScalar(indent int, style string) string {
	var body []string
	strip := -1
	for p.i < len(p.lines) && (p.lines[p.i].text == "" || p.lines[p.i].indent > indent) {
		l := p.lines[p.i]
		if l.text != "" && (strip < 0 || l.indent < strip) {
			strip = l.indent
		}
		body = append(body, l.raw)
		p.i++
	}
	for len(body) > 0 && strings.TrimSpace(body[len(body)-1]) == "" {
		body = body[:len(body)-1]
	}
	for i, b := range body {
		if len(b) >= strip {
			body[i] = b[strip:]
		} else {
			body[i] = ""
		}
	}
	if strings.HasPrefix(style, ">") {
		return strings.Join(strings.Fields(strings.Join(body, " ")), " ")
	}
	return strings.Join(body, "\n") + "\n"
}

func scalar(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}
