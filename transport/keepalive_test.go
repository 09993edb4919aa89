package transport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wymcp/wymcp-check/envelope"
)

// keptServer is a raw HTTP/1.1 server that counts its connections. It
// answers each request with pong under the request's id, keeping the
// connection alive, except where drop says to close the connection
// without a word on reading a request (the n-th on its connection,
// counted from 1). Where short says so, its Content-Length counts the
// reply's characters, not its bytes (a bug of servers in languages whose
// strings count characters), and the rest of the reply stays on the
// connection.
func keptServer(t *testing.T, drop, short func(n int, body string) bool) (url string, conns *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns = &atomic.Int32{}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for n := 1; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					body, _ := io.ReadAll(req.Body)
					if drop(n, string(body)) {
						return
					}
					id := strings.TrimSuffix(strings.SplitN(string(body), `"id":`, 2)[1], `}`)
					reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
					length := len(reply)
					if short(n, string(body)) {
						reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"é":"ééé"}}`, id)
						length = utf8.RuneCountInString(reply)
					}
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", length, reply)
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/mcp", conns
}

func never(int, string) bool { return false }

// TestHTTPKeepsConnections: exchanges share kept-alive connections (a
// new one each cost the server an accept and a parser), and keep-alive's
// race, a server closing an idle connection as the next request goes
// out, is the checker's: the request goes again on a connection of its
// own and is judged by what the server says there. The twin: a server
// that closes the connection on one request whatever connection it came
// on leaves that request unanswered, as before connections were kept;
// and bytes a reply leaves on its connection past its Content-Length
// reach no later exchange.
func TestHTTPKeepsConnections(t *testing.T) {
	req := func(id int) envelope.Request {
		return post(fmt.Sprintf(`{"jsonrpc":"2.0","method":"ping","id":%d}`, id))
	}
	for _, tc := range []struct {
		name        string
		drop, short func(n int, body string) bool
		unanswered  int // the id left unanswered, 0 for none
		maxConns    int32
	}{
		{"kept", never, never, 0, 1},
		{"closed as idle", func(n int, _ string) bool { return n > 1 }, never, 0, 5},
		{"closed on one request", func(_ int, body string) bool { return strings.Contains(body, `"id":3}`) }, never, 3, 3},
		{"bytes past the length", never, func(_ int, body string) bool { return !strings.Contains(body, `"id":5}`) }, 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, conns := keptServer(t, tc.drop, tc.short)
			h := &HTTP{URL: url, Limits: Limits{Timeout: 2 * time.Second}}
			defer h.CloseIdle()
			for id := 1; id <= 5; id++ {
				ex := h.Do(context.Background(), req(id))
				want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, id)
				if tc.short(1, string(req(id).Body)) {
					// As many bytes as the length said: the reply cut.
					full := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"é":"ééé"}}`, id)
					want = full[:utf8.RuneCountInString(full)]
				}
				if id == tc.unanswered {
					if !ex.Unanswered || ex.Response != nil {
						t.Errorf("id %d: unanswered %v, failure %q; want it unanswered", id, ex.Unanswered, ex.Failure)
					}
					continue
				}
				if ex.Failure != "" || ex.Malformed != "" || ex.Response == nil || string(ex.Response.Body) != want {
					t.Errorf("id %d: failure %q, malformed %q, response %+v; want %s", id, ex.Failure, ex.Malformed, ex.Response, want)
				}
			}
			if n := conns.Load(); n > tc.maxConns {
				t.Errorf("%d connections for 5 exchanges, want at most %d", n, tc.maxConns)
			}
		})
	}
}
