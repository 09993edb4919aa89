// Package rules is the project's catalogue of the MCP rules it judges by:
// every T-… and AMB-… ID of the rules digest, with its level, versions,
// a title and a short explanation in the project's own words. Checks and
// fixtures cite these IDs; explain and the reports resolve them here, so
// a rule is explainable without the digest at hand.
package rules

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/tools/txtar"
)

// A Rule is one entry of the catalogue.
type Rule struct {
	ID        string // "T-ERR-9", "AMB-17"
	Level     string // "MUST", "SHOULD NOT", "UNSPEC", "MUST / SHOULD", "AMB", …
	Versions  string // "all", "2025-xx", "2026-07-28", "2025-11-25, 2026-07-28"
	Section   string // the digest section: "§3.2 MCP-specific codes"
	Checkable bool   // observable by a black-box checker
	Title     string // one line
	Text      string // the explanation, a few sentences
}

//go:embed catalogue.txtar
var catalogue []byte

// index is the parsed catalogue, built once and read-only afterwards.
type index struct {
	all  []*Rule
	byID map[string]*Rule // upper-case ID
}

var load = sync.OnceValue(func() index {
	rs, err := Parse(catalogue)
	if err != nil {
		// The embedded file is tested; a broken one is a build defect.
		panic("rules: embedded catalogue: " + err.Error())
	}
	ix := index{all: rs, byID: make(map[string]*Rule, len(rs))}
	for _, r := range rs {
		ix.byID[r.ID] = r
	}
	return ix
})

// All returns every rule in catalogue order (the digest's order).
func All() []*Rule { return load().all }

// Lookup finds a rule by ID, case-insensitively; nil when unknown.
func Lookup(id string) *Rule { return load().byID[strings.ToUpper(id)] }

// Levels lists the keywords a level is made of; a level is one of them,
// or several joined by " / ", each optionally qualified in parentheses
// ("MUST (client)").
var levels = []string{"MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY", "UNSPEC", "desc.", "MUST*", "AMB"}

var idRE = regexp.MustCompile(`^(T-[A-Z0-9]+-[0-9]+|AMB-[0-9]+)$`)

// Parse reads a catalogue in the txtar form of catalogue.txtar.
func Parse(data []byte) ([]*Rule, error) {
	a := txtar.Parse(data)
	var out []*Rule
	seen := map[string]bool{}
	for _, f := range a.Files {
		r, err := parseRule(f.Name, string(f.Data))
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", f.Name, err)
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("rule %s: defined twice", r.ID)
		}
		seen[r.ID] = true
		out = append(out, r)
	}
	return out, nil
}

func parseRule(id, body string) (*Rule, error) {
	if !idRE.MatchString(id) {
		return nil, fmt.Errorf("not a rule ID")
	}
	head, text, _ := strings.Cut(body, "\n\n")
	r := &Rule{ID: id, Text: strings.TrimSpace(text)}
	have := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(head), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("header line %q: want key: value", line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if have[k] {
			return nil, fmt.Errorf("%s given twice", k)
		}
		have[k] = true
		switch k {
		case "level":
			r.Level = v
		case "versions":
			r.Versions = v
		case "section":
			r.Section = v
		case "checkable":
			b, err := parseYesNo(v)
			if err != nil {
				return nil, fmt.Errorf("checkable: %w", err)
			}
			r.Checkable = b
		case "title":
			r.Title = v
		default:
			return nil, fmt.Errorf("unknown header %q", k)
		}
	}
	for _, k := range []string{"level", "versions", "section", "checkable", "title"} {
		if !have[k] {
			return nil, fmt.Errorf("%s missing", k)
		}
	}
	if err := checkLevel(r.Level); err != nil {
		return nil, err
	}
	if r.Text == "" {
		return nil, fmt.Errorf("no explanation")
	}
	return r, nil
}

func parseYesNo(v string) (bool, error) {
	switch v {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, fmt.Errorf("%q: want yes or no", v)
}

func checkLevel(l string) error {
	for _, part := range strings.Split(l, " / ") {
		if i := strings.Index(part, " ("); i > 0 && strings.HasSuffix(part, ")") {
			part = part[:i]
		}
		if !slices.Contains(levels, part) {
			return fmt.Errorf("level %q: %q is not one of %s", l, part, strings.Join(levels, ", "))
		}
	}
	return nil
}

// citeRE finds rule citations in free text: single IDs, ranges
// ("T-ERR-1..T-ERR-11") and area wildcards ("T-RPC-*").
var citeRE = regexp.MustCompile(`\b(?:T-[A-Z0-9]+-(?:[0-9]+|\*)|AMB-[0-9]+)(?:\.\.(?:T-[A-Z0-9]+-[0-9]+|AMB-[0-9]+))?`)

// CitedUnquoted returns the rule IDs a finding's message cites in its own
// words: the spans it quotes (a server's or a request's text, which may
// spell a rule ID: a resultType of "T-ERR-1") are not read. A quote cut
// off before its closing mark runs to the end.
func CitedUnquoted(msg string) []string {
	if !strings.Contains(msg, `"`) {
		return Cited(msg)
	}
	var own strings.Builder
	quoted, escaped := false, false
	for _, r := range msg {
		switch {
		case escaped:
			escaped = false
		case quoted && r == '\\':
			escaped = true
		case r == '"':
			quoted = !quoted
			own.WriteByte(' ')
		case !quoted:
			own.WriteRune(r)
		}
	}
	return Cited(own.String())
}

// Cited returns the rule IDs a text cites, in order of first citation,
// each once. Ranges and wildcards expand to the catalogue's IDs they
// cover; an ID the catalogue lacks is returned as written, so a test can
// find it.
func Cited(text string) []string {
	var out []string
	add := func(id string) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	// Every citation starts with "T-" or "AMB-": the pattern runs from
	// the first of them, one byte before it so that \b still sees what
	// precedes. Most messages cite at their end, after the prose.
	start := len(text)
	for _, p := range [2]string{"T-", "AMB-"} {
		if i := strings.Index(text, p); i >= 0 {
			start = min(start, i)
		}
	}
	if start == len(text) {
		return nil
	}
	for _, m := range citeRE.FindAllString(text[max(start-1, 0):], -1) {
		from, to, isRange := strings.Cut(m, "..")
		switch {
		case strings.HasSuffix(from, "-*"):
			prefix := strings.TrimSuffix(from, "*")
			for _, r := range All() {
				if strings.HasPrefix(r.ID, prefix) && isNumber(r.ID[len(prefix):]) {
					add(r.ID)
				}
			}
		case isRange:
			ids, err := expand(from, to)
			if err != nil {
				add(from)
				add(to)
				continue
			}
			for _, id := range ids {
				add(id)
			}
		default:
			add(from)
		}
	}
	return out
}

// expand lists from..to, both of one area ("T-ERR-1", "T-ERR-11").
func expand(from, to string) ([]string, error) {
	fp, fn, ok1 := splitID(from)
	tp, tn, ok2 := splitID(to)
	if !ok1 || !ok2 || fp != tp || fn > tn {
		return nil, fmt.Errorf("bad range %s..%s", from, to)
	}
	var out []string
	for n := fn; n <= tn; n++ {
		out = append(out, fp+strconv.Itoa(n))
	}
	return out, nil
}

func splitID(id string) (prefix string, n int, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i+1:])
	return id[:i+1], n, err == nil
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil && s != ""
}
