package runner_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/refserver"
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

// runMRTR runs the named fixtures against url, read-only tools called.
func runMRTR(t *testing.T, url string, ids ...string) *collect {
	t.Helper()
	fx, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if fx, err = fixtures.Select(fx, ids, nil); err != nil {
		t.Fatal(err)
	}
	c := &collect{}
	if _, err := runner.Run(context.Background(), &runner.HTTPTarget{T: &transport.HTTP{URL: url, Limits: transport.Limits{Timeout: time.Second}}},
		runner.Options{Fixtures: fx, CallTools: runner.CallReadOnly, Contract: envelope.Strict(), Schemas: checks.ProtocolSchemas(schema.NewRegistry()), Deadline: time.Minute}, c); err != nil {
		t.Fatal(err)
	}
	return c
}

// askCalls serves the reference server (with fault) and records the
// bodies of its ask tool's calls.
func askCalls(t *testing.T, fault string) (url string, calls func() []gjson.Result) {
	t.Helper()
	srv, err := refserver.New(refserver.Options{Fault: fault})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var mu sync.Mutex
	var got []gjson.Result
	url = serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if m := gjson.ParseBytes(body); m.Get("method").Str == "tools/call" && m.Get("params.name").Str == "ask" {
			mu.Lock()
			got = append(got, m)
			mu.Unlock()
		}
		srv.ServeHTTP(w, r)
	}))
	return url, func() []gjson.Result {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// TestRetryStateRounds: against the reference server, whose ask tool
// binds an HMAC of its arguments into the requestState, the tampered
// round (T-MRTR-5) and the replayed one (T-MRTR-6) are refused, and
// nothing is reported; with the faults that take such a state, the
// complete result warns (PRO1001), naming the rule, and never fails. Each
// second round is a retry as T-MRTR-10 binds a client: a new id, the
// elicitation declined.
func TestRetryStateRounds(t *testing.T) {
	for _, tc := range []struct {
		fixture, fault, rule string
	}{
		{"mrtr/state-tampered", "", ""},
		{"mrtr/state-tampered", "tampered-state-accepted", "T-MRTR-5"},
		{"mrtr/state-tampered", "replayed-state-accepted", ""}, // verifies the MAC: a tampered state still fails
		{"mrtr/state-replayed", "", ""},
		{"mrtr/state-replayed", "replayed-state-accepted", "T-MRTR-6"},
	} {
		t.Run(tc.fixture+"/"+variantOr(tc.fault), func(t *testing.T) {
			url, calls := askCalls(t, tc.fault)
			c := runMRTR(t, url, tc.fixture)
			cs := calls()
			if len(cs) != 3 {
				t.Fatalf("the ask tool was called %d times, want 3 (the call, the control round, the second round)", len(cs))
			}
			first, control, second := cs[0], cs[1], cs[2]
			if got, want := second.Get("params.requestState").Raw, control.Get("params.requestState").Raw; tc.fixture == "mrtr/state-replayed" && got != want {
				t.Errorf("the replayed state %s, want the control's %s", got, want)
			}
			if control.Get("id").Raw == second.Get("id").Raw || control.Get("id").Raw == first.Get("id").Raw {
				t.Errorf("the control round reuses an id (T-MRTR-10)")
			}
			if first.Get("id").Raw == second.Get("id").Raw {
				t.Errorf("the second round reuses id %s (T-MRTR-10)", second.Get("id").Raw)
			}
			if got, want := second.Get("params.inputResponses").Raw, `{"confirm":{"action":"decline"}}`; got != want {
				t.Errorf("inputResponses %s, want %s", got, want)
			}
			issued, sent := first.Get("params.requestState"), second.Get("params.requestState")
			if issued.Exists() {
				t.Errorf("the first round carries a requestState: %s", issued.Raw)
			}
			switch tc.fixture {
			case "mrtr/state-tampered":
				if got, want := second.Get("params.arguments").Raw, first.Get("params.arguments").Raw; got != want {
					t.Errorf("the tampered round's arguments %s, want the first's %s", got, want)
				}
				if sent.Type != gjson.String || len(sent.Str) < 20 || !strings.HasPrefix(sent.Str, "ask:confirm:v1.") {
					t.Errorf("the tampered round's requestState %s does not read as the issued one with one character changed", sent.Raw)
				}
			case "mrtr/state-replayed":
				if got := second.Get("params.arguments.subject"); got.Type != gjson.String {
					t.Errorf("the replayed round's arguments %s, want the first's {} with a subject", second.Get("params.arguments").Raw)
				}
			}
			judged := false
			for _, v := range c.verdicts {
				judged = judged || v.Fixture == tc.fixture+"/ask/retry"
			}
			if !judged {
				t.Fatal("the second round's reply was not judged")
			}
			ids, detail := c.bad()
			if tc.rule == "" {
				if len(ids) > 0 {
					t.Errorf("findings:\n%s", detail)
				}
				return
			}
			if !slices.Equal(ids, []string{"PRO1001"}) || !strings.Contains(detail, tc.rule) || !strings.Contains(detail, "complete result") {
				t.Errorf("checks that did not pass %v, want PRO1001 naming %s:\n%s", ids, tc.rule, detail)
			}
			for _, v := range c.verdicts {
				if v.Status != checks.StatusPass && v.Status != checks.StatusSkip && (v.Status != checks.StatusWarn || v.Fixture != tc.fixture+"/ask/retry") {
					t.Errorf("%s %s: %s, want only a warn of the second round", v.Fixture, v.Check.ID, v.Status)
				}
			}
		})
	}
}

func variantOr(fault string) string {
	if fault == "" {
		return "clean"
	}
	return fault
}

// TestRetryTamperFlips: the tampered state is the issued one with one
// character changed, deterministically, and still a JSON string: the
// letter or digit nearest the middle (at or after it first) turned into
// the next of its kind, so hex, Base64 and Base32 decode to other bytes;
// a state with none has its middle character replaced. Escapes in the
// issued state are read, not counted as characters.
func TestRetryTamperFlips(t *testing.T) {
	for _, tc := range []struct{ issued, want string }{
		{`"abcd"`, `"abdd"`},
		{`"ab9d"`, `"ab0d"`},
		{`"abZd"`, `"abAd"`},
		{`"ab-z"`, `"ab-a"`},
		{`"a.-.."`, `"b.-.."`},
		{`"--.."`, `"--x."`},
		{`"s\u0041\/x"`, `"sA/y"`},
		{`"é\"éé"`, `"é\"xé"`},
		{`"<ab>"`, `"<ac>"`},
	} {
		t.Run(tc.issued, func(t *testing.T) {
			var mu sync.Mutex
			var sent []string
			url := serveRefIntercepted(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				m := gjson.ParseBytes(body)
				if m.Get("method").Str != "tools/call" || m.Get("params.name").Str != "ask" {
					return false
				}
				mu.Lock()
				sent = append(sent, m.Get("params.requestState").Raw)
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if st := m.Get("params.requestState"); st.Exists() && st.Raw == tc.issued {
					// The control: the state as issued completes the call.
					io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.Get("id").Raw+`,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"i","version":"1"}},"content":[{"type":"text","text":"declined"}]}}`)
					return true
				}
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.Get("id").Raw+`,"result":{"resultType":"input_required","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"i","version":"1"}},"requestState":`+tc.issued+`,"inputRequests":{"e":{"method":"elicitation/create","params":{"mode":"form","message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}}}`)
				return true
			})
			c := runMRTR(t, url, "mrtr/state-tampered")
			if len(sent) != 3 {
				t.Fatalf("the ask tool was called %d times, want 3 (the call, the control, the tampered round)", len(sent))
			}
			if sent[1] != tc.issued {
				t.Errorf("the control's state %s, want the issued %s", sent[1], tc.issued)
			}
			if sent[2] != tc.want {
				t.Errorf("tampered state %s, want %s", sent[2], tc.want)
			}
			// A fresh input_required refuses the state: nothing to report.
			if ids, detail := c.bad(); len(ids) > 0 {
				t.Errorf("findings:\n%s", detail)
			}
		})
	}
}

