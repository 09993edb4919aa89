package main

import (
	"bytes"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
)

// streams is the process's view of the world: standard streams, whether
// stdout is a terminal, the environment and the clock. Only main builds
// the real one; tests build buffers.
type streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	OutTTY bool
	// ErrTTY: stderr is a terminal (a progress line may be drawn there).
	ErrTTY bool
	Getenv func(string) string
	Now    func() time.Time
}

func systemStreams() *streams {
	return &streams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd()),
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()) || isatty.IsCygwinTerminal(os.Stderr.Fd()),
		Getenv: os.Getenv,
		Now:    time.Now,
	}
}

func testStreams() (*streams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &streams{
		In: &bytes.Buffer{}, Out: out, ErrOut: errOut,
		Getenv: func(string) string { return "" },
		Now:    func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
	}, out, errOut
}

// colorOn decides color: the flag wins, then NO_COLOR, then the terminal.
func (s *streams) colorOn(flag string) bool {
	switch flag {
	case "always":
		return true
	case "never":
		return false
	}
	if s.Getenv("NO_COLOR") != "" {
		return false
	}
	return s.OutTTY
}
