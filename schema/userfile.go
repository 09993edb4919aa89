package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wymcp/wymcp-check/inputfile"
)

// readUserSchemaFile reads a --schema file through maxUserSchemaBytes:
// the size a stat reports is 0 for /dev/zero and a pipe, so the bound is
// on what is read, not on what the file claims.
func readUserSchemaFile(path string) ([]byte, error) {
	return inputfile.Read(path, maxUserSchemaBytes)
}

// describeSyntax says where and why raw is no JSON, for a file the user
// edits: decode's errNotJSON names neither. encoding/json finds the same
// faults and says at which byte; where it finds none (decode is stricter
// about UTF-8) err stands as it is.
func describeSyntax(raw []byte, err error) error {
	var v any
	var se *json.SyntaxError
	if jerr := json.Unmarshal(raw, &v); !errors.As(jerr, &se) {
		return err
	}
	// Offset counts the bytes read up to and including the one at fault;
	// at the end of the input there is no such byte, and the place is
	// the end.
	at := int(se.Offset) - 1
	if at < 0 || int(se.Offset) >= len(raw) {
		at = min(int(se.Offset), len(raw))
	}
	before := string(raw[:at])
	line := 1 + strings.Count(before, "\n")
	col := 1 + utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:])
	return fmt.Errorf("%w: line %d, column %d (byte offset %d): %s", err, line, col, at, se.Error())
}

// dataKeywords hold JSON values, not subschemas: a "pattern" in them is
// data. nameKeywords hold names whose values are subschemas.
var (
	dataKeywords = []string{"const", "enum", "default", "examples"}
	nameKeywords = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)

// badPattern finds the first pattern in a schema document, as a
// "pattern" keyword or a patternProperties name, that is no ECMA-262
// regular expression, and returns where it is (a JSON pointer) and why.
// The compiler cannot say where: the library hands the regexp engine the
// pattern alone. A user's own schema gets no leniency a server's does
// (read as matching everything, a SHOULD broken): a pattern the user
// wrote wrong is to be fixed, not guessed at. Patterns RE2 cannot read
// but ECMA-262 can are not refused.
func badPattern(doc any) (ptr, pattern string, why error) {
	var walk func(v any, at string, names bool) bool
	check := func(p, at string) bool {
		if _, err := compileECMA(p); errors.Is(err, errNotECMA) {
			ptr, pattern = at, p
			why = errors.New(strings.TrimPrefix(err.Error(), ErrUnreadablePattern.Error()+": "+errNotECMA.Error()+": "))
			return true
		}
		return false
	}
	walk = func(v any, at string, names bool) bool {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(v) {
				e, here := v[k], at+"/"+escapePointer(k)
				if !names {
					if slices.Contains(dataKeywords, k) {
						continue
					}
					if p, ok := e.(string); ok && k == "pattern" && check(p, here) {
						return true
					}
					if pp, ok := e.(map[string]any); ok && k == "patternProperties" {
						for _, p := range sortedKeys(pp) {
							if check(p, here+"/"+escapePointer(p)) {
								return true
							}
						}
					}
				}
				if walk(e, here, !names && slices.Contains(nameKeywords, k)) {
					return true
				}
			}
		case []any:
			for i, e := range v {
				if walk(e, fmt.Sprintf("%s/%d", at, i), false) {
					return true
				}
			}
		}
		return false
	}
	walk(doc, "", false)
	return ptr, pattern, why
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// escapePointer escapes a name for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
