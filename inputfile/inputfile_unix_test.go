//go:build unix

package inputfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wymcp/wymcp-check/inputfile"
)

// TestRead: a file is read whole within its bound; past it, or a FIFO
// nobody writes (whose open once waited for ever), is an error naming
// the file, at once; an empty regular file is no error.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file, empty, fifo := filepath.Join(dir, "f"), filepath.Join(dir, "e"), filepath.Join(dir, "fifo")
	if err := os.WriteFile(file, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	if raw, err := inputfile.Read(file, 5); err != nil || string(raw) != "12345" {
		t.Errorf("a file within its bound: %q, %v", raw, err)
	}
	if raw, err := inputfile.Read(empty, 5); err != nil || len(raw) != 0 {
		t.Errorf("an empty file: %q, %v", raw, err)
	}
	if _, err := inputfile.Read(file, 4); err == nil || !strings.Contains(err.Error(), file+" runs past 4 bytes") {
		t.Errorf("a file past its bound: %v", err)
	}
	if _, err := inputfile.Read("/dev/zero", 1<<10); err == nil || !strings.Contains(err.Error(), "runs past") {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := inputfile.Read(fifo, 5); !errors.Is(err, inputfile.ErrNoWriter) || !strings.Contains(err.Error(), fifo) {
		t.Errorf("a FIFO nobody writes: %v", err)
	}
}
