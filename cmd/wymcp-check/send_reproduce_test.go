package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
)

// fakeCurl stands for curl in a reproduce line run by a test: it writes
// each argument on a line, then the body it would send.
const fakeCurl = `curl() { for a in "$@"; do printf 'arg:%s\n' "$a"; done; for a in "$@"; do case $a in @-) cat;; @*) cat "${a#@}";; esac; done; }; `

// TestReproduceLine: the reproduce line is printable ASCII and sends the
// bytes sent, in POSIX sh and bash. A header value holding other bytes
// (a server's Mcp-Session-Id with U+202E and the C1 CSI) went raw to the
// terminal, the one line of send's not escaped (review rev55 F1); it is
// written "$(printf '…')". A body over reproBodyMax was written whole, a
// 20 MiB message a 20 MB line (review rev55 F4); it is read from the
// message file when that holds the bytes sent, else not shown (BODY).
// The twins: a visible-ASCII session id and a small body are written as
// before.
func TestReproduceLine(t *testing.T) {
	small := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	big := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"x":"` + strings.Repeat("x", reproBodyMax) + `"}}}`
	const hs = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wymcp-check","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	const hsEsc = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wymcp-check","version":"1"}}}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n`
	const fromFile = "the body, 4164 bytes, is over the 4096 written here: it is read from the message file"
	const notShown = "the body, 4164 bytes, is over the 4096 written here and is not shown: BODY stands for a file holding it"
	for _, tc := range []struct {
		name      string
		transport string
		version   string
		sid       string // Mcp-Session-Id sent, if any
		body      string
		file      string // the message file's bytes, if it came from one
		stage     reproStage
		wantNote  string
		wantLine  string // FILE stands for the message file's path
		wantRun   string // what the line writes (curl's arguments, then the body)
	}{
		{name: "session id visible ASCII (twin)", transport: envelope.HTTP, sid: "abc123", body: small,
			wantLine: `printf '` + small + `' | curl -sS -i -X POST -H 'Mcp-Session-Id: abc123' --data-binary @- 'http://h/mcp'`,
			wantRun:  "arg:-sS\narg:-i\narg:-X\narg:POST\narg:-H\narg:Mcp-Session-Id: abc123\narg:--data-binary\narg:@-\narg:http://h/mcp\n" + small},
		{name: "session id with U+202E and C1", transport: envelope.HTTP, sid: "s\u202eid-\u009b31m", body: small,
			wantLine: `printf '` + small + `' | curl -sS -i -X POST -H "$(printf 'Mcp-Session-Id: s\342\200\256id-\302\23331m')" --data-binary @- 'http://h/mcp'`,
			wantRun:  "arg:-sS\narg:-i\narg:-X\narg:POST\narg:-H\narg:Mcp-Session-Id: s\u202eid-\u009b31m\narg:--data-binary\narg:@-\narg:http://h/mcp\n" + small},
		{name: "a body starting with a dash", transport: envelope.HTTP, body: "-1",
			wantLine: `printf '\0551' | curl -sS -i -X POST --data-binary @- 'http://h/mcp'`,
			wantRun:  "arg:-sS\narg:-i\narg:-X\narg:POST\narg:--data-binary\narg:@-\narg:http://h/mcp\n-1"},
		{name: "small body from a file (twin)", transport: envelope.HTTP, body: small, file: small + "\n",
			wantLine: `printf '` + small + `' | curl -sS -i -X POST --data-binary @- 'http://h/mcp'`,
			wantRun:  "arg:-sS\narg:-i\narg:-X\narg:POST\narg:--data-binary\narg:@-\narg:http://h/mcp\n" + small},
		{name: "big body, the file is it", transport: envelope.HTTP, body: big, file: big, wantNote: fromFile,
			wantLine: `curl -sS -i -X POST --data-binary '@FILE' 'http://h/mcp'`,
			wantRun:  "arg:-sS\narg:-i\narg:-X\narg:POST\narg:--data-binary\narg:@FILE\narg:http://h/mcp\n" + big},
		{name: "big body, the file is it and a newline", transport: envelope.HTTP, body: big, file: big + "\n", wantNote: fromFile,
			wantLine: `head -c 4164 'FILE' | curl -sS -i -X POST --data-binary @- 'http://h/mcp'`,
			wantRun:  "arg:-sS\narg:-i\narg:-X\narg:POST\narg:--data-binary\narg:@-\narg:http://h/mcp\n" + big},
		{name: "big body from stdin", transport: envelope.HTTP, body: big, wantNote: notShown,
			wantLine: `curl -sS -i -X POST --data-binary '@BODY' 'http://h/mcp'`,
			wantRun:  "arg:-sS\narg:-i\narg:-X\narg:POST\narg:--data-binary\narg:@BODY\narg:http://h/mcp\n" + big},
		{name: "big body, the file is not what was sent", transport: envelope.HTTP, body: big, file: strings.Replace(big, "7", "{{id}}", 1), wantNote: notShown,
			wantLine: `curl -sS -i -X POST --data-binary '@BODY' 'http://h/mcp'`,
			wantRun:  "arg:-sS\narg:-i\narg:-X\narg:POST\narg:--data-binary\narg:@BODY\narg:http://h/mcp\n" + big},
		{name: "stdio small (twin)", transport: envelope.Stdio, version: envelope.V20260728, body: small,
			wantLine: `printf '` + small + `\n' | 'cat'`, wantRun: small + "\n"},
		{name: "stdio big, the file is the line", transport: envelope.Stdio, version: envelope.V20260728, body: big, file: big + "\n", wantNote: fromFile,
			wantLine: `'cat' < 'FILE'`, wantRun: big + "\n"},
		{name: "stdio 2025 big, the file is it", transport: envelope.Stdio, version: envelope.V20251125, body: big, file: big, wantNote: fromFile,
			wantLine: `{ printf '` + hsEsc + `'; cat 'FILE'; printf '\n'; } | 'cat'`, wantRun: hs + big + "\n"},
		{name: "stdio 2025 sent before initialize (a fresh stage)", transport: envelope.Stdio, version: envelope.V20251125, body: small, stage: reproFresh,
			wantLine: `printf '` + small + `\n' | 'cat'`, wantRun: small + "\n"},
		{name: "stdio 2025 sent before initialized", transport: envelope.Stdio, version: envelope.V20251125, body: small, stage: reproInitializing,
			wantLine: `printf '` + strings.TrimSuffix(hsEsc, `{"jsonrpc":"2.0","method":"notifications/initialized"}\n`) + small + `\n' | 'cat'`,
			wantRun:  strings.TrimSuffix(hs, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n") + small + "\n"},
		{name: "stdio 2025 big from stdin", transport: envelope.Stdio, version: envelope.V20251125, body: big, wantNote: notShown,
			wantLine: `{ printf '` + hsEsc + `'; cat 'BODY'; printf '\n'; } | 'cat'`, wantRun: hs + big + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// BODY is the file the note asks the user for.
			if err := os.WriteFile(filepath.Join(dir, "BODY"), []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			var src reproSource
			if tc.file != "" {
				src = reproSource{file: filepath.Join(dir, "m.json"), raw: []byte(tc.file)}
				if err := os.WriteFile(src.file, src.raw, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			h := http.Header{}
			if tc.sid != "" {
				h.Set("Mcp-Session-Id", tc.sid)
			}
			ex := &envelope.Exchange{Transport: tc.transport, Request: envelope.Request{Header: h, Body: []byte(tc.body)}}
			note, line := reproduce("http://h/mcp", orText(tc.version, envelope.V20251125), ex, nil, []string{"cat"}, src, tc.stage)
			want := strings.ReplaceAll(tc.wantLine, "FILE", src.file)
			if diff := cmp.Diff(tc.wantNote+"\n"+want, note+"\n"+line); diff != "" {
				t.Errorf("note and line (-want +got):\n%s", diff)
			}
			for i := 0; i < len(line); i++ {
				if line[i] < 0x20 || line[i] >= 0x7f {
					t.Fatalf("byte %#x at %d of the line is not printable ASCII", line[i], i)
				}
			}
			for _, sh := range []string{"dash", "sh", "bash"} {
				if _, err := exec.LookPath(sh); err != nil {
					continue
				}
				cmd := exec.Command(sh, "-c", fakeCurl+line)
				cmd.Dir = dir
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				got, err := cmd.Output()
				if diff := cmp.Diff(strings.ReplaceAll(tc.wantRun, "FILE", src.file), string(got)); err != nil || diff != "" {
					t.Errorf("%s runs it: %v %s; what it sends (-want +got):\n%s", sh, err, stderr.String(), diff)
				}
			}
		})
	}
}

// reproduceOf is the note and line under "reproduce" in send's output.
func reproduceOf(out string) (note, line string) {
	_, rest, ok := strings.Cut(out, "\nreproduce")
	if !ok {
		return "", ""
	}
	head, rest, _ := strings.Cut(rest, ":\n  ")
	line, _, _ = strings.Cut(rest, "\n")
	return strings.TrimSuffix(strings.TrimPrefix(head, " ("), ")"), line
}

// TestSendReproduceSessionID: a session id the server chose reaches the
// reproduce line escaped, as every other line of send's shows it (review
// rev55 F1: U+202E and U+009B went raw); the twin, a visible-ASCII id,
// is written as is.
func TestSendReproduceSessionID(t *testing.T) {
	for _, tc := range []struct {
		sid, wantArg string
		wantCode     exitCode // (such an id fails HTTP1004, T-SESS-1)
	}{
		{"abc123", `-H 'Mcp-Session-Id: abc123'`, exitOK},
		{"s\u202eid-\u009b31m", `-H "$(printf 'Mcp-Session-Id: s\342\200\256id-\302\23331m')"`, exitFindings},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m := readRPC(r)
			w.Header().Set("Mcp-Session-Id", tc.sid)
			w.Header().Set("Content-Type", "application/json")
			switch {
			case m.ID == nil:
				w.WriteHeader(http.StatusAccepted)
			case m.Method == "initialize":
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"t","version":"1"}}}`)
			default:
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{}}`)
			}
		}))
		code, out, errOut := runMain(t, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, "send", "--timeout", "2s", "--protocol", "2025-11-25", srv.URL+"/mcp", "-")
		srv.Close()
		_, line := reproduceOf(out)
		if code != tc.wantCode || !strings.Contains(line, " "+tc.wantArg+" --data-binary @- ") {
			t.Errorf("%q: exit %d; want a reproduce line with %s:\n%s\nstderr:\n%s", tc.sid, code, tc.wantArg, out, errOut)
		}
		if strings.ContainsAny(out, "\u202e\u009b") {
			t.Errorf("%q: a format or C1 character reached stdout raw:\n%q", tc.sid, out)
		}
	}
}

