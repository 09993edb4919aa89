package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWrapJudgesABanner: a server that prints a startup banner on stdout
// before any request breaks T-STDIO-2 (stdout carries only messages):
// wrap judges the banner with the first request's reply and fails it
// (RPC1001), as check fails the same server, and lint of the recording
// agrees. wrap only showed it, and passed. The twin prints its banner
// on stderr, where it belongs, and passes.
func TestWrapJudgesABanner(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	tests := []struct {
		name     string
		banner   string // the shell's redirection of the banner
		want     string
		wantLint exitCode
	}{
		{"banner on stdout", "", "1 exchanges judged: 0 ok, 0 warn, 1 fail", exitFindings},
		{"banner on stderr", ">&2", "1 exchanges judged: 1 ok, 0 warn, 0 fail", exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			server := `echo "Server listening on stdio" ` + tt.banner + `; read line; ` +
				`printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}'; cat >/dev/null`
			client := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
			code, errOut := wrapAfterBanner(t, client, "--color", "never", "--record", rec, "--", "/bin/sh", "-c", server)
			if code != exitOK {
				t.Errorf("exit %d, want the server's 0", code)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, errOut)
			}
			if fails := strings.Contains(errOut, "fail RPC1001"); fails != (tt.wantLint != exitOK) {
				t.Errorf("RPC1001 fails: %v, want %v:\n%s", fails, tt.wantLint != exitOK, errOut)
			}
			code, lintOut, _ := runMain(t, "", "lint", rec)
			if code != tt.wantLint || strings.Contains(lintOut, "fail RPC1001") != (tt.wantLint != exitOK) {
				t.Errorf("lint of the recording: exit %d, want %d\n%s", code, tt.wantLint, lintOut)
			}
		})
	}
}

// wrapAfterBanner runs wrap with args as a client that writes request
// once the server's banner has passed (on either stream), so that the
// banner comes while no request waits, and closes stdin once the reply
// has come. It returns the exit code and wrap's stderr.
func wrapAfterBanner(t *testing.T, request string, args ...string) (exitCode, string) {
	t.Helper()
	s, _, _ := testStreams()
	out, errOut := &lockedBuf{}, &lockedBuf{}
	pr, pw := io.Pipe()
	s.In, s.Out, s.ErrOut = pr, out, errOut
	client := make(chan struct{})
	go func() {
		defer close(client)
		defer pw.Close()
		waitFor := func(what string, came func() bool) bool {
			for deadline := time.Now().Add(10 * time.Second); !came(); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("no %s within 10s", what)
					return false
				}
			}
			return true
		}
		// The banner on a line of its own: wrap's first line quotes the
		// command, banner and all.
		banner := "Server listening on stdio\n"
		if !waitFor("banner", func() bool {
			return strings.HasPrefix(out.String(), banner) || strings.Contains(errOut.String(), "\n"+banner)
		}) {
			return
		}
		io.WriteString(pw, request)
		waitFor("reply", func() bool { return strings.Contains(out.String(), `"id":0,"result"`) })
	}()
	code := Main(append([]string{"wrap"}, args...), s)
	<-client
	return code, errOut.String()
}
