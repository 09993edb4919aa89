package expect_test

import (
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

// FuzzBuild: an expectation is built from any request and any override
// text without a panic, on either transport.
func FuzzBuild(f *testing.F) {
	f.Fuzz(func(t *testing.T, req, override []byte, stdio bool) {
		o, err := expect.ParseOverride(override)
		if err != nil {
			o = nil
		}
		tr := envelope.HTTP
		if stdio {
			tr = envelope.Stdio
		}
		for _, v := range append(envelope.Versions(), "") {
			if x := expect.Build(&envelope.Exchange{Transport: tr, Version: v, Request: envelope.Request{Body: req}}, nil, o); x == nil {
				t.Fatal("no expectation")
			}
		}
	})
}
