package refserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ServeStdio serves the stdio transport: one JSON-RPC message per line in,
// one per line out (T-STDIO-1). It returns nil when in reaches EOF, the
// context's error when ctx ends (checked between messages: a blocked read
// of in is not interrupted), ErrCrash under the crash fault, and a wrapped
// error when in or out fails.
//
// The stream starts in 2026-07-28; an initialize switches it to the
// negotiated 2025-xx version for messages without a _meta protocol
// version. Blank lines and JSON-RPC responses are ignored: the server sends
// no requests, so no response can be for it.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	br := bufio.NewReader(in)
	legacy := "" // version negotiated by initialize; "" until then
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, tooLong, readErr := readLine(br)
		var rep reply
		switch {
		case tooLong:
			rep = reply{body: s.errorBody(nil, invalidRequest("message exceeds "+strconv.Itoa(maxMessage)+" bytes"))}
		case len(bytes.TrimSpace(line)) > 0:
			rep = s.serveLine(line, &legacy)
		}
		if rep.crash {
			return ErrCrash
		}
		if rep.listen != nil {
			// The subscription stays open on the shared stream: the
			// acknowledgment now, list changes (there are none) later.
			rep.body = rep.listen.ack
		}
		if !rep.hang { // hang: the request is never answered; reading goes on
			for _, msg := range s.inOrder(rep) {
				if msg == nil {
					continue
				}
				if _, err := out.Write(append(msg, '\n')); err != nil {
					return fmt.Errorf("writing stdout: %w", err)
				}
			}
		}
		if errors.Is(readErr, io.EOF) {
			return nil
		}
		if readErr != nil {
			return fmt.Errorf("reading stdin: %w", readErr)
		}
	}
}

func (s *Server) serveLine(line []byte, legacy *string) reply {
	m, perr := s.parse(line)
	switch {
	case perr != nil:
		return reply{body: s.errorBody(m, perr)}
	case m.response:
		return reply{}
	case m.method == "initialize" && *legacy != "":
		return s.initializeAgain(m)
	case m.method == "ping" && *legacy == "" && !member(m.params, "_meta").Exists():
		// A ping may come before initialize (the lifecycle lets clients
		// send pings then); it carries no _meta, so it is not 2026-07-28.
		return s.ok(m, map[string]any{})
	case m.method == "initialize":
		rep, version := s.initialize(m)
		if version != "" {
			*legacy = version
		}
		return rep
	case *legacy == "" || member(member(m.params, "_meta"), keyProtocolVersion).Exists():
		return s.serveModern(m, nil)
	}
	return s.serveLegacy(m, *legacy)
}

// readLine reads one line without its "\n" (and a "\r" before it). A line
// longer than maxMessage is read to its end and dropped: tooLong is set
// and line is nil. err is io.EOF after the last line.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxMessage+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if tooLong || len(line) > maxMessage {
			line, tooLong = nil, true
		}
		return line, tooLong, err
	}
}
