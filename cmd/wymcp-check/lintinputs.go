package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wymcp/wymcp-check/report"
	"github.com/wymcp/wymcp-check/transcript"
)

// A lintInput is one of lint's inputs, opened once: what the judge
// reads, the run line it starts with, and why it cannot be read.
type lintInput struct {
	r   io.Reader
	run *transcript.Run
	err error // not opened: an input problem, named when it is judged
	// read: its start could be read (a directory's cannot: the judge
	// names why), so a missing run line says it has none.
	read bool
	// waits: reading it may wait for a writer (a pipe, a FIFO,
	// stdin); a regular file's reads do not.
	waits bool
	close func()
}

// openInputs opens each input once, and reads the run line it starts
// with on the stream the judge reads after. An input may be a pipe
// (lint <(zcat t.jsonl.gz), /dev/stdin) or a FIFO: opened again, a pipe
// gives the judge what the first reader left of it (a 4 KiB sniff once
// took the run line and the first exchanges), and a FIFO may block, or
// leave its writer with no reader. The caller closes every input.
//
// It stops lint before any report when none of the inputs can be
// opened: with nothing to judge, a name that is not there is a mistake
// to state, not a run to report. When some can, each that cannot is an
// input problem of the run (as a directory is): the rest is judged, the
// report written, and the run exits 2.
func openInputs(s *streams, files []string) ([]lintInput, error) {
	ins := make([]lintInput, len(files))
	var stdin *bufio.Reader
	opened := false
	var first error
	for i, name := range files {
		in := &ins[i]
		in.close = func() {}
		if name == "-" {
			if stdin == nil {
				stdin = bufio.NewReaderSize(s.In, 64<<10)
			}
			in.r = stdin
			in.run, _ = peekRun(stdin)
			in.read, in.waits, opened = true, true, true
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			in.err = fmt.Errorf("opening transcript: %w", err)
			if first == nil {
				first = usagef("opening transcript: %w", err)
			}
			continue
		}
		opened = true
		in.close = func() { f.Close() }
		br := bufio.NewReaderSize(f, 64<<10)
		run, err := peekRun(br)
		if _, unreadable := errors.AsType[*fs.PathError](err); unreadable {
			// A directory: the judge reads it and names the error, as
			// for an input that fails mid-read; it has no run line.
			in.r = br
			continue
		}
		in.run, in.r, in.read, in.waits = run, br, true, true
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			in.waits = false
			if _, err := f.Seek(0, io.SeekStart); err == nil {
				// A file is read again from its start, through the
				// judge's own buffer: thousands of inputs would each
				// hold 64 KiB of sniff otherwise.
				in.r = f
			}
		}
	}
	if !opened {
		return ins, first
	}
	return ins, nil
}

// namedTwice refuses an input named twice ("t.jsonl ./t.jsonl", a link
// to it, "-" twice): judged twice under one key, its rows and counts
// would double and its baseline entries collide (review rev62). A name
// that cannot be read is left to openInputs to report.
func namedTwice(files []string) error {
	type seen struct {
		name string
		fi   fs.FileInfo
	}
	var all []seen
	stdin := ""
	for _, name := range files {
		if name == "-" {
			if stdin != "" {
				return usagef("the input - (stdin) is named twice")
			}
			stdin = name
			continue
		}
		fi, err := os.Stat(name)
		if err != nil {
			continue
		}
		for _, o := range all {
			if os.SameFile(o.fi, fi) {
				return usagef("the input %s is named twice (%s, %s): each input is judged once", name, o.name, name)
			}
		}
		all = append(all, seen{name, fi})
	}
	return nil
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
