package checks

import (
	"cmp"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

var Distilled = &Check{
	ID:         "ERR5001",
	StrictOnly: true,
	Title:      "Validation errors are distilled",
	SpecRef:    "contract: distilled validation errors; RFC 6901",
	Severity:   MUST,
	Area:       AreaDistilled,
	Doc: `When error.data.errors is present it is distilled: an array with one
entry per instance location, each entry an object with "location" (a JSON
Pointer into the request as RFC 6901 writes it, "" for the root: "/" then
tokens, "~" only as "~0" or "~1"; the same pointer in the URI fragment
form of RFC 6901 §6, "#/params/a", warns: RFC 6901 calls it a
representation of the pointer, and the contract does not say whether a
location may hold it) and "problems" (non-empty strings, each
a short cause phrase: something visible, one line under every Unicode
line break, no line of a stack trace ("at f (x.js:12:9)", "Traceback
(most recent call last)", "File \"x.py\", line 12, in f"), one sentence, at most the contract's message bound, not a
sentence written for a person ("!" or "?" at its end, or "please"); no
duplicates, compared with the space at their edges trimmed, for "must be
number " repeats "must be number" to any reader; a full stop at the end of one clause, as Laravel and Symfony
write theirs, only warns, and a period after an abbreviation ("incl.",
"Prof.", a run of consonants such as German "bzw.") ends no sentence);
and no member besides those two (a validator's own fields kept beside
them, ajv's instancePath, schemaPath, params, schema, or a stack, or
the input, are the undistilled output this rule stops); entries
sorted by location, no location twice. Sorted means sorted as strings, or
token by token with array indices as numbers (/9 before /10) or the
decoded tokens compared as strings: each is a reasonable reading of
"sorted". Entries in such an order with letter
case ignored (a locale's collation) only warn. A contract file may rename the two
members.

No entry only points at a deeper one or restates an ancestor's problem,
judged by location and problem, not by text alone: an entry whose every
problem names a deeper entry's location (its pointer, its key in
quotes, or its key bare as the problem's first word: "a: must be
integer") is a pointer to that entry, not a cause, and so is one above a
deeper entry whose every problem says only that something failed
("invalid", "1 validation error", "jsonschema validation failed with
'…'", or that a composite keyword's subschema did: "must match a schema
in anyOf", "must match \"then\" schema", "does not match the schema",
"… is not valid under any of the given schemas", "doesn't validate
with #/$defs/X"; alone, with no
deeper entry, such a problem is the cause given, and passes). A oneOf's
"must match exactly one schema in oneOf" may mean that no branch matched
(a pointer) or that several did (a cause of its own): the checker's own
validation of a tools/call's arguments against the tool's listed
inputSchema tells which, and where it cannot, such an entry only warns.
An entry whose every problem names an ancestor's location
restates it. The same phrase at two
locations ("additional properties are not allowed" on an object and on
one nested in it) is two causes, and passes.

An undistilled validator tree for one garbage message measured 2353 bytes
against 435 distilled: the rest is noise a client and a calling model
must wade through. Strict contract only.`,
	Run: func(p *Pass) error {
		_, d, err := needData(p)
		if err != nil {
			return err
		}
		errs := d.Get("errors")
		if !errs.Exists() {
			return Skip("the error has no data.errors")
		}
		if !errs.IsArray() {
			p.Failf("error.data.errors", "errors is %s, want an array of {%s, %s}", envelope.Kind(errs), p.Contract.LocationKey, p.Contract.ProblemsKey)
			return nil
		}
		judgeDistilled(p, errs)
		return nil
	},
}

// A distilledEntry is one well-formed entry of data.errors.
type distilledEntry struct {
	loc      string
	tokens   []string
	problems []string
}

// multiSentence finds a candidate sentence break inside a phrase: a word
// of two letters or more, a number, or a lower-case letter, ends in
// sentence punctuation and a capitalised word, a word in capitals, or a
// quoted value follows. Abbreviations made of single letters ("U.S.
// State", "e.g. A") and initials ("J. Smith") do not end a sentence; a
// lower-case letter standing alone does ("missing argument b. Provide
// it"), unless it is one that abbreviates (oneLetterAbbr) or labels a
// list's item (letterLabels).
var multiSentence = regexp.MustCompile(`([A-Za-z]{2,}|[0-9]+|[a-z])["')\]]?([.!?])\s+(?:[A-Z][a-z]|[A-Z]{2,}\b|"quoted")`)

// oneLetterAbbr are the lower-case letters that abbreviate a word before a
// capitalised one: "Smith v. Jones" (versus), German "s. Anhang" (siehe).
var oneLetterAbbr = map[string]bool{"v": true, "s": true}

// quotedText is a run the phrase quotes, whose own punctuation is no
// sentence of the phrase's: in double quotes, backquotes, typographic
// quotes, or single quotes that stand apart from words (Python's
// jsonschema writes 'Hello. World' is not of type 'integer'; "don't" is
// no quote).
var quotedText = regexp.MustCompile("\"[^\"]*\"|`[^`]*`|“[^”]*”|‘[^’]*’|„[^“”]*[“”]|‚[^‘’]*[‘’]|«[^»]*»|»[^«]*«|‹[^›]*›|「[^」]*」|『[^』]*』|(^|[\\s(\\[{:,=])'[^']*'")

// abbreviations end in a period without ending a sentence ("vs. None",
// "Mrs. Smith", "etc. Or blank"). Words that end sentences as often
// ("no", "max") are not among them.
var abbreviations = map[string]bool{"vs": true, "etc": true, "mr": true, "mrs": true, "ms": true, "dr": true,
	"st": true, "jr": true, "sr": true, "inc": true, "ltd": true, "approx": true, "cf": true, "fig": true,
	"vol": true, "ca": true, "resp": true, "incl": true, "excl": true, "prof": true, "ref": true, "refs": true,
	"esp": true, "env": true, "dept": true, "viz": true, "al": true, "est": true, "avg": true, "abbr": true,
	"usw": true, "evtl": true, "bspw": true, "sog": true, "inkl": true, "exkl": true, "ggü": true}

// severalSentences: s holds a sentence break outside what it quotes.
// Most phrases hold no sentence punctuation at all, and the pattern,
// unanchored, would try every position of each.
func severalSentences(s string) bool {
	if !strings.ContainsAny(s, ".!?") && indexWideStop(s) < 0 {
		return false
	}
	if strings.ContainsAny(s, "\"`“‘'„‚«»‹「『") {
		s = quotedText.ReplaceAllString(s, `${1}"quoted"`)
	}
	if i := indexWideStop(s); i >= 0 {
		// A script written without spaces ends a sentence with these.
		_, size := utf8.DecodeRuneInString(s[i:])
		if strings.TrimSpace(s[i+size:]) != "" {
			return true
		}
	}
	var labels []bool // read once, when a letter stands alone
	for _, m := range multiSentence.FindAllStringSubmatchIndex(s, -1) {
		// (A word that ends an identifier, wymcp_tool_zz, is none.)
		whole := m[2] == 0 || strings.IndexByte(" \t(\"'", s[m[2]-1]) >= 0
		if word := s[m[2]:m[3]]; len(word) == 1 && word[0] >= 'a' && word[0] <= 'z' {
			// A letter after another's period ("e.g.", "i.e.") or one
			// that abbreviates ends none.
			if m[2] > 0 && s[m[2]-1] == '.' || whole && s[m[4]:m[5]] == "." && oneLetterAbbr[word] {
				continue
			}
			if whole && s[m[4]:m[5]] == "." {
				if labels == nil {
					labels = letterLabels(s)
				}
				// A list's item ("one of a. Monday or b. Tuesday"), not a
				// sentence's last word: it opens the text, or the letter
				// before or after it labels an item too.
				if c := word[0] - 'a'; m[2] == 0 || c > 0 && labels[c-1] || c < 25 && labels[c+1] {
					continue
				}
			}
			return true
		}
		if s[m[4]:m[5]] != "." || !whole || !abbreviation(s[m[2]:m[3]]) {
			return true
		}
	}
	return false
}

// letterLabels marks the lower-case letters that label an item in s: a
// letter standing alone ("a. Monday", "(b) Tuesday") before a period or
// a closing parenthesis and a space or the end. One pass, whatever the
// number of candidates.
func letterLabels(s string) []bool {
	labels := make([]bool, 26)
	for i := 0; i+1 < len(s); i++ {
		c := s[i]
		if c < 'a' || c > 'z' || s[i+1] != '.' && s[i+1] != ')' {
			continue
		}
		if i > 0 && strings.IndexByte(" \t(,;:", s[i-1]) < 0 {
			continue
		}
		if i+2 < len(s) && s[i+2] != ' ' {
			continue
		}
		labels[c-'a'] = true
	}
	return labels
}

// abbreviation: a word that, before a period, ends an abbreviation
// rather than a sentence: one of abbreviations, or a short run of
// consonants no word of a sentence ends in (German "bzw.", "vgl.",
// "ggf.", "Nr.", "std."), an acronym in capitals aside ("Use HTTP. Then").
func abbreviation(word string) bool {
	w := strings.ToLower(word)
	return abbreviations[w] || len(w) <= 4 && !strings.ContainsAny(w, "aeiouy") && !allDigits(w) && word != strings.ToUpper(word)
}

// wideStops end a sentence in a script written without spaces.
var wideStops = [...]string{"。", "！", "？"}

// indexWideStop is strings.IndexAny(s, "。！？"): the first of wideStops
// in s, -1 when none is. IndexAny with a cutset beyond ASCII decodes
// every rune of s and looks each up in the cutset, the slowest of
// searches on a long text, while a search for each stop's bytes runs at
// the speed of IndexByte; a stop's first byte begins a rune wherever it
// stands, so both find the same one (FuzzWideStops).
func indexWideStop(s string) int {
	at := -1
	for _, stop := range wideStops {
		if i := strings.Index(s, stop); i >= 0 && (at < 0 || i < at) {
			at = i
			s = s[:i] // an earlier stop is all that is left to find
		}
	}
	return at
}

func judgeDistilled(p *Pass, errs gjson.Result) {
	lk, pk := p.Contract.LocationKey, p.Contract.ProblemsKey
	keys := []string{lk, pk}
	// Two distinct plain names are read as Get reads them, in one pass
	// (Members gives a second member of one name to a second key, and
	// gjson reads some bytes of a path as syntax).
	plain := lk != pk && plainName(lk) && plainName(pk)
	var entries []distilledEntry
	seenLoc := map[string]bool{}
	var seenProb stringSet
	// ForEach, not Array: a hostile reply may carry tens of thousands of
	// entries, and judging each must not cost a copy of the list or a
	// path string unless it is a finding.
	i := -1
	errs.ForEach(func(_, e gjson.Result) bool {
		i++
		path := func() string { return "error.data.errors." + strconv.Itoa(i) }
		if !e.IsObject() {
			p.Failf(path(), "entry is %s, want {%s, %s}", envelope.Kind(e), lk, pk)
			return true
		}
		// One read of the entry for both members (the first of each
		// name, as Get reads it).
		var lp [2]gjson.Result
		if plain {
			envelope.Members(e, keys, lp[:])
		} else {
			lp[0], lp[1] = e.Get(envelope.JoinPath("", lk)), e.Get(envelope.JoinPath("", pk))
		}
		loc, probs := lp[0], lp[1]
		tokens, ok := pointerTokens(loc)
		locStr := loc.Str
		if !ok {
			if tokens, locStr, ok = fragmentPointer(loc); ok {
				// RFC 6901 §6 writes a pointer so inside a URI; whether a
				// "location" may hold that representation the contract
				// does not say, and a client comparing it to a pointer
				// finds no match: a warn, and the entry judged as its
				// pointer (review rev83).
				p.Warnf(envelope.JoinPath(path(), lk), "%s is %s, a JSON Pointer in its URI fragment form (RFC 6901 §6); the pointer itself is %s", lk, Quote(loc.Str, quoteN), Quote(locStr, quoteN))
			}
		}
		if !ok {
			p.Failf(envelope.JoinPath(path(), lk), "%s is %s, want a JSON Pointer (RFC 6901)", lk, describe(loc))
			return true
		}
		if !probs.IsArray() || !envelope.NonEmpty(probs) {
			p.Failf(envelope.JoinPath(path(), pk), "%s is %s, want a non-empty array of strings", pk, describe(probs))
			return true
		}
		// (Judged once the pair is sound: an entry without it has failed.)
		if extra := extraMembers(e, lk, pk); len(extra) > 0 {
			// A validator's own fields kept beside the distilled pair
			// (ajv's instancePath, schemaPath, params, schema,
			// parentSchema, data; a stack; the input) are the undistilled
			// output the rule exists to stop.
			p.Failf(path(), "entry has members besides %s and %s (%s): a distilled entry holds only its location and problems", lk, pk, extra)
		}
		ent := distilledEntry{loc: locStr, tokens: tokens}
		seenProb.reset()
		j := -1
		probs.ForEach(func(_, pr gjson.Result) bool {
			j++
			pp := func() string { return envelope.JoinPath(path(), pk) + "." + strconv.Itoa(j) }
			switch {
			case pr.Type != gjson.String || blank(pr.Str):
				p.Failf(pp(), "problem is %s, want a non-empty string", describe(pr))
			case hasLineBreak(pr.Str):
				p.Failf(pp(), "problem spans several lines: %s", Quote(pr.Str, quoteN))
			case length(pr.Str, p.Contract.MessageMax) != "":
				p.Failf(pp(), "problem is %s, not a short cause phrase: %s", length(pr.Str, p.Contract.MessageMax), Quote(pr.Str, quoteN))
			case isStackFrame(pr.Str):
				// A traceback cut into lines is no list of causes.
				p.Failf(pp(), "problem is a line of a stack trace, not a cause phrase: %s", Quote(pr.Str, quoteN))
			case severalSentences(pr.Str) && labelledDetail(pr.Str):
				// A validator's stock label and its detail (zod 3's
				// "Invalid enum value. Expected 'a' | 'b', received
				// 'x'"): one cause in a sentence's form, as a full stop
				// on one clause (review rev61).
				p.Warnf(pp(), "problem is a label and its detail written as two sentences; a cause phrase needs no full stop: %s", Quote(pr.Str, quoteN))
			case severalSentences(pr.Str):
				p.Failf(pp(), "problem is several sentences, not a cause phrase: %s", Quote(pr.Str, quoteN))
			case proseProblem(pr.Str):
				p.Failf(pp(), "problem is a prose sentence, not a cause phrase: %s", Quote(pr.Str, quoteN))
			case !seenProb.add(problemKey(pr.Str)):
				// (A copy that differs by its spaces, an invisible
				// character, letter case or a final stop reads as the
				// same cause, and is the same repeat: review rev61.)
				p.Failf(pp(), "problem %s is repeated at %s", Quote(pr.Str, quoteN), Quote(loc.Str, quoteN))
			default:
				// A cause phrase (one in a sentence's form warns, and
				// counts as the entry's problem all the same).
				if stoppedProblem(pr.Str) {
					// One clause with a sentence's full stop ("The a field
					// is required.", as Laravel and Symfony write them): a
					// cause by its meaning, in a sentence's form.
					p.Warnf(pp(), "problem ends in a full stop, as a sentence does; a cause phrase needs none: %s", Quote(pr.Str, quoteN))
				}
				ent.problems = append(ent.problems, pr.Str)
			}
			return true
		})
		if seenLoc[locStr] {
			p.Failf(envelope.JoinPath(path(), lk), "location %s has more than one entry", Quote(loc.Str, quoteN))
			return true
		}
		seenLoc[locStr] = true
		entries = append(entries, ent)
		return true
	})
	byString := func(a, b distilledEntry) int { return strings.Compare(a.loc, b.loc) }
	// Python's sorted(key=path) compares the decoded tokens as strings.
	byTokenText := func(a, b distilledEntry) int { return slices.Compare(a.tokens, b.tokens) }
	if !sortedBy(entries, byString) && !sortedBy(entries, compareTokens) && !sortedBy(entries, compareUTF16) && !sortedBy(entries, byTokenText) {
		report := p.Failf
		if sortedBy(entries, folded(byString)) || sortedBy(entries, folded(compareTokens)) {
			// A locale's collation (Python's key=str.lower, JavaScript's
			// localeCompare) is a reading of "sorted" too, not the contract's.
			report = p.Warnf
		}
		for i := 1; i < len(entries); i++ {
			if strings.Compare(entries[i-1].loc, entries[i].loc) > 0 {
				report("error.data.errors", "entries are not sorted: %s comes after %s", Quote(entries[i].loc, quoteN), Quote(entries[i-1].loc, quoteN))
				break
			}
		}
	}
	judgeRestating(p, entries)
}

// extraMembers names the members of the entry e other than lk and pk,
// quoted, the first few and a count of the rest ("" when there are none).
func extraMembers(e gjson.Result, lk, pk string) string {
	const shown = 4
	var names []string
	n := 0
	e.ForEach(func(k, _ gjson.Result) bool {
		if k.Str != lk && k.Str != pk {
			if n++; n <= shown {
				names = append(names, Quote(k.Str, quoteN))
			}
		}
		return true
	})
	if n > shown {
		names = append(names, "and "+strconv.Itoa(n-shown)+" more")
	}
	return strings.Join(names, ", ")
}

// plainName: a non-empty member name of letters, digits, _ and -, which
// a gjson path reads as it stands.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// A stringSet is a set of strings that is most often small: a list
// until it holds smallSet of them, a map after, so a hostile list of
// 100,000 problems costs linear time and a short one no map.
type stringSet struct {
	few  []string
	many map[string]bool
}

// add puts s in the set; false when it was there.
func (ss *stringSet) add(s string) bool {
	if ss.many == nil {
		if slices.Contains(ss.few, s) {
			return false
		}
		if len(ss.few) < smallSet {
			ss.few = append(ss.few, s)
			return true
		}
		ss.many = make(map[string]bool, 2*smallSet)
		for _, f := range ss.few {
			ss.many[f] = true
		}
	}
	if ss.many[s] {
		return false
	}
	ss.many[s] = true
	return true
}

// reset empties the set, keeping the list's room; a map is dropped, as
// clearing it would cost its size again for every small set after.
func (ss *stringSet) reset() { ss.few, ss.many = ss.few[:0], nil }

// judgeRestating finds entries that only point at a deeper entry, or only
// restate an ancestor, by location: walking each entry's ancestors
// through a map keeps it linear in entries times depth, for a hostile
// reply with tens of thousands of entries.
func judgeRestating(p *Pass, entries []distilledEntry) {
	byLoc := make(map[string]int, len(entries))
	for i, e := range entries {
		byLoc[e.loc] = i
	}
	pointing := make([]map[string]bool, len(entries)) // per entry: its problems that name a deeper entry
	var noCauses [][]causeKind                        // per entry: which of its problems state no cause (made when an ancestor is found)
	doubtful := make([]bool, len(entries))            // per entry: a pointer among its problems may be a cause
	var reading *oneOfReading                         // read once, when an entry needs it
	for _, child := range entries {
		for depth := len(child.tokens) - 1; depth >= 0; depth-- {
			ai, ok := byLoc[pointerOf(child.tokens[:depth])]
			if !ok {
				continue
			}
			anc := entries[ai]
			rel := pointerOf(child.tokens[depth:])
			last := ""
			if len(child.tokens) == depth+1 {
				last = child.tokens[depth] // a direct child may be named by its key
			}
			if noCauses == nil {
				noCauses = make([][]causeKind, len(entries))
			}
			if noCauses[ai] == nil {
				// Read once per entry, not once per deeper entry.
				noCauses[ai] = make([]causeKind, len(anc.problems))
				for k, pr := range anc.problems {
					c := statesNoCause(pr)
					if c == causeMaybe {
						if reading == nil {
							reading = readOneOf(p)
						}
						c = resolveOneOf(reading, anc.loc)
					}
					noCauses[ai][k] = c
				}
			}
			for k, pr := range anc.problems {
				c := noCauses[ai][k]
				if c != causeGiven || pointsAt(pr, child, rel, last) {
					if pointing[ai] == nil {
						pointing[ai] = map[string]bool{}
					}
					if !pointing[ai][pr] && c == causeMaybe {
						doubtful[ai] = true
					}
					pointing[ai][pr] = true
				}
			}
			if anc.loc != "" && len(child.problems) > 0 && allMention(child.problems, anc.loc) {
				p.Failf("error.data.errors", "entry %s only restates the problems of %s", Quote(child.loc, quoteN), Quote(anc.loc, quoteN))
			}
		}
	}
	for i, e := range entries {
		if len(e.problems) > 0 && len(pointing[i]) == len(e.problems) {
			if doubtful[i] {
				// A oneOf that several branches matched is a cause of its
				// own; one that none did points at the deeper entries. Not
				// knowing which, a heuristic fails nothing.
				p.Warnf("error.data.errors", "entry %s may only point at the problems of deeper entries: its oneOf failure says \"exactly one\", and the checker's own reading of the arguments against the tool's listed inputSchema does not tell whether no branch matched (a pointer) or several did (a cause)", Quote(e.loc, quoteN))
				continue
			}
			p.Failf("error.data.errors", "entry %s only points at the problems of deeper entries", Quote(e.loc, quoteN))
		}
	}
}

// pointsAt: an ancestor's problem is only a pointer to a deeper entry: it
// names the entry's location (its whole pointer, its pointer relative to
// the ancestor, or for a direct child its key in quotes, or bare as the
// problem's first word), and what it says besides is either one of that
// entry's own problems or no cause at all
// ("invalid", "validation failed at"). "missing property \"name\"" names a
// key but states a cause of its own.
func pointsAt(pr string, child distilledEntry, rel, last string) bool {
	rest, named := "", false
	for _, m := range []string{child.loc, rel, `"` + last + `"`, "'" + last + "'", "`" + last + "`"} {
		if m == "" || m == `""` || m == "''" || m == "``" || len(m) < 2 || !strings.Contains(pr, m) {
			continue
		}
		rest, named = strings.Replace(pr, m, " ", 1), true
		break
	}
	if !named && last != "" && (strings.HasPrefix(pr, last+":") || strings.HasPrefix(pr, last+" ")) {
		// The key bare, as the problem's subject: "a: must be integer",
		// "a must be integer" (review rev83).
		rest, named = pr[len(last):], true
	}
	if !named {
		return false
	}
	rest = strings.TrimSpace(strings.Trim(rest, " :;,.-"))
	for _, cp := range child.problems {
		if strings.EqualFold(rest, cp) {
			return true
		}
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(rest), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if !noCause[w] {
			return false
		}
	}
	return true
}

// statesNoCause: pr says only that something failed ("invalid", "1
// validation error", "jsonschema validation failed with 'mcp://…#'"):
// above a deeper entry it only points at that entry's problems. What it
// quotes names a schema or a value, not a cause.
func statesNoCause(pr string) causeKind {
	if mayBeComposite(pr) {
		if oneOfExactlyOne.MatchString(pr) {
			return causeMaybe
		}
		if compositeFailure.MatchString(pr) {
			return causeNone
		}
	}
	words, given := false, false
	eachWord(pr, func(w []byte) bool {
		words = true
		given = !noCause[string(w)] && !noCauseBesides[string(w)]
		return !given
	})
	if !words || given {
		return causeGiven
	}
	return causeNone
}

// mayBeComposite: pr may be a composite keyword's message. Each of
// compositeFailure's and oneOfExactlyOne's forms says "schema", a
// keyword's name or "validate"; most problems say none, and are spared
// the expressions. Outside ASCII, where the expressions fold case as
// Unicode does, they are always read.
func mayBeComposite(pr string) bool {
	for i := 0; i < len(pr); i++ {
		if pr[i] >= utf8.RuneSelf {
			return true
		}
	}
	l := strings.ToLower(pr)
	return strings.Contains(l, "schema") || strings.Contains(l, "anyof") || strings.Contains(l, "oneof") ||
		strings.Contains(l, "allof") || strings.Contains(l, "validate")
}

// A causeKind says whether a problem above a deeper entry states a cause.
type causeKind uint8

const (
	causeGiven causeKind = iota // a cause of its own (or a pointer only by naming the entry)
	causeNone                   // says only that something failed
	causeMaybe                  // a oneOf's "exactly one": none matched, or several did
)

// manyShapesProblem is the problem schema.Distill gives a oneOf that
// several branches matched.
const manyShapesProblem = "matches more than one of the allowed shapes"

// A oneOfReading is the checker's own validation of a tools/call's
// arguments against the tool's listed inputSchema: the locations
// (request pointers) of its problems, and those where a oneOf matched
// several branches. known is false without one (no tool, a schema the
// checker cannot judge, AMB-15's two readings apart, arguments it finds
// valid: the server then validates against something else).
type oneOfReading struct {
	known bool
	// wrong: the locations of its problems and their ancestors; many:
	// where a oneOf matched several branches
	wrong, many map[string]bool
}

func readOneOf(p *Pass) *oneOfReading {
	x := p.Expect
	r := &oneOfReading{}
	if x == nil || x.Tool == nil || !x.Tool.Judged || len(x.Tool.Problems) == 0 {
		return r
	}
	r.known, r.wrong, r.many = true, map[string]bool{}, map[string]bool{}
	for _, e := range x.Tool.Problems {
		loc := "/params/arguments" + e.Location
		if slices.Contains(e.Problems, manyShapesProblem) {
			r.many[loc] = true
		}
		for l := loc; !r.wrong[l]; {
			r.wrong[l] = true
			i := strings.LastIndexByte(l, '/')
			if i < 0 {
				break
			}
			l = l[:i]
		}
	}
	return r
}

// resolveOneOf tells a oneOf's "exactly one" at loc by the checker's own
// reading: a cause of its own where several branches matched; a pointer
// where the reading finds the arguments wrong at loc or below it and no
// several-matched oneOf there; otherwise still in doubt.
func resolveOneOf(r *oneOfReading, loc string) causeKind {
	switch {
	case !r.known:
		return causeMaybe
	case r.many[loc]:
		return causeGiven
	case r.wrong[loc]:
		return causeNone
	}
	return causeMaybe
}

// oneOfExactlyOne is a oneOf failure that does not say whether no branch
// matched or several did: ajv's "must match exactly one schema in oneOf",
// gojsonschema's "must validate one and only one schema (oneOf)",
// justinrainbow's "Failed to match exactly one schema", a bare "'oneOf'
// failed". Several matching is a cause of its own, not a pointer.
var oneOfExactlyOne = regexp.MustCompile(`(?i)^\s*(?:[$#][^\s:]*:\s*)?(?:` +
	`must match exactly one schema in oneof` +
	`|must validate one and only one schema \(oneof\)` +
	`|failed to match exactly one schema` +
	`|'?oneof'? failed` +
	`)\s*$`)

// compositeFailure is a validator's message for a composite keyword
// (anyOf, oneOf, allOf, if/then/else, $ref) whose subschema failed: it
// says that one did, not why, and the deeper entry says why. ajv's
// "must match a schema in anyOf", "must match \"then\" schema"; Python
// jsonschema's "… is not valid under any of the given schemas";
// santhosh-tekuri's "doesn't validate with #/$defs/X", "'oneOf' failed,
// none matched"; gojsonschema's "Must validate at least one schema
// (anyOf)"; justinrainbow's "Failed to match exactly one schema";
// networknt's "should be valid to one and only one schema, but 0 are
// valid". Alone, with no deeper entry, it is the only cause given and
// passes. ("… is valid under each of …", more than one alternative
// matching, is a cause of its own; a oneOf's "exactly one", which may
// mean either, is oneOfExactlyOne's, read first.)
var compositeFailure = regexp.MustCompile(`(?i)^\s*(?:[$#][^\s:]*:\s*)?(?:` +
	`must match (?:a schema in anyof|exactly one schema in oneof|all schemas in allof|"(?:then|else)" schema)` +
	`|.* is not valid under any of the given schemas` +
	`|does ?n[o']t validate (?:with|against) \S+` +
	`|does ?n[o']t match (?:the |its )?schema` +
	`|'?(?:anyof|oneof|allof)'? failed(?:, none matched)?` +
	`|must validate (?:at least one schema \(anyof\)|all the schemas \(allof\)|one and only one schema \(oneof\)|"(?:then|else)" as "if" was (?:not )?valid)` +
	`|failed to match (?:at least one schema|exactly one schema|all schemas)` +
	`|(?:should|must) be valid to (?:one and only one|at least one|all the) schemas?, but 0 are valid` +
	`)\s*$`)

// noCauseBesides name what failed, not why: said alone, with the words
// of noCause, they state no cause.
var noCauseBesides = map[string]bool{"jsonschema": true, "schema": true, "with": true, "against": true,
	"input": true, "request": true, "params": true, "parameters": true, "instance": true, "data": true}

// eachWord calls fn with each word of s outside its quoted parts ('…',
// "…", `…`), lowercased (a word is a run of letters), until fn returns
// false. The word is only good during the call: one buffer holds each in
// turn, so that judging a hostile reply's tens of thousands of problems
// costs no string per word.
func eachWord(s string, fn func(w []byte) bool) {
	var buf [48]byte
	w := buf[:0]
	var in rune
	for _, r := range s {
		switch {
		case in != 0:
			if r == in {
				in = 0
			}
			continue
		case r == '\'' || r == '"' || r == '`':
			// (A quoted part is left out, not a break: the letters on
			// either side of it make one word.)
			in = r
			continue
		case unicode.IsLetter(r):
			w = utf8.AppendRune(w, unicode.ToLower(r))
			continue
		}
		if len(w) > 0 {
			if !fn(w) {
				return
			}
			w = w[:0]
		}
	}
	if len(w) > 0 {
		fn(w)
	}
}

// proseProblem: a problem written as a sentence for a person (a space, and
// a full stop, "!" or "?" at its end, an ellipsis aside), or one that
// addresses the reader ("please", "sorry", "you"): a cause phrase is
// neither.
func proseProblem(pr string) bool {
	s := strings.TrimSpace(pr)
	if strings.HasSuffix(s, "...") || strings.HasSuffix(s, "…") {
		s = strings.TrimRight(s, ".…")
	} else if strings.ContainsFunc(s, unicode.IsSpace) && strings.ContainsAny(s[len(s)-1:], "!?") {
		return true
	}
	if !containsFold(s, "please") && !containsFold(s, "sorry") && !containsFold(s, "thank") && !containsFold(s, "you") {
		return false // (most problems: spared the reading below)
	}
	spoken := false
	eachWord(s, func(w []byte) bool {
		spoken = readerWords[string(w)]
		return !spoken
	})
	return spoken
}

// readerWords speak to the reader, in a problem: addressWords but for
// the imperatives, which a cause phrase may hold ("see" a value, "try"
// a limit).
var readerWords = map[string]bool{"please": true, "sorry": true, "thanks": true, "you": true, "your": true}

// stoppedProblem: a problem of words that ends in a full stop (an
// ellipsis aside).
// problemKey is the form in which two problems that read the same to a
// person are one: runs of spaces (any Unicode space) as one, format
// characters (a zero-width space) dropped, the first letter lower case
// (a sentence's capital), without a final full stop or the spaces at
// either edge. Other letters keep their case: a value the problem
// quotes ("'Name'", "GET") tells two causes apart (review rev65).
func problemKey(s string) string {
	plain := len(s) > 0 && (s[0] < 'A' || s[0] > 'Z')
	for i := 0; plain && i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c < ' ' || c == ' ' && (i == 0 || s[i-1] == ' ') {
			plain = false
		}
	}
	if plain {
		// The common case: nothing to fold but the edges.
		return strings.TrimSuffix(strings.TrimRight(s, " "), ".")
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case unicode.Is(unicode.Cf, r):
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			if b.Len() == 0 {
				r = unicode.ToLower(r)
			}
			b.WriteRune(r)
		}
	}
	return strings.TrimSuffix(b.String(), ".")
}

