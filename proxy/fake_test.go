package proxy

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// fakeEnv names the fake server the test binary runs instead of the
// tests: the stdio tests fork-exec the test binary as their server.
const fakeEnv = "WYMCP_PROXY_FAKE"

// The fakes log what they read and wrote, byte for byte, to the files
// these name, so that the tests can compare both ends of the relay.
const (
	fakeInLog  = "WYMCP_PROXY_FAKE_IN"
	fakeOutLog = "WYMCP_PROXY_FAKE_OUT"
	// fakeEOF is what the fake "eof" does once its stdin ended.
	fakeEOF = "WYMCP_PROXY_FAKE_EOF"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(fakeEnv); name != "" {
		os.Exit(runFake(name))
	}
	// Under -race a test binary sleeps a second at exit unless told not
	// to: a fake server would linger after its stdin closed (PRO1011).
	os.Setenv("GORACE", os.Getenv("GORACE")+" atexit_sleep_ms=0")
	os.Exit(m.Run())
}

func fakeArgv(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe}
}

func runFake(name string) int {
	in := io.Reader(os.Stdin)
	out := io.Writer(os.Stdout)
	if f := os.Getenv(fakeInLog); f != "" {
		lf, err := os.Create(f)
		if err == nil {
			defer lf.Close()
			in = io.TeeReader(in, lf)
		}
	}
	if f := os.Getenv(fakeOutLog); f != "" {
		lf, err := os.Create(f)
		if err == nil {
			defer lf.Close()
			out = io.MultiWriter(out, lf)
		}
	}
	switch name {
	case "echo":
		return echo(in, out)
	case "parse-errors": // answers a line that is no JSON with -32700 and a null id, requests with a result
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			switch id := gjson.GetBytes(sc.Bytes(), "id"); {
			case !gjson.ValidBytes(sc.Bytes()):
				fmt.Fprintln(out, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
			case id.Exists():
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id.Raw)
			}
		}
		return 0
	case "listen-ack": // acknowledges subscriptions/listen at once and never answers it, leaves "never" unanswered, answers any other request
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			id := gjson.GetBytes(sc.Bytes(), "id")
			switch method := gjson.GetBytes(sc.Bytes(), "method").Str; {
			case !id.Exists() || method == "never":
			case method == "subscriptions/listen":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"notifications":{}}}`+"\n", id.Raw)
			default:
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id.Raw)
			}
		}
		return 0
	case "pretty": // answers each request pretty-printed over several lines
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			if id := gjson.GetBytes(sc.Bytes(), "id"); id.Exists() {
				fmt.Fprintf(out, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": %s,\n  \"result\": {}\n}\n", id.Raw)
			}
		}
		return 0
	case "junk": // answers each request after a line that is no JSON (a debug print)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			if id := gjson.GetBytes(sc.Bytes(), "id"); id.Exists() {
				fmt.Fprintf(out, "this is not json\n"+`{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id.Raw)
			}
		}
		return 0
	case "banner", "banner-stderr": // a startup banner (on stdout or stderr), then each request answered and logged after
		log := out
		if name == "banner-stderr" {
			log = os.Stderr
		}
		fmt.Fprintln(log, "Server listening on stdio")
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			if id := gjson.GetBytes(sc.Bytes(), "id"); id.Exists() {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id.Raw)
				fmt.Fprintf(log, "log: answered %s\n", id.Raw)
			}
		}
		return 0
	case "burst-exit": // reads one line, answers it after 100 KB of notifications, exits at once
		line, _ := bufio.NewReader(in).ReadBytes('\n')
		note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("b", 20<<10) + `"}}` + "\n"
		for range 5 {
			io.WriteString(out, note)
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", gjson.GetBytes(line, "id").Raw)
		return 0
	case "orphan": // leaves a child that holds stdout and stderr and writes for 10 s, exits at once
		exe, _ := os.Executable()
		c := exec.Command(exe)
		c.Env = append(os.Environ(), fakeEnv+"=ticker")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		c.Start()
		return 0
	case "ticker": // writes a line to stderr every 100 ms for 10 s
		for range 100 {
			fmt.Fprintln(os.Stderr, "tick")
			time.Sleep(100 * time.Millisecond)
		}
		return 0
	case "eof": // echo until stdin ends, then plays the lines of $WYMCP_PROXY_FAKE_EOF: "sleep:N" waits N ms, any other is written
		echo(in, out)
		for _, step := range strings.Split(os.Getenv(fakeEOF), "\n") {
			if ms, ok := strings.CutPrefix(step, "sleep:"); ok {
				n, _ := strconv.Atoi(ms)
				time.Sleep(time.Duration(n) * time.Millisecond)
			} else if step != "" {
				fmt.Fprintln(out, step)
			}
		}
		return 0
	case "exit7": // reads one line, says goodbye on stderr, exits 7
		bufio.NewReader(in).ReadString('\n')
		os.Stderr.WriteString("fatal: bye\n")
		return 7
	case "signals": // exits 3 on SIGTERM, 4 on SIGINT; never on its own
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
		fmt.Fprintln(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"ready"}}`)
		switch <-ch {
		case syscall.SIGTERM:
			return 3
		default:
			return 4
		}
	case "deaf": // ignores SIGINT; exits at the end of its stdin
		signal.Ignore(syscall.SIGINT)
		fmt.Fprintln(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"ready"}}`)
		io.Copy(io.Discard, in)
		return 0
	case "deaf-eof": // ignores SIGINT; still running an hour after its stdin ends
		signal.Ignore(syscall.SIGINT)
		fmt.Fprintln(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"ready"}}`)
		io.Copy(io.Discard, in)
		time.Sleep(time.Hour)
		return 0
	case "stubborn": // ignores stdin's end and SIGTERM
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprintln(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"ready"}}`)
		io.Copy(io.Discard, in)
		time.Sleep(time.Hour)
		return 0
	case "flood": // writes lines without end, reads nothing
		line := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("f", 500) + `"}}` + "\n")
		for {
			if _, err := out.Write(line); err != nil {
				return 0
			}
		}
	case "spill": // writes 2,000 notifications (1.2 MB, past any pipe's buffer), reads nothing, exits
		line := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("s", 500) + `"}}` + "\n")
		for range 2000 {
			if _, err := out.Write(line); err != nil {
				return 1
			}
		}
		return 0
	case "endless-line": // one line that never ends
		chunk := []byte(strings.Repeat("z", 32<<10))
		for {
			if _, err := out.Write(chunk); err != nil {
				return 0
			}
		}
	}
	fmt.Fprintf(os.Stderr, "no fake %q\n", name)
	return 100
}

// echo answers each request with an empty result (initialize with a
// version), ignores notifications and responses, answers a notification
// named "notifications/answer-me" wrongly with a null-id result, sends
// a sampling request of its own before answering "tools/call", and logs
// a line to stderr for each message.
func echo(in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		fmt.Fprintf(os.Stderr, "got %d bytes\n", len(line))
		v := gjson.ParseBytes(line)
		id, method := v.Get("id"), v.Get("method")
		switch {
		case method.Str == "notifications/answer-me":
			fmt.Fprintln(out, `{"jsonrpc":"2.0","id":null,"result":{}}`)
		case !id.Exists() || !method.Exists():
		case method.Str == "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"echo","version":"1"}}}`+"\n", id.Raw)
		case method.Str == "tools/call":
			fmt.Fprintln(out, `{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{}}`)
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`+"\n", id.Raw)
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id.Raw)
		}
	}
	return 0
}
