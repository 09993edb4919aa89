package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// BenchmarkStdioRoundTrip measures one request and its reply through a
// live fake server: the transport's share of a fixture's cost.
func BenchmarkStdioRoundTrip(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), fakeEnv+"=echo", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	s, err := StartStdio(context.Background(), []string{exe}, env, "", Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	req := stdioReq(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	for b.Loop() {
		if ex := s.Do(context.Background(), req, true); ex.Failure != "" {
			b.Fatal(ex.Failure)
		}
	}
}

// BenchmarkHTTPSSE measures an SSE reply of a notification and a
// response, each exchange on a fresh connection as the default client
// makes it.
func BenchmarkHTTPSSE(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		startSSE(w).send("data: " + progress + "\n\ndata: " + pong + "\n\n")
	}))
	defer srv.Close()
	h := &HTTP{URL: srv.URL}
	req := post(ping)
	for b.Loop() {
		if ex := h.Do(context.Background(), req); ex.Failure != "" || len(ex.Response.Messages) != 2 {
			b.Fatalf("failure %q, messages %q", ex.Failure, ex.Response.Messages)
		}
	}
}
