package schema

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	got := s.ValidateReply("tools/list", deep)
	if len(got) != 1 || got[0].Problems[0] != "json nested deeper than 512 levels" {
		t.Errorf("ValidateReply = %v", got)
	}
}
