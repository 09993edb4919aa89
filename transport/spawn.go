package transport

import (
	"fmt"
	"os"
	"os/exec"
)

// Pipes are the checker's ends of a started process's stdio.
type Pipes struct {
	Stdin          *os.File // written by the checker
	Stdout, Stderr *os.File // read by the checker
}

// Spawn starts cmd with pipes for its stdio. The pipes are *os.File
// ends: the child gets the descriptors themselves, so os/exec starts no
// copying goroutines of its own that Wait would tie to a grandchild
// still holding a pipe, and closing the checker's ends unblocks its
// reads. The caller sets everything else of cmd (environment, directory,
// process attributes).
func Spawn(cmd *exec.Cmd) (Pipes, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	var ends [3][2]*os.File
	for i, what := range []string{"stdin", "stdout", "stderr"} {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return Pipes{}, fmt.Errorf("creating %s pipe: %w", what, err)
		}
		files = append(files, r, w)
		ends[i] = [2]*os.File{r, w}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0][0], ends[1][1], ends[2][1]
	if err := cmd.Start(); err != nil {
		closeAll()
		return Pipes{}, fmt.Errorf("starting server %q: %w", cmd.Args[0], err)
	}
	// The child has its copies; ours would keep its stdin from ever
	// reaching EOF and our reads from ever ending.
	ends[0][0].Close()
	ends[1][1].Close()
	ends[2][1].Close()
	return Pipes{Stdin: ends[0][1], Stdout: ends[1][0], Stderr: ends[2][0]}, nil
}
