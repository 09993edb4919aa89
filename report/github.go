package report

import (
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"

	"github.com/wymcp/wymcp-check/rules"
)

// githubWriter speaks to GitHub Actions. Annotations are workflow
// commands on the step's output, collapsed to one per check and level:
// GitHub shows only ten of each level per step, and thirty findings of
// one check would otherwise hide every other check. A finding of lint
// points at its transcript line (file=, line=). The run's summary, a
// Markdown table, goes to the step summary (the file
// $GITHUB_STEP_SUMMARY names), which the caller opens and passes in.
type githubWriter struct {
	w       io.Writer
	summary io.Writer
	meta    Meta
	roll    rollup
}

// maxAnnotations is GitHub's display limit per level and step.
const maxAnnotations = 10

func (g *githubWriter) Begin(m Meta) error {
	g.meta = m
	return nil
}

func (g *githubWriter) Exchange(r *Result) error {
	g.roll.add(r, g.meta.FailOnWarn)
	return nil
}

type ghAnnotation struct {
	title, file string
	line        int
	text        string
}

func (g *githubWriter) End(s Summary) error {
	var errs, warns []ghAnnotation
	if e := g.roll.errored(); e != nil && e.fail > 0 {
		errs = append(errs, g.annotate(e, &e.failed, e.fail))
	}
	// A check that fails in some fixtures and warns in others gets an
	// annotation for each, at its own level and naming only its own
	// fixtures, as the step summary counts them in columns of their own:
	// one "fails in 2" that listed warned fixtures too would pass them
	// off as failures. Warnings are errors when they fail the gate.
	for _, c := range g.roll.sorted() {
		if c.fail > 0 {
			errs = append(errs, g.annotate(c, &c.failed, c.fail))
		}
		if c.warn > 0 {
			a := g.annotate(c, &c.warned, c.warn)
			if g.meta.FailOnWarn {
				errs = append(errs, a)
			} else {
				warns = append(warns, a)
			}
		}
		// Known failures are in the summary, not annotated: they do not
		// fail the gate and would crowd out the ones that do.
	}
	if len(s.Stale) > 0 {
		var items []string
		for _, e := range s.Stale {
			items = append(items, e.Fixture+" "+e.Check)
		}
		errs = append(errs, ghAnnotation{title: fmt.Sprintf("wymcp-check: %d stale baseline entr%s", len(s.Stale), plural(len(s.Stale), "y", "ies")),
			text: "they no longer fail; remove them from the baseline: " + strings.Join(items, ", ")})
	}
	if s.Interrupted != "" {
		errs = append(errs, ghAnnotation{title: "wymcp-check: interrupted", text: s.Interrupted})
	}
	if s.Aborted != "" {
		errs = append(errs, ghAnnotation{title: "wymcp-check: not judged", text: s.Aborted})
	}
	if s.Invalid != "" {
		errs = append(errs, ghAnnotation{title: "wymcp-check: input problems", text: s.Invalid})
	}
	var b strings.Builder
	for _, level := range []struct {
		name string
		as   []ghAnnotation
	}{{"error", errs}, {"warning", warns}} {
		for _, a := range collapse(level.as) {
			props := "title=" + ghEscape(a.title)
			if a.file != "" && a.file != "-" { // "-" is stdin: no file to point at
				props += ",file=" + ghEscape(a.file)
				if a.line > 0 {
					props += ",line=" + strconv.Itoa(a.line)
				}
			}
			fmt.Fprintf(&b, "::%s %s::%s\n", level.name, props, ghData(a.text))
		}
	}
	fmt.Fprintf(&b, "::notice title=wymcp-check %s::%s\n", s.verdictWord(g.meta.FailOnWarn), ghData(countLine(s)))
	if _, err := io.WriteString(g.w, b.String()); err != nil {
		return err
	}
	if g.summary != nil {
		if _, err := io.WriteString(g.summary, g.markdown(s)); err != nil {
			return fmt.Errorf("writing the step summary: %w", err)
		}
	}
	return nil
}

// annotate turns one status of a check's rollup, the n exchanges of
// group, into one ghAnnotation.
func (g *githubWriter) annotate(c *checkRoll, group *named, n int) ghAnnotation {
	first := group.first
	a := ghAnnotation{file: first.file, line: first.line}
	switch {
	case c.check == nil:
		a.title = fmt.Sprintf("wymcp-check could not judge %d %s", n, g.roll.unit(n))
	case group == &c.warned:
		a.title = fmt.Sprintf("%s warns in %d %s: %s", c.check.ID, n, g.roll.unit(n), c.check.Title)
	default:
		a.title = fmt.Sprintf("%s fails in %d %s: %s", c.check.ID, n, g.roll.unit(n), c.check.Title)
	}
	var t strings.Builder
	fmt.Fprintf(&t, "%s", first.fixture)
	if first.path != "" {
		fmt.Fprintf(&t, ": %s", first.path)
	}
	fmt.Fprintf(&t, ": %s", first.message)
	if n > 1 {
		fmt.Fprintf(&t, "\n%s: %s", strings.ToUpper(g.roll.unit(n)[:1])+g.roll.unit(n)[1:], strings.Join(group.names, ", "))
		if group.more > 0 {
			fmt.Fprintf(&t, " and %d more", group.more)
		}
	}
	if c.check != nil {
		if ids, more := shortRules(findingRules(c.check, first.finding(), first.scope)); len(ids) > 0 {
			fmt.Fprintf(&t, "\nRules: %s", strings.Join(ids, ", "))
			if more > 0 {
				fmt.Fprintf(&t, " and %d more", more)
			}
			// (A command a reader can run as it stands; review rev85: it
			// read "explain ID".)
			fmt.Fprintf(&t, " (wymcp-check explain %s)", ids[0])
		}
	}
	a.text = t.String()
	return a
}

