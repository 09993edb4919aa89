package envelope_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
)

// expectCase is one row of testdata/expect.json. Bodies may hold \xNN
// escapes for bytes JSON cannot carry (invalid UTF-8).
type expectCase struct {
	Name      string            `json:"name"`
	Transport string            `json:"transport"`
	Version   string            `json:"version"`
	Method    string            `json:"method"`
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
	Want      expectWant        `json:"want"`
}

type expectWant struct {
	Condition  string `json:"condition"`
	Codes      []int  `json:"codes"`
	Status     []int  `json:"status"`
	IDReadable bool   `json:"idReadable"`
	NoReply    bool   `json:"noReply"`
	Ambiguity  bool   `json:"ambiguity"`
	CodeAmb    bool   `json:"codeAmbiguity"`
	WarnCodes  []int  `json:"warnCodes"`
	Quote      string `json:"quote"`
	Version    string `json:"version,omitempty"`
}

var hexEsc = regexp.MustCompile(`\\x([0-9a-f]{2})`)

func TestExpect(t *testing.T) {
	raw, err := os.ReadFile("testdata/expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []expectCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			body := hexEsc.ReplaceAllFunc([]byte(c.Body), func(m []byte) []byte {
				n, _ := strconv.ParseUint(string(m[2:]), 16, 8)
				return []byte{byte(n)}
			})
			h := http.Header{}
			for k, v := range c.Headers {
				h.Set(k, v)
			}
			ex := &envelope.Exchange{Transport: c.Transport, Version: c.Version, Request: envelope.Request{Method: c.Method, Header: h, Body: body}}
			e := envelope.Expect(ex)
			got := expectWant{Condition: string(e.Condition), Codes: e.Codes, Status: e.Status, IDReadable: e.IDReadable,
				NoReply: e.NoReply, Ambiguity: e.Ambiguity != "", CodeAmb: e.CodeAmbiguity != "", WarnCodes: e.WarnCodes, Quote: e.Quote}
			want := c.Want
			if want.Version != "" {
				got.Version = e.Version
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Expect mismatch (-want +got):\n%s\ndetail: %s", diff, e.Detail)
			}
		})
	}
}
