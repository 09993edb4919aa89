package expect

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// A Listing is what the earlier pages of one listing showed, for a later
// page to be judged by: a page answers for the whole list it is part of,
// not for itself alone.
type Listing struct {
	// Scope is the first page's cacheScope (2026-07-28): every page
	// keeps it (T-CACHE-3).
	Scope string `json:"cacheScope,omitempty"`
	// Cursors are the nextCursors the earlier pages handed out, the one
	// that asked this page last: a page handing out one of them again
	// sends its reader round in a loop (T-PAGE-3).
	Cursors []string `json:"cursors,omitempty"`
	// Names are the tool names the earlier pages of a tools/list listed
	// (T-TOOL-5: unique within the server).
	Names []string `json:"names,omitempty"`
}

// Bounds of what a Listing remembers: a longer listing is judged by its
// first pages only, and a cursor longer than what is left is not kept,
// which may miss a repeat but never invents one. Every later page's
// expectation, and so its recording, carries the listing, and a facts
// line every listing the traffic showed: kept small, a server's long
// cursors or many tools cannot make a transcript grow with the square
// of its pages (review rev27).
const (
	maxListingCursors     = 64
	maxListingCursorBytes = 2 << 10
	maxListingNames       = 1000
	maxListingNameBytes   = 8 << 10
)

// Empty reports whether l holds nothing to judge a page by.
func (l Listing) Empty() bool {
	return l.Scope == "" && len(l.Cursors) == 0 && len(l.Names) == 0
}

// Next is the listing the page after this one is judged by: l with the
// page's own nextCursor, and its tool names when it is a tools/list
// page. scope is the page's own cacheScope, kept where l has none (a
// first page).
func (l Listing) Next(scope, next string, names []string) Listing {
	n := Listing{Scope: l.Scope, Cursors: slices.Clip(l.Cursors), Names: slices.Clip(l.Names)}
	if n.Scope == "" {
		n.Scope = scope
	}
	if len(n.Cursors) < maxListingCursors && sizeOf(n.Cursors)+len(next) <= maxListingCursorBytes {
		n.Cursors = append(n.Cursors, next)
	}
	size := sizeOf(n.Names)
	for _, s := range names {
		if len(n.Names) >= maxListingNames || size+len(s) > maxListingNameBytes {
			break
		}
		n.Names, size = append(n.Names, s), size+len(s)
	}
	return n
}

// sizeOf is the bytes of the strings of ss.
func sizeOf(ss []string) int {
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	return n
}

// size is about the bytes l takes in a transcript.
func (l Listing) size() int {
	return len(l.Scope) + sizeOf(l.Cursors) + sizeOf(l.Names)
}

// Override is the override that carries l, for a recording: lint judges
// the page by it as the run did.
func (l Listing) Override() *Override {
	o := &Override{}
	// Set as a transcript's line is read, so that both judge alike; none
	// of these values can be refused.
	if l.Scope != "" {
		_ = o.Set("expect-page-scope", l.Scope)
	}
	if len(l.Cursors) > 0 {
		b, _ := json.Marshal(l.Cursors)
		_ = o.Set("expect-page-cursors", string(b))
	}
	if len(l.Names) > 0 {
		b, _ := json.Marshal(l.Names)
		_ = o.Set("expect-page-names", string(b))
	}
	return o
}

// A page is a nextCursor the traffic showed, with the listing its page
// is judged by. A listing in an HTTP session is that session's: another
// client's may hand out the same cursor for a list of its own.
type page struct {
	Method  string `json:"method"`
	Cursor  string `json:"cursor"`
	Session string `json:"session,omitempty"`
	Listing
}

// maxPages and maxPagesBytes bound the pages remembered: the oldest go.
const (
	maxPages      = 64
	maxPagesBytes = 64 << 10
)

// Listing is what the earlier pages of the listing whose page a request
// with cursor asks for showed; empty when the traffic did not show them.
// A cursor two listings handed out (an offset a stateless server gives
// every listing) leads on the latest: its scope may differ from an
// earlier listing's, as a scope may follow the authorization context.
func (f *Facts) Listing(method, cursor, session string) Listing {
	if f == nil {
		return Listing{}
	}
	for i := len(f.pages) - 1; i >= 0; i-- {
		if p := f.pages[i]; p.Method == method && p.Cursor == cursor && p.Session == session {
			return p.Listing
		}
	}
	return Listing{}
}

// learnPage remembers what a list page hands on to the page its
// nextCursor leads to; it reports whether n changed.
func (n *Facts) learnPage(method, session string, req envelope.Message, res gjson.Result) bool {
	next := res.Get("nextCursor")
	if next.Type != gjson.String {
		return false
	}
	var before Listing
	if c := req.Get("params.cursor"); c.Type == gjson.String {
		if before = n.Listing(method, c.Str, session); len(before.Cursors) == 0 {
			// A listing the traffic joined at this page: the cursor that
			// asked for it was handed out all the same.
			before.Cursors = []string{c.Str}
		}
	}
	scope := ""
	if res.Get("resultType").Exists() {
		scope = res.Get("cacheScope").Str // (a 2026-07-28 page)
	}
	l := before.Next(scope, next.Str, ListedNames(method, res))
	// The listing that last handed out the cursor owns it: an older
	// listing's entry goes, so it neither judges the page nor takes a
	// place among the maxPages.
	stale := func(p page) bool { return p.Method == method && p.Cursor == next.Str && p.Session == session }
	if len(next.Str) > maxListingCursorBytes {
		// A page no remembered listing can lead to: an older listing's
		// entry for it still goes.
		n.pages = slices.DeleteFunc(slices.Clone(n.pages), stale)
		return true
	}
	pages := append(slices.DeleteFunc(slices.Clone(n.pages), stale), page{method, next.Str, session, l})
	total := 0
	for _, p := range pages {
		total += len(p.Cursor) + p.size()
	}
	for len(pages) > 1 && (len(pages) > maxPages || total > maxPagesBytes) {
		total -= len(pages[0].Cursor) + pages[0].size()
		pages = pages[1:]
	}
	n.pages = pages
	return true
}

// ListedNames are the tool names a tools/list page lists; nil for
// another list.
func ListedNames(method string, res gjson.Result) []string {
	if method != "tools/list" {
		return nil
	}
	var names []string
	res.Get("tools").ForEach(func(_, t gjson.Result) bool {
		if nm := t.Get("name"); nm.Type == gjson.String {
			names = append(names, nm.Str)
		}
		return true
	})
	return names
}

// jsonStrings reads an override's JSON array of strings.
func jsonStrings(v string) ([]string, error) {
	a := gjson.Parse(v)
	out := []string{}
	for _, e := range a.Array() {
		if e.Type != gjson.String {
			break
		}
		out = append(out, e.Str)
	}
	if !gjson.Valid(v) || !a.IsArray() || len(out) != len(a.Array()) {
		// (null, a null member or a number read as "" would judge a page
		// by a cursor no page handed out; review rev29.)
		return nil, errors.New("want a JSON array of strings")
	}
	return out, nil
}
