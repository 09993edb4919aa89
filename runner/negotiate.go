package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// A probe is a negotiation exchange, judged once the facts it reveals
// are known: its verdict depends on what the server turned out to speak.
type probe struct {
	fixture string
	ex      envelope.Exchange
	o       *expect.Override
}

// negotiate settles the protocol version (digest §1 and T-COMPAT-4):
// with "auto", probe server/discover (2026-07-28), else initialize with
// 2025-11-25, then 2025-06-18. Every probe is judged and recorded, under
// the version the server turned out to speak: a legacy server may answer
// server/discover with any error or not at all (T-COMPAT-4), which is
// then no finding.
func (r *run) negotiate(ctx context.Context) (Result, error) {
	if v := r.o.Protocol; v != "" && v != "auto" {
		r.warm(v)
	}
	var probes []probe
	var res Result
	facts, err := r.settle(ctx, &probes, &res)
	if facts != nil {
		if h, ok := r.t.(*HTTPTarget); ok {
			facts.Local = h.Local()
		}
		r.facts = facts
		r.sink.Facts(facts)
	}
	for i := range probes {
		pr := &probes[i]
		if pr.fixture == "negotiate/discover" && noDiscoverResult(&pr.ex) {
			// A result is the modern answer (a legacy server answers with
			// an error or not at all, T-COMPAT-4), and this one lacks
			// what every DiscoverResult carries: 2026-07-28's to judge,
			// whatever the run went on to negotiate.
			pr.ex.Version = envelope.V20260728
			if jerr := r.judge(pr.fixture, &pr.ex, nil, nil); jerr != nil {
				return res, jerr
			}
			continue
		}
		if err != nil && pr.fixture == "negotiate/discover" && (refutesItself(&pr.ex) || modernDiscoverResult(&pr.ex) || arrayReply(&pr.ex)) {
			// The reply proves the server wrong by itself, whatever
			// version it speaks, or is a 2026-07-28 result by its own
			// form (one whose supportedVersions leaves 2026-07-28 out:
			// PRO1007 judges it, review rev81): judged by 2026-07-28's
			// rules, which it claims, though nothing else could be.
			pr.ex.Version = envelope.V20260728
			o := pr.o
			if modernDiscoverResult(&pr.ex) {
				o = nil // not a legacy server's answer (T-COMPAT-4)
			}
			if jerr := r.judge(pr.fixture, &pr.ex, nil, o); jerr != nil {
				return res, jerr
			}
			continue
		}
		if err != nil && pr.ex.Malformed != "" {
			// A reply no client can read is the server's fault in any
			// version (HTTP1006), and nothing else of it is judged.
			if jerr := r.judge(pr.fixture, &pr.ex, nil, pr.o); jerr != nil {
				return res, jerr
			}
			continue
		}
		if err != nil && notJSONLines(&pr.ex) {
			// Lines on stdout that are no JSON at all (a raw line break
			// inside a string, a banner) break the stdio framing in any
			// version (T-STDIO-1, T-STDIO-2): the server's finding
			// (RPC1001), judged as silence besides, not "nothing"
			// (review rev63).
			ex := pr.ex
			if !ex.Response.Truncated {
				// (Cut at the checker's bound, the failure stays: the
				// lines before the bound are judged, and the response
				// the bound withheld is could not judge; review rev68.)
				ex.Failure, ex.Unanswered = "", false
			}
			if jerr := r.judge(pr.fixture, &ex, nil, pr.o); jerr != nil {
				return res, jerr
			}
			continue
		}
		if err != nil {
			// Nothing was negotiated, so nothing is judged; the probes are
			// still handed on, so a --record shows what the server said.
			if jerr := r.sink.Exchange(Judged{Fixture: pr.fixture, Exchange: &pr.ex, Override: pr.o, Unjudged: err.Error()}); jerr != nil {
				return res, jerr
			}
			continue
		}
		if facts != nil && pr.ex.Version != facts.Version {
			pr.ex.Version = facts.Version
		}
		if jerr := r.judge(pr.fixture, &pr.ex, nil, pr.o); jerr != nil {
			return res, jerr
		}
	}
	return res, err
}

