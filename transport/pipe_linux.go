//go:build linux

package transport

import (
	"os"
	"syscall"
	"unsafe"
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
