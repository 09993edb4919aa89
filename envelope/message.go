package envelope

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// A Message is one JSON-RPC message exactly as it travelled: raw bytes,
// read with gjson so that keys are matched case-sensitively and an absent
// member stays distinct from null. Decoding into Go structs would match
// keys case-insensitively and drop unknown ones, hiding the very faults a
// conformance checker exists to find.
type Message struct {
	Raw []byte
	// Valid: Raw is one syntactically valid JSON value.
	Valid bool
	// UTF8: Raw is valid UTF-8 (JSON text must be, RFC 8259 §8.1).
	UTF8 bool
	// Duplicates lists the paths of members whose key appears twice in the
	// same object. JSON parsers disagree on which one wins, so a reply with
	// duplicates means different things to different clients.
	Duplicates []string
	// TooDeep: nested deeper than MaxDepth; such bytes are not parsed
	// further (Valid is false), since every recursive reader would pay
	// for the depth or run out of stack.
	TooDeep bool
	// BOM: Raw starts with a UTF-8 byte order mark. RFC 8259 §8.1 forbids
	// a sender to add one and lets a receiver ignore it, so the message
	// is read without it (Raw keeps every byte).
	BOM bool
	// InBatch: the message is an element of a batch (a JSON array) the
	// server sent, read as a message of its own (see ReadOptions.Batches).
	InBatch bool
	root    gjson.Result
	// members are the members every check reads, found in one pass over
	// the object; nil until scanned, and for the lean messages of a long
	// stream, whose every member is looked up afresh.
	members *members
}

// members caches an object's members (the first occurrence, as gjson's
// Get would): checks read them dozens of times per reply, and a path
// lookup rescans the object. Indexed like topKeys and errorKeys.
type members struct {
	top [6]gjson.Result
	// errm is set when the error member is an object (see scan): an
	// error's cache is then one block with its members, as a request's
	// or a result's is with par's or res's.
	errm *[3]gjson.Result
	// par and res are set when params, or result, is an object: the
	// expectation and the checks read the same few members of them again
	// and again (a tool's name, its arguments, a _meta key, a result's
	// resultType), and each lookup through params or result would rescan
	// it past the arguments, the content or the tools.
	par, res *subMembers
}

// subMembers are the cached members of an object params or result,
// indexed like paramKeys or resultKeys, and how many of params' members
// are named _meta: gjson goes on to a repeated _meta for a key the first
// one lacks, so _meta's keys are answered from the cache only when there
// is at most one.
type subMembers struct {
	m     [len(paramKeys)]gjson.Result
	metas int
}

// topKeys and errorKeys name the cached members of a message and of its
// error object.
var (
	topKeys   = [6]string{"jsonrpc", "id", "method", "params", "result", "error"}
	errorKeys = [3]string{"code", "message", "data"}
	// paramKeys and resultKeys name the cached members of params and
	// result. params' _meta is last; the others are read as
	// "params.<key>" and "result.<key>".
	paramKeys  = [6]string{"name", "arguments", "uri", "inputResponses", "task", "_meta"}
	resultKeys = [len(paramKeys)]string{"resultType", "isError", "content", "tools", "protocolVersion", "structuredContent"}
)

// Parse reads raw bytes without changing them. It never fails: what is
// wrong with the bytes is recorded for the checks to judge.
func Parse(raw []byte) Message {
	m := parseLean(raw)
	m.scan()
	return m
}

// parseLean is Parse without the member cache: a message of a long
// stream costs its bytes and a few words, not a cache each.
func parseLean(raw []byte) Message {
	m := Message{Raw: raw, UTF8: utf8.Valid(raw)}
	body := trimBOM(raw)
	m.BOM = len(body) < len(raw)
	// One copy, which the root and every value read from it share, and
	// one iterative pass for the depth, the validity and the duplicates.
	text := string(body)
	valid, deep, dups := check(text, true)
	if m.TooDeep = deep; m.TooDeep {
		return m
	}
	m.Valid = valid
	if m.Valid {
		m.root = gjson.Parse(text)
		m.Duplicates = dups
	}
	return m
}

