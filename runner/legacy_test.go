package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
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
	"github.com/wymcp/wymcp-check/transport"
)

// TestServer20250326: a server that speaks only 2025-03-26 is judged,
// not refused: the run negotiates it, reports it as the version, judges
// it under 2025-06-18's rules, and says what it skipped. The reference
// server in that mode keeps every rule, so nothing fails or warns.
func TestServer20250326(t *testing.T) {
	// (--protocol 2025-06-18, answered 2025-03-26: the session speaks
	// 2025-03-26 all the same, and its exceptions hold.)
	for _, protocol := range []string{"auto", envelope.V20250326, envelope.V20250618} {
		t.Run(protocol, func(t *testing.T) {
			// The version header carries the negotiated version (a
			// server that serves both reads it, T-HTTP-7), never the
			// version whose rules judge the run.
			var mu sync.Mutex
			headers := map[string]int{}
			hs := refHTTP(t, refserver.Options{Only20250326: true}, func(srv http.Handler) http.HandlerFunc {
				return func(w http.ResponseWriter, req *http.Request) {
					mu.Lock()
					headers[req.Header.Get("MCP-Protocol-Version")]++
					mu.Unlock()
					srv.ServeHTTP(w, req)
				}
			})
			c, res, err := httpRun(t, hs.URL+"/mcp", protocol, 0, time.Second)
			if err != nil {
				t.Fatalf("a 2025-03-26 server was not driven: %v", err)
			}
			if res.Version != envelope.V20250326 || res.Facts.Version != envelope.V20250618 {
				t.Errorf("version %q judged as %q, want 2025-03-26 judged as 2025-06-18", res.Version, res.Facts.Version)
			}
			if ids, detail := c.bad(); len(ids) > 0 {
				t.Errorf("the 2025-03-26 reference server drew findings:\n%s", detail)
			}
			mu.Lock()
			if headers[envelope.V20250326] == 0 || headers[envelope.V20250618] > 0 {
				t.Errorf("MCP-Protocol-Version headers sent (value: requests) = %v, want 2025-03-26 and never 2025-06-18", headers)
			}
			mu.Unlock()
			said := strings.Join(c.notes, "\n")
			if !strings.Contains(said, "skipped: SCH1003") {
				t.Errorf("the notes do not say what was skipped:\n%s", said)
			}
			// Batches are allowed in 2025-03-26 (T-V0326-1): sent and
			// judged, and the reference server's refusal of the whole
			// batch with one error passes.
			batch := false
			for _, v := range c.verdicts {
				if v.Fixture == "rpc/batch" && v.Check.ID == "RPC1001" && v.Status == checks.StatusPass {
					batch = true
				}
			}
			if !batch {
				t.Error("rpc/batch was not judged (RPC1001 pass) for 2025-03-26 (T-V0326-1)")
			}
			// Sessions are 2025-03-26's too (T-SESS-2): only the version
			// header's own fixture is not judged, not every fixture that
			// carries the header (session/missing-header was skipped).
			judged := map[string]bool{}
			for _, v := range c.verdicts {
				if v.Status != checks.StatusSkip {
					judged[v.Fixture] = true
				}
			}
			if !judged["session/missing-header"] || judged["version/bad-header"] {
				t.Errorf("judged session/missing-header %v (want true), version/bad-header %v (want false)", judged["session/missing-header"], judged["version/bad-header"])
			}
		})
	}
}

// TestServer20241105: a server that answers initialize with 2024-11-05
// only is not judged, and the run says why in the server's own terms: the
// version it answered, and those the checker judges. (It was "a result
// with protocolVersion, capabilities, serverInfo".)
func TestServer20241105(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		w.Header().Set("Content-Type", "application/json")
		id := gjson.GetBytes(body, "id").Raw
		if gjson.GetBytes(body, "method").Str != "initialize" || id == "" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"initialize first"}}`)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}`, id)
	}))
	t.Cleanup(hs.Close)
	_, _, err := httpRun(t, hs.URL, "", 0, time.Second)
	if err == nil || !errors.Is(err, runner.ErrNotDriven) || !strings.Contains(err.Error(), `protocol version "2024-11-05", which the checker does not judge (initialize may settle on 2025-11-25, 2025-06-18, 2025-03-26)`) {
		t.Errorf("err = %v; want not driven, naming the version the server answered", err)
	}
}

