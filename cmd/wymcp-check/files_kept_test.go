package main

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp-check/proxy"
)

// earlier is what a file held before the run: an earlier run's log,
// recording or report, or a contract, which a failure must leave whole.
const earlier = `{"earlier":"run","kept":"every byte of it, longer than what a run that failed at once would write"}` + "\n"

// keptFiles writes earlier to each name in a new directory and returns
// their paths, and a path a report cannot be opened at (a directory).
func keptFiles(t *testing.T, names ...string) (paths []string, unopenable string) {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte(earlier), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	unopenable = filepath.Join(dir, "a-directory")
	if err := os.Mkdir(unopenable, 0o700); err != nil {
		t.Fatal(err)
	}
	return paths, unopenable
}

func assertKept(t *testing.T, flag string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if got := readFile(t, p); got != earlier {
			t.Errorf("%s %s was changed by a failure elsewhere: %.120q", flag, p, got)
		}
	}
}

// TestCheckRecordKept: check opens --record with the reports, and
// empties none before all are open. A report that cannot be opened
// leaves an earlier recording whole, and a recording that cannot be
// opened the reports (before, -o was emptied and left holding a
// report's first line, and a --report made was left behind). The twin:
// with every path good, both are written over whole.
func TestCheckRecordKept(t *testing.T) {
	paths, dir := keptFiles(t, "rec.jsonl", "r.json")
	rec, rep := paths[0], paths[1]
	fresh := filepath.Join(filepath.Dir(rec), "fresh.xml")
	run := func(args ...string) (exitCode, string) {
		t.Helper()
		code, _, errOut := runMain(t, "", append([]string{"check", "--demo", "--run", "rpc/batch*"}, args...)...)
		return code, errOut
	}
	code, errOut := run("--record", rec, "--format", "json", "-o", dir)
	if code != exitUsage || !strings.Contains(errOut, "report json: open "+dir) {
		t.Errorf("unopenable -o: exit %d, stderr %q; want %d naming %s", code, errOut, exitUsage, dir)
	}
	assertKept(t, "--record", rec)

	badRec := filepath.Join(dir, "no-such-dir", "rec.jsonl")
	code, errOut = run("--record", badRec, "--format", "json", "-o", rep, "--report", "junit="+fresh)
	if code != exitUsage || !strings.Contains(errOut, "--record: open "+badRec) {
		t.Errorf("unopenable --record: exit %d, stderr %q; want %d naming %s", code, errOut, exitUsage, badRec)
	}
	assertKept(t, "-o", rep)
	if _, err := os.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--report junit=%s was left behind: %v", fresh, err)
	}

	if code, errOut = run("--record", rec, "--format", "json", "-o", rep); code != exitOK {
		t.Fatalf("all paths good: exit %d, stderr %q", code, errOut)
	}
	if got := readFile(t, rec); !strings.HasPrefix(got, `{"run":`) || strings.Contains(got, "earlier") {
		t.Errorf("--record not written over whole: %.200q", got)
	}
	if got := readFile(t, rep); !strings.HasPrefix(got, `{"version":`) || strings.Contains(got, "earlier") {
		t.Errorf("-o not written over whole: %.200q", got)
	}
}

