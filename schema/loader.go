package schema

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrExternalRef is the cause of every compile error for a $ref or $schema
// that points outside the document being compiled. Nothing is ever
// fetched: a schema's author must not make the checker reach the network
// or the file system (T-SCHEMA-4), and such a schema is rejected rather
// than treated as accepting anything (T-SCHEMA-5).
var ErrExternalRef = errors.New("external $ref not fetched")

// refusingLoader replaces the library's default loader, which reads
// file:// URLs; the embedded metaschemas are resolved before any loader.
type refusingLoader struct{}

func (refusingLoader) Load(string) (any, error) { return nil, ErrExternalRef }

func newCompiler(draft *jsonschema.Draft) *jsonschema.Compiler {
	c, _ := newLoggingCompiler(draft)
	return c
}

// newLoggingCompiler is newCompiler that also keeps the patterns it could
// not read, so that a schema holding one knows its verdicts are not sure.
func newLoggingCompiler(draft *jsonschema.Draft) (*jsonschema.Compiler, *patternLog) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(draft)
	c.UseLoader(refusingLoader{})
	log := &patternLog{}
	c.UseRegexpEngine(log.compile)
	return c, log
}

// patternLog compiles patterns for one compiler, keeps those it could not
// read while the schema compiles, and counts how often they are asked to
// match: a validation that asked none of them did not depend on them.
type patternLog struct {
	mu         sync.Mutex
	unreadable []string
	notECMA    []string // of unreadable, those no ECMA-262 pattern, with why
	done       bool     // compiled: patterns met later (format "regex") are values
	calls      atomic.Int64
}

// compile compiles a pattern as ECMA-262 means it, in RE2 (linear time on
// any input, which a server's schema and strings may be; see
// translateECMA), and a pattern RE2 cannot read even so as a pattern the
// checker does not enforce. JSON Schema patterns are ECMA-262, and the
// ones RE2 lacks (lookahead, lookbehind, back-references) are what the
// TypeScript SDK's zod emits for .regex(): failing such a schema as
// invalid would be a guess. A pattern that is no ECMA-262 either breaks
// only a SHOULD (the pattern SHOULD be one), which the checker cannot
// tell from the rest, so it is not judged either. Matching every string
// is laxer than the schema under pattern, but stricter under not, oneOf,
// if or patternProperties: a validation that failed after asking such a
// pattern is not sure (ToolSchema.Validate).
func (l *patternLog) compile(pattern string) (jsonschema.Regexp, error) {
	re, err := compileECMA(pattern)
	if err == nil {
		return ecmaRegexp{re, pattern}, nil
	}
	l.mu.Lock()
	if !l.done {
		l.unreadable = append(l.unreadable, pattern)
		if errors.Is(err, errNotECMA) {
			why := strings.TrimPrefix(err.Error(), ErrUnreadablePattern.Error()+": "+errNotECMA.Error()+": ")
			l.notECMA = append(l.notECMA, quote(pattern)+": "+why)
		}
	}
	l.mu.Unlock()
	return unenforced{pattern, &l.calls}, nil
}

// maxNotECMA bounds the invalid patterns a schema reports.
const maxNotECMA = 8

// finish ends the compile: the patterns kept are the schema's own, and
// those of them that are no ECMA-262 pattern, each with why.
func (l *patternLog) finish() (unreadable, notECMA []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done = true
	// (The library compiles a schema's keywords in no fixed order: the
	// ones shown are cut from the sorted list.)
	slices.Sort(l.notECMA)
	l.notECMA = slices.Compact(l.notECMA)
	if len(l.notECMA) > maxNotECMA {
		l.notECMA = append(l.notECMA[:maxNotECMA:maxNotECMA], fmt.Sprintf("and %d more", len(l.notECMA)-maxNotECMA))
	}
	return l.unreadable, l.notECMA
}

// unenforced is a pattern the checker cannot read: every string matches,
// and each match is counted.
type unenforced struct {
	src   string
	calls *atomic.Int64
}

func (u unenforced) MatchString(string) bool {
	u.calls.Add(1)
	return true
}
func (u unenforced) String() string { return u.src }

// ecmaRegexp is a translated pattern that shows itself, in messages, as
// the schema wrote it.
type ecmaRegexp struct {
	re  *regexp.Regexp
	src string
}

func (e ecmaRegexp) MatchString(s string) bool { return e.re.MatchString(s) }
func (e ecmaRegexp) String() string            { return e.src }