// TestLegacySSEServer: an endpoint of the old HTTP+SSE transport refuses
// the POST and names its message endpoint on a GET stream: the run says
// that is what it found, not "is this the URL of the MCP endpoint?". The
// twin refuses GET too, and keeps that question.
func TestLegacySSEServer(t *testing.T) {
	for _, legacy := range []bool{true, false} {
		t.Run(fmt.Sprint("legacy=", legacy), func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if req.Method != http.MethodGet || !legacy {
					w.WriteHeader(http.StatusNotFound)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: endpoint\ndata: /messages?sessionId=abc\n\n")
				w.(http.Flusher).Flush()
				<-req.Context().Done()
			}))
			t.Cleanup(hs.Close)
			_, _, err := httpRun(t, hs.URL+"/sse", "", 0, 5*time.Second)
			says := err != nil && strings.Contains(err.Error(), "HTTP+SSE transport of 2024-11-05") && strings.Contains(err.Error(), "/messages?sessionId=abc")
			asks := err != nil && strings.Contains(err.Error(), "is this the URL of the MCP endpoint")
			if says != legacy || asks == legacy {
				t.Errorf("err = %v; want it to say legacy HTTP+SSE: %v", err, legacy)
			}
		})
	}
}

// TestForced20250326AnsweredNewer: --protocol 2025-03-26 against a server
// that answers initialize with 2025-06-18 runs under 2025-06-18's rules
// (2025-03-26 has no rule set of its own), with nothing "could not
// judge"; it broke the run when the 2025-03-26 mapping followed only the
// answer.
func TestForced20250326AnsweredNewer(t *testing.T) {
	// A server that answers its own newest version whatever is asked.
	hs := answeringInitialize(t, envelope.V20250326, envelope.V20250618)
	c, res, err := httpRun(t, hs.URL+"/mcp", envelope.V20250326, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Facts.Version != envelope.V20250618 {
		t.Errorf("judged under %q, want 2025-06-18", res.Facts.Version)
	}
	for _, v := range c.verdicts {
		if v.Status == checks.StatusError {
			t.Errorf("%s %s: error (%s)", v.Fixture, v.Check.ID, v.Reason)
		}
	}
}

// TestForcedAnsweredOther: --protocol 2025-11-25 against a server that
// answers initialize with 2025-06-18, another version it serves (as
// T-LIFE-2 lets it): the session speaks 2025-06-18 and is judged by its
// rules, with a note; judged by 2025-11-25's, a helper's server drew
// false fails (a foreign Origin refused 400, which 2025-06-18 allows).
func TestForcedAnsweredOther(t *testing.T) {
	// A server that serves 2025-06-18 and nothing newer.
	hs := answeringInitialize(t, envelope.V20251125, envelope.V20250618)
	c, res, err := httpRun(t, hs.URL+"/mcp", envelope.V20251125, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Facts.Version != envelope.V20250618 {
		t.Errorf("judged under %q, want 2025-06-18, the version the server answered", res.Facts.Version)
	}
	if ids, detail := c.bad(); len(ids) > 0 {
		t.Errorf("the reference server speaking 2025-06-18 drew findings:\n%s", detail)
	}
	if said := strings.Join(c.notes, "\n"); !strings.Contains(said, "the server answered initialize with 2025-06-18") {
		t.Errorf("no note says the session speaks another version than asked:\n%s", said)
	}
}

// answeringInitialize is the reference server behind a front that turns
// an initialize asking asked into one asking answered, so the server
// answers that version; and its answer naming asked to any other
// initialize into answered, so it never serves asked (T-LIFE-2: a server
// that answered another version to asked does not serve it).
func answeringInitialize(t *testing.T, asked, answered string) *httptest.Server {
	return refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			initialize := gjson.GetBytes(body, "method").Str == "initialize"
			if initialize {
				body = bytes.Replace(body, []byte(`"protocolVersion":"`+asked+`"`), []byte(`"protocolVersion":"`+answered+`"`), 1)
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.ContentLength = int64(len(body))
			if !initialize {
				srv.ServeHTTP(w, req)
				return
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			out := bytes.Replace(rec.Body.Bytes(), []byte(`"protocolVersion":"`+asked+`"`), []byte(`"protocolVersion":"`+answered+`"`), 1)
			maps.Copy(w.Header(), rec.Header())
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			w.Write(out)
		}
	})
}

// TestForced2026NeedsDiscover: --protocol 2026-07-28 against a server
// whose server/discover fails (a 2025-only one, here refusing it as a
// version it does not speak) is not driven, as a forced 2025 version the
// server does not answer is not: judged by 2026-07-28's rules, every
// refusal it makes failed for what it is not. The twin, a server that
// serves 2026-07-28, is driven.
func TestForced2026NeedsDiscover(t *testing.T) {
	legacy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Protocol version mismatch"}}`)
	}))
	t.Cleanup(legacy.Close)
	_, _, err := httpRun(t, legacy.URL, envelope.V20260728, 0, time.Second, "lifecycle/ping")
	if err == nil || !errors.Is(err, runner.ErrNotDriven) || !strings.Contains(err.Error(), "did not confirm it serves 2026-07-28 (server/discover: HTTP 400") {
		t.Errorf("err = %v; want not driven, naming server/discover's answer", err)
	}
	srv, err := refserver.New(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	modern := httptest.NewServer(srv)
	t.Cleanup(modern.Close)
	if _, res, err := httpRun(t, modern.URL, envelope.V20260728, 0, time.Second, "lifecycle/ping"); err != nil || res.Version != envelope.V20260728 {
		t.Errorf("the reference server, forced to 2026-07-28: %+v, %v", res, err)
	}
}