// scan fills the member cache of an object.
func (m *Message) scan() {
	if m.members != nil || !m.Valid || !m.root.IsObject() {
		return
	}
	var top [len(topKeys)]gjson.Result
	Members(m.root, topKeys[:], top[:])
	var c *members
	e, p, r := top[5], top[3], top[4]
	switch {
	case e.IsObject():
		// The error's members in the same allocation.
		both := &struct {
			members
			errm [len(errorKeys)]gjson.Result
		}{members: members{top: top}}
		Members(e, errorKeys[:], both.errm[:])
		both.members.errm = &both.errm
		c = &both.members
	case p.IsObject() || r.IsObject():
		// A request's params, or a result's members, likewise.
		both := &struct {
			members
			sub subMembers
		}{members: members{top: top}}
		c = &both.members
		if p.IsObject() {
			c.par = &both.sub
		} else {
			c.res = &both.sub
		}
	default:
		c = &members{top: top}
	}
	// (A message with more than one of them is no sane message, and
	// pays an allocation for each.)
	if p.IsObject() {
		if c.par == nil {
			c.par = new(subMembers)
		}
		c.par.scan(p, &paramKeys)
	}
	if r.IsObject() {
		if c.res == nil {
			c.res = new(subMembers)
		}
		c.res.scan(r, &resultKeys)
	}
	m.members = c
}

// scan fills sm from the object obj in one pass, as Members does.
func (sm *subMembers) scan(obj gjson.Result, keys *[len(paramKeys)]string) {
	obj.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "_meta" {
			sm.metas++
		}
		for i, key := range keys {
			if k.Str == key && !sm.m[i].Exists() {
				sm.m[i] = v
				break
			}
		}
		return true
	})
}

// get answers the path rest under the object obj that sm caches, with
// keys its keys, as obj.Get(rest) would, when the cache holds it: a
// member of keys, or (params) a key of its one _meta object, or of none
// (metaKey is set for a path of metaKeys, whose dots are escaped in
// rest). A member not found stands at obj's own Index, as Result.Get
// leaves it.
func (sm *subMembers) get(obj gjson.Result, keys *[len(paramKeys)]string, rest, metaKey string) (gjson.Result, bool) {
	notFound := gjson.Result{Index: obj.Index}
	if i := slices.Index(keys[:], rest); i >= 0 && keys[i] != "_meta" {
		if v := sm.m[i]; v.Exists() {
			return v, true
		}
		return notFound, true
	}
	if keys != &paramKeys {
		return gjson.Result{}, false
	}
	key, ok := strings.CutPrefix(rest, "_meta.")
	if metaKey != "" {
		key, ok = metaKey, true
	} else if ok && !plainKey(key) {
		ok = false
	}
	switch {
	case !ok || sm.metas > 1:
		return gjson.Result{}, false
	case sm.metas == 0:
		return notFound, true
	}
	meta := sm.m[len(paramKeys)-1]
	if !meta.IsObject() {
		return gjson.Result{}, false
	}
	out := notFound
	meta.ForEach(func(k, v gjson.Result) bool {
		if k.Str == key {
			out = v
			return false
		}
		return true
	})
	return out, true
}

// plainKey: k is a non-empty run of ASCII letters, digits and
// underscores, which a gjson path names as it is.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return k != ""
}

// bom is the UTF-8 encoding of U+FEFF.
const bom = "\xef\xbb\xbf"

// trimBOM drops a leading byte order mark, as RFC 8259 §8.1 lets a
// receiver do.
func trimBOM(b []byte) []byte {
	if len(b) >= 3 && string(b[:3]) == bom {
		return b[3:]
	}
	return b
}

// Members reads an object once and fills out[i] with its first member
// named keys[i] (the first occurrence, as gjson's Get would): cheaper
// than one Get per key, which rescans the object each time.
func Members(obj gjson.Result, keys []string, out []gjson.Result) {
	obj.ForEach(func(k, v gjson.Result) bool {
		for i, key := range keys {
			if k.Str == key && !out[i].Exists() {
				out[i] = v
				break
			}
		}
		return true
	})
}

// JSON is the message's JSON text: Raw without a leading byte order mark.
func (m *Message) JSON() []byte { return trimBOM(m.Raw) }

// Readings are the ways a receiver may read the message. RFC 8259 §4
// leaves a receiver free to keep the first or the last of duplicate
// member names, so a message with duplicates has two readings, each
// rewritten without them (the member stays where it first stood). A
// message without duplicates has one: itself.
func (m *Message) Readings() []Message {
	if len(m.Duplicates) == 0 || !m.Valid {
		return []Message{*m}
	}
	out := make([]Message, 0, 2)
	for _, last := range []bool{false, true} {
		var b []byte
		b = dedupe(m.root, last, b)
		out = append(out, Parse(b))
	}
	return out
}