// notJSONLines: a stdio probe's reply holds a line that is no JSON at
// all, which no version allows on stdout.
func notJSONLines(ex *envelope.Exchange) bool {
	if ex.Transport != envelope.Stdio || ex.Response == nil || ex.Died != "" {
		return false
	}
	msgs := ex.Response.Messages
	if ex.Response.Truncated && len(msgs) > 0 {
		// The last line the checker's own bound cut is no JSON by that
		// cut, not the server's (review rev67).
		msgs = msgs[:len(msgs)-1]
	}
	for _, m := range msgs {
		if len(bytes.TrimSpace(m)) > 0 && !gjson.ValidBytes(m) {
			return true
		}
	}
	return false
}

// refutesItself: server/discover was refused with -32022, unsupported
// version, whose own data.supported lists 2026-07-28, the version it
// asked for: the error says the version is not served and, in the same
// breath, that it is (ERR3004).
func refutesItself(ex *envelope.Exchange) bool {
	m := reply(ex, nil)
	if m.Get("error.code").Int() != envelope.CodeUnsupportedVer {
		return false
	}
	return envelope.Lists(m.Get("error.data.supported"), envelope.V20260728)
}

// noDiscoverResult: server/discover was answered with a result that has
// no supportedVersions list (none, or not an array), which a
// DiscoverResult must carry (T-LIFE-8), and that shows itself a
// 2026-07-28 result by a member no earlier version has (resultType, the
// cache fields, serverInfo in _meta): a modern server's answer, broken
// (review rev21). A result without such a member (a legacy catch-all's
// {}) stays a legacy server's answer (review rev22).
func noDiscoverResult(ex *envelope.Exchange) bool {
	m := reply(ex, nil)
	res := m.Get("result")
	if m.Get("error").Exists() || res.Get("supportedVersions").IsArray() {
		return false
	}
	return modernForm(res)
}

// arrayReply: the reply to the request, one message, came as a JSON
// array: a batch answers only a batch, in any version (review rev84: a
// 2026-07-28 server's discover result in an array, with --protocol
// 2026-07-28, was not judged at all).
func arrayReply(ex *envelope.Exchange) bool {
	if ex.Response == nil {
		return false
	}
	lines := ex.Response.Messages
	if len(lines) == 0 {
		lines = [][]byte{ex.Response.Body}
	}
	for _, l := range lines {
		if gjson.ParseBytes(bytes.TrimSpace(l)).IsArray() {
			return true
		}
	}
	return false
}

// modernDiscoverResult: server/discover was answered with a result that
// lists its versions and shows itself a 2026-07-28 result by its form
// (see modernForm).
func modernDiscoverResult(ex *envelope.Exchange) bool {
	m := reply(ex, nil)
	res := m.Get("result")
	return !m.Get("error").Exists() && res.Get("supportedVersions").IsArray() && modernForm(res)
}

// modernForm: a result object with a member no version before
// 2026-07-28 has (resultType, the cache fields, serverInfo in _meta).
func modernForm(res gjson.Result) bool {
	if !res.IsObject() {
		return false
	}
	for _, k := range []string{"resultType", "ttlMs", "cacheScope", `_meta.io\.modelcontextprotocol/serverInfo`} {
		if res.Get(k).Exists() {
			return true
		}
	}
	return false
}

// warm has the schemas of a version the negotiation is about to settle
// on compiled beside its round trips: the probes' replies are judged as
// soon as it is settled, and compiling the schemas then (about 20 ms)
// held up every fixture. Only the version about to be asked is
// compiled: a run is short of CPU more often than of time, and one
// compiled for nothing costs as much as it saves.
func (r *run) warm(version string) {
	if w, ok := r.o.Schemas.(checks.Warmer); ok {
		w.Warm(version)
	}
}