// TestAutoAsks20250326: a server that answers initialize with
// 2024-11-05 unless asked for 2025-03-26 (strowk/foxy-contexts does) is
// negotiated in auto mode as it is with --protocol 2025-03-26: the third
// initialize asks for that version. It was not driven at all (exit 3).
func TestAutoAsks20250326(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		id := gjson.GetBytes(body, "id").Raw
		if id == "" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch v := gjson.GetBytes(body, "params.protocolVersion").Str; {
		case gjson.GetBytes(body, "method").Str != "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
		case v == envelope.V20250326:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}`, id)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}`, id)
		}
	}))
	t.Cleanup(hs.Close)
	_, res, err := httpRun(t, hs.URL, "", 0, time.Second, "lifecycle/ping")
	if err != nil || res.Version != envelope.V20250326 {
		t.Errorf("auto: %+v, %v; want 2025-03-26 negotiated", res, err)
	}
}

// TestAutoAsksVersionTheRefusalNames: a server that serves 2025-03-26
// alone and refuses the other versions with -32602 and data.supported
// naming it (the spec's own example of the refusal) is negotiated at
// 2025-03-26: the refusal names it. It was not driven (exit 3). Its twin
// names no version the checker negotiates, and is not driven, the
// reason quoting what it said it serves.
func TestAutoAsksVersionTheRefusalNames(t *testing.T) {
	for _, tc := range []struct {
		supported string
		driven    bool
	}{{`["2025-03-26"]`, true}, {`["2024-11-05"]`, false}} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			id := gjson.GetBytes(body, "id").Raw
			if id == "" {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			switch v := gjson.GetBytes(body, "params.protocolVersion").Str; {
			case gjson.GetBytes(body, "method").Str != "initialize":
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
			case v == envelope.V20250326 && tc.driven:
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}`, id)
			default:
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Unsupported protocol version","data":{"supported":%s,"requested":%q}}}`, id, tc.supported, v)
			}
		}))
		_, res, err := httpRun(t, hs.URL, "", 0, time.Second, "lifecycle/ping")
		hs.Close()
		switch {
		case tc.driven && (err != nil || res.Version != envelope.V20250326):
			t.Errorf("supported %s: %+v, %v; want 2025-03-26 negotiated", tc.supported, res, err)
		case !tc.driven && (err == nil || !strings.Contains(err.Error(), `supported ["2024-11-05"]`)):
			t.Errorf("supported %s: %v; want not driven, quoting what it serves", tc.supported, err)
		}
	}
}

// TestStdioFallbackInFreshProcess: over stdio each initialize of the
// version fallback goes to a fresh process. A server that answers its
// oldest version unless asked 2025-03-26, and refuses a second
// initialize in one process (as it may), was asked the fallback in the
// process that took the first, refused it, and was not driven (exit 3);
// over HTTP each initialize opens a session of its own and it was.
func TestStdioFallbackInFreshProcess(t *testing.T) {
	t.Setenv(ignoringEnv, "1")
	t.Setenv(quirkEnv, "older-once")
	target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return f.ID != "lifecycle/ping" })
	res, err := runner.Run(context.Background(), target, runner.Options{Fixtures: fx, Contract: envelope.Strict(), Deadline: time.Minute, Parallel: 8}, &rows{})
	if err != nil || res.Version != envelope.V20250326 {
		t.Errorf("%+v, %v; want 2025-03-26 negotiated", res, err)
	}
}

