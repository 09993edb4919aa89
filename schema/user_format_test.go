package schema

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// format is an annotation in a --schema file whatever its dialect: a
// draft-07 file (the official 2025-03-26 and 2025-06-18 ones) does not
// refuse a value that breaks only a format, as a 2020-12 one does not;
// the value's type still counts.
func TestUserSchemaFormatIsAnnotation(t *testing.T) {
	u, err := LoadUserSchema(filepath.Join("testdata", "user", "draft07-format.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		reply string
		want  entries
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"notes/today.md","lastModified":"yesterday"}]}}`, nil},
		{`{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":7}]}}`, entries{
			{Location: "/result/resources/0/uri", Problems: []string{"got number, want string"}},
		}},
	}
	for _, c := range cases {
		got, err := u.ValidateReply("resources/list", []byte(c.reply))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, entries(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.reply, diff)
		}
	}
}
