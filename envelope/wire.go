package envelope

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
)

// Meta keys of 2026-07-28 requests (digest T-LIFE-7, T-LOG-2).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
)

// MetaKeys are the _meta keys the protocol reserves for itself, in any
// version: its own words wherever a message names them.
var MetaKeys = []string{MetaProtocolVersion, MetaClientCapabilities, MetaLogLevel, MetaSubscriptionID, MetaRelatedTask}

// MetaPath is the gjson path of a request's _meta member key.
func MetaPath(key string) string {
	if p, ok := metaPaths[key]; ok {
		return p
	}
	return metaPath(key)
}

func metaPath(key string) string { return "params._meta." + JoinPath("", key) }

// metaPaths holds the paths of the keys above, escaped once: every
// request is read for them, several times over.
var metaPaths = map[string]string{
	MetaProtocolVersion:    metaPath(MetaProtocolVersion),
	MetaClientCapabilities: metaPath(MetaClientCapabilities),
	MetaLogLevel:           metaPath(MetaLogLevel),
}

// NameField is the params member Mcp-Name mirrors for a method (T-HDR-1):
// "name" for tools/call and prompts/get, "uri" for resources/read, "" for
// every other method.
func NameField(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

// HeaderDel removes a header whatever the case of its name: a map keyed
// in the case given holds the name in any spelling.
func HeaderDel(h http.Header, name string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
}

// HeaderValue reads a header whatever the case of its name (T-HTTP-19).
// Keys are matched case-insensitively, not only in canonical form: a
// fixture may send a name in odd case on purpose. Every header lookup of
// the checker goes through it.
func HeaderValue(h http.Header, name string) (string, bool) {
	first := func(vs []string) string {
		if len(vs) == 0 {
			return ""
		}
		return vs[0]
	}
	if vs, ok := h[canonicalName(name)]; ok {
		return first(vs), true
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) {
			return first(vs), true
		}
	}
	return "", false
}

// canonicalName is http.CanonicalHeaderKey(name), with the names the
// checks read on every exchange answered without it: it scans the name
// each time, and copies one not in canonical form (MCP-Protocol-Version)
// each time. TestCanonicalName holds the two to the same answers.
func canonicalName(name string) string {
	switch name {
	case "Mcp-Session-Id", "Content-Type", "Mcp-Protocol-Version", "Mcp-Name", "Mcp-Method":
		return name
	case "MCP-Protocol-Version":
		return "Mcp-Protocol-Version"
	}
	return http.CanonicalHeaderKey(name)
}

// HeaderValues is every value of a header whatever the case of its
// name, the lines of each spelling in turn.
func HeaderValues(h http.Header, name string) []string {
	var out []string
	for k, vs := range h {
		if strings.EqualFold(k, name) {
			out = append(out, vs...)
		}
	}
	return out
}

// HeaderJoined is a header's value as RFC 9110 §5.3 reads its field
// lines: every line of the name, in any case, joined with ", " (keys in
// sorted order, so a report says the same every run); ok false when the
// header is absent. A single-valued header sent twice reads as the list
// it is, not as its first line.
func HeaderJoined(h http.Header, name string) (string, bool) {
	vs := headerLines(h, name)
	if vs == nil {
		return "", false
	}
	return strings.Join(vs, ", "), true
}

