//go:build unix && !linux

package proxy

import "syscall"

// procAttr starts the server in a process group of its own; see the
// Linux variant. Without Pdeathsig, a relay killed outright leaves the
// server to notice its closed stdin.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
