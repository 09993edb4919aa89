package refserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

func TestNewRejectsUnknownFault(t *testing.T) {
	_, err := New(Options{Fault: "no-such-fault"})
	if !errors.Is(err, ErrUnknownFault) {
		t.Fatalf("New with an unknown fault: got %v, want an error wrapping ErrUnknownFault", err)
	}
	for _, f := range Faults() {
		if _, err := New(Options{Fault: f.Name}); err != nil {
			t.Errorf("New(%q): %v", f.Name, err)
		}
	}
}

func TestFaultsDocumented(t *testing.T) {
	name := regexp.MustCompile(`^[a-z][a-zA-Z]*(-[a-zA-Z]+)*$`)
	seen := map[string]bool{}
	for _, f := range Faults() {
		if !name.MatchString(f.Name) || seen[f.Name] {
			t.Errorf("fault name %q is malformed or repeated", f.Name)
		}
		seen[f.Name] = true
		for field, v := range map[string]string{"Breaks": f.Breaks, "When": f.When} {
			if v == "" || strings.ContainsAny(v, "\r\n") {
				t.Errorf("fault %s: %s must be one non-empty line, got %q", f.Name, field, v)
			}
		}
		if !regexp.MustCompile(`T-[A-Z]+-\d+|contract|JSON-RPC|stays up`).MatchString(f.Breaks) {
			t.Errorf("fault %s: Breaks names no rule: %q", f.Name, f.Breaks)
		}
	}
	// Faults returns a fresh slice: a caller editing it changes nothing.
	Faults()[0].Name = "changed"
	if Faults()[0].Name == "changed" {
		t.Error("Faults shares its backing array between calls")
	}
}

