package proxy

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// scriptEnv names a scripted fake server the test binary runs, before
// TestMain, when it is set: the tests of timing (silence, progress, a
// server waiting on its client) need a server that answers each method
// its own way, at its own pace.
const scriptEnv = "WYMCP_STDIO_SCRIPT"

func init() {
	if s, ok := os.LookupEnv(scriptEnv); ok {
		os.Exit(runScript(s, os.Stdin, os.Stdout))
	}
}

// runScript serves a script: "method=step step;method=step", each
// request of a method played in its own goroutine, step by step:
// "ok" answers with an empty result, "err" with an error, "stray" is a
// response with id 99, which no test sends, "badid" a reply-shaped line
// that is no JSON (its id cannot be read), "progress"
// sends progress for the request's token ("progress:T" for the token T,
// raw JSON; "nullprogress" with a null one, whatever the request
// offered), "result:R" answers with the result R (raw JSON, no
// spaces), "junk:N" writes a line of N
// bytes that is no JSON, "sample" asks the client for a sampling and
// waits for its answer, "cancelsample" asks for one and cancels it at
// once, "srvping" pings the client (ids "p1", "p2", ...) and waits for
// its answer, "big:N" answers with a result of about N bytes,
// "afterping" waits until a ping is answered, "sleep:N" waits N ms;
// nothing else is sent. A
// method the script does not name is answered "ok".
func runScript(script string, in io.Reader, out io.Writer) int {
	steps := map[string][]string{}
	for _, m := range strings.Split(script, ";") {
		if name, s, ok := strings.Cut(m, "="); ok {
			steps[name] = strings.Fields(s)
		}
	}
	// The tests time from their first line: they start once the server
	// reads (a test binary built with -race takes its time to start).
	fmt.Fprintln(os.Stderr, "script: ready")
	var mu sync.Mutex
	write := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(out, line+"\n")
	}
	answers := map[string]chan struct{}{}
	// pinged closes once a ping is answered: a script that waits for it
	// runs in order after that answer, however slow the machine.
	pinged := make(chan struct{})
	var pingOnce sync.Once
	var plays sync.WaitGroup
	asked, pings := 0, 0
	// ask writes a request of the server's with the id prefix+N and
	// returns the channel its answer closes.
	ask := func(prefix string, n *int, line string) (string, chan struct{}) {
		mu.Lock()
		*n++
		sid := fmt.Sprintf("%s%d", prefix, *n)
		c := make(chan struct{})
		answers[sid] = c
		mu.Unlock()
		write(fmt.Sprintf(line, sid))
		return sid, c
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		v := gjson.ParseBytes(sc.Bytes())
		id, method := v.Get("id"), v.Get("method").Str
		switch {
		case !id.Exists():
			continue
		case method == "":
			mu.Lock()
			if c, ok := answers[id.Str]; ok {
				close(c)
				delete(answers, id.Str)
			}
			mu.Unlock()
			continue
		}
		play, ok := steps[method]
		if !ok {
			play = []string{"ok"}
		}
		token := v.Get("params._meta.progressToken").Raw
		plays.Add(1)
		go func() {
			defer plays.Done()
			for _, step := range play {
				name, arg, _ := strings.Cut(step, ":")
				n, _ := strconv.Atoi(arg)
				switch name {
				case "ok":
					write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id.Raw))
					if method == "ping" {
						pingOnce.Do(func() { close(pinged) })
					}
				case "afterping":
					select {
					case <-pinged:
					case <-time.After(10 * time.Second):
						return
					}
				case "stray":
					write(`{"jsonrpc":"2.0","id":99,"result":{}}`)
				case "badid":
					// A reply cut short: no JSON, and its id unreadable.
					write(`{"jsonrpc":"2.0","id":null,"result":{"x":1}`)
				case "err":
					write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"again"}}`, id.Raw))
				case "progress":
					tok := token
					if arg != "" {
						tok = arg
					}
					write(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1}}`, tok))
				case "result":
					write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id.Raw, arg))
				case "nullprogress":
					write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":null,"progress":1}}`)
				case "junk":
					write(strings.Repeat("x", n))
				case "sample", "srvping":
					line, prefix, n := `{"jsonrpc":"2.0","id":%q,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`, "s", &asked
					if name == "srvping" {
						line, prefix, n = `{"jsonrpc":"2.0","id":%q,"method":"ping"}`, "p", &pings
					}
					_, c := ask(prefix, n, line)
					select {
					case <-c:
					case <-time.After(10 * time.Second):
						return
					}
				case "cancelsample":
					sid, _ := ask("s", &asked, `{"jsonrpc":"2.0","id":%q,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`)
					write(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%q,"reason":"no longer needed"}}`, sid))
				case "big":
					write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"pad":%q}}`, id.Raw, strings.Repeat("x", n)))
				case "sleep":
					time.Sleep(time.Duration(n) * time.Millisecond)
				}
			}
		}()
	}
	// What is still to come is written before the server goes, within
	// a bound: a test that closes its end early does not wait long.
	done := make(chan struct{})
	go func() { plays.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	return 0
}
