package checks

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

var MetaKeys = &Check{
	ID:       "PRO1006",
	Title:    "Every _meta key follows the naming rules",
	SpecRef:  "T-META-1, T-META-2",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `Every _meta object the server sends (on a result, a notification, a
content block, a tool) has keys of the form
[prefix/]name: the prefix is dot-separated labels (each starting with a
letter, ending with a letter or digit, with letters, digits or hyphens
inside) followed by "/"; the name, unless empty, starts and ends with a
letter or digit and has letters, digits, "-", "_" or "." inside
(T-META-1). A key that breaks the grammar fails.

Prefixes whose second label is modelcontextprotocol or mcp (2025-11-25
and later; in 2025-06-18 any such label followed by another) are reserved
for the spec (T-META-2). A reserved key the checker does not know as
spec-defined only warns: the spec may define keys the checker has not
learned yet. A key the checker knows, on a message the spec does not
define it for, also only warns (the spec may define it in places the
checker has not learned): a client's request keys (protocolVersion,
clientCapabilities, clientInfo, logLevel) on anything the server sends,
subscriptionId anywhere but on a notification or the
subscriptions/listen result, serverInfo anywhere but on a result,
model-immediate-response anywhere but on a CreateTaskResult. A server
that speaks 2025-03-26 is not judged here: the grammar came with
2025-06-18 (T-V0326-4).

A "_meta" member inside what MCP leaves free-form is the owner's own key,
not the protocol's, and is not judged: an error's data, a tool's
arguments, schemas and structured content, a sampling request's metadata
and a tool_use block's input (the tool's arguments), and a capabilities
object (its logging, completions, experimental and extensions settings
are free-form JSON objects).`,
	Run: func(p *Pass) error {
		if p.Expect.Facts.Speaks() == envelope.V20250326 {
			return Skip("the server speaks 2025-03-26, which has no rule for _meta key names (T-V0326-4)")
		}
		n := 0
		var stack []string
		for i, m := range p.Reply.Messages {
			if !m.IsObject() || !mayHoldMeta(m.Raw) {
				continue
			}
			if stack == nil {
				stack = make([]string, 0, 16) // most replies hold no _meta
			}
			n += judgeMetaKeys(p, m.Root(), stack, p.Expect.Version, func() string { return msgPath(p, i) }, serverMisplaced(p, m.Root()))
		}
		if n == 0 {
			return Skip("no _meta object arrived")
		}
		return nil
	},
}

// judgeMetaKeys judges the keys of every _meta object under v, a
// message of either side in version (T-META-1, T-META-2), at paths under
// base's; it returns how many _meta objects it met. stack is the walk's
// (see walkMeta). misplaced, when not nil, says where the spec defines a
// known key that this message may not carry ("" where it may).
func judgeMetaKeys(p *Pass, v gjson.Result, stack []string, version string, base func() string, misplaced func(key string) string) int {
	n := 0
	walkMeta(v, stack, func(at []string, meta gjson.Result) {
		n++
		meta.ForEach(func(k, _ gjson.Result) bool {
			// The path is built only for a finding: a long stream of
			// clean messages costs no strings.
			kp := func() string {
				path := base()
				for _, s := range at {
					path = envelope.JoinPath(path, s)
				}
				return envelope.JoinPath(path, k.Str)
			}
			switch {
			case !metaKeyRE.MatchString(k.Str):
				p.Failf(kp(), "_meta key %s does not follow the [prefix/]name grammar (T-META-1)", Quote(k.Str, quoteN))
			case reservedPrefix(k.Str, version) && !slices.Contains(knownMetaKeys, k.Str):
				p.Warnf(kp(), "_meta key %s uses a prefix the spec reserves, and is not a key the checker knows the spec to define (T-META-2)", Quote(k.Str, quoteN))
			case misplaced != nil:
				if where := misplaced(k.Str); where != "" {
					// (A warning: the spec may define the key in more
					// places than the checker knows.)
					p.Warnf(kp(), "_meta key %s is one the spec defines %s, not on this message: a reserved key is used only as defined (T-META-2)", Quote(k.Str, quoteN), where)
				}
			}
			return true
		})
	})
	return n
}

// clientMetaKeys are the reserved keys the spec defines for a client's
// request _meta (2026-07-28).
var clientMetaKeys = []string{
	envelope.MetaProtocolVersion, envelope.MetaClientCapabilities,
	"io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/logLevel",
}

