package checks

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// needData guards checks that read error.data as an object.
func needData(p *Pass) (gjson.Result, gjson.Result, error) {
	e, err := needError(p)
	if err != nil {
		return e, gjson.Result{}, err
	}
	d := p.Reply.Response.Get("error.data")
	if !d.Exists() {
		return e, d, skipNoData
	}
	if !d.IsObject() {
		return e, d, Skip("error.data is not an object (see ERR3001)")
	}
	return e, d, nil
}

var DataObject = &Check{
	ID:         "ERR3001",
	StrictOnly: true,
	Title:      "Error data is absent or an object",
	SpecRef:    "contract clause 3",
	Severity:   MUST,
	Area:       AreaData,
	Doc: `error.data is either absent or a JSON object of structured detail. A
string, number or array under data is free-form text or an unnamed list
that no client can read reliably. A null warns: it is how many
serializers write an absent member, and carries nothing a client could
misread; so does an empty string, which the official Python SDK writes
as the data of every invalid-params error (review rev61). Strict
contract only: the spec lets data be any JSON value.`,
	Run: func(p *Pass) error {
		e, err := needError(p)
		if err != nil {
			return err
		}
		switch d := e.Get("data"); {
		case d.Type == gjson.Null && d.Exists():
			// What a serializer writes for an absent member (a Go field
			// without omitempty, a None): it carries no detail, no prose
			// and no echo, which is what the clause guards against.
			p.contractWarnf("error.data", "data is null; leave it out: absent says the same to a client that reads data as an object")
		case d.Type == gjson.String && d.Str == "":
			// Empty, as null: no detail, no prose, no echo (the Python
			// SDK's invalid-params error carries it).
			p.contractWarnf("error.data", "data is an empty string; leave it out: absent says the same to a client that reads data as an object")
		case d.Exists() && !d.IsObject():
			p.Failf("error.data", "data is %s, want absent or an object", envelope.Kind(d))
		}
		return nil
	},
}

var DataKeys = &Check{
	ID:         "ERR3002",
	StrictOnly: true,
	Title:      "Error data keys come from the closed vocabulary",
	SpecRef:    "contract clauses 3 and 4",
	Severity:   MUST,
	Area:       AreaData,
	Doc: `Every key of error.data comes from the contract's closed vocabulary:
errors, header, expected, received, supported, requested (a contract file
may add keys). Keys the MCP schema defines for a spec-defined error are
always allowed (requiredCapabilities of -32021, elicitations of -32042): a
contract cannot forbid what the protocol requires. An example's key is
no requirement: the 2025 resources page's -32002 example carries
data.uri, which fails here (the finding says so, and how to admit it);
under --contract spec it passes. Any other key (stack,
detail, reason, request) tends to leak internals and lets clients depend on
undocumented shapes. An error without data meets the rule (clause 3:
data is absent, or such an object), and passes. Strict contract only.`,
	Run: func(p *Pass) error {
		e, d, err := needData(p)
		if err == skipNoData {
			return nil // no data, no key outside the vocabulary (clause 3: data is absent or…)
		}
		if err != nil {
			return err
		}
		code := int(e.Get("code").Int())
		d.ForEach(func(k, _ gjson.Result) bool {
			if !p.Contract.AllowsDataKey(p.Expect.Version, code, k.Str) {
				hint := ""
				if k.Str == "uri" && (code == envelope.CodeResourceNotFound || p.Expect.Method == "resources/read") {
					// The official Go SDK's default: a person must learn
					// why the spec's own example fails, and how to admit it.
					hint = "; the spec's resources/read example carries it, as an example, not a rule (T-ERR-6): a contract file's dataKeys admits it"
				}
				p.Failf(envelope.JoinPath("error.data", k.Str), "key %s is not in the data vocabulary (%s)%s", Quote(k.Str, quoteN), keyList(p.Contract.DataKeys), hint)
			}
			return true
		})
		return nil
	},
}