// batchOneEnv makes the stdio reference server speak 2025-03-26 only
// and write each response as a batch of one.
const batchOneEnv = "WYMCP_RUNNER_BATCH_ONE"

// batchOne writes each response line it is given as a batch of one, as
// a 2025-03-26 server may (T-V0326-1); other lines go through as they
// are, and so does an error with a null id (a batch refused whole is
// answered by one error object, JSON-RPC §6).
type batchOne struct {
	w   io.Writer
	buf []byte
}

func (b *batchOne) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := b.buf[:i]
		if batchOneOf(line) {
			line = append(append([]byte("["), line...), ']')
		}
		if _, err := b.w.Write(append(line, '\n')); err != nil {
			return 0, err
		}
		b.buf = b.buf[i+1:]
	}
}

// batchOneOf: a response batchOne writes as a batch of one.
func batchOneOf(line []byte) bool {
	r := gjson.ParseBytes(line)
	return r.IsObject() && !r.Get("method").Exists() && r.Get("id").Type != gjson.Null
}

// TestBatchOneReplies20250326: a 2025-03-26 server that answers every
// single request with a batch of one, over stdio and over HTTP, is
// driven and judged: each response is read inside its batch, RPC1001
// warns of the batch (JSON-RPC §5), and nothing else is found. Before,
// the negotiation found no response and the run was not driven.
func TestBatchOneReplies20250326(t *testing.T) {
	check := func(t *testing.T, c *collect) {
		t.Helper()
		warned := 0
		var other []string
		for _, v := range c.verdicts {
			switch {
			case v.Status == checks.StatusPass || v.Status == checks.StatusSkip:
			case v.Check.ID == "RPC1001" && v.Status == checks.StatusWarn && strings.Contains(v.Findings[0].Message, "inside a JSON array"):
				warned++
			default:
				other = append(other, fmt.Sprintf("%s %s %s %v", v.Fixture, v.Check.ID, v.Status, v.Findings))
			}
		}
		if warned < 20 || len(other) > 0 {
			t.Errorf("RPC1001 warned of %d batches of one (want 20 or more); other findings:\n%s", warned, strings.Join(other, "\n"))
		}
	}
	t.Run("stdio", func(t *testing.T) {
		t.Setenv(batchOneEnv, "1")
		check(t, runStdio(t, "", "auto"))
	})
	t.Run("http", func(t *testing.T) {
		hs := refHTTP(t, refserver.Options{Only20250326: true}, func(srv http.Handler) http.HandlerFunc {
			return func(w http.ResponseWriter, req *http.Request) {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				body := rec.Body.Bytes()
				if envelope.MediaType(rec.Header().Get("Content-Type")) == "application/json" && batchOneOf(body) {
					body = append(append([]byte("["), bytes.TrimSpace(body)...), ']')
					rec.Header().Del("Content-Length")
				}
				maps.Copy(w.Header(), rec.Header())
				w.WriteHeader(rec.Code)
				w.Write(body)
			}
		})
		c, res, err := httpRun(t, hs.URL+"/mcp", "auto", 0, time.Second)
		if err != nil || res.Version != envelope.V20250326 {
			t.Fatalf("version %q, err %v; want 2025-03-26 driven", res.Version, err)
		}
		check(t, c)
	})
}

