// Package transcript reads and writes recorded traffic: JSON Lines, one
// exchange per line, the input of `wymcp-check lint`. The format is a
// public interface (see README "Transcript format"); fields are only
// ever added.
//
//	{"transport":"http"|"stdio", "protocolVersion":"2026-07-28" (optional),
//	 "fixture":"name" (optional),
//	 "expect":{"expect-code":"-32602", …} (optional: the fixture's override),
//	 "failure":"…" (optional: what the checker could not do), "died":"…",
//	 "notSent":true (optional: the run could not send it; failure says why),
//	 "malformed":"…" (optional, http, with "response": null: the reply
//	  was no HTTP/1.1 message a client can read, and why),
//	 "note":"…" (optional),
//	 "offered":["wymcp-3",7] (optional, stdio: the progress tokens the
//	  run's requests had offered on the pipe; see envelope.Exchange),
//	 "logAsked":true, "logFloor":"error", "listens":["L1"] (optional,
//	  beside "offered": whether a request on the pipe had set a log
//	  level, and the lowest level one set; the ids of the listen requests
//	  sent on it; a record without "listens" says nothing of them),
//	 "redacted":["X-Api-Key"] (optional: the --header secrets its bodies
//	  echoed, each recorded as "<redacted:Name>"; lint judges that marker
//	  as the echo of a secret),
//	 "request":{"method":"POST" (optional), "headers":{…}, "body":"<raw text>" | "bodyBase64":"…"},
//	  (on stdio, "method":"EOF" and no body: the checker closed the
//	  server's stdin, and the response holds what stdout carried after;
//	  beside it "exited":true or "lingered":true, optional: the process
//	  exited within the checker's wait, or still ran when it ran out),
//	 "sessionLive":true (optional: a GET answered 404 in the run's
//	  session, after which a ping in that session was served: the 404
//	  did not end the session),
//	 "response":{"status":400, "headers":{…}, "body":"…" | "bodyBase64":"…",
//	             "cut":true (optional: the body ended before its end),
//	             "resumed":2 (optional: the checker resumed the stream with
//	             GET and Last-Event-ID so often; their events follow in
//	             the body),
//	             "ended":true (optional: the server closed the event
//	             stream, which was read to its end),
//	             "heldOpen":true (optional: the stream carried its response
//	             and was still open when the checker stopped reading),
//	             "unsent":["x-9"], "again":[7], "copies":[8] (optional,
//	             stdio: the ids of lines that named no request the run
//	             had written to the process, that named one an earlier
//	             exchange had taken another response for, and that
//	             repeated the response it took; see envelope.Response),
//	             "answered":true (optional, stdio: the request's response
//	             came, and was judged, in an earlier exchange, so no line
//	             here is its reply: a relay's exchange of a later
//	             response)} | null}
//
// A relay's recording also holds {"traffic":{…}} lines, its traffic in
// order (see WriteTraffic), from which lint judges the client's messages.
//
// A first line {"run":{"contract":"spec","schema":"none","checks":"RPC*"}}
// records how the run judged; lint judges so unless its flags say
// otherwise. An exchange with "unreported":true was judged but not
// reported (a --run selection's negotiation): lint does the same. One
// with "unjudged":"why" was recorded and not judged (a negotiation that
// settled on no version the checker judges): lint judges it no more.
//
// A line {"facts":{…}} records what the server declared in the run (the
// negotiated version, the versions it serves, its capabilities, its
// tools); every exchange after it is judged with those facts, as the live
// run judged it. Until a transcript's first facts line (one recorded
// elsewhere may have none), the facts are learned from its traffic as a
// relay learns them: what initialize, server/discover and a whole
// tools/list declare holds for the exchanges after them.
//
// "response": null means no reply arrived. On stdio the response body is
// what the server wrote while the exchange was open, one message a line.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// MaxLine bounds one transcript line; a longer one is reported and
// skipped, so one giant record cannot exhaust memory.
const MaxLine = 64 << 20

// A Record is one exchange read from a transcript.
type Record struct {
	Line     int
	Fixture  string // "line:N" unless the record names one
	Exchange envelope.Exchange
	// Override is the fixture's override the run applied; nil when none.
	Override *expect.Override
	// Facts are the facts in force at this line (the last facts line
	// before it); nil when the transcript records none.
	Facts *expect.Facts
	// Traffic is set for a relay's traffic line (see WriteTraffic); the
	// record then holds no exchange.
	Traffic *Traffic
	// Unreported: the run judged the exchange but did not report it (one
	// of its own a --run selection needed, as negotiation): lint does
	// the same.
	Unreported bool
	// Unjudged says why the run recorded the exchange without judging it
	// (a negotiation that settled on no version the checker judges):
	// lint judges it no more than the run did.
	Unjudged string
}

// A Run is how a recorded run judged (a {"run":{…}} line): lint judges
// the same way unless told otherwise.
type Run struct {
	Contract string `json:"contract,omitempty"` // strict, spec, or a contract file
	Schema   string `json:"schema,omitempty"`   // builtin, none, or a schema file
	Checks   string `json:"checks,omitempty"`   // the --checks list; "" is all
}

// WriteRun appends the run's settings to w as a {"run":{…}} line.
func WriteRun(w io.Writer, run Run) error {
	return writeLine(w, struct {
		Run Run `json:"run"`
	}{run})
}

// WriteAborted appends why a run stopped before it judged everything (its
// target could no longer be driven) as an {"aborted":{"why":…}} line:
// lint of the recording ends as the run did.
func WriteAborted(w io.Writer, why string) error {
	type aborted struct {
		Why string `json:"why"`
	}
	return writeLine(w, struct {
		Aborted aborted `json:"aborted"`
	}{aborted{why}})
}

// WriteInterrupted appends why a run was stopped by a signal before it
// judged everything, as an aborted line that says so
// ({"aborted":{"why":…,"interrupted":true}}): lint of the recording ends
// as the run did (exit 4), not as one that judged all (review rev43).
func WriteInterrupted(w io.Writer, why string) error {
	type aborted struct {
		Why         string `json:"why"`
		Interrupted bool   `json:"interrupted"`
	}
	return writeLine(w, struct {
		Aborted aborted `json:"aborted"`
	}{aborted{why, true}})
}

