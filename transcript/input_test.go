package transcript_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/transcript"
	"golang.org/x/tools/txtar"
)

// TestInputProblems reads each testdata/input/*.txtar: its in.jsonl is
// read to its end, and the line errors (errors, one a line), the lines
// of the records read (records) and why the recorded run was aborted
// (aborted, when it was) are as written. Each archive's comment says
// what it holds.
func TestInputProblems(t *testing.T) {
	files, err := filepath.Glob("testdata/input/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test data: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ar := txtar.Parse(raw)
			sec := map[string]string{}
			for _, f := range ar.Files {
				sec[f.Name] = string(f.Data)
			}
			r := newReader("in.jsonl", sec["in.jsonl"])
			var errs, lines []string
			for {
				rec, err := r.Next()
				if err != nil {
					if !isLineError(err) {
						break // io.EOF, or a test failure below
					}
					errs = append(errs, err.Error())
					continue
				}
				lines = append(lines, strconv.Itoa(rec.Line))
			}
			if diff := cmp.Diff(split(sec["errors"]), errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(strings.Fields(sec["records"]), lines); diff != "" {
				t.Errorf("records' lines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(strings.TrimSpace(sec["aborted"]), r.Aborted()); diff != "" {
				t.Errorf("aborted (-want +got):\n%s", diff)
			}
		})
	}
}

// split is a section's lines, none for an empty one.
func split(s string) []string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func newReader(name, in string) *transcript.Reader {
	// Raw bytes as written: a section may hold any byte (see utf8.txtar).
	return transcript.NewReader(name, bytes.NewReader([]byte(in)))
}

func isLineError(err error) bool {
	var le *transcript.LineError
	return errors.As(err, &le)
}