var DataNoProse = &Check{
	ID:         "ERR3003",
	StrictOnly: true,
	Title:      "Error data values are not prose",
	SpecRef:    "contract clause 3",
	Severity:   MUST,
	Area:       AreaData,
	Doc: `No value under error.data is a prose sentence of the server's: the cause
belongs in the one-line message, and data holds structured values
(pointers, header names, versions). A string counts as prose when it
spans lines (any Unicode line break), or has a space and ends in "!" or
"?", or in "." after a clause or after words that open with a capital
and hold a verb with words after it ("Field is required."), or holds
two sentences, or speaks to the
reader ("please", "sorry", "you", "see"), or is a clause however short
(a subject, a pronoun or an article's noun, before its verb: "it must be
positive", "the recipient is not permitted"; a verb with no subject,
"must be positive", is a cause phrase), or runs to six words or more
among which an English verb, pronoun or clause word stands ("must",
"is", "may", "it", "while", "expected"…). A noun phrase with a full stop
("a positive integer.") only warns: a value in a sentence's form.
Six words or more without one only warn, a run of values joined by
"or", "and" or "to" aside, which passes ("image/png or image/jpeg or
image/gif"): an article or a preposition joins a noun phrase's words as
well as a sentence's, a space-separated list (OAuth scopes) and a
sentence in another language read alike, and the checker cannot tell
which. Values separated by commas or semicolons, paths and URIs are lists
and values, not prose.

The member names of objects nested under data's keys are read as values
are (data's own keys are ERR3002's): a traceback written as a name under
an allowed key spans lines all the same, and fails. A line of a stack
trace ("at f (/srv/x.js:12:9)", "File \"x.py\", line 12, in f") as a
value or a name only warns: it is no prose, and the contract names only
prose, but it is the server's internals, which the closed vocabulary
keeps out, moved under a key it allows.

What is exempt is decided by meaning, not by key name: strings the MCP
schema defines as human text for a spec-defined error (the message of
each URL elicitation of -32042) are meant for people; a string that is a
value of the request (or a truncation of one) is a quote, whatever its
words, and ERR4001 bounds it; the problems of a distilled errors entry
are judged by ERR5001 as short cause phrases. An error without data
passes. Strict contract only.`,
	Run: func(p *Pass) error {
		e, d, err := needData(p)
		if err == skipNoData {
			return nil // no data, no prose in it
		}
		if err != nil {
			return err
		}
		code := int(e.Get("code").Int())
		for _, ps := range p.Reply.errorDataStrings() {
			path, s := ps.path, ps.s
			switch {
			case isProblemPath(path, p.Contract.ProblemsKey):
			case isLocationPath(path, p.Contract.LocationKey) && len(foreignTokens(p, s)) == 0:
			case humanText(p.Expect.Version, code, path):
			case quotesRequest(p, s):
			default:
				switch reading := readProse(s); {
				case reading == surelyProse:
					p.Failf(path, "value is prose: %s", Quote(s, quoteN))
				case isStackFrame(s):
					// Not prose, and no rule of the contract names it; but
					// a frame is the server's internals, which the closed
					// vocabulary keeps out, moved under a key it allows.
					p.Warnf(path, "value is a line of a stack trace, the server's internals rather than structured detail: %s", Quote(s, quoteN))
				case reading == maybeProse:
					p.Warnf(path, "value may be prose (six words or more, not a list of short values): %s", Quote(s, quoteN))
				case reading == stoppedPhrase:
					p.Warnf(path, "value ends in a full stop, as a sentence does; a value needs none: %s", Quote(s, quoteN))
				}
			}
		}
		judgeNestedNames(p, d)
		return nil
	},
}

// judgeNestedNames reads the member names of objects nested under data's
// own keys as values are read: a reader sees a name as much as a value,
// and a traceback written as a name, under a key the vocabulary allows,
// is prose all the same. (Data's own keys are ERR3002's, judged against
// the vocabulary.) The path of a name is written out only for a finding:
// a hostile data may hold hundreds of thousands of members.
func judgeNestedNames(p *Pass, d gjson.Result) {
	eachNestedName(d, func(steps []pathStep, name string) { judgeName(p, steps, name) })
}

// eachNestedName calls fn with every member name of the objects nested
// under d's own keys, and the steps to the object that holds it (valid
// only during the call).
func eachNestedName(d gjson.Result, fn func(steps []pathStep, name string)) {
	var at []pathStep
	d.ForEach(func(k, v gjson.Result) bool {
		if !v.IsObject() && !v.IsArray() {
			return true // no names under it (and most data holds only such values)
		}
		if at == nil {
			at = make([]pathStep, 0, 8) // room for the usual depth, grown once if not
		}
		at = append(at[:0], pathStep{key: k.Str, idx: -1})
		nestedNames(v, &at, fn)
		return true
	})
}

// A pathStep is one step of a display path: a member's name, or an
// array's index.
type pathStep struct {
	key string
	idx int // -1 for a member
}

// stepsPath writes the display path of steps under error.data.
func stepsPath(steps []pathStep) string {
	path := "error.data"
	for _, s := range steps {
		if s.idx >= 0 {
			path += "." + strconv.Itoa(s.idx)
		} else {
			path = envelope.JoinPath(path, s.key)
		}
	}
	return path
}

// nestedNames calls fn with the member names of every object at or
// under v, whose path is *at. Depth is bounded by the parser
// (envelope.MaxDepth), so the recursion is safe.
func nestedNames(v gjson.Result, at *[]pathStep, fn func(steps []pathStep, name string)) {
	switch {
	case v.IsObject():
		v.ForEach(func(k, val gjson.Result) bool {
			fn(*at, k.Str)
			*at = append(*at, pathStep{key: k.Str, idx: -1})
			nestedNames(val, at, fn)
			*at = (*at)[:len(*at)-1]
			return true
		})
	case v.IsArray():
		i := 0
		v.ForEach(func(_, val gjson.Result) bool {
			*at = append(*at, pathStep{idx: i})
			nestedNames(val, at, fn)
			*at = (*at)[:len(*at)-1]
			i++
			return true
		})
	}
}

