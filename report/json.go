package report

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/rules"
)

// The JSON report, version 1 (a public interface: fields are only ever
// added; report.schema.json describes it and a test holds real output to
// it):
//
//	{"version":1, "tool", "toolVersion", "target", "protocol", "contract", "started", "baseline"?,
//	 "results":[{"fixture", "check", "area", "severity", "status", "message", "path"?,
//	             "durationMs"?, "file"?, "line"?, "rules"?, "known"?}],
//	 "protocolVersion"?, "negotiation"?,
//	 "rules":{ID:{"level","versions","title"}},
//	 "summary":{"pass","fail","warn","skip","error","known","stale","notes","durationMs","aborted","gate"}}
//
// One result per finding for fail and warn, one per verdict otherwise.
// durationMs on a result is its fixture's wall time (every row of the
// fixture carries it; lint records have none). rules lists the rule IDs
// behind a fail or warn row; the top-level rules object gives
// their titles.
//
//go:embed report.schema.json
var jsonSchema []byte

// JSONSchema returns the JSON Schema (draft 2020-12) of the JSON report.
func JSONSchema() []byte { return slices.Clone(jsonSchema) }

type jsonSummary struct {
	Pass        int         `json:"pass"`
	Fail        int         `json:"fail"`
	Warn        int         `json:"warn"`
	Skip        int         `json:"skip"`
	Error       int         `json:"error"`
	Known       int         `json:"known"`
	Stale       []jsonStale `json:"stale"`
	Notes       []string    `json:"notes,omitempty"`
	DurationMs  int64       `json:"durationMs"`
	Aborted     string      `json:"aborted,omitempty"`
	Interrupted string      `json:"interrupted,omitempty"`
	Invalid     string      `json:"invalid,omitempty"`
	Gate        string      `json:"gate"`
}

type jsonStale struct {
	Fixture string `json:"fixture"`
	Check   string `json:"check"`
	Reason  string `json:"reason"`
}

type jsonRule struct {
	Level    string `json:"level"`
	Versions string `json:"versions"`
	Title    string `json:"title"`
}

type jsonWriter struct {
	w     io.Writer
	meta  Meta
	first bool
	// Rows repeat: the check's own fields, its pass row and most skip
	// reasons are the same for every exchange, so their encoding is
	// cached. A transcript of a million exchanges then costs one string
	// encoding per exchange (the fixture) plus one per finding.
	checkPart map[*checks.Check][]byte
	passPart  map[*checks.Check][]byte
	reasons   map[string][]byte
	// rows caches, by a verdict's place in its exchange, the members of
	// its last pass or skip row: every exchange lists the same checks in
	// the same order, and most of them pass or skip for the reason they
	// did before, so a row costs a comparison of the reason (its one
	// constant string, compared by address first) and a copy.
	rows []cachedRow
	// findingIDs are the rules of the findings met so far (findingRules),
	// up to maxMessageRules of them: a failure repeats from exchange to
	// exchange, and reading a message for its citations is a regular
	// expression's search.
	findingIDs map[findingKey][]string
	buf        []byte
	scratch    []byte
	// fx and tail hold the current exchange's fixture and shared members,
	// head the bytes of its rows before their members.
	fx, tail, head []byte
	cited          map[string]bool // rule IDs the rows cite, bounded by the catalogue
}

func (j *jsonWriter) Begin(m Meta) error {
	j.meta = m
	head := struct {
		Version  int    `json:"version"`
		Tool     string `json:"tool"`
		ToolVer  string `json:"toolVersion"`
		Target   string `json:"target"`
		Protocol string `json:"protocol"`
		Contract string `json:"contract"`
		Started  string `json:"started"`
		Baseline string `json:"baseline,omitempty"`
	}{1, m.Tool, m.Version, m.Target, m.Protocol, m.Contract, m.Started.UTC().Format("2006-01-02T15:04:05Z"), m.Baseline}
	b, err := json.Marshal(head)
	if err != nil {
		return err
	}
	// Stream: open the object, leave it open for results.
	b = append(b[:len(b)-1], `,"results":[`...)
	j.first = true
	j.checkPart = map[*checks.Check][]byte{}
	j.passPart = map[*checks.Check][]byte{}
	j.reasons = map[string][]byte{}
	j.cited = map[string]bool{}
	_, err = j.w.Write(escapeInvisible(b))
	return err
}

