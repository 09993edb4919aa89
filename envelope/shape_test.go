package envelope

import (
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
