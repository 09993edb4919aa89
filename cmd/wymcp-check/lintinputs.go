package main

import (
	"path/filepath"
	"strings"

	"github.com/wymcp/wymcp-check/report"
)

// someInputOpens stops lint before any report when none of its inputs
// can be opened: with nothing to judge, a name that is not there is a
// mistake to state, not a run to report. When some can, each that
// cannot is an input problem of the run (as a directory is): the rest
// is judged, the report written, and the run exits 2.
func someInputOpens(files []string) error {
	var first error
	for _, name := range files {
		err := transcriptsExist([]string{name})
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// inputKeys are the names that start the fixtures of each of several
// inputs (NAME:fixture), in the report and in a baseline's keys. A key
// must not depend on where lint runs, or a committed baseline matches
// nothing when the CI's working directory (or the relative path typed)
// differs from the one it was written from: an input is its base name
// when no other input shares it. Inputs that share one (x/t.jsonl,
// y/t.jsonl) are each their path relative to the working directory
// (absolute outside it), one spelling per file, so "./a.jsonl" and
// "$PWD/a.jsonl" still agree. Each input is decided alone: adding an
// input re-keys only the inputs whose base name it shares, and a
// baseline holds for the others.
func inputKeys(files []string, wd string) []string {
	keys := make([]string, len(files))
	shared := map[string]int{}
	for i, name := range files {
		keys[i] = filepath.Base(filepath.Clean(name))
		shared[keys[i]]++
	}
	for i, name := range files {
		if shared[keys[i]] > 1 {
			keys[i] = report.CleanPath(wd, name)
		}
	}
	return keys
}

// oldKeys renames a baseline entry written before inputs were keyed by
// base name: its FILE part was the input's path relative to the working
// directory (or, earlier, as typed). Such an entry is read as if written
// with the input's key, so an upgrade does not turn every accepted
// failure of a committed baseline into a failure, and --write-baseline
// writes it in the new form with its reason. A name that is some input's
// key now is never read as another's old one.
func oldKeys(files, keys []string, wd string) func(fixture string) (string, bool) {
	current := map[string]bool{}
	for _, k := range keys {
		current[k] = true
	}
	old := map[string]string{}
	for i, name := range files {
		for _, o := range []string{report.CleanPath(wd, name), name} {
			if !current[o] {
				old[o] = keys[i]
			}
		}
	}
	return func(fixture string) (string, bool) {
		// A fixture's own name may hold ":" (line:3): the input's name
		// is the longest old name it starts with.
		best := ""
		for o := range old {
			if len(o) > len(best) && strings.HasPrefix(fixture, o+":") {
				best = o
			}
		}
		if best == "" {
			return "", false
		}
		return old[best] + fixture[len(best):], true
	}
}
