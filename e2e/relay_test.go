//go:build unix

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Real clients through the relays: the TypeScript SDK's client
// (testdata/client.cjs, from the pinned npm packages) and the official
// Go SDK's client (testdata/goclient, a module of its own), each through
// `proxy` (Streamable HTTP) and `wrap` (stdio), against server-everything
// and against the reference server with a fault a real client provokes.
// Each run asserts that the bytes arrive unchanged — taps on both sides
// of the relay record what passed, and the two records must agree — and
// that the fault is reported in the relay's output.

// relayBound bounds one client run, from the outside.
const relayBound = 90 * time.Second

// sdkNodeModules returns the node_modules holding the pinned
// @modelcontextprotocol/sdk, next to server-everything (.ci/run installs
// both from testdata/package-lock.json), or skips — except in CI.
func sdkNodeModules(t *testing.T) string {
	t.Helper()
	dir := everythingDir(t) // skips (or fails in CI) when the packages are absent
	nm := filepath.Dir(filepath.Dir(dir))
	if _, err := os.Stat(filepath.Join(nm, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		msg := fmt.Sprintf("@modelcontextprotocol/sdk is not installed in %s (npm ci of e2e/testdata's package-lock.json installs it): %v", nm, err)
		if inCI() {
			t.Fatal("CI=true but " + msg)
		}
		t.Skip(msg)
	}
	return nm
}

var goClient struct {
	once sync.Once
	bin  string
	err  error
}

// goClientBin builds testdata/goclient (the official Go SDK's client, a
// module of its own) once, or skips when it cannot be built here (no Go
// module proxy) — except in CI.
func goClientBin(t *testing.T) string {
	t.Helper()
	goClient.once.Do(func() {
		dir, err := os.MkdirTemp("", "wymcp-goclient-")
		if err != nil {
			goClient.err = err
			return
		}
		goClient.bin = filepath.Join(dir, "goclient")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", goClient.bin, ".")
		cmd.Dir = filepath.Join("testdata", "goclient")
		if out, err := cmd.CombinedOutput(); err != nil {
			goClient.err = fmt.Errorf("go build in testdata/goclient: %v\n%s", err, out)
		}
	})
	if goClient.err != nil {
		if inCI() {
			t.Fatalf("CI=true but the Go SDK client did not build: %v", goClient.err)
		}
		t.Skipf("the Go SDK client did not build (it needs github.com/modelcontextprotocol/go-sdk from the module proxy): %v", goClient.err)
	}
	return goClient.bin
}

// A client is one of the two real clients, run with a transport.
type client struct {
	name string
	// http and stdio build the command line: against an endpoint, or
	// starting a server command itself.
	http  func(t *testing.T, url, tool, args string) *exec.Cmd
	stdio func(t *testing.T, tool, args string, server []string) *exec.Cmd
}

func tsClient() client {
	script, _ := filepath.Abs(filepath.Join("testdata", "client.cjs"))
	env := func(t *testing.T) []string { return append(os.Environ(), "NODE_PATH="+sdkNodeModules(t)) }
	return client{name: "typescript-sdk",
		http: func(t *testing.T, url, tool, args string) *exec.Cmd {
			cmd := exec.Command("node", script, "http", url, tool, args)
			cmd.Env = env(t)
			return cmd
		},
		stdio: func(t *testing.T, tool, args string, server []string) *exec.Cmd {
			cmd := exec.Command("node", append([]string{script, "stdio", tool, args}, server...)...)
			cmd.Env = env(t)
			return cmd
		},
	}
}

func goSDKClient() client {
	return client{name: "go-sdk",
		http: func(t *testing.T, url, tool, args string) *exec.Cmd {
			return exec.Command(goClientBin(t), "-tool", tool, "-args", args, "-http", url)
		},
		stdio: func(t *testing.T, tool, args string, server []string) *exec.Cmd {
			return exec.Command(goClientBin(t), append([]string{"-tool", tool, "-args", args, "--"}, server...)...)
		},
	}
}

// runClient runs a client to its end within relayBound and returns its
// stdout; it fails the test if the client fails.
func runClient(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var out, errOut capped
	out.max, errOut.max = 1<<20, 1<<20
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done, err := startGroup(t, cmd)
	if err != nil {
		t.Fatalf("starting the client: %v", err)
	}
	select {
	case <-done:
	case <-time.After(relayBound):
		t.Fatalf("the client %v still runs after %v\nstderr:\n%s", cmd.Args, relayBound, tail(errOut.String(), 3000))
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("the client %v exited %d\nstdout:\n%s\nstderr:\n%s", cmd.Args, code, out.String(), tail(errOut.String(), 3000))
	}
	t.Logf("client stderr: %s", tail(errOut.String(), 1000))
	return out.String()
}

// A server is a target both relays can reach: an HTTP endpoint it
// starts, and a command line for stdio.
type server struct {
	name      string
	http      func(t *testing.T) string
	stdio     func(t *testing.T) []string
	tool      string
	args      string
	wantReply string // in the client's output: the tool's result
	// wantLines must appear in the relay's output, in this order; a
	// fault's finding, or the server's own request and the client's
	// answer.
	wantHTTP, wantStdio []string
}

func refServer(fault string, wantHTTP, wantStdio []string) server {
	return server{name: "refserver-" + fault,
		http: func(t *testing.T) string {
			port := freePort(t)
			cmd := exec.Command(checkerBin, "refserver", "--addr", "127.0.0.1:"+port, "--fault", fault)
			if _, err := startGroup(t, cmd); err != nil {
				t.Fatal(err)
			}
			waitPort(t, "127.0.0.1:"+port)
			return "http://127.0.0.1:" + port + "/mcp"
		},
		stdio: func(*testing.T) []string { return []string{checkerBin, "refserver", "--stdio", "--fault", fault} },
		tool:  "add", args: `{"a":2,"b":3}`, wantReply: `{\"sum\":5}`,
		wantHTTP: wantHTTP, wantStdio: wantStdio,
	}
}

// everything calls get-roots-list: server-everything then asks the
// client for its roots (roots/list), a request of the server's, which
// the relays pair with the client's answer.
func everything() server {
	return server{name: "server-everything",
		http: func(t *testing.T) string { return startEverythingHTTP(t, everythingDir(t)) },
		stdio: func(t *testing.T) []string {
			return []string{"node", filepath.Join(everythingDir(t), "dist", "index.js"), "stdio"}
		},
		tool: "get-roots-list", args: `{}`, wantReply: "file:///tmp/wymcp-e2e",
		wantHTTP:  []string{`: roots/list id `, `→ #`, ` POST result id `},
		wantStdio: []string{`← #`, ` roots/list id `, `→ #`, ` result id `},
	}
}

func waitPort(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on %s", addr)
}

func relayClients() []client { return []client{tsClient(), goSDKClient()} }

// relayServers: for the reference server, the fault each client's
// traffic provokes. The TypeScript SDK speaks 2025-11-25, whose
// notifications/initialized the notification-reply fault answers; the
// Go SDK speaks 2026-07-28 with the reference server, whose results but
// server/discover's (its tools/call among them) the no-resultType fault
// strips of resultType.
func relayServers(c client) []server {
	if c.name == "go-sdk" {
		want := []string{"tools/call id", "FAIL", "fail PRO1002  result.resultType: resultType is missing"}
		return []server{refServer("no-resultType", want, want), everything()}
	}
	return []server{
		refServer("notification-reply",
			[]string{"POST notifications/initialized", "200 result id null", "FAIL", "fail RPC1007  reply: the notification was answered with a response"},
			[]string{"notifications/initialized", "result id null", "FAIL", "fail RPC1007  reply: the notification was answered with a response"}),
		everything(),
	}
}

func TestRelayProxyRealClients(t *testing.T) {
	for _, c := range relayClients() {
		for _, srv := range relayServers(c) {
			t.Run(c.name+"/"+srv.name, func(t *testing.T) {
				t.Parallel()
				upstream := srv.http(t)
				// server ← tapB ← proxy ← tapA ← client
				tapB := newTap(t, upstream)
				dir := t.TempDir()
				rec, rep := filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "rep.json")
				px := startProxy(t, tapB.url, "--record", rec, "--report", rep, "-H", "X-Wymcp-Secret: flag-secret-value")
				tapA := newTap(t, px.url)

				out := runClient(t, c.http(t, tapA.url, srv.tool, srv.args))
				if !strings.Contains(out, srv.wantReply) {
					t.Errorf("the client's result lacks %q: %s", srv.wantReply, out)
				}
				code, lines := px.stop(t)
				t.Logf("proxy output:\n%s", lines)
				if code != 0 && code != 1 {
					t.Errorf("proxy exit %d, want 0 or 1", code)
				}
				checkInOrder(t, lines, srv.wantHTTP)
				checkRelayOutput(t, lines)
				// A tap records an exchange once its reply is over; the last
				// streams end as the client and the proxy close.
				for deadline := time.Now().Add(10 * time.Second); len(tapA.records()) != len(tapB.records()) && time.Now().Before(deadline); {
					time.Sleep(20 * time.Millisecond)
				}
				compareTaps(t, tapA.records(), tapB.records())
				for _, x := range tapB.records() {
					if got := x.Header.Get("X-Wymcp-Secret"); got != "flag-secret-value" {
						t.Errorf("%s %s reached the server with X-Wymcp-Secret %q, want the --header value", x.Method, x.Path, got)
					}
				}
				if strings.Contains(lines, "flag-secret-value") {
					t.Errorf("the --header value was printed")
				}
				raw, _ := os.ReadFile(rec)
				if bytes.Contains(raw, []byte("flag-secret-value")) || !bytes.Contains(raw, []byte(`"\u003credacted\u003e"`)) {
					t.Errorf("the recording holds the --header value, or no redacted header:\n%s", tail(string(raw), 2000))
				}
				checkRecordingLints(t, rec, lines)
				checkConformingClient(t, rep)
				checkClientParity(t, rep, rec)
			})
		}
	}
}

