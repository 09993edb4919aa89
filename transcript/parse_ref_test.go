package transcript

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// The reader once read each line with gjson alone (refParse, kept here
// as it was); the scanner that replaced it must read every line alike:
// the same record, or the same error.

func sameParse(t *testing.T, p *Parser, line []byte) {
	t.Helper()
	want, werr := refParse(line)
	got, gerr := parse(line, &p.seen)
	if fmt.Sprint(werr) != fmt.Sprint(gerr) {
		t.Fatalf("%q:\nerror %v, want %v", line, gerr, werr)
	}
	if werr != nil {
		return
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(expect.Override{})); d != "" {
		t.Fatalf("%q:\n%s", line, d)
	}
}

func TestParseAsGJSON(t *testing.T) {
	files, _ := filepath.Glob("../testdata/recorded/*.jsonl")
	more, _ := filepath.Glob("../*/testdata/*.jsonl")
	examples, _ := filepath.Glob("../examples/*.jsonl")
	more = append(more, examples...)
	for _, f := range append(files, more...) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var p Parser // one per file: its header caches fill as they would
		for _, l := range bytes.Split(raw, []byte("\n")) {
			if bytes.Contains(l, []byte(`"transport"`)) {
				sameParse(t, &p, bytes.TrimRight(l, "\r"))
			}
		}
	}
	var p Parser
	for _, l := range parseSeeds {
		sameParse(t, &p, []byte(l))
	}
}

func FuzzParseAsGJSON(f *testing.F) {
	for _, l := range parseSeeds {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var p Parser
		sameParse(t, &p, line)
		sameParse(t, &p, line) // read again from the caches
	})
}

var parseSeeds = []string{
	`{"transport":"http","request":{"headers":{"Content-Type":"application/json","MCP-Protocol-Version":"2026-07-28","x-a":["1","2"],"X-A":"3","e\u0041":"\u00e9\ud800x\ud83d\ude00\ud800\u0041","empty":[]},"body":"{\"a\":\"\\\"\\ud800\"}\n\t\r\b\f\/"},"response":{"status":200,"headers":{"A":"b"},"body":"x"}}`,
	` {"transport" : "stdio" , "request" : { "body" : "" } , "response" : { "body" : "a\n\nb\r\n" , "cut" : true } , "fixture":"f\u0031","note":"n","died":"d","failure":"x"} `,
	`{"transport":"stdio","request":{"bodyBase64":"AAE="},"response":null,"protocolVersion":"2025-06-18","expect":{"expect-code":"-32602"}}`,
	`{"transport":"http","request":{"body":""},"response":{"status":"200"}}`,
	`{"transport":"http","request":{"body":""},"response":{"status":200,"cut":1}}`,
	`{"transport":"http","request":{"body":""},"response":{"status":200,"resumed":2,"body":"id: 1\ndata:\n\n"}}`,
	`{"transport":"http","request":{"body":""},"response":{"status":200,"resumed":-1}}`,
	`{"transport":"http","request":{"body":""},"response":{"status":200,"resumed":1.5}}`,
	`{"transport":"http","request":{"body":5},"response":null}`,
	`{"transport":"http","request":{"body":"a","bodyBase64":"YQ=="},"response":null}`,
	`{"transport":"http","request":{"headers":{"a":5}},"response":null}`,
	`{"transport":"http","request":{"headers":{"a":["x",5]}},"response":null}`,
	`{"transport":"http","request":{"headers":[]},"response":null}`,
	`{"transport":"http","request":{},"response":[]}`,
	`{"transport":"http","request":{}}`,
	`{"transport":"htt\u0070","request":[]}`,
	`{"transport":1}`,
	`{"protocolVersion":"x","transport":"stdio"}`,
	`{"transport":"stdio","protocolVersion":"x"}`,
	`{"transport":"stdio","transport":"http","request":{"method":"GET","method":"POST"},"response":null}`,
	`[1]`,
	`{"a":`,
	"\"\xe80\"", // not an object and not UTF-8: the byte is named first, as refParse does
	`{"transport":"http","request":{"bodyBase64":"!!"},"response":null}`,
	`{"transport":"stdio","request":{"body":"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}"},"response":{"body":"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n","again":[ 5 ],"answered":true}}`,
	`{"transport":"stdio","request":{"body":""},"response":{"body":"","copies":["c"],"unsent":[{"a" : 1}],"answered":false,"ended":true,"heldOpen":false}}`,
	`{"transport":"stdio","request":{"body":""},"response":{"body":"","answered":1}}`,
	`{"transport":"http","request":{"body":""},"response":{"status":200,"answered":true}}`,
	`{"transport":"stdio","request":{"body":""},"response":{"body":"","answered":true,"answered":false}}`,
	`{"transport":"stdio","request":{"body":""},"response":{"body":"","again":[null],"answered":"yes"}}`,
}

