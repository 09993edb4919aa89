// Package baseline reads, matches and writes a baseline: the known
// failures of a server, each named by fixture and check (never by
// position, so a growing corpus does not shift it) and each with a
// reason. A known failure is reported but does not fail the gate; an
// entry whose failure did not happen is stale and does fail it, so the
// baseline only ever tightens.
//
// The file is line-oriented text, sorted, one entry a line, so a change
// to the known failures is a one-line diff:
//
//	# comments and blank lines are ignored
//	FIXTURE CHECK REASON…
//	FIXTURE CHECK:warn REASON…   (a warning accepted, not a fail)
//	"a fixture with spaces" CHECK REASON…
package baseline

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/report"

	"github.com/wymcp/wymcp-check/inputfile"
)

// An Entry is one known failure.
type Entry struct {
	Fixture string
	Check   string
	Reason  string
	Line    int // its line in the file; 0 when it was not read from one
	// Warn: what was accepted is a warning (a SHOULD, written CHECK:warn):
	// a fail of the same check on the fixture is another, worse finding,
	// which the entry does not accept (review rev43).
	Warn bool
}

// warnSuffix marks an entry written for a warning.
const warnSuffix = ":warn"

type key struct{ fixture, check string }

// A Baseline is a set of entries and what a run made of them.
type Baseline struct {
	File string
	// BadLines counts the lines that could not be used: Parse names the
	// first MaxProblems of them.
	BadLines int
	entries  []Entry
	index    map[key]int
	failed   []bool // its check still found something there (warn or fail), gating or not
	judged   []bool // its check gave a verdict on its fixture (pass, warn, fail; not skip or error)
}

// A LineError is a line of a baseline that could not be used; the other
// lines still are.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Load reads a baseline file. Failing to read the file at all is the
// error; each bad line is a *LineError in problems, and the rest loads.
func Load(path string, isCheck func(id string) bool) (b *Baseline, problems []error, err error) {
	// Not waiting for a FIFO's writer (Parse bounds what it reads).
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading baseline: %w", err)
	}
	defer f.Close()
	cr := &countingReader{r: f}
	b, problems, err = Parse(path, cr, isCheck)
	if err != nil {
		return nil, nil, fmt.Errorf("reading baseline %s: %w", path, err)
	}
	if cr.n == 0 && !inputfile.Regular(f) {
		return nil, nil, fmt.Errorf("reading baseline %s: %w", path, inputfile.ErrNoWriter)
	}
	return b, problems, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// MaxLine bounds a line of a baseline, in bytes. A longer line (a stack
// trace pasted as a reason) is a bad line of its own: it is read past,
// never held whole, and the other lines still load.
const MaxLine = 1 << 20

// MaxFile bounds what is read of a baseline, in bytes. A bad line is
// read past to its end, and a file with no end (/dev/zero, a pipe that
// never sends "\n") would be read for ever, before any deadline: past
// MaxFile it is read no further, and the line it stopped in is a bad
// line. A baseline is short text; this is over half a million entries.
const MaxFile = 64 << 20

// bom is the UTF-8 byte order mark an editor (Windows Notepad) may write
// first: it is no part of the first line, as the contract loader reads
// past it, or a comment would read as an entry and a fixture would never
// match.
const bom = "\xef\xbb\xbf"

// MaxProblems bounds the bad lines Parse names one by one; the rest are
// counted (Baseline.BadLines): a file of millions of bad lines must cost
// what its first ones say, not an error each (review rev29).
const MaxProblems = 1000

// Parse reads a baseline from r; name is used in errors. Only failing
// to read r is the error; each bad line is a *LineError in problems, the
// first MaxProblems of them.
func Parse(name string, r io.Reader, isCheck func(id string) bool) (*Baseline, []error, error) {
	b := &Baseline{File: name, index: map[key]int{}}
	var problems []error
	bad := func(e *LineError) {
		b.BadLines++
		if len(problems) < MaxProblems {
			problems = append(problems, e)
		}
	}
	// One byte past the bound: reading it says the file runs past.
	lr := &io.LimitedReader{R: r, N: MaxFile + 1}
	br := bufio.NewReader(lr)
	if p, _ := br.Peek(len(bom)); string(p) == bom {
		br.Discard(len(bom))
	}
	for n := 1; ; n++ {
		line, long, err := readLine(br, MaxLine)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if lr.N == 0 && br.Buffered() == 0 {
			// This line holds the byte past the bound (the lines before
			// ended within it): it may be cut, and nothing after is read.
			bad(&LineError{name, n, fmt.Errorf("the baseline runs past %d bytes (a baseline is short text): read no further", MaxFile)})
			break
		}
		if long > 0 {
			bad(&LineError{name, n, fmt.Errorf("line too long: %d bytes, at most %d (a reason is one short line)", long, MaxLine)})
			continue
		}
		if e, err := b.entry(line, isCheck); err != nil {
			bad(&LineError{name, n, err})
		} else if e != nil {
			e.Line = n
			b.index[key{e.Fixture, e.Check}] = len(b.entries)
			b.entries = append(b.entries, *e)
		}
	}
	b.failed = make([]bool, len(b.entries))
	b.judged = make([]bool, len(b.entries))
	return b, problems, nil
}

