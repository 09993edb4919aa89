//go:build unix

package transport

import (
	"os"
	"syscall"
)

// procAttr starts the server in a process group of its own, so shutdown
// signals reach whatever it spawned (npx, uvx and shell wrappers run the
// real server as a child), and a terminal's Ctrl-C reaches only the
// checker, which then shuts the server down in order.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// terminate asks the server's process group to stop.
func terminate(p *os.Process) error { return signalGroup(p, syscall.SIGTERM) }

// kill stops the server's process group.
func kill(p *os.Process) error { return signalGroup(p, syscall.SIGKILL) }

// signalGroup must only be called before the server is reaped: after,
// its pid (and group id) may name someone else.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err == nil {
		return nil
	}
	return p.Signal(sig)
}

const termName = "SIGTERM"
