package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
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

// discoverTools lists what the server offers, every page, for the
// facts: its tools (a tool the server does not list is one it does not
// have, and a tool's schema says which arguments it must refuse), its
// prompts, resources and resource templates (what prompts/get,
// resources/read and completion/complete may name). Each page is an
// exchange the verdicts depend on, so each is judged and recorded.
func (r *run) discoverTools(ctx context.Context) error {
	f := *r.facts
	if declared, known := r.facts.Declares("tools"); !known || declared {
		f.Tools, f.ToolsListed, f.ToolOrder = nil, false, nil
		listed, err := r.listAll(ctx, "tools/list", "tools", func(item gjson.Result) {
			// A name listed twice (on one page or two) is one tool, and
			// one whose schema is not known if the listings differ
			// (AddTool): the fixtures call it once.
			if tl, ok := expect.NewTool([]byte(item.Raw)); ok {
				was := len(f.Tools)
				if f.Tools = expect.AddTool(f.Tools, tl); len(f.Tools) > was {
					f.ToolOrder = append(f.ToolOrder, tl.Name)
				}
			}
		})
		if err != nil {
			return err
		}
		f.ToolsListed = listed
		// Deterministic choice whatever order the server lists them in.
		slices.SortStableFunc(f.Tools, func(a, b *expect.Tool) int { return strings.Compare(a.Name, b.Name) })
	}
	if declared, _ := r.facts.Declares("prompts"); declared {
		listed, err := r.listAll(ctx, "prompts/list", "prompts", func(item gjson.Result) {
			if p, ok := expect.NewPrompt([]byte(item.Raw)); ok {
				f.Prompts = append(f.Prompts, p)
			}
		})
		if err != nil {
			return err
		}
		f.PromptsListed = listed
		slices.SortStableFunc(f.Prompts, func(a, b expect.Prompt) int { return strings.Compare(a.Name, b.Name) })
	}
	if declared, _ := r.facts.Declares("resources"); declared {
		listed, err := r.listAll(ctx, "resources/list", "resources", func(item gjson.Result) {
			if u := item.Get("uri"); u.Type == gjson.String {
				f.Resources = append(f.Resources, u.Str)
			}
		})
		if err != nil {
			return err
		}
		f.ResourcesListed = listed
		listed, err = r.listAll(ctx, "resources/templates/list", "resourceTemplates", func(item gjson.Result) {
			if u := item.Get("uriTemplate"); u.Type == gjson.String {
				f.Templates = append(f.Templates, u.Str)
			}
		})
		if err != nil {
			return err
		}
		f.TemplatesListed = listed
	}
	r.facts = &f
	r.sink.Facts(r.facts)
	return nil
}

