package checks

import (
	"bytes"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// Echo is judged on meaning, not on surface text: a reply text is read
// decoded (JSON escapes, percent-encoding and HTML entities undone, as a
// client showing it would), the request's texts too (JSON strings
// unescaped, Base64 header sentinels decoded), and every piece of a
// request text the reply carries counts toward that text's total,
// wherever the pieces stand (message, data, several data values). Quote
// marks around a quoted value are not part of it.

// minPiece is the shortest copied run counted as a piece of the request:
// shorter ones (names, versions, "tools/call") recur by chance.
const minPiece = 16

// window is the length of the index's windows; a run of minPiece bytes
// always holds a window starting at a multiple of stride in its source.
const (
	window = 8
	stride = minPiece - window + 1
)

// maxPlaces bounds the places one window of the request is indexed at:
// enough for a text that repeats a pattern, bounded against one that
// repeats it a million times.
const maxPlaces = 8

// minEchoValue is the shortest request value counted as echoed whole:
// shorter ones (names, versions, "add") recur in any reply by chance.
const minEchoValue = 16

// A source is one request text a reply could echo. A request of 50,000
// values has 50,000 of them, held by value and without room for what a
// reply rarely carries: what was found of it is kept aside (cov).
type source struct {
	text string
	// name says what the text is in a finding, with kind: the header's
	// name, or the value's text as the request sent it (a decoded value);
	// empty, the text itself.
	name string
	// at is where the text stands in the raw body, -1 when it does not
	// stand there verbatim (escaped, decoded, a header): pieces found in
	// it count toward the body too, so a value's pieces and the body's
	// add up as one text.
	at   int32
	kind sourceKind
	body bool // the raw body: quote marks at a run's edges are JSON syntax
	cov  *coverage
}

// coverage is what the reply carries of one source: the byte ranges of
// its text found, merged at the end, and where they were found.
type coverage struct {
	covered [][2]int
	// inBody are pieces found in the body within this value: counted
	// for it, but no part of which copy a later piece is read from
	// (overlap), which would steer pieces of a value the request holds
	// twice onto one copy and count the body short.
	inBody [][2]int
	paths  []string
}

// sourceKind is what a source is in the request.
type sourceKind uint8

const (
	sourceBody sourceKind = iota
	sourceValue
	sourceHeader
)

// what names the source for a finding: "the request body", "request
// value \"…\"", "header Mcp-Name".
func (src *source) what() string {
	switch src.kind {
	case sourceValue:
		name := src.name
		if name == "" {
			name = src.text
		}
		return "request value " + Quote(name, 24)
	case sourceHeader:
		return "header " + src.name
	}
	return "the request body"
}

// An echoScan measures, over all the texts of one reply, how much of
// each request text the reply carries.
type echoScan struct {
	p       *Pass
	sources []source
	index   *windowIndex    // nil until built
	values  map[string]bool // distinct request values seen whole; nil until one is
	paths   []string
	// inBody are the sources that stand verbatim in the body, in the
	// order they stand there: a piece found in the body within one of
	// them counts toward it too.
	inBody []int32
	// byPrefix indexes the request's values by their first bytes, for a
	// request with many (see wholeIndexed).
	byPrefix *prefixIndex
	// vocabulary are the request's texts that are not the client's to
	// leak: the name of the method the version defines, and the names
	// the server itself listed (a tool, a prompt, a resource's URI). A
	// reply that names one alone ("Error executing tool
	// search_repositories") echoes nothing the client sent; a run of the
	// request that goes on past it does (see isVocabulary).
	vocabulary []string
	// unlisted are the request's names the server may have published
	// though the run never saw it list them (see maybePublished): two
	// values echoed, one of them such a name, is not known to be echo.
	unlisted []string
	// containers are the request's objects and arrays long enough to
	// count, by shape (see structures), with their compact length.
	containers     containerSet
	members        memberSet
	containersDone bool
	// failed are the paths of structures found over the bound (see
	// structures): an echo that lies wholly within them is told once.
	failed   []string
	variants [4]string // see textPieces
	// reserial are the request's objects that a reply text may carry
	// re-serialised (see reserialised); found, the first one it did.
	reserial     *reserialSet
	reserialDone bool
	reserialAt   *reserialText
	reserialPath string
	// namesLeft is what the reply may still name of the request's member
	// names without counting it (see isMemberName): one quote bound in
	// all.
	namesLeft int
}

// A reserialText is a request object or array in the form it is compared
// in when a reply writes it out another way: whole, and as its members
// ("key":value) or elements, which a reply may write in another order
// (Go's maps sort their keys) or only in part (cut short with "...").
type reserialText struct {
	path  string // its display path; empty, the request itself
	whole int32  // its form, a pattern of the set (-1: too short to look for)
	size  int    // its compact length, as the client wrote it
	parts []reserialPart
	// covered is, found, how much of it the reply carried.
	covered int
}

// A reserialPart is a member or element: its form, a pattern of the set,
// and its compact length as the client wrote it, which is what the quote
// bound counts.
type reserialPart struct {
	pat  int32
	size int
}

// minReserialPart is the shortest member or element counted: shorter ones
// ("a":1) recur by chance. It is also the length of the key the patterns
// are found by.
const minReserialPart = 6

// Bounds of the search for request objects written out again, which
// keep it linear in a reply's size and bounded in memory: the objects
// looked for (the request's first ones, outermost first: a request whose
// objects past the quote bound are more than this is not a realistic
// tool call), the members of each, and the bytes of a reply text read.
const (
	maxReserial      = 64
	maxReserialParts = 16
	maxReserialText  = 8 << 20
)

// markValue records that the reply carries the request value v whole.
func (s *echoScan) markValue(v string) {
	if s.values == nil {
		s.values = map[string]bool{}
	}
	s.values[v] = true
}

// windowKey is the window of t at i as a number, for the index.
func windowKey(t string, i int) uint64 {
	_ = t[i+window-1]
	return uint64(t[i]) | uint64(t[i+1])<<8 | uint64(t[i+2])<<16 | uint64(t[i+3])<<24 |
		uint64(t[i+4])<<32 | uint64(t[i+5])<<40 | uint64(t[i+6])<<48 | uint64(t[i+7])<<56
}

// A windowIndex finds the places of a window in the sources: the first
// place of each window, and the next place of each place, in the order
// the sources are read. It is an open-addressing table of the first
// places, keyed by the window read back from the place's own text, and
// the places in blocks of a fixed size: a request of 50,000 values has
// a few hundred thousand windows, and neither a map entry holding each
// key nor a slice regrown (and copied) as it fills is needed for them.
type windowIndex struct {
	heads []int32 // the first place of a window, or -1; a power of two long
	// counts are the places of each window, beside heads: a window of a
	// text that repeats itself is full after maxPlaces, and each further
	// copy is dropped at a glance.
	counts []uint8
	shift  uint8 // 64 - log2(len(heads))
	n      int   // windows held
	blocks [][]place
	places int32
	// firstBlock is the capacity the first block starts with.
	firstBlock int
}

// A place is where an aligned window stands in the sources, and the
// index of the next place of the same window (-1: none).
type place struct {
	src, off, next int32
}

const (
	blockBits = 12
	blockLen  = 1 << blockBits
)

// init sizes the index for windows windows, at most half full, but
// starts it no larger than initMax: a long request that repeats one
// pattern has millions of windows and a few distinct ones, and the
// table grows if the distinct ones are many. An index used before is
// emptied, its memory kept when it is about the size needed (a larger
// table only holds the windows sparser).
func (x *windowIndex) init(windows int) {
	bits := uint8(4)
	for 1<<bits < 2*windows && 1<<bits < initMax {
		bits++
	}
	switch c := cap(x.heads); {
	case c >= 1<<bits && c <= 4<<bits:
		for 1<<bits < c {
			bits++
		}
		x.heads, x.counts = x.heads[:c], x.counts[:c]
		clear(x.counts)
	case c >= 1<<bits && c <= initMax:
		// A table no larger than one init may make is kept whatever the
		// request (traffic mixes small requests with larger ones), and
		// only the part this one needs is used and cleared.
		x.heads, x.counts = x.heads[:1<<bits], x.counts[:1<<bits]
		clear(x.counts)
	default:
		x.heads, x.counts = make([]int32, 1<<bits), make([]uint8, 1<<bits)
	}
	x.shift = 64 - bits
	for i := range x.heads {
		x.heads[i] = -1
	}
	x.n, x.places = 0, 0
	x.firstBlock = min(max(windows, 1), blockLen)
	// The first block is kept if it holds as many places as this index
	// starts with; the rest, made for a long request, are let go.
	var first []place
	// (A first block is at most blockLen places: one that large is
	// kept too, as the table is.)
	if len(x.blocks) > 0 && cap(x.blocks[0]) >= x.firstBlock && (cap(x.blocks[0]) <= 4*x.firstBlock+64 || cap(x.blocks[0]) <= blockLen) {
		first = x.blocks[0][:0]
	}
	clear(x.blocks)
	x.blocks = x.blocks[:0]
	if first != nil {
		x.blocks = append(x.blocks, first)
	}
}

// initMax bounds the table init makes.
const initMax = 1 << 12

func (x *windowIndex) at(i int32) *place { return &x.blocks[i>>blockBits][i&(blockLen-1)] }

// keyOf is the window that place i stands for.
func (x *windowIndex) keyOf(sources []source, i int32) uint64 {
	pl := x.at(i)
	return windowKey(sources[pl.src].text, int(pl.off))
}

// slot is where window w is, or would go, in heads.
func (x *windowIndex) slot(sources []source, w uint64) int {
	mask := len(x.heads) - 1
	for h := int(w * 0x9e3779b97f4a7c15 >> x.shift); ; h = (h + 1) & mask {
		if p := x.heads[h]; p < 0 || x.keyOf(sources, p) == w {
			return h
		}
	}
}

// first is the first place of window w, -1 when the request has none.
func (x *windowIndex) first(sources []source, w uint64) int32 {
	return x.heads[x.slot(sources, w)]
}

// add indexes the window of source si at off.
func (x *windowIndex) add(sources []source, si, off int32) {
	w := windowKey(sources[si].text, int(off))
	h := x.slot(sources, w)
	// A few places per window: a text that repeats itself (a canary of
	// one pattern) must not hide where a piece came from, nor cost a look
	// at every copy.
	if x.counts[h] == maxPlaces {
		return
	}
	x.counts[h]++
	last := x.heads[h]
	for last >= 0 && x.at(last).next >= 0 {
		last = x.at(last).next
	}
	p := x.places
	b := int(p >> blockBits)
	if b == len(x.blocks) {
		// The first block is sized for the windows init was told of:
		// most requests have a few dozen, and a whole block for each
		// would be most of what judging them allocates. It grows if
		// that was short; the blocks after it are made whole, and
		// never copied.
		size := blockLen
		if b == 0 {
			size = x.firstBlock
		}
		x.blocks = append(x.blocks, make([]place, 0, size))
	}
	x.blocks[b] = append(x.blocks[b], place{si, off, -1})
	x.places++
	if last >= 0 {
		x.at(last).next = p
		return
	}
	x.heads[h] = p
	if x.n++; x.n*2 > len(x.heads) {
		x.grow(sources)
	}
}

// grow doubles heads, keeping the table at most half full.
func (x *windowIndex) grow(sources []source) {
	old, oldCounts := x.heads, x.counts
	x.heads, x.counts = make([]int32, 2*len(old)), make([]uint8, 2*len(old))
	x.shift--
	for i := range x.heads {
		x.heads[i] = -1
	}
	for i, p := range old {
		if p >= 0 {
			h := x.slot(sources, x.keyOf(sources, p))
			x.heads[h], x.counts[h] = p, oldCounts[i]
		}
	}
}

func newEchoScan(p *Pass) *echoScan {
	var s *echoScan
	if sc := p.scratch; sc != nil {
		// The last scan is done with (see Scratch); its list of
		// containers is kept for its memory alone.
		s = &sc.scan
		*s = echoScan{containers: containerSet{few: s.containers.few[:0]}}
	} else {
		s = &echoScan{}
	}
	s.p, s.vocabulary, s.unlisted, s.namesLeft = p, vocabulary(p), maybePublished(p), p.Contract.QuoteBound
	raw := p.Exchange.Request.Body
	req := parsedRequest(p)
	// Made once at its size, but for decoded variants (rare): a string
	// of minPiece bytes or more takes that and two quote marks in the
	// body, escaped or not.
	n := 1 + min(bytes.Count(raw, []byte{'"'})/2, len(raw)/(minPiece+2))
	for _, vs := range p.Exchange.Request.Header {
		n += len(vs)
	}
	if sc := p.scratch; sc != nil && cap(sc.sources) >= n && cap(sc.sources) <= 4*n+64 {
		// The scans of one pass run one after another: the last one's
		// list is done with. (A far larger one is let go, so that one
		// huge request does not cost every scan after it a reset.)
		s.sources = sc.sources[:0]
	} else {
		s.sources = make([]source, 0, n)
		if sc != nil {
			sc.sources = s.sources
		}
	}
	if len(raw) >= minPiece {
		s.sources = append(s.sources, source{text: p.Reply.requestBody(p.Exchange, p.Expect), kind: sourceBody, body: true, at: -1})
	}
	add := func(text string, kind sourceKind, name string, at int) {
		if len(text) < minPiece {
			return
		}
		s.sources = append(s.sources, source{text: text, kind: kind, name: name, at: int32(at)})
		if name == "" {
			name = text
		}
		// The server may echo what it decoded: a percent-encoded value,
		// or a header's Base64 sentinel.
		for _, d := range [2]string{percentDecode(text), decodedHeader(text)} {
			if d != text && len(d) >= minPiece {
				s.sources = append(s.sources, source{text: d, kind: kind, name: name, at: -1})
			}
		}
	}
	shift := len(raw) - len(req.JSON()) // a byte order mark
	value := func(str string, index int, verbatim bool) {
		at := -1
		if len(s.sources) > 0 && verbatim {
			at = shift + index + 1
			if len(str) >= minPiece {
				s.inBody = append(s.inBody, int32(len(s.sources)))
			}
		}
		add(str, sourceValue, "", at)
	}
	if req == &p.Expect.Request {
		// The body the expectation read: its strings are walked once
		// for the exchange.
		for _, t := range p.Reply.requestTexts(p.Expect) {
			value(t.str, t.index, t.verbatim)
		}
	} else {
		walkTexts(req.Root(), func(v gjson.Result, _ bool) { value(v.Str, v.Index, verbatim(v)) })
	}
	h := p.Exchange.Request.Header
	var buf [16]string
	for _, k := range sortedKeys(buf[:0], h) {
		for _, v := range h[k] {
			add(v, sourceHeader, k, -1)
		}
	}
	return s
}

// rawControl reports a reply text that carries a control character as
// is: a quoted value has them escaped, or a request's escape sequence (ESC
// [2J clears a terminal) becomes the server's own words on the reader's
// screen. A tab and the line breaks are left to the rules on lines (and,
// in a quoted value under data, to rawLineBreak).
func rawControl(report func(path, format string, args ...any), path, v string) bool {
	if i := bareControlAt(v); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		report(path, "holds the control character %U unescaped, which acts on a terminal that shows the text; write it escaped", r)
		return true
	}
	return false
}

