package baseline_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/baseline"
	"github.com/wymcp/wymcp-check/checks"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func isCheck(id string) bool { return checks.Lookup(id) != nil }

func section(a *txtar.Archive, name string) string {
	for _, f := range a.Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	return ""
}

// TestCases runs testdata/*.txtar: a baseline, the verdicts of a run
// ("fixture CHECK status" lines; a fixture may hold spaces), and what
// must come out: problems, known failures, stale and unjudged entries.
func TestCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			a, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			b, problems, err := baseline.Parse("base.txt", strings.NewReader(section(a, "baseline")), isCheck)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, "problem "+p.Error())
			}
			failOnWarn := section(a, "fail-on-warn")
			// Verdicts grouped by fixture, in order, as a run delivers them.
			var order []string
			byFixture := map[string][]checks.Verdict{}
			for _, line := range strings.Split(strings.TrimSpace(section(a, "run")), "\n") {
				f := strings.Fields(line)
				fixture := strings.Join(f[:len(f)-2], " ")
				c := checks.Lookup(f[len(f)-2])
				if c == nil {
					t.Fatalf("run: unknown check in %q", line)
				}
				if _, seen := byFixture[fixture]; !seen {
					order = append(order, fixture)
				}
				byFixture[fixture] = append(byFixture[fixture], checks.Verdict{Fixture: fixture, Check: c, Status: checks.Status(f[len(f)-1])})
			}
			for _, fixture := range order {
				gates := func(st checks.Status) bool {
					warnFails := strings.Contains(failOnWarn, fixture+"\n")
					return st == checks.StatusFail || st == checks.StatusError || warnFails && st == checks.StatusWarn
				}
				known := b.Match(fixture, byFixture[fixture], gates)
				for _, v := range byFixture[fixture] {
					if reason, ok := known[v.Check.ID]; ok {
						if want, _ := b.Reason(fixture, v.Check.ID); reason != want {
							t.Errorf("%s %s: reason %q, want %q", fixture, v.Check.ID, reason, want)
						}
						got = append(got, fmt.Sprintf("known %s %s", fixture, v.Check.ID))
					}
				}
			}
			for _, e := range b.Stale() {
				got = append(got, fmt.Sprintf("stale %s %s", e.Fixture, e.Check))
			}
			for _, e := range b.Unjudged() {
				got = append(got, fmt.Sprintf("unjudged %s %s", e.Fixture, e.Check))
			}
			want := strings.Split(strings.TrimSpace(section(a, "want")), "\n")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteRoundTrip: Write sorts, drops duplicates, quotes what needs
