// Command testsum reads `go test -json` on stdin and prints what plain
// `go test` prints (package results, the output of failing tests), then
// every skipped test with its reason, so no test skips in silence.
//
//	go test -race -count=1 -json ./... | go run ./.ci/testsum
//
// It exits 1 when a test or a build failed, and, with -fail-on-skip (as
// CI runs it), when any test skipped.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	failOnSkip := flag.Bool("fail-on-skip", false, "exit 1 if any test skipped")
	flag.Parse()
	os.Exit(run(os.Stdin, os.Stdout, *failOnSkip))
}

// An event is one line of test2json output.
type event struct {
	Action     string
	Package    string
	ImportPath string // build events
	Test       string
	Output     string
	Elapsed    float64
}

type skip struct{ pkg, test, reason string }

func run(in io.Reader, out io.Writer, failOnSkip bool) int {
	w := bufio.NewWriter(out)
	defer w.Flush()
	outputs := map[string][]string{} // package + test → its output lines
	var skips []skip
	failed := false
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event: go's own messages (a build error) pass through.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			outputs[key] = append(outputs[key], e.Output)
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed = true
		case "skip":
			if e.Test == "" {
				// A package without tests; go test prints it the same way.
				fmt.Fprintf(w, "?   \t%s\t[no test files]\n", e.Package)
				break
			}
			skips = append(skips, skip{e.Package, e.Test, reason(outputs[key])})
			delete(outputs, key)
		case "pass":
			if e.Test == "" {
				fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
			delete(outputs, key)
		case "fail":
			failed = true
			if e.Test != "" {
				fmt.Fprint(w, strings.Join(outputs[key], ""))
			} else {
				// The package's own output: a panic, a TestMain failure.
				fmt.Fprint(w, strings.Join(outputs[key], ""))
				fmt.Fprintf(w, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
			delete(outputs, key)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(w, "testsum: reading go test -json: %v\n", err)
		failed = true
	}
	sort.Slice(skips, func(i, j int) bool {
		if skips[i].pkg != skips[j].pkg {
			return skips[i].pkg < skips[j].pkg
		}
		return skips[i].test < skips[j].test
	})
	if len(skips) == 0 {
		fmt.Fprintf(w, "\nskipped: none\n")
	} else {
		fmt.Fprintf(w, "\nskipped: %d test(s)\n", len(skips))
		for _, s := range skips {
			fmt.Fprintf(w, "  %s %s: %s\n", s.pkg, s.test, s.reason)
		}
	}
	switch {
	case failed:
		fmt.Fprintf(w, "FAIL\n")
		return 1
	case failOnSkip && len(skips) > 0:
		fmt.Fprintf(w, "FAIL: %d test(s) skipped, and -fail-on-skip forbids it\n", len(skips))
		return 1
	}
	return 0
}

// reason extracts a skip's message from the test's output: the lines
// other than the run and result markers.
func reason(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		// "file_test.go:25: message": keep the message, with where it is.
		msg = append(msg, t)
	}
	if len(msg) == 0 {
		return "(no reason given)"
	}
	return strings.Join(msg, " ")
}
