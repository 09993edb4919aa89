package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
)

// An annotation is one finding shown beside the line of the reply it is
// about.
type annotation struct {
	status checks.Status
	id     string
	msg    string
}

// Annotate pretty-prints a JSON message with each finding written next
// to the member its path names (or the nearest enclosing one). Text that
// is not JSON is printed raw, sanitised, with the findings below it.
// Findings whose path is outside the message (http.status, server) go to
// the unplaced list the caller prints elsewhere.
func Annotate(w io.Writer, raw []byte, vs []checks.Verdict, prefix string) (unplaced []string, err error) {
	notes := map[string][]annotation{}
	for _, v := range vs {
		for _, f := range v.Findings {
			notes[f.Path] = append(notes[f.Path], annotation{f.Status, v.Check.ID, f.Message})
		}
	}
	var lines []line
	if !envelope.TooDeep(raw) && gjson.ValidBytes(raw) {
		lines = prettyLines(gjson.ParseBytes(raw), "", "", nil, true)
	} else {
		for _, l := range strings.Split(string(raw), "\n") {
			lines = append(lines, line{text: l})
		}
		if len(lines) > 0 {
			lines[0].path = "reply"
		}
	}
	byPath := map[string]int{}
	for i, l := range lines {
		if _, seen := byPath[l.path]; !seen {
			byPath[l.path] = i
		}
	}
	attached := make([][]annotation, len(lines))
	for path, as := range notes {
		i, ok := lineFor(path, byPath)
		if !ok {
			for _, a := range as {
				unplaced = append(unplaced, fmt.Sprintf("%s %s %s: %s", a.status, a.id, path, a.msg))
			}
			continue
		}
		attached[i] = append(attached[i], as...)
	}
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(prefix + Sanitize(l.text))
		for j, a := range attached[i] {
			sep := "   ← "
			if j > 0 {
				sep = "; "
			}
			fmt.Fprintf(&b, "%s%s %s: %s", sep, a.status, a.id, Sanitize(a.msg))
		}
		b.WriteString("\n")
	}
	_, err = io.WriteString(w, b.String())
	return unplaced, err
}

type line struct {
	path string // display path of the member the line shows
	text string
}

// lineFor finds the line of a path, walking up to its nearest ancestor.
func lineFor(path string, byPath map[string]int) (int, bool) {
	if strings.HasPrefix(path, "http.") || path == "server" {
		return 0, false
	}
	if path == "reply" || strings.HasPrefix(path, "messages[") {
		path = ""
	}
	for {
		if i, ok := byPath[path]; ok {
			return i, true
		}
		cut := strings.LastIndexByte(path, '.')
		if cut < 0 {
			i, ok := byPath[""]
			return i, ok
		}
		path = path[:cut]
	}
}

// prettyLines lays a JSON value out one member per line, two-space
// indent, remembering which path each line shows.
func prettyLines(v gjson.Result, path, indent string, out []line, last bool) []line {
	comma := ","
	if last {
		comma = ""
	}
	open := func(text string) { out = append(out, line{path, text}) }
	switch {
	case v.IsObject():
		open(indent + "{")
		var keys []gjson.Result
		var vals []gjson.Result
		v.ForEach(func(k, val gjson.Result) bool {
			keys = append(keys, k)
			vals = append(vals, val)
			return true
		})
		for i := range keys {
			sub := prettyLines(vals[i], envelope.JoinPath(path, keys[i].Str), indent+"  ", nil, i == len(keys)-1)
			sub[0].text = indent + "  " + keys[i].Raw + ": " + strings.TrimLeft(sub[0].text, " ")
			out = append(out, sub...)
		}
		out = append(out, line{path, indent + "}" + comma})
	case v.IsArray():
		open(indent + "[")
		items := v.Array()
		for i, it := range items {
			out = prettyLines(it, envelope.JoinPath(path, strconv.Itoa(i)), indent+"  ", out, i == len(items)-1)
		}
		out = append(out, line{path, indent + "]" + comma})
	default:
		open(indent + v.Raw + comma)
	}
	return out
}