// rawLineBreak reports a data value that quotes the request with a line
// break as is: a carriage return lets what follows overwrite the line
// shown, a line feed starts a line of the client's own. Elsewhere a line
// break under data is the server's own text, which ERR3003 reads as
// prose; a quote is exempt there, as it is a quote, and is judged here.
// (A message's line breaks are ERR2001's, whatever they quote.)
func rawLineBreak(p *Pass, path, v string) {
	if i := strings.IndexFunc(v, isLineBreak); i >= 0 && quotesRequest(p, v) {
		r, _ := utf8.DecodeRuneInString(v[i:])
		p.Failf(path, "quotes the request with the line break %U unescaped, which breaks the line shown (a carriage return lets what follows overwrite it); write it escaped", r)
	}
}

// vocabulary lists the request's texts long enough to count as echo that
// the version or the server itself defined (see echoScan.vocabulary).
func vocabulary(p *Pass) []string {
	x := p.Expect
	var out []string
	if m := x.Method; len(m) >= minPiece && slices.Contains(envelope.Methods(x.Version), m) {
		out = append(out, m)
	}
	// So are the _meta keys it reserves: a refusal names one missing or
	// misplaced, the cause in the schema's words (review rev55: two of
	// them, one level too deep, failed as 81 characters of echo).
	for _, k := range envelope.MetaKeys {
		if bytes.Contains(p.Exchange.Request.Body, []byte(k)) {
			out = append(out, k)
		}
	}
	if x.Facts == nil {
		return out // nothing is published without facts: spared the reads
	}
	// (completion/complete names its prompt or resource under ref.)
	for _, k := range []string{"params.name", "params.uri", "params.ref.name", "params.ref.uri"} {
		if v := x.Request.Get(k); v.Type == gjson.String && len(v.Str) >= minPiece && x.Facts.Published(v.Str) {
			out = append(out, v.Str)
		}
	}
	// The values the called tool's listed inputSchema offers are the
	// server's words: a refusal listing an enum names them, whichever of
	// them the client also sent (review rev38).
	return append(out, listedValues(p, minPiece)...)
}