// abortedLine reads an {"aborted":{"why":…}} line; ok is false for any
// other line.
func abortedLine(line []byte) (why string, ok bool, err error) {
	if lineKind(line) != "aborted" {
		return "", false, nil
	}
	if envelope.TooDeep(line) || !gjson.ValidBytes(line) {
		return "", true, errors.New("aborted line is not valid JSON")
	}
	if err := kindLine(line, "aborted"); err != nil {
		return "", true, err
	}
	w := gjson.GetBytes(line, "aborted.why")
	if w.Type != gjson.String || w.Str == "" {
		return "", true, errors.New(`an {"aborted":{…}} line without its "why", a string`)
	}
	return w.Str, true, nil
}

// Aborted says why the recorded run stopped before it judged everything
// ("" when it did not), once the input is read to its end.
func (r *Reader) Aborted() string { return r.aborted }

// Interrupted: the recorded run that Aborted names was stopped by a
// signal, not by a target it could no longer drive.
func (r *Reader) Interrupted() bool { return r.interrupted }

// writeLine appends v to w as one JSON line.
func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadRun reads the run line a transcript starts with (nil, nil when it
// starts with anything else): lint takes its settings before it judges.
func ReadRun(r io.Reader) (*Run, error) {
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		line = bytes.TrimPrefix(line, bom)
		if len(bytes.TrimSpace(line)) == 0 && err == nil {
			continue // blank lines before it are read past, as Read does
		}
		run, ok, rerr := runLine(line)
		if !ok {
			return nil, nil
		}
		return run, rerr
	}
}

// runLine reads a {"run":{…}} line; ok is false for any other line.
func runLine(line []byte) (*Run, bool, error) {
	if lineKind(line) != "run" {
		return nil, false, nil
	}
	var v struct {
		Run *Run `json:"run"`
	}
	if err := json.Unmarshal(line, &v); err != nil || v.Run == nil {
		return nil, true, fmt.Errorf(`a {"run":{…}} line that is no object of run settings: %v`, err)
	}
	// encoding/json took the last of a setting given twice, where the
	// recorded run may have meant the first, and read a byte that is no
	// UTF-8 as U+FFFD.
	if err := kindLine(line, "run"); err != nil {
		return nil, true, err
	}
	return v.Run, true, nil
}

// A LineError is a line that could not be read; the reader goes on.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// A Reader streams records from a transcript. Next reads, parses and
// settles each in turn; a caller that parses on several goroutines reads
// lines with Read, parses them with a Parser of each goroutine's own, and
// settles the records with a Learner in line order.
type Reader struct {
	run   *Run // the run line the input starts with
	name  string
	br    *bufio.Reader
	line  int
	buf   []byte
	facts *expect.Facts // the last facts line's
	// recorded: a facts line was read; the facts are no longer learned.
	recorded bool
	// begun: a line other than a blank one was read; a run line is the
	// transcript's only before it.
	begun bool
	// aborted is the recorded run's reason for stopping early, and
	// abortedAt its line: that line ends a recording, and a line after it
	// says it did not end this one.
	aborted     string
	abortedAt   int
	interrupted bool // the aborted line says a signal stopped the run
	// again: readLine returns the line it returned last once more (its
	// text is still in buf), after an error named an earlier line.
	again bool
	last  []byte
	// parser and learner serve Next.
	parser  Parser
	learner Learner
}