// HeaderDistinct is a header's field-line values without repeats, in the
// order HeaderJoined reads them; nil when the header is absent. More than
// one is a single-valued header a receiver may read either way (ask
// HeaderVaries first on a hot path: it allocates nothing).
func HeaderDistinct(h http.Header, name string) []string {
	var out []string
	for _, v := range headerLines(h, name) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// HeaderVaries: the header's field lines hold more than one value.
func HeaderVaries(h http.Header, name string) bool {
	first, seen := "", false
	for k, vs := range h {
		if !strings.EqualFold(k, name) {
			continue
		}
		for _, v := range vs {
			switch {
			case !seen:
				first, seen = v, true
			case v != first:
				return true
			}
		}
	}
	return false
}

// headerLines are the values of every field line of the name, in any
// case, keys in sorted order (so a report says the same every run).
func headerLines(h http.Header, name string) []string {
	var keys []string
	for k := range h {
		if strings.EqualFold(k, name) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	vs := []string{}
	for _, k := range keys {
		vs = append(vs, h[k]...)
	}
	return vs
}

// ParamHeader reads an Mcp-Param-* header name (T-HDR-4), its prefix in
// any case, without copying it: what follows the prefix, and whether
// there was one.
func ParamHeader(name string) (string, bool) {
	const prefix = "mcp-param-"
	if len(name) < len(prefix) || !strings.EqualFold(name[:len(prefix)], prefix) {
		return "", false
	}
	return name[len(prefix):], true
}

// HeaderGet reads a header whatever the case of its name; "" if absent.
func HeaderGet(h http.Header, name string) string {
	v, _ := HeaderValue(h, name)
	return v
}

// ValidHeaderValue rejects control characters and raw non-ASCII bytes,
// which a 2026-07-28 client must have Base64-encoded (T-HDR-3).
func ValidHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// A Base64Reading is one way a receiver may decode a sentinel's payload:
// AMB-10 names neither alphabet nor padding. The zero value reads the
// standard alphabet, padded or not.
type Base64Reading struct {
	URLSafe bool // the URL-safe alphabet is read too
	Padded  bool // a payload without its padding does not decode
}

// Base64Marker opens a header value in the Base64 sentinel's form
// (T-HDR-3): lowercase, and case-sensitive.
const Base64Marker = "=?base64?"

// DecodeHeaderValue undoes the Base64 sentinel of T-HDR-3. The markers are
// lowercase and case-sensitive; anything else is the literal value. The
// second result is false when the sentinel's payload does not decode
// under the reading r.
func DecodeHeaderValue(v string, r Base64Reading) (string, bool) {
	inner, ok := strings.CutPrefix(v, Base64Marker)
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	encs := []*base64.Encoding{base64.StdEncoding}
	if r.URLSafe {
		encs = append(encs, base64.URLEncoding)
	}
	if !r.Padded {
		encs = append(encs, base64.RawStdEncoding)
		if r.URLSafe {
			encs = append(encs, base64.RawURLEncoding)
		}
	}
	for _, enc := range encs {
		if b, err := enc.DecodeString(inner); err == nil {
			return string(b), true
		}
	}
	return "", false
}

// Unpadded: v is a Base64 sentinel whose payload decodes, but only
// without the padding it leaves out.
func Unpadded(v string) bool {
	_, lenient := DecodeHeaderValue(v, Base64Reading{URLSafe: true})
	_, padded := DecodeHeaderValue(v, Base64Reading{URLSafe: true, Padded: true})
	return lenient && !padded
}

// SentinelShaped: v matches the Base64 sentinel's pattern (T-HDR-3): it
// starts with the marker and ends with "?=".
func SentinelShaped(v string) bool {
	return strings.HasPrefix(v, Base64Marker) && strings.HasSuffix(v, "?=")
}

// EncodeHeaderValue applies the Base64 sentinel of T-HDR-3 where a value
// cannot travel as plain header text: non-ASCII, control characters,
// leading or trailing space or tab, or a literal that matches the
// sentinel's pattern itself (it starts with the marker and ends with
// "?="; one that only starts so travels plain).
func EncodeHeaderValue(v string) string {
	plain := strings.TrimLeft(v, " \t") == v && strings.TrimRight(v, " \t") == v &&
		!SentinelShaped(v)
	for i := 0; plain && i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f {
			plain = false
		}
	}
	if plain {
		return v
	}
	return Base64Marker + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// removed20260728 are the methods 2026-07-28 removed (T-LIFE-16): a
// modern-only server treats them as unknown, whatever its extensions.
var removed20260728 = []string{"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
	"notifications/initialized", "notifications/roots/list_changed", "notifications/elicitation/complete"}

// historicVersions are MCP versions before the covered ones; a server may
// still serve them (T-HTTP-7), so a header naming one is not a fault.
var historicVersions = []string{"2024-11-05", "2025-03-26"}

// Removed2026 reports whether 2026-07-28 removed method (T-LIFE-16): a
// modern-only server treats it as unknown, whatever its extensions.
func Removed2026(method string) bool { return slices.Contains(removed20260728, method) }

// HistoricVersion reports whether v names an MCP version older than the
// ones the checker judges, which a server may still serve (T-HTTP-7).
func HistoricVersion(v string) bool { return slices.Contains(historicVersions, v) }

var (
	methods20260728 = buildMethods(V20260728)
	methods20251125 = buildMethods(V20251125)
	methods20250618 = buildMethods(V20250618)
)

// Methods lists the client-to-server methods and notifications a version
// defines (requests whose absence from a server is -32601). The result is
// shared: do not modify it.
func Methods(version string) []string {
	switch version {
	case V20260728:
		return methods20260728
	case V20250618:
		return methods20250618
	}
	return methods20251125
}

func buildMethods(version string) []string {
	common := []string{
		"tools/list", "tools/call", "resources/list", "resources/templates/list",
		"resources/read", "prompts/list", "prompts/get", "completion/complete",
		"notifications/cancelled",
	}
	switch version {
	case V20260728:
		return append(common, "server/discover", "subscriptions/listen")
	case V20250618:
		return append(common, "initialize", "ping", "notifications/initialized",
			"notifications/progress", "notifications/roots/list_changed",
			"resources/subscribe", "resources/unsubscribe", "logging/setLevel")
	default:
		return append(common, "initialize", "ping", "notifications/initialized",
			"notifications/progress", "notifications/roots/list_changed",
			"resources/subscribe", "resources/unsubscribe", "logging/setLevel",
			"tasks/get", "tasks/result", "tasks/cancel", "tasks/list")
	}
}

// IsToken reports whether s is an HTTP token (RFC 9110 §5.6.2): a
// header's name, an auth-scheme.
func IsToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !IsTchar(r) }) < 0
}

// IsTchar: r may stand in a token (RFC 9110 §5.6.2).
func IsTchar(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}