// A cachedRow is the members of a pass or skip row, from the check's to
// the message, and what they were made from.
type cachedRow struct {
	check   *checks.Check
	status  checks.Status
	reason  string
	members []byte
	// own is the slot's own buffer for skip rows: a reason that changes
	// every exchange (one that quotes the exchange) reuses it.
	own []byte
}

// maxCachedReasons bounds the reason cache: reasons that embed values
// (rare) must not grow it without end.
const maxCachedReasons = 1024

func (j *jsonWriter) str(s string, cache bool) []byte {
	if b, ok := j.reasons[s]; ok {
		return b
	}
	b := appendString(nil, s)
	if cache && len(j.reasons) < maxCachedReasons {
		j.reasons[s] = b
	}
	return b
}

// appendString appends s as encoding/json writes it, its C1 and format
// characters escaped too (escapeInvisible). Most texts of a report
// (fixture names, paths, reasons) are plain printable ASCII, which it
// quotes as they are; any other goes through json.Marshal, so the bytes
// stay the same either way. Every text of an exchange's rows comes
// through here, so the rows need no scan of their own.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(dst, escapeInvisible(b)...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func (j *jsonWriter) part(c *checks.Check) []byte {
	if b, ok := j.checkPart[c]; ok {
		return b
	}
	b, _ := json.Marshal(struct {
		Check    string `json:"check"`
		Area     string `json:"area"`
		Severity string `json:"severity"`
	}{c.ID, string(c.Area), string(c.Severity)})
	b = b[1 : len(b)-1] // the members alone
	j.checkPart[c] = b
	return b
}

// members writes a row's members from the check's to the message into a
// buffer reused for the next row.
func (j *jsonWriter) members(c *checks.Check, status checks.Status, msg []byte) []byte {
	m := append(j.scratch[:0], j.part(c)...)
	m = append(m, `,"status":"`...)
	m = append(m, status...)
	m = append(m, `","message":`...)
	m = append(m, msg...)
	j.scratch = m
	return m
}

// pass is the members of c's pass row from the check's to the message,
// its title: made once, as most rows are passes.
func (j *jsonWriter) pass(c *checks.Check) []byte {
	if b, ok := j.passPart[c]; ok {
		return b
	}
	b := bytes.Clone(j.members(c, checks.StatusPass, j.str(c.Title, false)))
	j.passPart[c] = b
	return b
}

func (j *jsonWriter) Exchange(r *Result) error {
	// The fixture, and the members every row of this exchange shares
	// after the message, in buffers of the writer's.
	fx := appendString(j.fx[:0], r.Fixture)
	j.fx = fx
	tail := j.tail[:0]
	if r.Timed {
		tail = append(tail, `,"durationMs":`...)
		tail = strconv.AppendFloat(tail, float64(r.Duration.Microseconds())/1000, 'f', -1, 64)
	}
	if r.Line > 0 {
		tail = append(tail, `,"file":`...)
		tail = append(tail, j.str(r.File, true)...)
		tail = append(tail, `,"line":`...)
		tail = strconv.AppendInt(tail, int64(r.Line), 10)
	}
	j.tail = tail
	sc := scopeOf(r)
	// Every row of the exchange opens with the same bytes up to its
	// members: made once here, ",\n" and all, where the first row of the
	// report has "\n" alone.
	head := append(j.head[:0], ",\n"...)
	head = append(head, `{"fixture":`...)
	head = append(head, fx...)
	head = append(head, ',')
	j.head = head
	b := j.buf[:0]
	// row writes one row; members are those from the check's to the
	// message.
	row := func(v *checks.Verdict, members []byte, path string, f *checks.Finding) {
		if j.first {
			b, j.first = append(b, head[len(","):]...), false
		} else {
			b = append(b, head...)
		}
		b = append(b, members...)
		if path != "" {
			b = append(b, `,"path":`...)
			b = append(b, j.str(path, false)...)
		}
		b = append(b, tail...)
		if f != nil {
			if ids := j.findingRules(v.Check, f, sc); len(ids) > 0 {
				b = append(b, `,"rules":[`...)
				for i, id := range ids {
					if i > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendQuote(b, id)
					j.cited[id] = true
				}
				b = append(b, ']')
			}
		}
		if len(r.Known) > 0 {
			// (Most exchanges know of no failure, lint's all of them:
			// their rows hash no ID.)
			if reason, ok := r.Known[v.Check.ID]; ok {
				b = append(b, `,"known":`...)
				b = append(b, j.str(reason, true)...)
			}
		}
		b = append(b, '}')
	}
	for i := range r.Verdicts {
		v := &r.Verdicts[i]
		switch v.Status {
		case checks.StatusFail, checks.StatusWarn:
			for k := range v.Findings {
				f := &v.Findings[k]
				row(v, j.members(v.Check, f.Status, j.str(f.Message, false)), f.Path, f)
			}
		case checks.StatusPass, checks.StatusSkip:
			if j.first || len(r.Known) > 0 {
				row(v, j.cachedMembers(i, v), "", nil)
				continue
			}
			// Most rows: no path, no rules, nothing known, not the
			// report's first row; row's work in line.
			b = append(b, head...)
			b = append(b, j.cachedMembers(i, v)...)
			b = append(b, tail...)
			b = append(b, '}')
		default:
			row(v, j.cachedMembers(i, v), "", nil)
		}
	}
	j.buf = b
	_, err := j.w.Write(b) // (its texts escaped by appendString)
	return err
}

