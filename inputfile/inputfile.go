// Package inputfile reads the files a user names with a flag (a
// contract, a baseline, a protocol schema): bounded, and without waiting
// for a FIFO's writer, so that no such file can hang or flood a run
// before any deadline holds (review rev29: /dev/zero grew the checker by
// gigabytes, a FIFO nobody wrote hung it).
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNoWriter says a FIFO or pipe gave nothing: with no writer it reads
// as empty (see Open), which is worth naming as such rather than as an
// empty file.
var ErrNoWriter = errors.New("nothing to read: a FIFO or pipe with no writer, or one closed empty")

// Read reads the file name, at most max bytes, without waiting for a
// FIFO's writer. Errors name the file.
func Read(name string, max int64) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// One byte past the bound: reading it says the file runs past.
	raw, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(raw)) > max {
		return nil, fmt.Errorf("%s runs past %d bytes: read no further", name, max)
	}
	if len(raw) == 0 && !Regular(f) {
		return nil, fmt.Errorf("%s: %w", name, ErrNoWriter)
	}
	return raw, nil
}

// Regular reports whether f is a regular file: an empty read of another
// (a FIFO, a pipe) means no writer rather than an empty file.
func Regular(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}