// readLine reads one line of br, holding at most max bytes of it (and
// its end). A longer line is read to its end and dropped: long is then
// the bytes it ran to. err is io.EOF only when br had no line left; a
// last line without its newline comes with a nil err.
func readLine(br *bufio.Reader, max int) (line []byte, long int, err error) {
	read := 0
	for {
		chunk, err := br.ReadSlice('\n')
		read += len(chunk)
		if long == 0 && len(line)+len(chunk) <= max+len("\r\n") {
			line = append(line, chunk...)
		} else {
			long, line = read, nil
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !(errors.Is(err, io.EOF) && read > 0):
			return nil, 0, err
		case long == 0 && len(bytes.TrimRight(line, "\r\n")) > max:
			return nil, read, nil
		}
		return line, long, nil
	}
}

// entry reads one line: nil for a comment or a blank line, else the
// entry or why it cannot be one.
func (b *Baseline) entry(line []byte, isCheck func(id string) bool) (*Entry, error) {
	text := strings.TrimSpace(string(line))
	if text == "" || strings.HasPrefix(text, "#") {
		return nil, nil
	}
	e, err := parseLine(text)
	if err != nil {
		return nil, err
	}
	if !isCheck(e.Check) {
		return nil, fmt.Errorf("unknown check %q (wymcp-check list shows them)", e.Check)
	}
	// A check ID is read in any case, as --checks reads it, and kept in
	// the registry's spelling: verdicts are matched by it exactly, and an
	// entry "err3002" would otherwise match nothing, ever.
	if c := checks.Lookup(e.Check); c != nil {
		e.Check = c.ID
	}
	if i, dup := b.index[key{e.Fixture, e.Check}]; dup {
		return nil, fmt.Errorf("%s %s is listed twice (also line %d)", quote(e.Fixture), e.Check, b.entries[i].Line)
	}
	return &e, nil
}

// quote is baseline text as a message shows it: quoted, escaped as a
// finding quotes a server's text (a terminal escape in a baseline line
// must not reach the terminal that reads the message), and cut short (a
// line may run to MaxLine).
func quote(s string) string { return checks.Quote(s, quoteMax) }

// quoteMax bounds what a message quotes of a line, in characters.
const quoteMax = 80

func parseLine(text string) (Entry, error) {
	var e Entry
	rest := text
	if strings.HasPrefix(text, `"`) {
		q, err := strconv.QuotedPrefix(text)
		if err != nil {
			return e, fmt.Errorf("fixture: unterminated or malformed quoted string")
		}
		e.Fixture, _ = strconv.Unquote(q)
		rest = text[len(q):]
		if rest != "" && !unicode.IsSpace(rune(rest[0])) {
			return e, fmt.Errorf("want a space after the quoted fixture")
		}
	} else if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		e.Fixture, rest = text[:i], text[i:]
	} else {
		e.Fixture, rest = text, ""
	}
	fields := strings.Fields(rest)
	switch {
	case e.Fixture == "":
		return e, errors.New("empty fixture")
	case len(fields) == 0:
		return e, errors.New("want FIXTURE CHECK REASON, the check is missing")
	case len(fields) == 1:
		return e, fmt.Errorf("%s %s has no reason: say why the failure is accepted", quote(e.Fixture), quote(fields[0]))
	}
	e.Check = fields[0]
	e.Reason = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), e.Check))
	if c, ok := strings.CutSuffix(e.Check, warnSuffix); ok {
		e.Check, e.Warn = c, true
	}
	return e, nil
}

// boolOrder orders false before true.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Len is the number of entries.
func (b *Baseline) Len() int {
	if b == nil {
		return 0
	}
	return len(b.entries)
}

// Reason returns the reason of the entry for fixture and check.
func (b *Baseline) Reason(fixture, check string) (string, bool) {
	if b == nil {
		return "", false
	}
	i, ok := b.index[key{fixture, check}]
	if !ok {
		return "", false
	}
	return b.entries[i].Reason, true
}

// Rename gives entries another fixture name: each one rename maps to a
// name no entry holds yet (an entry under the new name already is the
// one that applies; the other stays as it was, not judged). A tool that
// changes how it names fixtures keeps the baselines written before: the
// entries then match, keep their reasons, and are written in the new
// form. It returns how many it renamed.
func (b *Baseline) Rename(rename func(fixture string) (string, bool)) int {
	if b == nil {
		return 0
	}
	n := 0
	for i := range b.entries {
		e := &b.entries[i]
		to, ok := rename(e.Fixture)
		if !ok || to == e.Fixture {
			continue
		}
		if _, taken := b.index[key{to, e.Check}]; taken {
			continue
		}
		delete(b.index, key{e.Fixture, e.Check})
		e.Fixture = to
		b.index[key{to, e.Check}] = i
		n++
	}
	return n
}

