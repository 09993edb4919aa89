package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/wymcp/wymcp-check/baseline"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
)

// maxInputFile bounds what is read of a file a flag names (--contract,
// --baseline): one bound, the baseline's, for all of them. Such a file
// is short text; one that never ends (/dev/zero, a pipe that keeps
// sending) once grew the checker by gigabytes before any deadline.
const maxInputFile = baseline.MaxFile

// errNoWriter says a FIFO or pipe gave nothing: with no writer it reads
// as empty (see openNoWait), which is worth naming as such rather than
// as an empty file.
var errNoWriter = errors.New("nothing to read: a FIFO or pipe with no writer, or one closed empty")

// readInputFile reads the file name for a flag, at most maxInputFile
// bytes, without waiting for a FIFO's writer.
func readInputFile(name string) ([]byte, error) {
	f, err := openNoWait(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// One byte past the bound: reading it says the file runs past.
	raw, err := io.ReadAll(io.LimitReader(f, maxInputFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(raw) > maxInputFile {
		return nil, fmt.Errorf("%s runs past %d bytes (the file is short text): read no further", name, maxInputFile)
	}
	if len(raw) == 0 {
		if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: %w", name, errNoWriter)
		}
	}
	return raw, nil
}

// loadContract resolves --contract as envelope.LoadContract does, but
// reads a contract file through readInputFile: bounded, and not waiting
// for a FIFO's writer.
func loadContract(arg string) (*envelope.Contract, error) {
	switch arg {
	case "", envelope.ProfileStrict, envelope.ProfileSpec:
		// ("" is a run without the flag; --contract '' is refused by
		// flagBounds.)
		return envelope.LoadContract(arg)
	}
	raw, err := readInputFile(arg)
	if err != nil {
		return nil, fmt.Errorf("reading contract: %w", err)
	}
	c, err := envelope.ParseContract(raw)
	if err != nil {
		return nil, fmt.Errorf("contract %s: %w", arg, err)
	}
	c.Name = arg
	return c, nil
}

// loadBaseline reads --baseline as baseline.Load does, without waiting
// for a FIFO's writer (baseline.Parse bounds what it reads).
func loadBaseline(path string) (*baseline.Baseline, []error, error) {
	f, err := openNoWait(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading baseline: %w", err)
	}
	defer f.Close()
	cr := &countingReader{r: f}
	b, problems, err := baseline.Parse(path, cr, func(id string) bool { return checks.Lookup(id) != nil })
	if err != nil {
		return nil, nil, fmt.Errorf("reading baseline %s: %w", path, err)
	}
	if cr.n == 0 {
		if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
			return nil, nil, fmt.Errorf("reading baseline %s: %w", path, errNoWriter)
		}
	}
	return b, problems, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