// labelledDetail: s is a short label, its full stop, and one clause that
// says what was expected or found, as validators word their stock
// messages ("Invalid type. Expected: number, given: string"): the label
// is three words at most and no clause (no verb a sentence has, no
// function word), the detail opens with expected, received, got, given
// or found, and neither part says what a sentence says to a person (is,
// must, please…; "too long. Use at most 64 characters" is two sentences).
func labelledDetail(s string) bool {
	head, rest, ok := strings.Cut(strings.TrimSpace(s), ". ")
	if !ok || severalSentences(rest) {
		return false
	}
	switch first, _, _ := strings.Cut(rest, " "); bareWord(first) {
	case "expected", "received", "got", "given", "found":
	default:
		return false
	}
	words := strings.Fields(head)
	if len(words) == 0 || len(words) > 3 {
		return false
	}
	for _, w := range words {
		if w = bareWord(w); sentenceVerbs[w] || functionWords[w] || complaintVerbs[w] {
			return false
		}
	}
	for _, w := range strings.Fields(rest) {
		if w = bareWord(w); sentenceVerbs[w] || addressWords[w] || subjectWords[w] {
			return false // "you sent a string", "sorry"
		}
	}
	return true
}

func stoppedProblem(pr string) bool {
	s := strings.TrimSpace(pr)
	return strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "...") && strings.ContainsFunc(s, unicode.IsSpace)
}

