package checks_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
	"golang.org/x/tools/txtar"
)

// TestAnsweredSkipsSay: in an exchange whose request was answered, and
// judged, earlier ("answered"), the checks that judge a reply skip
// saying so, not "no reply arrived", and RPC1006 reads no silence.
func TestAnsweredSkipsSay(t *testing.T) {
	file := filepath.Join("testdata", "stdio_answered_unlisted_skips.txtar")
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tc := parseCase(t, file, ar)
	ex := tc.ex
	const why = "the request's response came in an earlier exchange, and was judged there"
	got := map[string]string{}
	for _, v := range checks.Judge(input(tc, &ex), checks.All()) {
		switch v.Check.ID {
		case "RPC1004", "RPC1006", "RPC1008":
			got[v.Check.ID] = string(v.Status) + ": " + v.Reason
		}
	}
	want := map[string]string{"RPC1004": "skip: " + why, "RPC1006": "skip: " + why, "RPC1008": "skip: " + why}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("verdicts (-want +got):\n%s", d)
	}
}

// TestAnsweredFailsOnce: a later response in an exchange whose request
// was answered earlier fails RPC1006 once, for being a second response,
// and the request is not also read as unanswered ("no response
// arrived"): its one response was counted where it came.
func TestAnsweredFailsOnce(t *testing.T) {
	for file, want := range map[string]string{
		"stdio_answered_again_fails.txtar":           "a second response to the request with id 5 came, after an earlier exchange had taken its response: a request gets one response",
		"stdio_answered_copy_fails.txtar":            "the response to the request with id 5 came again, byte for byte, after an earlier exchange had taken it: a request gets one response",
		"stdio_answered_again_string_id_fails.txtar": `a second response to the request with id "5" came, after an earlier exchange had taken its response: a request gets one response`,
	} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("testdata", file)
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tc := parseCase(t, path, ar)
			ex := tc.ex
			var got []string
			for _, v := range checks.Judge(input(tc, &ex), checks.All()) {
				if v.Check.ID == "RPC1006" {
					for _, f := range v.Findings {
						got = append(got, f.Path+": "+f.Message)
					}
				}
			}
			if d := cmp.Diff([]string{"reply: " + want}, got); d != "" {
				t.Errorf("RPC1006's findings (-want +got):\n%s", d)
			}
		})
	}
}
