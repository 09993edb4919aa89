package checks

import (
	"iter"
	"math/rand"
	"strings"
	"testing"
)

// The prefilters spare most messages the expressions; they may let
// through what the expressions then reject, never the reverse. Messages
// are built from the pieces the expressions know, in random order, so
// every prefix, spelling, code and pointer meets every other.

func TestMayBeOnlyKeepsEveryGenericMessage(t *testing.T) {
	pieces := []string{"", "mcp error -32602: ", "error: ", "error: error: ", "json-rpc error -32602:", "jsonrpc error:", "x ",
		"mcperror: ", "valueerror: mcp error -32603: ",
		"invalid params", "invalid arguments", "validation failed", "internal error", "internal server error", "bad request", "invalid request",
		"invalid tool arguments", "method not found", "parse error", " (see errors)", ", see the error list",
		" (-32602)", " [-32603]", " - -32600", " code -32602", " (see data)", ", see error.data for details", " (details in data)",
		" details are in the data", " more in data", " info in error data", " cause in the data", " see the details", " check below",
		".", "!", "…", " for tool add", ": ", " 12345", "—", " see ", "detail"}
	names := map[int]string{-32602: "invalid params", -32603: "internal error", -32600: "invalid request", 1: ""}
	generic := 0
	for m := range joinedPieces(1, pieces, 4, 60000) {
		for code, name := range names {
			if rewritesToGeneric(m, code, name) == "" {
				continue
			}
			generic++
			may := false
			eachGeneric(code, name, func(g string) bool { may = mayBeOnly(m, g); return !may })
			if !may {
				t.Errorf("%q (code %d) is generic, but mayBeOnly passes it by", m, code)
			}
		}
	}
	if generic < 1000 {
		t.Fatalf("only %d generic messages were built: the pieces no longer exercise the rewriting", generic)
	}
}

func TestMayBeCompositeKeepsEveryComposite(t *testing.T) {
	pieces := []string{"", "#/x: ", "$.a: ", " ", "must match a schema in anyOf", "must match exactly one schema in oneOf",
		"MUST MATCH ALL SCHEMAS IN ALLOF", `must match "then" schema`, "foo is not valid under any of the given schemas",
		"doesn't validate with #/$defs/X", "does not validate against y", "'oneOf' failed, none matched", "anyof failed",
		"Must validate at least one schema (anyOf)", `must validate "else" as "if" was not valid`,
		"Failed to match exactly one schema", "should be valid to one and only one schema, but 0 are valid",
		"must be integer", "x", "ſchema", "K"}
	composite := 0
	for m := range joinedPieces(2, pieces, 3, 60000) {
		if !oneOfExactlyOne.MatchString(m) && !compositeFailure.MatchString(m) {
			continue
		}
		composite++
		if !mayBeComposite(m) {
			t.Errorf("%q is a composite failure, but mayBeComposite passes it by", m)
		}
	}
	if composite < 1000 {
		t.Fatalf("only %d composite messages were built: the pieces no longer exercise the expressions", composite)
	}
}

// joinedPieces yields n messages, each one to most pieces drawn at
// random (seeded, so a failure reproduces) and joined.
func joinedPieces(seed int64, pieces []string, most, n int) iter.Seq[string] {
	return func(yield func(string) bool) {
		r := rand.New(rand.NewSource(seed))
		for range n {
			var b strings.Builder
			for range 1 + r.Intn(most) {
				b.WriteString(pieces[r.Intn(len(pieces))])
			}
			if !yield(b.String()) {
				return
			}
		}
	}
}
