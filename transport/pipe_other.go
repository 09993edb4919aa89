//go:build !linux

package transport

import "os"

// unread cannot tell, here, how much of a pipe is still unread: a fresh
// server's first message is then timed from its writing, start-up
// included.
func unread(*os.File) (int, bool) { return 0, false }

// readerGone cannot tell, here, whether a pipe's reader closed it.
func readerGone(*os.File) bool { return false }
