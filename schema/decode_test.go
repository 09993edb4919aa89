package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
)

// TestDecodeMatchesEncodingJSON checks the fast decoder against
// encoding/json with UseNumber.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-1.5e+10`, `12345678901234567890123`,
		` {"a" : [1, "x", {"b": null}], "c":true ,"d":false} `,
		`"plain"`, `"esc\"aped\\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00"`,
		`{"k\u0041y":"v","dup":1,"dup":2}`,
		`[[[]],[{}],""]`,
		typicalToolsList, garbageReply,
	} {
		got, err := decode([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		d := json.NewDecoder(bytes.NewReader([]byte(in)))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-encoding/json +decode):\n%s", in, diff)
		}
	}
	for _, bad := range []string{``, ` `, `{`, `{"a":}`, `[1,]`, `{} {}`, `{}x`, `nul`, `"\x"`, `01`, `'a'`} {
		if _, err := decode([]byte(bad)); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	raw := []byte(typicalToolsList)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDecodeBoundsNesting(t *testing.T) {
	deep := []byte(strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1))
	if _, err := decode(deep); err != errTooDeep {
		t.Errorf("err = %v, want errTooDeep", err)
	}
	ok := []byte(strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth))
	if _, err := decode(ok); err != nil {
		t.Errorf("depth %d: %v", maxJSONDepth, err)
	}
	// Brackets inside strings do not count.
	if _, err := decode([]byte(`"` + strings.Repeat("[", 2*maxJSONDepth) + `\""`)); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
	s, err := NewRegistry().Version("2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	got := valid(t)(s.ValidateReply("tools/list", deep))
	if len(got) != 1 || got[0].Problems[0] != "json nested deeper than 512 levels" {
		t.Errorf("ValidateReply = %v", got)
	}
}

// valid takes a validation's entries, failing the test on an error (an
// instance beyond the validator's bounds, which these tests never give).
func valid(tb testing.TB) func([]envelope.DistilledEntry, error) []envelope.DistilledEntry {
	return func(es []envelope.DistilledEntry, err error) []envelope.DistilledEntry {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return es
	}
}

// A number the validator would read in super-linear time is not
// validated: the error says so, and a number within the bounds is read.
func TestNumberBounds(t *testing.T) {
	s, err := NewRegistry().Version("2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("9", maxNumberLen+1)
	for _, c := range []struct {
		id     string
		beyond bool
	}{
		{"1", false},
		{strings.Repeat("9", maxNumberLen), false},
		{long, true},
		{"1e400", false},
		{"1E+0400", false},
		{"1e401", true},
		{"1e-401", true},
		{"1e1000000", true},
	} {
		reply := `{"jsonrpc":"2.0","id":1,"result":{"tools":[],"x":` + c.id + `}}`
		_, err := s.ValidateReply("tools/list", []byte(reply))
		if got := errors.Is(err, ErrBeyondBounds); got != c.beyond {
			t.Errorf("number %.30s: beyond bounds %v (%v), want %v", c.id, got, err, c.beyond)
		}
	}
}
