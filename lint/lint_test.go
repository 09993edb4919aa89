package lint_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/lint"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transcript"
)

// item is what a test compares of an emitted item.
type item struct {
	Line     int
	Fixture  string
	Err      string
	Traffic  string
	Version  string
	Verdicts []string
}

func summarize(it *lint.Item) item {
	got := item{Line: it.Record.Line, Fixture: it.Record.Fixture}
	if it.Err != nil {
		got.Err = it.Err.Error()
	}
	if t := it.Record.Traffic; t != nil {
		got.Traffic = t.Kind
	}
	if it.Expect != nil {
		got.Version = it.Expect.Version
	}
	for _, v := range it.Verdicts {
		s := fmt.Sprintf("%s %s %s %s", v.Fixture, v.Check.ID, v.Status, v.Reason)
		for _, f := range v.Findings {
			s += " | " + f.Path + ": " + f.Message
		}
		got.Verdicts = append(got.Verdicts, s)
	}
	return got
}

// transcriptText is every recorded transcript in the repository, and
// mixed.jsonl (facts, traffic, malformed and blank lines among
// exchanges; 2025-03-26 batches, whose answers are judged one by one),
// twice over.
func transcriptText(t *testing.T) []byte {
	t.Helper()
	files, err := filepath.Glob("../testdata/recorded/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded transcripts: %v", err)
	}
	files = append(files, "testdata/mixed.jsonl")
	var all bytes.Buffer
	for range 2 {
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all.Write(raw)
			if !bytes.HasSuffix(raw, []byte("\n")) {
				all.WriteByte('\n')
			}
		}
	}
	return all.Bytes()
}

func options(workers int, budget int64) lint.Options {
	return lint.Options{Workers: workers, Budget: budget, Prefix: "f:", Checks: checks.All(),
		Shared: checks.Input{Schemas: checks.ProtocolSchemas(schema.NewRegistry()), ToolCache: &schema.ToolCache{}}}
}

// sequential is the reference: each record read and judged alone, with
// fresh memory, one after another, and the event ids of the streams
// before it (which the input, read twice, repeats).
func sequential(t *testing.T, text []byte, o lint.Options) []item {
	t.Helper()
	r := transcript.NewReader("t.jsonl", bytes.NewReader(text))
	streams := checks.NewStreams()
	var want []item
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return want
		}
		it := &lint.Item{Record: rec, Err: err}
		if err == nil && rec.Traffic == nil {
			it.Expect = expect.Build(&rec.Exchange, rec.Facts, rec.Override)
			in := o.Shared
			in.Fixture, in.Exchange, in.Expect = o.Prefix+rec.Fixture, &rec.Exchange, it.Expect
			in.Reused = streams.Reused(&rec.Exchange)
			it.Verdicts = checks.Judge(in, o.Checks)
		}
		want = append(want, summarize(it))
		var le *transcript.LineError
		if err != nil && !errors.As(err, &le) {
			return want
		}
	}
}

func run(t *testing.T, r io.Reader, o lint.Options) ([]item, error) {
	t.Helper()
	var got []item
	err := lint.Judge(transcript.NewReader("t.jsonl", r), o, func(it *lint.Item) error {
		got = append(got, summarize(it))
		return nil
	})
	return got, err
}

