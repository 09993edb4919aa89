//go:build unix

package proxy

import (
	"os"
	"syscall"
)

// signalGroup signals the process group the server leads, or the server
// alone when the group is gone.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		p.Signal(sig)
	}
}