// dedupe writes v without duplicate member names, keeping the first or
// the last value of each. Depth is bounded by MaxDepth (Parse refuses
// deeper input), so the recursion is safe.
func dedupe(v gjson.Result, last bool, out []byte) []byte {
	switch {
	case v.IsObject():
		type member struct {
			key string
			raw string // the key as written, escapes kept
			val gjson.Result
		}
		var ms []member
		at := map[string]int{} // a hostile object may have 100,000 keys
		v.ForEach(func(k, val gjson.Result) bool {
			i, seen := at[k.Str]
			if !seen {
				i = -1
				at[k.Str] = len(ms)
			}
			switch {
			case i < 0:
				ms = append(ms, member{k.Str, k.Raw, val})
			case last:
				ms[i].val = val
			}
			return true
		})
		out = append(out, '{')
		for i, m := range ms {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, m.raw...)
			out = append(out, ':')
			out = dedupe(m.val, last, out)
		}
		return append(out, '}')
	case v.IsArray():
		out = append(out, '[')
		i := 0
		v.ForEach(func(_, val gjson.Result) bool {
			if i > 0 {
				out = append(out, ',')
			}
			out = dedupe(val, last, out)
			i++
			return true
		})
		return append(out, ']')
	}
	return append(out, v.Raw...)
}

// Root is the whole message as a gjson value (a zero Result when invalid).
func (m *Message) Root() gjson.Result { return m.root }

// Get reads a member by gjson path; "error.code" reads {"error":{"code":…}}.
func (m *Message) Get(path string) gjson.Result {
	if !m.Valid {
		return gjson.Result{}
	}
	if c := m.members; c != nil {
		// The paths the checks read most, answered from the cache without
		// taking the path apart: the same values as the general way below.
		switch path {
		case "jsonrpc":
			return c.top[0]
		case "id":
			return c.top[1]
		case "method":
			return c.top[2]
		case "params":
			return c.top[3]
		case "result":
			return c.top[4]
		case "error":
			return c.top[5]
		case "error.code", "error.message", "error.data":
			if c.errm != nil { // the error member is an object
				return c.errm[errorMember(path)]
			}
		}
		if rest, ok := strings.CutPrefix(path, "params."); ok && c.par != nil {
			metaKey := ""
			if strings.HasPrefix(rest, "_meta.") {
				metaKey = metaKeys[path]
			}
			if v, ok := c.par.get(c.top[3], &paramKeys, rest, metaKey); ok {
				return v
			}
		}
		if rest, ok := strings.CutPrefix(path, "result."); ok && c.res != nil {
			if v, ok := c.res.get(c.top[4], &resultKeys, rest, ""); ok {
				return v
			}
		}
		// (Every path of metaKeys has this prefix: the other paths, most
		// of them, are spared hashing.)
		if strings.HasPrefix(path, "params._meta.") {
			if key, ok := metaKeys[path]; ok && c.top[3].IsObject() {
				return metaMember(c.top[3], key)
			}
		}
	}
	head, rest, nested := strings.Cut(path, ".")
	i := slices.Index(topKeys[:], head)
	if i < 0 {
		return m.root.Get(path)
	}
	// A top member is its first occurrence, and a path through it stays
	// inside that one: gjson alone would go on to a duplicate's members.
	c := m.members
	var v gjson.Result
	if c != nil {
		v = c.top[i]
	} else {
		v = m.root.Get(head)
	}
	if !nested {
		return v
	}
	if c != nil && head == "error" && c.errm != nil {
		if j := slices.Index(errorKeys[:], rest); j >= 0 {
			return c.errm[j]
		}
	}
	return v.Get(rest)
}

// metaKeys are the _meta keys of MetaPath's table by their paths: every
// request is read for them, and gjson allocates for a path with an
// escaped dot each time.
var metaKeys = func() map[string]string {
	m := make(map[string]string, len(metaPaths))
	for k, p := range metaPaths {
		m[p] = k
	}
	return m
}()

