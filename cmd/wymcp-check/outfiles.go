package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// outFiles are the files one run writes (its reports, --record, --log),
// opened so that a failure to open one, or any other mistake found
// before the run goes on, destroys none: each is opened without
// truncation (made where it was not), and all are emptied only once
// every one is open and every flag checked (commit); on failure
// (abandon) they are closed and the ones made are removed again, so an
// earlier run's report, recording or log stays as it was.
//
// They are written in place, not to a temporary file renamed at the end:
// a report may be a FIFO or /dev/stdout and is read while the run goes
// (tail -f), a recording is streamed so that a run killed keeps what it
// recorded where the user asked for it, and a file keeps its links and
// permissions.
type outFiles struct {
	files   []*os.File
	created []string
}

// open opens path for writing without emptying it.
func (b *outFiles) open(path string) (*os.File, error) {
	_, statErr := os.Lstat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		b.created = append(b.created, path)
	}
	b.files = append(b.files, f)
	return f, nil
}

// abandon closes the files and removes the ones open made: the run
// will not go on. (A file closed already by its owner is closed again
// harmlessly.)
func (b *outFiles) abandon() {
	if b == nil {
		return
	}
	for _, f := range b.files {
		f.Close()
	}
	for _, p := range b.created {
		os.Remove(p)
	}
	b.files, b.created = nil, nil
}

// commit empties the files (a FIFO or a terminal has nothing to empty,
// and no size): the run goes on and writes them from the start. The
// files stay open; their owners close them.
func (b *outFiles) commit() error {
	if b == nil {
		return nil
	}
	for _, f := range b.files {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if err := f.Truncate(0); err != nil {
				return fmt.Errorf("emptying %s: %w", f.Name(), err)
			}
		}
	}
	b.files, b.created = nil, nil
	return nil
}

// drop leaves f out of the batch, as it was: closed, and removed if
// open made it. (check's --record when the target does not start: the
// reports say so, and an earlier recording is kept.)
func (b *outFiles) drop(f *os.File) {
	f.Close()
	for i, g := range b.files {
		if g == f {
			b.files = append(b.files[:i:i], b.files[i+1:]...)
			break
		}
	}
	for i, p := range b.created {
		if p == f.Name() {
			os.Remove(p)
			b.created = append(b.created[:i:i], b.created[i+1:]...)
			break
		}
	}
}
