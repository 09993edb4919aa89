package envelope

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// check must find what TooDeep, gjson's validator and the recursive
// walk it replaced (refDuplicates, kept here as it was) found, on any
// input.

func sameShape(t *testing.T, raw []byte) {
	t.Helper()
	valid, deep, dups := check(string(raw), true)
	if want := TooDeep(raw); deep != want {
		t.Fatalf("%q: deep %v, want %v", raw, deep, want)
	}
	if v, d := ValidJSON(string(raw)); v != valid || d != deep {
		t.Fatalf("%q: ValidJSON %v %v, check %v %v", raw, v, d, valid, deep)
	}
	if deep {
		return
	}
	if want := gjson.ValidBytes(raw); valid != want {
		t.Fatalf("%q: valid %v, want %v", raw, valid, want)
	}
	if !valid {
		return
	}
	want := refDuplicates(gjson.ParseBytes(raw), make([]string, 0, 8), nil)
	if !slices.Equal(dups, want) || (dups == nil) != (want == nil) {
		t.Fatalf("%q: duplicates %q, want %q", raw, dups, want)
	}
}

var shapeSeeds = []string{
	`{"a":1,"a":2,"b":{"c":[1,{"d":1,"d":2}],"c":3},"e\u0041":1,"eA":2,"x.y":{"*":1,"*":2}}`,
	`[{"a":1,"a":1},[[{"b":{"b":1,"b":2}}]],"s\"{",{}]`,
	`{"":1,"":2,"k":[],"k":{}}`,
	`]]]{"a":1}`,
	`"unterminated {`,
	`{"a":"\\","a":1}`,
	` [1, -0.5e+3 , true,false ,null, "\u00e9\n"] `,
	`{"a":01}`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `[-]`, `[1.]`, `[1e]`, `[1e+]`, `tru`, `nul`, `"\u12"`, `"\x"`, "\"a\x01\"", `{}x`, `{"a":[}`,
	`x[[[[`, `"\q"[[[`, `{"a":tru[[`, `[1,[2,[3]],{"b":{}}]`,
}

func TestShapeAsBefore(t *testing.T) {
	for _, s := range shapeSeeds {
		sameShape(t, []byte(s))
	}
	var b strings.Builder
	b.WriteString("{")
	for i := range 100 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i%40) + `":{"x":1,"x":[{"y":1,"y":2}]}`)
	}
	b.WriteString("}")
	sameShape(t, []byte(b.String()))
	sameShape(t, []byte(strings.Repeat("[", MaxDepth)+strings.Repeat("]", MaxDepth)))
	sameShape(t, []byte(strings.Repeat("[", MaxDepth+1)+strings.Repeat("]", MaxDepth+1)))
	sameShape(t, []byte(strings.Repeat(`{"a":1,"a":`, MaxDepth-1)+"1"+strings.Repeat("}", MaxDepth-1)))
	sameShape(t, []byte(strings.Repeat("[", MaxDepth)+"x"+strings.Repeat("[", 10)))
	sameShape(t, []byte(strings.Repeat("[", MaxDepth-2)+`"\q"`+strings.Repeat("[", 10)))
	sameShape(t, []byte(strings.Repeat("[", MaxDepth-2)+`"\q[[[[[[[[[[[["`+strings.Repeat("]", 10)))
}

func FuzzShape(f *testing.F) {
	for _, s := range shapeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameShape(t, raw) })
}