// TestSessionEndedRenewed: a 2025 server may end a session at any time
// (T-SESS-5) and answers 404 in it after (T-SESS-3); the run then begins
// a new session, as a client does, and sends the fixture again in it.
// The server here ends each session after its 25th request: the whole
// corpus is judged clean, in sequence and side by side, and the notes
// say what the run did. Before, every fixture after the end was judged
// on its 404 (warns, and a fail where another reading of the request
// came first).
func TestSessionEndedRenewed(t *testing.T) {
	for _, parallel := range []int{1, 8} {
		t.Run(fmt.Sprint("parallel=", parallel), func(t *testing.T) {
			var mu sync.Mutex
			served := map[string]int{}
			hs := refHTTP(t, refserver.Options{}, func(srv http.Handler) http.HandlerFunc {
				return func(w http.ResponseWriter, req *http.Request) {
					sid := req.Header.Get("Mcp-Session-Id")
					mu.Lock()
					if sid != "" && req.Method == http.MethodPost {
						served[sid]++
					}
					ended := served[sid] > 25
					mu.Unlock()
					if ended {
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusNotFound)
						io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"session not found"}}`)
						return
					}
					srv.ServeHTTP(w, req)
				}
			})
			c, res, err := httpRun(t, hs.URL+"/mcp", envelope.V20251125, parallel, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if ids, detail := c.bad(); len(ids) > 0 {
				t.Errorf("a server that ends its sessions drew findings:\n%s", detail)
			}
			if !slices.ContainsFunc(c.notes, func(n string) bool { return strings.Contains(n, "the run began a new session") }) {
				t.Errorf("no note says the session was renewed: %q", c.notes)
			}
			if res.Version != envelope.V20251125 {
				t.Errorf("version %q", res.Version)
			}
		})
	}
}

// TestDiscoverRefutingItselfIsJudged: a server that refuses
// server/discover for 2026-07-28 with -32022 whose data.supported lists
// 2026-07-28, and refuses every initialize, cannot be driven; but its
// discover reply proves it wrong by itself (ERR3004), so that probe is
// judged, not only recorded. The same refusal naming only another version
// is no proof: nothing is judged there (the run stays not driven).
func TestDiscoverRefutingItselfIsJudged(t *testing.T) {
	for _, tc := range []struct {
		supported string
		wantFail  bool
	}{
		{`["2026-07-28"]`, true},
		{`["2027-01-01"]`, false},
	} {
		t.Run(tc.supported, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				body, _ := io.ReadAll(req.Body)
				id := gjson.GetBytes(body, "id").Raw
				w.Header().Set("Content-Type", "application/json")
				if gjson.GetBytes(body, "method").Str == "server/discover" {
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":%s,"requested":"2026-07-28"}}}`, id, tc.supported)
					return
				}
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":%s,"requested":"2025-11-25"}}}`, id, tc.supported)
			}))
			t.Cleanup(hs.Close)
			c, _, err := httpRun(t, hs.URL, "auto", 0, time.Second, "lifecycle/ping")
			if err == nil || !errors.Is(err, runner.ErrNotDriven) {
				t.Fatalf("err = %v; want not driven", err)
			}
			failed := false
			for _, v := range c.verdicts {
				if v.Fixture == "negotiate/discover" && v.Check.ID == "ERR3004" && v.Status == checks.StatusFail {
					failed = true
				}
			}
			if failed != tc.wantFail {
				_, detail := c.bad()
				t.Errorf("ERR3004 failed negotiate/discover: %v, want %v; findings:\n%s", failed, tc.wantFail, detail)
			}
		})
	}
}

// TestMalformedInitializeIsJudged: a server whose every initialize reply
// is no HTTP/1.1 message (a control character in Mcp-Session-Id) cannot
// be driven, but each such reply is the server's fault in any version:
// HTTP1006 fails it, as lint of the recording does. The same reply
// well-formed, naming a version the checker does not negotiate, proves
// nothing: it stays unjudged.
func TestMalformedInitializeIsJudged(t *testing.T) {
	for _, tc := range []struct {
		session  string
		wantFail bool
	}{
		{"ab\x01c", true},
		{"abc", false},
	} {
		t.Run(tc.session, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				body, _ := io.ReadAll(req.Body)
				id := gjson.GetBytes(body, "id").Raw
				if gjson.GetBytes(body, "method").Str != "initialize" {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
					return
				}
				reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, id)
				conn, buf, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				defer conn.Close()
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", tc.session, len(reply), reply)
				buf.Flush()
			}))
			t.Cleanup(hs.Close)
			c, _, err := httpRun(t, hs.URL, "auto", 0, time.Second, "lifecycle/ping")
			if err == nil || !errors.Is(err, runner.ErrNotDriven) {
				t.Fatalf("err = %v; want not driven", err)
			}
			failed := 0
			for _, v := range c.verdicts {
				if strings.HasPrefix(v.Fixture, "negotiate/initialize") && v.Check.ID == "HTTP1006" && v.Status == checks.StatusFail {
					failed++
				}
			}
			if (failed > 0) != tc.wantFail {
				_, detail := c.bad()
				t.Errorf("HTTP1006 failed %d initialize probes, want a fail: %v; findings:\n%s", failed, tc.wantFail, detail)
			}
		})
	}
}