// TestRetryStateNone: an input_required result without requestState
// leaves nothing to tamper with or replay: no second round, and a note
// says why.
func TestRetryStateNone(t *testing.T) {
	for _, tc := range []struct{ fixture, rule string }{
		{"mrtr/state-tampered", "T-MRTR-5"},
		{"mrtr/state-replayed", "T-MRTR-6"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			var mu sync.Mutex
			calls := 0
			url := serveRefIntercepted(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				m := gjson.ParseBytes(body)
				if m.Get("method").Str != "tools/call" || m.Get("params.name").Str != "ask" {
					return false
				}
				mu.Lock()
				calls++
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.Get("id").Raw+`,"result":{"resultType":"input_required","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"i","version":"1"}},"inputRequests":{"e":{"method":"elicitation/create","params":{"mode":"form","message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}}}`)
				return true
			})
			c := runMRTR(t, url, tc.fixture)
			if calls != 1 {
				t.Errorf("the ask tool was called %d times, want 1 (no second round)", calls)
			}
			noted := false
			for _, n := range c.notes {
				noted = noted || strings.Contains(n, "no requestState") && strings.Contains(n, tc.rule)
			}
			if !noted {
				t.Errorf("no note says the second round was not sent for want of a requestState (%s):\n%s", tc.rule, strings.Join(c.notes, "\n"))
			}
			if ids, detail := c.bad(); len(ids) > 0 {
				t.Errorf("findings:\n%s", detail)
			}
		})
	}
}

// TestRetryControlGates: a server that refuses or asks again on every
// declined second round, whatever the state (here: asks again), gets no
// tampered round, for its refusal would pass without the state ever
// checked (review rev22): the control round is judged, a note says why
// the tampered one was not sent, and T-MRTR-5 is not passed.
func TestRetryControlGates(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	url := serveRefIntercepted(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		m := gjson.ParseBytes(body)
		if m.Get("method").Str != "tools/call" || m.Get("params.name").Str != "ask" {
			return false
		}
		mu.Lock()
		calls++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.Get("id").Raw+`,"result":{"resultType":"input_required","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"i","version":"1"}},"requestState":"s1","inputRequests":{"e":{"method":"elicitation/create","params":{"mode":"form","message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}}}`)
		return true
	})
	c := runMRTR(t, url, "mrtr/state-tampered")
	if calls != 2 {
		t.Errorf("the ask tool was called %d times, want 2 (the call and the control)", calls)
	}
	noted, tampered := false, false
	for _, n := range c.notes {
		noted = noted || strings.Contains(n, "the control round") && strings.Contains(n, "the server asked again")
	}
	for _, v := range c.verdicts {
		tampered = tampered || v.Fixture == "mrtr/state-tampered/ask/retry"
	}
	if !noted || tampered {
		t.Errorf("note %v, tampered round judged %v; want the note and no tampered round:\n%s", noted, tampered, strings.Join(c.notes, "\n"))
	}
}