func TestRelayWrapRealClients(t *testing.T) {
	for _, c := range relayClients() {
		for _, srv := range relayServers(c) {
			t.Run(c.name+"/"+srv.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				aIn, aOut, bIn, bOut := filepath.Join(dir, "a.in"), filepath.Join(dir, "a.out"), filepath.Join(dir, "b.in"), filepath.Join(dir, "b.out")
				logf, rec, rep := filepath.Join(dir, "wrap.log"), filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "rep.json")
				tap := tapScript(t)
				// client → tee A → wrap → tee B → server, and back: what the
				// client wrote and read on one side of wrap, what the server
				// read and wrote on the other.
				server := slices.Concat([]string{"/bin/sh", tap, aIn, aOut, checkerBin, "wrap", "--log", logf, "--record", rec, "--report", rep, "--color", "never",
					"--", "/bin/sh", tap, bIn, bOut}, srv.stdio(t))
				out := runClient(t, c.stdio(t, srv.tool, srv.args, server))
				if !strings.Contains(out, srv.wantReply) {
					t.Errorf("the client's result lacks %q: %s", srv.wantReply, out)
				}
				lines := waitFileContains(t, logf, "\nsummary: ")
				t.Logf("wrap log:\n%s", lines)
				checkInOrder(t, lines, srv.wantStdio)
				checkRelayOutput(t, lines)
				for _, side := range [][2]string{{aIn, bIn}, {bOut, aOut}} {
					want, _ := os.ReadFile(side[0])
					got, _ := os.ReadFile(side[1])
					if len(want) == 0 || !bytes.Equal(want, got) {
						t.Errorf("%s (%d bytes) and %s (%d bytes) differ: the relay changed the bytes\n%s\n---\n%s",
							filepath.Base(side[0]), len(want), filepath.Base(side[1]), len(got), tail(string(want), 1500), tail(string(got), 1500))
					}
				}
				checkRecordingLints(t, rec, lines)
				checkConformingClient(t, rep)
				checkClientParity(t, rep, rec)
			})
		}
	}
}