// settle runs the probes and returns the facts they established.
func (r *run) settle(ctx context.Context, probes *[]probe, res *Result) (*expect.Facts, error) {
	switch v := r.o.Protocol; v {
	case "", "auto":
	case envelope.V20260728:
		ex, ok := r.discover(ctx)
		*probes = append(*probes, probe{fixture: "negotiate/discover", ex: ex})
		r.sess.version = v
		if !ok {
			// Every 2026-07-28 server answers server/discover (T-LIFE-8):
			// one that does not speaks another version, or none, and its
			// replies judged by 2026-07-28's rules would fail for what
			// they are not (as a forced 2025 version a server does not
			// answer is not driven either).
			// (With what the user can do about an answer that is no MCP
			// endpoint's, as auto says it: review rev89.)
			return nil, errorf("--protocol %s: the server did not confirm it serves %s (server/discover: %s)%s; --protocol auto judges the version it speaks", v, v, why(&ex), hint(&ex))
		}
		*res = Result{Version: v, Negotiated: "forced with --protocol; server/discover confirms it"}
		return discoverFacts(&ex, res.Negotiated), nil
	default:
		f, err := r.initialize(ctx, v, true, probes)
		if err != nil {
			return nil, err
		}
		*res = Result{Version: f.Speaks(), Negotiated: f.Negotiated}
		return f, nil
	}

	ex, ok := r.discover(ctx)
	if !ok {
		r.warm(envelope.V20251125) // what initialize asks for first
	}
	if ok {
		*probes = append(*probes, probe{fixture: "negotiate/discover", ex: ex})
		*res = Result{Version: envelope.V20260728, Negotiated: "auto: server/discover lists 2026-07-28"}
		return discoverFacts(&ex, res.Negotiated), nil
	}
	if ex.Failure != "" && ex.Response == nil && !ex.Unanswered && r.t.Transport() == envelope.HTTP {
		// Nothing answered at all: there is no server to negotiate with.
		*probes = append(*probes, probe{fixture: "negotiate/discover", ex: ex})
		return nil, errorf("server/discover: %s", ex.Failure)
	}
	// A legacy server: it may answer server/discover with any error, or
	// ignore it (T-COMPAT-4); that it then negotiates shows it alive.
	legacy := expect.LegacyDiscover("server/discover, which the legacy version the server negotiated does not define")
	discovered := why(&ex) // before a silence becomes a note below
	cut := ex.Response == nil && ex.Failure != ""
	r.sink.Note("server/discover did not confirm 2026-07-28 (" + discovered + "); trying initialize")
	if died, _ := r.t.Died(); died {
		*probes = append(*probes, probe{fixture: "negotiate/discover", ex: ex, o: legacy})
		if err := r.t.Restart(ctx); err != nil {
			return nil, errorf("restarting after server/discover: %v", err)
		}
	} else {
		if ex.Unanswered {
			ex.Note = ex.Failure + " (T-COMPAT-4 lets a legacy server ignore server/discover)"
			ex.Failure, ex.Unanswered = "", false
			r.stale = false
		}
		*probes = append(*probes, probe{fixture: "negotiate/discover", ex: ex, o: legacy})
	}
	f, err := r.initialize(ctx, envelope.V20251125, false, probes)
	if err != nil {
		if ps := *probes; cut && len(ps) > 0 && ps[len(ps)-1].ex.Refused {
			// The connection broke on server/discover and nothing has
			// listened since: the server went away on the probe, which
			// the user must see first (not a wrong URL).
			return nil, errorf("the server stopped accepting connections after server/discover, which it answered with nothing (%s): it may have crashed on it (then %s)", discovered, strings.TrimPrefix(err.Error(), ErrNotDriven.Error()+": "))
		}
		// Say everything the server did answer: a report reader must see
		// why no version was agreed.
		return nil, fmt.Errorf("%w; server/discover: %s", err, discovered)
	}
	*res = Result{Version: f.Speaks(), Negotiated: f.Negotiated}
	return f, nil
}

// skipped20250326 says what a 2025-03-26 run does not judge, and why.
func skipped20250326() []string {
	return []string{
		"SCH1003 (2025-03-26 has no structuredContent, T-V0326-4)",
		"the MCP-Protocol-Version header fixtures (the header came with 2025-06-18, T-V0326-2)",
	}
}

