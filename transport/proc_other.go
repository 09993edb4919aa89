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

// groupLives is false: without process groups the server's children are
// not the checker's to find.
func groupLives(pgid int) bool { return false }

// signalLeftovers signals nothing, for the reason groupLives gives.
func signalLeftovers(pgid int, hard bool) bool { return false }

const termName = "a kill"