// metaMember is params.Get(MetaPath(key)[len("params."):]) as gjson reads
// it, without the path: the first member named key of the first _meta
// object of params that has one (gjson goes on to a repeated _meta when
// the first lacks the key).
func metaMember(params gjson.Result, key string) gjson.Result {
	var out gjson.Result
	params.ForEach(func(k, meta gjson.Result) bool {
		if k.Str != "_meta" || !meta.IsObject() {
			return true
		}
		meta.ForEach(func(k, v gjson.Result) bool {
			if k.Str == key {
				out = v
				return false
			}
			return true
		})
		return !out.Exists()
	})
	if !out.Exists() {
		// Result.Get leaves its own Index on a member it did not find.
		out.Index = params.Index
	}
	return out
}

// errorMember is the errm index of an "error.…" path of errorKeys.
func errorMember(path string) int {
	switch path {
	case "error.code":
		return 0
	case "error.message":
		return 1
	}
	return 2
}

// IsObject reports whether the message is a JSON object.
func (m *Message) IsObject() bool { return m.Valid && m.root.IsObject() }

// IsArray reports whether the message is a JSON array (a batch).
func (m *Message) IsArray() bool { return m.Valid && m.root.IsArray() }

// A level is a container check has open.
type level struct {
	object  bool
	keys    int             // where this object's keys start in check's keys
	many    map[string]bool // its keys, once it has many
	elem    int             // an array's element count so far
	name    string          // the key this container stands under
	index   int             // or, under an array, its index
	indexed bool
}

// joinLevels is the display path of key in the innermost of the open
// containers (the root, the first, has no name).
func joinLevels(levels []level, key string) string {
	p := ""
	for _, l := range levels[1:] {
		name := l.name
		if l.indexed {
			name = strconv.Itoa(l.index)
		}
		p = JoinPath(p, name)
	}
	return JoinPath(p, key)
}

// smallObject is how many keys an object has before duplicates are
// looked up in a map.
const smallObject = 16

// MetaSubscriptionID is the _meta key that tags what belongs to a
// subscriptions/listen stream (2026-07-28): its value is the listen
// request's id.
const MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// MetaRelatedTask is the _meta key that ties a 2025-11-25 message to a
// task ({"taskId": …}).
const MetaRelatedTask = "io.modelcontextprotocol/related-task"