// TestJudgeInLineOrder: whatever the number of workers and the memory
// budget, the items come in line order with the verdicts each record
// gets judged alone.
func TestJudgeInLineOrder(t *testing.T) {
	text := transcriptText(t)
	want := sequential(t, text, options(1, 0))
	if len(want) < 200 {
		t.Fatalf("reference has %d items; the transcripts did not load", len(want))
	}
	var errs, traffic, facts int
	for _, w := range want {
		switch {
		case w.Err != "":
			errs++
		case w.Traffic != "":
			traffic++
		case w.Version == "2026-07-28" && strings.HasPrefix(w.Fixture, "after-facts"):
			facts++
		}
	}
	if errs == 0 || traffic == 0 || facts == 0 {
		t.Fatalf("the input lacks a kind of line: %d errors, %d traffic, %d judged with facts", errs, traffic, facts)
	}
	for _, tc := range []struct {
		workers int
		budget  int64
	}{{1, 0}, {2, 0}, {8, 0}, {8, 1}, {3, 4 << 10}} {
		t.Run(fmt.Sprintf("workers=%d/budget=%d", tc.workers, tc.budget), func(t *testing.T) {
			got, err := run(t, bytes.NewReader(text), options(tc.workers, tc.budget))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJudgeStopsOnEmitError: the writer's error ends the run at once and
// is returned; nothing after it is emitted.
func TestJudgeStopsOnEmitError(t *testing.T) {
	text := transcriptText(t)
	boom := errors.New("disk full")
	n := 0
	err := lint.Judge(transcript.NewReader("t.jsonl", bytes.NewReader(text)), options(4, 0), func(*lint.Item) error {
		n++
		if n == 5 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || n != 5 {
		t.Errorf("err %v after %d items; want %v after 5", err, n, boom)
	}
}

// TestJudgeLeavesNoWorkers: once Judge returns on the writer's error, only
// a reader blocked in its read is left, and it ends when the input
// closes.
func TestJudgeLeavesNoWorkers(t *testing.T) {
	text := transcriptText(t)
	before := runtime.NumGoroutine()
	pr, pw := io.Pipe()
	go func() {
		pw.Write(text) // blocks once the reader stops reading; the close below ends it
	}()
	boom := errors.New("disk full")
	n := 0
	err := lint.Judge(transcript.NewReader("t.jsonl", pr), options(8, 0), func(*lint.Item) error {
		if n++; n == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want %v", err, boom)
	}
	// The reader and the writing goroutine may be left, blocked on the pipe.
	// (A worker that has called Done may not have exited yet, nor may the
	// goroutines of the test before this one: a short, bounded wait.)
	for end := time.Now().Add(2 * time.Second); runtime.NumGoroutine()-before > 2 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	if left := runtime.NumGoroutine() - before; left > 2 {
		t.Errorf("%d goroutines left beside the blocked reader and writer; want the workers gone", left-2)
	}
	pw.CloseWithError(errors.New("input closed"))
	pr.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if left := runtime.NumGoroutine() - before; left > 0 {
		t.Errorf("%d goroutines left after the input closed", left)
	}
}

// TestJudgeEndsOnReadError: a read error other than a bad line is the
// last item; the lines before it are judged.
func TestJudgeEndsOnReadError(t *testing.T) {
	text := transcriptText(t)
	cut := bytes.IndexByte(text[1000:], '\n') + 1001 // some whole lines
	r := io.MultiReader(bytes.NewReader(text[:cut]), iotest.ErrReader(errors.New("device gone")))
	got, err := run(t, r, options(4, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := sequential(t, text[:cut], options(1, 0))
	if len(got) != len(want)+1 || got[len(got)-1].Err != "device gone" {
		t.Fatalf("got %d items ending %+v; want the %d lines, then the read error", len(got), got[len(got)-1], len(want))
	}
	if diff := cmp.Diff(want, got[:len(want)]); diff != "" {
		t.Errorf("items before the error (-want +got):\n%s", diff)
	}
}

// TestJudgeDoesNotHoldBackARecord: records are handed on in batches, but
// one read from a pipe is emitted before the next line arrives: lint
// reading a live recording reports as it goes.
func TestJudgeDoesNotHoldBackARecord(t *testing.T) {
	text := transcriptText(t)
	first := text[:bytes.IndexByte(text, '\n')+1]
	pr, pw := io.Pipe()
	emitted := make(chan int, 100)
	done := make(chan error, 1)
	go func() {
		done <- lint.Judge(transcript.NewReader("t.jsonl", pr), options(2, 0), func(it *lint.Item) error {
			emitted <- it.Record.Line
			return nil
		})
	}()
	for i := range 3 {
		if _, err := pw.Write(first); err != nil {
			t.Fatal(err)
		}
		select {
		case line := <-emitted:
			if line != i+1 {
				t.Fatalf("emitted line %d, want %d", line, i+1)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("line %d was not emitted before the next was written", i+1)
		}
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