// judgeName reads one member name of the object at steps.
func judgeName(p *Pass, steps []pathStep, name string) {
	if (name == p.Contract.LocationKey || name == p.Contract.ProblemsKey) && len(steps) == 2 && steps[0].key == "errors" && steps[1].idx >= 0 {
		return // the contract's own names for a distilled entry's members (review rev52)
	}
	reading := readProse(name)
	frame := reading == notProse && isStackFrame(name)
	if reading == notProse && !frame || quotesRequest(p, name) {
		return
	}
	switch path := stepsPath(steps); {
	case reading == surelyProse:
		p.Failf(path, "member name is prose: %s", Quote(name, quoteN))
	case frame:
		p.Warnf(path, "member name is a line of a stack trace, the server's internals rather than structured detail: %s", Quote(name, quoteN))
	case reading == stoppedPhrase:
		p.Warnf(path, "member name ends in a full stop, as a sentence does: %s", Quote(name, quoteN))
	default:
		p.Warnf(path, "member name may be prose (six words or more, not a list of short values): %s", Quote(name, quoteN))
	}
}

// humanTextFields are the strings the MCP schema defines as text for a
// person inside the data of a spec-defined error.
var humanTextFields = []struct {
	version string
	code    int
	path    *regexp.Regexp
}{
	// ElicitRequestURLParams.message: "the message to present to the user".
	{envelope.V20251125, envelope.CodeURLElicitation, regexp.MustCompile(`^error\.data\.elicitations\.[0-9]+\.message$`)},
}

func humanText(version string, code int, path string) bool {
	for _, h := range humanTextFields {
		if h.version == version && h.code == code && h.path.MatchString(path) {
			return true
		}
	}
	return false
}

// quotesRequest: s is a value the request carried (a string in its body,
// a header value, decoded), whole or cut to a prefix: a quote, not the
// server's prose.
func quotesRequest(p *Pass, s string) bool {
	// The quote as written, and as the contract asks it written: its
	// control characters escaped (undone here), between quote marks
	// (not counted).
	for _, q := range quoteReadings(s) {
		core := strings.TrimSuffix(strings.TrimSuffix(q, "…"), "...")
		if utf8.RuneCountInString(core) < 4 {
			continue
		}
		values, rest := p.Reply.sortedTexts(p.Exchange, p.Expect)
		if quotesSorted(values, q, core) || quotesSorted(rest, q, core) {
			return true
		}
		// A value quoted as the server decoded it (a percent-encoded URI).
		if quotesSorted(p.Reply.decodedValues(p.Exchange, p.Expect), q, core) {
			return true
		}
	}
	return false
}

