package proxy

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
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

// startProcess starts argv with pipes for its stdio. The pipes are
// *os.File ends, so os/exec starts no copying goroutines of its own that
// Wait would tie to a grandchild still holding a pipe, and closing our
// ends unblocks our reads.
func startProcess(argv, env []string, dir string) (*process, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func(what string) (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("creating %s pipe: %w", what, err)
		}
		files = append(files, r, w)
		return r, w, nil
	}
	inR, inW, err := pipe("stdin")
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe("stdout")
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe("stderr")
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("starting server %q: %w", argv[0], err)
	}
	// The child has its copies; ours would keep its stdin from ever
	// reaching EOF and our reads from ever ending.
	inR.Close()
	outW.Close()
	errW.Close()
	p := &process{cmd: cmd, stdin: inW, stdout: outR, stderr: errR, exited: make(chan struct{})}
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

func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
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