// TestSendReproduceBigMessage: a message over reproBodyMax is not
// written again on the reproduce line (review rev55 F4: a 20 MiB message
// made a 20 MB line); it is read from the message file, or from stdin
// not shown, its size said. The twin: a small message is written inline.
func TestSendReproduceBigMessage(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"x":"` + strings.Repeat("x", 1<<20) + `"}}}` + "\n"
	small := `{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n"
	file, smallFile := writeFile(t, "big.json", big), writeFile(t, "small.json", small)
	for _, tc := range []struct {
		name, stdin, file  string
		wantNote, wantLine string // the line's start and end
	}{
		{"file", "", file, "the body, 1048644 bytes, is over the 4096 written here: it is read from the message file",
			"head -c 1048644 " + shellQuote(file) + " | curl "},
		{"stdin", big, "-", "the body, 1048644 bytes, is over the 4096 written here and is not shown: BODY stands for a file holding it",
			"curl "},
		{"small (twin)", "", smallFile, "", "printf '" + strings.TrimSuffix(small, "\n") + "' | curl "},
	} {
		code, out, errOut := runMain(t, tc.stdin, "send", "--demo", tc.file)
		note, line := reproduceOf(out)
		if code != exitOK || note != tc.wantNote || !strings.HasPrefix(line, tc.wantLine) || len(line) > 1000 {
			t.Errorf("%s: exit %d; reproduce (%s) %d bytes: %.300s\nwant (%s) %s…; stderr:\n%s", tc.name, code, note, len(line), line, tc.wantNote, tc.wantLine, errOut)
		}
	}
}
