//go:build unix

package main

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/runner"
)

// TestSignals: the first SIGINT cancels the run's context with
// runner.ErrInterrupted (the run then writes its reports); a second exits
// at once with 130.
func TestSignals(t *testing.T) {
	exited := make(chan int, 1)
	ctx, release := watchSignalsExit(context.Background(), func(code int) { exited <- code })
	defer release()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first signal did not stop the run")
	}
	if cause := context.Cause(ctx); !errors.Is(cause, runner.ErrInterrupted) {
		t.Errorf("cause %v, want runner.ErrInterrupted", cause)
	}
	select {
	case code := <-exited:
		t.Fatalf("exited (%d) on the first signal", code)
	default:
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		if code != exitSecondSignal {
			t.Errorf("second signal: exit %d, want %d", code, exitSecondSignal)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second signal did not exit")
	}
}