// listAll follows a list method's pages (T-PAGE-2), handing each item
// to add; it reports whether the list was read to its end.
func (r *run) listAll(ctx context.Context, method, key string, add func(gjson.Result)) (bool, error) {
	cursor, base := "", "setup/"+strings.ReplaceAll(method, "/", "-")
	used := map[string]bool{}
	// A later page is judged by what the earlier pages of the listing
	// showed (its cacheScope, cursors and tool names): its expectation
	// carries them, and so its recording.
	var listing expect.Listing
	var o *expect.Override
	for page := 1; page <= maxToolPages; page++ {
		params := ""
		if page > 1 {
			c, _ := json.Marshal(cursor)
			params = `"cursor":` + string(c)
		}
		if r.sess.version == envelope.V20260728 {
			if params != "" {
				params += ","
			}
			params += fmt.Sprintf(`"_meta":{%q:%q,%q:{}}`, envelope.MetaProtocolVersion, envelope.V20260728, envelope.MetaClientCapabilities)
		}
		body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`, r.id(), method, params)
		req := envelope.Request{Header: r.stdHeaders(body), Body: body}
		name := base
		if page > 1 {
			name = fmt.Sprintf("%s/page-%d", base, page)
		}
		// A server that died on the setup exchange before is started
		// again, as before a fixture: else this request goes to no
		// process, and the death is blamed on it too.
		if ok, err := r.main().revive(ctx, name); err != nil || !ok {
			return false, err
		}
		ex, err := r.sendJudged(ctx, name, req, true)
		if err != nil {
			return false, err
		}
		if err := r.judge(name, &ex, nil, o); err != nil {
			return false, err
		}
		m := reply(&ex, r.facts)
		items := m.Get("result." + key)
		if ex.Failure != "" || !items.IsArray() {
			r.sink.Note(method + " for the fixtures: " + why(&ex))
			return false, nil
		}
		items.ForEach(func(_, it gjson.Result) bool { add(it); return true })
		next := m.Get("result.nextCursor")
		if next.Type != gjson.String {
			return true, nil
		}
		if used[next.Str] {
			// The pages go round (the page's verdict warns): following on
			// would list (and, with --call-tools, call) the same items
			// again, without end.
			r.sink.Note(fmt.Sprintf("%s for the fixtures: page %d gives a nextCursor an earlier page gave, so the list never ends; stopped following it, and the list counts as not read to its end (T-PAGE-2, T-PAGE-3)", method, page))
			return false, nil
		}
		used[next.Str] = true
		cursor = next.Str
		scope := ""
		if r.sess.version == envelope.V20260728 {
			scope = m.Get("result.cacheScope").Str
		}
		listing = listing.Next(scope, cursor, expect.ListedNames(method, m.Get("result")))
		o = listing.Override()
	}
	r.sink.Note(fmt.Sprintf("%s for the fixtures: more than %d pages; stopped following, and the list counts as not read to its end", method, maxToolPages))
	return false, nil
}

// A variant is one exchange a fixture makes.
type variant struct {
	suffix string // appended to the fixture ID when a fixture makes several
	ctx    fixtures.Context
	// body, when set, is sent instead of the fixture's body expanded,
	// and o judges it instead of the fixture's override: a second round
	// built from the first's reply (see retry).
	body []byte
	o    *expect.Override
}

// variants expands a fixture into its exchanges; the second result says
// why it cannot run here.
func (l *lane) variants(f *fixtures.Fixture) ([]variant, string) {
	r := l.r
	base := fixtures.Context{Version: r.sess.version, Spoken: r.sess.spoken()}
	if r.facts.Spoken == envelope.V20250326 {
		if why := later20250326(f.Rules); why != "" {
			return nil, why
		}
	}
	if why := r.fillDeclared(f.Body, &base); why != "" {
		return nil, why
	}
	if base.TasklessTool != "" {
		// A tool called outside --call-tools is named, as a probe's is.
		l.out.Note(fmt.Sprintf("%s: called tool %s with a task it does not take (%s)", f.ID, strconv.Quote(base.TasklessTool), r.tasklessWhy(base.TasklessTool)))
	}
	if !bytes.Contains(f.Body, []byte("{{tool}}")) {
		return []variant{{ctx: base}}, ""
	}
	if len(r.callableTools()) == 0 {
		if len(r.facts.Tools) > 0 {
			return nil, "every tool the server lists declares x-mcp-header parameters T-HDR-7 makes invalid, and a conforming client drops such a tool"
		}
		return nil, "the server lists no tools to call"
	}
	if f.Args == fixtures.ArgsValid {
		return l.callVariants(base)
	}
	return l.probeVariants(f, base)
}

// probeVariants picks the tool a fixture probes, says which in a note,
// and gives the exchanges; the second result says why none fits.
func (l *lane) probeVariants(f *fixtures.Fixture, base fixtures.Context) ([]variant, string) {
	t, vs, why := pickProbe(l.r.callableTools(), f, base)
	if t != nil {
		l.noteProbe(f.ID, t, f.Args)
	}
	return vs, why
}

// pickProbe picks the tool a fixture probes and the arguments it sends.
// Tools marked readOnlyHint come first (DESIGN: a tool not so marked may
// be destructive). An unmarked tool gets only the arguments its own
// inputSchema surely rejects, so even a server that skips validation has
// nothing it may run: not the format-only violation (valid under
// 2020-12, where format annotates, and under draft-07, whose validators
// may not assert it), nor a generated violation some other
// keyword allows.
func pickProbe(ts []*expect.Tool, f *fixtures.Fixture, base fixtures.Context) (*expect.Tool, []variant, string) {
	tools := slices.Clone(ts)
	slices.SortStableFunc(tools, func(a, b *expect.Tool) int {
		switch {
		case a.ReadOnly == b.ReadOnly:
			return 0
		case a.ReadOnly:
			return -1
		}
		return 1
	})
	why := noToolFor(f.Args)
	var unsafe []string
	for _, t := range tools {
		vs, w := toolVariants(t, f.Args, base)
		if w != "" {
			if len(tools) == 1 {
				why = w
			}
			continue
		}
		if !t.ReadOnly {
			if vs = rejected(t, f, vs); len(vs) == 0 {
				unsafe = append(unsafe, t.Name)
				continue
			}
		}
		return t, vs, ""
	}
	if len(unsafe) > 0 {
		why += fmt.Sprintf("; not sent to %s: not marked readOnlyHint, and its inputSchema accepts the arguments, or a validating server may read them so (a null as absent, an undeclared key dropped, a value converted), so a server could run it", quotedList(unsafe))
	}
	return nil, nil, why
}

// toolVariants makes the exchanges of a fixture's argument kind for one
// tool; the second result says why the tool does not fit.
func toolVariants(t *expect.Tool, args string, base fixtures.Context) ([]variant, string) {
	base.Tool = jsonStringContents(t.Name)
	hasProps := gjson.GetBytes(t.Input, "properties").IsObject()
	switch {
	case args == "":
		return []variant{{ctx: base}}, ""
	case len(t.Again) > 0:
		return nil, undecidedWhy(t)
	}
	switch args {
	case fixtures.ArgsViolations:
		if !hasProps {
			return nil, fmt.Sprintf("the inputSchema of tool %q has no properties to break", t.Name)
		}
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
		a, ok := canaryArgs(t.Input)
		if !hasProps || !ok {
			return nil, fmt.Sprintf("the inputSchema of tool %q has no property where a long string is invalid", t.Name)
		}
		base.Args = a
	case fixtures.ArgsParam, fixtures.ArgsParamNull, fixtures.ArgsParamInteger:
		pa, ok := paramArgs(t.Input, args)
		if !ok {
			return nil, fmt.Sprintf("the inputSchema of tool %q: %s", t.Name, noToolFor(args))
		}
		base.Args, base.Param, base.ParamValue, base.ParamOther = pa.args, pa.header, pa.value, pa.other
	default:
		a, ok := targetedArgs(t.Input, args)
		if !ok {
			return nil, fmt.Sprintf("the inputSchema of tool %q: %s", t.Name, noToolFor(args))
		}
		base.Args = a
	}
	return []variant{{ctx: base}}, ""
}

// rejected keeps the exchanges whose arguments, as the fixture's body
// sends them ({} when a tools/call carries none), a validating server
// surely refuses: the tool's own schema rejects them, and no lenient
// reading a validating server may take runs the tool on them
// (expect.Tool.SurelyRefused).
func rejected(t *expect.Tool, f *fixtures.Fixture, vs []variant) []variant {
	var out []variant
	for _, v := range vs {
		body, err := fixtures.Expand(f.Body, v.ctx)
		if err != nil {
			continue
		}
		args := []byte("{}")
		if a := gjson.GetBytes(body, "params.arguments"); a.Exists() {
			args = []byte(a.Raw)
		}
		if t.SurelyRefused(args, v.ctx.Version) {
			out = append(out, v)
		}
	}
	return out
}

func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// noteProbe says which tool a fixture probes with generated arguments,
// and whether the server marked it read-only (DESIGN, safe tool
// probing): a report reader must know what was called.
func (l *lane) noteProbe(fixture string, t *expect.Tool, args string) {
	kind := fixtures.ArgsPhrase(args)
	mark := "marked readOnlyHint"
	if !t.ReadOnly {
		mark = "not marked readOnlyHint: only arguments a validating server surely refuses are sent"
	}
	l.out.Note(fmt.Sprintf("%s: probed tool %q with %s (%s)", fixture, t.Name, kind, mark))
}

// fillDeclared fills the placeholders that name what the server
// declared besides tools; the result says why the body cannot be sent.
func (r *run) fillDeclared(body []byte, c *fixtures.Context) string {
	uses := func(p string) bool { return bytes.Contains(body, []byte("{{"+p+"}}")) }
	f := r.facts
	if uses("prompt") {
		if len(f.Prompts) == 0 {
			return noneListed(f, "prompts", f.PromptsListed)
		}
		c.Prompt = jsonStringContents(f.Prompts[0].Name)
	}
	if uses("promptreq") {
		i := slices.IndexFunc(f.Prompts, func(p expect.Prompt) bool { return len(p.Required) > 0 })
		if i < 0 {
			return "no prompt the server lists has a required argument"
		}
		c.PromptReq = jsonStringContents(f.Prompts[i].Name)
	}
	if uses("promptopen") {
		// Asked with no arguments, so that no value of the checker's
		// making can be what the server refuses.
		i := slices.IndexFunc(f.Prompts, func(p expect.Prompt) bool { return len(p.Required) == 0 })
		if i < 0 {
			return "every prompt the server lists has a required argument"
		}
		c.PromptOpen = jsonStringContents(f.Prompts[i].Name)
	}
	if uses("resource") {
		if len(f.Resources) == 0 {
			return noneListed(f, "resources", f.ResourcesListed)
		}
		c.Resource = jsonStringContents(f.Resources[0])
	}
	if uses("tasklesstool") {
		if declared, _ := f.Declares("tasks.requests.tools.call"); !declared {
			return "the server does not declare task-augmented tools/call"
		}
		// A server that breaks T-TASK-2 runs the tool: only one marked
		// readOnlyHint, or one whose schema refuses the call's empty
		// arguments (which a server that validates refuses unrun), is
		// called so. A read-only tool that takes them is called first:
		// served, it shows the breach, where a refusal of the arguments
		// would hide it (review rev25).
		best, rank := -1, 0
		tools := r.callableTools()
		for i, t := range tools {
			if s := gjson.GetBytes(t.Raw, "execution.taskSupport").Str; s != "" && s != "forbidden" {
				continue
			}
			rejects := t.Rejects([]byte("{}"), r.sess.version)
			k := 0
			switch {
			case t.ReadOnly && !rejects:
				k = 3
			case t.ReadOnly:
				k = 2
			case rejects:
				k = 1
			}
			if k > rank {
				best, rank = i, k
			}
		}
		if best < 0 {
			return "the server lists no tool without task support that is read-only or refuses empty arguments"
		}
		c.TasklessTool = jsonStringContents(tools[best].Name)
	}
	if uses("completeref") || uses("completearg") {
		ref, arg, ok := completionTarget(f)
		if !ok {
			return "the server lists no prompt with arguments and no resource template with a variable"
		}
		c.CompleteRef, c.CompleteArg = ref, jsonStringContents(arg)
	}
	return ""
}

// noneListed says why the run knows no prompt or resource to name (kind
// is the capability and the list's key): a reason that blames the
// server only for what it said.
func noneListed(f *expect.Facts, kind string, listed bool) string {
	switch declared, known := f.Declares(kind); {
	case known && !declared:
		return "the server does not declare the " + kind + " capability"
	case !known:
		return "the server's capabilities are not known, so its " + kind + " were not listed"
	case !listed:
		return kind + "/list was not read to its end, so no " + strings.TrimSuffix(kind, "s") + " the server has is known"
	}
	return "the server lists no " + kind
}

// tasklessWhy says why the taskless tool may be called outside
// --call-tools: it is read-only, or refuses the empty arguments sent.
func (r *run) tasklessWhy(contents string) string {
	for _, t := range r.facts.Tools {
		if jsonStringContents(t.Name) == contents && t.ReadOnly {
			return "marked readOnlyHint"
		}
	}
	return "not marked readOnlyHint: its inputSchema refuses the empty arguments sent"
}

// completionTarget picks something completion/complete can name: a
// prompt with arguments, else a resource template with a variable.
func completionTarget(f *expect.Facts) ([]byte, string, bool) {
	for _, p := range f.Prompts {
		if len(p.Args) > 0 {
			b, _ := json.Marshal(map[string]string{"type": "ref/prompt", "name": p.Name})
			return b, p.Args[0], true
		}
	}
	for _, t := range f.Templates {
		open := strings.IndexByte(t, '{')
		end := strings.IndexByte(t, '}')
		if open < 0 || end < open {
			continue
		}
		v := strings.TrimLeft(t[open+1:end], "+#./;?&")
		v, _, _ = strings.Cut(v, ",")
		v = strings.TrimSuffix(strings.Split(v, ":")[0], "*")
		if v == "" {
			continue
		}
		b, _ := json.Marshal(map[string]string{"type": "ref/resource", "uri": t})
		return b, v, true
	}
	return nil, "", false
}

// noToolFor says what a targeted argument kind needs.
func noToolFor(args string) string {
	switch args {
	case fixtures.ArgsNested:
		return "no property is an object with typed properties of its own"
	case fixtures.ArgsArray:
		return "no property is an array with typed items"
	case fixtures.ArgsEnum:
		return "no property has an enum or a const"
	case fixtures.ArgsExtra:
		return "the schema does not close the object (additionalProperties false)"
	case fixtures.ArgsFormat:
		return "no read-only tool has a string property with a format the checker can break alone (one with a pattern, an enum or a const beside it, as zod 4 writes for email and date-time, is left alone)"
	case fixtures.ArgsMulti:
		return "fewer than two properties can be broken at once"
	case fixtures.ArgsParam, fixtures.ArgsParamNull:
		return "no top-level string, integer or boolean parameter is marked with x-mcp-header (a token) and given a value by generated valid arguments"
	case fixtures.ArgsParamInteger:
		return "no top-level integer parameter is marked with x-mcp-header (a token) and given a value by generated valid arguments"
	}
	return "no tool fits"
}

// undecidedWhy says why a tool listed more than once, differently, is
// not called with arguments of its schema (see expect.AddTool).
func undecidedWhy(t *expect.Tool) string {
	return fmt.Sprintf("the server lists tool %q %d times, differently, so which listing's inputSchema binds is not known", t.Name, len(t.Again)+1)
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
		if r.dropsTool(t) {
			l.out.Note(fmt.Sprintf("tool %q not called: its x-mcp-header declarations break T-HDR-7, and a conforming client drops such a tool (PRO1010 judges the listing)", t.Name))
			continue
		}
		if len(t.Again) > 0 {
			l.out.Note(fmt.Sprintf("tool %q not called: %s", t.Name, undecidedWhy(t)))
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

// callableTools are the tools the server listed that a fixture may
// call: all but those a conforming client drops (dropsTool).
func (r *run) callableTools() []*expect.Tool {
	if !slices.ContainsFunc(r.facts.Tools, r.dropsTool) {
		return r.facts.Tools
	}
	return slices.DeleteFunc(slices.Clone(r.facts.Tools), r.dropsTool)
}

// dropsTool: over HTTP in 2026-07-28, t's x-mcp-header declarations
// break T-HDR-7, and a conforming client drops such a tool from its list
// (review rev91: its calls went out without the header its valid
// declaration asks, a call no conforming client makes, and the server's
// right -32020 failed ERR1002).
func (r *run) dropsTool(t *expect.Tool) bool {
	return r.sess.version == envelope.V20260728 && r.t.Transport() == envelope.HTTP && t.HeadersInvalid()
}
