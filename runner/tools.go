package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/schema"
)

// A tool is one entry of the server's tools/list.
type tool struct {
	name     string
	input    []byte // raw inputSchema
	output   []byte // raw outputSchema, nil when none
	readOnly bool   // annotations.readOnlyHint
}

// maxViolations bounds the exchanges one "args: violations" fixture
// makes, so a tool with a hundred properties does not flood the run.
const maxViolations = 8

// canaryLen is the length of a canary argument: far over any quote bound.
const canaryLen = 4096

// discoverTools lists the server's tools once, for fixtures that call a
// real tool. The call itself is not judged: the tools/list fixture is.
func (r *run) discoverTools(ctx context.Context) {
	var body []byte
	if r.sess.version == envelope.V20260728 {
		body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"_meta":{%q:%q,%q:{}}}}`,
			r.id(), envelope.MetaProtocolVersion, envelope.V20260728, envelope.MetaClientCapabilities)
	} else {
		body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, r.id())
	}
	ex := r.send(ctx, envelope.Request{Header: r.stdHeaders(body), Body: body}, true)
	if ex.Failure != "" || ex.Response == nil {
		r.sink.Note("tools/list for the tool fixtures: " + why(&ex))
		return
	}
	m := reply(&ex)
	for _, t := range m.Get("result.tools").Array() {
		name, in := t.Get("name"), t.Get("inputSchema")
		if name.Type == gjson.String && in.IsObject() {
			tl := tool{name: name.Str, input: []byte(in.Raw), readOnly: t.Get("annotations.readOnlyHint").Type == gjson.True}
			if out := t.Get("outputSchema"); out.Exists() {
				tl.output = []byte(out.Raw)
			}
			r.sess.tools = append(r.sess.tools, tl)
		}
	}
	// Deterministic choice whatever order the server lists them in.
	slices.SortFunc(r.sess.tools, func(a, b tool) int { return strings.Compare(a.name, b.name) })
}

// A variant is one exchange a fixture makes.
type variant struct {
	suffix  string // appended to the fixture ID when a fixture makes several
	ctx     fixtures.Context
	refusal bool   // the arguments break the tool's inputSchema
	output  []byte // the tool's outputSchema, for a call with valid arguments
}

// variants expands a fixture into its exchanges; the second result says
// why it cannot run here.
func (r *run) variants(f *fixtures.Fixture) ([]variant, string) {
	base := fixtures.Context{Version: r.sess.version}
	if !bytes.Contains(f.Body, []byte("{{tool}}")) {
		return []variant{{ctx: base}}, ""
	}
	if len(r.sess.tools) == 0 {
		return nil, "the server lists no tools to call"
	}
	t := pickTool(r.sess.tools, f.Args)
	base.Tool = jsonStringContents(t.name)
	switch f.Args {
	case fixtures.ArgsValid:
		return r.callVariants(base)
	case fixtures.ArgsViolations:
		vs := schema.GenerateViolations(t.input)
		if len(vs) == 0 {
			return nil, fmt.Sprintf("the inputSchema of tool %q forbids nothing a generator can break", t.name)
		}
		out := make([]variant, 0, maxViolations)
		for _, v := range vs[:min(len(vs), maxViolations)] {
			c := base
			c.Args = v.Args
			out = append(out, variant{suffix: v.Name, ctx: c, refusal: true})
		}
		return out, ""
	case fixtures.ArgsCanary:
		args, ok := canaryArgs(t.input)
		if !ok {
			return nil, fmt.Sprintf("the inputSchema of tool %q has no property where a long string is invalid", t.name)
		}
		base.Args = args
	}
	return []variant{{ctx: base}}, ""
}

// callVariants makes one call with valid arguments per tool the run may
// call: those that declare readOnlyHint, or all with CallAll. A tool
// whose schema no arguments can be generated for is noted and left out.
func (r *run) callVariants(base fixtures.Context) ([]variant, string) {
	var out []variant
	for _, t := range r.sess.tools {
		if r.o.CallTools != CallAll && !t.readOnly {
			continue
		}
		args, err := schema.GenerateValid(t.input)
		if err != nil {
			r.sink.Note(fmt.Sprintf("tool %q not called: %v", t.name, err))
			continue
		}
		c := base
		c.Tool, c.Args = jsonStringContents(t.name), args
		out = append(out, variant{suffix: t.name, ctx: c, output: t.output})
	}
	if len(out) == 0 {
		if r.o.CallTools == CallAll {
			return nil, "no tool could be called with generated arguments"
		}
		return nil, "no tool declares readOnlyHint (run with --call-tools=all to call every tool)"
	}
	return out, ""
}

// pickTool prefers a tool whose schema the fixture can use: one with
// properties for argument fixtures, else the first by name.
func pickTool(ts []tool, args string) tool {
	if args != "" {
		for _, t := range ts {
			if gjson.GetBytes(t.input, "properties").IsObject() {
				return t
			}
		}
	}
	return ts[0]
}

// canaryArgs puts a canary where the schema forbids a string: a property
// typed other than string, else an unknown property when
// additionalProperties is false. Valid arguments fill the rest.
func canaryArgs(input []byte) (json.RawMessage, bool) {
	args := map[string]any{}
	if valid, err := schema.GenerateValid(input); err == nil {
		_ = json.Unmarshal(valid, &args)
	}
	canary := string(fixtures.Canary(canaryLen))
	props := gjson.GetBytes(input, "properties")
	var keys []string
	props.ForEach(func(k, v gjson.Result) bool {
		if t := v.Get("type"); t.Type == gjson.String && t.Str != "string" {
			keys = append(keys, k.Str)
		}
		return true
	})
	slices.Sort(keys)
	switch {
	case len(keys) > 0:
		args[keys[0]] = canary
	case gjson.GetBytes(input, "additionalProperties").Type == gjson.False:
		args["wymcp_canary"] = canary
	default:
		return nil, false
	}
	b, err := json.Marshal(args)
	return b, err == nil
}

// jsonStringContents escapes a name for use inside a JSON string.
func jsonStringContents(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
