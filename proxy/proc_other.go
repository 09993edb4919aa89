//go:build !unix

package proxy

import (
	"os"
	"syscall"
)

func procAttr() *syscall.SysProcAttr { return nil }

// signalGroup can only kill: there are no signals to forward here.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if sig == syscall.SIGKILL || sig == syscall.SIGTERM {
		p.Kill()
	}
}