// quoteReadings are the texts a quoted value s may stand for: s itself,
// s without the quote marks around it, and each with its control
// characters' escapes undone.
func quoteReadings(s string) []string {
	out := []string{s}
	if n := len(s); n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n-1] == s[0] {
		out = append(out, s[1:n-1])
	} else if q, ok := strings.CutPrefix(s, "“"); ok && strings.HasSuffix(q, "”") {
		out = append(out, strings.TrimSuffix(q, "”"))
	}
	for _, q := range out[:len(out):len(out)] {
		if u := unescapeControls(q); u != q {
			out = append(out, u)
		}
	}
	if len(out) > 1 {
		// A quoted value as a string literal writes it: Go's %q and
		// Python's json.dumps escape quote marks, backslashes and
		// non-ASCII letters too (review rev38).
		if u := jsonUnescape(out[1]); u != out[1] && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// decodedValues are the request's values that hold a percent sign,
// percent-decoded and sorted: made once per reply, as every string under
// data asks for them and a request may hold 50,000 values.
func (r *Reply) decodedValues(ex *envelope.Exchange, exp *expect.Expectation) []string {
	rs := r.request(ex, exp)
	if !rs.decodedDone {
		rs.decodedDone = true
		for _, v := range rs.all[:rs.nv] {
			if strings.IndexByte(v, '%') >= 0 {
				rs.decoded = append(rs.decoded, percentDecode(v))
			}
		}
		slices.Sort(rs.decoded)
	}
	return rs.decoded
}

// quotesSorted: sorted holds s, or a text that starts with core.
func quotesSorted(sorted []string, s, core string) bool {
	if _, found := slices.BinarySearch(sorted, s); found {
		return true
	}
	// The texts that start with core, if any, begin where core would go.
	i, _ := slices.BinarySearch(sorted, core)
	return i < len(sorted) && strings.HasPrefix(sorted[i], core)
}

// isLocationPath: error.data.errors.N.<location>, the JSON Pointer of a
// distilled entry.
func isLocationPath(path, key string) bool {
	rest, ok := strings.CutPrefix(path, "error.data.errors.")
	if !ok {
		return false
	}
	n, member, ok := strings.Cut(rest, ".")
	return ok && n != "" && allDigits(n) && member == envelope.JoinPath("", key)
}

// foreignTokens are the tokens of the pointer loc that name nothing of the
// request: neither an index nor one of its member names. A distilled
// entry's location is made of the request's names by the contract's own
// rule; any other token is text the reply carries (all of loc when it is
// no pointer).
func foreignTokens(p *Pass, loc string) []string {
	return foreignIn(func() []string { return p.Reply.request(p.Exchange, p.Expect).keys }, loc)
}

// foreignIn is foreignTokens with the request's member names, sorted,
// from keys (called only for a pointer). It reads the pointer as
// pointerTokens does but makes no list of its tokens: every location
// under a distilled error's data is read by two checks, and most name
// only the request's members (FuzzForeignTokens holds it to
// pointerTokens).
func foreignIn(keys func() []string, loc string) []string {
	if loc == "" {
		return nil
	}
	if loc[0] != '/' || !validEscapes(loc) {
		return []string{loc}
	}
	names := keys()
	var out []string
	for rest := loc[1:]; ; {
		t, next, more := strings.Cut(rest, "/")
		t = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		switch _, found := slices.BinarySearch(names, t); {
		case t != "" && allDigits(t):
			// an array index
		case !found:
			out = append(out, t)
		}
		if !more {
			return out
		}
		rest = next
	}
}

// allDigits: s holds ASCII digits alone (strings.Trim with the digits
// as its cutset says the same, but makes the cutset's set on every call,
// and every string under a distilled error's data asks).
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validEscapes: every ~ of the pointer p begins ~0 or ~1 (RFC 6901).
func validEscapes(p string) bool {
	for j := strings.IndexByte(p, '~'); j >= 0; {
		if j+1 >= len(p) || p[j+1] != '0' && p[j+1] != '1' {
			return false
		}
		k := strings.IndexByte(p[j+1:], '~')
		if k < 0 {
			break
		}
		j += 1 + k
	}
	return true
}

// keyList lists the data keys for a finding: the first dozen of a
// contract file's long list, and how many more (a file of 20,000 keys
// wrote them all into every ERR3002 finding, review rev52).
func keyList(keys []string) string {
	const shown = 12
	if len(keys) <= shown {
		return strings.Join(keys, ", ")
	}
	return strings.Join(keys[:shown], ", ") + " and " + strconv.Itoa(len(keys)-shown) + " more"
}

// isProblemPath: error.data.errors.N.<problems>.M
//
// It runs on every string under data, so it reads the path in place
// rather than splitting it.
func isProblemPath(path, key string) bool {
	if strings.Count(path, ".") < 5 {
		return false
	}
	_, rest, _ := strings.Cut(path, ".")
	_, rest, _ = strings.Cut(rest, ".")
	rest, ok := strings.CutPrefix(rest, "errors.")
	if !ok {
		return false
	}
	n, rest, _ := strings.Cut(rest, ".")
	// The key as the path writes it, its dots and gjson's other
	// characters escaped, as isLocationPath reads it (a "p.list" key was
	// never matched, review rev52).
	rest, ok = strings.CutPrefix(rest, envelope.JoinPath("", key)+".")
	return ok && n != "" && allDigits(n) && rest != "" && allDigits(rest)
}

// A value's reading as prose: a sentence for certain, a run of words that
// may be one, or a value.
type proseReading int

const (
	notProse proseReading = iota
	maybeProse
	surelyProse
	// stoppedPhrase: a value's words with a sentence's full stop ("a
	// positive integer."): no clause, so no prose, but a sentence's form.
	stoppedPhrase
)

// functionWords are English words a list of values does not hold and a
// sentence of six words hardly lacks (articles, modals, prepositions, and
// the verbs of a validator's complaint); they tell a sentence without its
// final stop from a list of words.
var functionWords = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "are": true, "was": true, "were": true,
	"be": true, "been": true, "must": true, "should": true, "may": true, "can": true,
	"cannot": true, "could": true, "would": true, "will": true, "not": true, "of": true,
	"to": true, "in": true, "on": true, "at": true, "by": true, "for": true, "from": true,
	"with": true, "and": true, "or": true, "but": true, "than": true, "this": true,
	"that": true, "it": true, "has": true, "have": true, "does": true, "please": true,
	"you": true, "your": true, "if": true, "when": true, "which": true, "there": true,
	"no": true, "now": true, "see": true, "try": true, "sorry": true, "thanks": true,
}

// complaintVerbs are the verbs of a validator's complaint ("expected
// number, got string"): a sentence's words too, though a one-word item
// of a list may be one ("pending, received, shipped").
var complaintVerbs = map[string]bool{
	"got": true, "received": true, "expected": true, "expects": true, "requires": true,
	"says": true, "provide": true,
}

