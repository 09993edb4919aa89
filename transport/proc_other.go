//go:build !unix

package transport

import (
	"os"
	"syscall"
)

func procAttr() *syscall.SysProcAttr { return nil }

// terminate kills: without Unix signals there is no polite request to
// send beyond closing stdin.
func terminate(p *os.Process) error { return p.Kill() }

func kill(p *os.Process) error { return p.Kill() }

const termName = "a kill"