// checkConformingClient: a real SDK client draws no finding in area
// client; every message it sent was judged.
func checkConformingClient(t *testing.T, rep string) {
	t.Helper()
	r := readReport(t, rep)
	judged := 0
	for _, x := range r.Results {
		if x.Area != "client" {
			continue
		}
		judged++
		if x.Status == "fail" || x.Status == "warn" || x.Status == "error" {
			t.Errorf("the SDK client drew %s %s on %s: %s %s", x.Status, x.Check, x.Fixture, x.Path, x.Message)
		}
	}
	if judged == 0 {
		t.Error("no client message was judged")
	}
}

// checkInOrder asserts that each string appears in text after the one
// before it.
func checkInOrder(t *testing.T, text string, want []string) {
	t.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("the relay's output lacks %q (in order %q)", w, want)
			return
		}
		rest = rest[i+len(w):]
	}
}

// checkRelayOutput asserts what every relay output has: a line per
// message, a summary, no raw escape, no judge that could not judge.
func checkRelayOutput(t *testing.T, lines string) {
	t.Helper()
	if !regexp.MustCompile(`(?m)^summary: \d+ messages \(\d+ client→server, \d+ server→client`).MatchString(lines) {
		t.Errorf("no summary line")
	}
	if strings.ContainsRune(lines, 0x1b) {
		t.Errorf("a raw escape reached the output")
	}
	if strings.Contains(lines, "could not judge") {
		t.Errorf("a verdict could not be judged")
	}
	for _, l := range strings.Split(lines, "\n") {
		if strings.Contains(l, "no reply:") && !strings.Contains(l, "GET") {
			t.Errorf("a request went unanswered: %s", l)
		}
	}
}

