package main

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSendDeadline: send takes check's --deadline, a bound on its whole
// wall time. Before, send had none, and a server that never answered
// held it for a --timeout per exchange (setup included), however many.
// Past the deadline in the session's setup, send ends as check does
// there, exit 3 with the flag named; past it on the message, the
// message could not be judged, exit 1 as check's fixtures cut short.
// The twin: a send that ends in time is as before.
func TestSendDeadline(t *testing.T) {
	// A server that never answers: every request waits for the client.
	stop := make(chan struct{})
	hang := newLoopbackServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hang.Close()
	defer close(stop) // (first: a request of the ended run may still be open)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	call := `{"jsonrpc":"2.0","id":{{id}},"method":"tools/call","params":{"name":"x","arguments":{}}}`

	t.Run("setup hangs", func(t *testing.T) {
		start := time.Now()
		code, out, errOut := runMain(t, ping, "send", "--deadline", "1s", "--timeout", "30s", hang.URL+"/mcp", "-")
		if took := time.Since(start); took > 8*time.Second {
			t.Errorf("send took %s past a --deadline of 1s", took)
		}
		if code != exitTarget || !strings.Contains(errOut, "the run's --deadline of 1s passed") {
			t.Errorf("exit %d, stderr %q; want %d naming the deadline\n%s", code, errOut, exitTarget, out)
		}
	})
	t.Run("message hangs", func(t *testing.T) {
		t.Setenv(stdioServerEnv, "silent-calls")
		start := time.Now()
		code, out, errOut := runMain(t, call, "send", "--deadline", "2s", "--timeout", "30s", "-", "--", os.Args[0])
		if took := time.Since(start); took > 9*time.Second {
			t.Errorf("send took %s past a --deadline of 2s", took)
		}
		if code != exitFindings || !strings.Contains(out+errOut, "the run's --deadline of 2s passed") {
			t.Errorf("exit %d; want %d naming the deadline\nstdout:\n%s\nstderr:\n%s", code, exitFindings, out, errOut)
		}
	})
	t.Run("message hangs, server stubborn", func(t *testing.T) {
		// A server that ignores its stdin's end and SIGTERM gets the
		// short shutdown once the deadline passed, not --grace twice.
		t.Setenv(stdioServerEnv, "stubborn-calls")
		start := time.Now()
		code, out, errOut := runMain(t, call, "send", "--deadline", "2s", "--timeout", "30s", "-", "--", os.Args[0])
		// (Unhurried: the default grace of 2 s after stdin's end, then
		// 2 s after SIGTERM, before SIGKILL.)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("send took %s past a --deadline of 2s: the shutdown was not hurried", took)
		}
		if code != exitFindings {
			t.Errorf("exit %d; want %d\nstdout:\n%s\nstderr:\n%s", code, exitFindings, out, errOut)
		}
	})
	t.Run("in time", func(t *testing.T) {
		t.Setenv(stdioServerEnv, "once")
		code, out, errOut := runMain(t, call, "send", "--deadline", "1m", "-", "--", os.Args[0])
		if code != exitOK || strings.Contains(out+errOut, "deadline") {
			t.Errorf("exit %d; want %d, nothing about the deadline\nstdout:\n%s\nstderr:\n%s", code, exitOK, out, errOut)
		}
	})
	t.Run("refused as check refuses it", func(t *testing.T) {
		for _, cmd := range []string{"check", "send"} {
			code, _, errOut := runMain(t, ping, cmd, "--deadline", "0s", "--demo")
			if code != exitUsage || !strings.Contains(errOut, "--deadline 0s: want a positive duration") {
				t.Errorf("%s --deadline 0s: exit %d, stderr %q", cmd, code, errOut)
			}
		}
	})
}