// JoinPath appends a key to a dotted display path ("error.data" + "x").
// Keys with dots or wildcards are escaped as gjson would need them, so a
// reported path can be fed back to Get.
func JoinPath(path, key string) string {
	if pathSyntax(key) {
		var b strings.Builder
		for _, r := range key {
			if strings.ContainsRune(".*?|#@\\", r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		key = b.String()
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// pathSyntax: key holds a byte JoinPath escapes. It is
// strings.ContainsAny(key, ".*?|#@\\") without the set ContainsAny makes
// on every call: every string under a reply's data has its path joined,
// and a check asks for the contract's location key's on each one.
func pathSyntax(key string) bool {
	for i := 0; i < len(key); i++ {
		switch key[i] {
		case '.', '*', '?', '|', '#', '@', '\\':
			return true
		}
	}
	return false
}

// NonEmpty reports whether an array or object has a member, without
// reading them all.
func NonEmpty(v gjson.Result) bool {
	has := false
	v.ForEach(func(_, _ gjson.Result) bool { has = true; return false })
	return has
}

// Lists reports whether the array arr holds the string v (a version
// among supportedVersions or data.supported), without copying it.
func Lists(arr gjson.Result, v string) bool {
	found := false
	arr.ForEach(func(_, s gjson.Result) bool {
		found = s.Type == gjson.String && s.Str == v
		return !found
	})
	return found
}

// Kind names a JSON value's type as a person would: "string", "integer",
// "number", "object", "array", "boolean", "null" or "absent".
func Kind(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "absent"
	case v.Type == gjson.String:
		return "string"
	case v.Type == gjson.Number:
		if IsInteger(v.Raw) {
			return "integer"
		}
		return "number"
	case v.Type == gjson.True, v.Type == gjson.False:
		return "boolean"
	case v.Type == gjson.Null:
		return "null"
	case v.IsArray():
		return "array"
	default:
		return "object"
	}
}

// BeyondDouble reports whether a number is beyond 2^53 in magnitude,
// where receivers that read numbers as IEEE doubles cannot hold an
// integer exactly (RFC 8259 §6).
func BeyondDouble(n gjson.Result) bool {
	if n.Type != gjson.Number {
		return false
	}
	d := strings.TrimPrefix(n.Raw, "-")
	return len(d) > 15 && (n.Num >= 1<<53 || n.Num <= -(1<<53))
}

// IsInteger reports whether a JSON number literal denotes an integer
// value. MCP's RequestId is "string | integer": 1.5 is not an id; 1e2 is an
// integer in value but written as a float, which JSON Schema 2020-12
// accepts as integer, so we do too.
func IsInteger(raw string) bool {
	if PlainInteger(raw) {
		return true
	}
	if hugeExponent(raw) {
		return false // 1e999999 is no plausible id
	}
	n, ok := readNumber(raw)
	return ok && n.exp >= 0
}

// A number is a JSON number literal in lowest terms: sign, significant
// digits (no leading or trailing zeros; "" for zero) and a power of ten,
// so that two literals are equal exactly when their numbers are. Read in
// one pass: a reply may carry a number of a million digits, and exact
// arithmetic on it (big.Rat) costs time that grows faster than its
// length.
type number struct {
	neg    bool
	digits string
	exp    int
}

// readNumber reads a JSON number literal; ok false when raw is none, or
// its exponent is beyond what an int holds.
func readNumber(raw string) (number, bool) {
	var n number
	s := raw
	if strings.HasPrefix(s, "-") {
		n.neg, s = true, s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) {
		return n, false
	}
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expPart)
		if err != nil || len(strings.TrimLeft(strings.TrimLeft(expPart, "+-"), "0")) > 9 {
			return n, false
		}
		exp = e
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	n.digits, n.exp = trimmed, exp
	if trimmed == "" {
		n.neg, n.exp = false, 0 // -0 is 0
	}
	return n, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// SameID reports whether a reply id equals a request id in JSON type and
// value (T-RPC-5): the string "7" is not the number 7, and 1.5 stays 1.5.
// Numbers compare exactly (no float rounding: a large integer answered
// through a float64 differs); strings compare after unescaping.
func SameID(req, reply gjson.Result) bool {
	if req.Type != reply.Type {
		return false
	}
	switch req.Type {
	case gjson.String:
		if req.Str != reply.Str {
			return false
		}
		if !strings.Contains(req.Raw, `\u`) && !strings.Contains(reply.Raw, `\u`) {
			return true
		}
		return sameUnits(req.Raw, reply.Raw)
	case gjson.Number:
		if req.Raw == reply.Raw {
			return true
		}
		if PlainInteger(req.Raw) && PlainInteger(reply.Raw) {
			// Distinct digit strings (JSON has no leading zeros) differ,
			// but -0 is 0.
			return strings.TrimPrefix(req.Raw, "-") == "0" && strings.TrimPrefix(reply.Raw, "-") == "0"
		}
		a, ok1 := readNumber(req.Raw)
		b, ok2 := readNumber(reply.Raw)
		return ok1 && ok2 && a == b
	case gjson.Null:
		return true
	default:
		return req.Raw == reply.Raw
	}
}

// SameToken reports whether a progress notification's token (named)
// names the progressToken a request offered: both there, and the same
// as SameID compares ids. gjson reads a member that is absent as null,
// which SameID takes for a null id: a request that offered no token
// matched every progress with a null one.
func SameToken(offered, named gjson.Result) bool {
	return offered.Exists() && named.Exists() && SameID(offered, named)
}

// SameText: a and b are the same JSON text but for insignificant space
// (a peer that writes a value back re-serialised, as Python's json does:
// {"a": 1} for {"a":1}).
func SameText(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// Compact is the JSON text raw without insignificant space, or raw as it
// is when it is no JSON: the one spelling of an id that is kept as text.
func Compact(raw string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(raw)) != nil {
		return raw
	}
	return b.String()
}

// SameValue reports whether two JSON values are equal as values: numbers
// by their exact value whatever the spelling (1e400 is 1E400, 1.0 is 1),
// strings by their decoded text, objects by their members whatever the
// order (a repeated name read as its last), arrays element by element.
func SameValue(a, b gjson.Result) bool {
	switch {
	case a.Type != b.Type:
		return false
	case a.Type == gjson.String:
		return a.Str == b.Str
	case a.Type == gjson.Number:
		return SameID(a, b)
	case a.IsArray():
		return b.IsArray() && slices.EqualFunc(a.Array(), b.Array(), SameValue)
	case a.IsObject():
		return b.IsObject() && maps.EqualFunc(a.Map(), b.Map(), SameValue)
	}
	return true // null, true, false: the same type is the same value
}

// sameUnits compares two JSON string literals whose decoded texts agree
// as gjson reads them, which turns every unpaired surrogate escape into
// U+FFFD: by their UTF-16 code units, where a lone surrogate stays
// itself. The reply may hold the request's text with its lone surrogates
// replaced by U+FFFD (a receiver's reading, RFC 8259 §8.2), but no
// reading turns one lone surrogate into another.
func sameUnits(reqRaw, replyRaw string) bool {
	a, b := stringUnits(reqRaw), stringUnits(replyRaw)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(utf16.IsSurrogate(rune(a[i])) && b[i] == 0xFFFD && lone(a, i)) {
			return false
		}
	}
	return true
}

// lone: the code unit at i is a surrogate without its pair.
func lone(u []uint16, i int) bool {
	r := rune(u[i])
	switch {
	case r >= 0xD800 && r < 0xDC00:
		return i+1 >= len(u) || u[i+1] < 0xDC00 || u[i+1] > 0xDFFF
	default:
		return i == 0 || u[i-1] < 0xD800 || u[i-1] >= 0xDC00
	}
}

// stringUnits is the UTF-16 code units of a JSON string literal (raw,
// quotes included), escapes decoded one unit each.
func stringUnits(raw string) []uint16 {
	raw = strings.TrimSuffix(strings.TrimPrefix(raw, `"`), `"`)
	var out []uint16
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			r, n := utf8.DecodeRuneInString(raw[i:])
			out = utf16.AppendRune(out, r)
			i += n
			continue
		}
		switch e := raw[i+1]; e {
		case 'u':
			if i+6 <= len(raw) {
				if v, err := strconv.ParseUint(raw[i+2:i+6], 16, 16); err == nil {
					out = append(out, uint16(v))
					i += 6
					continue
				}
			}
			out = append(out, 'u')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default:
			out = append(out, uint16(e))
		}
		i += 2
	}
	return out
}

