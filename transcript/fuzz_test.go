package transcript_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/wymcp/wymcp-check/transcript"
)

// FuzzReader: any transcript is read to its end without a panic, each
// line giving a record or a line error, and never more records than
// lines.
func FuzzReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r := transcript.NewReader("fuzz.jsonl", bytes.NewReader(data))
		lines := bytes.Count(data, []byte("\n")) + 1
		for n := 0; ; n++ {
			if n > lines {
				t.Fatalf("more than %d records from %d lines", n, lines)
			}
			_, err := r.Next()
			if err == io.EOF {
				return
			}
			var le *transcript.LineError
			if err != nil && !errors.As(err, &le) {
				t.Fatalf("not a line error: %v", err)
			}
		}
	})
}
