//go:build !unix

package inputfile

import "os"

// Open opens name for reading (see open_unix.go: only Unix has
// FIFOs whose open waits for a writer).
func Open(name string) (*os.File, error) { return os.Open(name) }