// readProse says how surely s is a sentence. A line break, or a space and
// sentence punctuation at the end or between two words, make one. Six
// words or more make one when an English function word is among them;
// otherwise they may be a list (scope names, comma-separated versions, a
// path with spaces) or prose in a language the checker cannot read, so
// only a run of plain words is doubtful. (A value of the request, decoded
// or not, is a quote, whatever its words: quotesRequest.)
func readProse(s string) proseReading {
	s = strings.TrimSpace(s)
	if hasLineBreak(s) {
		return surelyProse
	}
	if strings.HasSuffix(s, "。") || strings.HasSuffix(s, "！") || strings.HasSuffix(s, "？") {
		// A sentence of a script written without spaces between words.
		if utf8.RuneCountInString(s) >= 6 {
			return surelyProse
		}
		return notProse
	}
	if !strings.ContainsFunc(s, unicode.IsSpace) {
		return notProse // one word: an identifier, a value (NBSP counts as a space)
	}
	if strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return surelyProse
	}
	if body, stop := strings.CutSuffix(s, "."); stop {
		// A noun phrase with a full stop ("a positive integer.") is a
		// value in a sentence's form: it warns, as its words are no
		// clause (review rev61: it failed as surely prose). Anything
		// more is a sentence: a clause, or words that open with a
		// capital and have a verb with words after it, a sentence's
		// whole form ("Field is required.", review rev67).
		if !strings.HasSuffix(body, ".") && readProse(body) == notProse && !shortClause(strings.Fields(body)) && !capitalSentence(strings.Fields(body)) {
			// (A verb with no subject, "must be positive.", is such a
			// phrase too: review rev65.)
			return stoppedPhrase
		}
		return surelyProse
	}
	fields := strings.Fields(s)
	if valueList(s) || isPath(fields) {
		return notProse
	}
	if len(fields) < 6 {
		if severalSentences(s) || slices.ContainsFunc(fields, func(f string) bool { return addressWords[bareWord(f)] }) || shortClause(fields) {
			return surelyProse // "Invalid input. Check the docs", "Please send a number", "it must be positive"
		}
		return notProse
	}
	values, links := 0, 0
	for _, f := range fields {
		w := bareWord(f)
		switch {
		case sentenceVerbs[w] || complaintVerbs[w] || addressWords[w] || clauseWords[w]:
			return surelyProse // a verb or pronoun of a clause, or words to the reader
		case functionWords[w]:
			// An article, a preposition or a conjunction joins the
			// words of a noun phrase as well as a sentence's: "image/png
			// or image/jpeg or image/gif", "a number between 1 and 100".
			links++
		case strings.ContainsFunc(w, unicode.IsDigit) || strings.ContainsAny(w, "_/:@=#"):
			values++
		}
	}
	switch {
	case severalSentences(s):
		return surelyProse // one sentence ends, the next begins
	case values == len(fields):
		return notProse // values alone
	case links > 0 && values > 0 && values+links == len(fields):
		return notProse // values joined by "or", "and", "to"
	}
	return maybeProse
}

// shortClause: the words are a clause, a subject and its verb ("it must
// be positive", "the recipient is not permitted", "we could not parse
// it"), as no value is. The subject is a pronoun, or an article and the
// words after it; a verb with no such subject before it ("must be
// positive", ajv's "a must be number" or "ID must be a string", where
// the name is the argument's) is the cause phrase a value may be, and so
// is a noun a verb's spelling ends ("Trash Can"). ("Not" is no verb
// here: "a number, not a string".)
func shortClause(fields []string) bool {
	subject := false
	for i, f := range fields {
		switch w := bareWord(f); {
		case w == "not" || w == "please":
		case sentenceVerbs[w] || clauseVerbs[w]:
			// (A subject's verb, last or not: "it is", "we cannot";
			// review rev69. Without one, a last word spelt as a verb is
			// a noun: "Tin Can".)
			return subject
		case subjectWords[w]:
			subject = true
		case i > 0 && articles[bareWord(fields[i-1])]:
			subject = true // "the recipient"
		}
	}
	return false
}

// subjectWords begin a clause as its subject; articles begin one with
// the noun after them.
var (
	subjectWords = map[string]bool{"i": true, "we": true, "it": true, "they": true, "this": true, "there": true, "he": true, "she": true}
	articles     = map[string]bool{"the": true, "a": true, "an": true}
)

// capitalSentence: the words open with a capital, and a verb stands
// after the first with words after it ("Field is required"): with a
// final stop, a sentence's whole form.
func capitalSentence(fields []string) bool {
	// (A verb that opens the words is no subject, capital or not: "Must
	// be positive." is a cause phrase; review rev69.)
	if first := bareWord(fields[0]); len(fields) < 3 || !startsUpper(fields[0]) || sentenceVerbs[first] || clauseVerbs[first] {
		return false
	}
	for i := 1; i < len(fields)-1; i++ {
		if w := bareWord(fields[i]); w != "not" && (sentenceVerbs[w] || clauseVerbs[w]) {
			return true
		}
	}
	return false
}

// startsUpper: the word opens with an upper-case letter.
func startsUpper(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// clauseVerbs are the modals and auxiliaries among clauseWords.
var clauseVerbs = map[string]bool{"may": true, "might": true, "did": true, "do": true, "had": true}

// addressWords speak to the reader (the imperatives "see", "try" too):
// no value holds them.
var addressWords = map[string]bool{"please": true, "sorry": true, "thanks": true, "you": true, "your": true, "see": true, "try": true}

// clauseWords make a clause of the words around them, where an article
// or a preposition joins a noun phrase's as well: modals and auxiliaries
// sentenceVerbs lacks, pronouns and the words that begin a clause.
var clauseWords = map[string]bool{"may": true, "might": true, "did": true, "do": true, "had": true,
	"it": true, "they": true, "we": true, "while": true, "because": true, "when": true, "if": true,
	"which": true, "that": true, "there": true, "this": true}

// valueList: s is three or more items separated by commas or
// semicolons, none longer than two words ("pending, received, shipped",
// "J. Smith, K. Jones, L. Brown"): a list, whatever its words.
func valueList(s string) bool {
	items := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' })
	if len(items) < 3 {
		return false
	}
	for _, it := range items {
		words := strings.Fields(it)
		if len(words) == 0 || len(words) > 2 {
			return false
		}
		if len(words) == 1 || strings.HasSuffix(words[0], ":") {
			continue // a word alone ("it", "no", "May") or "key: value" is a value
		}
		for _, w := range words {
			if ofSentence(bareWord(w)) {
				return false // "try again", "not now": the pieces of a sentence
			}
		}
	}
	return true
}

// bareWord is a field as a word: lower case, without the punctuation
// that follows it.
func bareWord(f string) string { return strings.ToLower(strings.TrimRight(f, ",;:.!?")) }

// ofSentence: the bare word is one a sentence has and a value hardly does.
func ofSentence(w string) bool { return functionWords[w] || complaintVerbs[w] }

// sentenceVerbs are the auxiliaries and modals a file or folder name
// hardly holds and a sentence about one does ("… could not be opened").
var sentenceVerbs = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "must": true,
	"should": true, "can": true, "cannot": true, "could": true, "would": true, "will": true,
	"not": true, "does": true, "has": true, "have": true, "please": true,
}

