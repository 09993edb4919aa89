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
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/schema"
)

// maxViolations bounds the exchanges one "args: violations" fixture
// makes, so a tool with a hundred properties does not flood the run.
const maxViolations = 8

// canaryLen is the length of a canary argument: far over any quote bound.
const canaryLen = 4096

// maxToolPages bounds how many pages of tools/list the run follows.
const maxToolPages = 20

// discoverTools lists the server's tools, every page, for the facts: a
// tool the server does not list is one it does not have, and a tool's
// schema says which arguments it must refuse. Each page is an exchange
// the verdicts depend on, so each is judged and recorded.
func (r *run) discoverTools(ctx context.Context) error {
	if declared, known := r.facts.Declares("tools"); known && !declared {
		return nil // the server offers no tools (T-TOOL-1)
	}
	f := *r.facts
	f.Tools, f.ToolsListed = nil, false
	cursor := ""
	for page := 1; page <= maxToolPages; page++ {
		params := ""
		if cursor != "" {
			c, _ := json.Marshal(cursor)
			params = `"cursor":` + string(c)
		}
		if r.sess.version == envelope.V20260728 {
			if params != "" {
				params += ","
			}
			params += fmt.Sprintf(`"_meta":{%q:%q,%q:{}}`, envelope.MetaProtocolVersion, envelope.V20260728, envelope.MetaClientCapabilities)
		}
		body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}`, r.id(), params)
		req := envelope.Request{Header: r.stdHeaders(body), Body: body}
		name := "setup/tools-list"
		if page > 1 {
			name = fmt.Sprintf("setup/tools-list/page-%d", page)
		}
		ex, err := r.sendJudged(ctx, name, req, true)
		if err != nil {
			return err
		}
		if err := r.judge(name, &ex, nil, nil); err != nil {
			return err
		}
		m := reply(&ex)
		tools := m.Get("result.tools")
		if ex.Failure != "" || !tools.IsArray() {
			r.sink.Note("tools/list for the tool fixtures: " + why(&ex))
			break
		}
		for _, t := range tools.Array() {
			if tl, ok := expect.NewTool([]byte(t.Raw)); ok {
				f.Tools = append(f.Tools, tl)
			}
		}
		next := m.Get("result.nextCursor")
		if next.Type != gjson.String {
			f.ToolsListed = true
			break
		}
		cursor = next.Str
	}
	// Deterministic choice whatever order the server lists them in.
	slices.SortStableFunc(f.Tools, func(a, b *expect.Tool) int { return strings.Compare(a.Name, b.Name) })
	r.facts = &f
	r.sink.Facts(r.facts)
	return nil
}

// A variant is one exchange a fixture makes.
type variant struct {
	suffix string // appended to the fixture ID when a fixture makes several
	ctx    fixtures.Context
}

// variants expands a fixture into its exchanges; the second result says
// why it cannot run here.
func (l *lane) variants(f *fixtures.Fixture) ([]variant, string) {
	r := l.r
	base := fixtures.Context{Version: r.sess.version}
	if !bytes.Contains(f.Body, []byte("{{tool}}")) {
		return []variant{{ctx: base}}, ""
	}
	if len(r.facts.Tools) == 0 {
		return nil, "the server lists no tools to call"
	}
	t := pickTool(r.facts.Tools, f.Args)
	base.Tool = jsonStringContents(t.Name)
	switch f.Args {
	case fixtures.ArgsValid:
		return l.callVariants(base)
	case fixtures.ArgsViolations:
		vs := schema.GenerateViolations(t.Input)
		if len(vs) == 0 {
			return nil, fmt.Sprintf("the inputSchema of tool %q forbids nothing a generator can break", t.Name)
		}
		out := make([]variant, 0, maxViolations)
		for _, v := range vs[:min(len(vs), maxViolations)] {
			c := base
			c.Args = v.Args
			out = append(out, variant{suffix: v.Name, ctx: c})
		}
		return out, ""
	case fixtures.ArgsCanary:
		args, ok := canaryArgs(t.Input)
		if !ok {
			return nil, fmt.Sprintf("the inputSchema of tool %q has no property where a long string is invalid", t.Name)
		}
		base.Args = args
	}
	return []variant{{ctx: base}}, ""
}

// callVariants makes one call with valid arguments per tool the run may
// call: those that declare readOnlyHint, or all with CallAll. A tool
// whose schema no arguments can be generated for is noted and left out.
func (l *lane) callVariants(base fixtures.Context) ([]variant, string) {
	r := l.r
	var out []variant
	for _, t := range r.facts.Tools {
		if r.o.CallTools != CallAll && !t.ReadOnly {
			continue
		}
		if t.Input == nil {
			l.out.Note(fmt.Sprintf("tool %q not called: its inputSchema is not an object", t.Name))
			continue
		}
		args, err := schema.GenerateValid(t.Input)
		if err != nil {
			l.out.Note(fmt.Sprintf("tool %q not called: %v", t.Name, err))
			continue
		}
		c := base
		c.Tool, c.Args = jsonStringContents(t.Name), args
		out = append(out, variant{suffix: t.Name, ctx: c})
	}
	if len(out) == 0 {
		if r.o.CallTools == CallAll {
			return nil, "no tool could be called with generated arguments"
		}
		return nil, "no tool declares readOnlyHint (run with --call-tools=all to call every tool)"
	}
	return out, ""
}

// pickTool chooses the tool a fixture probes. Fixtures that call a tool
// prefer one marked readOnlyHint (DESIGN: a tool not so marked may be
// destructive); argument fixtures need one with properties to break. The
// arguments they send are ones the tool's own schema rejects, so even a
// destructive tool must refuse them.
func pickTool(ts []*expect.Tool, args string) *expect.Tool {
	usable := func(t *expect.Tool) bool {
		return args == "" || gjson.GetBytes(t.Input, "properties").IsObject()
	}
	for _, t := range ts {
		if t.ReadOnly && usable(t) {
			return t
		}
	}
	for _, t := range ts {
		if usable(t) {
			return t
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