// later20250326 says why a fixture depends on a version after 2025-03-26
// ("" when it does not): one that probes the MCP-Protocol-Version header
// says so by citing T-V0326-2, the rule that 2025-03-26 has none. (A
// fixture may cite T-HTTP-7 for the header it merely carries, as
// session/missing-header does: it was skipped, and the session rule
// it probes, which 2025-03-26 has, went unjudged.)
func later20250326(rules []string) string {
	for _, r := range rules {
		switch r {
		case "T-V0326-2":
			return "the server speaks 2025-03-26, which has no MCP-Protocol-Version header (T-V0326-2): not judged"
		}
	}
	return ""
}

// discoverFacts reads what a DiscoverResult declares.
func discoverFacts(ex *envelope.Exchange, how string) *expect.Facts {
	m := reply(ex, nil)
	f := &expect.Facts{Version: envelope.V20260728, Negotiated: how}
	for _, v := range m.Get("result.supportedVersions").Array() {
		if v.Type == gjson.String {
			f.Supported = append(f.Supported, v.Str)
		}
	}
	if c := m.Get("result.capabilities"); c.IsObject() {
		f.Capabilities = json.RawMessage(c.Raw)
	}
	return f
}

// why says, for a note, what an exchange that did not do what was hoped
// did instead: the checker's failure, or what the server answered.
func why(ex *envelope.Exchange) string {
	switch {
	case ex.Failure != "":
		if ex.Response != nil {
			// On stdio what came instead of a response is lines: one
			// that is not JSON at all (a banner, a log line on stdout)
			// is what the user must see, quoted.
			// The last line of a reply the checker's own bound cut is
			// the checker's doing, not the server's: never name it.
			msgs := ex.Response.Messages
			if n := len(msgs); n > 0 && ex.Response.Truncated {
				msgs = msgs[:n-1]
			}
			for _, d := range msgs {
				if !gjson.ValidBytes(d) {
					return ex.Failure + ", the first not JSON: " + checks.Quote(string(d), noteQuoteN)
				}
			}
		}
		return ex.Failure
	case ex.Malformed != "":
		// A reply came, which no client can read: the server's to mend.
		return "a reply that is no HTTP/1.1 message: " + ex.Malformed
	case ex.Response == nil:
		return "no reply"
	}
	var parts []string
	if ex.Transport == envelope.HTTP || ex.Transport == "" && ex.Response.Status != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", ex.Response.Status))
	}
	m := reply(ex, nil)
	hidden := ""
	if envelope.IsEventStream(envelope.HeaderGet(ex.Response.Header, "Content-Type")) {
		hidden = envelope.HiddenResponse(ex.Response.Body) // read once, named below
	}
	switch {
	case m.Get("error").Exists():
		parts = append(parts, fmt.Sprintf("error %s %s", clipRaw(m.Get("error.code").Raw), checks.Quote(m.Get("error.message").Str, noteQuoteN)))
		if s := m.Get("error.data.supported"); s.IsArray() {
			// What the server says it serves tells the user which
			// --protocol to try.
			parts = append(parts, "supported "+clipRaw(s.Raw))
		}
	case m.Get("result.protocolVersion").Type == gjson.String && !slices.Contains(negotiable, m.Get("result.protocolVersion").Str):
		// The version a server answered is what a person needs to know:
		// one older than 2025-03-26 is not judged, and 2026-07-28 is not
		// negotiated by initialize.
		v := m.Get("result.protocolVersion").Str
		if envelope.KnownVersion(v) {
			parts = append(parts, fmt.Sprintf("protocol version %s, which initialize does not negotiate (server/discover does, and it failed)", checks.Quote(v, noteQuoteN)))
		} else {
			parts = append(parts, fmt.Sprintf("protocol version %s, which the checker does not judge (initialize may settle on %s)",
				checks.Quote(v, noteQuoteN), strings.Join(negotiable, ", ")))
		}
	case m.Get("result").Exists():
		keys := []string{}
		m.Get("result").ForEach(func(k, _ gjson.Result) bool {
			keys = append(keys, checks.Quote(k.Str, noteQuoteN))
			return len(keys) < 6
		})
		switch {
		case !m.Get("result").IsObject():
			parts = append(parts, "a result that is "+envelope.Kind(m.Get("result"))+", not an object")
		case len(keys) == 0:
			parts = append(parts, "an empty result")
		default:
			parts = append(parts, "a result with "+strings.Join(keys, ", "))
		}
	case hidden != "":
		parts = append(parts, fmt.Sprintf("a response in an SSE event named %s, which no client reads as a message (only unnamed or \"message\" events are)",
			checks.Quote(hidden, noteQuoteN)))
	case len(ex.Response.Body) > 0:
		what := "a body that is no JSON-RPC response"
		if ct := envelope.HeaderGet(ex.Response.Header, "Content-Type"); ex.Transport == envelope.HTTP &&
			envelope.MediaType(ct) != "application/json" && !envelope.IsEventStream(ct) {
			// The client reads a reply by its type: one of another type
			// (an event stream labelled text/plain) is no reply to it,
			// and the type is what the server must fix.
			if ct == "" {
				ct = "none"
			} else {
				ct = checks.Quote(ct, noteQuoteN)
			}
			what = "a body of Content-Type " + ct + ", which no client reads as a reply (T-HTTP-5: application/json or text/event-stream)"
		}
		parts = append(parts, what+": "+checks.Quote(string(ex.Response.Body), noteQuoteN))
	case len(ex.Response.Messages) > 0:
		// On stdio the lines are the reply's messages, its body empty.
		parts = append(parts, "a reply that is no JSON-RPC response: "+checks.Quote(string(ex.Response.Messages[0]), noteQuoteN))
	default:
		parts = append(parts, "an empty body")
	}
	return strings.Join(parts, ", ")
}

