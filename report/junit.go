package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/wymcp/wymcp-check/checks"
)

// JUnit XML: a testsuite per fixture, a testcase per check (classname is
// the check ID), <failure> for fail, <skipped> for skip, <error> for
// could-not-judge. Warnings pass in JUnit (a SHOULD), but their text is
// kept in system-out so they are seen; with --fail-on warn they become
// failures, matching the exit code.
type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"timestamp,attr,omitempty"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkip    `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkip struct {
	Message string `xml:"message,attr"`
}

type junitWriter struct {
	w    io.Writer
	meta Meta
}

func (j *junitWriter) Begin(m Meta) error {
	j.meta = m
	_, err := fmt.Fprintf(j.w, "%s<testsuites name=%q>\n", xml.Header, xmlAttr(m.Tool+" "+m.Target))
	return err
}

func xmlAttr(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func (j *junitWriter) Exchange(fixture string, vs []checks.Verdict) error {
	s := junitSuite{Name: fixture, Time: j.meta.Started.UTC().Format("2006-01-02T15:04:05")}
	for _, v := range vs {
		c := junitCase{Name: v.Check.ID + " " + v.Check.Title, Classname: v.Check.ID}
		lines := make([]string, 0, len(v.Findings))
		for _, f := range v.Findings {
			lines = append(lines, fmt.Sprintf("%s %s: %s", f.Status, f.Path, f.Message))
		}
		text := strings.Join(lines, "\n")
		switch {
		case v.Status == checks.StatusFail || v.Status == checks.StatusWarn && j.meta.FailOnWarn:
			c.Failure = &junitProblem{Message: firstMessage(v), Type: string(v.Status), Text: text}
			s.Failures++
		case v.Status == checks.StatusWarn:
			c.SystemOut = text
		case v.Status == checks.StatusError:
			c.Error = &junitProblem{Message: v.Reason, Type: "could not judge"}
			s.Errors++
		case v.Status == checks.StatusSkip:
			c.Skipped = &junitSkip{Message: v.Reason}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	b, err := xml.MarshalIndent(s, "  ", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = j.w.Write(b)
	return err
}

func firstMessage(v checks.Verdict) string {
	if len(v.Findings) == 0 {
		return ""
	}
	return v.Findings[0].Path + ": " + v.Findings[0].Message
}

func (j *junitWriter) End(s Summary) error {
	if s.Aborted != "" {
		// CI systems must not read an empty run as a green one.
		suite := junitSuite{Name: "run", Tests: 1, Errors: 1, Time: j.meta.Started.UTC().Format("2006-01-02T15:04:05"),
			Cases: []junitCase{{Name: "target", Classname: "run", Error: &junitProblem{Message: s.Aborted, Type: "not driven"}}}}
		b, err := xml.MarshalIndent(suite, "  ", "  ")
		if err != nil {
			return err
		}
		if _, err := j.w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	_, err := io.WriteString(j.w, "</testsuites>\n")
	return err
}