// maybePublished lists the request's names and URIs (a called tool's or
// prompt's name, a resource's URI, completion's ref) that may be the
// server's own though the run never saw them listed: the facts hold no
// whole list of that kind (no facts at all, as in a lint of traffic
// whose client called without listing first). A name the whole list
// lacks is the client's text; one it holds is vocabulary's.
func maybePublished(p *Pass) []string {
	x := p.Expect
	f := x.Facts
	var out []string
	for _, k := range []string{"params.name", "params.uri", "params.ref.name", "params.ref.uri"} {
		v := x.Request.Get(k)
		if v.Type != gjson.String || len(v.Str) < minPiece || f.Published(v.Str) {
			continue
		}
		if !f.ListedInFull(x.Method, strings.HasSuffix(k, "uri")) {
			out = append(out, v.Str)
		}
	}
	return out
}

// listedValues are the strings, of min bytes or more, the called tool's
// listed inputSchema offers as values (every listing's, when it was
// listed more than once): the server's words.
func listedValues(p *Pass, min int) []string {
	x := p.Expect
	if x.Method != "tools/call" || x.Facts == nil {
		return nil
	}
	var out []string
	for _, in := range x.Facts.Tool(x.Request.Get("params.name").Str).Inputs() {
		out = schemaValues(gjson.ParseBytes(in), out, min)
	}
	return out
}

// schemaValues appends to out the strings, of min bytes or more, a
// schema offers at any depth as a value: in enum, const, default or
// examples.
func schemaValues(s gjson.Result, out []string, min int) []string {
	add := func(v gjson.Result) {
		if v.Type == gjson.String && len(v.Str) >= min && !slices.Contains(out, v.Str) {
			out = append(out, v.Str)
		}
	}
	s.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Type == gjson.String && (k.Str == "const" || k.Str == "default"):
			add(v)
		case k.Type == gjson.String && (k.Str == "enum" || k.Str == "examples") && v.IsArray():
			v.ForEach(func(_, e gjson.Result) bool { add(e); return true })
		}
		// (A property may be named so too: its schema is walked.)
		if v.IsObject() || v.IsArray() {
			out = schemaValues(v, out, min)
		}
		return true
	})
	return out
}

// ownValues are the server's words an element of the client's array may
// be: the vocabulary, and the called tool's listed values of any length
// (a refusal listing a short enum, "admin, editor, viewer", names the
// server's values, whichever the client sent; review rev45).
func (s *echoScan) ownValues() []string {
	return slices.Concat(s.vocabulary, listedValues(s.p, 1))
}

// isVocabulary: t is one of the vocabulary's words, whole. Only a word
// standing alone is exempt: a run that goes on past it (the request's
// object around the tool's name) is the client's text, and so is a value
// that merely contains it.
func (s *echoScan) isVocabulary(t string) bool { return slices.Contains(s.vocabulary, t) }

// isMemberName: t is a member name of the request, whole, within the
// quote bound. A message that states its cause names the argument it is
// about ("repository_full_name: \"octocat/…\" not found"), as a distilled
// location does by the contract's own rule: the names are the words the
// cause is stated in, the request's vocabulary as the method's name and
// a listed tool's are, and counting them would leave a long name no room
// for the one value the contract lets a cause quote. Only a run that
// stands alone, bounded by JSON syntax in the request, is one: a run
// that goes on into the value is the client's text, and so is the
// request or an object of it written out again (reserialised), whatever
// its names. The names are the client's words too, so the reply names
// them free only up to one quote bound in all, the first named first:
// past it (many long names the client made up, a payload cut into keys)
// they count as any text of the request.
func (s *echoScan) isMemberName(t string) bool {
	n := readLen(t, s.namesLeft)
	if n > s.namesLeft {
		return false
	}
	if _, found := slices.BinarySearch(s.p.Reply.request(s.p.Exchange, s.p.Expect).keys, t); !found {
		return false
	}
	s.namesLeft -= n
	return true
}

// verbatim: the string v stands in the JSON text as it reads, between
// quote marks, with no escape.
func verbatim(v gjson.Result) bool {
	r := v.Raw
	return len(r) == len(v.Str)+2 && r[0] == '"' && r[len(r)-1] == '"' && r[1:len(r)-1] == v.Str
}

// parsedRequest is the request body as envelope.Parse reads it. The
// expectation holds that parse already, unless it holds a reading of the
// body rewritten without duplicate names: then its bytes differ, and the
// body is parsed afresh.
func parsedRequest(p *Pass) *envelope.Message {
	raw := p.Exchange.Request.Body
	if req := &p.Expect.Request; bytes.Equal(req.Raw, raw) {
		return req
	}
	m := envelope.Parse(raw)
	return &m
}

// build indexes the sources' aligned windows, on first need.
func (s *echoScan) build() {
	if s.index != nil {
		return
	}
	if s.p.scratch != nil {
		s.index = &s.p.scratch.index // the pass's scans run one after another
	} else {
		s.index = &windowIndex{}
	}
	windows := 0
	for _, src := range s.sources {
		if n := len(src.text); n >= window {
			windows += (n-window)/stride + 1
		}
	}
	s.index.init(windows)
	for si := range s.sources {
		t := s.sources[si].text
		for off := 0; off+window <= len(t); off += stride {
			s.index.add(s.sources, int32(si), int32(off))
		}
	}
}

