package checks

import (
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// echo finds the first run of more than bound bytes of reply text that
// was copied from the request. It indexes the request's windows only when
// some reply text is long enough to hold such a run, which keeps the
// common case (short messages) free of allocation.
type echoFinder struct {
	bound   int
	p       *Pass
	sources []string
	windows map[string]struct{}
}

func (f *echoFinder) find(text string) (string, bool) {
	k := f.bound + 1
	if len(text) < k {
		return "", false
	}
	if f.sources == nil {
		f.sources = []string{}
		for _, s := range f.p.Reply.texts(f.p.Exchange, f.p.Expect) {
			if len(s) > f.bound {
				f.sources = append(f.sources, s)
			}
		}
	}
	if f.windows == nil {
		f.windows = make(map[string]struct{})
		for _, s := range f.sources {
			for i := 0; i+k <= len(s); i++ {
				f.windows[s[i:i+k]] = struct{}{}
			}
		}
	}
	for i := 0; i+k <= len(text); i++ {
		if _, ok := f.windows[text[i:i+k]]; ok {
			// Extend the run to report how much was copied.
			j := i + k
			for j < len(text) && f.contains(text[i:j+1]) {
				j++
			}
			return text[i:j], true
		}
	}
	return "", false
}

func (f *echoFinder) contains(run string) bool {
	for _, s := range f.sources {
		if len(s) >= len(run) && indexOf(s, run) >= 0 {
			return true
		}
	}
	return false
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// newEchoFinder gathers the request's values only once some reply text
// is long enough to hold a copied run.
func newEchoFinder(p *Pass) *echoFinder {
	return &echoFinder{bound: p.Contract.QuoteBound, p: p}
}

var NoEcho = &Check{
	ID:       "ERR4001",
	Title:    "The error does not echo the request",
	SpecRef:  "contract: no echo",
	Severity: MUST,
	Area:     AreaEcho,
	Doc: `Neither error.message nor any value under error.data carries a run of
more than the quote bound (64 characters by default) copied from the
request: its raw body, any string in it, or any header value. The single
value the condition is about (the requested version, the received header)
may be quoted, within the bound. A server that echoes the request leaks
what the client sent into logs and into the calling model's context, and a
hostile request becomes the server's own words. Strict contract only.`,
	Run: func(p *Pass) error {
		if !p.Contract.IsStrict() {
			return skipSpecOnly
		}
		e, err := needError(p)
		if err != nil {
			return err
		}
		f := newEchoFinder(p)
		check := func(path, s string) {
			if run, ok := f.find(s); ok {
				p.Failf(path, "%d characters copied from the request: %s", len(run), Quote(run, quoteN))
			}
		}
		check("error.message", e.Get("message").Str)
		walkStrings(e.Get("data"), "error.data", check)
		return nil
	},
}

var NoEchoInToolError = &Check{
	ID:       "ERR4002",
	Title:    "A refused tool call does not echo the request",
	SpecRef:  "contract: no echo; T-TOOL-8",
	Severity: MUST,
	Area:     AreaEcho,
	Doc: `Since 2025-11-25 a tool refuses bad arguments with a result whose
isError is true (T-TOOL-8): the tool dialect of a refusal. Its text content
obeys the same no-echo rule as error messages: no run of more than the
quote bound copied from the request. Strict contract only.`,
	Run: func(p *Pass) error {
		if !p.Contract.IsStrict() {
			return skipSpecOnly
		}
		m, err := needObject(p)
		if err != nil {
			return err
		}
		r := m.Get("result")
		if r.Get("isError").Type != gjson.True {
			return Skip("the reply is not a tool error result")
		}
		f := newEchoFinder(p)
		for i, c := range r.Get("content").Array() {
			if t := c.Get("text"); t.Type == gjson.String {
				if run, ok := f.find(t.Str); ok {
					p.Failf(envelope.JoinPath("result.content", itoa(i))+".text", "%d characters copied from the request: %s", len(run), Quote(run, quoteN))
				}
			}
		}
		return nil
	},
}