// fileExt is a file name's extension at the end of a path.
var fileExt = regexp.MustCompile(`\.[A-Za-z0-9]{1,5}$`)

// isPath: fields are a path or URI whose names hold spaces. It starts
// like one, no field of it ends a clause (a comma, a stop), no
// auxiliary or modal verb stands in it ("could not be opened"), and
// either no English function word does (a folder "Team Alpha Sales
// Drafts") or it ends in a file extension ("…/The Art of War/chapter one
// of the book.txt", "/home/me/Minutes of the board meeting.docx").
func isPath(fields []string) bool {
	if !strings.HasPrefix(fields[0], "/") && !strings.Contains(fields[0], "://") {
		return false
	}
	plain := true
	for i, f := range fields[1:] {
		w := bareWord(f)
		if sentenceVerbs[w] || i+2 < len(fields) && strings.ContainsAny(f[len(f)-1:], ",;:.!?") {
			return false
		}
		if ofSentence(w) {
			plain = false
		}
	}
	return plain || fileExt.MatchString(fields[len(fields)-1])
}

// walk calls fn for every member and element under v, depth first, with
// its display path and, for members, its key. Depth is bounded by the
// parser (envelope.MaxDepth), so the recursion is safe.
func walk(v gjson.Result, path string, fn func(path, key string, val gjson.Result)) {
	switch {
	case v.IsObject():
		v.ForEach(func(k, val gjson.Result) bool {
			kp := envelope.JoinPath(path, k.Str)
			fn(kp, k.Str, val)
			walk(val, kp, fn)
			return true
		})
	case v.IsArray():
		i := 0
		v.ForEach(func(_, val gjson.Result) bool {
			ip := path + "." + strconv.Itoa(i)
			fn(ip, "", val)
			walk(val, ip, fn)
			i++
			return true
		})
	}
}

// walkStrings calls fn for every string under v (v included) with its
// display path.
func walkStrings(v gjson.Result, path string, fn func(path, s string)) {
	if v.Type == gjson.String {
		fn(path, v.Str)
		return
	}
	walk(v, path, func(p, _ string, val gjson.Result) {
		if val.Type == gjson.String {
			fn(p, val.Str)
		}
	})
}

// requestedWrong fails a -32022's data.requested (a string) that is not
// the version the request asked for, or that supported lists as served;
// it reports whether it failed.
func requestedWrong(p *Pass, req, sup gjson.Result) bool {
	sent := sentVersions(p)
	switch {
	case len(sent) > 0 && !slices.ContainsFunc(sent, func(v string) bool {
		// Only the strict contract's quote may cut it, and escape its
		// control characters.
		return req.Str == v || p.Contract.IsStrict() && quotedAs(req.Str, v, p.Contract.QuoteBound)
	}):
		p.Failf("error.data.requested", "requested is %s, but the request asked for %s", Quote(req.Str, quoteN), Quote(sent[0], quoteN))
	case envelope.Lists(sup, req.Str):
		// The error says the version is not served and, in the same
		// breath, that it is.
		p.Failf("error.data.supported", "supported lists %s, the very version requested names as unsupported", Quote(req.Str, quoteN))
	default:
		return false
	}
	return true
}