// text scans one reply text at path.
func (s *echoScan) text(path, raw string) {
	variants := s.textPieces(path, raw)
	s.reserialised(path, raw)
	if s.conditionValue(path) {
		return // the condition's own value, by the vocabulary's name
	}
	if s.p.Reply.valueCount(s.p.Expect) > manyValues {
		s.wholeIndexed(path, variants)
		return
	}
	// A few values are searched one by one, in whatever order: a value
	// found is marked once, under this one path, whichever comes first.
	s.p.Reply.eachValue(s.p.Exchange, s.p.Expect, func(v string) {
		if len(v) < minEchoValue || utf8.RuneCountInString(v) < minEchoValue || v == s.p.Expect.Quote || s.values[v] || s.isVocabulary(v) {
			return
		}
		for _, t := range variants {
			if strings.Contains(t, v) {
				s.markValue(v)
				s.paths = append(s.paths, path)
				break
			}
		}
	})
}

// reserialisedForm is how a JSON text and a reply's rendering of it are
// compared: a server that formats the arguments it got (Python's repr or
// json.dumps with its spaces, an f-string over a dict, Go's %v of a map,
// Node's util.inspect, key=value pairs, Ruby's, Elixir's and PHP's
// "key" => value, Go's %+v of a struct, a C# record's ToString) writes the
// request's object out in other bytes than the client's. Spaces and quote
// marks are dropped, "=" and "=>" read as ":", Python's True, False and
// None as JSON's literals, and ASCII letters folded to lower case: a typed
// language's field names are the members' names capitalised (City for
// city), and a reply's text cannot tell a name from a value, so both are
// folded, on both sides (a value that differs from the client's only in
// case is its text all the same).
func reserialisedForm(t string) string {
	var b strings.Builder
	b.Grow(len(t))
	appendReserialised(&b, t)
	return b.String()
}

// reserialPlain are the bytes appendReserialised writes as a run: ASCII
// but for the quotes and spaces it drops, "=" and the first letters of
// Python's literals (a run's capitals are folded as it is written).
var reserialPlain = func() (plain [256]bool) {
	for c := range utf8.RuneSelf {
		plain[c] = !strings.ContainsRune("\"' \t\n\r\v\f=TFN", rune(c))
	}
	return plain
}()

// appendReserialised writes the form of t to b.
func appendReserialised(b *strings.Builder, t string) {
	for i := 0; i < len(t); {
		if j := i; reserialPlain[t[j]] {
			// A run of bytes the form keeps, written at once, its
			// capitals folded through a buffer: a text in capitals costs
			// no call per byte.
			upper := false
			for j < len(t) && reserialPlain[t[j]] {
				upper = upper || 'A' <= t[j] && t[j] <= 'Z'
				j++
			}
			if !upper {
				b.WriteString(t[i:j])
				i = j
				continue
			}
			var buf [256]byte
			for i < j {
				n := copy(buf[:], t[i:j])
				for k, c := range buf[:n] {
					if 'A' <= c && c <= 'Z' {
						buf[k] = c + 'a' - 'A'
					}
				}
				b.Write(buf[:n])
				i += n
			}
			continue
		}
		c := t[i]
		switch {
		case c == '"' || c == '\'' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			i++
		case c == '=':
			b.WriteByte(':')
			i++
			if i < len(t) && t[i] == '>' {
				i++ // "=>", a hash's arrow
			}
		case c == 'T' && strings.HasPrefix(t[i:], "True"):
			b.WriteString("true")
			i += 4
		case c == 'F' && strings.HasPrefix(t[i:], "False"):
			b.WriteString("false")
			i += 5
		case c == 'N' && strings.HasPrefix(t[i:], "None"):
			b.WriteString("null")
			i += 4
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
			i++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(t[i:])
			if !unicode.IsSpace(r) {
				b.WriteString(t[i : i+n])
			}
			i += n
		}
	}
}

// compactLen is the length of the JSON text raw without its
// insignificant space (the space outside its strings).
func compactLen(raw string) int {
	n, in, esc := 0, false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		}
		n++
	}
	return n
}

// reserialised notes a reply text that carries, re-serialised, one of the
// request's objects past the quote bound: the request itself, params,
// the arguments or any object or array within them, at any depth.
// Written out byte for byte it is the pieces' finding; in another form
// no piece of it is found, yet it is the client's text all the same.
func (s *echoScan) reserialised(path, raw string) {
	if s.reserialAt != nil || len(raw) <= s.p.Contract.QuoteBound {
		// (A text within the bound carries too little to judge: most
		// messages are, and make no candidates.)
		return
	}
	if !s.reserialDone {
		s.reserialDone = true
		s.reserial = newReserialSet(parsedRequest(s.p).Root(), s.p.Contract.QuoteBound, s.ownValues())
	}
	rs := s.reserial
	if rs == nil {
		return
	}
	// (Only the first of a text this long is read again: a copy of a
	// 60 MB message would break the memory bound of an exchange.)
	rs.scan(reserialisedForm(jsonUnescape(raw[:min(len(raw), maxReserialText)])))
	for i := range rs.texts {
		rt := &rs.texts[i]
		covered, members := 0, 0
		if rt.whole >= 0 && rs.found[rt.whole] {
			// The object itself, brackets and all: the client's
			// structure, however few its members.
			covered, members = rt.size, 2
		} else {
			for _, part := range rt.parts {
				if rs.found[part.pat] {
					covered, members = covered+part.size, members+1
				}
			}
		}
		// One member is one value, which the reply may quote (within
		// the bound, which the pieces judge); two or more are the
		// client's structure.
		if covered > s.p.Contract.QuoteBound && members > 1 {
			rt.covered = covered
			s.reserialAt, s.reserialPath = rt, path
			return
		}
	}
}

// A reserialSet is what a reply text is searched for: the request's
// objects and arrays past the quote bound (texts, outermost and earliest
// first), each by its form and its members', all slices of one buffer
// that holds the request in the compared form once, whatever the depth.
// The distinct forms are the patterns, found in one pass over a text by
// their first minReserialPart bytes.
type reserialSet struct {
	texts    []reserialText
	patterns []string
	next     []int32 // the next pattern of the same key, or -1
	heads    []int32 // the first pattern of a key, or -1; a power of two long
	shift    uint8
	found    []bool // for the text last scanned
}

// newReserialSet builds the set for the request root; nil when the
// request has no object or array past the bound.
func newReserialSet(root gjson.Result, bound int, vocabulary []string) *reserialSet {
	w := reserialWalk{bound: bound, batch: root.IsArray(), vocabulary: vocabulary}
	w.walk(root, nil)
	if len(w.texts) == 0 {
		return nil
	}
	slices.SortFunc(w.texts, func(a, b walkText) int { return a.whole.lo - b.whole.lo })
	buf := w.b.String()
	rs := &reserialSet{texts: make([]reserialText, len(w.texts))}
	ids := map[string]int32{}
	intern := func(sp partSpan) int32 {
		t := buf[sp.lo:sp.hi]
		if len(t) < minReserialPart {
			return -1
		}
		if id, ok := ids[t]; ok {
			return id
		}
		id := int32(len(rs.patterns))
		ids[t] = id
		rs.patterns = append(rs.patterns, t)
		return id
	}
	for i, wt := range w.texts {
		rt := &rs.texts[i]
		*rt = reserialText{path: wt.path, size: wt.whole.size, whole: intern(wt.whole)}
		for _, sp := range wt.parts {
			// (Parts too short to look for are never found.)
			if id := intern(sp); id >= 0 {
				rt.parts = append(rt.parts, reserialPart{id, sp.size})
			}
		}
	}
	bits := uint8(4)
	for 1<<bits < 2*len(rs.patterns) {
		bits++
	}
	rs.heads, rs.shift = make([]int32, 1<<bits), 64-bits
	for i := range rs.heads {
		rs.heads[i] = -1
	}
	rs.next = make([]int32, len(rs.patterns))
	for id, t := range rs.patterns {
		h := rs.slot(reserialKey(t, 0))
		rs.next[id], rs.heads[h] = rs.heads[h], int32(id)
	}
	rs.found = make([]bool, len(rs.patterns))
	return rs
}

