package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// typicalToolsList is a 2026 tools/list reply of a small server.
const typicalToolsList = `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","ttlMs":60000,"cacheScope":"public",
"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"demo","version":"1.0.0"}},
"tools":[
 {"name":"echo","title":"Echo","description":"Echoes its input.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"annotations":{"readOnlyHint":true}},
 {"name":"add","description":"Adds two integers.","inputSchema":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"sum":{"type":"integer"}}}},
 {"name":"weather","description":"Current weather for a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string"},"units":{"type":"string","enum":["metric","imperial"]}},"required":["city"]}}
]}}`

const typicalToolCall = `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3},"isError":false}}`

const typicalError = `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"unknown tool 'nope'"}}`

// garbageReply is a reply to tools/list that is wrong nearly everywhere
// and carries a long hostile string.
var garbageReply = `{"jsonrpc":"1.0","id":{"x":[1,2,3]},"result":{"resultType":42,"ttlMs":-5,"cacheScope":"everyone","nextCursor":{},
"tools":[{"name":7,"inputSchema":"none","annotations":{"readOnlyHint":"yes"}},{"title":["x"],"inputSchema":{"type":"array"}},"junk",
{"name":"ok","inputSchema":{"type":"object"},"icons":[{"src":1},{"theme":"neon"}]}]},
"extra":"` + strings.Repeat("<script>alert(1)</script>", 12) + `"}`

func TestDistillSizeOnGarbage(t *testing.T) {
	tree, distilled := garbageSizes(t)
	t.Logf("garbage tools/list reply: detailed error tree %d bytes, distilled %d bytes (%.1fx smaller)", tree, distilled, float64(tree)/float64(distilled))
	if distilled*3 > tree {
		t.Errorf("distilled %d bytes is not much smaller than the tree's %d", distilled, tree)
	}
}

// garbageSizes validates garbageReply and returns the size of the
// library's detailed output (the raw tree) and of the distilled form.
func garbageSizes(t testing.TB) (tree, distilled int) {
	s, err := NewRegistry().Version("2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	v, err := decode([]byte(garbageReply))
	if err != nil {
		t.Fatal(err)
	}
	verr := s.pick("tools/list", v).Validate(v)
	if verr == nil {
		t.Fatal("garbage validated")
	}
	treeJSON, err := json.Marshal(verr.(*jsonschema.ValidationError).DetailedOutput())
	if err != nil {
		t.Fatal(err)
	}
	d := valid(t)(s.ValidateReply("tools/list", []byte(garbageReply)))
	distJSON, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return len(treeJSON), len(distJSON)
}

func BenchmarkValidateReply(b *testing.B) {
	s, err := NewRegistry().Version("2026-07-28")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, method, reply string }{
		{"tools-list", "tools/list", typicalToolsList},
		{"tools-call", "tools/call", typicalToolCall},
		{"error", "tools/call", typicalError},
		{"garbage", "tools/list", garbageReply},
	} {
		raw := []byte(c.reply)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				valid(b)(s.ValidateReply(c.method, raw))
			}
		})
	}
}

func BenchmarkCompileVersion(b *testing.B) {
	for _, v := range ReplyVersions() {
		b.Run(v, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewRegistry().Version(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCompileToolSchema(b *testing.B) {
	raw := []byte(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CompileToolSchema(raw, "2026-07-28"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDistillGarbage(b *testing.B) {
	tree, distilled := garbageSizes(b)
	b.ReportMetric(float64(tree), "tree-bytes")
	b.ReportMetric(float64(distilled), "distilled-bytes")
	s, _ := NewRegistry().Version("2026-07-28")
	v, _ := decode([]byte(garbageReply))
	err := s.pick("tools/list", v).Validate(v)
	b.ReportAllocs()
	for b.Loop() {
		Distill(err)
	}
}

// deepSchema is an object schema nested objects deep (two levels each:
// properties, then the member's schema) whose innermost object has
// leaves members: the most compile work a schema within the bounds can
// ask, with every subschema's location as long as the depth allows.
func deepSchema(objects, leaves int) []byte {
	var b strings.Builder
	for range objects {
		b.WriteString(`{"type":"object","properties":{"a":`)
	}
	b.WriteString(`{"type":"object","properties":{`)
	for i := range leaves {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"integer"}`, i)
	}
	b.WriteString(`}}`)
	b.WriteString(strings.Repeat(`}}`, objects))
	return []byte(b.String())
}

// BenchmarkCompileDeepSchema: schemas as deep, with as many subschemas
// down there, as the bounds let, compiled and used once: the compiler's
// cost grows with the subschemas times their locations' length.
func BenchmarkCompileDeepSchema(b *testing.B) {
	for _, objects := range []int{31, 64, (maxSchemaDepth - 3) / 2} {
		depth := 2*objects + 2           // the leaves'
		trunk := (depth - 1) * depth / 2 // the objects' and their properties' depths
		leaves := min(maxSchemaSubschemas-depth, (maxSchemaDepthSum-trunk)/depth)
		raw := deepSchema(objects, leaves)
		b.Run(fmt.Sprintf("objects=%d,leaves=%d", objects, leaves), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ts, err := CompileToolSchema(raw, "2025-11-25")
				if err != nil {
					b.Fatal(err)
				}
				ts.Validate([]byte(`{"a":{"a":1}}`))
			}
		})
	}
}
