package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSendReproduceDemoStdio: the reproduce line of the stdio demo pipes
// the message into the demo's own command; it ended at the pipe.
func TestSendReproduceDemoStdio(t *testing.T) {
	t.Setenv(stdioServerEnv, "once") // the demo starts this binary
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	msg := `{"jsonrpc":"2.0","id":{{id}},"method":"tools/list","params":{{{meta}}}}`
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, `\n' | ` + shellJoin([]string{exe, "refserver", "--stdio"}) + "\n"},
		{[]string{"--demo-fault", "prose-data"}, `\n' | ` + shellJoin([]string{exe, "refserver", "--stdio", "--fault", "prose-data"}) + "\n"},
	} {
		code, out, errOut := runMain(t, msg, append(append([]string{"send", "--timeout", "5s", "--demo", "--demo-stdio"}, tc.args...), "-")...)
		if code != exitOK && code != exitFindings {
			t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
		}
		if !strings.Contains(out, "reproduce:\n  printf '") || !strings.Contains(out, tc.want) {
			t.Errorf("want a reproduce line ending %q:\n%s", tc.want, out)
		}
	}
}

// TestSendReproducePOSIX: the printf of a reproduce line gives the bytes
// sent in a POSIX shell too (dash knows no \xHH: it printed é as the
// eight characters \xc3\xa9), with quotes, percents and backslashes.
func TestSendReproducePOSIX(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hé 50% it's \\ ok","arguments":{},"_meta":{}}}`
	code, out, errOut := runMain(t, msg, "send", "--demo", "-")
	if code != exitOK && code != exitFindings {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	_, line, _ := strings.Cut(out, "reproduce:\n  ")
	printf, _, ok := strings.Cut(line, " | curl")
	if !ok || strings.Contains(printf, `\x`) {
		t.Fatalf("want a printf with octal escapes piped into curl:\n%s", out)
	}
	for _, sh := range []string{"dash", "sh", "bash"} {
		if _, err := exec.LookPath(sh); err != nil {
			continue
		}
		got, err := exec.Command(sh, "-c", printf).Output()
		if err != nil || !bytes.Equal(got, []byte(msg)) {
			t.Errorf("%s -c %s: %q (%v), want %q", sh, printf, got, err, msg)
		}
	}
}

// TestSendLivenessAfterItsExchange: the liveness probe's block comes
// after the exchange whose silence it explains, and says why it was
// sent; it came first, a passing exchange ahead of the failing one.
func TestSendLivenessAfterItsExchange(t *testing.T) {
	code, out, _ := runMain(t, "", "send", "--demo", "--demo-fault", "hang", "--timeout", "1s", "--fixture", "tools/call-valid")
	own, probe := strings.Index(out, "# tools/call-valid/add: "), strings.Index(out, "# tools/call-valid/add/liveness: ")
	if code != exitFindings || own < 0 || probe < own || !strings.Contains(out, "# the checker's liveness probe, sent because tools/call-valid/add above got no reply") {
		t.Errorf("exit %d; the exchange at %d, its probe at %d: want the probe after, saying why:\n%s", code, own, probe, out)
	}
	if i := strings.Index(out, "fail RPC1006"); i < own || i > probe {
		t.Errorf("RPC1006's fail is not in the exchange's own block:\n%s", out)
	}
}
