package checks_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkHostileReserialObjects: a request of many objects past the
// quote bound and a reply of as many texts, each the request's object
// written out again as Python's repr but for its last member: every text
// is searched for the objects looked for, none is found.
func BenchmarkHostileReserialObjects(b *testing.B) {
	for _, n := range []int{10_000, 20_000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			var req, rep bytes.Buffer
			req.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"rows":[`)
			rep.WriteString(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid arguments","data":{"errors":[{"location":"/params/arguments/rows","problems":[`)
			for i := range n {
				if i > 0 {
					req.WriteByte(',')
					rep.WriteByte(',')
				}
				fmt.Fprintf(&req, `{"status":"open","owner":"user-%06d","label":"bug","sort":"desc","page":%d,"team":"core"}`, i, i)
				fmt.Fprintf(&rep, `"{'status': 'open', 'owner': 'user-%06d', 'label': 'bug', 'sort': 'desc', 'page': %d, 'team': 'edge'}"`, i, i)
			}
			req.WriteString(`]}}}`)
			rep.WriteString(`]}]}}}`)
			judgeBench(b, stdioEx(req.String(), rep.Bytes()))
		})
	}
}

// BenchmarkHostileReserialPrefix: a request element of a thousand a's and
// a b, and a message of a's alone: every position of the message starts
// the element, and a comparison that ran to its end at each would cost
// the message's size times the element's.
func BenchmarkHostileReserialPrefix(b *testing.B) {
	elem := strings.Repeat("a", 1000) + "b"
	req := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"arr":["` + elem + `","` + elem + `c"]}}}`
	for _, mb := range []int{2, 4} {
		b.Run(fmt.Sprintf("message=%dMB", mb), func(b *testing.B) {
			rep := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"` + strings.Repeat("a", mb<<20) + `"}}`
			judgeBench(b, stdioEx(req, []byte(rep)))
		})
	}
}
