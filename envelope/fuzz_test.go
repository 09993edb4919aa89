package envelope_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wymcp/wymcp-check/envelope"
)

// Fuzz targets for every reader of server bytes. Seeds live in
// testdata/fuzz; .ci/run runs each target for a short, fixed time.

// FuzzParse: any bytes are read as a message without a panic, every
// reading of one is itself a message, and splitting a reply finds at
// most one response.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := envelope.Parse(raw)
		for _, rd := range m.Readings() {
			if len(rd.Duplicates) > 0 {
				t.Fatalf("a reading still repeats keys: %q", rd.Duplicates)
			}
		}
		envelope.IsResponse(raw)
		r := envelope.ReadReply(&envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: raw}, envelope.ReadOptions{})
		if r.Responses > len(r.Messages) {
			t.Fatalf("%d responses among %d messages", r.Responses, len(r.Messages))
		}
	})
}

// FuzzSplitSSE: any body splits into events without a panic, within its
// line bound, and reading it as a reply agrees with splitting it.
func FuzzSplitSSE(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, _, err := envelope.SplitSSE(body, 4096)
		total := 0
		for _, m := range msgs {
			total += len(m)
		}
		if total > len(body) {
			t.Fatalf("%d bytes of events from a %d-byte body", total, len(body))
		}
		r := envelope.ReadReply(&envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body}, envelope.ReadOptions{})
		if err == nil && r.SplitErr == nil && len(r.Messages) != len(msgs) {
			t.Fatalf("ReadReply found %d messages, SplitSSE %d", len(r.Messages), len(msgs))
		}
		// A stream read as it comes and the same bytes read whole give
		// the same events and the same end, at any line bound.
		maxLine := 4000 + len(body)%200
		stream, serr := sseEvents(envelope.NewSSEReader(bytes.NewReader(body), maxLine))
		whole, werr := sseEvents(envelope.NewSSEBodyReader(body, maxLine))
		if diff := cmp.Diff(stream, whole, cmpopts.EquateEmpty()); diff != "" || (serr == nil) != (werr == nil) || serr != nil && !errors.Is(serr, werr) {
			t.Fatalf("streamed vs whole (-stream +whole):\n%s\nends: %v vs %v", diff, serr, werr)
		}
		// So does a stream that arrives a byte at a time, where every
		// line end is the last byte read (a CR whose LF is still to come).
		trickle, terr := sseEvents(envelope.NewSSEReader(iotest.OneByteReader(bytes.NewReader(body)), maxLine))
		if diff := cmp.Diff(trickle, whole, cmpopts.EquateEmpty()); diff != "" || (terr == nil) != (werr == nil) || terr != nil && !errors.Is(terr, werr) {
			t.Fatalf("a byte at a time vs whole (-trickle +whole):\n%s\nends: %v vs %v", diff, terr, werr)
		}
	})
}

func sseEvents(r *envelope.SSEReader) ([]envelope.Event, error) {
	var out []envelope.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// FuzzParseContract: any contract file is accepted or refused with an
// error, never a panic; an accepted one has a positive quote bound.
func FuzzParseContract(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := envelope.ParseContract(raw)
		if err == nil && c == nil {
			t.Fatal("no contract and no error")
		}
	})
}

// FuzzRejoin: any stdout, split into lines and rejoined, loses and
// reorders nothing (the messages joined by "\n" are the lines joined by
// "\n"); every message that spans lines is one valid JSON value; and a
// bounded Rejoiner fed line by line agrees with Rejoin when the bound is
// not reached.
func FuzzRejoin(f *testing.F) {
	f.Fuzz(func(t *testing.T, out []byte) {
		lines := bytes.Split(out, []byte("\n"))
		msgs := envelope.Rejoin(lines)
		if got := bytes.Join(msgs, []byte("\n")); !bytes.Equal(got, out) {
			t.Fatalf("rejoined %q, want %q", got, out)
		}
		for _, m := range msgs {
			if bytes.IndexByte(m, '\n') >= 0 && !json.Valid(m) {
				t.Fatalf("a message over lines is not JSON: %q", m)
			}
		}
		j := envelope.NewRejoiner(len(out) + 1)
		var fed [][]byte
		for _, l := range lines {
			fed = append(fed, j.Add(l)...)
		}
		fed = append(fed, j.Flush()...)
		if diff := cmp.Diff(msgs, fed, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("bounded vs whole (-whole +bounded):\n%s", diff)
		}
	})
}
