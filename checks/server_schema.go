package checks

import (
	"strings"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/schema"
)

// ServerMessageValidator is a SchemaValidator that also validates the
// messages a server sends besides its response. The checker's protocol
// schemas and a --schema file both are; with a validator that is not,
// SCH1004 skips. It is a separate interface so that SchemaValidator, which
// every reply check and test double implements, stays one method.
type ServerMessageValidator interface {
	// ValidateServerMessage validates raw, one whole notification or
	// request of method. covered is false when the schema has no type
	// for method: nothing to validate, not an error.
	ValidateServerMessage(version, method string, raw []byte) (problems []envelope.DistilledEntry, covered bool, err error)
}

func (p protocolSchemas) ValidateServerMessage(version, method string, raw []byte) ([]envelope.DistilledEntry, bool, error) {
	set, err := p.reg.Version(version)
	if err != nil {
		return nil, false, err
	}
	return set.ValidateServerMessage(method, raw)
}

func (s userSchema) ValidateServerMessage(_, method string, raw []byte) ([]envelope.DistilledEntry, bool, error) {
	return s.u.ValidateServerMessage(method, raw)
}

var ServerSchemaValid = &Check{
	ID:       "SCH1004",
	Title:    "Server-sent messages match the protocol schema",
	SpecRef:  "T-RPC-13, T-PROG-1, T-LIFE-4; SC/{v}/schema.json ServerNotification, ServerRequest",
	Severity: MUST,
	Area:     AreaSchema,
	Doc: `The messages a server sends besides its response (on an SSE stream or
stdout) validate against the checker's schema of the negotiated version,
as the response does under SCH1001: a client that takes them as the
schema types them breaks on a log message without data, a
resources/updated without uri, a sampling/createMessage without messages
or maxTokens, a progress notification whose total is a string. Each
message is validated as the type of its method: the notifications
(cancelled, progress, message, resources/updated, the list_changed ones;
elicitation/complete and tasks/status in 2025-11-25;
subscriptions/acknowledged in 2026-07-28) and, in 2025-xx, the requests
to the client (ping, sampling/createMessage, elicitation/create,
roots/list; the tasks/* requests in 2025-11-25). A server that speaks
2025-03-26 is held to that version's types, which have no
elicitation/create. A method the version does not define (an
extension's, or a later version's) is not validated. Each failure is reported once per location, distilled, at the
message's place in the reply (messages[i]).

One finding per fault: what other checks judge of these messages by
hand is left to them. The jsonrpc member is RPC1002's. Ids, and whether a
message may be sent at all, are PRO1003's: a request from a 2026-07-28
server is its finding (T-LIFE-15), not a schema one, so such messages are
not validated here. The progressToken and progress of a progress
notification, and a log message's level, are PRO1003's too wherever it
judges them (everywhere but a subscriptions/listen stream); on such a
stream over HTTP the subscriptionId is PRO1009's. A member those checks
own that is missing, or that cannot be there because its parent is
missing or not an object, is theirs too. With --schema FILE the messages are validated against the
file's official types (CancelledNotification, CreateMessageRequest, …)
where it defines them; an official file, recognised
by the types it defines, judges only messages of its own version, as
under SCH1001.`,
	Run: func(p *Pass) error {
		if p.Schemas == nil {
			return Skip("no schema validator configured")
		}
		v, ok := p.Schemas.(ServerMessageValidator)
		if !ok {
			return Skip("the schema validator does not validate server-sent messages")
		}
		x := p.Expect
		version := messagesVersion(p)
		unjudged := "" // why the validator holds no schema of the messages' version
		if f := x.Facts; f != nil && f.Spoken == envelope.V20250326 {
			version = envelope.V20250326
			if gap := schemaGap(p.Schemas, version); gap != "" {
				unjudged = "the server speaks 2025-03-26, " + gap
			}
		} else if gap := schemaGap(p.Schemas, version); gap != "" {
			unjudged = "the exchange is of " + version + ", " + gap
		}
		listen := x.Method == "subscriptions/listen" && version == envelope.V20260728
		n, covered := 0, 0
		for i := range p.Reply.Messages {
			m := &p.Reply.Messages[i]
			if m == p.Reply.Response || !m.IsObject() || !m.Get("method").Exists() {
				continue
			}
			n++
			if unjudged != "" {
				continue
			}
			hasID := m.Get("id").Exists()
			if hasID && version == envelope.V20260728 {
				continue // a request in 2026-07-28: PRO1003's (T-LIFE-15)
			}
			method := m.Get("method").Str
			entries, ok, err := v.ValidateServerMessage(version, method, m.JSON())
			if err != nil {
				return err // beyond the validator's bounds: could not judge
			}
			if !ok {
				continue
			}
			covered++
			owned := ownedElsewhere(p, method, hasID, listen)
			path := msgPath(p, i)
			for _, e := range entries {
				for _, pr := range e.Problems {
					if isOwned(m, owned, e.Location, pr) {
						continue
					}
					p.Failf(path+strings.ReplaceAll(e.Location, "/", "."), "%s", pr)
				}
			}
		}
		switch {
		case n == 0:
			return Skip("no notification or server request arrived")
		case unjudged != "":
			return Skip(unjudged)
		case covered == 0:
			return Skipf("no server-sent message of a method the %s schema defines", version)
		}
		return nil
	},
}