// reserialKey is the key of the pattern, or text position, at t[i:].
func reserialKey(t string, i int) uint64 {
	_ = t[i+minReserialPart-1]
	return uint64(t[i]) | uint64(t[i+1])<<8 | uint64(t[i+2])<<16 | uint64(t[i+3])<<24 |
		uint64(t[i+4])<<32 | uint64(t[i+5])<<40
}

// slot is where key k's patterns are, or would go, in heads.
func (rs *reserialSet) slot(k uint64) int {
	mask := len(rs.heads) - 1
	for h := int(k * 0x9e3779b97f4a7c15 >> rs.shift); ; h = (h + 1) & mask {
		if p := rs.heads[h]; p < 0 || reserialKey(rs.patterns[p], 0) == k {
			return h
		}
	}
}

// scan records which patterns the form of a reply text holds. Each
// position is looked up once; the bytes compared past the key are
// bounded by a budget in proportion to the text, so that a hostile
// request and reply that share long prefixes everywhere cost linear time
// (the budget is met by no text that merely echoes the request: a
// pattern found is not compared again).
func (rs *reserialSet) scan(form string) {
	clear(rs.found)
	budget := 4*len(form) + 1<<16
	for i := 0; i+minReserialPart <= len(form); i++ {
		for p := rs.heads[rs.slot(reserialKey(form, i))]; p >= 0; p = rs.next[p] {
			if rs.found[p] {
				continue
			}
			pat, n := rs.patterns[p], minReserialPart
			for n < len(pat) && i+n < len(form) && form[i+n] == pat[n] {
				n++
			}
			if budget -= n; budget < 0 {
				return
			}
			rs.found[p] = n == len(pat)
		}
	}
}

// A reserialWalk writes the request in the compared form, once, noting
// where each object or array past the bound and its members stand.
type reserialWalk struct {
	b     strings.Builder
	bound int
	// members are the spans of the members of the containers being
	// written, each container's after its parent's.
	members []partSpan
	texts   []walkText
	batch   bool // the request is an array of messages
	// vocabulary are the server's own words (see vocabulary): an
	// element that is one is no part of the client's structure when a
	// text names it (a refusal listing the enum the client chose from).
	vocabulary []string
}

// A partSpan is where a text stands in the walk's buffer, and its compact
// length as the client wrote it.
type partSpan struct{ lo, hi, size int }

// A walkText is a container the walk keeps, and its members.
type walkText struct {
	path  string
	whole partSpan
	parts []partSpan
}

// envelopeMember: a member of the request's own envelope (the message
// at the root, or in a batch), not the client's content: a reply naming
// the method and id is no echo of it.
func (w *reserialWalk) envelopeMember(at []string, k string) bool {
	return (len(at) == 0 || len(at) == 1 && w.batch) && (k == "jsonrpc" || k == "id" || k == "method")
}

// walk writes v, reached by the keys at, and returns its compact length.
func (w *reserialWalk) walk(v gjson.Result, at []string) int {
	obj := v.IsObject()
	if !obj && !v.IsArray() {
		appendReserialised(&w.b, jsonUnescape(v.Raw))
		return compactLen(v.Raw)
	}
	start, frame := w.b.Len(), len(w.members)
	open, closing := byte('['), byte(']')
	if obj {
		open, closing = '{', '}'
	}
	w.b.WriteByte(open)
	size, n := 2, 0
	v.ForEach(func(k, e gjson.Result) bool {
		if n > 0 {
			w.b.WriteByte(',')
			size++
		}
		lo, psize := w.b.Len(), 0
		key := strconv.Itoa(n)
		if obj {
			appendReserialised(&w.b, jsonUnescape(k.Raw))
			w.b.WriteByte(':')
			psize, key = len(k.Raw)+1, k.Str
		}
		psize += w.walk(e, append(at, key))
		own := !obj && e.Type == gjson.String && slices.Contains(w.vocabulary, e.Str)
		if w.b.Len()-lo >= minReserialPart && len(w.members)-frame < maxReserialParts && !(obj && w.envelopeMember(at, k.Str)) && !own {
			w.members = append(w.members, partSpan{lo, w.b.Len(), psize})
		}
		size += psize
		n++
		return true
	})
	w.b.WriteByte(closing)
	if size > w.bound {
		w.add(at, partSpan{start, w.b.Len(), size}, w.members[frame:])
	}
	w.members = w.members[:frame]
	return size
}

// add keeps the container at whole among the texts: the first
// maxReserial in the request's order, which the walk (inner ones first)
// meets out of order.
func (w *reserialWalk) add(at []string, whole partSpan, parts []partSpan) {
	i := len(w.texts)
	if i == maxReserial {
		i = 0
		for j := range w.texts {
			if w.texts[j].whole.lo > w.texts[i].whole.lo {
				i = j
			}
		}
		if w.texts[i].whole.lo < whole.lo {
			return
		}
	} else {
		w.texts = append(w.texts, walkText{})
	}
	wt := &w.texts[i]
	wt.path, wt.whole, wt.parts = displayPath("", at), whole, append(wt.parts[:0], parts...)
}

// textPieces counts the pieces of the request a reply text carries (and
// a secret it quotes), without counting whole values: a string inside a
// request object the reply puts back whole is counted with the object
// (see structures), and its pieces still add up toward the bound. It
// returns the readings of the text searched.
func (s *echoScan) textPieces(path, raw string) []string {
	var named []string // the secrets' names already reported for this text
	for _, sec := range s.p.Secrets {
		if len(sec.Value) >= envelope.EchoedSecret && strings.Contains(raw, sec.Value) {
			if slices.Contains(named, sec.Name) {
				// One header's value and its token (a relay learns both
				// from "Bearer TOKEN"): one echo of it (review rev33).
				continue
			}
			named = append(named, sec.Name)
			// Never quote it: the report must not leak it either.
			// A value under a name that says credential is one; another
			// may be a tenant's name the server rightly names, so its
			// echo warns (see envelope.CredentialName).
			report, why := s.p.Failf, ""
			if !envelope.CredentialName(sec.Name) {
				report, why = s.p.Warnf, " (a leaked credential if it is one; the name does not say)"
			}
			if q, ok := strings.CutPrefix(sec.Name, "Query-"); ok {
				// (A relay's upstream URL carries it: see learnQuery.)
				report(path, "the value of the upstream URL's query parameter %s is echoed%s", q, why)
				continue
			}
			report(path, "the value of the %s header given with --header is echoed%s", sec.Name, why)
		}
	}
	// The readings stand in the scan's own array: the caller is done
	// with them before the next text is read.
	variants := append(s.variants[:0], raw)
	if d := jsonUnescape(raw); d != raw {
		variants = append(variants, d)
	}
	if d := percentDecode(raw); d != raw {
		variants = append(variants, d)
	}
	if strings.IndexByte(raw, '&') >= 0 {
		// A server that renders the text into a page escapes it as HTML
		// (&lt;, &quot;, &#x27;): the reader sees the request's text.
		if d := html.UnescapeString(raw); d != raw {
			variants = append(variants, d)
		}
	}

	for _, t := range variants {
		s.pieces(path, t)
	}
	return variants
}