// serverMisplaced says where the spec defines a reserved key that the
// server's message msg, of the exchange p judges, may not carry (see
// judgeMetaKeys): a client's request keys anywhere; subscriptionId but
// on a notification (a listen stream's) and the subscriptions/listen
// result (review rev81: both passed unseen); serverInfo but on a result;
// model-immediate-response but on a CreateTaskResult (review rev86).
func serverMisplaced(p *Pass, msg gjson.Result) func(key string) string {
	return func(key string) string {
		switch {
		case slices.Contains(clientMetaKeys, key):
			return "for a client's requests"
		case key == "io.modelcontextprotocol/subscriptionId":
			notification := msg.Get("method").Exists() && !msg.Get("id").Exists()
			if notification || p.Expect.Request.Get("method").Str == "subscriptions/listen" && !msg.Get("method").Exists() {
				return ""
			}
			return "for a listen stream's notifications and the subscriptions/listen result"
		case key == "io.modelcontextprotocol/serverInfo":
			if msg.Get("result").Exists() {
				return ""
			}
			return "for results"
		case key == "io.modelcontextprotocol/model-immediate-response":
			if msg.Get("result.task").IsObject() {
				return ""
			}
			return "for a CreateTaskResult"
		}
		return ""
	}
}

// metaKeyRE is the key grammar of T-META-1.
var metaKeyRE = regexp.MustCompile(`^(?:[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$`)

// knownMetaKeys are the reserved keys the spec defines (2025-11-25,
// 2026-07-28 schemas).
var knownMetaKeys = []string{
	"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
	"io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/serverInfo",
	"io.modelcontextprotocol/subscriptionId", "io.modelcontextprotocol/logLevel",
	envelope.MetaRelatedTask,
	// (2025-11-25 tasks.mdx: on a CreateTaskResult.)
	"io.modelcontextprotocol/model-immediate-response",
}

// reservedPrefix applies T-META-2's rule of the version.
func reservedPrefix(key, version string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	labels := strings.Split(prefix, ".")
	if version == envelope.V20250618 {
		for i, l := range labels[:len(labels)-1] {
			if (l == "modelcontextprotocol" || l == "mcp") && i+1 < len(labels) {
				return true
			}
		}
		return false
	}
	return len(labels) >= 2 && (labels[1] == "modelcontextprotocol" || labels[1] == "mcp")
}

// mayHoldMeta: raw may hold a member named _meta, spelled out or with a
// \u escape (the only escape that can spell a letter). Most messages
// hold none, and are spared the walk.
func mayHoldMeta(raw []byte) bool {
	return bytes.Contains(raw, []byte("_meta")) || bytes.Contains(raw, []byte(`\u`))
}

// walkMeta calls fn for every _meta object under v: the protocol's own
// objects, not the free-form values inside them (a tool's output, a
// schema, arguments, log or error data), where "_meta" is just a name.
// at is the path to v as keys and array indexes; its backing array is
// shared by the whole walk, so fn reads it and keeps nothing of it.
func walkMeta(v gjson.Result, at []string, fn func(at []string, meta gjson.Result)) {
	switch {
	case v.IsObject():
		v.ForEach(func(k, val gjson.Result) bool {
			switch {
			case k.Str == "_meta" && val.IsObject():
				fn(append(at, k.Str), val)
			case freeForm[k.Str]:
			case val.IsObject() || val.IsArray():
				walkMeta(val, append(at, k.Str), fn)
			}
			return true
		})
	case v.IsArray():
		i := 0
		v.ForEach(func(_, val gjson.Result) bool {
			if val.IsObject() || val.IsArray() {
				walkMeta(val, append(at, strconv.Itoa(i)), fn)
			}
			i++
			return true
		})
	}
}

// freeForm are the members whose values MCP leaves to the server or the
// tool: no _meta inside them is the protocol's. A capabilities object
// defines no _meta at any depth, and holds free-form settings (logging,
// completions, experimental, 2026-07-28's extensions) whose keys are the
// extension's own.
// A sampling request's metadata is passed through to the LLM provider in
// its format, and a tool_use block's input is a tool's arguments (both
// free objects in the schemas; no protocol object bears either name).
var freeForm = map[string]bool{"structuredContent": true, "inputSchema": true, "outputSchema": true,
	"requestedSchema": true, "arguments": true, "data": true, "experimental": true, "capabilities": true,
	"metadata": true, "input": true}

// alreadyInitialized: a refusal that says the server was initialized
// before, which has nothing to say of the version asked.
var alreadyInitialized = regexp.MustCompile(`(?i)already initiali[sz]ed`)