var DataShapes = &Check{
	ID:       "ERR3004",
	Title:    "Spec-defined errors carry their defined data",
	SpecRef:  "T-ERR-7, T-ERR-13, T-ERR-14, T-LIFE-9",
	Severity: MUST,
	Area:     AreaData,
	Doc: `Errors whose data the spec defines carry it, and it means what it says,
against the request and against itself:
-32022 (2026-07-28) has data.supported, a non-empty array of version
strings that holds 2026-07-28 where the server's server/discover lists
it, and data.requested, the version string the request asked for
(_meta's, the header's, or a legacy initialize's protocolVersion; under
the strict contract a requested value longer than the quote bound may
be truncated, never replaced); supported never holds the version
requested names as unsupported, and requested names no version after
2026-07-28 that the server's server/discover lists (a legacy one may be
refused in a request of the modern form); -32021 (2026-07-28) has
data.requiredCapabilities, a non-empty object naming only capabilities
the request did not declare (one declared with another value, an
experimental {"enabled":false} where true is required, only warns: only
the capability's definition says whether it satisfies); a -32022 in a
2025 version (where it is borrowed) owes no data, but a data.requested
it gives is held to the same two rules; -32042 (2025-11-25) has
data.elicitations, a non-empty array of objects with mode "url",
elicitationId, url and message; one to a client that declared no
URL-mode elicitation warns (T-LIFE-4 names the server's requests, and
the error's own rule names no capability).`,
	Run: func(p *Pass) error {
		e, code, err := needCode(p)
		if err != nil {
			return err
		}
		d := e.Get("data")
		v := p.Expect.Version
		switch {
		case code == envelope.CodeUnsupportedVer && v == envelope.V20260728:
			if !d.IsObject() {
				p.Failf("error.data", "-32022 needs data {supported, requested}; data is %s", envelope.Kind(d))
				return nil
			}
			sup := d.Get("supported")
			switch {
			case !sup.IsArray() || len(sup.Array()) == 0:
				p.Failf("error.data.supported", "supported is %s, want a non-empty array of version strings", describe(sup))
			default:
				for i, s := range sup.Array() {
					if s.Type != gjson.String {
						p.Failf("error.data.supported."+strconv.Itoa(i), "supported entry is %s, want a string", envelope.Kind(s))
					}
				}
				if x := p.Expect.Facts; x.Serves(envelope.V20260728) && !envelope.Lists(sup, envelope.V20260728) && !slices.Contains(sentVersions(p), envelope.V20260728) {
					// The server's own server/discover lists it: a client
					// reading this list would fall back from a version the
					// server serves (T-LIFE-9: the server's versions). (A
					// refusal of that very version is ERR1002's to fail.)
					p.Failf("error.data.supported", "supported lacks %s, which the server's server/discover lists", Quote(envelope.V20260728, quoteN))
				}
			}
			req := d.Get("requested")
			switch {
			case req.Type != gjson.String:
				p.Failf("error.data.requested", "requested is %s, want the version string sent", envelope.Kind(req))
			case requestedWrong(p, req, sup):
			case req.Str > envelope.V20260728 && p.Expect.Facts.Serves(req.Str):
				// A version of the discover era (2026-07-28 itself is
				// ERR1002's) that the server's own server/discover listed:
				// one of its two answers is wrong, and a client that read
				// the list is refused what it was offered (T-LIFE-8,
				// T-LIFE-9). (Legacy versions, served by initialize, may
				// be refused in a request of the modern form.)
				p.Failf("error.data.requested", "requested names %s as unsupported, though the server's server/discover lists it (T-LIFE-8, T-LIFE-9)", Quote(req.Str, quoteN))
			}
		case code == envelope.CodeUnsupportedVer && d.IsObject() && d.Get("requested").Type == gjson.String:
			// A 2025 server that borrows 2026-07-28's refusal (which
			// DESIGN lets refuse a version in any version) owes no data,
			// but what its data says is held to what it means (review
			// rev71: a requested the client never asked for passed).
			requestedWrong(p, d.Get("requested"), d.Get("supported"))
		case code == envelope.CodeMissingClientCap && v == envelope.V20260728:
			rc := d.Get("requiredCapabilities")
			if !rc.IsObject() {
				p.Failf("error.data.requiredCapabilities", "-32021 needs data.requiredCapabilities, an object; it is %s", envelope.Kind(rc))
				return nil
			}
			if !envelope.NonEmpty(rc) {
				// It lists what is missing (T-ERR-13): an empty list
				// tells the client nothing to declare.
				p.Failf("error.data.requiredCapabilities", "requiredCapabilities is empty; it names the capabilities the request lacks (T-ERR-13)")
				return nil
			}
			// It names what the request lacked: a capability the request
			// declared is not missing.
			declared := p.Expect.Request.Get(envelope.MetaPath(envelope.MetaClientCapabilities))
			for _, leaf := range leafPaths(rc, "") {
				// (leaf is a path already: its keys escaped, once.)
				if declared.IsObject() && capabilityDeclared(declared, leaf) {
					if got, want := declared.Get(leaf), rc.Get(leaf); got.Exists() && !sameCapability(want, got) {
						// Declared with another value ("enabled": false
						// where true is required): whether that satisfies
						// it, only the capability's own definition says.
						p.Warnf("error.data.requiredCapabilities."+leaf, "requiredCapabilities names %s as %s, which the request declared as %s; whether that is missing, the capability's definition says", Quote(leaf, quoteN), clip(want.Raw), clip(got.Raw))
						continue
					}
					p.Failf("error.data.requiredCapabilities."+leaf, "requiredCapabilities names %s, which the request declared", Quote(leaf, quoteN))
				}
			}
		case code == envelope.CodeURLElicitation && v == envelope.V20251125:
			if f := p.Expect.Facts; f != nil && f.ClientCapabilities != nil && !elicitationModeDeclared(gjson.ParseBytes(f.ClientCapabilities).Get("elicitation"), "url") {
				// It asks the client for URL-mode elicitation, which a
				// server uses only where the client declared it (T-LIFE-4)
				// as an elicitation/create request; the error's own rule
				// names no capability, so it only warns.
				p.Warnf("error.code", "-32042 asks the client for a URL-mode elicitation, but the client declared no elicitation.url capability (T-LIFE-4 names requests; the error's rule names no capability)")
			}
			el := d.Get("elicitations")
			if !el.IsArray() || len(el.Array()) == 0 {
				p.Failf("error.data.elicitations", "-32042 needs data.elicitations, a non-empty array; it is %s", describe(el))
				return nil
			}
			for i, x := range el.Array() {
				path := "error.data.elicitations." + strconv.Itoa(i)
				if x.Get("mode").Str != "url" {
					p.Failf(path+".mode", `mode is %s, want "url"`, describe(x.Get("mode")))
				}
				for _, k := range []string{"elicitationId", "url", "message"} {
					if x.Get(k).Type != gjson.String {
						p.Failf(path+"."+k, "%s is %s, want a string", k, envelope.Kind(x.Get(k)))
					}
				}
			}
		default:
			return skipNoSpecData
		}
		return nil
	},
}

