package runner

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/fixtures"
)

// TestPickProbe pins which tool a fixture probes, and that a tool not
// marked readOnlyHint never gets arguments its own schema accepts.
func TestPickProbe(t *testing.T) {
	raw, err := os.ReadFile("testdata/probe.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name    string            `json:"name"`
		Fixture string            `json:"fixture"`
		Version string            `json:"version"`
		Tools   []json.RawMessage `json:"tools"`
		Tool    string            `json:"tool"` // the tool probed; "" when none
		Why     string            `json:"why"`  // part of the reason none is
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	all, err := fixtures.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*fixtures.Fixture{}
	for _, f := range all {
		byID[f.ID] = f
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			f := byID[tc.Fixture]
			if f == nil {
				t.Fatalf("no fixture %q", tc.Fixture)
			}
			var tools []*expect.Tool
			for _, r := range tc.Tools {
				tl, ok := expect.NewTool(r)
				if !ok {
					t.Fatalf("tool %s has no name", r)
				}
				tools = expect.AddTool(tools, tl) // as the run lists them
			}
			got, vs, why := pickProbe(tools, f, fixtures.Context{Version: tc.Version})
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tc.Tool {
				t.Errorf("probed %q (why: %s), want %q", name, why, tc.Tool)
			}
			if got != nil && len(vs) == 0 {
				t.Errorf("probed %q with no exchange", name)
			}
			for _, v := range vs {
				// A tool not marked read-only gets only arguments its own
				// schema rejects.
				body, err := fixtures.Expand(f.Body, v.ctx)
				if err != nil {
					t.Fatal(err)
				}
				args := gjson.GetBytes(body, "params.arguments")
				if !got.ReadOnly && !got.SurelyRefused([]byte(args.Raw), tc.Version) {
					t.Errorf("unmarked tool %q is sent arguments its schema accepts: %s", name, args.Raw)
				}
			}
			if tc.Tool == "" && !strings.Contains(why, tc.Why) {
				t.Errorf("why = %q, want it to contain %q", why, tc.Why)
			}
		})
	}
}