// refusedUnserved: asked is a version the server does not serve, of a
// server that serves one with initialize, so an error names no version
// where the negotiation rule wants one (AMB-3). The run's facts say so,
// or, without them, the request and the exchange: a version dated before
// MCP existed is served by none, and an exchange that declares a legacy
// version was made with a server that serves it (one inferred from the
// request itself says nothing of the server).
func refusedUnserved(x *expect.Expectation, asked string) bool {
	if x.Facts != nil && len(x.Facts.Supported) > 0 {
		return !x.Facts.Serves(asked) && slices.ContainsFunc(x.Facts.Supported, hasInitialize)
	}
	return !envelope.KnownVersion(asked) && asked < beforeMCP && x.VersionSource == "declared" && hasInitialize(x.Version)
}

var Negotiation = &Check{
	ID:       "PRO1007",
	Title:    "Version negotiation answers what the server serves",
	SpecRef:  "T-LIFE-2, T-LIFE-8, T-LIFE-9, T-LIFE-14, AMB-3",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `The answers to version negotiation agree with what the server itself
declared in the run. In 2025-xx, initialize for a version the server
serves is answered with that version (T-LIFE-2, MUST); for a version it
does not serve, with another version it serves, which SHOULD be its
newest: an older one warns when the run saw the server serve a newer
one. An answer that is no version fails: versions are dates,
YYYY-MM-DD, and none dated before MCP existed is served (a draft's
"DRAFT-…" warns: a server built on a draft may serve it). So does an
answer naming a version another initialize of the run asked for and got
another answer to, which says the server does not serve it. Refusing initialize with an error instead of naming a version warns
(AMB-3: the spec's error example conflicts with its rule); a refusal
that says the server was already initialized is about the session, not
the version, and skips. The warn holds unless the
server serves no version that has initialize (2026-07-28 alone), which
has none to name. In 2026-07-28,
a server/discover answered with a result lists the version the request
asked for in supportedVersions: it has just served it (T-LIFE-8); a list
of legacy versions alone warns, as the server declares itself legacy,
which 2026-07-28's -32022 rule (T-LIFE-9) does not bind; a
server that serves 2026-07-28 alone and refuses a legacy initialize
names the versions it serves in the error, in data.supported or its
message (T-LIFE-14, SHOULD: a warn); a dual-era server that serves a
legacy initialize has switched to the legacy era (T-COMPAT-2), and its
answer is judged as that era's negotiation above. 2026-07-28 itself is
never the newer version an answer should have named: it has no
initialize, so an initialize that asks a dual-era server for it is
answered with a legacy version, as for one it does not serve. An
initialize answered with 2026-07-28 fails where the server is known to
serve the version asked, or any version that has initialize (the session
is then the legacy era's, T-COMPAT-2); where its versions are not known it
warns, since T-LIFE-2 asks only for a version the server supports, which
2026-07-28 may be.

What the server serves is known from the run (the versions its
initialize answers named, server/discover's supportedVersions); without
those facts (lint of a transcript that lacks them) only the discover rule
is judged, and what needs no facts: a version dated before MCP existed
is served by no server, and an exchange that declares a legacy version
was made with a server that serves one.`,
	Run: func(p *Pass) error {
		x := p.Expect
		m, err := needObject(p)
		if err != nil {
			return err
		}
		switch x.Method {
		case "initialize":
			if x.Version == envelope.V20260728 && (!m.Get("result").Exists() || x.Request.Get(envelope.MetaPath(envelope.MetaProtocolVersion)).Exists()) {
				return judgeInitializeRefusal(p, m)
			}
			// A legacy initialize served in the 2026-07-28 era switched a
			// dual-era server to the legacy era (T-COMPAT-2): its answer
			// is that era's negotiation.
			asked := x.Request.Get("params.protocolVersion").Str
			if x.Condition == expect.CondInvalidParams {
				return Skip("the initialize params are invalid; no version was asked for")
			}
			if m.Get("error").Exists() {
				if msg := m.Get("error.message").Str; alreadyInitialized.MatchString(msg) {
					// A server of one session per process (@hono/mcp as
					// its README wires it) refuses any initialize after
					// the first, whatever version it asks.
					return Skipf("initialize was refused as a second one (%s), not for the version it asked", Quote(msg, quoteN))
				}
				// (A server that serves no version with initialize, 2026-07-28
				// alone, refuses it as T-LIFE-14 says: no version to name.)
				if refusedUnserved(x, asked) {
					p.Warnf("error", "initialize for %s, which the server does not serve, is refused; the spec's negotiation rule wants a result naming a version it serves, though its own error example refuses so (AMB-3)", Quote(asked, quoteN))
				}
				return nil
			}
			got := m.Get("result.protocolVersion")
			if got.Type != gjson.String {
				return Skip("result.protocolVersion is not a string (see SCH1001)")
			}
			switch {
			case got.Str == envelope.V20260728 && got.Str != asked && x.Facts.Serves(asked) && hasInitialize(asked):
				p.Failf("result.protocolVersion", "initialize for %s is answered %s, a version that has no initialize, though the server serves %s (T-LIFE-2)", Quote(asked, quoteN), Quote(got.Str, quoteN), Quote(asked, quoteN))
			case got.Str == envelope.V20260728 && legacyServed(x.Facts) != "":
				// A server known to serve a legacy version puts the
				// session an initialize opens in the legacy era
				// (T-COMPAT-2): its answer names a version of that era
				// the server supports (T-LIFE-2), not one the session
				// cannot speak.
				p.Failf("result.protocolVersion", "initialize is answered %s, a version that has no initialize, though the server serves %s, a version with initialize (T-LIFE-2, T-COMPAT-2)", Quote(got.Str, quoteN), Quote(legacyServed(x.Facts), quoteN))
			case got.Str == envelope.V20260728:
				// 2026-07-28 has no handshake: an initialize puts a server
				// in the legacy era (T-COMPAT-2), whose version its answer
				// would name. But T-LIFE-2 asks only for a version the
				// server supports when it does not serve the one asked,
				// and 2026-07-28 may be that: no MUST is broken for sure.
				p.Warnf("result.protocolVersion", "initialize is answered %s, a version that has no initialize; a legacy client cannot speak it, and the answer would name a legacy version the server serves (T-COMPAT-2)", Quote(got.Str, quoteN))
			case got.Str != asked && x.Facts.Serves(asked) && hasInitialize(asked):
				// Whatever it names instead: a draft's version, none. (A
				// version without initialize, 2026-07-28, cannot be
				// answered in one: a dual-era server names a legacy one.)
				p.Failf("result.protocolVersion", "initialize for %s is answered %s, though the server serves %s (T-LIFE-2)", Quote(asked, quoteN), Quote(got.Str, quoteN), Quote(asked, quoteN))
			case !versionDate(got.Str) && strings.HasPrefix(got.Str, "DRAFT-"):
				// The spec's draft schema names its version so until
				// release (the TypeScript SDK's spec types carry one): a
				// server built on a draft may serve it, which no client
				// of a released version speaks.
				p.Warnf("result.protocolVersion", "initialize for %s is answered %s, a draft's version, which no client of a released version speaks (T-LIFE-2)", Quote(asked, quoteN), Quote(got.Str, quoteN))
			case !versionDate(got.Str):
				// Protocol versions are dates (the versioning page): a
				// string that is none, or a date with room around it,
				// names no version any server serves.
				p.Failf("result.protocolVersion", "initialize for %s is answered %s, which is no protocol version (a date, YYYY-MM-DD): the answer names a version the server supports (T-LIFE-2)", Quote(asked, quoteN), Quote(got.Str, quoteN))
			case got.Str < beforeMCP:
				// A version dated before MCP was drafted is no version any
				// server serves (the fixture made it up, or the server
				// answered a date of its own).
				if got.Str == asked {
					p.Failf("result.protocolVersion", "initialize for %s is answered with that same version, dated before MCP existed; the answer names a version the server supports (T-LIFE-2)", Quote(asked, quoteN))
					break
				}
				p.Failf("result.protocolVersion", "initialize for %s is answered %s, dated before MCP existed; the answer names a version the server supports (T-LIFE-2)", Quote(asked, quoteN), Quote(got.Str, quoteN))
			case x.Facts.Declines(got.Str):
				// Another initialize of the run asked for this version and
				// was answered with another, which says the server does
				// not serve it (T-LIFE-2); one of the two answers broke
				// the rule, and this one names a version the server has
				// shown it does not serve.
				p.Failf("result.protocolVersion", "initialize for %s is answered %s, though the server answered another initialize that asked for %s with another version, which says it does not serve it (T-LIFE-2)", Quote(asked, quoteN), Quote(got.Str, quoteN), Quote(got.Str, quoteN))
			case got.Str == asked:
			case x.Facts != nil:
				if newer := newestAfter(slices.DeleteFunc(slices.Clone(x.Facts.Supported), func(v string) bool { return !hasInitialize(v) }), got.Str); newer != "" {
					p.Warnf("result.protocolVersion", "initialize for %s is answered %s, though the server serves the newer %s (T-LIFE-2: SHOULD be its newest)", Quote(asked, quoteN), Quote(got.Str, quoteN), Quote(newer, quoteN))
				}
			}
		case "server/discover":
			sup := m.Get("result.supportedVersions")
			if !m.Get("result").IsObject() || !sup.IsArray() {
				return Skip("no DiscoverResult with supportedVersions (see SCH1001)")
			}
			asked := x.Request.Get(envelope.MetaPath(envelope.MetaProtocolVersion)).Str
			if asked != "" && !envelope.Lists(sup, asked) {
				vs := sup.Array()
				if len(vs) > 0 && !slices.ContainsFunc(vs, func(v gjson.Result) bool { return v.Type != gjson.String || !hasInitialize(v.Str) }) {
					// The go-sdk's stateful handler so answers: the
					// versions its transport serves, all of them legacy.
					// Read as a modern server's answer it owed -32022
					// (T-LIFE-9); read as the legacy server it declares
					// itself, 2026-07-28's rules do not bind it. Two
					// readings: a warn.
					p.Warnf("result.supportedVersions", "server/discover for %s is served, but supportedVersions lists only versions negotiated with initialize: a server of 2026-07-28 answers a version it does not serve with -32022 (T-LIFE-9); one that declares itself legacy is not bound by that rule", Quote(asked, quoteN))
					return nil
				}
				p.Failf("result.supportedVersions", "server/discover for %s is served, but supportedVersions does not list %s: a version it does not serve gets -32022 (T-LIFE-9), one it serves is listed (T-LIFE-8)", Quote(asked, quoteN), Quote(asked, quoteN))
			}
		default:
			return Skip("not a negotiation request")
		}
		return nil
	},
}

