package report

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/fatih/color"
	"github.com/wymcp/wymcp-check/checks"
)

type human struct {
	w                        io.Writer
	meta                     Meta
	fail, warn, err, ok, dim *color.Color
	clean                    int // exchanges with nothing to report, not yet printed
}

func newHuman(w io.Writer, on bool) *human {
	mk := func(a ...color.Attribute) *color.Color {
		c := color.New(a...)
		// fatih/color decides from os.Stdout alone; the caller knows better.
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c
	}
	return &human{w: w,
		fail: mk(color.FgRed, color.Bold), warn: mk(color.FgYellow), err: mk(color.FgMagenta, color.Bold),
		ok: mk(color.FgGreen), dim: mk(color.Faint)}
}

func (h *human) Begin(m Meta) error {
	h.meta = m
	_, err := fmt.Fprintf(h.w, "%s %s\ntarget:   %s\nprotocol: %s\ncontract: %s\n\n",
		m.Tool, m.Version, Sanitize(m.Target), Sanitize(m.Protocol), Sanitize(m.Contract))
	return err
}

func (h *human) Exchange(fixture string, vs []checks.Verdict) error {
	var counts Summary
	for _, v := range vs {
		counts.Add(v)
	}
	interesting := counts.Fail+counts.Warn+counts.Error > 0
	if !interesting && !h.meta.Verbose {
		h.clean++
		return nil
	}
	var b strings.Builder
	head := h.ok.Sprint("ok")
	switch {
	case counts.Fail > 0 || counts.Error > 0:
		head = h.fail.Sprint("FAIL")
	case counts.Warn > 0:
		head = h.warn.Sprint("WARN")
	}
	fmt.Fprintf(&b, "%s %s  %s\n", head, Sanitize(fixture),
		h.dim.Sprintf("(%d pass, %d fail, %d warn, %d skip, %d error)", counts.Pass, counts.Fail, counts.Warn, counts.Skip, counts.Error))
	// One transport failure makes every reply check an error with the
	// same reason: say it once.
	grouped := counts.Error > 1 && sameReason(vs)
	if grouped {
		fmt.Fprintf(&b, "  %s could not judge (%d checks): %s\n", h.err.Sprint("ERROR"), counts.Error, Sanitize(firstReason(vs)))
	}
	for _, v := range vs {
		switch v.Status {
		case checks.StatusFail, checks.StatusWarn:
			for _, f := range v.Findings {
				label := h.fail.Sprint("fail")
				if f.Status == checks.StatusWarn {
					label = h.warn.Sprint("warn")
				}
				fmt.Fprintf(&b, "  %s %-8s %s: %s\n", label, v.Check.ID, Sanitize(f.Path), Sanitize(f.Message))
			}
		case checks.StatusError:
			if grouped {
				continue
			}
			fmt.Fprintf(&b, "  %s %-8s could not judge: %s\n", h.err.Sprint("error"), v.Check.ID, Sanitize(v.Reason))
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
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "note: %s\n", Sanitize(n))
	}
	verdict := h.ok.Sprint("PASSED")
	if s.Gate(h.meta.FailOnWarn) {
		verdict = h.fail.Sprint("FAILED")
	}
	if s.Aborted != "" {
		fmt.Fprintf(&b, "\n%s: %s\n", h.err.Sprint("NOT JUDGED"), Sanitize(s.Aborted))
		verdict = h.err.Sprint("ABORTED")
	}
	fmt.Fprintf(&b, "\n%s: %d pass, %d fail, %d warn, %d skip, %d error\n", verdict, s.Pass, s.Fail, s.Warn, s.Skip, s.Error)
	_, err := io.WriteString(h.w, b.String())
	return err
}

// Sanitize makes text safe for a terminal: control characters (terminal
// escapes, CR that would overwrite a line) are shown escaped, never sent.
func Sanitize(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == unicode.ReplacementChar:
			b.WriteString(`\ufffd`)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
