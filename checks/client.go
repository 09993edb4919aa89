package checks

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
)

// ClientSchemaValidator validates a message a client sent against the
// client-side protocol schema of a version (schema.ClientSet). covered is
// false when the version has no schema for it.
type ClientSchemaValidator interface {
	ValidateClient(version, method string, raw []byte) (problems []envelope.DistilledEntry, covered bool, err error)
}

// ClientSchemas validates client messages against the checker's own
// client-side schemas, compiled once per version on first use.
func ClientSchemas(reg *schema.ClientRegistry) ClientSchemaValidator { return clientSchemas{reg} }

type clientSchemas struct{ reg *schema.ClientRegistry }

func (c clientSchemas) ValidateClient(version, method string, raw []byte) ([]envelope.DistilledEntry, bool, error) {
	set, err := c.reg.Version(version)
	if err != nil {
		return nil, false, err
	}
	return set.ValidateClient(method, raw)
}

// ClientInput is one message the client sent, to judge.
type ClientInput struct {
	Fixture string
	Message *ClientMessage
	// View is what the traffic before the message showed
	// (ClientTracker.View); nil: nothing is known but the message.
	View *ClientView
	// Facts are what the server declared so far (its tools, for the
	// arguments of a tools/call); nil when nothing.
	Facts *expect.Facts
	// Schemas validate the message; nil: schema validation is off.
	Schemas ClientSchemaValidator
}

// clientPass is what every client check reads of one message, read once.
type clientPass struct {
	in   *ClientInput
	view *ClientView
	msg  envelope.Message
	// kind of the message, method of a request or notification.
	kind   clientKind
	method string
	// version in force, and how it is known ("" when nothing says).
	version, how string
	// notMCP: an HTTP request that is no MCP request (notMCPRequest).
	notMCP bool
}

type clientKind uint8

const (
	kindNone         clientKind = iota // no message: an HTTP GET or DELETE (or OPTIONS, HEAD)
	kindRequest                        // method and id
	kindNotification                   // method, no id
	kindResponse                       // no method; an id, result or error
	kindOther                          // not a JSON-RPC message
)

// JudgeClient applies the client-area checks of list to one message the
// client sent, and returns one verdict per such check, in list order.
// Checks of other areas judge the server's replies (Judge) and are left
// out. It is the same judge as Judge: one Pass, one Run per check, a
// deviation's level turned into fail or warn in one place.
func JudgeClient(in ClientInput, list []*Check) []Verdict {
	cp := readClient(&in)
	p := &Pass{Contract: envelope.Strict(), client: cp}
	var out []Verdict
	for _, c := range list {
		if c.Area != AreaClient {
			continue
		}
		v := runOne(p, c)
		v.Fixture = in.Fixture
		out = append(out, v)
	}
	return out
}

func readClient(in *ClientInput) *clientPass {
	cp := &clientPass{in: in, view: in.View}
	if cp.view == nil {
		cp.view = &ClientView{c: newConversation(false), transport: in.Message.Transport}
	}
	m := in.Message
	cp.notMCP = notMCPRequest(m)
	if cp.notMCP || len(m.Body) == 0 && m.Transport == envelope.HTTP && m.HTTPMethod != "" && m.HTTPMethod != "POST" {
		cp.kind = kindNone
	} else {
		cp.msg = envelope.Parse(m.Body)
		method, id := cp.msg.Get("method"), cp.msg.Get("id")
		switch {
		case !cp.msg.IsObject():
			cp.kind = kindOther
		case method.Exists() && id.Exists():
			cp.kind, cp.method = kindRequest, method.Str
		case method.Exists():
			cp.kind, cp.method = kindNotification, method.Str
		case id.Exists() || cp.msg.Get("result").Exists() || cp.msg.Get("error").Exists():
			cp.kind = kindResponse
		default:
			cp.kind = kindOther
		}
	}
	cp.version, cp.how = cp.inferVersion()
	return cp
}

