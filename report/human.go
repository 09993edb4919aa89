package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/wymcp/wymcp-check/checks"
)

type human struct {
	w                        io.Writer
	meta                     Meta
	fail, warn, err, ok, dim *color.Color
	clean                    int // exchanges with nothing to report, not yet printed
	roll                     rollup
}

// Color makes a color that is on or off as the caller decided: fatih/color
// decides from os.Stdout alone, and the caller knows better (a report
// file, --color, a pipe).
func Color(on bool, a ...color.Attribute) *color.Color {
	c := color.New(a...)
	if on {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return c
}

func newHuman(w io.Writer, on bool) *human {
	mk := func(a ...color.Attribute) *color.Color { return Color(on, a...) }
	return &human{w: w,
		fail: mk(color.FgRed, color.Bold), warn: mk(color.FgYellow), err: mk(color.FgMagenta, color.Bold),
		ok: mk(color.FgGreen), dim: mk(color.Faint)}
}

func (h *human) Begin(m Meta) error {
	h.meta = m
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\ntarget:   %s\nprotocol: %s\ncontract: %s\n",
		m.Tool, m.Version, Sanitize(m.Target), Sanitize(m.Protocol), Sanitize(m.Contract))
	if m.Baseline != "" {
		fmt.Fprintf(&b, "baseline: %s\n", Sanitize(m.Baseline))
	}
	b.WriteString("\n")
	_, err := io.WriteString(h.w, b.String())
	return err
}

// exchangeCounts splits an exchange's verdicts: failures the baseline
// knows are counted apart, so a fixture whose only failures are known
// reads KNOWN, and one that only could not be judged reads ERROR.
type exchangeCounts struct {
	Summary
	knownFail, knownErr, knownWarn int
}

func countExchange(r *Result) exchangeCounts {
	var c exchangeCounts
	for _, v := range r.Verdicts {
		if _, known := r.Known[v.Check.ID]; known {
			switch v.Status {
			case checks.StatusFail:
				c.knownFail++
			case checks.StatusError:
				c.knownErr++
			case checks.StatusWarn:
				c.knownWarn++
			}
			c.Known++
		}
		c.Add(v)
	}
	return c
}

// label is the one word that heads an exchange.
func (c exchangeCounts) label() string {
	switch {
	case c.Fail > c.knownFail:
		return "FAIL"
	case c.Error > c.knownErr:
		return "ERROR"
	case c.Warn > c.knownWarn:
		return "WARN"
	case c.Known > 0:
		return "KNOWN"
	}
	return "ok"
}

// counts lists the non-zero counts; skips only when verbose.
func (c exchangeCounts) counts(verbose bool) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+what)
		}
	}
	add(c.Pass, "pass")
	add(c.Fail, "fail")
	add(c.Warn, "warn")
	add(c.Error, "error")
	if verbose {
		add(c.Skip, "skip")
	}
	add(c.Known, "known")
	if len(parts) == 0 {
		return "(no verdicts)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func (h *human) Exchange(r *Result) error {
	h.roll.add(r, h.meta.FailOnWarn)
	c := countExchange(r)
	interesting := c.Fail+c.Warn+c.Error > 0
	if !interesting && !h.meta.Verbose {
		h.clean++
		return nil
	}
	var b strings.Builder
	head := h.ok.Sprint("ok")
	switch l := c.label(); l {
	case "FAIL":
		head = h.fail.Sprint(l)
	case "ERROR":
		head = h.err.Sprint(l)
	case "WARN", "KNOWN":
		head = h.warn.Sprint(l)
	}
	fmt.Fprintf(&b, "%s %s%s  %s\n", head, Sanitize(r.Fixture), h.location(r), h.dim.Sprint(c.counts(h.meta.Verbose)))
	// One transport failure makes every reply check an error with the
	// same reason: say it once.
	grouped := c.Error > 1 && sameReason(r.Verdicts)
	if grouped {
		fmt.Fprintf(&b, "  %s could not judge (%d checks): %s\n", h.err.Sprint("ERROR"), c.Error, Sanitize(firstReason(r.Verdicts)))
	}
	for _, v := range r.Verdicts {
		known := ""
		if reason, ok := r.Known[v.Check.ID]; ok {
			known = h.dim.Sprintf("  [known: %s]", Sanitize(reason))
		}
		switch v.Status {
		case checks.StatusFail, checks.StatusWarn:
			for _, f := range v.Findings {
				label := h.fail.Sprint("fail")
				if f.Status == checks.StatusWarn {
					label = h.warn.Sprint("warn")
				}
				fmt.Fprintf(&b, "  %s %-8s %s: %s%s\n", label, v.Check.ID, Sanitize(f.Path), Sanitize(f.Message), known)
			}
		case checks.StatusError:
			if grouped {
				continue
			}
			fmt.Fprintf(&b, "  %s %-8s could not judge: %s%s\n", h.err.Sprint("error"), v.Check.ID, Sanitize(v.Reason), known)
		case checks.StatusPass:
			if h.meta.Verbose {
				fmt.Fprintf(&b, "  %s %-8s %s\n", h.ok.Sprint("pass"), v.Check.ID, v.Check.Title)
			}
		case checks.StatusSkip:
			if h.meta.Verbose {
				fmt.Fprintf(&b, "  %s %-8s %s\n", h.dim.Sprint("skip"), v.Check.ID, Sanitize(v.Reason))
			}
		}
	}
	_, err := io.WriteString(h.w, b.String())
	return err
}