// initializeBody is the initialize the checker sends, as a client that
// declares no capabilities: id and the version it asks for.
func initializeBody(id int, version string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"wymcp-check","version":"1"}}}`, id, version)
}

// initializedBody is the notification that ends the handshake.
func initializedBody() []byte {
	return []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// negotiable are the versions initialize may settle on.
var negotiable = []string{envelope.V20251125, envelope.V20250618, envelope.V20250326}

// noteQuoteN bounds server text quoted in a note, in runes.
const noteQuoteN = 60

func clipRaw(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// reply is the response message of an exchange, read the way the judge
// reads it (a zero Message when none came), f being what is known of
// the server.
func reply(ex *envelope.Exchange, f *expect.Facts) envelope.Message {
	req := envelope.Parse(ex.Request.Body)
	o := envelope.ReadOptions{IDs: []gjson.Result{req.Get("id")}, Batches: expect.ReadsBatches(f, req.Get("method").Str, req.IsArray())}
	if r := envelope.ReadReply(ex.Response, o); r.Response != nil {
		return *r.Response
	}
	return envelope.Message{}
}

// discover sends server/discover as a 2026-07-28 client would; ok when
// the result lists 2026-07-28.
func (r *run) discover(ctx context.Context) (envelope.Exchange, bool) {
	saved := r.sess.version
	r.sess.version = envelope.V20260728
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{"_meta":{%q:%q,%q:{}}}}`,
		r.id(), envelope.MetaProtocolVersion, envelope.V20260728, envelope.MetaClientCapabilities)
	ex := r.send(ctx, envelope.Request{Header: r.stdHeaders(body), Body: body}, true)
	if m := reply(&ex, nil); envelope.Lists(m.Get("result.supportedVersions"), envelope.V20260728) {
		return ex, true
	}
	r.sess.version = saved
	return ex, false
}

