package schema

import (
	"path/filepath"
	"testing"
)

// The official schema files are told apart by the types each revision
// added or dropped; a file of the user's own is of no revision.
func TestUserSchemaRevision(t *testing.T) {
	u, err := LoadUserSchema(filepath.Join("testdata", "user", "minimal.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := u.Revision(); r != "" {
		t.Errorf("minimal.json: revision %q, want none", r)
	}
	dir := officialDir(t)
	for _, v := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		u, err := LoadUserSchema(filepath.Join(dir, v+".schema.json"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := u.Revision(); r != v {
			t.Errorf("%s.schema.json: revision %q", v, r)
		}
	}
}

// A file with the marks of two revisions, or of none, is not taken for
// either.
func TestRevisionOfMixed(t *testing.T) {
	def := map[string]any{}
	cases := []struct {
		names []string
		want  string
	}{
		{[]string{"InitializeResult", "DiscoverResult", "InputRequiredResult"}, ""},
		{[]string{"InitializeResult"}, ""},
		{[]string{"DiscoverResult"}, ""},
		{[]string{"InitializeResult", "AudioContent", "ElicitRequest"}, ""},
		{[]string{"InitializeResult", "AudioContent"}, "2025-03-26"},
		{[]string{"DiscoverResult", "InputRequiredResult"}, "2026-07-28"},
	}
	for _, c := range cases {
		defs := map[string]any{}
		for _, n := range c.names {
			defs[n] = def
		}
		if got := revisionOf(defs); got != c.want {
			t.Errorf("%v: %q, want %q", c.names, got, c.want)
		}
	}
}
