package runner_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transport"
)

// TestRetryDeclines: an input_required result of mrtr/input-required is
// answered once, as T-MRTR-10 binds a client: a new id, the requestState
// echoed byte for byte (escapes and all), each elicitation declined, no
// roots listed, sampling left unanswered; the retry's reply is judged.
func TestRetryDeclines(t *testing.T) {
	const state = `"s\u0041\/x"` // a JSON string whose spelling a decode and encode would change
	var mu sync.Mutex
	var calls []string
	url := serveRefIntercepted(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		m := gjson.ParseBytes(body)
		if m.Get("method").Str != "tools/call" || m.Get("params.name").Str != "ask" || !m.Get(envelope.MetaPath(envelope.MetaClientCapabilities)+".elicitation").Exists() {
			return false
		}
		mu.Lock()
		calls = append(calls, string(body))
		mu.Unlock()
		meta := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"i","version":"1"}}`
		w.Header().Set("Content-Type", "application/json")
		if !m.Get("params.requestState").Exists() {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.Get("id").Raw+`,"result":{"resultType":"input_required",`+meta+`,"requestState":`+state+`,"inputRequests":{`+
				`"e":{"method":"elicitation/create","params":{"mode":"form","message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}},`+
				`"r":{"method":"roots/list","params":{}},`+
				`"s":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}}}}`)
			return true
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.Get("id").Raw+`,"result":{"resultType":"complete",`+meta+`,"content":[{"type":"text","text":"not done"}]}}`)
		return true
	})
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if fx, err = fixtures.Select(fx, []string{"mrtr/input-required"}, nil); err != nil {
		t.Fatal(err)
	}
	c := &collect{}
	if _, err := runner.Run(context.Background(), &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: time.Second}}},
		runner.Options{Fixtures: fx, CallTools: runner.CallReadOnly, Contract: envelope.Strict(), Schemas: checks.ProtocolSchemas(schema.NewRegistry()), Deadline: time.Minute}, c); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 {
		t.Fatalf("the ask tool was called %d times, want 2 (the call and its retry):\n%s", len(calls), strings.Join(calls, "\n"))
	}
	first, retry := gjson.Parse(calls[0]), gjson.Parse(calls[1])
	if first.Get("id").Raw == retry.Get("id").Raw {
		t.Errorf("the retry reuses id %s (T-MRTR-10: a new id)", retry.Get("id").Raw)
	}
	if got := retry.Get("params.requestState").Raw; got != state {
		t.Errorf("the retry's requestState is %s, want %s byte for byte (T-MRTR-10)", got, state)
	}
	if got, want := retry.Get("params.inputResponses").Raw, `{"e":{"action":"decline"},"r":{"roots":[]}}`; got != want {
		t.Errorf("inputResponses %s, want %s", got, want)
	}
	if got, want := retry.Get("params._meta").Raw, first.Get("params._meta").Raw; got != want {
		t.Errorf("the retry's _meta %s differs from the call's %s", got, want)
	}
	judged := false
	for _, v := range c.verdicts {
		judged = judged || v.Fixture == "mrtr/input-required/ask/retry"
	}
	if !judged {
		t.Error("the retry's reply was not judged")
	}
	if ids, detail := c.bad(); len(ids) > 0 {
		t.Errorf("findings:\n%s", detail)
	}
}
