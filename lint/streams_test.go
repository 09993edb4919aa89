package lint_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/lint"
	"github.com/wymcp/wymcp-check/transcript"
	"golang.org/x/tools/txtar"
)

// TestStreamsAcrossExchanges: an SSE event id is unique across all the
// streams of a session (T-HTTP-16), which no one exchange shows. Each
// transcript of testdata/streams.txtar is judged in line order, with
// HTTP1005's verdict per line compared with its .want: a reused id fails
// the later stream of one session, warns without a session, and is no
// finding across two sessions, on a resumed stream, or in 2026-07-28.
func TestStreamsAcrossExchanges(t *testing.T) { verdictsByLine(t, "streams.txtar", "HTTP1005") }

// TestPagesAcrossExchanges: every page of one 2026-07-28 list keeps the
// first page's cacheScope (T-CACHE-3), which lint learns from the cursor
// each page hands on, as a relay does. A later page of another scope
// passed in lint: only check's own pages were held to it. A page handing
// out a cursor an earlier page of its listing did warns (T-PAGE-3).
func TestPagesAcrossExchanges(t *testing.T) { verdictsByLine(t, "pages.txtar", "PRO1008") }

// TestNamesAcrossPages: a tool name is unique across the pages of one
// listing (T-TOOL-5), which lint learns as it learns the pages' scope. A
// name listed again on a later page passed: each page was read alone.
func TestNamesAcrossPages(t *testing.T) { verdictsByLine(t, "names.txtar", "PRO1010") }

// TestRelistInPages: a whole tools list known, and a later listing in
// pages that shows a tool it lacked: the tool exists and its schema
// judges calls of it (PRO1004 fails a call its schema forbids), as when
// only the pages were seen. The later pages were dropped while an older
// whole list was kept as whole.
func TestRelistInPages(t *testing.T) { verdictsByLine(t, "relist.txtar", "PRO1004") }

// TestPromptsRelistInPages: the same for prompts: a prompt the new pages
// show is not one the server lacks (PRO1001 warned it unknown).
func TestPromptsRelistInPages(t *testing.T) { verdictsByLine(t, "relist-prompts.txtar", "PRO1001") }

// verdictsByLine judges each transcript of the txtar file in line order
// and compares the check's verdict per line with the file's .want.
func verdictsByLine(t *testing.T, file, check string) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range ar.Files {
		if name, ok := strings.CutSuffix(f.Name, ".want"); ok {
			want[name] = string(f.Data)
		}
	}
	for _, f := range ar.Files {
		name, ok := strings.CutSuffix(f.Name, ".jsonl")
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var got strings.Builder
			err := lint.Judge(transcript.NewReader(f.Name, bytes.NewReader(f.Data)), options(2, 0), func(it *lint.Item) error {
				if it.Err != nil {
					return it.Err
				}
				for _, v := range it.Verdicts {
					if v.Check.ID == check {
						fmt.Fprintf(&got, "%d %s\n", it.Record.Line, v.Status)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[name], got.String()); diff != "" {
				t.Errorf("%s by line (-want +got):\n%s", check, diff)
			}
		})
	}
}

// TestServerIDsAcrossStreams: a server's request id is unique across the
// SSE streams of one HTTP session (T-RPC-4), which no one exchange shows
// (review rev88: a server that sent ping "p1" on every stream passed;
// rev92: the same bytes under a new event id passed too). The same event
// (its SSE id and data) given again, and the same id in another session,
// are no finding.
func TestServerIDsAcrossStreams(t *testing.T) { verdictsByLine(t, "server-ids.txtar", "PRO1003") }