// leafPaths lists the gjson paths of an object's leaves: members whose
// value is not an object, or an empty one ({} names a capability as a
// whole).
func leafPaths(v gjson.Result, prefix string) []string {
	var out []string
	v.ForEach(func(k, val gjson.Result) bool {
		path := envelope.JoinPath(prefix, k.Str)
		if val.IsObject() && !isEmptyValue(val) {
			out = append(out, leafPaths(val, path)...)
		} else {
			out = append(out, path)
		}
		return true
	})
	return out
}

// sentVersions are the versions the request asked for: _meta's and the
// header's (its field lines combined too, when it repeats), and an
// initialize's protocolVersion. When they differ either may be the one
// refused (AMB-4); a dual-era reading of a legacy initialize refuses the
// version it names (T-LIFE-14).
func sentVersions(p *Pass) []string {
	var out []string
	if p.Expect.Method == "initialize" {
		if v := p.Expect.Request.Get("params.protocolVersion"); v.Type == gjson.String {
			out = append(out, v.Str)
		}
	}
	switch v := p.Expect.Request.Get("params._meta." + envelope.JoinPath("", envelope.MetaProtocolVersion)); {
	case v.Type == gjson.String:
		out = append(out, v.Str)
	case v.Type == gjson.Null:
		// null, which a Go server reads as "" and JavaScript's String()
		// writes "null" (review rev50).
		out = append(out, "", "null")
	case v.Exists():
		// A version that is no string (20260728) is requested as its
		// JSON text: the one version the body sent (review rev48).
		out = append(out, v.Raw)
	}
	if h := envelope.HeaderGet(p.Exchange.Request.Header, "Mcp-Protocol-Version"); h != "" {
		out = append(out, h)
	}
	if h, ok := combinedHeader(p.Exchange.Request.Header, "Mcp-Protocol-Version"); ok {
		out = append(out, h) // its field lines read as one (RFC 9110 §5.3)
	}
	return out
}

// quotedAs: got is sent as the strict contract quotes a value: its
// control characters escaped (\u001b, \x1b, \e, \n), cut to at most
// bound characters.
func quotedAs(got, sent string, bound int) bool {
	u := unescapeControls(got)
	return u == sent || truncationOf(u, sent, bound) || truncationOf(got, sent, bound)
}

// unescapeControls undoes the escapes of control characters a quote
// writes (JSON's, C's, Go's); any other escape stays as it is.
func unescapeControls(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		r, n := rune(-1), 2
		switch c := s[i+1]; c {
		case '\\':
			// An escaped backslash: what follows it is no escape.
			b.WriteString(`\\`)
			i++
			continue
		case 'u':
			if v, err := strconv.ParseUint(s[i+2:min(i+6, len(s))], 16, 16); err == nil && i+6 <= len(s) {
				r, n = rune(v), 6
			}
		case 'x':
			if v, err := strconv.ParseUint(s[i+2:min(i+4, len(s))], 16, 8); err == nil && i+4 <= len(s) {
				r, n = rune(v), 4
			}
		default:
			if j := strings.IndexByte("abfnrtve0", c); j >= 0 {
				r = rune("\a\b\f\n\r\t\v\x1b\x00"[j])
			}
		}
		if r < 0 || !unicode.IsControl(r) {
			b.WriteByte(s[i])
			continue
		}
		b.WriteRune(r)
		i += n - 1
	}
	return b.String()
}

// truncationOf: got is sent cut to at most bound characters (an ellipsis
// or "..." may mark the cut), as the strict contract's quote bound asks.
func truncationOf(got, sent string, bound int) bool {
	if utf8.RuneCountInString(sent) <= bound {
		return false
	}
	core := strings.TrimSuffix(strings.TrimSuffix(got, "…"), "...")
	return core != "" && utf8.RuneCountInString(got) <= bound+3 && strings.HasPrefix(sent, core)
}

// sameCapability: the value a -32021 requires is the one declared, or
// the requirement is the capability's presence ({}) and an object was
// declared, whatever it holds.
func sameCapability(want, got gjson.Result) bool {
	return want.IsObject() && isEmptyValue(want) && got.IsObject() || envelope.SameValue(want, got)
}

// capabilityDeclared: the client capabilities declared hold the one at
// leaf. Elicitation's form mode is implicit: an elicitation object that
// names no mode declares form alone, so "elicitation" named bare (as
// {}, the spelling of form mode) or "elicitation.form" is declared then,
// and not by an object that names url alone.
func capabilityDeclared(declared gjson.Result, leaf string) bool {
	switch leaf {
	case "elicitation", "elicitation.form":
		return elicitationModeDeclared(declared.Get("elicitation"), "form")
	}
	return declared.Get(leaf).Exists()
}