var (
	_ = base64.StdEncoding
	_ = errors.New
	_ http.Header
	_ gjson.Result
	_ envelope.Exchange
)

func refParse(line []byte) (Record, error) {
	var rec Record
	if envelope.TooDeep(line) {
		return rec, fmt.Errorf("nested deeper than %d levels", envelope.MaxDepth)
	}
	if !gjson.ValidBytes(line) {
		return rec, invalidJSON(line) // the message, not the reading, is shared
	}
	if !utf8.Valid(line) {
		return rec, notUTF8(line) // the message, not the reading, is shared
	}
	obj := gjson.ParseBytes(line)
	if !obj.IsObject() {
		return rec, errors.New("not a JSON object")
	}
	if d := refTwice(obj, rootKeys, ""); d != "" {
		return rec, errTwice(d)
	}
	var root [9]gjson.Result // transport, protocolVersion, fixture, request, response, expect, failure, died, note
	envelope.Members(obj, []string{"transport", "protocolVersion", "fixture", "request", "response", "expect", "failure", "died", "note"}, root[:])
	ex := &rec.Exchange
	switch t := root[0]; {
	case !t.Exists():
		return rec, noTransport(line) // the message, not the reading, is shared
	case t.Str == envelope.HTTP || t.Str == envelope.Stdio:
		ex.Transport = t.Str
	default:
		return rec, fmt.Errorf(`"transport" is %s, want "http" or "stdio"`, t.Raw)
	}
	if v := root[1]; v.Exists() {
		if !envelope.KnownVersion(v.Str) {
			return rec, fmt.Errorf(`"protocolVersion" is %s, want one of %v`, v.Raw, envelope.Versions())
		}
		ex.Version = v.Str
	}
	rec.Fixture = root[2].Str
	if o := root[5]; o.Exists() {
		if o.IsObject() {
			if d := refTwice(o, nil, "expect."); d != "" {
				return rec, errTwice(d)
			}
		}
		ov, err := expect.ParseOverride([]byte(o.Raw))
		if err != nil {
			return rec, err
		}
		rec.Override = ov
	}
	ex.Failure, ex.Died, ex.Note = root[6].Str, root[7].Str, root[8].Str
	reqv := root[3]
	if !reqv.IsObject() {
		return rec, errors.New(`"request" is required and must be an object`)
	}
	var req [4]gjson.Result // method, headers, body, bodyBase64
	envelope.Members(reqv, []string{"method", "headers", "body", "bodyBase64"}, req[:])
	var err error
	ex.Request.Method = req[0].Str
	if ex.Request.Header, err = refHeaders(req[1], "request"); err != nil {
		return rec, err
	}
	if ex.Request.Body, err = refBody(req[2], req[3], "request"); err != nil {
		return rec, err
	}
	respv := root[4]
	switch {
	case !respv.Exists():
		return rec, errors.New(`"response" is required (null when no reply arrived)`)
	case respv.Type == gjson.Null:
		return rec, nil
	case !respv.IsObject():
		return rec, errors.New(`"response" must be an object or null`)
	}
	var resp [14]gjson.Result // status, headers, body, bodyBase64, cut, resumed, ended, heldOpen, unsent, again, copies, answered, truncated, resumeRefused
	envelope.Members(respv, []string{"status", "headers", "body", "bodyBase64", "cut", "resumed", "ended", "heldOpen", "unsent", "again", "copies", "answered", "truncated", "resumeRefused"}, resp[:])
	r := &envelope.Response{}
	for _, f := range []struct {
		v    gjson.Result
		name string
		to   *bool
	}{{resp[4], "cut", &r.Cut}, {resp[6], "ended", &r.Ended}, {resp[7], "heldOpen", &r.HeldOpen}, {resp[12], "truncated", &r.Truncated}, {resp[13], "resumeRefused", &r.ResumeRefused}} {
		switch f.v.Type {
		case gjson.True:
			*f.to = true
		case gjson.False:
		default:
			if f.v.Exists() {
				return rec, fmt.Errorf(`"response.%s" is %s, want true or false`, f.name, f.v.Raw)
			}
		}
	}
	if n := resp[5]; n.Exists() {
		if n.Type != gjson.Number || !envelope.IsInteger(n.Raw) || n.Int() < 0 || n.Int() > 100 {
			return rec, fmt.Errorf(`"response.resumed" is %s, want how many times the stream was resumed`, n.Raw)
		}
		r.Resumed = int(n.Int())
	}
	if s := resp[0]; s.Exists() {
		if s.Type != gjson.Number || !envelope.IsInteger(s.Raw) || s.Int() < 100 || s.Int() > 599 {
			return rec, fmt.Errorf(`"response.status" is %s, want an HTTP status`, s.Raw)
		}
		r.Status = int(s.Int())
	} else if ex.Transport == envelope.HTTP {
		return rec, errors.New(`"response.status" is required for http`)
	}
	for i, f := range []*[]string{&r.Unsent, &r.Again, &r.Copies} {
		v := resp[8+i]
		if !v.Exists() {
			continue
		}
		name := "response." + []string{"unsent", "again", "copies"}[i]
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
			*f = append(*f, envelope.Compact(id.Raw))
		}
	}
	switch a := resp[11]; a.Type {
	case gjson.True:
		if ex.Transport != envelope.Stdio {
			return rec, errors.New(`"response.answered" belongs to stdio exchanges only`)
		}
		r.Answered = true
	case gjson.False:
	default:
		if a.Exists() {
			return rec, fmt.Errorf(`"response.answered" is %s, want true or false`, a.Raw)
		}
	}
	if r.Header, err = refHeaders(resp[1], "response"); err != nil {
		return rec, err
	}
	if r.Body, err = refBody(resp[2], resp[3], "response"); err != nil {
		return rec, err
	}
	if ex.Transport == envelope.Stdio {
		// One message a line, as the server wrote them: an empty line is
		// one too (the live run judged it), and only the newline that
		// ends the body ends no message. A value pretty-printed over
		// several lines is one message, as the live run read it.
		lines := bytes.Split(bytes.TrimSuffix(r.Body, []byte("\n")), []byte("\n"))
		for i, l := range lines {
			lines[i] = bytes.TrimSuffix(l, []byte("\r"))
		}
		r.Messages = envelope.Rejoin(lines)
		if len(r.Body) == 0 {
			r.Messages = r.Messages[:0]
		}
	}
	ex.Response = r
	return rec, nil
}

