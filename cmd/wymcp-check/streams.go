package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/wymcp/wymcp-check/runner"
)

// streams is the process's view of the world: standard streams, whether
// stdout is a terminal, the environment and the clock. Only main builds
// the real one; tests build buffers.
type streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	OutTTY bool
	// ErrTTY: stderr is a terminal (wrap's live lines and the progress
	// line go there).
	ErrTTY bool
	Getenv func(string) string
	Now    func() time.Time
	// Interrupts watches for SIGINT and SIGTERM while a run goes on: the
	// first cancels the returned context with runner.ErrInterrupted (the
	// run stops firing, judges what arrived and writes its reports); a
	// second exits at once. release stops watching.
	Interrupts func(context.Context) (ctx context.Context, release func())
}

func systemStreams() *streams {
	return &streams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY:     isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd()),
		ErrTTY:     isatty.IsTerminal(os.Stderr.Fd()) || isatty.IsCygwinTerminal(os.Stderr.Fd()),
		Getenv:     os.Getenv,
		Now:        time.Now,
		Interrupts: watchSignals,
	}
}

// exitSecondSignal is the exit code of a second signal: at once, as a
// shell reports a process ended by SIGINT.
const exitSecondSignal = 130

func watchSignals(parent context.Context) (context.Context, func()) {
	return watchSignalsExit(parent, os.Exit)
}

// watchSignalsExit is watchSignals with the exit of the second signal
// given, for the test.
func watchSignalsExit(parent context.Context, exit func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			cancel(fmt.Errorf("%w by %v", runner.ErrInterrupted, s))
		case <-done:
			return
		}
		select {
		case <-sig:
			exit(exitSecondSignal)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel(nil)
	}
}

func testStreams() (*streams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &streams{
		In: &bytes.Buffer{}, Out: out, ErrOut: errOut,
		Getenv:     func(string) string { return "" },
		Now:        func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
		Interrupts: func(ctx context.Context) (context.Context, func()) { return ctx, func() {} },
	}, out, errOut
}

// colorOn decides color: the flag wins, then NO_COLOR, then the terminal.
func (s *streams) colorOn(flag string) bool { return s.colorFor(flag, s.OutTTY) }

// colorFor decides color for a stream that is a terminal or not.
func (s *streams) colorFor(flag string, tty bool) bool {
	switch flag {
	case "always":
		return true
	case "never":
		return false
	}
	if s.Getenv("NO_COLOR") != "" {
		return false
	}
	return tty
}