// manyValues is how many request values are searched for one by one;
// past it they are indexed by their first minEchoValue bytes, so a
// request of 50,000 values and a reply of 50,000 strings cost time in
// proportion to their sizes, not to the product.
const manyValues = 32

// wholeIndexed is the whole-value search of text for a request with many
// values: every position of each variant is looked up in an index of the
// values' first bytes.
func (s *echoScan) wholeIndexed(path string, variants []string) {
	if s.byPrefix == nil {
		s.byPrefix = newPrefixIndex(s.p.Reply.values(s.p.Exchange, s.p.Expect))
	}
	x := s.byPrefix
	for _, t := range variants {
		for i := 0; i+minEchoValue <= len(t); i++ {
			pre := t[i : i+minEchoValue]
			for j := x.first(pre); j >= 0 && j < len(x.values) && strings.HasPrefix(x.values[j], pre); j++ {
				v := x.values[j]
				if utf8.RuneCountInString(v) < minEchoValue || v == s.p.Expect.Quote || s.isVocabulary(v) {
					continue
				}
				if !s.values[v] && strings.HasPrefix(t[i:], v) {
					s.markValue(v)
					s.paths = append(s.paths, path)
				}
			}
		}
	}
}

// A prefixIndex finds the request values that start with given
// minEchoValue bytes. The values are sorted, so those sharing their first
// bytes stand together: an open-addressing table of where each such run
// starts is the whole index, a few bytes per value.
type prefixIndex struct {
	values []string
	heads  []int32 // the first value of a run, or -1; a power of two long
	shift  uint8   // 64 - log2(len(heads))
}

func newPrefixIndex(sorted []string) *prefixIndex {
	// starts: v begins a run of values sharing their first bytes.
	starts := func(j int) bool {
		v := sorted[j]
		return len(v) >= minEchoValue && (j == 0 || !strings.HasPrefix(sorted[j-1], v[:minEchoValue]))
	}
	runs := 0
	for j := range sorted {
		if starts(j) {
			runs++
		}
	}
	size, shift := 16, uint8(64-4)
	for size < 2*runs {
		size, shift = size*2, shift-1
	}
	x := &prefixIndex{values: sorted, heads: make([]int32, size), shift: shift}
	for i := range x.heads {
		x.heads[i] = -1
	}
	for j := range sorted {
		if starts(j) {
			x.heads[x.slot(sorted[j][:minEchoValue])] = int32(j)
		}
	}
	return x
}

// slot is where the run of values starting with pre is, or would go.
func (x *prefixIndex) slot(pre string) int {
	k := windowKey(pre, 0)*0x9e3779b97f4a7c15 ^ windowKey(pre, window)*0xc2b2ae3d27d4eb4f
	mask := len(x.heads) - 1
	for h := int(k >> x.shift); ; h = (h + 1) & mask {
		if j := x.heads[h]; j < 0 || x.values[j][:minEchoValue] == pre {
			return h
		}
	}
}

// first is the index of the first value starting with pre, -1 if none.
func (x *prefixIndex) first(pre string) int { return int(x.heads[x.slot(pre)]) }

// pieces finds the runs of t copied from a source and records what of
// the source they cover.
func (s *echoScan) pieces(path, t string) {
	if len(t) < minPiece || len(s.sources) == 0 {
		return
	}
	s.build()
	for i := 0; i+window <= len(t); {
		first := s.index.first(s.sources, windowKey(t, i))
		if first < 0 {
			i++
			continue
		}
		// Extend both ways from each place the window stands in the
		// request (it may sit anywhere in the run); keep the longest.
		var src *source
		b, f, at := 0, 0, 0
		for pi := first; pi >= 0; pi = s.index.at(pi).next {
			pl := s.index.at(pi)
			cand, off := &s.sources[pl.src], int(pl.off)
			cb := 0
			for i-cb > 0 && off-cb > 0 && t[i-cb-1] == cand.text[off-cb-1] {
				cb++
			}
			cf := window
			for i+cf < len(t) && off+cf < len(cand.text) && t[i+cf] == cand.text[off+cf] {
				cf++
			}
			// At equal length the same text stands in several places of
			// the request (keys sharing a prefix, a value that repeats):
			// prefer the place already found, so that a text copied
			// several times counts once, whichever copy it was read from.
			if src == nil || cb+cf > b+f || cb+cf == b+f && overlap(cand, off-cb, off+cf) > overlap(src, at-b, at+f) {
				src, b, f, at = cand, cb, cf, off
			}
		}
		lo, hi := at-b, at+f
		if src.body {
			// A quoted value carries its quote marks in the body, and a
			// reply's "query: \"…\"" matches the body's ": \"" before it
			// when the body spaces its members: JSON syntax, not part of
			// what was echoed.
			for lo < hi && jsonSyntax(src.text[lo]) {
				lo++
			}
			for hi > lo && jsonSyntax(src.text[hi-1]) {
				hi--
			}
		}
		if hi-lo >= minPiece && !s.isVocabulary(src.text[lo:hi]) && !s.isMemberName(src.text[lo:hi]) {
			src.cover(lo, hi, path, false)
			switch {
			case src.at >= 0 && s.sources[0].body:
				base := int(src.at)
				s.sources[0].cover(base+lo, base+hi, path, false)
			case src.body:
				// The same run stands in a value: which copy the index
				// met first (it keeps a few places of a window) must not
				// decide whether the finding names the value.
				if v := s.valueAt(lo, hi); v != nil {
					v.cover(lo-int(v.at), hi-int(v.at), path, true)
				}
			}
		}
		i += f
	}
}

// jsonSyntax: c is a byte JSON puts between values (quote marks, the
// separators, brackets, white space).
func jsonSyntax(c byte) bool { return strings.IndexByte("\":, \t\r\n{}[]", c) >= 0 }

// valueAt is the value that stands verbatim in the body around [lo, hi),
// nil when none does.
func (s *echoScan) valueAt(lo, hi int) *source {
	// The last value that starts at or before lo.
	i, _ := slices.BinarySearchFunc(s.inBody, lo, func(si int32, lo int) int {
		if int(s.sources[si].at) <= lo {
			return -1
		}
		return 1
	})
	if i == 0 {
		return nil
	}
	v := &s.sources[s.inBody[i-1]]
	if hi > int(v.at)+len(v.text) {
		return nil
	}
	return v
}

// overlap counts the bytes of [lo, hi) already covered in src, among
// its latest pieces: the copy a text was read from before is found among
// them, and a reply that echoes a text ten thousand times must not cost
// ten thousand comparisons per piece.
func overlap(src *source, lo, hi int) int {
	if src.cov == nil {
		return 0
	}
	n := 0
	covered := src.cov.covered
	covered = covered[max(0, len(covered)-recentPieces):]
	for _, c := range covered {
		if c[1] > lo && c[0] < hi {
			n += min(hi, c[1]) - max(lo, c[0])
		}
	}
	return n
}

// recentPieces is how many of a source's latest pieces overlap reads.
const recentPieces = 64

// cover records that the reply at path carries text[lo:hi]; inBody: a
// piece found in the body within this value (see coverage.inBody).
func (src *source) cover(lo, hi int, path string, inBody bool) {
	if src.cov == nil {
		src.cov = &coverage{}
	}
	c := src.cov
	if inBody {
		c.inBody = append(c.inBody, [2]int{lo, hi})
	} else {
		c.covered = append(c.covered, [2]int{lo, hi})
	}
	// A path's pieces come one after another (each reply text is read
	// once): the last path is the only one it can repeat.
	if n := len(c.paths); n == 0 || c.paths[n-1] != path {
		c.paths = append(c.paths, path)
	}
}

