package schema

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
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

// A file with the marks of two revisions, or a handful of one
// revision's, is not taken for either.
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
		{[]string{"InitializeResult", "AudioContent"}, ""},
		{[]string{"DiscoverResult", "InputRequiredResult"}, ""},
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

// officialFileDefs reads the definitions of the official file of version.
func officialFileDefs(t *testing.T, version string) (map[string]any, string, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(officialDir(t), version+".schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	key, defs := defsOf(doc)
	if defs == nil {
		t.Fatalf("%s: no definitions", version)
	}
	return doc, key, defs
}

// The table of official definition names is the official files' own.
func TestOfficialRevisionNames(t *testing.T) {
	for _, r := range officialRevisions {
		_, _, defs := officialFileDefs(t, r.version)
		for n := range defs {
			if !r.names[n] {
				t.Errorf("%s: %s missing from the table", r.version, n)
			}
		}
		for n := range r.names {
			if _, ok := defs[n]; !ok {
				t.Errorf("%s: %s in the table, not in the file", r.version, n)
			}
		}
	}
}

// writeDoc writes doc as a schema file in a fresh directory.
func writeDoc(t *testing.T, doc map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// An official file trimmed of a few definitions is the user's own, and
// so describes every version; one that only adds definitions of the
// user's own is still the official file.
func TestUserSchemaRevisionTrimmed(t *testing.T) {
	for _, r := range officialRevisions {
		doc, key, defs := officialFileDefs(t, r.version)
		// The definitions no $ref names can go without breaking the file.
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		trimmed := maps.Clone(defs)
		for n := range defs {
			if n != defMessage && !strings.Contains(string(raw), `"#/`+key+`/`+n+`"`) {
				delete(trimmed, n)
			}
		}
		if len(trimmed) == len(defs) {
			t.Fatalf("%s: nothing to trim", r.version)
		}
		doc[key] = trimmed
		u, err := LoadUserSchema(writeDoc(t, doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.Revision(); got != "" {
			t.Errorf("%s trimmed: revision %q, want none", r.version, got)
		}
		added := maps.Clone(defs)
		added["MyVendorExtension"] = map[string]any{"type": "object"}
		doc[key] = added
		if u, err = LoadUserSchema(writeDoc(t, doc), nil); err != nil {
			t.Fatal(err)
		}
		if got := u.Revision(); got != r.version {
			t.Errorf("%s with a definition added: revision %q", r.version, got)
		}
	}
}

// A small schema of the user's own that has some of 2025-03-26's types
// is no official file: it is applied to a reply of any version.
func TestUserSchemaOwnApplied(t *testing.T) {
	u, err := LoadUserSchema(filepath.Join("testdata", "user", "own-vendor-field.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := u.Revision(); r != "" {
		t.Errorf("revision %q, want none", r)
	}
	bad, err := u.ValidateReply("tools/list", []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || bad[0].Location != "/result" {
		t.Errorf("problems %+v, want one at /result", bad)
	}
	good, err := u.ValidateReply("tools/list", []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"myVendorField":1}}`))
	if err != nil || len(good) != 0 {
		t.Errorf("problems %+v (%v), want none", good, err)
	}
}
