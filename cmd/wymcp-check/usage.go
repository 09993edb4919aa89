package main

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

// durationFlags are the flags that bound time.
var durationFlags = []string{"timeout", "start-timeout", "deadline"}

// maxParallel bounds --parallel: far past what a machine's CPUs or a
// server's connections use, and short of sizes that cannot be allocated.
const maxParallel = 1024

// flagBounds rejects a bound out of its range before every command: a
// --timeout of 0 would fail every exchange at once and a negative
// duration parses without complaint; a --max-bytes of 0 or less would
// silently mean the default; a --parallel of billions cannot be
// allocated.
func flagBounds(cmd *cobra.Command, _ []string) error {
	for _, name := range durationFlags {
		f := cmd.Flags().Lookup(name)
		if f == nil || f.Value.Type() != "duration" {
			continue
		}
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d <= 0 {
			return usagef("--%s %s: want a positive duration, such as 10s", name, f.Value)
		}
	}
	// wrap's --grace may be 0 (SIGTERM as soon as stdin closes); a
	// negative one parsed without complaint and meant the same.
	if f := cmd.Flags().Lookup("grace"); f != nil && f.Value.Type() == "duration" {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d < 0 {
			return usagef("--grace %s: want 0 (no wait) or a positive duration, such as 5s", f.Value)
		}
	}
	if f := cmd.Flags().Lookup("max-bytes"); f != nil {
		if n, err := strconv.ParseInt(f.Value.String(), 10, 64); err == nil && n <= 0 {
			return usagef("--max-bytes %d: want a positive number of bytes", n)
		}
	}
	// An empty value (an unset variable in a script: --contract "$C")
	// once fell back to the default quietly, and the run was judged with
	// settings the user did not ask for.
	for _, name := range []string{"contract", "schema", "checks"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed && f.Value.String() == "" {
			return usagef("--%s '': the value is empty; want %s", name, emptyWant(name))
		}
	}
	if f := cmd.Flags().Lookup("parallel"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && (n < 1 || n > maxParallel) {
			return usagef("--parallel %d: want 1 to %d", n, maxParallel)
		}
	}
	return nil
}

// emptyWant says what a flag refused empty wants instead.
func emptyWant(flag string) string {
	switch flag {
	case "contract":
		return "strict, spec or a contract file"
	case "schema":
		return "builtin, none or a schema file"
	}
	return "a comma list of check IDs, globs or areas (all judges every check)"
}
