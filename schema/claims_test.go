package schema

import (
	"slices"
	"testing"
)

// TestClaimsAreOfficialTypes keeps Covers honest: every type a protocol
// file claims (an upper-case $defs name) exists in the official schema of
// that version.
func TestClaimsAreOfficialTypes(t *testing.T) {
	for _, v := range ReplyVersions() {
		p, err := loadProtocol(v)
		if err != nil {
			t.Fatal(err)
		}
		official := officialDefs(t, v)
		var names []string
		for name := range p.claims() {
			if !official[name] {
				t.Errorf("%s: %s claims an official type the official schema does not define", v, name)
			}
			names = append(names, name)
		}
		slices.Sort(names)
		t.Logf("%s covers %d official types: %v", v, len(names), names)
	}
}
