package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	// the end; any other writer gets the suites spooled (Options.Spool)
	// or, without a spool, buffered until then.
	seeker  io.WriteSeeker
	headAt  int64
	headLen int
	spool   io.ReadWriteSeeker
	buf     bytes.Buffer
	// out holds suites encoded but not yet written, handed on in blocks
	// of about junitBlock bytes: a write per suite is a system call per
	// transcript record.
	out     []byte
	cases   []junitCase // reused from one suite to the next
	total   junitSuites
	elapsed time.Duration
	// names counts suite names already used: a transcript may repeat a
	// fixture name, and an identity must stay unique. Records named only
	// by their line are unique already and are not kept.
	names map[string]int
}

// junitBlock is about how many encoded bytes are handed on at once.
const junitBlock = 64 << 10

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
	file := Sanitize(r.File) // a lint input's name, as the user's file system spells it
	s := junitSuite{Name: name, Time: seconds(r.Duration), Timestamp: junitStamp(j.meta.Started), File: file, Cases: j.cases[:0]}
	// The exchange's time is shared by its checks, so times add up.
	per := time.Duration(0)
	if n := len(r.Verdicts); n > 0 {
		per = r.Duration / time.Duration(n)
	}
	perText := seconds(per)
	for i := range r.Verdicts {
		v := &r.Verdicts[i]
		c := junitCase{Name: v.Check.ID, Classname: name, Time: perText, File: file, Line: r.Line}
		reason, known := r.Known[v.Check.ID]
		switch {
		case known:
			c.Skipped = &junitSkip{Message: "known failure (baseline): " + Sanitize(reason)}
			c.SystemOut = verdictText(v)
			s.Skipped++
		case v.Status == checks.StatusFail || v.Status == checks.StatusWarn && j.meta.FailOnWarn:
			c.Failure = &junitProblem{Message: Sanitize(firstMessage(*v)), Type: string(v.Status), Text: verdictText(v)}
			s.Failures++
		case v.Status == checks.StatusWarn:
			c.SystemOut = verdictText(v)
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
	err := j.suite(s)
	clear(s.Cases) // the strings are the record's: not kept past it
	j.cases = s.Cases[:0]
	return err
}

// verdictText is a verdict's check and findings, one a line, for the
// body of a failure or system-out.
func verdictText(v *checks.Verdict) string {
	var b strings.Builder
	b.WriteString(v.Check.ID + " " + v.Check.Title)
	for _, f := range v.Findings {
		fmt.Fprintf(&b, "\n%s %s: %s", f.Status, Sanitize(f.Path), Sanitize(f.Message))
	}
	return b.String()
}

func (j *junitWriter) suite(s junitSuite) error {
	j.total.Tests += s.Tests
	j.total.Failures += s.Failures
	j.total.Errors += s.Errors
	j.total.Skipped += s.Skipped
	j.out = appendSuite(j.out, &s)
	if len(j.out) < junitBlock {
		return nil
	}
	return j.flush()
}

// flush hands the suites encoded so far on: to the file, the spool or
// the buffer.
func (j *junitWriter) flush() error {
	if len(j.out) == 0 {
		return nil
	}
	var err error
	switch {
	case j.seeker != nil:
		_, err = j.w.Write(j.out)
	case j.spool != nil:
		var n int
		if n, err = j.spool.Write(j.out); err != nil {
			// A full or failing spool: what it holds moves to memory,
			// and the report goes on there rather than being lost.
			err = j.unspool(j.out[n:])
		}
	default:
		j.buf.Write(j.out)
	}
	j.out = j.out[:0]
	return err
}

// unspool moves what the spool holds to the memory buffer, then rest,
// and writes no more to the spool.
func (j *junitWriter) unspool(rest []byte) error {
	sp := j.spool
	j.spool = nil
	if _, err := sp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("junit: the spool failed and cannot be read back: %w", err)
	}
	if _, err := io.Copy(&j.buf, sp); err != nil {
		return fmt.Errorf("junit: the spool failed and cannot be read back: %w", err)
	}
	j.buf.Write(rest)
	return nil
}

// appendSuite appends s as xml.MarshalIndent(s, "  ", "  ") encodes it,
// and a newline: reflection cost six times the whole judging of a
// transcript, and the encoding is pinned to encoding/xml's by
// TestJUnitEncodingIsXMLs and FuzzJUnitEncoding.
func appendSuite(b []byte, s *junitSuite) []byte {
	b = append(b, "  <testsuite"...)
	b = appendXMLAttr(b, "name", s.Name)
	b = appendXMLIntAttr(b, "tests", s.Tests)
	b = appendXMLIntAttr(b, "failures", s.Failures)
	b = appendXMLIntAttr(b, "errors", s.Errors)
	b = appendXMLIntAttr(b, "skipped", s.Skipped)
	b = appendXMLAttr(b, "time", s.Time)
	b = appendXMLAttr(b, "timestamp", s.Timestamp)
	if s.File != "" {
		b = appendXMLAttr(b, "file", s.File)
	}
	b = append(b, '>')
	for i := range s.Cases {
		b = appendCase(b, &s.Cases[i])
	}
	if len(s.Cases) > 0 {
		b = append(b, "\n  "...)
	}
	return append(b, "</testsuite>\n"...)
}

