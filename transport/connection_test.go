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
)

// TestHTTPConnectionPerExchange: each exchange has a connection of its
// own, so what a server leaves on one (here a second, complete HTTP
// response a moment after the reply) reaches no later exchange. Kept-alive
// connections were tried: such a response was read as the next
// request's reply, and every later exchange on the connection was out
// of step by one, failing unrelated fixtures differently each run. The
// twin: the same server without the stale response.
func TestHTTPConnectionPerExchange(t *testing.T) {
	for _, stale := range []bool{true, false} {
		t.Run(map[bool]string{true: "stale response", false: "one response"}[stale], func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var conns atomic.Int32
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
						for {
							req, err := http.ReadRequest(br)
							if err != nil {
								return
							}
							body, _ := io.ReadAll(req.Body)
							id := strings.TrimSuffix(strings.SplitN(string(body), `"id":`, 2)[1], `}`)
							time.Sleep(15 * time.Millisecond)
							reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
							fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(reply), reply)
							if stale {
								time.Sleep(5 * time.Millisecond)
								again := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"stale"}}`, id)
								fmt.Fprintf(c, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(again), again)
							}
						}
					}()
				}
			}()
			h := &HTTP{URL: "http://" + ln.Addr().String() + "/mcp", Limits: Limits{Timeout: 2 * time.Second}}
			for id := 1; id <= 3; id++ {
				ex := h.Do(context.Background(), post(fmt.Sprintf(`{"jsonrpc":"2.0","method":"ping","id":%d}`, id)))
				want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, id)
				if ex.Failure != "" || ex.Response == nil || ex.Response.Status != 200 || string(ex.Response.Body) != want {
					t.Errorf("id %d: failure %q, response %+v; want 200 %s", id, ex.Failure, ex.Response, want)
				}
			}
			if n := conns.Load(); n != 3 {
				t.Errorf("%d connections for 3 exchanges, want 3", n)
			}
		})
	}
}