// initialize runs the 2025-xx handshake: initialize, then
// notifications/initialized, keeping the session id. With forced, the
// version asked for is the one judged even if the server picks another.
// Every initialize sent is a probe, judged once the facts are known.
func (r *run) initialize(ctx context.Context, want string, forced bool, probes *[]probe) (*expect.Facts, error) {
	ask := []string{want}
	if !forced && want == envelope.V20251125 {
		// A server that answers the others with a version the checker
		// does not negotiate (its oldest, say) may still speak
		// 2025-03-26 when asked for it.
		ask = append(ask, envelope.V20250618, envelope.V20250326)
	}
	var supported, declined []string
	var last, hintText string
	refused := false // an initialize was refused with a 4xx: a server answered
	older := false   // an initialize was answered with a version not negotiated
	offered := false // a refusal's data.supported named 2025-03-26
	for i, v := range ask {
		if i > 0 && v == envelope.V20250326 && !older && !offered {
			break // asked only of a server that answers with a version, or names it
		}
		if i > 0 && r.t.Transport() == envelope.Stdio {
			// The process may have taken the last initialize (answered
			// it with a version the checker does not negotiate) and may
			// rightly refuse a second one: the next is asked of a fresh
			// process, as over HTTP each opens a session of its own.
			if died, _ := r.t.Died(); !died {
				if err := r.t.Restart(ctx); err != nil {
					return nil, errorf("restarting for initialize %s: %v", v, err)
				}
			}
		}
		r.sess.version, r.sess.wire, r.sess.sessionID = "", "", ""
		body := initializeBody(r.id(), v)
		ex := r.send(ctx, envelope.Request{Header: r.stdHeaders(body), Body: body}, true)
		name := "negotiate/initialize"
		if i > 0 {
			name += "-" + v
		}
		m := reply(&ex, nil)
		got := m.Get("result.protocolVersion").Str
		if (envelope.KnownVersion(got) || got == envelope.V20250326) && got != envelope.V20260728 && !slices.Contains(supported, got) {
			// An answer names a version the server serves (2025-03-26,
			// judged under 2025-06-18's rules, among them: Learn keeps
			// it too, so lint of a relay's traffic knows what a run does).
			supported = append(supported, got)
		}
		if got != "" && got != v && !slices.Contains(declined, v) {
			declined = append(declined, v) // another answer says the server does not serve v (T-LIFE-2)
		}
		if !slices.Contains(negotiable, got) {
			older = older || got != ""
			offered = offered || slices.ContainsFunc(m.Get("error.data.supported").Array(), func(s gjson.Result) bool { return s.Str == envelope.V20250326 })
			ex.Version = v
			if v == envelope.V20250326 {
				// (Recorded as the rules it is judged by, digest §1a.)
				ex.Version = envelope.V20250618
			}
			*probes = append(*probes, probe{fixture: name, ex: ex})
			if last != "" {
				last += "; "
			}
			last += "initialize for " + v + ": " + why(&ex)
			refused = refused || ex.Response != nil && ex.Response.Status >= 400 && ex.Response.Status < 500
			if h := hint(&ex); h != "" {
				hintText = h
			}
			if ex.Failure != "" && ex.Response == nil && !ex.Unanswered && r.t.Transport() == envelope.HTTP {
				return nil, errorf("initialize: %s", ex.Failure)
			}
			if died, _ := r.t.Died(); died {
				if err := r.t.Restart(ctx); err != nil {
					return nil, errorf("restarting after initialize: %v", err)
				}
			}
			continue
		}
		r.sess.version = got
		how := "auto: server/discover did not confirm " + envelope.V20260728 + "; initialize answered " + got
		if forced {
			how = "forced with --protocol; initialize answered " + got
			if got != want {
				// The server answered another version it serves, as it
				// may (T-LIFE-2): the session speaks that one, and its
				// replies keep that version's rules, not the one asked.
				how += ", another version it serves (T-LIFE-2): judged by " + got + "'s rules, not " + want + "'s"
				r.sink.Note("--protocol " + want + ": the server answered initialize with " + got + ", so the session speaks " + got + " and is judged by its rules; " + want + "'s are not tested")
			}
		}
		if r.sess.version == envelope.V20250326 {
			// 2025-03-26 has no rule set of its own here: it is judged
			// under 2025-06-18's where they do not differ (digest §1a).
			r.sess.version = envelope.V20250618
			if got != envelope.V20250326 {
				how += "; 2025-03-26 is judged under 2025-06-18's rules"
			}
		}
		spoken := ""
		if got == envelope.V20250326 {
			// What depends on a later version than 2025-03-26 skips, as
			// the session speaks 2025-03-26 whatever was asked.
			spoken, r.sess.wire = envelope.V20250326, envelope.V20250326
			how += "; judged under " + r.sess.version + "'s rules where 2025-03-26 does not differ"
			r.sink.Note("the server speaks 2025-03-26: judged under " + r.sess.version + "'s rules where 2025-03-26 does not differ (digest §1a); skipped: " + strings.Join(skipped20250326(), "; "))
		}
		ex.Version = r.sess.version
		if ex.Response != nil {
			r.sess.sessionID = envelope.HeaderGet(ex.Response.Header, "Mcp-Session-Id")
		}
		*probes = append(*probes, probe{fixture: name, ex: ex})
		note := initializedBody()
		nex := r.send(ctx, envelope.Request{Header: r.stdHeaders(note), Body: note}, false)
		*probes = append(*probes, probe{fixture: "negotiate/initialized", ex: nex})
		f := &expect.Facts{Version: r.sess.version, Negotiated: how, Supported: supported, Declined: declined, ClientCapabilities: json.RawMessage(`{}`),
			Session: r.sess.sessionID != "", Spoken: spoken}
		f = f.WithSession(r.sess.sessionID)
		if c := m.Get("result.capabilities"); c.IsObject() {
			f.Capabilities = json.RawMessage(c.Raw)
		}
		return f, nil
	}
	if refused {
		if h := r.legacySSE(ctx); h != "" {
			hintText = h
		}
	}
	return nil, errorf("no protocol version could be negotiated (%s)%s", last, hintText)
}

