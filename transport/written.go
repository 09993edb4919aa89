package transport

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// maxWritten bounds the id readings a process's written set holds; past
// it, whether an id was written is no longer known.
const maxWritten = 1 << 14

// A written set holds every reading of the ids of the requests written
// to one process (its own exchanges', the runner's markers and probes,
// batches' elements): a response naming none of them answers no request
// the checker sent (T-RPC-5). The readings are loose on purpose, so that
// only an id no reading of any written one gives is called unsent: 7 and
// "7", 100 and 1e2, a string read with its invalid UTF-8 replaced.
//
// It also holds the responses exchanges took, by the id key of their
// request (see idKey): read by Do's exchanges and, through Again, by a
// runner that reads the pipe itself.
type written struct {
	mu   sync.Mutex
	seen map[string]int
	full bool
	// answered are the responses exchanges took (bounded, started
	// afresh when full): the same response again (a server that answers
	// twice) is a second response and no later exchange's reply; another
	// naming one is a second response, or a later exchange's reply if no
	// other comes (a server that answers with a stale id). See Second.
	answered map[string]string
}

// took notes resp as the response taken for the request with id key k.
func (w *written) took(k, resp string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.answered == nil || len(w.answered) >= maxLate {
		w.answered = map[string]string{}
	}
	w.answered[k] = resp
}

// taken is the response taken for the request with id key k, if any.
func (w *written) taken(k string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	resp, ok := w.answered[k]
	return resp, ok
}

// add notes the ids of the request body (a message or a batch of them),
// however lenient a reader of it (a body that is not quite JSON keeps a
// readable id).
func (w *written) add(body []byte) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var ids []gjson.Result
	if v := gjson.ParseBytes(body); v.IsArray() {
		v.ForEach(func(_, e gjson.Result) bool {
			ids = append(ids, e.Get("id"))
			return true
		})
	} else {
		ids = append(ids, gjson.GetBytes(body, "id"))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		for _, k := range readings(id) {
			if w.full {
				return
			}
			if len(w.seen) >= maxWritten {
				w.full = true
				return
			}
			if w.seen == nil {
				w.seen = map[string]int{}
			}
			w.seen[k]++
		}
	}
}

// unsent reports whether id, read from a response, names no request
// written: false for a null or absent id (the answer to a message whose
// id could not be read), and when that is not known.
func (w *written) unsent(id gjson.Result) bool {
	if !id.Exists() || id.Type == gjson.Null {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.full {
		return false
	}
	for _, k := range readings(id) {
		if w.seen[k] > 0 {
			return false
		}
	}
	return true
}

// once reports whether every reading of id was written exactly once:
// a response naming it names one request for sure.
func (w *written) once(id gjson.Result) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.full {
		return false
	}
	rs := readings(id)
	for _, k := range rs {
		if w.seen[k] != 1 {
			return false
		}
	}
	return len(rs) > 0
}

// readings are the keys an id may be known by: its text, whatever its
// JSON type (a server that answers "7" with 7 answers it, wrongly); a
// number's value as a float64 as well (1e2 is 100; a large integer a
// double-based reader rounds); a string's with invalid UTF-8 replaced;
// any other value compacted.
func readings(id gjson.Result) []string {
	switch id.Type {
	case gjson.String:
		rs := []string{"v" + id.Str}
		if !utf8.ValidString(id.Str) {
			// Decoders replace invalid UTF-8 differently: one U+FFFD a
			// run of bad bytes, one a byte (Go's), one a maximal
			// subpart of a sequence (Python's, WHATWG's).
			for _, fixed := range []string{strings.ToValidUTF8(id.Str, "\uFFFD"), string([]rune(id.Str)), bySubpart(id.Str)} {
				if !slices.Contains(rs, "v"+fixed) {
					rs = append(rs, "v"+fixed)
				}
			}
		}
		if f, err := strconv.ParseFloat(id.Str, 64); err == nil {
			if f == 0 {
				f = 0
			}
			rs = append(rs, "f"+strconv.FormatFloat(f, 'g', -1, 64))
		}
		return rs
	case gjson.Number:
		rs := []string{"v" + id.Raw}
		if f, err := strconv.ParseFloat(id.Raw, 64); err == nil {
			if f == 0 {
				f = 0 // -0 is 0
			}
			rs = append(rs, "f"+strconv.FormatFloat(f, 'g', -1, 64))
		}
		return rs
	case gjson.Null:
		return nil
	}
	return []string{"j" + envelope.Compact(id.Raw)}
}

// bySubpart is s with each maximal subpart of an ill-formed sequence
// replaced by one U+FFFD (Unicode §3.9's "best practice": the bytes that
// begin a well-formed sequence and break off count as one).
func bySubpart(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || n > 1 {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteRune(utf8.RuneError)
		i += subpart(s[i:])
	}
	return b.String()
}

// subpart is the length of the maximal subpart that begins s, whose
// first byte starts no well-formed sequence (Unicode Table 3-7).
func subpart(s string) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(s) && s[n] >= lo && s[n] <= hi; n++ {
		lo, hi = 0x80, 0xBF
	}
	return n
}

// Unsent reports whether data is a response (or a batch holding one)
// whose id names no request written to the process in any reading of
// it; false when that is not known (more ids written than the set
// holds).
func (s *Stdio) Unsent(data []byte) bool {
	if !envelope.IsResponse(data) {
		return false
	}
	return s.ids.unsent(gjson.GetBytes(data, "id"))
}

// Second reports whether data is a response naming a request, written
// once to the process, that an exchange (Do) took a response for: a
// second response to that request, wherever it arrives; and whether it
// repeats that response byte for byte (same), so that it is never
// another's reply. One with other content is the reply of a server
// that answers with a stale id where no other response comes.
func (s *Stdio) Second(data []byte) (second, same bool) {
	if !envelope.IsResponse(data) {
		return false, false
	}
	kind := s.second(data, gjson.GetBytes(data, "id"))
	return kind != notSecond, kind == secondSame
}

// Kinds of a second response (see second).
const (
	notSecond = iota
	secondOther
	secondSame
)

// second tells whether a response, with its id read already, names a
// request written once that an exchange took a response for, and
// whether it is that response again.
func (s *Stdio) second(data []byte, id gjson.Result) int {
	k := idKey(id)
	prev, ok := s.ids.taken(k)
	switch {
	case k == "" || !ok || !s.ids.once(id):
		return notSecond
	case prev == string(data):
		return secondSame
	}
	return secondOther
}
