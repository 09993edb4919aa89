//go:build unix

package transport

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// TestStdioStopsLeftovers: a server that starts a background child and
// exits first left the child running after Close, one per server
// started (a reviewer found `sleep 301 &` behind `sh -c`, once per
// negotiation attempt): the group was signalled only while its leader
// lived. A child already gone is no reason to signal anything, and no
// other process group is ever signalled.
func TestStdioStopsLeftovers(t *testing.T) {
	tests := []struct {
		fake string
		// slow: the child ignores SIGTERM, so Close waits out Grace
		// before SIGKILL.
		slow bool
	}{
		{fake: "leaves-child"},
		{fake: "leaves-stubborn-child", slow: true},
		{fake: "child-exited"},
	}
	for _, tt := range tests {
		t.Run(tt.fake, func(t *testing.T) {
			canary := startCanary(t)
			s := startFake(t, context.Background(), tt.fake, quick)
			ex := s.Do(context.Background(), stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true)
			if ex.Failure != "" || ex.Response == nil {
				t.Fatalf("exchange failed: %s", ex.Failure)
			}
			child := int(gjson.GetBytes(ex.Response.Messages[0], "result.pid").Int())
			if child == 0 {
				t.Fatalf("no child pid in %s", ex.Response.Messages[0])
			}
			// The leader goes first: that is the case that leaked.
			select {
			case <-s.exited:
			case <-time.After(3 * time.Second):
				t.Fatal("the server did not exit")
			}

			start := time.Now()
			if err := s.Close(); err != nil {
				t.Errorf("Close() = %v, want nil (the server exited with status 0)", err)
			}
			hi := 2 * quick.Grace
			if tt.slow {
				within(t, "Close", time.Since(start), quick.Grace, 2*time.Second)
			} else {
				within(t, "Close", time.Since(start), 0, hi)
			}
			if !gone(child, 3*time.Second) {
				t.Errorf("the server's child %d still runs after Close", child)
			}
			if gone(canary, 0) {
				t.Errorf("a process in another group (%d) was stopped by Close", canary)
			}
		})
	}
}

// startCanary runs a sleeper in a process group of its own, which no
// server's Close may reach; it is killed when the test ends.
func startCanary(t *testing.T) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fakeEnv+"=deaf")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// gone waits up to d for process pid to be gone, and reports whether it
// is. A zombie (dead, not yet reaped by its new parent) counts as gone.
func gone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if syscall.Kill(pid, 0) != nil || zombie(pid) {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombie reports whether /proc says pid is a zombie (false where there
// is no /proc).
func zombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) S ...": the state follows the last ")".
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}
