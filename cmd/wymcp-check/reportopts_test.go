package main

import (
	"encoding/json"
	"errors"
	"golang.org/x/tools/txtar"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/runner"
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

// TestLintBaselinePathSpellings: a baseline written by lint of several
// transcripts holds for the same files spelled otherwise ("./a.jsonl",
// "$PWD/b.jsonl"): each fixture's name is prefixed with the file's one
// spelling. Before, every entry came back "not judged", and the gate
// failed. The twin: the spelling it was written with.
func TestLintBaselinePathSpellings(t *testing.T) {
	raw := readFile(t, "../../examples/demo.jsonl")
	dir := t.TempDir()
	t.Chdir(dir)
	for _, f := range []string{"a.jsonl", "b.jsonl"} {
		if err := os.WriteFile(f, []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errOut := runMain(t, "", "lint", "--write-baseline", "known.txt", "a.jsonl", "b.jsonl"); code != exitFindings {
		t.Fatalf("lint --write-baseline: exit %d: %s", code, errOut)
	}
	for _, files := range [][]string{{"a.jsonl", "b.jsonl"}, {"./a.jsonl", filepath.Join(dir, "b.jsonl")}} {
		args := append([]string{"lint", "--baseline", "known.txt"}, files...)
		if code, out, errOut := runMain(t, "", args...); code != exitOK {
			t.Errorf("lint %v --baseline: exit %d, want %d\n%s%s", files, code, exitOK, out, errOut)
		}
	}
}

// TestWriteBaselineOnlyAcceptedFailures: --write-baseline lists the
// server's failures, never a could-not-judge (a timeout is no accepted
// failure), and a run its deadline cut short writes no baseline at all,
// as an interrupted run does not: what it did not reach would be left
// out. Both come from a recording, so lint stands for check here.
func TestWriteBaselineOnlyAcceptedFailures(t *testing.T) {
	demo := readFile(t, "../../examples/demo.jsonl")
	dir := t.TempDir()
	for _, tc := range []struct {
		name, extra string
		written     bool
		want        []string // the entries written, FIXTURE CHECK
		note        string
	}{{
		name:    "unjudged",
		extra:   `{"transport":"http","fixture":"late/one","notSent":true,"failure":"the server could not be started again","request":{},"response":null}`,
		written: true,
		want:    []string{"garbage ERR1002", "garbage RPC1004", "stdio-banner RPC1001", "text-plain HTTP1001", "unknown-tool-echo ERR2002", "unknown-tool-echo ERR3002", "unknown-tool-echo ERR3003", "unknown-tool-echo ERR4001", "wrong-id-type RPC1004"},
		note:    "wrote 9 failure(s) to the baseline",
	}, {
		name:  "deadline",
		extra: `{"transport":"http","fixture":"late/one","notSent":true,"failure":"` + runner.DeadlinePassed + `","request":{},"response":null}`,
		note:  "--write-baseline: not written, the run's deadline passed before it judged everything",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rec, base := filepath.Join(dir, tc.name+".jsonl"), filepath.Join(dir, tc.name+".txt")
			if err := os.WriteFile(rec, []byte(demo+tc.extra+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runMain(t, "", "lint", "--write-baseline", base, rec)
			if code != exitFindings {
				t.Fatalf("exit %d, want %d:\n%s%s", code, exitFindings, out, errOut)
			}
			if !strings.Contains(out, tc.note) {
				t.Errorf("the report does not note %q:\n%s", tc.note, out)
			}
			raw, err := os.ReadFile(base)
			if !tc.written {
				if err == nil {
					t.Errorf("a baseline was written:\n%s", raw)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(string(raw), "\n") {
				if f := strings.Fields(line); len(f) >= 2 && !strings.HasPrefix(line, "#") {
					got = append(got, f[0]+" "+f[1])
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries written (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRewriteBaselineFromSelection: --write-baseline over the --baseline
// read, by a run of a selection of checks, keeps the entries the run did
// not judge: the next full run still knows them (review rev43: they were
// dropped, and the next run failed on accepted failures).
func TestRewriteBaselineFromSelection(t *testing.T) {
	dir := t.TempDir()
	rec, base := filepath.Join(dir, "demo.jsonl"), filepath.Join(dir, "known.txt")
	if err := os.WriteFile(rec, []byte(readFile(t, "../../examples/demo.jsonl")), 0o644); err != nil {
		t.Fatal(err)
	}
	entries := func() []string {
		var out []string
		for _, line := range strings.Split(readFile(t, base), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && !strings.HasPrefix(line, "#") {
				out = append(out, f[0]+" "+f[1])
			}
		}
		return out
	}
	if code, out, errOut := runMain(t, "", "lint", "--write-baseline", base, rec); code != exitFindings {
		t.Fatalf("writing the baseline: exit %d:\n%s%s", code, out, errOut)
	}
	all := entries()
	if code, out, errOut := runMain(t, "", "lint", "--baseline", base, "--write-baseline", base, "--checks", "ERR1002", rec); code != 0 {
		t.Fatalf("rewriting from a selection: exit %d:\n%s%s", code, out, errOut)
	}
	if diff := cmp.Diff(all, entries()); diff != "" {
		t.Errorf("entries after a rewrite from --checks ERR1002 (-before +after):\n%s", diff)
	}
	if code, out, errOut := runMain(t, "", "lint", "--baseline", base, rec); code != 0 {
		t.Errorf("the next full run: exit %d, want 0:\n%s%s", code, out, errOut)
	}
}

// TestBaselineWarnEntryNotAFail: a baseline written under --fail-on
// warn marks a warning's entry, which accepts that warning again but not
// a fail of the same check on the same fixture: the gate fails on it
// (review rev43: the entry, keyed by fixture and check alone, made a
// later MUST failure known, exit 0).
func TestBaselineWarnEntryNotAFail(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/baseline/warn-entry.txtar")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ar.Files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base, warn, fail := filepath.Join(dir, "bl.txt"), filepath.Join(dir, "warn.jsonl"), filepath.Join(dir, "fail.jsonl")
	if code, out, errOut := runMain(t, "", "lint", "--fail-on", "warn", "--write-baseline", base, warn); code != exitFindings {
		t.Fatalf("writing the baseline: exit %d:\n%s%s", code, out, errOut)
	}
	if raw := readFile(t, base); !strings.Contains(raw, "errors/unknown-method ERR3001:warn ") {
		t.Fatalf("the warning's entry is not marked:\n%s", raw)
	}
	for _, tc := range []struct {
		args []string
		code exitCode
		want string
	}{
		{[]string{"--fail-on", "warn", "--baseline", base, warn}, 0, "baseline: 1 known"},
		{[]string{"--baseline", base, fail}, exitFindings, "FAILED: 18 pass, 1 fail"},
		{[]string{"--fail-on", "warn", "--baseline", base, fail}, exitFindings, "FAILED: 18 pass, 1 fail"},
	} {
		code, out, errOut := runMain(t, "", append([]string{"lint"}, tc.args...)...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("lint %s: exit %d, want %d with %q:\n%s%s", strings.Join(tc.args, " "), code, tc.code, tc.want, out, errOut)
		}
	}
}

// TestReportWrittenTwiceThroughLinks: two reports that would land in
// one file are a usage error, however the path reaches it, before
// anything is written. A dangling link to a file not made yet (which
// os.Create writes through) once slipped past: both reports went,
// interleaved, into the link's target.
func TestReportWrittenTwiceThroughLinks(t *testing.T) {
	// links makes a fresh directory of links: no case sees a file an
	// earlier case wrote.
	links := func(t *testing.T) func(string) string {
		dir := t.TempDir()
		at := func(p string) string { return filepath.Join(dir, p) }
		if err := os.Mkdir(at("real"), 0o755); err != nil {
			t.Fatal(err)
		}
		for link, target := range map[string]string{
			"link.json":  at("same.json"),    // dangling, absolute
			"rel.json":   "same.json",        // dangling, relative to its directory
			"chain.json": at("link.json"),    // a link to the dangling link
			"dirlink":    at("real"),         // a directory reached through a link
			"deep.json":  "dirlink/new.json", // dangling, through the linked directory
		} {
			if err := os.Symlink(target, at(link)); err != nil {
				t.Fatal(err)
			}
		}
		return at
	}
	for _, tc := range []struct{ a, b string }{
		{"link.json", "same.json"},
		{"rel.json", "same.json"},
		{"chain.json", "same.json"},
		{"chain.json", "rel.json"},
		{"dirlink/new.json", "real/new.json"},
		{"deep.json", "real/new.json"},
	} {
		at := links(t)
		a, b := at(tc.a), at(tc.b)
		code, out, errOut := runMain(t, "", "lint", "../../examples/demo.jsonl", "--report", "json="+a, "--report", "sarif="+b)
		if want := b + " is written twice"; code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("--report json=%s --report sarif=%s: exit %d, stderr %q; want exit 2 and %q", tc.a, tc.b, code, errOut, want)
		}
		if out != "" {
			t.Errorf("%s, %s: a report was started before the usage error", tc.a, tc.b)
		}
		for _, p := range []string{"same.json", "real/new.json"} {
			if _, err := os.Stat(at(p)); err == nil {
				t.Errorf("%s, %s: %s was written", tc.a, tc.b, p)
			}
		}
	}
	// Distinct files stay distinct, links or not.
	at := links(t)
	if code, _, errOut := runMain(t, "", "lint", "../../examples/demo.jsonl", "--report", "json="+at("dirlink/one.json"), "--report", "sarif="+at("real/two.json")); code == exitUsage {
		t.Errorf("two files: exit 2: %s", errOut)
	}
}

// TestReportUnopenableDestroysNothing: a report that cannot be opened is
// a usage error that leaves every other file as it was. Before, the
// reports were created one by one: the ones before the failure were
// already emptied (a previous run's report gone, 0 bytes left), and the
// new ones left behind empty. The twin: when all open, each is written
// over whole (a longer file before leaves no tail).
func TestReportUnopenableDestroysNothing(t *testing.T) {
	dir := t.TempDir()
	prev, fresh := filepath.Join(dir, "prev.json"), filepath.Join(dir, "fresh.json")
	const before = `{"previous":"report","with":"more bytes than a report of nothing would need to leave a tail behind if it were not emptied first"}` + "\n"
	if err := os.WriteFile(prev, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(transcript, []byte(readFile(t, "../../examples/demo.jsonl")), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "no-such-dir", "r.xml")
	code, out, errOut := runMain(t, "", "lint", "--format", "json", "-o", prev, "--report", "json="+fresh, "--report", "junit="+bad, transcript)
	if code != exitUsage || !strings.Contains(errOut, "report junit: open "+bad) {
		t.Errorf("exit %d, stderr %q; want %d naming %s", code, errOut, exitUsage, bad)
	}
	if out != "" {
		t.Errorf("stdout %q, want nothing", out)
	}
	if got := readFile(t, prev); got != before {
		t.Errorf("-o %s was changed by the failure of another report: %q", prev, got)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--report json=%s was left behind: %v", fresh, err)
	}

	code, _, errOut = runMain(t, "", "lint", "--format", "json", "-o", prev, "--report", "sarif="+fresh, transcript)
	if code == exitUsage {
		t.Fatalf("all reports writable: exit %d, stderr %q", code, errOut)
	}
	for _, p := range []string{prev, fresh} {
		var v any
		if err := json.Unmarshal([]byte(readFile(t, p)), &v); err != nil {
			t.Errorf("%s is not a whole report: %v", p, err)
		}
	}
}