// location names the transcript line of a record whose fixture name does
// not already say it.
func (h *human) location(r *Result) string {
	if r.Line == 0 || strings.HasSuffix(r.Fixture, "line:"+strconv.Itoa(r.Line)) {
		return ""
	}
	return h.dim.Sprintf(" (%s:%d)", Sanitize(r.File), r.Line)
}

// sameReason: every error verdict gives the same reason.
func sameReason(vs []checks.Verdict) bool {
	first := firstReason(vs)
	for _, v := range vs {
		if v.Status == checks.StatusError && v.Reason != first {
			return false
		}
	}
	return true
}

func firstReason(vs []checks.Verdict) string {
	for _, v := range vs {
		if v.Status == checks.StatusError {
			return v.Reason
		}
	}
	return ""
}

func (h *human) End(s Summary) error {
	var b strings.Builder
	if h.clean > 0 {
		fmt.Fprintf(&b, "%s\n", h.dim.Sprintf("%d exchange(s) with nothing to report (-v lists every check)", h.clean))
	}
	rolls, errored := h.roll.sorted(), h.roll.errored()
	if len(rolls) > 0 || errored != nil {
		// What fails, by check: two checks failing across 22 fixtures read
		// as two problems, not 44; a timeout is one problem of its fixture.
		b.WriteString("\nby check:\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, c := range rolls {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.check.ID, h.rollText(c), c.check.Title)
		}
		tw.Flush()
		if errored != nil {
			fmt.Fprintf(&b, "  %s in %s: %s: %s\n", h.err.Sprint("could not judge"), h.rollCount(errored.fail, errored.known),
				Sanitize(errored.first.fixture), Sanitize(errored.first.message))
		}
	}
	if len(s.Stale) > 0 {
		fmt.Fprintf(&b, "\n%s (they no longer fail: remove them from the baseline):\n", h.fail.Sprintf("%d stale baseline entr%s", len(s.Stale), plural(len(s.Stale), "y", "ies")))
		for _, st := range s.Stale {
			fmt.Fprintf(&b, "  %s %s  (%s)\n", Sanitize(st.Fixture), st.Check, Sanitize(st.Reason))
		}
	}
	if len(s.Notes) > 0 {
		b.WriteString("\n")
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "note: %s\n", Sanitize(n))
	}
	if c := s.Coverage; c != nil {
		fmt.Fprintf(&b, "\n%s\n", c.Line())
	}
	word := s.verdictWord(h.meta.FailOnWarn)
	verdict := h.ok.Sprint(word)
	switch word {
	case "FAILED":
		verdict = h.fail.Sprint(word)
	case "ABORTED":
		fmt.Fprintf(&b, "\n%s: %s\n", h.err.Sprint("NOT JUDGED"), Sanitize(s.Aborted))
		verdict = h.err.Sprint(word)
	case "INTERRUPTED":
		fmt.Fprintf(&b, "\n%s: %s\n", h.err.Sprint("INTERRUPTED"), Sanitize(s.Interrupted))
		verdict = h.err.Sprint(word)
	case "INVALID":
		fmt.Fprintf(&b, "\n%s: %s\n", h.err.Sprint("INPUT PROBLEMS"), Sanitize(s.Invalid))
		verdict = h.err.Sprint(word)
	}
	fmt.Fprintf(&b, "\n%s: %d pass, %d fail, %d warn, %d error", verdict, s.Pass, s.Fail, s.Warn, s.Error)
	if h.meta.Verbose {
		fmt.Fprintf(&b, ", %d skip", s.Skip)
	}
	if s.Known > 0 || len(s.Stale) > 0 {
		fmt.Fprintf(&b, "; baseline: %d known, %d stale", s.Known, len(s.Stale))
	}
	b.WriteString("\n")
	_, err := io.WriteString(h.w, b.String())
	return err
}

// rollText says in how many exchanges a check failed, warned or failed
// as known.
func (h *human) rollText(c *checkRoll) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s in %d %s", what, n, h.roll.unit(n)))
		}
	}
	add(c.fail, "fails")
	add(c.warn, "warns")
	add(c.known, "known")
	return strings.Join(parts, ", ")
}

// rollCount says "3 fixtures", or "3 fixtures (1 known)".
func (h *human) rollCount(n, known int) string {
	s := fmt.Sprintf("%d %s", n+known, h.roll.unit(n+known))
	if known > 0 {
		s += fmt.Sprintf(" (%d known)", known)
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Sanitize makes text safe for a terminal: control characters (escape
// sequences, a CR that would overwrite the line), invisible format
// characters (bidi overrides that reorder what is shown), Unicode line
// breaks, noncharacters (U+FFFF: no text holds one, and tools treat
// them as markers) and bytes that are not UTF-8 are written escaped,
// never sent. It is the one escaping of untrusted text the reports and
// the baseline share.
func Sanitize(s string) string {
	bad := func(r rune) bool {
		return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError || r == '\u2028' || r == '\u2029' || noncharacter(r)
	}
	if !strings.ContainsFunc(s, bad) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
			} else {
				b.WriteString(`\ufffd`)
			}
		case r < 0x100 && bad(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case bad(r) && r > 0xFFFF:
			// Eight digits, as Go writes it: \ue0001 would read as
			// U+E000 and a "1".
			fmt.Fprintf(&b, `\U%08x`, r)
		case bad(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// noncharacter reports whether r is one of Unicode's 66 noncharacters:
// U+FDD0..U+FDEF and the last two code points of every plane.
func noncharacter(r rune) bool {
	return r >= 0xFDD0 && r <= 0xFDEF || r&0xFFFE == 0xFFFE
}
