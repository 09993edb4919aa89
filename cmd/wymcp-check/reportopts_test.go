package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLintSARIFPathSpellings: lint t.jsonl, ./t.jsonl and $PWD/t.jsonl
// write one artifact URI and one fingerprint per finding: the working
// directory reaches the SARIF writer.
func TestLintSARIFPathSpellings(t *testing.T) {
	raw := readFile(t, "../../examples/demo.jsonl")
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("t.jsonl", []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	where := func(file string) []string {
		t.Helper()
		out := filepath.Join(dir, "out.sarif")
		if code, _, errOut := runMain(t, "", "lint", "--format", "sarif", "-o", out, file); code != exitFindings {
			t.Fatalf("lint %s: exit %d: %s", file, code, errOut)
		}
		var log struct {
			Runs []struct {
				Results []struct {
					PartialFingerprints map[string]string
					Locations           []struct {
						PhysicalLocation struct{ ArtifactLocation struct{ URI string } }
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(readFile(t, out)), &log); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range log.Runs[0].Results {
			got = append(got, r.Locations[0].PhysicalLocation.ArtifactLocation.URI+" "+r.PartialFingerprints["wymcpFinding/v1"])
		}
		return got
	}
	want := where("t.jsonl")
	if len(want) == 0 || want[0][:len("t.jsonl ")] != "t.jsonl " {
		t.Fatalf("lint t.jsonl: results %v, want some at t.jsonl", want)
	}
	for _, file := range []string{"./t.jsonl", filepath.Join(dir, "t.jsonl")} {
		if diff := cmp.Diff(want, where(file)); diff != "" {
			t.Errorf("lint %s against lint t.jsonl (-want +got):\n%s", file, diff)
		}
	}
}
