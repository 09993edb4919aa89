package transport

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// fakeEnv names the fake server the test binary should be instead of
// running tests: stdio tests fork-exec the test binary itself as their
// server, so the fakes need no build step and no other language.
const fakeEnv = "WYMCP_FAKE_SERVER"

func TestMain(m *testing.M) {
	if name := os.Getenv(fakeEnv); name != "" {
		run := fakeServer(name)
		if run == nil {
			fmt.Fprintf(os.Stderr, "no fake server %q\n", name)
			os.Exit(100)
		}
		os.Exit(run()) // a server's exit status is part of its behaviour
	}
	m.Run()
}

// slowStart is how long the slow-start fakes read nothing after they
// start: longer than the quick Timeout.
const slowStart = 700 * time.Millisecond

// fakeServer returns the named behaviour; each returns its exit status.
func fakeServer(name string) func() int {
	switch name {
	case "echo":
		return func() int { return echo(bufio.NewScanner(os.Stdin)) }
	case "banner":
		return func() int {
			os.Stdout.WriteString("MyServer v1.0 starting...\r\n")
			return echo(bufio.NewScanner(os.Stdin))
		}
	case "pinger": // asks the client a ping and a sampling request before each answer, and answers with what came back
		return func() int {
			in := bufio.NewScanner(os.Stdin)
			for in.Scan() {
				id := gjson.GetBytes(in.Bytes(), "id")
				if !id.Exists() || !gjson.GetBytes(in.Bytes(), "method").Exists() {
					continue
				}
				id = gjson.Parse(id.Raw) // (the scanner's buffer is reused)
				os.Stdout.WriteString(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}` + "\n")
				if !in.Scan() {
					return 0
				}
				pong := in.Text()
				os.Stdout.WriteString(`{"jsonrpc":"2.0","id":"srv-2","method":"sampling/createMessage","params":{}}` + "\n")
				if !in.Scan() {
					return 0
				}
				fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":{"pong":%q,"refusal":%q}}`+"\n", id.Raw, pong, in.Text())
			}
			return 0
		}
	case "hang": // reads, never answers, leaves at EOF
		return func() int {
			in := bufio.NewScanner(os.Stdin)
			for in.Scan() {
			}
			return 0
		}
	case "slow-start": // reads nothing for a while, as npx or a container does, then serves
		return func() int {
			time.Sleep(slowStart)
			return echo(bufio.NewScanner(os.Stdin))
		}
	case "slow-start-loud": // as slow-start, then answers notifications too (wrongly)
		return func() int {
			time.Sleep(slowStart)
			in := bufio.NewScanner(os.Stdin)
			for in.Scan() {
				if !gjson.GetBytes(in.Bytes(), "id").Exists() {
					os.Stdout.WriteString(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no id"}}` + "\n")
				}
			}
			return 0
		}
	case "dies-starting": // exits during its start, having read nothing
		return func() int {
			time.Sleep(300 * time.Millisecond)
			os.Stderr.WriteString("fatal: no config\n")
			return 2
		}
	case "deaf": // never reads stdin at all
		return sleepForever
	case "closes-stdin": // closes stdin unread once it started, lives on
		return func() int {
			time.Sleep(300 * time.Millisecond)
			os.Stdin.Close()
			return sleepForever()
		}
	case "flood":
		return flood(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"spam"}}` + "\n")
	case "flood-noline":
		return flood(strings.Repeat("x", 32<<10))
	case "crash": // dies on the first message
		return func() int {
			bufio.NewScanner(os.Stdin).Scan()
			os.Stderr.WriteString("starting\nfatal: boom\n")
			return 2
		}
	case "stubborn": // ignores stdin close and SIGTERM alike
		return func() int {
			signal.Ignore(syscall.SIGTERM)
			answerOne()
			return sleepForever()
		}
	case "goodbye": // echo, then a goodbye on stdout once stdin closes, the last one without its newline
		return func() int {
			echo(bufio.NewScanner(os.Stdin))
			time.Sleep(50 * time.Millisecond)
			os.Stdout.WriteString("Goodbye!\n")
			os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}`)
			return 0
		}
	case "flood-at-eof": // echo, then floods stdout once stdin closes
		return func() int {
			echo(bufio.NewScanner(os.Stdin))
			for {
				if _, err := os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"spam"}}` + "\n"); err != nil {
					return 1
				}
			}
		}
	case "no-eof": // ignores stdin close, but not SIGTERM
		return func() int {
			answerOne()
			return sleepForever()
		}
	case "leaves-child": // starts a child in its process group, answers with its pid, exits
		return leaveChild("child", false)
	case "leaves-stubborn-child": // as leaves-child, with a child that ignores SIGTERM
		return leaveChild("child-stubborn", false)
	case "child-exited": // as leaves-child, with a child that is gone before it answers
		return leaveChild("child-quick", true)
	case "child", "child-stubborn": // says it is ready, then sleeps
		return func() int {
			if name == "child-stubborn" {
				signal.Ignore(syscall.SIGTERM)
			}
			os.Stdout.WriteString("ready\n")
			return sleepForever()
		}
	case "half-line", "whole-line": // answers the first request, without its newline (half-line), then reads on and answers nothing
		return func() int {
			in := bufio.NewScanner(os.Stdin)
			if !in.Scan() {
				return 0
			}
			reply := `{"jsonrpc":"2.0","id":1,"result":{}}`
			if name == "whole-line" {
				reply += "\n"
			}
			os.Stdout.WriteString(reply)
			for in.Scan() {
			}
			return 0
		}
	case "child-quick":
		return func() int { return 0 }
	case "mute": // closes stdout, lives on until stdin closes
		return func() int {
			os.Stderr.WriteString("closing stdout\n")
			os.Stdout.Close()
			in := bufio.NewScanner(os.Stdin)
			for in.Scan() {
			}
			return 0
		}
	case "null-once", "null-twice": // echo, and a line that is no JSON gets a null-id error (twice)
		return func() int {
			in := bufio.NewScanner(os.Stdin)
			for in.Scan() {
				msg := in.Bytes()
				if gjson.ValidBytes(msg) {
					fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", gjson.GetBytes(msg, "id").Raw)
					continue
				}
				parse := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n"
				os.Stdout.WriteString(parse)
				if name == "null-twice" {
					time.Sleep(30 * time.Millisecond) // after the checker read the first
					os.Stdout.WriteString(parse)
				}
			}
			return 0
		}
	case "chatty": // floods stderr, then serves
		return func() int {
			for i := range 5000 {
				fmt.Fprintf(os.Stderr, "log line %d of no interest\n", i)
			}
			os.Stderr.WriteString("END\n")
			return echo(bufio.NewScanner(os.Stdin))
		}
	}
	return nil
}

// echo answers every request with its method; some methods ask for
// extra behaviour, so one fake covers the orderly cases.
func echo(in *bufio.Scanner) int {
	in.Buffer(make([]byte, 64<<10), 16<<20)
	for in.Scan() {
		msg := in.Bytes()
		id := gjson.GetBytes(msg, "id")
		method := gjson.GetBytes(msg, "method").String()
		if !id.Exists() {
			continue // a notification gets no reply
		}
		reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"method":%q}}`, id.Raw, method)
		switch method {
		case "slow-null": // refuses the id after a while, side by side with what comes next
			go func() {
				time.Sleep(300 * time.Millisecond)
				os.Stdout.WriteString(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad id"}}` + "\n")
			}()
			continue
		case "drop": // never answers, as a server that drops a request it cannot read
			continue
		case "null-now": // refuses at once, with id null
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}` + "\n")
			continue
		case "slowish": // answers after a moment
			time.Sleep(150 * time.Millisecond)
		case "slow": // answers after a while, as a server slow to start does
			time.Sleep(300 * time.Millisecond)
		case "tools/call":
			os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}` + "\n")
		case "note-batch": // a batch of its own notifications first (2025-03-26 has batches)
			os.Stdout.WriteString(`[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}},{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":2}}]` + "\n")
		case "escape":
			os.Stdout.WriteString("\x1b[2J\x1b]0;owned\x07\x00\xff\n")
		case "crlf":
			os.Stdout.WriteString(reply + "\r\n")
			continue
		case "blank-after": // the reply, then a blank line, in two writes
			os.Stdout.WriteString(reply + "\n")
			os.Stdout.WriteString("\n")
			continue
		case "pretty": // the reply over three lines, with CRLF
			os.Stdout.WriteString("{\"jsonrpc\":\"2.0\",\r\n  \"id\":" + id.Raw + ",\r\n  \"result\":{}}\r\n")
			continue
		case "stray-first": // a response to no request it read, then the reply
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":"never-sent","result":{}}` + "\n")
		case "wrong-id": // answers with the request's id plus 1000
			fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%d,"result":{"method":"wrong-id"}}`+"\n", id.Int()+1000)
			continue
		case "stale": // answers with id 1, whatever the request's
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"method":"stale"}}` + "\n")
			continue
		case "twice-differs": // answers, then again a moment later, otherwise
			os.Stdout.WriteString(reply + "\n")
			time.Sleep(50 * time.Millisecond)
			os.Stdout.WriteString(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"again":true}}`, id.Raw) + "\n")
			continue
		case "twice": // answers, then answers again a moment later
			os.Stdout.WriteString(reply + "\n")
			time.Sleep(50 * time.Millisecond)
			os.Stdout.WriteString(reply + "\n")
			continue
		case "log-later":
			os.Stdout.WriteString(reply + "\n")
			time.Sleep(50 * time.Millisecond)
			os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"late"}}` + "\n")
			continue
		case "last-words": // the reply without its newline, then leave
			os.Stdout.WriteString(reply)
			return 0
		}
		os.Stdout.WriteString(reply + "\n")
	}
	return 0
}

