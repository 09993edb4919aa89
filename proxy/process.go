package proxy

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/wymcp/wymcp-check/transport"
)

// A process is the wrapped server.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // write end of its stdin
	stdout *os.File // read end of its stdout
	stderr *os.File // read end of its stderr

	exited  chan struct{} // closed once reaped
	waitErr error         // set before exited closes

	mu     sync.Mutex // guards signalling against the reaping
	reaped bool
}

// startProcess starts argv with pipes for its stdio (transport.Spawn).
func startProcess(argv, env []string, dir string) (*process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = procAttr()
	pipes, err := transport.Spawn(cmd)
	if err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, stdin: pipes.Stdin, stdout: pipes.Stdout, stderr: pipes.Stderr, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr, p.reaped = err, true
		p.mu.Unlock()
		close(p.exited)
	}()
	return p, nil
}

// signal sends sig to the server's process group, unless it was reaped
// (its pid may then name someone else).
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		signalGroup(p.cmd.Process, sig)
	}
}

// waitExit waits up to d for the process to exit, and says whether it
// did.
func (p *process) waitExit(d time.Duration) bool { return p.waitExitUnless(d, nil, nil) }

// waitExitUnless is waitExit cut short when cut or done closes (a
// second signal, the relay stopped): false then, unless it exited. (A
// nil channel never closes.)
func (p *process) waitExitUnless(d time.Duration, cut, done <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	case <-cut:
	case <-done:
	}
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, waits grace, then SIGKILL, until the process is
// reaped.
func (p *process) stop(grace time.Duration) {
	p.signal(syscall.SIGTERM)
	if p.waitExit(grace) {
		return
	}
	p.signal(syscall.SIGKILL)
	<-p.exited // SIGKILL cannot be refused
}
