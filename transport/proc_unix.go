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
// its pid may name someone else (see signalLeftovers for the group).
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err == nil {
		return nil
	}
	return p.Signal(sig)
}

// groupLives reports whether the process group pgid has a member this
// process may signal.
func groupLives(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// signalLeftovers signals what is left of the process group pgid after
// its leader (the server) was reaped: the background children it started
// and left behind. hard sends SIGKILL, else SIGTERM. It reports whether
// the group still had members to signal.
//
// Why this reaches only the server's own leftovers: POSIX (and Linux,
// which keeps a pid allocated while any task still uses it as its group
// id) never reuses a process id while a process group of that id exists.
// So while the group lives, -pgid names it and nothing else, and the
// kill follows the check at once. What remains is a group that ends on
// its own between the server's reap and this call, and whose id is
// handed out again, to a new group leader, before it: that needs the
// pid space to wrap around in the meantime (pid_max allocations). The
// caller also asks only about a group that still had members when the
// server was reaped (the usual case, no children, is never signalled),
// and only while it shuts the server down.
func signalLeftovers(pgid int, hard bool) bool {
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	if !groupLives(pgid) {
		return false
	}
	return syscall.Kill(-pgid, sig) == nil
}

const termName = "SIGTERM"