// legacyLook bounds the look at a GET stream for the endpoint event of
// the old HTTP+SSE transport: such a server sends it at once.
const legacyLook = 2 * time.Second

// legacySSE tells, for an HTTP target that refused initialize and no
// version could be negotiated with, whether it serves the HTTP+SSE transport of 2024-11-05
// (T-COMPAT-5): a GET stream whose first event, "endpoint", names where
// to POST. The checker drives Streamable HTTP only; the user needs to
// know that, not to look for another URL.
func (r *run) legacySSE(ctx context.Context) string {
	if r.t.Transport() != envelope.HTTP {
		return ""
	}
	lctx, cancel := context.WithTimeout(ctx, legacyLook)
	defer cancel()
	ex := r.send(lctx, envelope.Request{Method: http.MethodGet, Header: http.Header{"Accept": {"text/event-stream"}}}, false)
	resp := ex.Response
	if resp == nil || resp.Status != http.StatusOK || !envelope.IsEventStream(resp.Header.Get("Content-Type")) {
		return ""
	}
	sr := envelope.NewSSEBodyReader(resp.Body, envelope.MaxSSELine)
	if ev, err := sr.Next(); err == nil && ev.Name == "endpoint" {
		return fmt.Sprintf("; the URL serves the HTTP+SSE transport of 2024-11-05 (its GET stream names the endpoint to POST to: %s), which the checker does not drive: give it a Streamable HTTP endpoint", checks.Quote(string(ev.Data), noteQuoteN))
	}
	return ""
}

// hint says, for an answer that does not look like an MCP endpoint's,
// what the user can do about it.
func hint(ex *envelope.Exchange) string {
	r := ex.Response
	if ex.Transport != envelope.HTTP || r == nil {
		return ""
	}
	switch {
	case r.Status >= 300 && r.Status < 400:
		return fmt.Sprintf("; the server redirects (to %q): give the checker the URL of the MCP endpoint itself", envelope.HeaderGet(r.Header, "Location"))
	case r.Status == 401 || r.Status == 403 && len(envelope.HeaderValues(r.Header, "WWW-Authenticate")) > 0:
		return "; the server wants credentials: pass them with --header \"Authorization: Bearer $TOKEN\""
	case r.Status == 403:
		// No challenge: not a login the server asks for, but a refusal
		// of something else the request carried; its Host or Origin,
		// most often (a server that admits only localhost, say).
		return "; the server forbids the request without asking for credentials (no WWW-Authenticate): its body may say why; a server bound to localhost may refuse another Host, so try the URL with the host it names"
	case envelope.MediaType(r.Header.Get("Content-Type")) == "text/html":
		return "; the answer is an HTML page: is this the URL of the MCP endpoint (often …/mcp)?"
	case (r.Status == 404 || r.Status == 405) && jsonRPCError(ex):
		// A JSON-RPC error says the endpoint is right (T-HTTP-9 tells
		// this 404 apart by its body): the method or version is not
		// served there.
		if m := reply(ex, nil); m.Get("error.data.supported").IsArray() {
			v := m.Get("error.data.supported")
			return fmt.Sprintf("; the server says it serves %s: try --protocol auto, or one of those", clipRaw(v.Raw))
		}
		return "; the endpoint answers in JSON-RPC but not this method or version: a server of 2026-07-28 alone refuses initialize (try --protocol auto)"
	case r.Status == 404 || r.Status == 405:
		return fmt.Sprintf("; HTTP %d: is this the URL of the MCP endpoint (often …/mcp)?", r.Status)
	}
	return ""
}