// NewReader reads the transcript r; name is used in errors.
func NewReader(name string, r io.Reader) *Reader {
	return &Reader{name: name, br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next record. A malformed line yields a *LineError and
// the reader stays usable; the end yields io.EOF. Blank lines are skipped.
func (r *Reader) Next() (Record, error) {
	l, err := r.Read()
	if err != nil {
		return Record{}, err
	}
	rec, err := r.parser.Parse(&l)
	if err != nil {
		return Record{}, err
	}
	r.learner.Settle(&l, &rec)
	return rec, nil
}

// A Line is the text of a record's line, read in order and not yet
// parsed, with the facts line in force where it stands.
type Line struct {
	N        int
	Text     []byte
	name     string
	facts    *expect.Facts
	recorded bool
}

// Read returns the next line that holds a record (an exchange or a
// traffic line). It reads past blank lines and takes in run, facts and
// aborted lines itself, as they bear on the run or the lines after them:
// a malformed one yields a *LineError, and the reader stays usable; the
// end yields io.EOF. The line's Text is valid until the next Read.
func (r *Reader) Read() (Line, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return Line{}, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if r.abortedAt > 0 {
			// An aborted line ends a recording: one with lines after it
			// was joined to another (cat a.jsonl b.jsonl), as a second
			// run line shows. Its line is named, the run is not taken as
			// aborted, and the lines after it are read.
			at := r.abortedAt
			r.aborted, r.abortedAt, r.again, r.interrupted = "", 0, true, false
			return Line{}, &LineError{r.name, at, fmt.Errorf("an aborted line, which ends a recording, with line %d after it (recordings joined?): the file is judged as one recording, not aborted; judge the recordings apart", r.line)}
		}
		begun := r.begun
		r.begun = true
		if f, ok, ferr := factsLine(line); ok {
			if ferr != nil {
				return Line{}, &LineError{r.name, r.line, ferr}
			}
			r.facts, r.recorded = f, true
			continue
		}
		if why, ok, aerr := abortedLine(line); ok {
			if aerr != nil {
				return Line{}, &LineError{r.name, r.line, aerr}
			}
			r.aborted, r.abortedAt = why, r.line
			r.interrupted = gjson.GetBytes(line, "aborted.interrupted").Type == gjson.True
			continue
		}
		if run, ok, rerr := runLine(line); ok {
			// Read before judging (ReadRun, from the first line); here
			// it must be sound, and a later one must not say otherwise.
			switch {
			case rerr != nil:
				return Line{}, &LineError{r.name, r.line, rerr}
			case r.run == nil && !begun:
				r.run = run
			case r.run == nil || *run != *r.run:
				return Line{}, &LineError{r.name, r.line, errors.New("a run line past the start, with other settings than the first line's (recordings joined?): the file is judged with one setting; judge the recordings apart")}
			}
			continue
		}
		return Line{N: r.line, Text: line, name: r.name, facts: r.facts, recorded: r.recorded}, nil
	}
}

// A Parser reads lines into records. Its memory of the header names and
// values it has read makes it for one goroutine; parsers of their own
// read the lines of one transcript at once.
type Parser struct {
	seen interner
}

// Parse reads l into a record, whose facts a Learner settles. Nothing in
// the record shares memory with l's text. A malformed line yields a
// *LineError.
func (p *Parser) Parse(l *Line) (Record, error) {
	if t, ok, terr := trafficLine(l.Text); ok {
		if terr != nil {
			return Record{}, &LineError{l.name, l.N, terr}
		}
		return Record{Line: l.N, Fixture: t.Fixture, Traffic: t}, nil
	}
	rec, err := parse(l.Text, &p.seen)
	if err != nil {
		return Record{}, &LineError{l.name, l.N, err}
	}
	rec.Line = l.N
	if rec.Fixture == "" {
		// One string, where "line:" + strconv.Itoa is two.
		var b [32]byte
		rec.Fixture = string(strconv.AppendInt(append(b[:0], "line:"...), int64(l.N), 10))
	}
	return rec, nil
}

// A Learner settles the facts of records in line order. Until a
// transcript's first facts line, the facts are learned from its traffic
// as a relay learns them: what an exchange declares holds for the records
// after it.
type Learner struct {
	facts *expect.Facts
}

// Settle gives rec, parsed from line, the facts in force there and
// learns from it. Records go through Settle in line order, each once.
func (l *Learner) Settle(line *Line, rec *Record) {
	if line.recorded {
		rec.Facts = line.facts
		return
	}
	rec.Facts = l.facts
	if rec.Traffic == nil {
		l.facts = l.facts.Learn(&rec.Exchange)
	}
}

var errTooLong = fmt.Errorf("line exceeds %d bytes", MaxLine)

// readLine returns the next line without its newline. A line longer than
// MaxLine is drained and reported as an error for that line.
func (r *Reader) readLine() ([]byte, error) {
	if r.again {
		r.again = false
		return r.last, nil
	}
	r.last = nil
	r.buf = r.buf[:0]
	r.line++
	tooLong := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !tooLong {
			if len(r.buf)+len(chunk) > MaxLine {
				tooLong, r.buf = true, r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && (len(r.buf) > 0 || tooLong):
			// a last line without newline
		case err != nil:
			return nil, err
		}
		if tooLong {
			return nil, &LineError{r.name, r.line, errTooLong}
		}
		// A byte order mark (an editor's on Windows; one per file joined
		// with cat) is no part of the JSON text (RFC 8259 §8.1).
		r.last = bytes.TrimPrefix(bytes.TrimRight(r.buf, "\r\n"), bom)
		return r.last, nil
	}
}

// invalidJSON says where and why line is not valid JSON, for a person
// to find the fault in a line that may be megabytes long: the byte
// (counted from 1) and the cause, as encoding/json tells them, which
// quotes a control character escaped. Only a bad line pays for it.
func invalidJSON(line []byte) error {
	bad := -1 // the first byte that is no UTF-8
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && n == 1 {
			bad = i
			break
		}
		i += n
	}
	var se *json.SyntaxError
	errors.As(json.Unmarshal(line, new(json.RawMessage)), &se)
	switch {
	case se != nil && se.Offset > 0 && bytes.HasPrefix(line[se.Offset-1:], bom):
		// encoding/json would name its first byte as the character 'ï'.
		return fmt.Errorf("not valid JSON at byte %d: a byte order mark (U+FEFF) outside a string; one is read past at the start of a line, no more", se.Offset)
	case se != nil && bad >= 0 && int64(bad) == se.Offset-1:
		// encoding/json would quote the byte as the character it codes
		// in Latin-1.
		return fmt.Errorf("not valid JSON at byte %d: byte 0x%02x, which is no UTF-8", se.Offset, line[bad])
	case se != nil && se.Offset >= int64(len(line)):
		return fmt.Errorf("not valid JSON: the line ends before its value does (%d bytes; truncated?)", len(line))
	case se != nil:
		return fmt.Errorf("not valid JSON at byte %d: %v", se.Offset, se)
	}
	return errors.New("not valid JSON")
}

// kindLine names what makes a line of one kind (run, facts, traffic,
// aborted; line is valid JSON) unreadable, as parse does an exchange
// line's: a byte that is no UTF-8, or a member given twice, in the line
// itself or in the object of its one member.
func kindLine(line []byte, kind string) error {
	if !utf8.Valid(line) {
		return notUTF8(line)
	}
	obj := string(bytes.TrimLeft(line, " \t\r\n"))
	if d := twice(obj); d != "" {
		return errTwice(d)
	}
	if v := gjson.Get(obj, gjson.Escape(kind)); v.IsObject() {
		if d := twice(v.Raw); d != "" {
			return errTwice(kind + "." + d)
		}
	}
	return nil
}

// notUTF8 says where line, valid JSON, holds a byte that is no UTF-8.
// A transcript is UTF-8 text (RFC 8259 §8.1), and a body that is not
// goes in bodyBase64 (Write puts it there): a raw byte so is no server's
// text but the file's, re-encoded or cut apart on the way, so what the
// line holds is not known and it is not judged. A \udcff escape, a
// lone surrogate, is plain ASCII here: it is the recorded text.
func notUTF8(line []byte) error {
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("at byte %d: byte 0x%02x, which is no UTF-8 (a transcript is UTF-8 text, a body that is not goes in bodyBase64: was the file re-encoded?)", i+1, line[i])
		}
		i += n
	}
	return nil
}

