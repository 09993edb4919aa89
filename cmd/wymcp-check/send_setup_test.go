package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSendSaysSetupUnanswered: send lists the server's tools, prompts
// and resources before the message, each waiting up to --timeout; a
// listing the server leaves unanswered is said on stderr, before the
// message's exchange, with the bound it waited. Before, the notes were
// collected and never printed: send waited 4 × --timeout in silence.
func TestSendSaysSetupUnanswered(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := readRPC(r)
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,`+result+`}`)
		}
		switch {
		case m.Method == "initialize":
			reply(`"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{}},"serverInfo":{"name":"t","version":"1"}}`)
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "ping":
			reply(`"result":{}`)
		case strings.HasSuffix(m.Method, "/list"):
			<-r.Context().Done() // left unanswered
		default:
			reply(`"error":{"code":-32601,"message":"method not found"}`)
		}
	}))
	defer srv.Close()
	msg := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(msg, []byte(`{"jsonrpc":"2.0","id":5,"method":"ping"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, out, errOut := runMain(t, "", "send", "--timeout", "300ms", "--protocol", "2025-11-25", srv.URL+"/mcp", msg)
	if !strings.Contains(out, `"method":"ping"`) {
		t.Fatalf("the message was not sent:\n%s\nstderr:\n%s", out, errOut)
	}
	for _, method := range []string{"tools/list", "prompts/list", "resources/list"} {
		want := "wymcp-check: note (the session's setup, before the message; each request waits up to --timeout 300ms): " + method
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}