// checkRecordingLints lints the relay's recording: it must read, and
// find a failure exactly when the relay did.
func checkRecordingLints(t *testing.T, rec, lines string) {
	t.Helper()
	r := runChecker(t, time.Minute, nil, "lint", "--color", "never", rec)
	relayFailed := regexp.MustCompile(`(?m)^verdicts: \d+ pass, [1-9]`).MatchString(lines)
	switch {
	case r.code == 2:
		t.Errorf("lint could not read the recording:\n%s", r.stderr)
	case relayFailed != (r.code == 1):
		t.Errorf("lint exit %d, but the relay's verdicts say failed=%v\n%s", r.code, relayFailed, tail(r.stdout, 2000))
	}
}

// tapScript writes a shell script that copies its stdin to a file and
// to a command, and the command's stdout to a file and to its stdout.
func tapScript(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "tap.sh")
	script := "#!/bin/sh\n# tap.sh IN OUT COMMAND [ARG...]\nin=$1; out=$2; shift 2\ntee \"$in\" | \"$@\" | tee \"$out\"\n"
	if err := os.WriteFile(f, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

func waitFileContains(t *testing.T, file, s string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		raw, _ := os.ReadFile(file)
		if strings.Contains(string(raw), s) {
			return string(raw)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %q:\n%s", file, s, tail(string(raw), 3000))
		}
	}
}

// A runningProxy is `wymcp-check proxy` running for a test.
type runningProxy struct {
	cmd  *exec.Cmd
	done <-chan struct{}
	out  *capped
	url  string
}