// done reports what the reply echoes beyond the one short value allowed:
// a request text whose pieces add up past the quote bound, or more than
// one whole request value; sure says how sure the reply is a refusal,
// the only reply the rule binds.
func (s *echoScan) done(path string, sure expect.Want) {
	bound := s.p.Contract.QuoteBound
	var worst *source
	worstN := 0
	for i := range s.sources {
		src := &s.sources[i]
		// The body holds every value: at equal counts, name the value.
		if n := coveredRunes(src, bound); n > bound && (n > worstN || n == worstN && worst.body && !src.body) {
			worst, worstN = src, n
		}
	}
	within := func(ps []string) bool {
		return len(s.failed) > 0 && !slices.ContainsFunc(ps, func(p string) bool {
			return !slices.ContainsFunc(s.failed, func(f string) bool { return p == f || strings.HasPrefix(p, f+".") })
		})
	}
	if worst != nil && !within(worst.cov.paths) {
		c := worst.cov
		at := path
		if len(c.paths) == 1 {
			at = c.paths[0]
		}
		first := slices.Concat(c.covered, c.inBody)[0]
		s.p.Deviate(sure, at, "%d characters of %s are echoed (at %s), over the quote bound of %d: %s", worstN, worst.what(),
			strings.Join(c.paths, ", "), bound, Quote(worst.text[first[0]:first[1]], quoteN))
	}
	if n := len(s.values); n > 1 && !within(s.paths) {
		// (Two values in one text name that text once.)
		at := strings.Join(slices.Compact(slices.Clone(s.paths)), ", ")
		if own := slices.DeleteFunc(slices.Clone(s.unlisted), func(v string) bool { return !s.values[v] }); len(own) > 0 && n-len(own) <= 1 {
			// Not echo if the server published that name, which the
			// run does not know (review rev61: lint of a client that
			// calls a tool without listing first failed it).
			s.p.Deviate(expect.Want{Level: expect.Open, Rule: "DESIGN verdict rulings: a fail only from what is known"}, path,
				"%d request values are echoed whole (at %s); one is %s, which is not echo if the server itself listed it, and the run did not see the server's list", n, at, Quote(own[0], quoteN))
			return
		}
		s.p.Deviate(sure, path, "%d request values are echoed whole (at %s); at most the one the condition is about may be quoted", n, at)
	}
	if r := s.reserialAt; r != nil && worst == nil && !within([]string{s.reserialPath}) {
		what := "the request"
		if r.path != "" {
			what = "the request's " + r.path
		}
		s.p.Deviate(sure, s.reserialPath, "%s is echoed, written out again (%d characters of it without spaces), over the quote bound of %d", what, r.covered, bound)
	}
}

// coveredRunes counts the characters of src the reply carries, each once
// however often it was copied, as a bound counts them (readLen).
func coveredRunes(src *source, bound int) int {
	if src.cov == nil {
		return 0
	}
	iv := slices.Concat(src.cov.covered, src.cov.inBody)
	slices.SortFunc(iv, func(a, b [2]int) int { return a[0] - b[0] })
	n, lo, hi := 0, iv[0][0], iv[0][1]
	for _, r := range iv[1:] {
		if r[0] <= hi {
			hi = max(hi, r[1])
			continue
		}
		n += readLen(src.text[lo:hi], bound)
		lo, hi = r[0], r[1]
	}
	return n + readLen(src.text[lo:hi], bound)
}

