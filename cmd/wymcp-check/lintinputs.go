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