func startProxy(t *testing.T, upstream string, args ...string) *runningProxy {
	t.Helper()
	out := &capped{max: 4 << 20}
	cmd := exec.Command(checkerBin, append([]string{"proxy", upstream, "--listen", "127.0.0.1:0", "--color", "never"}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	done, err := startGroup(t, cmd)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+\S*),`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return &runningProxy{cmd: cmd, done: done, out: out, url: m[1]}
		}
		select {
		case <-done:
			t.Fatalf("the proxy exited:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy did not say where it listens:\n%s", out.String())
		}
	}
}

// stop sends SIGINT, as Ctrl-C would, and returns the exit code and the
// output. The proxy must end within a bound.
func (p *runningProxy) stop(t *testing.T) (int, string) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the proxy still runs 20s after SIGINT:\n%s", tail(p.out.String(), 3000))
	}
	out := p.out.String()
	for _, bad := range []string{"panic:", "fatal error:", "WARNING: DATA RACE"} {
		if strings.Contains(out, bad) {
			t.Fatalf("%q in the proxy's output:\n%s", bad, tail(out, 4000))
		}
	}
	return p.cmd.ProcessState.ExitCode(), out
}

// A tap is a reverse proxy in the test that records every exchange
// passing it: the request as it arrived, and the reply as it left.
type tap struct {
	url string
	mu  sync.Mutex
	got []tapped
}

type tapped struct {
	Method, Path string
	Header       http.Header
	Body         string
	Status       int
	ReplyHeader  http.Header
	Reply        string
}

func newTap(t *testing.T, target string) *tap {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	base := &url.URL{Scheme: u.Scheme, Host: u.Host}
	tp := &tap{}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(base) },
		FlushInterval: -1,
		Transport:     &http.Transport{DisableCompression: true},
		ErrorLog:      nil,
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &tapWriter{ResponseWriter: w}
		// Deferred: ReverseProxy panics with http.ErrAbortHandler when
		// the client leaves mid-stream, and that exchange counts too.
		defer func() {
			tp.mu.Lock()
			tp.got = append(tp.got, tapped{r.Method, r.URL.RequestURI(), r.Header.Clone(), string(body), rec.status, w.Header().Clone(), rec.body.String()})
			tp.mu.Unlock()
		}()
		rp.ServeHTTP(rec, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	tp.url = "http://" + l.Addr().String() + u.Path
	return tp
}

func (tp *tap) records() []tapped {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return slices.Clone(tp.got)
}

// tapWriter keeps what was written to the client.
type tapWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *tapWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *tapWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.body.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *tapWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// compareTaps asserts that both sides of the relay saw the same
// traffic: every request as the client sent it reached the server, and
// every reply as the server sent it reached the client. Headers that
// belong to a connection, not a message (RFC 9110 §7.6.1), and those
// each hop's HTTP stack sets itself, are left out. A reply the client
// left before its end (a GET stream at the client's close) may have
// carried bytes to the proxy that the client never read: there the
// client's side must be a prefix.
//
// Exchanges are paired by content, not by the order the taps recorded
// them: a tap records an exchange when its reply ends, and two alike
// requests (the TypeScript SDK's GET stream and its reconnection, under
// load) can end in either order on the two sides.
func compareTaps(t *testing.T, client, server []tapped) {
	t.Helper()
	for _, d := range tapDiffs(client, server) {
		t.Error(d)
	}
	t.Logf("%d HTTP exchanges compared across the relay", len(client))
}

func tapDiffs(client, server []tapped) []string {
	var diffs []string
	key := func(x tapped) string { return x.Method + " " + x.Path + " " + x.Body }
	norm := func(xs []tapped) []tapped {
		out := slices.Clone(xs)
		for i := range out {
			out[i].Header = message(out[i].Header)
			out[i].ReplyHeader = message(out[i].ReplyHeader)
		}
		slices.SortStableFunc(out, func(a, b tapped) int { return strings.Compare(key(a), key(b)) })
		return out
	}
	c, s := norm(client), norm(server)
	if len(c) != len(s) || len(c) == 0 {
		var ck, sk []string
		for _, x := range c {
			ck = append(ck, x.Method+" "+x.Path)
		}
		for _, x := range s {
			sk = append(sk, x.Method+" "+x.Path)
		}
		diffs = append(diffs, fmt.Sprintf("the client's side saw %d exchanges %q, the server's %d %q", len(c), ck, len(s), sk))
	}
	same := func(a, b tapped, prefix bool) bool {
		if key(a) != key(b) {
			return false
		}
		if prefix && strings.HasPrefix(b.Reply, a.Reply) {
			a.Reply = b.Reply
		}
		return diffTapped(a, b) == ""
	}
	// Whole replies pair first, so that a cut one cannot take the
	// partner of one that arrived whole.
	used := make([]bool, len(s))
	var left []tapped
	for _, prefix := range []bool{false, true} {
		left = left[:0]
		for _, a := range c {
			i := slices.IndexFunc(s, func(b tapped) bool { return same(a, b, prefix) })
			for i >= 0 && used[i] {
				j := slices.IndexFunc(s[i+1:], func(b tapped) bool { return same(a, b, prefix) })
				if j < 0 {
					i = -1
					break
				}
				i += 1 + j
			}
			if i < 0 {
				left = append(left, a)
				continue
			}
			used[i] = true
		}
		c = slices.Clone(left)
	}
	var unpaired []tapped
	for i, b := range s {
		if !used[i] {
			unpaired = append(unpaired, b)
		}
	}
	for i, a := range left {
		if i >= len(unpaired) {
			break
		}
		diffs = append(diffs, fmt.Sprintf("exchange %s differs across the relay (client side, then server side):\n%s", key(a), diffTapped(a, unpaired[i])))
	}
	return diffs
}

func diffTapped(a, b tapped) string {
	ja, _ := json.MarshalIndent(a, "", " ")
	jb, _ := json.MarshalIndent(b, "", " ")
	if bytes.Equal(ja, jb) {
		return ""
	}
	return string(ja) + "\n---\n" + string(jb)
}

// message keeps a message's own headers.
func message(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range []string{"Connection", "Keep-Alive", "Transfer-Encoding", "Te", "Trailer", "Upgrade",
		"Proxy-Connection", "Content-Length", "Accept-Encoding", "Date", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto",
		// The proxy sets the --header value the client did not send.
		"X-Wymcp-Secret"} {
		out.Del(k)
	}
	return out
}
