package envelope

import (
	"bytes"
	"encoding/json"
)

// A Rejoiner puts back together a JSON value a stdio server wrote over
// several lines: pretty-printed (`{` alone on a line, members indented)
// or wrapped. Split into lines, such a reply is a run of fragments none
// of which is a message, and the request looks unanswered: the server is
// judged silent, or the run cannot negotiate at all, where the truth is
// that it broke T-STDIO-1 (messages contain no embedded newlines). Read
// joined, the value is one message that spans several lines, which
// RPC1001 fails, and every other check judges what the server meant.
//
// The live transport and the transcript reader use the same Rejoiner, so
// that check and lint see the same messages.
//
// A run starts at a line that opens an object or array (after leading
// blanks), goes on as JSON can, and leaves it open at the line's end. It is held while the
// brackets stay open, and delivered as one value, its lines joined by
// "\n", when they close at the end of a line and the whole is valid JSON.
// Anything else gives the held lines back one by one, as they came: a
// bracket closed mid-line, a string left open at a line's end (a JSON
// string holds no raw line break), more closers than openers, the size
// bound passed, or a line that starts at column 0 with a complete object
// or array (a message of its own: a log line that opened a bracket must
// not swallow the replies after it; one that cannot begin JSON, "{ starting
// work", opens no run at all). Each byte is scanned once, and the
// joined value is validated once: linear in what is held.
type Rejoiner struct {
	max   int // bytes held at most; beyond, the run is given back
	held  [][]byte
	size  int
	depth int
}

// NewRejoiner returns a Rejoiner that holds at most max bytes of a run
// (max <= 0: no bound).
func NewRejoiner(max int) *Rejoiner { return &Rejoiner{max: max} }

// Add takes the next line (without its line break) and returns the lines
// now ready, in order: none while a run is open, the joined value when it
// closes, the held lines and this one when it cannot be a value. The
// returned slices may alias line.
func (j *Rejoiner) Add(line []byte) [][]byte {
	if len(j.held) == 0 {
		if d, ok := opens(line); ok {
			j.held, j.size, j.depth = append(j.held, line), len(line), d
			return nil
		}
		return [][]byte{line}
	}
	if startsWhole(line) {
		return append(j.Flush(), j.Add(line)...)
	}
	depth, closedAt, ok := scan(line, j.depth)
	j.size += len(line) + 1
	switch {
	case !ok || (j.max > 0 && j.size > j.max):
		return append(j.Flush(), line)
	case closedAt < 0:
		j.held, j.depth = append(j.held, line), depth
		return nil
	case len(bytes.TrimSpace(line[closedAt+1:])) > 0:
		return append(j.Flush(), line)
	}
	joined := bytes.Join(append(j.held, line), []byte("\n"))
	if !json.Valid(joined) {
		return append(j.Flush(), line)
	}
	j.held, j.size, j.depth = nil, 0, 0
	return [][]byte{joined}
}

// Flush gives back the held lines, unjoined, and starts afresh: the end
// of the stream, or a line the caller will not pass to Add.
func (j *Rejoiner) Flush() [][]byte {
	out := j.held
	j.held, j.size, j.depth = nil, 0, 0
	return out
}

// Rejoin runs a whole sequence of lines through a Rejoiner with no bound.
func Rejoin(lines [][]byte) [][]byte {
	var j Rejoiner
	out := make([][]byte, 0, len(lines))
	for _, l := range lines {
		out = append(out, j.Add(l)...)
	}
	return append(out, j.Flush()...)
}

// opens reports whether line starts a run: its first non-blank byte opens
// an object or array that is still open at the line's end, and what
// follows the bracket can begin JSON (a member's name, a value, or
// nothing yet). A log line such as "{ starting work" opens no run: held,
// it would swallow every reply after it, pretty-printed ones too.
func opens(line []byte) (depth int, ok bool) {
	t := bytes.TrimLeft(line, " \t")
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return 0, false
	}
	if rest := bytes.TrimLeft(t[1:], " \t"); len(rest) > 0 {
		starts := `"}`
		if t[0] == '[' {
			starts = `"[]{-0123456789tfn`
		}
		if !bytes.ContainsRune([]byte(starts), rune(rest[0])) {
			return 0, false
		}
	}
	depth, closedAt, ok := scan(t, 0)
	return depth, ok && closedAt < 0 && depth > 0
}

// startsWhole reports whether line is a complete object or array that
// starts at column 0: a message of its own, not the inside of a value
// (a pretty-printer indents those).
func startsWhole(line []byte) bool {
	if len(line) == 0 || (line[0] != '{' && line[0] != '[') {
		return false
	}
	_, closedAt, ok := scan(line, 0)
	return ok && closedAt >= 0
}

// scan follows the brackets of line, outside strings, from depth. It
// returns the depth at the line's end, or where the depth first came back
// to 0 (closedAt, -1 if it did not); ok is false for a closer with
// nothing open or a string still open at the end.
func scan(line []byte, depth int) (end, closedAt int, ok bool) {
	inString, escaped := false, false
	for i, c := range line {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth < 0 {
				return depth, -1, false
			}
			if depth == 0 {
				return 0, i, !inString
			}
		}
	}
	return depth, -1, !inString
}