// PlainInteger: an optional minus and digits only, the common id form
// (not 1.0 or 1e2), judged without allocating.
func PlainInteger(raw string) bool {
	s := strings.TrimPrefix(raw, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// MaxDepth bounds the nesting the checker reads: far beyond any real
// message, and shallow enough that no recursive reader is at risk.
const MaxDepth = 512

// TooDeep reports whether raw nests objects and arrays deeper than
// MaxDepth. It is one iterative pass, safe on any input, and must run
// before any recursive reader (gjson's validator recurses per level).
func TooDeep(raw []byte) bool { return Depth(raw) > MaxDepth }

// Depth is the deepest nesting of objects and arrays in raw, counted up
// to MaxDepth+1: one iterative pass, safe on any input. Every message is
// measured before it is read, most bytes stand in strings, and a string
// is skipped to its closing quote at the speed of bytes.IndexByte.
func Depth(raw []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			end := stringEnd(raw, i)
			if end < 0 {
				return deepest
			}
			i = end
		case '{', '[':
			depth++
			if depth > deepest {
				if deepest = depth; deepest > MaxDepth {
					return deepest
				}
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// stringEnd is the index of the quote that closes the string opened at
// raw[open], -1 when none does; see StringEnd.
func stringEnd(raw []byte, open int) int { return quoteEnd(raw, open, bytes.IndexByte) }

// longRun is how many plain bytes in a row StringEnd reads one by one
// before it looks for the next quote with IndexByte.
const longRun = 32

// StringEnd is the index of the quote that closes the string opened at
// s[open], -1 when none does; linear on any input. Short runs between
// quotes and escapes are the rule in escaped text (a body held in a
// transcript line), where a call to IndexByte per escaped quote costs
// more than reading the bytes; a long run without one is skipped by
// IndexByte, a quote counted escaped when an odd run of backslashes
// stands before it.
func StringEnd(s string, open int) int { return quoteEnd(s, open, strings.IndexByte) }

// quoteEnd is StringEnd for text held as a string or as bytes; index is
// that type's IndexByte, passed in so that neither is boxed.
func quoteEnd[T string | []byte](s T, open int, index func(T, byte) int) int {
	plain := 0
	for i := open + 1; i < len(s); i++ {
		switch s[i] {
		case '"':
			return i
		case '\\':
			i++
			plain = 0
			continue
		}
		if plain++; plain < longRun {
			continue
		}
		for p := i + 1; ; {
			j := index(s[p:], '"')
			if j < 0 {
				return -1
			}
			q := p + j
			k := q - 1
			for s[k] == '\\' {
				k--
			}
			if (q-1-k)%2 == 0 {
				return q
			}
			p = q + 1
		}
	}
	return -1
}

// hugeExponent reports a number literal whose exponent exceeds 1000 in
// magnitude: exact arithmetic on it costs time a hostile reply could
// multiply.
func hugeExponent(raw string) bool {
	i := strings.IndexAny(raw, "eE")
	if i < 0 {
		return false
	}
	exp := strings.TrimLeft(raw[i+1:], "+-")
	exp = strings.TrimLeft(exp, "0")
	return len(exp) > 4 || len(exp) == 4 && exp > "1000"
}

// IDKey names a request id by JSON type and value, for matching replies
// to requests in a table ("" for no valid RequestId: neither a string nor
// a number). It is the raw number, so 1 and 1.0 are different keys: a
// reply that rewrites the id is then unmatched, and judged for it.
func IDKey(id gjson.Result) string {
	switch id.Type {
	case gjson.String:
		return StringIDKey(id.Str)
	case gjson.Number:
		// By value, as the MCP schema (JSON Schema) compares ids and as
		// SameID reads them: an integer spelled 1.0, 1e0 or 10e-1 is the
		// id 1, and -0 is 0. The spelling is judged apart (RPC1004,
		// CLI1002, CLI1004); matching and reuse go by value.
		if t, ok := IntegerText(id.Raw); ok {
			return "n" + t
		}
		return "n" + id.Raw
	}
	return ""
}

// IntegerText is the plain decimal spelling of a JSON number literal
// whose value is an integer (ok false otherwise). IsInteger bounds the
// exponent, so the text is at most about a thousand digits longer than
// raw.
func IntegerText(raw string) (string, bool) {
	if !IsInteger(raw) {
		return "", false
	}
	s, neg := strings.CutPrefix(raw, "-")
	if PlainInteger(raw) && (!neg || s != "0") {
		return raw, true
	}
	mant, expPart, _ := strings.Cut(strings.ToLower(s), "e")
	whole, frac, _ := strings.Cut(mant, ".")
	exp := 0
	if expPart != "" {
		e, err := strconv.Atoi(expPart)
		if err != nil {
			return "", false
		}
		exp = e
	}
	digits := whole + frac
	exp -= len(frac)
	if exp < 0 {
		// IsInteger: the digits dropped are zeros.
		digits = digits[:max(len(digits)+exp, 0)]
	} else {
		digits += strings.Repeat("0", exp)
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0", true
	}
	if neg {
		digits = "-" + digits
	}
	return digits, true
}

// StringIDKey is IDKey of the string id s, for ids the checker makes.
func StringIDKey(s string) string { return "s" + s }

// IntIDKey is IDKey of the integer id n, for ids the checker makes.
func IntIDKey(n int) string { return "n" + strconv.Itoa(n) }

// OtherTypeKey is the key of the same id value in the other JSON type: a
// reply that answers "7" with 7 still answers it (and is judged for the
// wrong id).
func OtherTypeKey(key string) string {
	switch {
	case key == "":
		return ""
	case key[0] == 's':
		return "n" + key[1:]
	}
	return "s" + key[1:]
}

// LogLevelRank orders the eight log levels, debug lowest (T-LOG-1); ok
// is false for any other string.
func LogLevelRank(level string) (rank int, ok bool) {
	rank, ok = logRank[level]
	return rank, ok
}

var logRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// messagesOf are the messages of a client's body: the one it is, or each
// of a batch.
func messagesOf(body []byte) []gjson.Result {
	msg := gjson.ParseBytes(body)
	if msg.IsArray() {
		return msg.Array()
	}
	return []gjson.Result{msg}
}

// MoreVerbose is the lower of two log levels, "" standing for none.
func MoreVerbose(a, b string) string {
	ra, okA := logRank[a]
	rb, okB := logRank[b]
	if !okA || okB && rb < ra {
		return b
	}
	return a
}

// PipeAsks is what else a client's message asks the server to send on a
// pipe every request shares: log messages (a 2026-07-28 request whose
// _meta sets a logLevel; logFloor is the lowest level its requests name,
// "" none, and "debug" for a logLevel that is none of the eight, which a
// server may read as any: "DEBUG" as debug) and the notifications of a
// listen stream (the ids, raw JSON, of the subscriptions/listen requests
// it is or holds).
func PipeAsks(body []byte) (logFloor string, listens []string) {
	for _, m := range messagesOf(body) {
		id := m.Get("id")
		if !id.Exists() {
			continue
		}
		if l := m.Get(MetaPath(MetaLogLevel)); l.Exists() {
			level := l.Str
			if l.Type != gjson.String || !ValidLogLevel(level) {
				level = "debug"
			}
			logFloor = MoreVerbose(logFloor, level)
		}
		if m.Get("method").Str == "subscriptions/listen" {
			listens = append(listens, id.Raw)
		}
	}
	return logFloor, listens
}

// ValidLogLevel reports whether l is one of the eight log levels.
func ValidLogLevel(l string) bool {
	_, ok := logRank[l]
	return ok
}

// AsksTask: a 2025-11-25 request is task-augmented: its params.task is
// an object (TaskMetadata). A null there, or another value, asks for no
// task (review rev49: task null was read as one).
func AsksTask(req getter) bool { return req.Get("params.task").IsObject() }

// A getter reads a member by gjson path: a *Message or a gjson.Result.
type getter interface {
	Get(path string) gjson.Result
}

// CreatedTask: result answers the task-augmented request req with the
// task it created (a CreateTaskResult: a task object, no content), not
// with the method's own result, which tasks/result gives later.
func CreatedTask(req getter, result gjson.Result) bool {
	return AsksTask(req) && TaskCreation(result)
}

// TaskCreation: result has a CreateTaskResult's shape (a task object, no
// content), the answer a receiver gives a task-augmented request it
// takes as a task.
func TaskCreation(result gjson.Result) bool {
	return result.Get("task").IsObject() && !result.Get("content").Exists()
}

// TaskLives: a 2025-11-25 request's task (params.task) was answered
// with the task it created (result.task): the request's progress token
// serves the task's whole lifetime (the progress page, Behavior
// Requirements), past the answer.
func TaskLives(version string, task, created gjson.Result) bool {
	return version == V20251125 && task.IsObject() && created.IsObject()
}

// OfferedTokens are the progress tokens (raw JSON) a client's message
// offers: the params._meta.progressToken of the request it is, or of
// each request of a batch. A notification offers none. ok is false when
// one is no token a transcript can carry (not a string or an integer, or
// not UTF-8), which toks leaves out: what was offered is then no longer
// known.
func OfferedTokens(body []byte) (toks []string, ok bool) {
	ok = true
	for _, m := range messagesOf(body) {
		tok := m.Get("params._meta.progressToken")
		if !tok.Exists() || !m.Get("id").Exists() {
			continue
		}
		if tok.Type != gjson.String && !(tok.Type == gjson.Number && IsInteger(tok.Raw)) || !utf8.ValidString(tok.Raw) {
			ok = false
			continue
		}
		toks = append(toks, tok.Raw)
	}
	return toks, ok
}

// RefusedAtHTTP: an HTTP exchange ended with a 4xx and no JSON-RPC
// response naming the request by its id (no body, a body that is none,
// such as an OAuth error, or an error whose id is absent or null): the
// HTTP layer refused the message before any MCP code took it (a 401, a
// 403 insufficient_scope, a 407, 413 or 429, a transport-level
// rejection), and it never entered the session. answer is the reply's
// JSON-RPC message, or its body. A status of 0 (stdio) is no refusal.
func RefusedAtHTTP(status int, answer []byte) bool {
	return status/100 == 4 && !AnsweredByID(answer)
}

// AnsweredByID: answer is a JSON-RPC response naming a request by its
// id: the server's MCP code read the request.
func AnsweredByID(answer []byte) bool {
	if !gjson.ValidBytes(answer) {
		return false
	}
	a := gjson.ParseBytes(answer)
	id := a.Get("id")
	return a.IsObject() && (a.Get("result").Exists() || a.Get("error").Exists()) && id.Exists() && id.Type != gjson.Null
}