// answerOne replies to the first request, so a test knows the server is
// up (and has set its signal handling) before it goes on.
// leaveChild reads one request, starts the test binary as the fake child
// in the background (in the server's own process group, its stdio not
// the server's), and answers with the child's pid, once the child is
// ready (its signals set) or, with reaped, gone and reaped; then exits.
func leaveChild(child string, reaped bool) func() int {
	return func() int {
		in := bufio.NewScanner(os.Stdin)
		if !in.Scan() {
			return 0
		}
		id := gjson.GetBytes(in.Bytes(), "id").Raw
		exe, err := os.Executable()
		if err != nil {
			return 3
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), fakeEnv+"="+child)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return 3
		}
		if err := cmd.Start(); err != nil {
			return 3
		}
		if reaped {
			if err := cmd.Wait(); err != nil {
				return 3
			}
		} else if !bufio.NewScanner(out).Scan() {
			return 3
		}
		fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":{"pid":%d}}`+"\n", id, cmd.Process.Pid)
		return 0
	}
}

func answerOne() {
	in := bufio.NewScanner(os.Stdin)
	if in.Scan() {
		id := gjson.GetBytes(in.Bytes(), "id").Raw
		fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id)
	}
}

// flood writes chunk without end once the first message arrives, and
// leaves when stdin closes, as a well-behaved (if noisy) server would.
func flood(chunk string) func() int {
	return func() int {
		in := bufio.NewScanner(os.Stdin)
		in.Scan()
		go func() {
			for in.Scan() {
			}
			os.Exit(0)
		}()
		for {
			if _, err := os.Stdout.WriteString(chunk); err != nil {
				return 1
			}
		}
	}
}

func sleepForever() int {
	for {
		time.Sleep(time.Hour)
	}
}
