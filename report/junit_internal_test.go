package report

import (
	"bufio"
	"encoding/xml"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// junitTexts reads testdata/junit-text.txt: Go-quoted strings, so that
// bytes that are no UTF-8 can be written down.
func junitTexts(t testing.TB) []string {
	t.Helper()
	f, err := os.Open("testdata/junit-text.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var texts []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := strconv.Unquote(line)
		if err != nil {
			t.Fatalf("testdata/junit-text.txt:%d: %v", n, err)
		}
		texts = append(texts, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return texts
}

// suiteOf is a suite that holds text in every string it has; the bits of
// shape choose which optional parts are there.
func suiteOf(text string, shape uint8) junitSuite {
	s := junitSuite{Name: text, Tests: int(shape), Failures: 1, Errors: -2, Skipped: 3, Time: text, Timestamp: text}
	if shape&1 != 0 {
		s.File = text
	}
	if shape&2 == 0 {
		return s // no cases
	}
	c := junitCase{Name: text, Classname: text, Time: text}
	if shape&4 != 0 {
		c.File, c.Line = text, int(shape)
	}
	if shape&8 != 0 {
		c.Failure = &junitProblem{Message: text, Type: text, Text: text}
	}
	if shape&16 != 0 {
		c.Error = &junitProblem{Message: text, Type: text, Text: text}
	}
	if shape&32 != 0 {
		c.Skipped = &junitSkip{Message: text}
	}
	if shape&64 != 0 {
		c.SystemOut = text
	}
	s.Cases = []junitCase{c, {Name: "second", Classname: text, Time: "0.000"}}
	if shape&128 != 0 {
		s.Cases = s.Cases[:1]
	}
	return s
}

// checkEncoding compares appendSuite with encoding/xml on s.
func checkEncoding(t *testing.T, s junitSuite) {
	t.Helper()
	want, err := xml.MarshalIndent(s, "  ", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	got := appendSuite([]byte("kept"), &s)
	if !strings.HasPrefix(string(got), "kept") {
		t.Fatalf("appendSuite lost what the buffer held: %q", got)
	}
	if string(want) == string(got[len("kept"):]) {
		return
	}
	if diff := cmp.Diff(string(want), string(got[len("kept"):])); diff != "" {
		t.Errorf("suite %+v: appendSuite differs from encoding/xml (-want +got):\n%s", s, diff)
	}
}

// TestJUnitEncodingIsXMLs: the hand encoder writes what encoding/xml
// writes, byte for byte, for every text of testdata/junit-text.txt in
// every shape of a suite: escapes, invalid bytes, empty elements and
// omitted attributes alike.
func TestJUnitEncodingIsXMLs(t *testing.T) {
	for _, text := range junitTexts(t) {
		for shape := range 256 {
			checkEncoding(t, suiteOf(text, uint8(shape)))
		}
	}
}

func FuzzJUnitEncoding(f *testing.F) {
	for i, text := range junitTexts(f) {
		f.Add(text, uint8(i*37))
	}
	f.Fuzz(func(t *testing.T, text string, shape uint8) {
		checkEncoding(t, suiteOf(text, shape))
	})
}