// prefixed is where+name, or "" for no name.
func prefixed(where, name string) string {
	if name == "" {
		return ""
	}
	return where + name
}

// noTransport is the error for an object line without "transport". A
// line whose one member holds an object is a kind of line, as run, facts
// and traffic lines are: one this checker does not know comes from a
// newer recorder, and is named so.
func noTransport(line []byte) error {
	var keys []string
	kind := false
	gjson.ParseBytes(line).ForEach(func(k, v gjson.Result) bool {
		keys = append(keys, k.Str)
		kind = v.IsObject()
		return len(keys) < 2
	})
	if len(keys) == 1 && kind {
		return fmt.Errorf("a %q line, which this checker does not know (a newer recorder's?); it reads exchange, run, facts, traffic and aborted lines", keys[0])
	}
	return errors.New(`"transport" is required ("http" or "stdio")`)
}

// flag reads an optional true/false member, as written (raw JSON).
func flag(raw, name string) (bool, error) {
	switch raw {
	case "true":
		return true, nil
	case "false", "":
		return false, nil
	}
	return false, fmt.Errorf(`"%s" is %s, want true or false`, name, raw)
}

// lineKind is the first member name of a line's object, as JSON reads
// it, when it names a kind of line other than an exchange ("" else): a run, facts or traffic line is an object of that one member, which
// may be written with space around it or with escapes in its name (RFC
// 8259), as a recorder other than ours may write it. It reads no further
// than the name, as every exchange line is asked.
func lineKind(line []byte) string {
	line = bytes.TrimLeft(line, " \t\r\n")
	if len(line) == 0 || line[0] != '{' {
		return ""
	}
	line = bytes.TrimLeft(line[1:], " \t\r\n")
	if len(line) == 0 || line[0] != '"' {
		return ""
	}
	escaped := false
	for i := 1; i < len(line); i++ {
		switch line[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			name := line[1:i]
			if escaped {
				var s string
				if json.Unmarshal(line[:i+1], &s) != nil {
					return ""
				}
				name = []byte(s)
			}
			// Constants, so that an exchange line's name costs no
			// allocation.
			switch string(name) {
			case "run":
				return "run"
			case "facts":
				return "facts"
			case "traffic":
				return "traffic"
			case "aborted":
				return "aborted"
			}
			return ""
		}
	}
	return ""
}

// inReader: lines of the kind are taken in by Read itself, not records.
func inReader(kind string) bool {
	return kind == "facts" || kind == "run" || kind == "aborted"
}

// bom is the UTF-8 byte order mark.
var bom = []byte("\xef\xbb\xbf")

// factsLine reads a {"facts":{…}} line; ok is false for any other line.
func factsLine(line []byte) (*expect.Facts, bool, error) {
	if lineKind(line) != "facts" {
		return nil, false, nil
	}
	if envelope.TooDeep(line) || !gjson.ValidBytes(line) {
		return nil, true, errors.New("facts line is not valid JSON")
	}
	if err := kindLine(line, "facts"); err != nil {
		return nil, true, err
	}
	f, err := expect.ParseFacts([]byte(gjson.GetBytes(line, "facts").Raw))
	return f, true, err
}

