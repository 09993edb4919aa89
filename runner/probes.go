package runner

import (
	"maps"

	"github.com/wymcp/wymcp-check/fixtures"
)

// probes are the exchanges the runner makes itself, not from a fixture:
// negotiation, the listings the facts come from, the end of a session.
// Each is judged like a fixture, and probes the rules listed here.
var probes = map[string][]string{
	"negotiate/discover":             {"T-LIFE-8", "T-LIFE-9", "T-COMPAT-4", "T-COMPAT-5"},
	"negotiate/initialize":           {"T-LIFE-1", "T-LIFE-2", "T-COMPAT-5", "T-SESS-1"},
	"negotiate/initialized":          {"T-RPC-10", "T-HTTP-4"},
	"setup/tools-list":               {"T-TOOL-1", "T-TOOL-2", "T-PAGE-2"},
	"setup/prompts-list":             {"T-PAGE-2"},
	"setup/resources-list":           {"T-PAGE-2"},
	"setup/resources-templates-list": {"T-PAGE-2"},
	"session/delete":                 {"T-SESS-4"},
	"session/reuse-after-delete":     {"T-SESS-3"},
	StdinClosed:                      {"T-STDIO-2", "T-STDIO-6"},
}

// StdinClosed names the exchange of the end of a stdio server's input:
// the checker closes its stdin after the last fixture and judges what the
// server writes, and whether it exits (envelope.EndOfInput).
const StdinClosed = "session/stdin-closed"

// Reserved are the names the runner reports its own exchanges under, as
// --run patterns (fixtures.Matches): the probes above, and the names made
// from them (negotiate/initialize-2025-06-18, a listing's later pages
// setup/tools-list/page-2, a renewed session's
// session/renew-1/initialize). A fixture may take none: its results
// would be reported, selected and baselined as one with the runner's.
var Reserved = []string{"negotiate/*", "setup/*", "session/delete", "session/reuse-after-delete", "session/renew-*", StdinClosed}

// Probes returns the runner's own exchanges (by the fixture name they are
// reported under) and the rules each probes.
func Probes() map[string][]string { return maps.Clone(probes) }

// Citations maps every fixture and probe to the rules it cites: what a
// coverage table needs to know of a corpus.
func Citations(fx []*fixtures.Fixture) map[string][]string {
	out := Probes()
	for _, f := range fx {
		out[f.ID] = f.Rules
	}
	return out
}