// findingRules is findingRules, remembered for the findings met so far.
func (j *jsonWriter) findingRules(c *checks.Check, f *checks.Finding, sc scope) []string {
	k := findingKey{c, f.Rule, f.Message, f.Spec, f.Status, sc}
	ids, ok := j.findingIDs[k]
	if !ok {
		ids = findingRules(c, *f, sc)
		if len(j.findingIDs) < maxMessageRules {
			if j.findingIDs == nil {
				j.findingIDs = map[findingKey][]string{}
			}
			j.findingIDs[k] = ids
		}
	}
	return ids
}

// findingKey is what findingRules reads of a finding and its check.
type findingKey struct {
	check         *checks.Check
	rule, message string
	spec, status  checks.Status
	scope         scope
}

// maxMessageRules bounds the finding messages a JSON report remembers
// the rules of: a message quoting what each reply said is new every
// time, and the memory of them must not grow with the transcript.
const maxMessageRules = 4096

// cachedMembers is the members of the row of verdict v, the i-th of its
// exchange, which neither fails nor warns (one row, no path).
func (j *jsonWriter) cachedMembers(i int, v *checks.Verdict) []byte {
	if i >= len(j.rows) {
		j.rows = append(j.rows, make([]cachedRow, i+1-len(j.rows))...)
	}
	c := &j.rows[i]
	if c.check == v.Check && c.status == v.Status && c.reason == v.Reason && c.members != nil {
		return c.members
	}
	c.check, c.status, c.reason = v.Check, v.Status, v.Reason
	if v.Status == checks.StatusPass {
		c.members = j.pass(v.Check)
	} else {
		c.own = append(c.own[:0], j.members(v.Check, v.Status, j.str(v.Reason, true))...)
		c.members = c.own
	}
	return c.members
}

func (j *jsonWriter) End(s Summary) error {
	stale := make([]jsonStale, 0, len(s.Stale))
	for _, e := range s.Stale {
		stale = append(stale, jsonStale(e))
	}
	sum := jsonSummary{s.Pass, s.Fail, s.Warn, s.Skip, s.Error, s.Known, stale, s.Notes, s.Duration.Milliseconds(), s.Aborted, s.Interrupted, s.Invalid,
		map[string]string{"PASSED": "passed", "FAILED": "failed", "ABORTED": "aborted", "INTERRUPTED": "interrupted", "INVALID": "invalid"}[s.verdictWord(j.meta.FailOnWarn)]}
	tail := struct {
		Protocol    string              `json:"protocolVersion,omitempty"`
		Negotiation string              `json:"negotiation,omitempty"`
		Coverage    *jsonCoverage       `json:"coverage,omitempty"`
		Rules       map[string]jsonRule `json:"rules"`
		Summary     jsonSummary         `json:"summary"`
	}{s.Protocol, s.Negotiation, newJSONCoverage(s.Coverage), map[string]jsonRule{}, sum}
	for id := range j.cited {
		if r := rules.Lookup(id); r != nil {
			tail.Rules[id] = jsonRule{r.Level, r.Versions, r.Title}
		}
	}
	b, err := json.Marshal(tail)
	if err != nil {
		return err
	}
	// The tail's members continue the open object.
	out := append([]byte("\n],\n"), b[1:]...)
	_, err = j.w.Write(escapeInvisible(append(out, '\n')))
	return err
}

