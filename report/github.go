package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/wymcp/wymcp-check/checks"
)

// githubWriter prints GitHub Actions workflow commands, so fail and warn
// findings show up as annotations on the run.
type githubWriter struct{ w io.Writer }

func (g *githubWriter) Begin(Meta) error { return nil }

func (g *githubWriter) Exchange(fixture string, vs []checks.Verdict) error {
	for _, v := range vs {
		for _, f := range v.Findings {
			level := "error"
			if f.Status == checks.StatusWarn {
				level = "warning"
			}
			if _, err := fmt.Fprintf(g.w, "::%s title=%s::%s\n", level, ghEscape(v.Check.ID+" "+fixture), ghData(f.Path+": "+f.Message)); err != nil {
				return err
			}
		}
		if v.Status == checks.StatusError {
			if _, err := fmt.Fprintf(g.w, "::error title=%s::%s\n", ghEscape(v.Check.ID+" "+fixture), ghData("could not judge: "+v.Reason)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *githubWriter) End(s Summary) error {
	if s.Aborted != "" {
		if _, err := fmt.Fprintf(g.w, "::error title=wymcp-check::%s\n", ghData("not judged: "+s.Aborted)); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(g.w, "::notice title=wymcp-check::%d pass, %d fail, %d warn, %d skip, %d error\n", s.Pass, s.Fail, s.Warn, s.Skip, s.Error)
	return err
}

// ghData escapes a command's message (%, CR, LF).
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(Sanitize(s))
}

// ghEscape follows the workflow-command escaping rules (%, CR, LF, and in
// properties also : and ,).
func ghEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(Sanitize(s))
}
