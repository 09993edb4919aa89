//go:build unix

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// The hostile servers. Each answers a 2025-11-25 handshake (initialize,
// notifications) where it needs to get past negotiation, then misbehaves.
// Every loop in them is bounded in count and time.

// floodBytes is what the flooding servers send in reply to one request.
const floodBytes = 100 << 20

// fakeLife bounds a stdio fake's life even if nobody ends it.
const fakeLife = 2 * time.Minute

// handshake answers the messages of negotiation. ok is false for any
// other message; reply is nil for a message that gets no reply.
func handshake(body []byte) (reply []byte, ok bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method == "" {
		return nil, false
	}
	switch {
	case m.Method == "initialize" && m.ID != nil:
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"wymcp-e2e-fake","version":"0"}}}`, m.ID), true
	case m.Method == "server/discover" && m.ID != nil:
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID), true
	case m.Method == "notifications/initialized" && m.ID == nil:
		return nil, true
	}
	return nil, false
}

// runFake runs the stdio fake called name on this process's stdin and
// stdout, and returns its exit code.
func runFake(name string) int {
	if f := os.Getenv(pidFileEnv); f != "" {
		if pf, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
			fmt.Fprintln(pf, os.Getpid())
			pf.Close()
		}
	}
	time.AfterFunc(fakeLife, func() {
		fmt.Fprintln(os.Stderr, "fake: lived too long")
		os.Exit(9)
	})
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriter(os.Stdout)
	// next reads one line; false at the end of stdin (the checker is done).
	next := func() ([]byte, bool) {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return nil, false
		}
		return bytes.TrimRight(line, "\r\n"), true
	}
	switch name {
	case "exit-on-first":
		// Exits as soon as anything arrives, before any handshake.
		if _, ok := next(); ok {
			fmt.Fprintln(os.Stderr, "fake: exit-on-first: got a message, exiting")
			return 7
		}
		return 0
	case "die-after-handshake":
		for {
			line, ok := next()
			if !ok {
				return 0
			}
			if reply, hs := handshake(line); hs {
				if reply != nil {
					out.Write(append(reply, '\n'))
					out.Flush()
				}
				continue
			}
			fmt.Fprintln(os.Stderr, "fake: die-after-handshake: a message after the handshake, exiting")
			return 7
		}
	case "silent":
		// Reads everything, answers nothing, exits at the end of stdin.
		io.Copy(io.Discard, in)
		return 0
	case "flood":
		// After the handshake, answers every request with a 100 MB line.
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		for {
			line, ok := next()
			if !ok {
				return 0
			}
			if reply, hs := handshake(line); hs {
				if reply != nil {
					out.Write(append(reply, '\n'))
					out.Flush()
				}
				continue
			}
			out.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"pad":"`)
			for n := 0; n < floodBytes; n += len(chunk) {
				if _, err := out.Write(chunk); err != nil {
					return 0 // the checker closed our stdout
				}
			}
			out.WriteString("\"}}\n")
			if out.Flush() != nil {
				return 0
			}
		}
	}
	fmt.Fprintf(os.Stderr, "fake: no fake server %q\n", name)
	return 2
}