// TestRelayFilesKept: proxy's and wrap's --log and --record are opened
// with --report and emptied only once every file is open and every flag
// checked. Before, they were emptied first: a --report that could not be
// opened, a --contract that could not be read, a --listen address taken
// left an earlier log and recording at 0 bytes (or a recording's first
// line). A file written twice, or written over while read, is refused
// without --report too: --log c.json --contract c.json emptied the
// contract before it was read, and --log f --record f interleaved both.
func TestRelayFilesKept(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		name string
		args func(log, rec, dir string) []string
		want func(log, rec, dir string) string
	}{
		{"proxy, unopenable --report", func(log, rec, dir string) []string {
			return []string{"proxy", "http://127.0.0.1:1/mcp", "--log", log, "--record", rec, "--report", "json=" + dir}
		}, func(_, _, dir string) string { return "report json: open " + dir }},
		{"proxy, --listen taken", func(log, rec, dir string) []string {
			return []string{"proxy", "http://127.0.0.1:1/mcp", "--log", log, "--record", rec, "--report", filepath.Join(dir, "r.json"), "--listen", taken.Addr().String()}
		}, func(_, _, _ string) string { return "--listen: listen tcp " + taken.Addr().String() }},
		{"wrap, unopenable --report", func(log, rec, dir string) []string {
			return []string{"wrap", "--log", log, "--record", rec, "--report", "junit=" + dir, "--", "cat"}
		}, func(_, _, dir string) string { return "report junit: open " + dir }},
		{"wrap, unopenable --report FILE", func(log, rec, dir string) []string {
			return []string{"wrap", "--log", log, "--record", rec, "--report", dir, "--", "cat"}
		}, func(_, _, dir string) string { return "report json: open " + dir }},
		{"wrap, missing --contract", func(log, rec, dir string) []string {
			return []string{"wrap", "--log", log, "--record", rec, "--contract", filepath.Join(dir, "none.json"), "--", "cat"}
		}, func(_, _, dir string) string { return "--contract: reading contract" }},
		{"wrap, two formats", func(log, rec, dir string) []string {
			return []string{"wrap", "--log", log, "--record", rec, "--format", "json", "--report", "html=" + filepath.Join(dir, "r.html"), "--", "cat"}
		}, func(_, _, _ string) string { return "name two formats for one report" }},
		{"wrap, --log is the --contract", func(log, rec, dir string) []string {
			return []string{"wrap", "--log", log, "--contract", log, "--", "cat"}
		}, func(log, _, _ string) string { return "--log " + log + " is also read (--contract " + log + ")" }},
		{"proxy, --record is the --schema", func(log, rec, dir string) []string {
			return []string{"proxy", "http://127.0.0.1:1/mcp", "--record", rec, "--schema", rec}
		}, func(_, rec, _ string) string { return "--record " + rec + " is also read (--schema " + rec + ")" }},
		{"wrap, --log is the --record", func(log, rec, dir string) []string {
			return []string{"wrap", "--log", log, "--record", log, "--", "cat"}
		}, func(log, _, _ string) string {
			return log + " is written twice (--record " + log + ", --log " + log + ")"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths, dir := keptFiles(t, "wrap.log", "rec.jsonl")
			log, rec := paths[0], paths[1]
			code, _, errOut := runMain(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n", tt.args(log, rec, dir)...)
			if want := tt.want(log, rec, dir); code != exitUsage || !strings.Contains(errOut, want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, exitUsage, want)
			}
			assertKept(t, "--log/--record", log, rec)
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("files left behind in %s: %v", dir, entries)
			}
		})
	}
}

