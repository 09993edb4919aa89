package checks_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
)

// An echo finding names what was echoed: one request value copied whole
// is named as that value, whatever else the body holds around it and
// wherever it stands in the body (the id's length moves it). Only a reply
// that carries more of the body than the value names the body.
func TestEchoNamesTheValue(t *testing.T) {
	canary := string(fixtures.Canary(4096))
	short := "canary-0123456789abcdefghijklmnopqrstuvwxyz-0123456789abcdefghijklmnopqrstuvwxyz"
	cases := []struct {
		name, value, message, want string
	}{
		{"quoted canary", canary, `unknown tool \"%s\"`, "of request value"},
		{"bare canary", canary, `unknown tool: %s`, "of request value"},
		{"quoted short value", short, `unknown tool \"%s\"`, "of request value"},
		{"body around the value", short, `bad request: {\"name\":\"%s\",\"arguments\":{\"alpha\":\"beta\"}}`, "of the request body"},
	}
	for _, c := range cases {
		for _, id := range []int{1, 7, 1000, 71000, 1234567} {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{"alpha":"beta"}}}`, id, c.value)
			reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"`+c.message+`"}}`, id, c.value)
			ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125,
				Request:  envelope.Request{Body: []byte(body)},
				Response: &envelope.Response{Messages: [][]byte{[]byte(reply)}}}
			vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil)}, checks.All())
			var got string
			for _, v := range vs {
				if v.Check.ID == "ERR4001" && len(v.Findings) > 0 {
					got = v.Findings[0].Message
				}
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("%s, id %d: ERR4001 says %q; want it to name %q", c.name, id, got, c.want)
			}
		}
	}
}

// A relay learns an Authorization value and its token as two secrets
// ("Bearer TOKEN" and "TOKEN"); a reply that echoes the value is one echo
// of one header, reported once, as check reports its --header's (review
// rev33: the relay's report had two rows where lint of its recording had
// one). Two headers echoed are two.
func TestEchoedSecretOncePerHeader(t *testing.T) {
	secrets := []envelope.Secret{
		{Name: "Authorization", Value: "Bearer sk-abc123secretvalue"},
		{Name: "Authorization", Value: "sk-abc123secretvalue"},
		{Name: "X-Api-Key", Value: "key-0123456789abcdef"},
	}
	for _, tc := range []struct {
		message string
		want    int
	}{
		{"bad token Bearer sk-abc123secretvalue", 1},
		{"bad token sk-abc123secretvalue", 1},
		{"bad token sk-abc123secretvalue and key key-0123456789abcdef", 2},
	} {
		reply := `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"` + tc.message + `"}}`
		ex := &envelope.Exchange{Transport: envelope.Stdio, Version: envelope.V20251125,
			Request:  envelope.Request{Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"nope/nothing"}`)},
			Response: &envelope.Response{Messages: [][]byte{[]byte(reply)}}}
		vs := checks.Judge(checks.Input{Fixture: "f", Exchange: ex, Expect: expect.Build(ex, nil, nil), Secrets: secrets}, checks.All())
		got := 0
		for _, v := range vs {
			for _, f := range v.Findings {
				if v.Check.ID == "ERR4001" && strings.Contains(f.Message, "given with --header is echoed") {
					got++
				}
			}
		}
		if got != tc.want {
			t.Errorf("%q: %d echo findings of a header, want %d", tc.message, got, tc.want)
		}
	}
}