// escapeInvisible writes the C1 control characters (U+0080 to U+009F)
// and the format characters (Unicode category Cf: bidi controls such as
// U+202E, zero-width characters, U+FEFF, tag characters) of the JSON
// text b as \u escapes, as encoding/json does the C0 ones; the JSON
// value is the same. A terminal that shows the report (cat, jq -r, a CI
// log) may act on a C1 control (U+009B is CSI), and a bidi override shows
// the text after it reversed ("ok\u202etxt.exe" reads "okexe.txt"), while
// a server's text (a tool's name, a data key) reaches the report; every
// other format escapes them too. Outside strings JSON text is ASCII, so
// each such character lies in a string. b is returned as it is when it
// has none.
func escapeInvisible(b []byte) []byte {
	i := indexInvisible(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i >= 0 {
		r, n := utf8.DecodeRune(b[i:])
		out = append(out, b[:i]...)
		out = appendUEscape(out, r)
		b = b[i+n:]
		i = indexInvisible(b)
	}
	return append(out, b...)
}

// appendUEscape appends r as JSON's \u escape: past U+FFFF, the two of
// its UTF-16 surrogate pair.
func appendUEscape(dst []byte, r rune) []byte {
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		return appendUEscape(appendUEscape(dst, hi), lo)
	}
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

const hexDigits = "0123456789abcdef"

// indexInvisible is the index of the first character of b that
// escapeInvisible escapes, or -1. Most of a report is ASCII, which is
// skipped eight bytes at a time without decoding: a byte loop made the
// JSON writer nearly three times slower.
func indexInvisible(b []byte) int {
	for off := 0; off < len(b); {
		if off+8 <= len(b) && binary.LittleEndian.Uint64(b[off:])&0x8080808080808080 == 0 {
			off += 8
			continue
		}
		if b[off] < utf8.RuneSelf {
			off++
			continue
		}
		r, n := utf8.DecodeRune(b[off:])
		if r <= 0x9f || unicode.Is(unicode.Cf, r) { // r >= 0x80 here
			return off
		}
		off += n
	}
	return -1
}

// jsonCoverage is the coverage table of the JSON report.
type jsonCoverage struct {
	Version       string `json:"version"`
	Transport     string `json:"transport"`
	Checkable     int    `json:"checkable"`
	Exercised     int    `json:"exercised"`
	Passed        int    `json:"passed"`
	Warned        int    `json:"warned"`
	Failed        int    `json:"failed"`
	NotObserved   int    `json:"notObserved"`
	NotApplicable int    `json:"notApplicable"`
	NotCovered    int    `json:"notCovered"`
	// Unprobed: of Passed, the rules only checks of several rules
	// passed (see CoverageSummary).
	Unprobed int                `json:"passedUnprobed,omitempty"`
	Rules    []jsonRuleCoverage `json:"rules"`
}

type jsonRuleCoverage struct {
	ID       string   `json:"id"`
	Status   string   `json:"status"`
	Why      string   `json:"why,omitempty"`
	Fixtures []string `json:"fixtures,omitempty"`
	Checks   []string `json:"checks,omitempty"`
}

func newJSONCoverage(c *CoverageSummary) *jsonCoverage {
	if c == nil {
		return nil
	}
	out := &jsonCoverage{c.Version, c.Transport, c.Checkable, c.Exercised, c.Passed, c.Warned, c.Failed, c.NotObserved, c.NotApplicable, c.NotCovered, c.Unprobed, []jsonRuleCoverage{}}
	for _, r := range c.Rules {
		out.Rules = append(out.Rules, jsonRuleCoverage{r.ID, r.Status, r.Why, r.Fixtures, r.Checks})
	}
	return out
}