// newestAfter returns the newest version in vs later than v ("" when
// none): versions are dates, so they compare as strings.
func newestAfter(vs []string, v string) string {
	newest := ""
	for _, s := range vs {
		if s > v && s > newest {
			newest = s
		}
	}
	return newest
}

// legacyServed is the newest version that has initialize among those the
// facts show the server serves; "" when none is known.
func legacyServed(f *expect.Facts) string {
	if f == nil {
		return ""
	}
	newest := ""
	for _, v := range f.Supported {
		if hasInitialize(v) && envelope.KnownVersion(v) && v > newest {
			newest = v
		}
	}
	return newest
}

// judgeInitializeRefusal judges a legacy initialize sent to a server in
// the 2026-07-28 era: one that serves that version alone and refuses it
// says which versions it serves (T-LIFE-14), in the error's
// data.supported or its message.
func judgeInitializeRefusal(p *Pass, m *envelope.Message) error {
	f := p.Expect.Facts
	if f == nil || len(f.Supported) == 0 || !slices.Equal(f.Supported, []string{envelope.V20260728}) {
		return Skip("initialize is not 2026-07-28's negotiation, and the server is not known to serve 2026-07-28 alone")
	}
	if p.Expect.Request.Get(envelope.MetaPath(envelope.MetaProtocolVersion)).Str == envelope.V20260728 {
		// A dual-era server reads it as a modern request for a removed
		// method (-32601, T-LIFE-16), and supportedVersions lists only
		// the versions for such requests: no sign it serves them alone.
		return Skip("initialize carries 2026-07-28's _meta: a modern request for a removed method (T-LIFE-16); T-LIFE-14 speaks of a legacy client's initialize")
	}
	e := m.Get("error")
	if !e.Exists() {
		return Skip("initialize was not refused (PRO1001 judges a served one)")
	}
	if envelope.Lists(e.Get("data.supported"), envelope.V20260728) || strings.Contains(e.Get("message").Str, envelope.V20260728) {
		return nil
	}
	p.Warnf("error", "a server that serves 2026-07-28 alone refuses initialize without naming the versions it serves, in data.supported or the message (T-LIFE-14)")
	return nil
}

// beforeMCP: a version string that sorts before it is a date no MCP
// version can be. (Not the first revision, 2024-11-05: the TypeScript
// SDK still serves the pre-release 2024-10-07.)
const beforeMCP = "2024-01-01"

// versionDate: v has a protocol version's form, a calendar date written
// YYYY-MM-DD.
func versionDate(v string) bool {
	_, err := time.Parse(time.DateOnly, v)
	return err == nil && len(v) == len(time.DateOnly)
}

// hasInitialize: the version negotiates with initialize (those before
// 2026-07-28).
func hasInitialize(v string) bool { return v < envelope.V20260728 }