// collapse keeps a level within GitHub's limit: the first nine stand,
// the rest are merged into the tenth.
func collapse(as []ghAnnotation) []ghAnnotation {
	if len(as) <= maxAnnotations {
		return as
	}
	rest := as[maxAnnotations-1:]
	var titles []string
	for _, a := range rest {
		titles = append(titles, a.title)
	}
	return append(as[:maxAnnotations-1:maxAnnotations-1], ghAnnotation{
		title: fmt.Sprintf("wymcp-check: %d more", len(rest)),
		text:  strings.Join(titles, "\n") + "\n(the step summary and the reports list them all)"})
}

func countLine(s Summary) string {
	line := fmt.Sprintf("%d pass, %d fail, %d warn, %d skip, %d error", s.Pass, s.Fail, s.Warn, s.Skip, s.Error)
	if s.Known > 0 || len(s.Stale) > 0 {
		line += fmt.Sprintf("; baseline: %d known, %d stale", s.Known, len(s.Stale))
	}
	return line
}

// markdown renders the step summary. Every piece of text that came from
// the server or the user is escaped: the summary is rendered as GitHub
// Markdown, which also passes HTML.
func (g *githubWriter) markdown(s Summary) string {
	var b strings.Builder
	word := s.verdictWord(g.meta.FailOnWarn)
	mark := map[string]string{"PASSED": "✅", "FAILED": "❌", "ABORTED": "⛔", "INTERRUPTED": "⏹"}[word]
	fmt.Fprintf(&b, "## %s wymcp-check: %s\n\n", mark, word)
	fmt.Fprintf(&b, "Target: %s · contract %s", md(g.meta.Target), md(g.meta.Contract))
	if s.Protocol != "" {
		fmt.Fprintf(&b, " · protocol %s", md(s.Protocol))
	}
	if g.meta.Baseline != "" {
		fmt.Fprintf(&b, " · baseline %s", md(g.meta.Baseline))
	}
	b.WriteString("\n\n")
	if s.Aborted != "" {
		fmt.Fprintf(&b, "**Not judged:** %s\n\n", md(s.Aborted))
	}
	if s.Interrupted != "" {
		fmt.Fprintf(&b, "**Interrupted:** %s\n\n", md(s.Interrupted))
	}
	if s.Invalid != "" {
		fmt.Fprintf(&b, "**Input problems:** %s\n\n", md(s.Invalid))
	}
	b.WriteString("| pass | fail | warn | error | skip | known | stale |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %d |\n\n", s.Pass, s.Fail, s.Warn, s.Error, s.Skip, s.Known, len(s.Stale))
	if e := g.roll.errored(); e != nil {
		fmt.Fprintf(&b, "**Could not judge** %d %s", e.fail+e.known, g.roll.unit(e.fail+e.known))
		if e.known > 0 {
			fmt.Fprintf(&b, " (%d known)", e.known)
		}
		fmt.Fprintf(&b, ", first %s: %s\n\n", md(e.first.fixture), md(e.first.message))
	}
	if rolls := g.roll.sorted(); len(rolls) > 0 {
		fmt.Fprintf(&b, "### By check\n\n| check | fails | warns | known | first finding | rules |\n| --- | ---: | ---: | ---: | --- | --- |\n")
		for _, c := range rolls {
			first := md(c.first.fixture)
			if c.first.path != "" {
				first += ": " + md(c.first.path)
			}
			first += ": " + md(c.first.message)
			var rs []string
			ids, more := shortRules(findingRules(c.check, c.first.finding(), c.first.scope))
			for _, id := range ids {
				if r := rules.Lookup(id); r != nil {
					rs = append(rs, fmt.Sprintf(`<abbr title="%s">%s</abbr>`, html.EscapeString(Sanitize(r.Level+": "+r.Title)), id))
				}
			}
			if more > 0 {
				rs = append(rs, fmt.Sprintf("+%d", more))
			}
			fmt.Fprintf(&b, "| **%s** %s | %d | %d | %d | %s | %s |\n",
				c.check.ID, md(c.check.Title), c.fail, c.warn, c.known, first, strings.Join(rs, " "))
		}
		b.WriteString("\n")
	}
	if len(s.Stale) > 0 {
		b.WriteString("### Stale baseline entries\n\nThese no longer fail: remove them from the baseline.\n\n| fixture | check | reason |\n| --- | --- | --- |\n")
		for _, e := range s.Stale {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", md(e.Fixture), md(e.Check), md(e.Reason))
		}
		b.WriteString("\n")
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "- note: %s\n", md(n))
	}
	if len(s.Notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// md escapes text for a Markdown table cell: HTML is neutralised, the
// characters Markdown gives meaning to are backslash-escaped, and the
// text stays on one line.
func md(s string) string {
	s = Sanitize(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '!', '|', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ghData escapes a command's message (%, CR, LF).
func ghData(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Sanitize(l)
	}
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(strings.Join(lines, "\n"))
}

// ghEscape follows the workflow-command escaping rules (%, CR, LF, and in
// properties also : and ,).
func ghEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(Sanitize(s))
}
