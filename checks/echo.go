package checks

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// An echoFinder finds runs of reply text copied from the request. It
// indexes the request's byte windows only when some reply text is long
// enough to hold a run over the bound, which keeps the common case (short
// messages) free of work, and extends a match byte by byte from where it
// was found, so a long echo costs time linear in its length.
type echoFinder struct {
	bound   int // in characters
	p       *Pass
	sources []string
	index   map[string]srcPos
}

type srcPos struct{ src, off int }

func newEchoFinder(p *Pass) *echoFinder {
	return &echoFinder{bound: p.Contract.QuoteBound, p: p}
}

// find returns the first run of more than bound characters of text that
// stands in the request.
func (f *echoFinder) find(text string) (string, bool) {
	k := f.bound + 1 // a run of more than bound characters has at least k bytes
	if len(text) < k {
		return "", false
	}
	if f.index == nil {
		f.index = map[string]srcPos{}
		for _, s := range f.p.Reply.texts(f.p.Exchange, f.p.Expect) {
			if len(s) < k {
				continue
			}
			f.sources = append(f.sources, s)
			n := len(f.sources) - 1
			for i := 0; i+k <= len(s); i++ {
				if _, seen := f.index[s[i:i+k]]; !seen {
					f.index[s[i:i+k]] = srcPos{n, i}
				}
			}
		}
	}
	for i := 0; i+k <= len(text); i++ {
		at, ok := f.index[text[i:i+k]]
		if !ok {
			continue
		}
		src := f.sources[at.src]
		j, o := i+k, at.off+k
		for j < len(text) && o < len(src) && text[j] == src[o] {
			j, o = j+1, o+1
		}
		if run := text[i:j]; utf8.RuneCountInString(run) > f.bound {
			return run, true
		}
	}
	return "", false
}

// minEchoValue is the shortest request value counted as echoed whole:
// shorter ones (names, versions, "add") recur in any reply by chance.
const minEchoValue = 16

// quoteKeys hold the condition's values by the contract's own vocabulary
// (a header binding's body and header values, the requested version);
// each is bounded by the quote bound, and is not counted as a copy.
var quoteKeys = []string{"error.data.header", "error.data.expected", "error.data.received", "error.data.requested"}

// echoes judges one reply text: a copied run over the bound, a secret,
// or whole request values beyond the single one the condition is about.
type echoes struct {
	p      *Pass
	f      *echoFinder
	values map[string]bool // distinct request values seen whole
	paths  []string
}

func newEchoes(p *Pass) *echoes {
	return &echoes{p: p, f: newEchoFinder(p), values: map[string]bool{}}
}

func (e *echoes) text(path, s string) {
	for _, sec := range e.p.Expect.Secrets {
		if len(sec.Value) >= 8 && strings.Contains(s, sec.Value) {
			// Never quote it: the report must not leak it either.
			e.p.Failf(path, "the value of the %s header given with --header is echoed", sec.Name)
		}
	}
	if run, ok := e.f.find(s); ok {
		e.p.Failf(path, "%d characters copied from the request: %s", utf8.RuneCountInString(run), Quote(run, quoteN))
		return
	}
	for _, q := range quoteKeys {
		if path == q {
			return
		}
	}
	for _, v := range e.p.Reply.values(e.p.Expect) {
		if utf8.RuneCountInString(v) >= minEchoValue && v != e.p.Expect.Quote && strings.Contains(s, v) && !e.values[v] {
			e.values[v] = true
			e.paths = append(e.paths, path)
		}
	}
}

// done reports whole request values echoed beyond the one allowed.
func (e *echoes) done(path string) {
	if n := len(e.values); n > 1 {
		e.p.Failf(path, "%d request values are echoed whole (at %s); at most the one the condition is about may be quoted", n, strings.Join(e.paths, ", "))
	}
}

var NoEcho = &Check{
	ID:       "ERR4001",
	Title:    "The error does not echo the request",
	SpecRef:  "contract: no echo",
	Severity: MUST,
	Area:     AreaEcho,
	Doc: `Nothing in error.message or under error.data carries the request beyond
one short quoted value. Three things are judged:
a run of more than the quote bound (64 characters by default) copied from
the request (its raw body, any string in it, any header value);
more than one whole request value (of 16 characters or more) echoed, in
text or as structure (the request's object put back under data) — the
values under the vocabulary's own quote keys (header, expected, received,
requested) are the condition's and are not counted;
and, in live runs, any value given with --header (a credential), which is
never quoted in the report.
A server that echoes the request leaks what the client sent into logs and
into the calling model's context, and a hostile request becomes the
server's own words. Strict contract only.`,
	Run: func(p *Pass) error {
		if !p.Contract.IsStrict() {
			return skipSpecOnly
		}
		e, err := needError(p)
		if err != nil {
			return err
		}
		ec := newEchoes(p)
		ec.text("error.message", p.Reply.Response.Get("error.message").Str)
		walkStrings(e.Get("data"), "error.data", ec.text)
		ec.done("error")
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
obeys the same no-echo rule as error messages (see ERR4001). Strict
contract only.`,
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
		ec := newEchoes(p)
		for i, c := range r.Get("content").Array() {
			if t := c.Get("text"); t.Type == gjson.String {
				ec.text(fmt.Sprintf("result.content.%d.text", i), t.Str)
			}
		}
		ec.done("result.content")
		return nil
	},
}
