package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"

	"github.com/wymcp/wymcp-check/envelope"
)

// officialExamples is testdata/official-examples.json: which official
// examples answer which request, and the verdicts that are not passes.
type officialExamples struct {
	Facts map[string]any `json:"facts"`
	Pairs []struct {
		Request, Response string
	} `json:"pairs"`
	Errors []struct {
		Error, Method, Body, Name, Version string
		Params                             map[string]any
		Tool                               map[string]any
		Status                             int
		HTTP                               bool
		NoPrompts                          bool
	} `json:"errors"`
	Rows []string `json:"rows"`
}

// TestOfficialExamplesAsReplies: the spec's own 2026-07-28 examples, sent
// as a server's replies to its own request examples (and its error
// examples to requests they answer), over HTTP and stdio, are judged with
// every check. A conforming example passes; the rows the file lists are
// the examples that break a rule of the spec text (a result without the
// caching hints T-CACHE-1 requires, a listen result with no
// acknowledgement before it) or leave out what a SHOULD asks. A false
// alarm on what the spec itself shows is a new row.
func TestOfficialExamplesAsReplies(t *testing.T) {
	dir := os.Getenv("WYMCP_MCP_SCHEMA_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "mcp-schema")
	}
	dir = filepath.Join(dir, "examples-2026-07-28")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("official MCP examples not found: set WYMCP_MCP_SCHEMA_DIR (%v)", err)
	}
	raw, err := os.ReadFile("testdata/official-examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec officialExamples
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatalf("testdata/official-examples.json: %v", err)
	}
	examples := func(typ string) map[string]map[string]any {
		files, _ := filepath.Glob(filepath.Join(dir, typ, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no official examples of %s under %s", typ, dir)
		}
		out := map[string]map[string]any{}
		for _, f := range files {
			out[filepath.Base(f)] = readJSONObject(t, f)
		}
		return out
	}

	var tools []any
	for _, tool := range sortedValues(examples("Tool")) {
		tools = append(tools, tool)
	}
	for _, r := range sortedValues(examples("ListToolsResultResponse")) {
		tools = append(tools, r["result"].(map[string]any)["tools"].([]any)...)
	}
	for _, e := range spec.Errors {
		if e.Tool != nil {
			tools = append(tools, e.Tool)
		}
	}
	facts := spec.Facts
	facts["tools"] = tools

	var lines []string
	line := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	exchange := func(fixture, transport string, request []byte, name, version string, status int, reply map[string]any) {
		body, err := json.Marshal(reply)
		if err != nil {
			t.Fatal(err)
		}
		ex := map[string]any{"transport": transport, "protocolVersion": envelope.V20260728, "fixture": fixture,
			"request": map[string]any{"body": string(request)}, "response": map[string]any{"body": string(body)}}
		if transport == envelope.HTTP {
			method := gjson.GetBytes(request, "method").String()
			h := map[string]any{"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
				"Mcp-Method": method, "Mcp-Protocol-Version": version}
			if f := envelope.NameField(method); f != "" {
				if name == "" {
					name = gjson.GetBytes(request, "params."+f).String()
				}
				h["Mcp-Name"] = name
			}
			ex["request"].(map[string]any)["method"] = "POST"
			ex["request"].(map[string]any)["headers"] = h
			ex["response"].(map[string]any)["status"] = status
			ex["response"].(map[string]any)["headers"] = map[string]any{"Content-Type": "application/json"}
		}
		line(ex)
	}

	line(map[string]any{"run": map[string]any{"contract": "spec", "schema": "builtin"}})
	line(map[string]any{"facts": facts})
	for _, p := range spec.Pairs {
		reqs, resps := examples(p.Request), examples(p.Response)
		for _, rf := range slices.Sorted(maps.Keys(reqs)) {
			req := reqs[rf]
			body, _ := json.Marshal(req)
			for _, sf := range slices.Sorted(maps.Keys(resps)) {
				resp := resps[sf]
				resp["id"] = req["id"]
				for _, tr := range []string{envelope.HTTP, envelope.Stdio} {
					exchange(tr+":"+p.Request+"/"+rf+"+"+sf, tr, body, "", envelope.V20260728, 200, resp)
				}
			}
		}
	}
	var noPrompts []func()
	for _, e := range spec.Errors {
		body := []byte(e.Body)
		version := envelope.V20260728
		if e.Version != "" {
			version = e.Version
		}
		if e.Body == "" {
			params := e.Params
			if params == nil {
				params = map[string]any{}
			}
			params["_meta"] = map[string]any{envelope.MetaProtocolVersion: version, envelope.MetaClientCapabilities: map[string]any{}}
			body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": e.Method, "params": params})
		}
		reply := readJSONObject(t, filepath.Join(dir, e.Error))
		if _, whole := reply["jsonrpc"]; !whole {
			// Most error examples give the error object alone.
			var id any = 1
			if e.Body != "" {
				id = nil
			}
			reply = map[string]any{"jsonrpc": "2.0", "id": id, "error": reply}
		}
		status := e.Status
		if status == 0 {
			status = 200
		}
		send := func() {
			for _, tr := range []string{envelope.HTTP, envelope.Stdio} {
				if tr == envelope.HTTP || !e.HTTP {
					exchange(tr+":"+e.Error, tr, body, e.Name, version, status, reply)
				}
			}
		}
		if e.NoPrompts {
			noPrompts = append(noPrompts, send)
			continue
		}
		send()
	}
	caps := facts["capabilities"].(map[string]any)
	delete(caps, "prompts")
	line(map[string]any{"facts": facts})
	for _, send := range noPrompts {
		send()
	}

	in := filepath.Join(t.TempDir(), "official.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.json")
	runMain(t, "", "lint", "--format", "json", "-o", out, in)
	var got []string
	judged := map[string]bool{}
	for _, r := range reportResults(t, out) {
		if r.Status == "error" {
			t.Errorf("%s %s: %s %s", r.Fixture, r.Check, r.Status, r.Message)
		}
		judged[r.Fixture] = true
		if r.Status == "fail" || r.Status == "warn" {
			got = append(got, r.Fixture+" "+r.Check+" "+r.Status)
		}
	}
	sort.Strings(got)
	if len(judged) != len(lines)-3 {
		t.Errorf("%d exchanges judged of %d", len(judged), len(lines)-3)
	}
	if diff := cmp.Diff(spec.Rows, got); diff != "" {
		t.Errorf("verdicts that are not passes (-want +got):\n%s", diff)
	}
}

// sortedValues are m's values in the order of their file names, so the
// transcript is the same on every run.
func sortedValues(m map[string]map[string]any) []map[string]any {
	var out []map[string]any
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

func readJSONObject(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}