func TestQuote(t *testing.T) {
	clean := &Server{}
	echo := &Server{fault: faultEchoRequest}
	long := strings.Repeat("a", 100)
	tests := []struct {
		in, want, wantEcho string
	}{
		{"tools/list", "tools/list", "tools/list"},
		{strings.Repeat("b", 64), strings.Repeat("b", 64), strings.Repeat("b", 64)},
		{strings.Repeat("b", 65), strings.Repeat("b", 61) + "...", strings.Repeat("b", 65)},
		{long, strings.Repeat("a", 61) + "...", long},
		{"a\nb\x00c\x7f", `a\u000ab\u0000c\u007f`, `a\u000ab\u0000c\u007f`},
		{"bad\xffbyte", `bad\xffbyte`, `bad\xffbyte`},
		{"line\u2028sep", `line\u2028sep`, `line\u2028sep`},
		// A cut never splits a rune or an escape: 60 bytes, then a
		// 3-byte rune that would end at 63 > 61.
		{strings.Repeat("c", 60) + "世界", strings.Repeat("c", 60) + "...", strings.Repeat("c", 60) + "世界"},
		{strings.Repeat("d", 58) + "\x01xxxxxx", strings.Repeat("d", 58) + "...", strings.Repeat("d", 58) + `\u0001xxxxxx`},
	}
	for _, tt := range tests {
		if got := clean.quote(tt.in); got != tt.want {
			t.Errorf("quote(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := clean.quote(tt.in); len(got) > quoteBound {
			t.Errorf("quote(%q) is %d bytes, over the bound", tt.in, len(got))
		}
		if got := echo.quote(tt.in); got != tt.wantEcho {
			t.Errorf("echo-request quote(%q) = %q, want %q", tt.in, got, tt.wantEcho)
		}
	}
}

func TestSafeInteger(t *testing.T) {
	tests := []struct {
		raw     string
		want    int64
		problem string
	}{
		{"0", 0, ""},
		{"-0", 0, ""},
		{"42", 42, ""},
		{"-17", -17, ""},
		{"1.0", 1, ""},
		{"1e2", 100, ""},
		{"1.5e1", 15, ""},
		{"100e-2", 1, ""},
		{"0.0e99999999999999999999", 0, ""},
		{"9007199254740991", 9007199254740991, ""},
		{"-9007199254740991", -9007199254740991, ""},
		{"9007199254740992", 0, "must be <= 9007199254740991"},
		{"-9007199254740992", 0, "must be >= -9007199254740991"},
		{"1e400", 0, "must be <= 9007199254740991"},
		{"1e99999999999999999999", 0, "must be <= 9007199254740991"},
		{"1.5", 0, "must be an integer"},
		{"1e-1", 0, "must be an integer"},
		{"1e-99999999999999999999", 0, "must be an integer"},
		{"1.0000000000000000001", 0, "must be an integer"},
		{`"2"`, 0, "must be an integer"},
		{"true", 0, "must be an integer"},
		{"null", 0, "must be an integer"},
	}
	for _, tt := range tests {
		n, p := safeInteger(gjson.Parse(tt.raw))
		if n != tt.want || p != tt.problem {
			t.Errorf("safeInteger(%s) = %d, %q; want %d, %q", tt.raw, n, p, tt.want, tt.problem)
		}
	}
}

func TestHTTPBodyTooLarge(t *testing.T) {
	ts := httptest.NewServer(newServer(t, ""))
	defer ts.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", maxMessage) + `"}}`
	resp, err := ts.Client().Post(ts.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	want := `413 application/json {"jsonrpc":"2.0","error":{"code":-32600,"message":"message exceeds 1048576 bytes"}}`
	if diff := cmp.Diff(want, resp.Status[:3]+" "+resp.Header.Get("Content-Type")+" "+string(got)); diff != "" {
		t.Errorf("over-long body (-want +got):\n%s", diff)
	}
}

func TestStdioLineTooLong(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"` + strings.Repeat("x", maxMessage) + "\"}}\n" +
		`{"jsonrpc":"2.0","id":2,"method":"no/such"}` + "\n"
	var out bytes.Buffer
	if err := newServer(t, "").ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","error":{"code":-32600,"message":"message exceeds 1048576 bytes"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid params: missing property \"params\"","data":{"errors":[{"location":"","problems":["missing property \"params\""]}]}}}` + "\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("stdout after an over-long line (-want +got):\n%s", diff)
	}
}

// TestHangReleasedByClose: a request held by the hang fault ends when the
// server is closed, so shutting down never waits forever.
func TestHangReleasedByClose(t *testing.T) {
	s := newServer(t, faultHang)
	ts := httptest.NewServer(s)
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"add","arguments":{"a":1,"b":2}}}`))
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "add")
	done := make(chan error, 1)
	go func() {
		resp, err := ts.Client().Do(req)
		if err == nil {
			resp.Body.Close()
			err = errors.New("got a response: " + resp.Status)
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("request returned before Close: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if strings.HasPrefix(err.Error(), "got a response") {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("request still held 5s after Close")
	}
}

func TestStdioStopsOnContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := newServer(t, "").ServeStdio(ctx, strings.NewReader("{}\n"), io.Discard)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ServeStdio with a cancelled context: got %v, want context.Canceled", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }

func TestStdioWriteError(t *testing.T) {
	err := newServer(t, "").ServeStdio(context.Background(), strings.NewReader("garbage\n"), failingWriter{})
	if err == nil || !strings.Contains(err.Error(), "writing stdout: pipe closed") {
		t.Fatalf("ServeStdio with a failing writer: got %v", err)
	}
}

// TestSessionsBounded: past maxSessions the oldest session is forgotten
// and answers 404, the newest still works.
func TestSessionsBounded(t *testing.T) {
	s := newServer(t, "")
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`
	var ids []string
	for range maxSessions + 1 {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(initialize)))
		ids = append(ids, w.Header().Get("Mcp-Session-Id"))
	}
	ping := func(id string) int {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
		r.Header.Set("Mcp-Session-Id", id)
		s.ServeHTTP(w, r)
		return w.Code
	}
	if got := []int{ping(ids[0]), ping(ids[1]), ping(ids[maxSessions])}; !cmp.Equal(got, []int{404, 200, 200}) {
		t.Errorf("ping status for the oldest, second and newest session = %v, want [404 200 200]", got)
	}
	if s.sessions[ids[0]] != "" || len(s.sessions) != maxSessions {
		t.Errorf("sessions held = %d, want %d without the oldest", len(s.sessions), maxSessions)
	}
}
