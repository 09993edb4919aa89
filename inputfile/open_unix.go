//go:build unix

package inputfile

import (
	"os"
	"syscall"
)

// Open opens name for reading without waiting for a writer: open(2)
// of a FIFO blocks until one comes, and a --contract, --schema or --baseline on a
// FIFO nobody writes once hung the run before any report. Opened
// non-blocking, then put back in blocking mode (Fd does), a FIFO with no
// writer reads as empty: the caller names it, and a FIFO with a writer
// is read as any file.
func Open(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	f.Fd() // blocking reads again: a writer's pauses are waited for, not EAGAIN
	return f, nil
}
