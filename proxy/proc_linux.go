package proxy

import "syscall"

// procAttr starts the server in a process group of its own, so that a
// terminal's Ctrl-C reaches the relay alone (which forwards it once),
// and forwarded signals reach whatever the server spawned (npx and
// shell wrappers run the real server as a child). The kernel kills the
// server if the relay dies: a client that SIGKILLs the relay must not
// leave the server behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