// Match takes the verdicts of one exchange and returns the known
// failures among them: check ID to reason, for each verdict that fails
// the gate and has an entry (nil when there is none). It also records,
// for Stale, which entries were judged and which failed.
//
// An error (could not judge: a timeout, the checker's own limits) is
// never known: an entry holds a failure of the server, and reading it
// as leave to judge nothing would pass a gate on a run that judged
// nothing. The error fails the gate as any other, and the entry is not
// judged by it (neither known nor stale).
func (b *Baseline) Match(fixture string, vs []checks.Verdict, gates func(checks.Status) bool) map[string]string {
	if b == nil || len(b.entries) == 0 {
		return nil
	}
	var known map[string]string
	for _, v := range vs {
		i, ok := b.index[key{fixture, v.Check.ID}]
		if !ok || v.Status == checks.StatusSkip || v.Status == checks.StatusError {
			continue
		}
		b.judged[i] = true
		if v.Status != checks.StatusPass {
			// A warning that this run's gate lets through (a baseline
			// written with --fail-on warn, read without) is still there:
			// the entry is not stale, only not needed.
			b.failed[i] = true
		}
		if gates(v.Status) && !(b.entries[i].Warn && v.Status == checks.StatusFail) {
			if known == nil {
				known = map[string]string{}
			}
			known[v.Check.ID] = b.entries[i].Reason
		}
	}
	return known
}

// Entries returns the entries, in the file's order.
func (b *Baseline) Entries() []Entry { return b.filter(func(int) bool { return true }) }

// Stale returns the entries whose check was judged and passed: the
// server got better, and each of them fails the gate until removed.
func (b *Baseline) Stale() []Entry {
	return b.filter(func(i int) bool { return b.judged[i] && !b.failed[i] })
}

// Held returns the entries that are not stale: not judged by this run,
// or whose check still found something (see Match).
func (b *Baseline) Held() []Entry {
	return b.filter(func(i int) bool { return !b.judged[i] || b.failed[i] })
}

// Unjudged returns the entries this run did not judge (their fixture did
// not run, or their check skipped it or could not judge it). They are
// neither known nor stale: a selection of fixtures must not make the
// rest of the baseline stale.
func (b *Baseline) Unjudged() []Entry {
	return b.filter(func(i int) bool { return !b.judged[i] })
}

func (b *Baseline) filter(keep func(int) bool) []Entry {
	if b == nil {
		return nil
	}
	var out []Entry
	for i, e := range b.entries {
		if keep(i) {
			out = append(out, e)
		}
	}
	return out
}

const header = `# wymcp-check baseline: known failures, one per line: FIXTURE CHECK REASON.
# CHECK:warn accepts a warning of the check only, not a fail of it.
# A known failure is reported and does not fail the gate. An entry that no
# longer fails is stale and fails the gate: delete its line. Write the
# reason a failure is accepted (an issue, a date); a fixture with spaces is
# a quoted string. Regenerate with: wymcp-check check … --write-baseline FILE
`

// Write writes entries as a baseline, sorted by fixture and check, one a
// line, duplicates dropped (the first reason wins).
func Write(w io.Writer, entries []Entry) error {
	es := slices.Clone(entries)
	// (A fail's entry before a warning's of the same check: it accepts
	// both, and the first is kept.)
	slices.SortStableFunc(es, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Fixture, b.Fixture), cmp.Compare(a.Check, b.Check), boolOrder(a.Warn, b.Warn))
	})
	es = slices.CompactFunc(es, func(a, b Entry) bool { return a.Fixture == b.Fixture && a.Check == b.Check })
	var sb strings.Builder
	sb.WriteString(header)
	for _, e := range es {
		fixture := e.Fixture
		if fixture == "" || strings.HasPrefix(fixture, `"`) || strings.HasPrefix(fixture, "#") || strings.IndexFunc(fixture, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
			fixture = strconv.Quote(fixture)
		}
		reason := cleanReason(e.Reason)
		if reason == "" {
			reason = "(no reason given)"
		}
		check := e.Check
		if e.Warn {
			check += warnSuffix
		}
		fmt.Fprintf(&sb, "%s %s %s\n", fixture, check, reason)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// MaxReason bounds a reason as written, in characters: a baseline is
// committed and read in review, and a reason taken from a finding quotes
// what the server sent.
const MaxReason = 200

// cleanReason is a reason as written: on its line (whitespace, line
// breaks included, is one space), with what a terminal or an editor
// would act on or hide (control and format characters, bidi overrides
// (Trojan Source), noncharacters, bad UTF-8) escaped as the reports
// escape it, and at most MaxReason characters long. Written again it is
// unchanged, so a rewritten baseline does not drift.
func cleanReason(s string) string {
	s = report.Sanitize(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= MaxReason {
		return s
	}
	cut, n := 0, 0
	for i := range s {
		if n == MaxReason-1 {
			cut = i
			break
		}
		n++
	}
	// Never split an escape: a cut \u202 would read as other text.
	if j := strings.LastIndexByte(s[:cut], '\\'); j >= 0 && cut-j < len(`\U00000000`) {
		cut = j
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}
