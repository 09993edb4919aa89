package main

import (
	"path/filepath"

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
// differs from the one it was written from: each input is its base
// name, when the inputs' base names are distinct. When two share one
// (x/t.jsonl, y/t.jsonl), each is its path relative to the working
// directory (absolute outside it), one spelling per file, so
// "./a.jsonl" and "$PWD/a.jsonl" still agree.
func inputKeys(files []string, wd string) []string {
	keys := make([]string, len(files))
	seen := map[string]bool{}
	distinct := true
	for i, name := range files {
		keys[i] = filepath.Base(filepath.Clean(name))
		distinct = distinct && !seen[keys[i]]
		seen[keys[i]] = true
	}
	if !distinct {
		for i, name := range files {
			keys[i] = report.CleanPath(wd, name)
		}
	}
	return keys
}
