//go:build !unix

package main

import "os"

// openNoWait opens name for reading (see infile_unix.go: only Unix has
// FIFOs whose open waits for a writer).
func openNoWait(name string) (*os.File, error) { return os.Open(name) }