// messagesVersion is the version the messages are of: the negotiated one,
// or, when a dual-era server served initialize, the legacy era it
// switched to (T-COMPAT-2), as SCH1001 judges its reply.
func messagesVersion(p *Pass) string {
	version := p.Expect.Version
	if p.Expect.Condition == expect.CondLegacyInitialize && p.Reply.Response != nil && p.Reply.Response.Get("result").Exists() {
		version = envelope.V20251125
		if v := p.Reply.Response.Get("result.protocolVersion").Str; envelope.KnownVersion(v) && v != envelope.V20260728 {
			version = v
		}
	}
	return version
}

// ownedElsewhere lists the members of a server-sent message that another
// check judges by hand, as paths of member names: a schema finding about
// them would repeat that check's.
func ownedElsewhere(p *Pass, method string, hasID, listen bool) [][]string {
	owned := [][]string{{"jsonrpc"}} // RPC1002, for every message
	if hasID {
		owned = append(owned, []string{"id"}) // PRO1003 (T-RPC-3)
	}
	switch {
	case listen && p.Exchange.Transport == envelope.HTTP:
		// PRO1009 judges every notification of the stream's
		// subscriptionId (T-SUB-3, T-META-3); on stdio only those that
		// carry the listen id, which are then valid.
		owned = append(owned, []string{"params", "_meta", envelope.MetaSubscriptionID})
	case listen:
	case method == "notifications/progress":
		owned = append(owned, []string{"params", "progressToken"}, []string{"params", "progress"}) // PRO1003 (T-PROG-1)
	case method == "notifications/message":
		owned = append(owned, []string{"params", "level"}) // PRO1003 (T-LOG-1)
	}
	return owned
}

// isOwned reports whether the problem pr at the JSON Pointer loc is about
// a member another check owns: the member itself or anything inside it,
// its absence, or a parent on its path that is absent or not an object,
// so that the member cannot be there.
func isOwned(m *envelope.Message, owned [][]string, loc, pr string) bool {
	for _, tokens := range owned {
		gpath := ""
		for i, tok := range tokens {
			parent := pointerOf(tokens[:i])
			gpath = envelope.JoinPath(gpath, tok)
			v := m.Get(gpath)
			if !v.Exists() {
				if loc == parent && pr == schema.MissingProperty(tok) {
					return true
				}
				break
			}
			at := pointerOf(tokens[:i+1])
			if i == len(tokens)-1 {
				if loc == at || strings.HasPrefix(loc, at+"/") {
					return true
				}
				break
			}
			if !v.IsObject() {
				if loc == at {
					return true
				}
				break
			}
		}
	}
	return false
}