// it and keeps each reason on its line; what it writes reads back the
// same.
func TestWriteRoundTrip(t *testing.T) {
	in := []baseline.Entry{
		{Fixture: "tools/unknown", Check: "ERR3002", Reason: "data.detail kept\nfor old clients"},
		{Fixture: "errors/parse", Check: "RPC1004", Reason: "id 3 for an unreadable request"},
		{Fixture: "errors/parse", Check: "ERR1002", Reason: "-32600 for parse errors"},
		{Fixture: "errors/parse", Check: "ERR1002", Reason: "a duplicate: dropped"},
		{Fixture: "demo.jsonl:line:3", Check: "RPC1001", Reason: ""},
		{Fixture: "with space", Check: "RPC1001", Reason: "quoted"},
		{Fixture: "#hash", Check: "RPC1001", Reason: "quoted, or it would read as a comment"},
		// Trojan Source: a bidi override, a zero-width space, a
		// noncharacter and bad UTF-8 are written escaped, as the
		// reports write them, in the reason and in the fixture.
		{Fixture: "tools/\u202ecall", Check: "ERR2001", Reason: "access \u202e// check later\u202c granted \u200b\uffff \xff \x1b[2J"},
		// A finding quoting a long reply is cut, never inside an escape.
		{Fixture: "tools/long", Check: "ERR2002", Reason: strings.Repeat("x", baseline.MaxReason-5) + "\u202e tail"},
		{Fixture: "tools/longer", Check: "ERR2002", Reason: strings.Repeat("word ", 100)},
		// A warning's entry is marked; beside a fail's of the same
		// check the fail's is kept, which accepts both.
		{Fixture: "errors/null", Check: "ERR3001", Reason: "data is null", Warn: true},
		{Fixture: "errors/parse", Check: "RPC1004", Reason: "a warning's duplicate: dropped", Warn: true},
	}
	var buf bytes.Buffer
	if err := baseline.Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "written.golden")
	if *update {
		os.WriteFile(path, buf.Bytes(), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("written baseline (-want +got):\n%s", diff)
	}
	for i, line := range strings.Split(buf.String(), "\n") {
		if strings.ContainsFunc(line, func(r rune) bool { return r > unicode.MaxASCII && !strings.ContainsRune("…", r) }) {
			t.Errorf("line %d holds raw non-ASCII text: %q", i+1, line)
		}
		if n := utf8.RuneCountInString(line); n > 40+baseline.MaxReason {
			t.Errorf("line %d is %d characters long, over the reason's bound", i+1, n)
		}
	}
	b, problems, err := baseline.Parse("written", bytes.NewReader(buf.Bytes()), isCheck)
	if err != nil || len(problems) > 0 {
		t.Fatalf("the written baseline does not read back: %v %v", err, problems)
	}
	if b.Len() != 10 {
		t.Errorf("read back %d entries, want 10", b.Len())
	}
	// Every entry written matches its fixture and check read back, and
	// writing what was read changes nothing: a rewrite does not drift.
	for _, e := range in {
		if _, ok := b.Reason(e.Fixture, e.Check); !ok {
			t.Errorf("%q %s: not read back", e.Fixture, e.Check)
		}
	}
	again := b.Entries()
	if i := slices.IndexFunc(again, func(e baseline.Entry) bool { return e.Fixture == "errors/null" }); i < 0 || !again[i].Warn {
		t.Errorf("the warning's entry does not read back as one: %+v", again)
	}
	var buf2 bytes.Buffer
	if err := baseline.Write(&buf2, again); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(buf.String(), buf2.String()); diff != "" {
		t.Errorf("written again (-first +second):\n%s", diff)
	}
	for _, e := range in[:3] {
		if r, ok := b.Reason(e.Fixture, e.Check); !ok || strings.Contains(r, "\n") {
			t.Errorf("%s %s: reason %q, %v", e.Fixture, e.Check, r, ok)
		}
	}
	if _, ok := b.Reason("with space", "RPC1001"); !ok {
		t.Error("a quoted fixture does not read back")
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, _, err := baseline.Load(filepath.Join(t.TempDir(), "none.txt"), isCheck)
	if err == nil || !strings.Contains(err.Error(), "reading baseline") {
		t.Errorf("err = %v", err)
	}
}

// TestLongLine: a line over MaxLine (a stack trace pasted as a reason)
// is a bad line of its own, with file, line and cause; the lines around
// it still load. Before, the whole baseline was refused with
// "bufio.Scanner: token too long" and no line. The twins: lines of
// exactly MaxLine bytes, with either line end, load.
func TestLongLine(t *testing.T) {
	exact := func(fixture string) string {
		head := fixture + " ERR3002 "
		return head + strings.Repeat("x", baseline.MaxLine-len(head))
	}
	tests := []struct {
		name, text string
		want       []string
	}{{
		name: "too long",
		text: "a ERR3002 ok\nb ERR3002 " + strings.Repeat("x", baseline.MaxLine) + "\nc ERR3002 ok\n",
		want: []string{"problem base.txt:2: line too long: 1048587 bytes, at most 1048576 (a reason is one short line)", "entry a", "entry c"},
	}, {
		name: "too long, the last line, no newline",
		text: "a ERR3002 ok\nb ERR3002 " + strings.Repeat("x", baseline.MaxLine),
		want: []string{"problem base.txt:2: line too long: 1048586 bytes, at most 1048576 (a reason is one short line)", "entry a"},
	}, {
		name: "one byte too long, CRLF",
		text: exact("b") + "x\r\na ERR3002 ok\r\n",
		want: []string{"problem base.txt:1: line too long: 1048579 bytes, at most 1048576 (a reason is one short line)", "entry a"},
	}, {
		name: "at the bound",
		text: exact("b") + "\n" + exact("c") + "\r\n" + exact("d"),
		want: []string{"entry b", "entry c", "entry d"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, problems, err := baseline.Parse("base.txt", strings.NewReader(tt.text), isCheck)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, "problem "+p.Error())
			}
			for _, f := range []string{"a", "b", "c", "d"} {
				if _, ok := b.Reason(f, "ERR3002"); ok {
					got = append(got, "entry "+f)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// endless is a line of n bytes of x, then "\n" and a good entry, made as
// it is read.
type endless struct{ n, at int }

func (e *endless) Read(p []byte) (int, error) {
	tail := "\nz ERR3002 after the long line\n"
	if e.at >= e.n+len(tail) {
		return 0, io.EOF
	}
	i := 0
	for ; i < len(p) && e.at < e.n; i, e.at = i+1, e.at+1 {
		p[i] = 'x'
	}
	for ; i < len(p) && e.at < e.n+len(tail); i, e.at = i+1, e.at+1 {
		p[i] = tail[e.at-e.n]
	}
	return i, nil
}

// TestLongLineBoundedMemory: a line is never held past MaxLine, however
// long it runs: reading one of 32 MiB allocates a few MiB, not 32.
func TestLongLineBoundedMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, problems, err := baseline.Parse("base.txt", &endless{n: 32 << 20}, isCheck)
	runtime.ReadMemStats(&after)
	if err != nil || len(problems) != 1 || b.Len() != 1 {
		t.Fatalf("err %v, problems %v, %d entries; want one problem and the entry after it", err, problems, b.Len())
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("reading a 32 MiB line allocated %d bytes; want a bound near MaxLine", n)
	}
}

// never is a reader that never ends and never sends "\n" (/dev/zero, a
// pipe left open): it counts what was read of it.
type never struct{ read int }

func (n *never) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	n.read += len(p)
	return len(p), nil
}

// TestMaxFile: what is read of a baseline is bounded, so an input with
// no end ends: past MaxFile it is read no further, and the line it
// stopped in is a bad line with file, line and cause; the whole lines
// before it still load. Before, a line was drained to its end, and a
// line with none was read for ever. The twin: a file of exactly MaxFile
// bytes loads whole, its last entry included.
func TestMaxFile(t *testing.T) {
	n := &never{}
	b, problems, err := baseline.Parse("base.txt", io.MultiReader(strings.NewReader("a ERR3002 ok\n"), n), isCheck)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"base.txt:2: the baseline runs past 67108864 bytes (a baseline is short text): read no further"}
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("endless input (-want +got):\n%s", diff)
	}
	if _, ok := b.Reason("a", "ERR3002"); !ok || b.Len() != 1 {
		t.Errorf("the entry before the endless line: %v, %d entries", ok, b.Len())
	}
	if n.read > baseline.MaxFile+64<<10 {
		t.Errorf("read %d bytes of an endless input; want at most MaxFile and a buffer", n.read)
	}

	// A file of exactly MaxFile bytes: comments, then one entry that
	// ends at the bound; and the same file one byte longer.
	last := "z ERR3002 the last line\n"
	pad := baseline.MaxFile - len(last)
	comment := "#" + strings.Repeat("c", 1000) + "\n"
	var sb strings.Builder
	for sb.Len()+len(comment) <= pad {
		sb.WriteString(comment)
	}
	sb.WriteString("#" + strings.Repeat("c", pad-sb.Len()-2) + "\n")
	sb.WriteString(last)
	exact := sb.String()
	if len(exact) != baseline.MaxFile {
		t.Fatalf("made %d bytes, want %d", len(exact), baseline.MaxFile)
	}
	for _, tt := range []struct {
		name, text string
		problems   int
		entry      bool
	}{
		{"at the bound", exact, 0, true},
		{"one byte over", exact + "y", 1, true},
		{"over within the last line", "\n" + exact, 1, false},
	} {
		b, problems, err := baseline.Parse("base.txt", strings.NewReader(tt.text), isCheck)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := b.Reason("z", "ERR3002"); len(problems) != tt.problems || ok != tt.entry {
			t.Errorf("%s: problems %v, last entry loaded %v; want %d problem(s), %v", tt.name, problems, ok, tt.problems, tt.entry)
		}
	}
}

// TestRename: an entry renamed (a baseline written before a change of
// how fixtures are named) matches and keeps its reason under its new
// name, and no longer under the old. The twins: an entry the rename
// leaves is unchanged, and one whose new name is already listed stays
// as it was (the entry listed under the new name applies).
func TestRename(t *testing.T) {
	text := "old/a.jsonl:x ERR3002 old reason\nb.jsonl:y ERR3002 new form\nold/c.jsonl:z ERR3002 shadowed\nc.jsonl:z ERR3002 listed new\n"
	b, problems, err := baseline.Parse("base.txt", strings.NewReader(text), isCheck)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	n := b.Rename(func(f string) (string, bool) {
		if rest, ok := strings.CutPrefix(f, "old/"); ok {
			return rest, true
		}
		return "", false
	})
	if n != 1 {
		t.Errorf("renamed %d, want 1", n)
	}
	for _, tt := range []struct {
		fixture, reason string
		ok              bool
	}{
		{"a.jsonl:x", "old reason", true},
		{"old/a.jsonl:x", "", false},
		{"b.jsonl:y", "new form", true},
		{"c.jsonl:z", "listed new", true},
		{"old/c.jsonl:z", "shadowed", true},
	} {
		if r, ok := b.Reason(tt.fixture, "ERR3002"); r != tt.reason || ok != tt.ok {
			t.Errorf("%s: %q %v, want %q %v", tt.fixture, r, ok, tt.reason, tt.ok)
		}
	}
}

// TestManyBadLines: a baseline of many bad lines names the first
// MaxProblems and counts them all; the good entries among them still
// load. Each bad line once cost an error held to the end: a 64 MiB file
// of one-character lines would have held some 33 million (review rev29).
func TestManyBadLines(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("a ERR3002 kept\n")
	for range 3 * baseline.MaxProblems {
		sb.WriteString("x\n")
	}
	sb.WriteString("z ERR3002 kept too\n")
	b, problems, err := baseline.Parse("many.txt", strings.NewReader(sb.String()), isCheck)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != baseline.MaxProblems || b.BadLines != 3*baseline.MaxProblems {
		t.Errorf("%d problems named, %d counted; want %d and %d", len(problems), b.BadLines, baseline.MaxProblems, 3*baseline.MaxProblems)
	}
	if b.Len() != 2 {
		t.Errorf("%d entries loaded, want the 2 good ones", b.Len())
	}
}