// parse reads one exchange line. The line is read in place: its members
// are found by a scanner of the valid JSON that leaves their values as
// written, so a body is unescaped once, straight into the bytes the
// record keeps, and a header is read without a string of its own per
// value. Nothing in the record shares memory with the line, whose bytes
// the reader reuses.
func parse(line []byte, seen *interner) (Record, error) {
	var rec Record
	s := string(line)
	switch valid, deep := envelope.ValidJSON(s); {
	case deep:
		return rec, fmt.Errorf("nested deeper than %d levels", envelope.MaxDepth)
	case !valid:
		return rec, invalidJSON(line)
	}
	// A byte that is no UTF-8 is named first, whatever the line holds:
	// what such a line says is not known (notUTF8).
	if !utf8.ValidString(s) {
		return rec, notUTF8(line)
	}
	at := skipSpace(s, 0)
	if s[at] != '{' {
		return rec, errors.New("not a JSON object")
	}
	var root [21]string // transport, protocolVersion, fixture, request, response, expect, failure, died, note, redacted, unreported, offered, unjudged, notSent, logAsked, listens, malformed, logFloor, exited, lingered, sessionLive
	var req [4]string   // method, headers, body, bodyBase64
	var resp [14]string // status, headers, body, bodyBase64, cut, resumed, ended, heldOpen, unsent, again, copies, answered, truncated, resumeRefused
	// The request's and the response's members are read on the way
	// through the line, so their bodies are passed over once.
	// A member given twice, here or in the request or the response, is
	// named (the first such): which of the two a reader takes differs.
	dup := ""
	scanMembers(s[at:], func(key, rest string) int {
		for i, k := range rootKeys {
			if key != k {
				continue
			}
			if root[i] != "" {
				if dup == "" {
					dup = k
				}
				break
			}
			var n int
			var d string
			switch {
			case i == 3 && rest[0] == '{':
				n, d = members(rest, requestKeys, req[:])
				d = prefixed("request.", d)
			case i == 4 && rest[0] == '{':
				n, d = members(rest, responseKeys, resp[:])
				d = prefixed("response.", d)
			default:
				n = valueEnd(rest, 0)
			}
			if dup == "" {
				dup = d
			}
			root[i] = rest[:n]
			return n
		}
		return valueEnd(rest, 0)
	})
	if dup != "" {
		return rec, errTwice(dup)
	}
	ex := &rec.Exchange
	switch t := value(root[0]); {
	case !t.Exists():
		return rec, noTransport(line)
	case t.Str == envelope.HTTP:
		ex.Transport = envelope.HTTP
	case t.Str == envelope.Stdio:
		ex.Transport = envelope.Stdio
	default:
		return rec, fmt.Errorf(`"transport" is %s, want "http" or "stdio"`, t.Raw)
	}
	if v := value(root[1]); v.Exists() {
		known := slices.Index(versions, v.Str)
		if known < 0 {
			return rec, fmt.Errorf(`"protocolVersion" is %s, want one of %v`, v.Raw, envelope.Versions())
		}
		ex.Version = versions[known]
	}
	// A member of the wrong type is an error of the line, never read as
	// absent: a "failure" another tool recorded as true would pass the
	// gate as an exchange that went well (review rev29).
	texts := [4]string{}
	for i, m := range [4]struct {
		at        int
		key, want string
	}{
		{2, "fixture", "the fixture's name"},
		{6, "failure", "what the checker could not do"},
		{7, "died", "how the server died"},
		{8, "note", "a note"},
	} {
		switch v := value(root[m.at]); v.Type {
		case gjson.String:
			texts[i] = strings.Clone(v.Str)
		case gjson.Null:
		default:
			return rec, fmt.Errorf(`%q is %s, want a string: %s`, m.key, envelope.Kind(v), m.want)
		}
	}
	rec.Fixture = texts[0]
	if o := root[5]; o != "" {
		if o[0] == '{' {
			if d := twice(o); d != "" {
				return rec, errTwice("expect." + d)
			}
		}
		ov, err := expect.ParseOverride([]byte(o))
		if err != nil {
			return rec, err
		}
		rec.Override = ov
	}
	ex.Failure, ex.Died, ex.Note = texts[1], texts[2], texts[3]
	switch u := value(root[10]); u.Type {
	case gjson.True:
		rec.Unreported = true
	case gjson.False, gjson.Null:
	default:
		return rec, fmt.Errorf(`"unreported" is %s, want true or false`, envelope.Kind(u))
	}
	notSent, ferr := flag(root[13], "notSent")
	if ferr != nil {
		return rec, ferr
	}
	ex.NotSent = notSent
	if notSent && (ex.Failure == "" || value(root[4]).Type != gjson.Null) {
		return rec, errors.New(`"notSent" goes with a "failure" saying why and "response": null`)
	}
	switch m := value(root[16]); {
	case !m.Exists():
	case m.Type != gjson.String || m.Str == "":
		return rec, fmt.Errorf(`"malformed" is %s, want what made the reply no HTTP message`, envelope.Kind(m))
	case ex.Transport != envelope.HTTP || value(root[4]).Type != gjson.Null:
		return rec, errors.New(`"malformed" belongs to http exchanges with "response": null`)
	default:
		ex.Malformed = strings.Clone(m.Str)
	}
	if red := value(root[9]); red.Exists() {
		if !red.IsArray() {
			return rec, fmt.Errorf(`"redacted" is %s, want an array of header names`, envelope.Kind(red))
		}
		for _, n := range red.Array() {
			if n.Type != gjson.String || n.Str == "" {
				return rec, fmt.Errorf(`"redacted" holds %s, want header names`, envelope.Kind(n))
			}
			ex.Redacted = append(ex.Redacted, strings.Clone(n.Str))
		}
	}
	switch u := value(root[12]); {
	case !u.Exists():
	case u.Type != gjson.String || u.Str == "":
		return rec, fmt.Errorf(`"unjudged" is %s, want why the run did not judge the exchange`, envelope.Kind(u))
	default:
		rec.Unjudged = strings.Clone(u.Str)
	}
	if of := value(root[11]); of.Exists() {
		switch {
		case !of.IsArray():
			return rec, fmt.Errorf(`"offered" is %s, want an array of progress tokens`, envelope.Kind(of))
		}
		ex.Offered = []string{}
		for _, t := range of.Array() {
			if t.Type != gjson.String && !(t.Type == gjson.Number && envelope.IsInteger(t.Raw)) {
				return rec, fmt.Errorf(`"offered" holds %s, want progress tokens (strings or integers)`, envelope.Kind(t))
			}
			ex.Offered = append(ex.Offered, strings.Clone(t.Raw))
		}
	}
	if la, ls, lf := value(root[14]), value(root[15]), value(root[17]); la.Exists() || ls.Exists() || lf.Exists() {
		switch {
		case ex.Offered == nil:
			return rec, errors.New(`"logAsked", "logFloor" and "listens" belong beside "offered" only`)
		case ex.Transport != envelope.Stdio:
			// What a pipe's requests asked for; an HTTP exchange's
			// stream is its request's own.
			return rec, errors.New(`"logAsked", "logFloor" and "listens" belong to stdio exchanges only`)
		case la.Exists() && la.Type != gjson.True && la.Type != gjson.False:
			return rec, fmt.Errorf(`"logAsked" is %s, want true or false`, envelope.Kind(la))
		case lf.Exists() && lf.Type != gjson.String:
			return rec, fmt.Errorf(`"logFloor" is %s, want a log level`, envelope.Kind(lf))
		case lf.Exists() && !envelope.ValidLogLevel(lf.Str):
			return rec, errors.New(`"logFloor" is no log level (want debug, info, notice, warning, error, critical, alert or emergency)`)
		case lf.Exists() && la.Type != gjson.True:
			return rec, errors.New(`"logFloor" goes with "logAsked":true only`)
		case ls.Exists() && !ls.IsArray():
			return rec, fmt.Errorf(`"listens" is %s, want an array of request ids`, envelope.Kind(ls))
		}
		switch {
		case lf.Exists():
			ex.LogFloor = strings.Clone(lf.Str)
		case la.Type == gjson.True:
			// A recording made before the level was recorded: any level
			// may have been asked.
			ex.LogFloor = "debug"
		}
		if ls.Exists() {
			ex.Listens = []string{}
		}
		for _, id := range ls.Array() {
			if id.Type != gjson.String && !(id.Type == gjson.Number && envelope.IsInteger(id.Raw)) {
				return rec, fmt.Errorf(`"listens" holds %s, want request ids (strings or integers)`, envelope.Kind(id))
			}
			ex.Listens = append(ex.Listens, strings.Clone(id.Raw))
		}
	}
	reqv := root[3]
	if reqv == "" || reqv[0] != '{' {
		return rec, errors.New(`"request" is required and must be an object`)
	}
	var err error
	if m := value(req[0]).Str; m == http.MethodPost {
		ex.Request.Method = http.MethodPost
	} else {
		ex.Request.Method = strings.Clone(m)
	}
	if ex.Request.Header, err = headers(req[1], "request", seen); err != nil {
		return rec, err
	}
	if ex.Request.Body, err = body(req[2], req[3], "request"); err != nil {
		return rec, err
	}
	if ex.Exited, err = flag(root[18], "exited"); err != nil {
		return rec, err
	}
	if ex.Lingered, err = flag(root[19], "lingered"); err != nil {
		return rec, err
	}
	if ex.SessionLive, err = flag(root[20], "sessionLive"); err != nil {
		return rec, err
	}
	switch eof := ex.EndsInput(); {
	case eof && len(ex.Request.Body) > 0:
		return rec, errors.New(`a stdio request with "method":"EOF" is the end of the server's input, and carries no body`)
	case (ex.Exited || ex.Lingered) && !eof:
		return rec, errors.New(`"exited" and "lingered" belong to the end of a stdio server's input ("request":{"method":"EOF"}) only`)
	case ex.Exited && ex.Lingered:
		return rec, errors.New(`"exited" and "lingered" exclude each other`)
	}
	respv := root[4]
	switch {
	case respv == "":
		return rec, errors.New(`"response" is required (null when no reply arrived)`)
	case respv == "null":
		return rec, nil
	case respv[0] != '{':
		return rec, errors.New(`"response" must be an object or null`)
	}
	rs := &envelope.Response{}
	if rs.Cut, err = flag(resp[4], "response.cut"); err != nil {
		return rec, err
	}
	if rs.Ended, err = flag(resp[6], "response.ended"); err != nil {
		return rec, err
	}
	if rs.HeldOpen, err = flag(resp[7], "response.heldOpen"); err != nil {
		return rec, err
	}
	if rs.Truncated, err = flag(resp[12], "response.truncated"); err != nil {
		return rec, err
	}
	if rs.ResumeRefused, err = flag(resp[13], "response.resumeRefused"); err != nil {
		return rec, err
	}
	if n := value(resp[5]); n.Exists() {
		if n.Type != gjson.Number || !envelope.IsInteger(n.Raw) || n.Int() < 0 || n.Int() > 100 {
			return rec, fmt.Errorf(`"response.resumed" is %s, want how many times the stream was resumed`, n.Raw)
		}
		rs.Resumed = int(n.Int())
	}
	if s := value(resp[0]); s.Exists() {
		if s.Type != gjson.Number || !envelope.IsInteger(s.Raw) || s.Int() < 100 || s.Int() > 599 {
			return rec, fmt.Errorf(`"response.status" is %s, want an HTTP status`, s.Raw)
		}
		rs.Status = int(s.Int())
	} else if ex.Transport == envelope.HTTP {
		return rec, errors.New(`"response.status" is required for http`)
	}
	for i, f := range []*[]string{&rs.Unsent, &rs.Again, &rs.Copies} {
		v := value(resp[8+i])
		if !v.Exists() {
			continue
		}
		name := "response." + responseKeys[8+i]
		switch {
		case ex.Transport != envelope.Stdio:
			return rec, fmt.Errorf("%q belongs to stdio exchanges only", name)
		case !v.IsArray():
			return rec, fmt.Errorf("%q is %s, want an array of response ids", name, envelope.Kind(v))
		}
		for _, id := range v.Array() {
			if id.Type == gjson.Null {
				return rec, fmt.Errorf("%q holds null, want response ids", name)
			}
			*f = append(*f, strings.Clone(envelope.Compact(id.Raw)))
		}
	}
	if rs.Answered, err = flag(resp[11], "response.answered"); err != nil {
		return rec, err
	}
	if rs.Answered && ex.Transport != envelope.Stdio {
		return rec, errors.New(`"response.answered" belongs to stdio exchanges only`)
	}
	if rs.Header, err = headers(resp[1], "response", seen); err != nil {
		return rec, err
	}
	if rs.Body, err = body(resp[2], resp[3], "response"); err != nil {
		return rec, err
	}
	if ex.Transport == envelope.Stdio {
		// One message a line, as the server wrote them: an empty line is
		// one too (the live run judged it), and only the newline that
		// ends the body ends no message. A value pretty-printed over
		// several lines is one message, as the live run read it.
		lines := bytes.Split(bytes.TrimSuffix(rs.Body, []byte("\n")), []byte("\n"))
		for i, l := range lines {
			lines[i] = bytes.TrimSuffix(l, []byte("\r"))
		}
		rs.Messages = envelope.Rejoin(lines)
		if len(rs.Body) == 0 {
			rs.Messages = rs.Messages[:0]
		}
	}
	ex.Response = rs
	return rec, nil
}

