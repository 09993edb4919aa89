package runner_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/refserver"
	"github.com/wymcp/wymcp-check/runner"
	"github.com/wymcp/wymcp-check/transport"
)

// serverEnv makes the test binary a stdio reference server, so stdio runs
// drive a real child process without building anything.
const serverEnv = "WYMCP_RUNNER_REFSERVER"

// replyLatencyEnv makes the reference server wait the duration it holds
// before each write.
const replyLatencyEnv = "WYMCP_RUNNER_REPLY_LATENCY"

func TestMain(m *testing.M) {
	if v := os.Getenv(ignoringEnv); v != "" {
		serveIgnoring(os.Stdin, os.Stdout, v)
		os.Exit(0)
	}
	if os.Getenv(babblingEnv) != "" {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			os.Stdout.WriteString("not json\n")
		}
		os.Exit(0)
	}
	if fault, ok := os.LookupEnv(serverEnv); ok {
		srv, err := refserver.New(refserver.Options{Fault: fault})
		if err != nil {
			os.Exit(2)
		}
		if d, err := time.ParseDuration(os.Getenv(slowStartEnv)); err == nil {
			time.Sleep(d)
		}
		var out io.Writer = os.Stdout
		if d, err := time.ParseDuration(os.Getenv(replyLatencyEnv)); err == nil {
			out = writerFunc(func(b []byte) (int, error) {
				time.Sleep(d)
				return os.Stdout.Write(b)
			})
		}
		if err := srv.ServeStdio(context.Background(), os.Stdin, out); err != nil {
			os.Stderr.WriteString("refserver: " + err.Error() + "\n")
			if errors.Is(err, refserver.ErrCrash) {
				os.Exit(3)
			}
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runStdio(t *testing.T, fault, protocol string) *collect {
	t.Helper()
	t.Setenv(serverEnv, fault)
	target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: 2 * time.Second, Quiet: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	return runCorpus(t, target, protocol)
}

func TestCleanServerStdio(t *testing.T) {
	for _, p := range []string{"auto", envelope.V20251125} {
		t.Run(p, func(t *testing.T) {
			c := runStdio(t, "", p)
			if ids, detail := c.bad(); len(ids) > 0 {
				t.Errorf("the clean server drew findings over stdio:\n%s", detail)
			}
		})
	}
}

// TestCrashStdio: the process dies on the opt-in valid tool call; that
// fixture fails PRO1005 with the exit status and stderr, the server is
// restarted, and every later fixture is judged as usual.
func TestCrashStdio(t *testing.T) {
	c := runStdio(t, "crash", "auto")
	got, detail := c.bad()
	if diff := cmp.Diff([]string{"PRO1005"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, detail)
	}
	for _, v := range c.verdicts {
		if v.Check.ID == "PRO1005" && v.Status == checks.StatusFail {
			if v.Fixture != "tools/call-valid/add" && v.Fixture != "mrtr/extra-input-responses/add" {
				t.Errorf("PRO1005 failed on %s, want a valid call of add", v.Fixture)
			}
			if msg := v.Findings[0].Message; !strings.Contains(msg, "exit status 3") || !strings.Contains(msg, "crash fault") {
				t.Errorf("PRO1005 message lacks exit status or stderr: %s", msg)
			}
		}
	}
}

// babblingEnv makes the test binary a stdio program that answers every
// line with a line that is not JSON: no MCP server at all.
const babblingEnv = "WYMCP_RUNNER_BABBLING"

// TestNegotiationSaysWhatEachProbeGot: when no version can be agreed,
// the error names what every probe got back, server/discover included,
// as it was (a line without a response), not as the run later noted it.
func TestNegotiationSaysWhatEachProbeGot(t *testing.T) {
	t.Setenv(babblingEnv, "1")
	target, err := runner.StartStdio(context.Background(), []string{os.Args[0]}, transport.Limits{Timeout: 300 * time.Millisecond, Quiet: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	_, err = runner.Run(context.Background(), target, runner.Options{Contract: envelope.Strict()}, &collect{})
	if err == nil {
		t.Fatal("a program that answers no JSON was negotiated with")
	}
	for _, want := range []string{"initialize for 2025-11-25: no response", "initialize for 2025-06-18: no response", "server/discover: no response within"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