func appendCase(b []byte, c *junitCase) []byte {
	b = append(b, "\n    <testcase"...)
	b = appendXMLAttr(b, "name", c.Name)
	b = appendXMLAttr(b, "classname", c.Classname)
	b = appendXMLAttr(b, "time", c.Time)
	if c.File != "" {
		b = appendXMLAttr(b, "file", c.File)
	}
	if c.Line != 0 {
		b = appendXMLIntAttr(b, "line", c.Line)
	}
	b = append(b, '>')
	inner := len(b)
	for _, p := range []struct {
		tag string
		p   *junitProblem
	}{{"failure", c.Failure}, {"error", c.Error}} {
		if p.p == nil {
			continue
		}
		b = append(b, "\n      <"...)
		b = append(b, p.tag...)
		b = appendXMLAttr(b, "message", p.p.Message)
		b = appendXMLAttr(b, "type", p.p.Type)
		b = append(b, '>')
		b = appendXMLText(b, p.p.Text)
		b = append(b, "</"...)
		b = append(b, p.tag...)
		b = append(b, '>')
	}
	if c.Skipped != nil {
		b = append(b, "\n      <skipped"...)
		b = appendXMLAttr(b, "message", c.Skipped.Message)
		b = append(b, "></skipped>"...)
	}
	if c.SystemOut != "" {
		b = append(b, "\n      <system-out>"...)
		b = appendXMLText(b, c.SystemOut)
		b = append(b, "</system-out>"...)
	}
	if len(b) > inner {
		b = append(b, "\n    "...)
	}
	return append(b, "</testcase>"...)
}

func appendXMLAttr(b []byte, name, value string) []byte {
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, `="`...)
	b = appendXMLText(b, value)
	return append(b, '"')
}

func appendXMLIntAttr(b []byte, name string, n int) []byte {
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, `="`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '"')
}

// appendXMLText appends s escaped as encoding/xml escapes text and
// attribute values: markup characters, tab and line breaks as
// references, and what XML cannot hold (a control character, a byte that
// is no UTF-8) as U+FFFD.
func appendXMLText(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		var esc string
		width := 1
		switch {
		case c == '"':
			esc = "&#34;"
		case c == '\'':
			esc = "&#39;"
		case c == '&':
			esc = "&amp;"
		case c == '<':
			esc = "&lt;"
		case c == '>':
			esc = "&gt;"
		case c == '\t':
			esc = "&#x9;"
		case c == '\n':
			esc = "&#xA;"
		case c == '\r':
			esc = "&#xD;"
		case c < 0x20:
			esc = "\uFFFD"
		case c < utf8.RuneSelf:
			i++
			continue
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			width = n
			if r == utf8.RuneError && n == 1 || !inXMLRange(r) {
				esc = "\uFFFD"
				break
			}
			i += n
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, esc...)
		i += width
		last = i
	}
	return append(b, s[last:]...)
}

// inXMLRange is XML 1.0's Char production above ASCII.
func inXMLRange(r rune) bool {
	return r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
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
	if s.Invalid != "" {
		// Nor a run whose input was in part unusable.
		in := junitSuite{Name: "run", Tests: 1, Errors: 1, Time: seconds(0), Timestamp: junitStamp(j.meta.Started),
			Cases: []junitCase{{Name: "input", Classname: "run", Time: seconds(0), Error: &junitProblem{Message: Sanitize(s.Invalid), Type: "input"}}}}
		if err := j.suite(in); err != nil {
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
	if err := j.flush(); err != nil {
		return err
	}
	if j.seeker == nil {
		head, err := junitHead(j.total, 0)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(j.w, xml.Header); err != nil {
			return err
		}
		if _, err := j.w.Write(head); err != nil {
			return err
		}
		if j.spool != nil {
			if _, err := j.spool.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("junit: reading back the spooled suites: %w", err)
			}
			if _, err := io.Copy(j.w, j.spool); err != nil {
				return err
			}
		} else if _, err := j.w.Write(j.buf.Bytes()); err != nil {
			return err
		}
		_, err = io.WriteString(j.w, "</testsuites>\n")
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