// The members parse reads, in the order of its arrays.
var (
	rootKeys     = []string{"transport", "protocolVersion", "fixture", "request", "response", "expect", "failure", "died", "note", "redacted", "unreported", "offered", "unjudged", "notSent", "logAsked", "listens", "malformed", "logFloor", "exited", "lingered", "sessionLive"}
	requestKeys  = []string{"method", "headers", "body", "bodyBase64"}
	responseKeys = []string{"status", "headers", "body", "bodyBase64", "cut", "resumed", "ended", "heldOpen", "unsent", "again", "copies", "answered", "truncated", "resumeRefused"}
	// versions are the known protocol versions, so that a record holds
	// the constant rather than a copy of the line's text.
	versions = envelope.Versions()
)

// value reads a member's raw text as gjson would ("": absent). A string's
// Str may be a slice of the line: clone what the record keeps.
func value(raw string) gjson.Result {
	if raw == "" {
		return gjson.Result{}
	}
	return gjson.Parse(raw)
}

// maxInterned bounds a reader's header caches: a transcript's headers
// repeat a few names and values, and a hostile one must not grow them
// without end.
const maxInterned = 1024

// headers reads a headers object (raw; "" when absent) as http.Header
// would hold it: keys canonical, values in order. The names and short
// values a transcript repeats are kept once per reader, so a header
// usually costs no string of its own; a headers object written just as
// an earlier one was is that one's map (see interner.header).
func headers(raw string, where string, seen *interner) (http.Header, error) {
	if raw == "" {
		return http.Header{}, nil
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf(`"%s.headers" must be an object`, where)
	}
	if h, ok := seen.header(raw); ok {
		return h, nil
	}
	// One pass to judge the values and count the names, so that no
	// header is added before all are known good.
	keys := 0
	var err error
	var names []string // a name given twice: which value counts differs
	forMembers(raw, func(key, val string) bool {
		keys++
		if slices.Contains(names, key) {
			err = errTwice(where + ".headers." + key)
			return false
		}
		names = append(names, key)
		switch val[0] {
		case '"':
		case '[':
			forElements(val, func(x string) bool {
				if x[0] != '"' {
					err = fmt.Errorf(`"%s.headers.%s" values must be strings`, where, key)
					return false
				}
				return true
			})
			return err == nil
		default:
			err = fmt.Errorf(`"%s.headers.%s" must be a string or an array of strings`, where, key)
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	h := make(http.Header, keys)
	add := func(key, val string) {
		one := seen.value(val)
		if old, ok := h[key]; ok {
			h[key] = append(old, one[0]) // one's capacity is 1: a new array
		} else {
			h[key] = one
		}
	}
	forMembers(raw, func(key, val string) bool {
		key = seen.name(key)
		if val[0] == '"' {
			add(key, val)
		} else {
			forElements(val, func(x string) bool {
				add(key, x)
				return true
			})
		}
		return true
	})
	seen.keepHeader(raw, h)
	return h, nil
}

// An interner keeps the header names and short values a reader has
// read, so that a transcript's repeated headers share their strings. A
// nil *interner keeps nothing.
type interner struct {
	names  map[string]string   // as written: canonical
	values map[string][]string // JSON literal: its text, alone in a list
	// headers are whole headers objects by their JSON text. Most records
	// of a transcript repeat a few sets of headers word for word, and a
	// map of its own per record is two allocations and a few hundred
	// bytes of the reading's cost. A map is shared by the records that
	// repeat its text, which is sound because nothing writes to a
	// record's headers: checks and expectations only read them (the
	// values were shared already, see value), and the workers that
	// judge records at once only read a map too.
	headers map[string]http.Header
}

// maxHeaderText bounds the headers objects an interner keeps: a short
// one is what repeats (content type, protocol version, session id); a
// long one is likelier a one-off, not worth holding.
const maxHeaderText = 512

// header is the map read before from a headers object written as raw.
func (in *interner) header(raw string) (http.Header, bool) {
	if in == nil || len(raw) > maxHeaderText {
		return nil, false
	}
	h, ok := in.headers[raw]
	return h, ok
}

// keepHeader keeps h, read from raw, for the records that repeat raw.
func (in *interner) keepHeader(raw string, h http.Header) {
	if in == nil || len(raw) > maxHeaderText || len(in.headers) >= maxInterned {
		return
	}
	if in.headers == nil {
		in.headers = map[string]http.Header{}
	}
	in.headers[strings.Clone(raw)] = h
}

// name is textproto's canonical form of a header name read from a line,
// in memory of its own.
func (in *interner) name(key string) string {
	if in != nil {
		if c, ok := in.names[key]; ok {
			return c
		}
	}
	c := textproto.CanonicalMIMEHeaderKey(key)
	if c == key {
		c = strings.Clone(key)
	}
	if in != nil && len(in.names) < maxInterned {
		if in.names == nil {
			in.names = map[string]string{}
		}
		in.names[strings.Clone(key)] = c
	}
	return c
}

// value is the text of the JSON string literal raw, as a header's list
// of one value. A short one is shared by the records that repeat it: its
// capacity is 1, so an append makes a list of its own, and nothing
// writes a header's values in place.
func (in *interner) value(raw string) []string {
	if in != nil {
		if v, ok := in.values[raw]; ok {
			return v
		}
	}
	s := raw[1 : len(raw)-1]
	if strings.IndexByte(s, '\\') < 0 {
		s = strings.Clone(s)
	} else {
		s = string(appendUnescaped(nil, s))
	}
	v := []string{s}
	if in != nil && len(raw) <= 64 && len(in.values) < maxInterned {
		if in.values == nil {
			in.values = map[string][]string{}
		}
		in.values[strings.Clone(raw)] = v
	}
	return v
}

func body(b, b64 string, where string) ([]byte, error) {
	switch {
	case b != "" && b64 != "":
		return nil, fmt.Errorf(`"%s" has both body and bodyBase64`, where)
	case b64 != "":
		raw, err := base64.StdEncoding.DecodeString(value(b64).Str)
		if err != nil {
			return nil, fmt.Errorf(`"%s.bodyBase64": %w`, where, err)
		}
		return raw, nil
	case b != "":
		if b[0] != '"' {
			return nil, fmt.Errorf(`"%s.body" must be a string (the raw text); use bodyBase64 for bytes`, where)
		}
		// unescaped once, straight into the record's bytes
		return appendUnescaped(make([]byte, 0, len(b)-2), b[1:len(b)-1]), nil
	}
	return nil, nil
}

// WriteFacts appends a facts line: what the server declared, for every
// exchange written after it.
func WriteFacts(w io.Writer, f *expect.Facts) error {
	return writeLine(w, struct {
		Facts *expect.Facts `json:"facts"`
	}{f})
}

// Write appends one exchange to w as a transcript line, with the
// override its fixture applied (nil: none) and what the run knew of it.
// Bodies that are not valid UTF-8 go as bodyBase64, so the bytes survive
// exactly.
func Write(w io.Writer, fixture string, ex *envelope.Exchange, o *expect.Override) error {
	return write(w, fixture, ex, o, false, "")
}

// WriteUnreported is Write for an exchange the run judged but did not
// report (see Record.Unreported).
func WriteUnreported(w io.Writer, fixture string, ex *envelope.Exchange, o *expect.Override) error {
	return write(w, fixture, ex, o, true, "")
}

// WriteUnjudged is Write for an exchange the run recorded but did not
// judge, saying why (see Record.Unjudged).
func WriteUnjudged(w io.Writer, fixture string, ex *envelope.Exchange, o *expect.Override, why string) error {
	return write(w, fixture, ex, o, false, why)
}

func write(w io.Writer, fixture string, ex *envelope.Exchange, o *expect.Override, unreported bool, unjudged string) error {
	type msg struct {
		Method     string              `json:"method,omitempty"`
		Status     int                 `json:"status,omitempty"`
		Headers    map[string][]string `json:"headers,omitempty"`
		Body       *string             `json:"body,omitempty"`
		BodyBase64 *string             `json:"bodyBase64,omitempty"`
		Cut        bool                `json:"cut,omitempty"`
		Resumed    int                 `json:"resumed,omitempty"`
		Ended      bool                `json:"ended,omitempty"`
		HeldOpen   bool                `json:"heldOpen,omitempty"`
		Unsent     []json.RawMessage   `json:"unsent,omitempty"`
		Again      []json.RawMessage   `json:"again,omitempty"`
		Copies     []json.RawMessage   `json:"copies,omitempty"`
		Answered   bool                `json:"answered,omitempty"`
		Truncated  bool                `json:"truncated,omitempty"`
		// (Named for what it says of the resumption, beside resumed.)
		ResumeRefused bool `json:"resumeRefused,omitempty"`
	}
	put := func(m *msg, b []byte) {
		s := string(b)
		if utf8.Valid(b) {
			m.Body = &s
		} else {
			e := base64.StdEncoding.EncodeToString(b)
			m.BodyBase64 = &e
		}
	}
	rec := struct {
		Transport   string             `json:"transport"`
		Version     string             `json:"protocolVersion,omitempty"`
		Fixture     string             `json:"fixture,omitempty"`
		Expect      *expect.Override   `json:"expect,omitempty"`
		Failure     string             `json:"failure,omitempty"`
		Died        string             `json:"died,omitempty"`
		NotSent     bool               `json:"notSent,omitempty"`
		Malformed   string             `json:"malformed,omitempty"`
		Note        string             `json:"note,omitempty"`
		Redacted    []string           `json:"redacted,omitempty"`
		Unreported  bool               `json:"unreported,omitempty"`
		Offered     *[]json.RawMessage `json:"offered,omitempty"`
		LogAsked    *bool              `json:"logAsked,omitempty"`
		LogFloor    string             `json:"logFloor,omitempty"`
		Listens     *[]json.RawMessage `json:"listens,omitempty"`
		Unjudged    string             `json:"unjudged,omitempty"`
		Exited      bool               `json:"exited,omitempty"`
		SessionLive bool               `json:"sessionLive,omitempty"`
		Lingered    bool               `json:"lingered,omitempty"`
		Request     msg                `json:"request"`
		Response    *msg               `json:"response"`
	}{Transport: ex.Transport, Version: ex.Version, Fixture: fixture, Failure: ex.Failure, Died: ex.Died, NotSent: ex.NotSent, Malformed: ex.Malformed, Note: ex.Note, Redacted: ex.Redacted, Unreported: unreported, Unjudged: unjudged, Exited: ex.Exited, Lingered: ex.Lingered, SessionLive: ex.SessionLive}
	if !o.Empty() {
		rec.Expect = o
	}
	if ex.Offered != nil {
		of := make([]json.RawMessage, len(ex.Offered))
		for i, t := range ex.Offered {
			of[i] = json.RawMessage(t)
		}
		rec.Offered = &of
		if ex.Listens != nil {
			// Both, false and empty too: a recording without them says
			// nothing of what the pipe's requests asked for.
			ls := make([]json.RawMessage, len(ex.Listens))
			for i, id := range ex.Listens {
				ls[i] = json.RawMessage(id)
			}
			asked := ex.LogFloor != ""
			rec.LogAsked, rec.LogFloor, rec.Listens = &asked, ex.LogFloor, &ls
		}
	}
	rec.Request = msg{Method: ex.Request.Method, Headers: ex.Request.Header}
	put(&rec.Request, ex.Request.Body)
	if r := ex.Response; r != nil {
		m := &msg{Status: r.Status, Headers: r.Header, Cut: r.Cut, Resumed: r.Resumed, Ended: r.Ended, HeldOpen: r.HeldOpen, Answered: r.Answered, Truncated: r.Truncated, ResumeRefused: r.ResumeRefused}
		for _, id := range r.Unsent {
			m.Unsent = append(m.Unsent, json.RawMessage(id))
		}
		for _, id := range r.Again {
			m.Again = append(m.Again, json.RawMessage(id))
		}
		for _, id := range r.Copies {
			m.Copies = append(m.Copies, json.RawMessage(id))
		}
		b := r.Body
		if ex.Transport == envelope.Stdio && r.Messages != nil {
			// Each message ends its line, so an empty last one survives.
			b = nil
			for _, m := range r.Messages {
				b = append(append(b, m...), '\n')
			}
		}
		put(m, b)
		rec.Response = m
	}
	return writeLine(w, rec)
}

// Ready reports whether Next can return without waiting on the input:
// the lines up to the next record stand whole in the reader's buffer. A
// caller that hands records on in batches flushes its batch when not, so
// a record read from a pipe is not held back until more arrive.
func (r *Reader) Ready() bool {
	b, _ := r.br.Peek(r.br.Buffered())
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return false
		}
		// Next reads past blank lines, facts and run lines to the record.
		if line := bytes.TrimSpace(b[:i]); len(line) > 0 && !inReader(lineKind(line)) {
			return true
		}
		b = b[i+1:]
	}
}
