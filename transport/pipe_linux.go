//go:build linux

package transport

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// unread returns how many bytes written to the pipe f (either end) its
// reader has not read yet; ok is false when that cannot be told.
func unread(f *os.File) (n int, ok bool) {
	sc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var count int32
	var errno syscall.Errno
	if err := sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&count)))
	}); err != nil || errno != 0 {
		return 0, false
	}
	return int(count), true
}

// readerGone reports whether the pipe f writes to has no reader left (a
// server that closed its stdin): poll flags the write end with POLLERR.
func readerGone(f *os.File) bool {
	sc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	if err := sc.Control(func(fd uintptr) {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if n, err := unix.Poll(pfd, 0); err == nil && n == 1 {
			gone = pfd[0].Revents&unix.POLLERR != 0
		}
	}); err != nil {
		return false
	}
	return gone
}