// jsonUnescape undoes JSON string escapes in a text that carries a JSON
// document as a string (a server putting the request, encoded, into its
// message). Malformed escapes stay as they are.
func jsonUnescape(t string) string {
	if !strings.Contains(t, `\`) {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '\\' || i+1 >= len(t) {
			b.WriteByte(c)
			continue
		}
		switch e := t[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, n := unicodeEscape(t[i:])
			if n == 0 {
				b.WriteByte(c)
				continue
			}
			b.WriteRune(r)
			i += n - 1
			continue
		default:
			b.WriteByte(c)
			continue
		}
		i++
	}
	return b.String()
}

// unicodeEscape reads \uXXXX (and a following low surrogate) at the start
// of t; n is the bytes read, 0 when it is no escape.
func unicodeEscape(t string) (rune, int) {
	hex4 := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range []byte(s[2:6]) {
			if !isHex(c) {
				return 0, false
			}
			r = r<<4 | rune(unhex(c))
		}
		return r, true
	}
	r, ok := hex4(t)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if r2, ok := hex4(t[6:]); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12
			}
		}
	}
	return r, 6
}

// percentDecode undoes %XX escapes; a % not followed by two hex digits
// stays.
func percentDecode(t string) string {
	if !strings.Contains(t, "%") {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] == '%' && i+2 < len(t) && isHex(t[i+1]) && isHex(t[i+2]) {
			b.WriteByte(unhex(t[i+1])<<4 | unhex(t[i+2]))
			i += 2
			continue
		}
		b.WriteByte(t[i])
	}
	return b.String()
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// conditionValue reports whether path holds the condition's own value by
// the contract's vocabulary: a header binding's header, body value and
// header value (-32020), the version a request asked for (-32022). Each
// is bounded by the quote bound and not counted as a whole value
// besides. Under another code those keys are data like any other: an
// argument value put under "received" beside a tool name in the message
// is a second value of the request.
func (s *echoScan) conditionValue(path string) bool {
	if s.p.Reply.Response == nil {
		return false
	}
	code := s.p.Reply.Response.Get("error.code")
	switch path {
	case "error.data.header", "error.data.expected", "error.data.received":
		return code.Int() == envelope.CodeHeaderMismatch && code.Type == gjson.Number
	case "error.data.requested":
		return code.Int() == envelope.CodeUnsupportedVer && code.Type == gjson.Number
	}
	return false
}

var NoEcho = &Check{
	ID:         "ERR4001",
	StrictOnly: true,
	Title:      "The error does not echo the request",
	SpecRef:    "contract: no echo",
	Severity:   MUST,
	Area:       AreaEcho,
	Doc: `Nothing in error.message or under error.data carries the request beyond
one short quoted value. Echo is judged on what a reader sees, not on the
bytes: reply texts are read with JSON escapes, percent-encoding and HTML
entities undone, request values decoded too, and the quote marks around a
quoted value do not count. Four things are judged:
the pieces of any one request text (its raw body, a string value in it, a
header value) that the reply carries, added up over message and every
data value and every member name nested under data's keys (a name is
read as a value is, the contract's location and problems names aside),
must stay within the quote bound (64 characters by default;
pieces shorter than 16 characters are not counted, they recur by chance);
at most one whole request value (of 16 characters or more) may be quoted,
in text or as structure (the request's object or array put back under
data, re-encoded or not: its compact text counts toward the bound, but
one of a single member or element is that one value put back, and counts
as that value; and
the request itself or any object or array in it past the bound, at any
depth (the first 64 in the request), written into a text another way, as
Python's repr or json.dumps writes it, spaced or not, its keys in another
order, with "=" or Ruby's "=>" for ":", its names capitalised as a typed
language's fields are: Go's %+v of a struct, a C# record) — the
values under the vocabulary's own quote keys are the condition's and are
not counted (header, expected and received under -32020, requested under
-32022), nor are the tokens of a distilled error's location that name the
request's members (the pointer the contract asks for), nor the method's
name, a _meta key the protocol reserves (io.modelcontextprotocol/…), a
member name of the request within the quote bound (the argument
a cause names: "repository_full_name: \"…\" not found"), or a tool,
prompt or resource the server itself listed (the run's facts show it),
where one stands alone: a run that goes on past it, into its value,
counts. When the run never saw that whole list (a lint of a client that
called from a cached list), a name may be the server's own or the
client's: two values echoed, one of them such a name, warn and say so;
no text under data carries a control character as is (a tab aside; a
bidirectional control such as U+202E counts, as for ERR2001): the
quoted value has it escaped, a line break too (a line break in the
server's own text under data is ERR3003's, in the message ERR2001's);
and, in live runs, no value given with --header, which is never quoted in
the report: a header named for a credential (Authorization, Cookie, a
name holding auth, token, secret, password, session or a key) fails, any
other's warns, for its value may be a tenant's or a region's name the
server rightly names.
A server that echoes the request leaks what the client sent into logs and
into the calling model's context, and a hostile request becomes the
server's own words. Strict contract only.`,
	Run: func(p *Pass) error {
		e, err := needError(p)
		if err != nil {
			return err
		}
		s := newEchoScan(p)
		s.text("error.message", p.Reply.Response.Get("error.message").Str)
		whole := s.structures(e.Get("data"), "error.data")
		for _, ps := range p.Reply.errorDataStrings() {
			path, v := ps.path, ps.s
			if !rawControl(p.Failf, path, v) {
				rawLineBreak(p, path, v)
			}
			if whole.holds(path) {
				// A whole value with the request's object it stands in;
				// its pieces still count toward the bound.
				s.textPieces(path, v)
				continue
			}
			if isLocationPath(path, p.Contract.LocationKey) {
				// The pointer the distilled entry must carry names the
				// request's members by the contract's own rule; only what
				// else it holds is text the reply echoes.
				v = strings.Join(foreignTokens(p, v), "/")
			}
			s.text(path, v)
		}
		// A name under data is read as a value is (review rev83: a
		// request value written as a member name passed unseen), but for
		// the contract's own names of a distilled entry's members.
		eachNestedName(e.Get("data"), func(steps []pathStep, name string) {
			if len(steps) == 2 && steps[0].key == "errors" && steps[1].idx >= 0 && (name == p.Contract.LocationKey || name == p.Contract.ProblemsKey) {
				return
			}
			if namesRequestPlace(p, name) {
				// A request member's name as a key says where, as a
				// distilled location does, and is no echo of a value:
				// keyed by argument (zod's fieldErrors), it would count
				// again what the message named (review rev86); so is a
				// pointer or a dotted path of such names (review rev87).
				return
			}
			path := stepsPath(steps)
			if whole.holds(path) {
				s.textPieces(path, name)
				return
			}
			s.text(path, name)
		})
		s.done("error", expect.Want{Level: expect.Must})
		return nil
	},
}

// namesRequestPlace: key names a place in the request: one of its member
// names, or a JSON Pointer or a dotted path whose every token is one (or
// an array index).
func namesRequestPlace(p *Pass, key string) bool {
	keys := p.Reply.request(p.Exchange, p.Expect).keys
	if _, found := slices.BinarySearch(keys, key); found {
		return true
	}
	if strings.HasPrefix(key, "/") {
		return len(foreignTokens(p, key)) == 0
	}
	if !strings.Contains(key, ".") {
		return false
	}
	for t := range strings.SplitSeq(key, ".") {
		if _, found := slices.BinarySearch(keys, t); !found && (t == "" || !allDigits(t)) {
			return false
		}
	}
	return true
}

var NoEchoInToolError = &Check{
	ID:         "ERR4002",
	StrictOnly: true,
	Title:      "A refused tool call does not echo the request",
	SpecRef:    "contract: no echo; T-TOOL-8",
	Severity:   MUST,
	Area:       AreaEcho,
	Doc: `Since 2025-11-25 a tool refuses bad arguments with a result whose
isError is true (T-TOOL-8): the tool dialect of a refusal. Its text content
obeys the same no-echo rule as error messages, judged the same way (see
ERR4001), raw control characters included. The rule binds refusals only:
when the tool the server listed accepts the arguments, an isError result
is the tool's own failure (a file it could not open, a query the
database refused), whose output may name what it was given, and is
not judged, unless its text calls the arguments wrong (a rule of the
server's own): then, as without the listed inputSchema, where the two
look alike, an echo only warns. Strict contract only.`,
	Run: func(p *Pass) error {
		m, err := needObject(p)
		if err != nil {
			return err
		}
		// (Through the message, whose member cache answers both: most
		// replies are results, and each read through the result would
		// pass over its content again.)
		if m.Get("result.isError").Type != gjson.True {
			return Skip("the reply is not a tool error result")
		}
		// Each item's text is read once, for both uses: a tool's
		// output may be long, and a path lookup reads it whole.
		items := m.Get("result.content").Array()
		texts := make([]gjson.Result, len(items))
		var text strings.Builder
		for i, c := range items {
			texts[i] = c.Get("text")
			text.WriteString(texts[i].Str)
			text.WriteByte('\n')
		}
		sure, err := toolRefusal(p.Expect, text.String())
		if err != nil {
			return err
		}
		s := newEchoScan(p)
		for i, t := range texts {
			if t.Type == gjson.String {
				path := fmt.Sprintf("result.content.%d.text", i)
				// A tool's own output may be colored (a compiler's, a
				// CLI's): only a warning there.
				rawControl(p.Warnf, path, t.Str)
				s.text(path, t.Str)
			}
		}
		s.done("result.content", sure)
		return nil
	},
}

// toolRefusal says how sure a tool's isError result is a refusal of the
// call: sure when the call was wrong (an unknown tool, arguments the
// listed inputSchema forbids); not one at all when the listed schema
// accepts the arguments, for the tool then failed at its own work
// (T-TOOL-13: a missing file, a rejected query), whose output may name
// what it was given; open when the checker has no schema to tell.
func toolRefusal(x *expect.Expectation, text string) (expect.Want, error) {
	switch {
	case x.Condition == expect.CondUnknownTool || x.Condition == expect.CondMalformedCall || x.Condition == expect.CondInvalidParams,
		x.Tool != nil && x.Tool.Refusal.Set(),
		x.Error.Level == expect.Must:
		// (The last: the protocol refuses the request before any tool
		// runs, a header mismatch say: a result for it is a refusal in
		// a result's clothes, not the tool's own failure.)
		return expect.Want{Level: expect.Must}, nil
	case x.Tool != nil && x.Tool.Judged && !refusalWords(text):
		return expect.Want{}, Skip("the arguments match the listed tool's inputSchema: isError reports the tool's own failure (T-TOOL-13), not a refusal")
	case x.Tool != nil && x.Tool.Judged:
		// The text reads as a refusal of the arguments, by rules of the
		// server's own beyond the schema.
		return expect.Want{Level: expect.Open, Rule: "the listed inputSchema accepts the arguments, but the result reads as a refusal of them"}, nil
	}
	return expect.Want{Level: expect.Open, Rule: "without the listed tool's inputSchema a refusal (T-TOOL-8) and the tool's own failure (T-TOOL-13) look alike"}, nil
}

// refusalWords: a text that calls the call's arguments wrong, in the
// protocol's or a validator's words.
func refusalWords(text string) bool {
	return invalidParamsName.MatchString(text) || unknownNameRE.MatchString(text) || validationMessage.MatchString(text) || typeComplaint.MatchString(text)
}

// decodedHeader is a header value as the server reads it: a Base64
// sentinel decoded (T-HDR-3).
func decodedHeader(v string) string {
	if d, ok := envelope.DecodeHeaderValue(v, envelope.Base64Reading{URLSafe: true}); ok {
		return d
	}
	return v
}