// containsFold: s holds the ASCII word w in any letter case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// noCause are the words that state no cause of their own.
var noCause = map[string]bool{"property": true, "value": true, "field": true, "item": true, "element": true,
	"key": true, "member": true, "is": true, "has": true, "an": true, "a": true, "the": true, "invalid": true,
	"bad": true, "wrong": true, "error": true, "errors": true, "failed": true, "failure": true, "fails": true,
	"not": true, "valid": true, "at": true, "in": true, "for": true, "of": true, "see": true, "validation": true,
	"problem": true, "problems": true}

func allMention(problems []string, loc string) bool {
	for _, pr := range problems {
		if !mentions(pr, loc) {
			return false
		}
	}
	return true
}

// mentions: pr names the pointer loc itself, not a longer one that starts
// with it ("/params/arguments/password" names no "/params/arguments").
func mentions(pr, loc string) bool {
	for i := 0; ; {
		j := strings.Index(pr[i:], loc)
		if j < 0 {
			return false
		}
		end := i + j + len(loc)
		if end == len(pr) || !pointerByte(pr[end]) {
			return true
		}
		i += j + 1
	}
}

// pointerByte: c may continue a JSON Pointer written in running text.
func pointerByte(c byte) bool {
	return c == '/' || c == '~' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// pointerTokens reads an RFC 6901 JSON Pointer into its tokens, undoing
// ~1 and ~0; ok is false when v is no pointer.
func pointerTokens(v gjson.Result) ([]string, bool) {
	if v.Type != gjson.String {
		return nil, false
	}
	s := v.Str
	if s == "" {
		return nil, true
	}
	if s[0] != '/' {
		return nil, false
	}
	parts := strings.Split(s[1:], "/")
	for i, t := range parts {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 >= len(t) || t[j+1] != '0' && t[j+1] != '1') {
				return nil, false
			}
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return parts, true
}

// fragmentPointer reads a JSON Pointer in the URI fragment form of RFC
// 6901 §6 ("#/params/a%20b"): its tokens and the pointer it stands for;
// ok is false when v is not one.
func fragmentPointer(v gjson.Result) (tokens []string, ptr string, ok bool) {
	if v.Type != gjson.String || !strings.HasPrefix(v.Str, "#") {
		return nil, "", false
	}
	ptr, err := url.PathUnescape(v.Str[1:])
	if err != nil || !utf8.ValidString(ptr) {
		return nil, "", false
	}
	tokens, ok = pointerTokens(gjson.Result{Type: gjson.String, Str: ptr})
	return tokens, ptr, ok
}

// pointerOf writes tokens back as a pointer.
func pointerOf(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// compareTokens orders pointers token by token, array indices as
// numbers.
func compareTokens(a, b distilledEntry) int {
	for i := 0; i < len(a.tokens) && i < len(b.tokens); i++ {
		x, y := a.tokens[i], b.tokens[i]
		if x == y {
			continue
		}
		nx, ex := strconv.ParseUint(x, 10, 64)
		ny, ey := strconv.ParseUint(y, 10, 64)
		if ex == nil && ey == nil {
			return cmp.Compare(nx, ny)
		}
		return strings.Compare(x, y)
	}
	return cmp.Compare(len(a.tokens), len(b.tokens))
}

// compareUTF16 orders locations by UTF-16 code units, as JavaScript's
// default sort and Java's compareTo do: the order differs from code
// points only where a character past U+FFFF meets one from U+E000 up.
func compareUTF16(a, b distilledEntry) int {
	return slices.Compare(utf16.Encode([]rune(a.loc)), utf16.Encode([]rune(b.loc)))
}

// folded orders as c does with letter case ignored.
func folded(c func(a, b distilledEntry) int) func(a, b distilledEntry) int {
	lower := func(e distilledEntry) distilledEntry {
		e.loc = strings.ToLower(e.loc)
		e.tokens = slices.Clone(e.tokens)
		for i, t := range e.tokens {
			e.tokens[i] = strings.ToLower(t)
		}
		return e
	}
	return func(a, b distilledEntry) int { return c(lower(a), lower(b)) }
}

func sortedBy(es []distilledEntry, c func(a, b distilledEntry) int) bool {
	for i := 1; i < len(es); i++ {
		if c(es[i-1], es[i]) > 0 {
			return false
		}
	}
	return true
}
