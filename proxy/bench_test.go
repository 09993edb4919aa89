package proxy

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// The relays' cost is the latency they add, measured on loopback: each
// benchmark times the same thing directly and through a relay, turn
// about, and reports the medians and the added median (target: under
// 1 ms). The Observer counts and drops what it gets, as a fast one
// would; judging runs on the Observer's goroutine, off the path timed.
//
//	go test -run x -bench . -benchmem ./proxy

type discard struct{ n int }

func (d *discard) Message(Observation) { d.n++ }
func (d *discard) Exchange(Pair)       { d.n++ }

// report adds the medians and the added median to b's results.
func report(b *testing.B, direct, relayed []time.Duration) {
	b.Helper()
	p50 := func(ds []time.Duration) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds()) / 1e3
	}
	p99 := func(ds []time.Duration) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[len(s)*99/100].Nanoseconds()) / 1e3
	}
	b.ReportMetric(p50(direct), "direct-p50-µs")
	b.ReportMetric(p50(relayed), "relayed-p50-µs")
	b.ReportMetric(p50(relayed)-p50(direct), "added-p50-µs")
	b.ReportMetric(p99(relayed)-p99(direct), "added-p99-µs")
}

// BenchmarkHTTPExchange: one JSON-RPC request and its JSON reply over a
// kept-alive connection.
func BenchmarkHTTPExchange(b *testing.B) {
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add","inputSchema":{"type":"object"}}]}}`)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")
	h := NewHTTP(HTTPConfig{Upstream: u, Observer: &discard{}})
	px := httptest.NewServer(h)
	defer px.Close()
	defer h.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	do := func(target string) time.Duration {
		start := time.Now()
		resp, err := client.Post(target, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	do(up.URL + "/mcp")
	do(px.URL + "/mcp")
	direct, relayed := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		direct = append(direct, do(up.URL+"/mcp"))
		relayed = append(relayed, do(px.URL+"/mcp"))
	}
	b.StopTimer()
	report(b, direct, relayed)
}

// BenchmarkHTTPSSEEvent: from the server writing one SSE event on an
// open stream to the client reading it.
func BenchmarkHTTPSSEEvent(b *testing.B) {
	// One tick channel per stream, named by the query: a tick meant for
	// one stream must not be taken by the other's handler.
	ticks := map[string]chan chan struct{}{"direct": make(chan chan struct{}), "relayed": make(chan chan struct{})}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ticks := ticks[r.URL.Query().Get("s")]
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		ev := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1,\"total\":10}}\n\n")
		for {
			select {
			case done := <-ticks:
				w.Write(ev)
				w.(http.Flusher).Flush()
				close(done)
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")
	h := NewHTTP(HTTPConfig{Upstream: u, Observer: &discard{}})
	px := httptest.NewServer(h)
	defer px.Close()
	defer h.Close()
	open := func(target string) (*bufio.Reader, func()) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", target, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		return bufio.NewReader(resp.Body), func() { cancel(); resp.Body.Close() }
	}
	// One event: the server writes it, the client reads its blank line.
	event := func(r *bufio.Reader, stream string) time.Duration {
		done := make(chan struct{})
		start := time.Now()
		ticks[stream] <- done
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line == "\n" {
				return time.Since(start)
			}
		}
	}
	dr, closeD := open(up.URL + "/mcp?s=direct")
	defer closeD()
	event(dr, "direct")
	pr, closeP := open(px.URL + "/mcp?s=relayed")
	defer closeP()
	event(pr, "relayed")
	direct, relayed := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		direct = append(direct, event(dr, "direct"))
		relayed = append(relayed, event(pr, "relayed"))
	}
	b.StopTimer()
	report(b, direct, relayed)
}

// BenchmarkStdioExchange: a request line to the echo fake and its reply
// line back, with the fake started directly and through Stdio.
func BenchmarkStdioExchange(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), fakeEnv+"=echo")
	// Directly: the fake on pipes of our own.
	cmd := exec.Command(exe)
	cmd.Env = env
	din, _ := cmd.StdinPipe()
	dout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { din.Close(); cmd.Wait() }()
	// Through the relay.
	rin, rinW := io.Pipe()
	routR, rout := io.Pipe()
	st := &Stdio{Argv: []string{exe}, Env: env, Stdin: rin, Stdout: rout, Stderr: io.Discard, Observer: &discard{}}
	done := make(chan struct{})
	go func() {
		st.Run(context.Background())
		close(done)
	}()
	defer func() { rinW.Close(); <-done }()
	dr, rr := bufio.NewReader(dout), bufio.NewReader(routR)
	go func() { <-done; rout.Close() }()
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}` + "\n")
	round := func(w io.Writer, r *bufio.Reader) time.Duration {
		start := time.Now()
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	round(din, dr)
	round(rinW, rr)
	direct, relayed := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		direct = append(direct, round(din, dr))
		relayed = append(relayed, round(rinW, rr))
	}
	b.StopTimer()
	report(b, direct, relayed)
}