func refHeaders(v gjson.Result, where string) (http.Header, error) {
	h := http.Header{}
	if !v.Exists() {
		return h, nil
	}
	if !v.IsObject() {
		return nil, fmt.Errorf(`"%s.headers" must be an object`, where)
	}
	var err error
	seen := map[string]bool{}
	v.ForEach(func(k, val gjson.Result) bool {
		if seen[k.Str] {
			err = errTwice(where + ".headers." + k.Str)
			return false
		}
		seen[k.Str] = true
		switch {
		case val.Type == gjson.String:
			h.Add(k.Str, val.Str)
		case val.IsArray():
			for _, x := range val.Array() {
				if x.Type != gjson.String {
					err = fmt.Errorf(`"%s.headers.%s" values must be strings`, where, k.Str)
					return false
				}
				h.Add(k.Str, x.Str)
			}
		default:
			err = fmt.Errorf(`"%s.headers.%s" must be a string or an array of strings`, where, k.Str)
			return false
		}
		return true
	})
	return h, err
}

func refBody(b, b64 gjson.Result, where string) ([]byte, error) {
	switch {
	case b.Exists() && b64.Exists():
		return nil, fmt.Errorf(`"%s" has both body and bodyBase64`, where)
	case b64.Exists():
		raw, err := base64.StdEncoding.DecodeString(b64.Str)
		if err != nil {
			return nil, fmt.Errorf(`"%s.bodyBase64": %w`, where, err)
		}
		return raw, nil
	case b.Exists():
		if b.Type != gjson.String {
			return nil, fmt.Errorf(`"%s.body" must be a string (the raw text); use bodyBase64 for bytes`, where)
		}
		return []byte(b.Str), nil
	}
	return nil, nil
}

// refTwice is the first member of obj named in keys (any member, for
// nil keys) given twice, with where before it; and, on the way through,
// the first so given in the first request and response objects.
func refTwice(obj gjson.Result, keys []string, where string) string {
	seen := map[string]bool{}
	dup := ""
	obj.ForEach(func(k, v gjson.Result) bool {
		if keys != nil && !slices.Contains(keys, k.Str) {
			return true
		}
		if seen[k.Str] {
			dup = where + k.Str
			return false
		}
		seen[k.Str] = true
		if where == "" && keys != nil && v.IsObject() {
			switch k.Str {
			case "request":
				dup = refTwice(v, requestKeys, "request.")
			case "response":
				dup = refTwice(v, responseKeys, "response.")
			}
		}
		return dup == ""
	})
	return dup
}
