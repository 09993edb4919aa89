//go:build unix

package e2e

import (
	"path/filepath"
	"testing"
	"time"
)

// TestStdioStderrInReport: what a stdio server logs to stderr reaches the
// report as a note (bounded), never as a verdict (T-STDIO-3).
func TestStdioStderrInReport(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	r := runChecker(t, time.Minute, nil, "check", "--format", "json", "-o", out, "--run", "rpc/garbage",
		"--", "sh", "-c", `echo "wymcp-e2e starting up" >&2; exec "$0" refserver --stdio`, checkerBin)
	r.checkExit(t, 0)
	rep := readReport(t, out)
	if !rep.hasNote(`server stderr (last 2048 bytes at most): "wymcp-e2e starting up"`) {
		t.Errorf("the server's stderr is not in the report's notes: %s", rep.digest())
	}
}
