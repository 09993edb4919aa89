package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// idKeeper is a 2025-11-25 server that keeps T-RPC-4 as a server that
// keys its bookkeeping by id does: a request id seen before in the
// session is refused (-32600). It remembers every id it was sent.
// rpcHead is what a test's fake server reads of a request: its id (nil
// for a notification) and its method.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// readRPC reads the request's body as a JSON-RPC message's head; a body
// that is none gives an empty head.
func readRPC(r *http.Request) rpcHead {
	body, _ := io.ReadAll(r.Body)
	var m rpcHead
	json.Unmarshal(body, &m)
	return m
}

type idKeeper struct {
	mu   sync.Mutex
	seen []string
}

func (k *idKeeper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := readRPC(r)
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	k.mu.Lock()
	reused := false
	for _, s := range k.seen {
		reused = reused || s == string(m.ID)
	}
	k.seen = append(k.seen, string(m.ID))
	k.mu.Unlock()
	reply := func(member string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,`+member+`}`)
	}
	switch {
	case reused:
		reply(`"error":{"code":-32600,"message":"request id already used in this session"}`)
	case m.Method == "initialize":
		reply(`"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":"1"}}`)
	case m.Method == "tools/list":
		reply(`"result":{"tools":[]}`)
	case m.Method == "ping":
		reply(`"result":{}`)
	default:
		reply(`"error":{"code":-32601,"message":"method not found"}`)
	}
}

// TestSendSetupStepsOverMessageID: send's setup (initialize, the
// listings) steps over the literal id the user's message writes, as
// check's steps over its fixtures': it took ids 1, 2, … whatever the
// message's, so a message with id 1 or 2 reused an id in the session
// (T-RPC-4, which binds the checker) and a server that refuses the reuse
// was warned (ERR1002) for the checker's fault (review rev55 F6). The
// twin: a message whose id the setup never takes (99) is judged as
// before; in every case the message goes with its own id.
func TestSendSetupStepsOverMessageID(t *testing.T) {
	for _, id := range []string{"1", "2", "99"} {
		t.Run(id, func(t *testing.T) {
			k := &idKeeper{}
			srv := httptest.NewServer(k)
			defer srv.Close()
			msg := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`
			code, out, errOut := runMain(t, msg, "send", "--timeout", "2s", "--protocol", "2025-11-25", srv.URL+"/mcp", "-")
			k.mu.Lock()
			seen := k.seen
			k.mu.Unlock()
			count := map[string]int{}
			var twice []string
			for _, s := range seen {
				if count[s]++; count[s] == 2 {
					twice = append(twice, s)
				}
			}
			if diff := cmp.Diff([]string(nil), twice); diff != "" {
				t.Errorf("ids sent twice in the session (-want +got):\n%s\nall ids: %v", diff, seen)
			}
			if len(seen) == 0 || seen[len(seen)-1] != id {
				t.Errorf("the message went with id %v, want its own %s (ids sent: %v)", seen[len(seen)-1:], id, seen)
			}
			if code != exitOK || !strings.Contains(out, "0 fail, 0 warn") {
				t.Errorf("exit %d, want %d with no fail or warn:\n%s\nstderr:\n%s", code, exitOK, out, errOut)
			}
		})
	}
}

// TestHandshakeID: the initialize a stdio reproduce line writes before a
// 2025-xx message takes an id the message does not use: it was always
// 0, so a message with id 0 reproduced as a reused id (review rev55 F6).
func TestHandshakeID(t *testing.T) {
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, 0}, // the twin: as before
		{`{"jsonrpc":"2.0","id":0,"method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","id":0.0,"method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","id":"0","method":"ping"}`, 1},
		{`[{"jsonrpc":"2.0","id":0,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 2},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
		{`not json`, 0},
	} {
		if got := handshakeID([]byte(tc.body)); got != tc.want {
			t.Errorf("handshakeID(%s) = %d, want %d", tc.body, got, tc.want)
		}
	}
}
