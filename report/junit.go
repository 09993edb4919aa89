package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/wymcp/wymcp-check/checks"
)

// JUnit XML, shaped for CI reporters: a testsuite per fixture, a testcase
// per check whose identity is unique in the run (classname = fixture,
// name = check ID), time attributes, and the run's totals on
// <testsuites>. <failure> for a fail, <error> for could-not-judge,
// <skipped> for a skip. Warnings pass (a SHOULD) with their text kept in
// system-out; with --fail-on warn they are failures, matching the exit
// code. A known failure of the baseline is <skipped> with the reason, and
// a stale baseline entry is a failure of its own, so the reporter's
// verdict agrees with the gate. Every name and text goes through the XML
// encoder.
type junitSuites struct {
	XMLName   xml.Name `xml:"testsuites"`
	Name      string   `xml:"name,attr"`
	Tests     int      `xml:"tests,attr"`
	Failures  int      `xml:"failures,attr"`
	Errors    int      `xml:"errors,attr"`
	Skipped   int      `xml:"skipped,attr"`
	Time      string   `xml:"time,attr"`
	Timestamp string   `xml:"timestamp,attr"`
}

type junitSuite struct {
	XMLName   xml.Name    `xml:"testsuite"`
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	File      string      `xml:"file,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
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
	// The totals belong on <testsuites>, before the suites they count. A
	// file gets a header padded to a fixed width, rewritten in place at
	// the end; any other writer gets the suites buffered until then.
	seeker  io.WriteSeeker
	headAt  int64
	headLen int
	buf     bytes.Buffer
	total   junitSuites
	elapsed time.Duration
	// names counts suite names already used: a transcript may repeat a
	// fixture name, and an identity must stay unique. Records named only
	// by their line are unique already and are not kept.
	names map[string]int
}

func (j *junitWriter) Begin(m Meta) error {
	j.meta = m
	j.names = map[string]int{}
	j.total = junitSuites{Name: Sanitize(m.Tool + " " + m.Target), Timestamp: junitStamp(m.Started)}
	ws, ok := j.w.(io.WriteSeeker)
	if !ok {
		return nil
	}
	pos, err := ws.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil // a pipe or terminal: buffer instead
	}
	// Reserve room for the widest totals the header can hold.
	wide := j.total
	wide.Tests, wide.Failures, wide.Errors, wide.Skipped, wide.Time = 1<<62, 1<<62, 1<<62, 1<<62, "99999999999.999"
	head, err := junitHead(wide, 0)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(j.w, xml.Header); err != nil {
		return err
	}
	if _, err := j.w.Write(head); err != nil {
		return err
	}
	j.seeker, j.headAt, j.headLen = ws, pos+int64(len(xml.Header)), len(head)
	return nil
}

// junitHead encodes the <testsuites> start tag, padded with spaces before
// its '>' to width (whitespace there is legal XML), and a newline.
func junitHead(s junitSuites, width int) ([]byte, error) {
	var b bytes.Buffer
	enc := xml.NewEncoder(&b)
	start := xml.StartElement{Name: xml.Name{Local: "testsuites"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "name"}, Value: s.Name},
		{Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(s.Tests)},
		{Name: xml.Name{Local: "failures"}, Value: strconv.Itoa(s.Failures)},
		{Name: xml.Name{Local: "errors"}, Value: strconv.Itoa(s.Errors)},
		{Name: xml.Name{Local: "skipped"}, Value: strconv.Itoa(s.Skipped)},
		{Name: xml.Name{Local: "time"}, Value: s.Time},
		{Name: xml.Name{Local: "timestamp"}, Value: s.Timestamp},
	}}
	if err := enc.EncodeToken(start); err != nil {
		return nil, err
	}
	if err := enc.Flush(); err != nil {
		return nil, err
	}
	out := b.Bytes()
	if pad := width - len(out) - 1; pad > 0 {
		out = append(out[:len(out)-1], append(bytes.Repeat([]byte{' '}, pad), '>')...)
	}
	return append(out, '\n'), nil
}

func junitStamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func (j *junitWriter) suiteName(fixture string, line int) string {
	name := Sanitize(fixture)
	if line > 0 && strings.HasSuffix(fixture, "line:"+strconv.Itoa(line)) {
		return name
	}
	j.names[name]++
	if n := j.names[name]; n > 1 {
		name = fmt.Sprintf("%s #%d", name, n)
	}
	return name
}

func (j *junitWriter) Exchange(r *Result) error {
	name := j.suiteName(r.Fixture, r.Line)
	s := junitSuite{Name: name, Time: seconds(r.Duration), Timestamp: junitStamp(j.meta.Started), File: r.File}
	// The exchange's time is shared by its checks, so times add up.
	per := time.Duration(0)
	if n := len(r.Verdicts); n > 0 {
		per = r.Duration / time.Duration(n)
	}
	for _, v := range r.Verdicts {
		c := junitCase{Name: v.Check.ID, Classname: name, Time: seconds(per), File: r.File, Line: r.Line}
		lines := make([]string, 0, len(v.Findings)+1)
		lines = append(lines, v.Check.ID+" "+v.Check.Title)
		for _, f := range v.Findings {
			lines = append(lines, fmt.Sprintf("%s %s: %s", f.Status, Sanitize(f.Path), Sanitize(f.Message)))
		}
		text := strings.Join(lines, "\n")
		reason, known := r.Known[v.Check.ID]
		switch {
		case known:
			c.Skipped = &junitSkip{Message: "known failure (baseline): " + Sanitize(reason)}
			c.SystemOut = text
			s.Skipped++
		case v.Status == checks.StatusFail || v.Status == checks.StatusWarn && j.meta.FailOnWarn:
			c.Failure = &junitProblem{Message: Sanitize(firstMessage(v)), Type: string(v.Status), Text: text}
			s.Failures++
		case v.Status == checks.StatusWarn:
			c.SystemOut = text
		case v.Status == checks.StatusError:
			c.Error = &junitProblem{Message: Sanitize(v.Reason), Type: "could not judge", Text: v.Check.ID + " " + v.Check.Title}
			s.Errors++
		case v.Status == checks.StatusSkip:
			c.Skipped = &junitSkip{Message: Sanitize(v.Reason)}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	j.elapsed += r.Duration
	return j.suite(s)
}

func (j *junitWriter) suite(s junitSuite) error {
	j.total.Tests += s.Tests
	j.total.Failures += s.Failures
	j.total.Errors += s.Errors
	j.total.Skipped += s.Skipped
	b, err := xml.MarshalIndent(s, "  ", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if j.seeker == nil {
		j.buf.Write(b)
		return nil
	}
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
	if len(s.Stale) > 0 {
		st := junitSuite{Name: "baseline", Time: seconds(0), Timestamp: junitStamp(j.meta.Started)}
		for _, e := range s.Stale {
			// Not the fixture's own classname: that test case exists already.
			st.Cases = append(st.Cases, junitCase{Name: e.Check, Classname: "(baseline) " + Sanitize(e.Fixture), Time: seconds(0),
				Failure: &junitProblem{Message: "stale baseline entry: it no longer fails; remove it from the baseline", Type: "stale", Text: Sanitize(e.Reason)}})
			st.Failures++
		}
		st.Tests = len(st.Cases)
		if err := j.suite(st); err != nil {
			return err
		}
	}
	if s.Aborted != "" {
		// CI systems must not read an empty run as a green one.
		ab := junitSuite{Name: "run", Tests: 1, Errors: 1, Time: seconds(0), Timestamp: junitStamp(j.meta.Started),
			Cases: []junitCase{{Name: "target", Classname: "run", Time: seconds(0), Error: &junitProblem{Message: Sanitize(s.Aborted), Type: "not driven"}}}}
		if err := j.suite(ab); err != nil {
			return err
		}
	}
	if s.Interrupted != "" {
		// An incomplete run must not read as a complete one either.
		in := junitSuite{Name: "run", Tests: 1, Errors: 1, Time: seconds(0), Timestamp: junitStamp(j.meta.Started),
			Cases: []junitCase{{Name: "interrupted", Classname: "run", Time: seconds(0), Error: &junitProblem{Message: Sanitize(s.Interrupted), Type: "interrupted"}}}}
		if err := j.suite(in); err != nil {
			return err
		}
	}
	j.total.Time = seconds(max(s.Duration, j.elapsed))
	if j.seeker == nil {
		head, err := junitHead(j.total, 0)
		if err != nil {
			return err
		}
		var out bytes.Buffer
		out.Grow(len(xml.Header) + len(head) + j.buf.Len() + 16)
		out.WriteString(xml.Header)
		out.Write(head)
		out.Write(j.buf.Bytes())
		out.WriteString("</testsuites>\n")
		_, err = j.w.Write(out.Bytes())
		return err
	}
	if _, err := io.WriteString(j.w, "</testsuites>\n"); err != nil {
		return err
	}
	head, err := junitHead(j.total, j.headLen)
	if err != nil {
		return err
	}
	if len(head) != j.headLen {
		return fmt.Errorf("junit: header grew from %d to %d bytes", j.headLen, len(head))
	}
	end, err := j.seeker.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := j.seeker.Seek(j.headAt, io.SeekStart); err != nil {
		return err
	}
	if _, err := j.seeker.Write(head); err != nil {
		return err
	}
	_, err = j.seeker.Seek(end, io.SeekStart)
	return err
}
