package transport

import (
	"bytes"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// leakMarks name the goroutines this package's exchanges may start,
// directly or through net/http and os/exec. None may outlive a test.
var leakMarks = []string{
	"transport.(*Stdio)",
	"transport.StartStdio",
	"transport.(*HTTP)",
	"net/http.(*persistConn)",
	"os/exec.(*Cmd)",
}

// checkNoLeaks fails t if, at cleanup, goroutines of leakMarks are still
// running after a short grace (connections and processes take a moment
// to wind down after their owner let go). Register it first, so that it
// runs after every other cleanup.
func checkNoLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		var leaked []string
		for deadline := time.Now().Add(3 * time.Second); ; {
			leaked = leakedGoroutines()
			if len(leaked) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, g := range leaked {
			t.Errorf("leaked goroutine:\n%s", g)
		}
	})
}

func leakedGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		for _, m := range leakMarks {
			if bytes.Contains(g, []byte(m)) {
				out = append(out, string(g))
				break
			}
		}
	}
	return out
}

// within fails t unless d is in [lo, hi]: bounds must hold in both
// directions, a timeout that fires early is as wrong as one that fires
// late.
func within(t *testing.T, what string, d, lo, hi time.Duration) {
	t.Helper()
	if d < lo || d > hi {
		t.Errorf("%s took %v, want between %v and %v", what, d, lo, hi)
	}
}

// hasPrefix fails t unless s starts with prefix.
func hasPrefix(t *testing.T, what, s, prefix string) {
	t.Helper()
	if !strings.HasPrefix(s, prefix) {
		t.Errorf("%s = %q, want prefix %q", what, s, prefix)
	}
}

// stripDate removes the one reply header that changes between runs.
func stripDate(h http.Header) http.Header {
	h = h.Clone()
	h.Del("Date")
	return h
}
