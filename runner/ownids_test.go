package runner_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/transport"
)

// runQuirk runs the fixtures named by keep against the ignoring stdio
// server with quirk, multiplexed, and returns its rows.
func runQuirk(t *testing.T, quirk string, keep ...string) []string {
	t.Helper()
	t.Setenv(ignoringEnv, "1")
	t.Setenv(quirkEnv, quirk)
	target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	fx := embeddedWithout(t, func(f *fixtures.Fixture) bool { return !slices.Contains(keep, f.ID) })
	c := &rows{}
	if _, err := runner.Run(context.Background(), target, runner.Options{
		Fixtures: fx, Contract: envelope.Strict(), Deadline: time.Minute, Parallel: 8, Protocol: envelope.V20251125,
	}, c); err != nil {
		t.Fatal(err)
	}
	return c.lines
}

// TestOwnIDsAreIntegers: the checker's markers and liveness probes carry
// integer ids, which every server reads. A server that dies on any
// string id died on the first marker before, and every fixture it
// followed failed PRO1005 for a death the checker caused.
func TestOwnIDsAreIntegers(t *testing.T) {
	lines := runQuirk(t, "die-on-string-id", "tools/list", "prompts/list", "resources/list", "lifecycle/ping")
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 2 && (f[1] == "PRO1005" && f[2] == "fail" || f[2] == "error") {
			t.Errorf("a fixture blamed for the checker's own message: %s\n%s", l, strings.Join(lines, "\n"))
		}
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "lifecycle/ping RPC1006 pass") }) {
		t.Errorf("lifecycle/ping was not judged:\n%s", strings.Join(lines, "\n"))
	}
}

// TestHungServerSendsTheOthersAgain: a stdio server that stops answering
// anything after one message (alive, reading) leaves every request open
// with it unanswered, and the liveness probe too: here prompts/list,
// which it ignores, and tools/list, which hangs it. Which one hung it is
// not known, so each goes again, alone, to a fresh process: the one that
// hangs it again is not judged (error), and the other is (its silence
// fails RPC1006). Before, both were errors.
func TestHungServerSendsTheOthersAgain(t *testing.T) {
	t.Setenv(ignoreMethodEnv, "prompts/list")
	lines := runQuirk(t, "hang-on:tools/list", "prompts/list", "tools/list", "lifecycle/ping")
	var errs []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "error" {
			errs = append(errs, f[0])
		}
	}
	if !slices.Equal(errs, []string{"tools/list"}) {
		t.Errorf("fixtures not judged: %v, want only tools/list\n%s", errs, strings.Join(lines, "\n"))
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "prompts/list RPC1006 fail") }) {
		t.Errorf("prompts/list's silence was not judged:\n%s", strings.Join(lines, "\n"))
	}
}

// TestFloatIDsAreTheSameIDs: a server that writes every integer id back
// as N.0 (the same value, which the checker accepts for a fixture's own
// request) answers the markers too. Their replies, keyed by spelling,
// answered no marker: each exchange waited out --timeout, and a marker's
// reply was taken for the reply of a request the server left unanswered
// (id/array, which this server ignores as no message, passed RPC1006),
// or landed on the next exchange as a second response, until the
// deadline left fixtures unjudged.
func TestFloatIDsAreTheSameIDs(t *testing.T) {
	lines := runQuirk(t, "float-ids", "id/array", "id/object", "tools/list", "lifecycle/ping", "method/unknown")
	want := map[string]string{
		"id/array RPC1006":       "fail", // ignored: silence, the server alive
		"id/object RPC1006":      "fail",
		"tools/list RPC1006":     "pass",
		"lifecycle/ping RPC1006": "pass",
		"method/unknown RPC1006": "pass",
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		if f[2] == "error" || strings.Contains(l, "responses arrived") {
			t.Errorf("a reply written with the id's value in another spelling was not its request's: %s", l)
		}
		if w, ok := want[f[0]+" "+f[1]]; ok {
			delete(want, f[0]+" "+f[1])
			if f[2] != w || w == "fail" && !strings.Contains(l, "no response arrived") {
				t.Errorf("%s %s: got %s, want %s (silence for a fail)", f[0], f[1], l, w)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("not judged: %v\n%s", want, strings.Join(lines, "\n"))
	}
}