func refDuplicates(v gjson.Result, path []string, out []string) []string {
	switch {
	case v.IsObject():
		var seenBuf [smallObject]string
		seen := seenBuf[:0]
		var many map[string]bool
		v.ForEach(func(k, val gjson.Result) bool {
			key := k.Str
			var dup bool
			switch {
			case many != nil:
				dup = many[key]
				many[key] = true
			case len(seen) < smallObject:
				dup = slices.Contains(seen, key)
				seen = append(seen, key)
			default:
				many = make(map[string]bool, 4*smallObject)
				for _, s := range seen {
					many[s] = true
				}
				dup = many[key]
				many[key] = true
			}
			if dup {
				out = append(out, joinAll(append(path, key)))
			}
			if val.IsObject() || val.IsArray() {
				out = refDuplicates(val, append(path, key), out)
			}
			return true
		})
	case v.IsArray():
		i := 0
		v.ForEach(func(_, val gjson.Result) bool {
			if val.IsObject() || val.IsArray() {
				out = refDuplicates(val, append(path, strconv.Itoa(i)), out)
			}
			i++
			return true
		})
	}
	return out
}

func joinAll(keys []string) string {
	p := ""
	for _, k := range keys {
		p = JoinPath(p, k)
	}
	return p
}

// TestMetaMemberAsGJSON: the _meta members Get reads without a path are
// what gjson finds by the path, Index included.
func TestMetaMemberAsGJSON(t *testing.T) {
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"a":1}}}}`,
		`{"params":{"_meta":{"x":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"b","io.modelcontextprotocol/protocolVersion":"c"}}}`,
		`{"params":{"_meta":[1],"_meta":"s","_meta":{"io.modelcontextprotocol/logLevel":"debug"}}}`,
		`{"params":{"a":"\u005f","_m\u0065ta":{"io.modelcontextprotocol\u002fprotocolVersion":"e\u00e9"}}}`,
		`{"params":{"_meta":{}}}`, `{"params":{}}`, `{"params":[{"_meta":{}}]}`, `{"params":"{\"_meta\":{}}"}`,
		`{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}},"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":8}}}`,
		`{"params":{"name":"a","arguments":{"x":{"name":1}},"name":"b","_meta":{"progressToken":3,"x":{"y":1},"x":2}}}`,
		`{"params":{"n\u0061me":"a","arguments":[1,2],"uri":7,"inputResponses":null,"_meta":{"progress\u0054oken":"t"}}}`,
		`{"params":{"_meta":{"x":1},"_meta":{"progressToken":2}},"error":{"code":1}}`,
		`{"params":{"_meta":"s","name":{}}, "error":{"code":1,"data":{"a":1}}}`,
		`{"params":{"task":{"ttl":1},"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}],"isError":true,"isError":false,"resultType":"complete"}}`,
		`{"result":{"tools":[],"protocolVersion":"2025-06-18","structuredContent":{"a":{"b":1}},"_meta":{}},"params":{"name":"n"}}`,
		`{"result":{"res\u0075ltType":"x"},"error":{"code":1}}`,
		`{"result":[1,2],"params":"s"}`, `{"result":{}}`,
	} {
		sameMeta(t, []byte(raw))
	}
}

// sameMeta: the _meta keys and the params and result members the cache
// answers (subMembers) are what gjson finds by the path, Index included.
func sameMeta(t *testing.T, raw []byte) {
	t.Helper()
	m := Parse(raw)
	paths := []string{"params.name", "params.arguments", "params.uri", "params.inputResponses", "params.task",
		"params._meta.progressToken", "params._meta.x", "params._meta.a_1", "params._meta", "params.other",
		"result.resultType", "result.isError", "result.content", "result.tools", "result.protocolVersion",
		"result.structuredContent", "result._meta", "result.other", "result.content.0"}
	for _, path := range metaPaths {
		paths = append(paths, path)
	}
	for _, path := range paths {
		head, rest, _ := strings.Cut(path, ".")
		got := m.Get(path)
		want := m.Get(head).Get(rest)
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
			t.Errorf("%s %s: %#v, want %#v", raw, path, got, want)
		}
	}
}

func FuzzMetaMember(f *testing.F) {
	f.Add([]byte(`{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}`))
	f.Add([]byte(`{"result":{"isError":true,"content":[{"type":"text","text":"x"}]}}`))
	f.Fuzz(sameMeta)
}