// jsonRPCError: the exchange's reply is a JSON-RPC error.
func jsonRPCError(ex *envelope.Exchange) bool {
	m := reply(ex, nil)
	return m.Get("error.code").Exists()
}

// endSession ends a 2025-xx HTTP session with DELETE (T-SESS-4; the
// server may refuse with 405), judged like a fixture. When the server
// accepted, a request that reuses the ended session must get 404
// (T-SESS-3): that probe is judged too.
func (r *run) endSession(ctx context.Context) error {
	if st, ok := r.t.(*StdioTarget); ok {
		return r.endInput(ctx, st)
	}
	if r.t.Transport() != envelope.HTTP || r.sess.sessionID == "" {
		return nil
	}
	h := r.stdHeaders(nil)
	h.Del("Content-Type")
	req := envelope.Request{Method: "DELETE", Header: h}
	ex := r.send(ctx, req, true)
	if err := r.judge("session/delete", &ex, nil, nil); err != nil {
		return err
	}
	switch {
	case ex.Failure != "":
		return nil
	case ex.Response.Status == 405:
		r.sink.Note("the server does not let clients end sessions (DELETE: 405)")
		return nil
	case ex.Response.Status >= 300:
		return nil
	}
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, r.id())
	req = envelope.Request{Header: r.stdHeaders(body), Body: body}
	o := expect.EndedByClient()
	rex, err := r.sendJudged(ctx, "session/reuse-after-delete", req, true)
	if err != nil {
		return err
	}
	return r.judge("session/reuse-after-delete", &rex, nil, o)
}

// endInput ends a stdio server's input, as a client ending the session
// does, and judges what the server did after (T-STDIO-2, T-STDIO-6).
func (r *run) endInput(ctx context.Context, st *StdioTarget) error {
	r.mu.Lock()
	staged := r.staged
	r.mu.Unlock()
	if staged {
		// The last process was a staged fixture's (a run in sequence
		// runs them last), negotiated as that fixture asked, not as the
		// run's session: the end of input is the session's, judged on a
		// process that had the run's handshake (review rev51).
		if err := r.restart(ctx); err != nil {
			return nil // the run already says why, if it matters
		}
	}
	ex, ok := st.EndInput(ctx)
	if !ok {
		return nil
	}
	ex.Version = r.sess.version
	r.keepLate(st, &ex)
	r.seconds(&ex)
	return r.judge(StdinClosed, &ex, nil, nil)
}

// seconds lists, on the end of input's reply, the responses that repeat
// one an exchange of the run took, as a second response to its request
// (Again, or Copies byte for byte): a multiplexed run reads the pipe
// itself, and what its exchanges took the transport does not know
// (review rev51: a second response after stdin closed passed).
func (r *run) seconds(ex *envelope.Exchange) {
	resp := ex.Response
	if resp == nil {
		return
	}
	listed := map[string]bool{}
	for _, ids := range [][]string{resp.Unsent, resp.Again, resp.Copies} {
		for _, id := range ids {
			listed[id] = true
		}
	}
	for _, d := range resp.Messages {
		k, ok := responseKey(d)
		if !ok || k == unreadableID {
			continue
		}
		id := envelope.Compact(gjson.GetBytes(d, "id").Raw)
		r.mu.Lock()
		prev, taken := r.replies[k]
		r.mu.Unlock()
		if taken && !listed[id] {
			listed[id] = true
			noteSecond(resp, id, prev == string(d))
		}
	}
}

// override makes the runner's own overrides, written here as constants:
// a line outside the vocabulary is a bug of the checker.
func override(fields ...expect.Field) *expect.Override {
	return expect.MustOverride(fields...)
}