// inferVersion says which protocol version governs the message: for an
// initialize, the one it asks for (an initialize is never 2026-07-28's,
// whatever header or _meta it carries: a dual-era client falling back
// from a refused probe may keep its transport's 2026 header); else the
// one the message itself names in _meta (only 2026-07-28 carries it),
// the one its session negotiated, its MCP-Protocol-Version header, or
// 2026-07-28 when the client spoke it before.
func (cp *clientPass) inferVersion() (string, string) {
	if cp.method == "initialize" {
		// initialize is a message of the handshake versions alone: it
		// speaks the version it asks for, or one the checker does not
		// know (2025-03-26, 2024-11-05), never 2026-07-28.
		if v := cp.msg.Get("params.protocolVersion").Str; envelope.KnownVersion(v) && v != envelope.V20260728 {
			return v, "initialize"
		}
		return "", ""
	}
	if v := cp.msg.Get(envelope.MetaPath(envelope.MetaProtocolVersion)); v.Str == envelope.V20260728 {
		return v.Str, "_meta"
	}
	c := cp.view.c
	if c.initDone && c.version != "" {
		return c.version, "negotiated"
	}
	if cp.in.Message.Transport == envelope.HTTP {
		if hv := envelope.HeaderGet(cp.in.Message.Header, "Mcp-Protocol-Version"); envelope.KnownVersion(hv) {
			return hv, "header"
		}
	}
	if _, pending := c.open[c.initSeq]; pending && c.initSeq != 0 && !c.initDone {
		// A handshake under way, one a client that spoke 2026-07-28
		// before falls back to: what it sends until the answer (a ping,
		// its answer to the server's) is of the version it asked for.
		if envelope.KnownVersion(c.initAsked) && c.initAsked != envelope.V20260728 {
			return c.initAsked, "initialize"
		}
		return "", ""
	}
	if c.modern {
		return envelope.V20260728, "earlier messages"
	}
	return "", ""
}

// notMCPRequest: an HTTP request the MCP transport does not define, sent
// to the MCP endpoint: a CORS preflight (OPTIONS), which the browser
// makes itself and on which the Fetch standard lets no custom header go
// (Mcp-Session-Id and MCP-Protocol-Version are only named in its
// Access-Control-Request-Headers), or a HEAD. The client's requests the
// transport binds are its POSTs, GETs and DELETEs.
func notMCPRequest(m *ClientMessage) bool {
	// (One with a body carries a message, which is judged: a JSON-RPC
	// message goes in a POST.)
	return m.Transport == envelope.HTTP && (m.HTTPMethod == http.MethodOptions || m.HTTPMethod == http.MethodHead) && len(bytes.TrimSpace(m.Body)) == 0
}

// legacy: the message is judged under the 2025 versions' rules (a
// handshake, sessions): its version is one of them, or nothing says
// otherwise.
func (cp *clientPass) legacy() bool { return cp.version != envelope.V20260728 }

// needClient guards every client check: it judges only messages the
// client sent.
func needClient(p *Pass) (*clientPass, error) {
	if p.client == nil {
		return nil, skipNotClient
	}
	if p.client.notMCP {
		return nil, skipNotMCP
	}
	return p.client, nil
}

// needClientRequest guards the checks that judge a client's requests.
func needClientRequest(p *Pass) (*clientPass, error) {
	cp, err := needClient(p)
	if err == nil && cp.kind != kindRequest {
		return nil, skipNotRequest
	}
	return cp, err
}

// Error values, so that returning one allocates nothing (see rpc.go).
var (
	skipNotClient   error = SkipError("judges the client's messages (proxy, wrap)")
	skipNoMessage         = SkipError("no JSON-RPC message (an HTTP GET or DELETE)")
	skipNotMCP            = SkipError("no MCP request: an HTTP OPTIONS (a CORS preflight, whose headers the browser sets) or HEAD")
	skipNotRequest        = SkipError("not a request")
	skipNotHTTP           = SkipError("not Streamable HTTP")
	skipModern            = SkipError("2026-07-28 has no handshake nor sessions")
	skipLegacy            = SkipError("not a 2026-07-28 message")
	skipLost              = SkipError("messages of this session were not observed (the relay's output fell behind)")
	skipNotResponse       = SkipError("not a response to a server request")
)

// idText shows an id in a finding as it was written (7 is not "7"), cut
// to one short line.
func idText(raw string) string {
	if r := []rune(raw); len(r) > quoteN {
		raw = string(r[:quoteN]) + "…"
	}
	return raw
}

// seqText names a message of the relay's order in a finding.
func seqText(seq uint64) string { return fmt.Sprintf("#%d", seq) }