// TestRelayFilesWritten is TestRelayFilesKept's twin: with every path
// good, wrap and proxy write their log, recording and report over the
// earlier ones, whole.
func TestRelayFilesWritten(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	writtenOver := func(t *testing.T, flag, path, starts string) {
		t.Helper()
		if got := readFile(t, path); !strings.HasPrefix(got, starts) || strings.Contains(got, "earlier") {
			t.Errorf("%s %s not written over whole: %.200q", flag, path, got)
		}
	}
	t.Run("wrap", func(t *testing.T) {
		paths, _ := keptFiles(t, "wrap.log", "rec.jsonl", "r.json")
		server := `read line; printf '{"jsonrpc":"2.0","id":1,"result":{}}\n'; cat >/dev/null`
		code, _, errOut := runMain(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n", "wrap", "--log", paths[0], "--record", paths[1], "--report", paths[2], "--", "/bin/sh", "-c", server)
		if code != exitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		writtenOver(t, "--log", paths[0], "wrap: relaying the stdio of /bin/sh")
		writtenOver(t, "--record", paths[1], `{"run":`)
		writtenOver(t, "--report", paths[2], `{"version":`)
	})
	t.Run("proxy", func(t *testing.T) {
		paths, _ := keptFiles(t, "proxy.log", "rec.jsonl", "r.json")
		s, _, _ := testStreams()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		o := &proxyOptions{URL: "http://127.0.0.1:1/mcp", Listen: "127.0.0.1:0"}
		o.MaxBytes, o.Timeout, o.Log, o.Record, o.Report, o.Format, o.Contract, o.Schema, o.FailOn, o.Color = proxy.DefaultMaxBytes, time.Second, paths[0], paths[1], paths[2], "json", "strict", "builtin", "fail", "never"
		done := make(chan error, 1)
		go func() { done <- proxyRun(ctx, s, o) }()
		re := regexp.MustCompile(`proxy: listening on http://127\.0\.0\.1:\d+/mcp`)
		for deadline := time.Now().Add(10 * time.Second); !re.MatchString(readFile(t, paths[0])); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the proxy did not start; log: %q", readFile(t, paths[0]))
			}
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("proxy: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the proxy did not stop")
		}
		writtenOver(t, "--log", paths[0], "proxy: listening on")
		writtenOver(t, "--record", paths[1], `{"run":`)
		writtenOver(t, "--report", paths[2], `{"version":`)
	})
}

// TestRefserverAddrTaken: refserver's --addr that cannot be bound (taken)
// is a usage error naming the flag, as proxy's --listen; it said only
// "listening: …".
func TestRefserverAddrTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	code, _, errOut := runMain(t, "", "refserver", "--addr", addr)
	if code != exitUsage || !strings.Contains(errOut, "--addr "+addr+": listen tcp "+addr) {
		t.Errorf("exit %d, stderr %q; want %d naming --addr %s", code, errOut, exitUsage, addr)
	}
}

// TestCheckStartsNoServerOnBadFlags: check checks its flags and opens
// its files before it starts the target: an unopenable report or
// --record, or a --contract that cannot be read, starts no server.
// Before, the server was started first (it could act: write, call out)
// and then left running when the report failed. The twin: a server that
// cannot start still gets its reports (exit 3), and an earlier
// recording is kept, as before.
func TestCheckStartsNoServerOnBadFlags(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	paths, dir := keptFiles(t, "rec.jsonl", "r.json")
	rec, rep := paths[0], paths[1]
	mark := filepath.Join(filepath.Dir(rec), "started")
	server := []string{"--", "/bin/sh", "-c", `touch "$0"; exec cat >/dev/null`, mark}
	for _, args := range [][]string{
		{"--record", rec, "-o", dir},
		{"--record", filepath.Join(dir, "none", "rec.jsonl"), "-o", rep},
		{"--record", rec, "-o", rep, "--contract", filepath.Join(dir, "none.json")},
	} {
		code, _, errOut := runMain(t, "", append(append([]string{"check", "--timeout", "1s"}, args...), server...)...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr %q", args, code, exitUsage, errOut)
		}
		if _, err := os.Stat(mark); err == nil {
			t.Fatalf("%q: the server was started before the flags were checked", args)
		}
		assertKept(t, "--record/-o", rec, rep)
	}

	missing := filepath.Join(dir, "no-such-server")
	code, _, errOut := runMain(t, "", "check", "--record", rec, "--format", "json", "-o", rep, "--", missing)
	if code != exitTarget || !strings.Contains(errOut, "no-such-server") {
		t.Errorf("a server that does not start: exit %d, want %d; stderr %q", code, exitTarget, errOut)
	}
	assertKept(t, "--record", rec)
	if got := readFile(t, rep); !strings.Contains(got, `"aborted":"target could not be driven`) {
		t.Errorf("-o of a run whose server did not start: %.300q", got)
	}
}
