package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"
)

// durationFlags are the flags that bound time.
var durationFlags = []string{"timeout", "start-timeout", "deadline"}

// positiveDurations rejects a bound of zero or less: --timeout 0 would
// fail every exchange at once, and a negative duration parses without
// complaint. It runs before every command.
func positiveDurations(cmd *cobra.Command, _ []string) error {
	for _, name := range durationFlags {
		f := cmd.Flags().Lookup(name)
		if f == nil || f.Value.Type() != "duration" {
			continue
		}
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d <= 0 {
			return usagef("--%s %s: want a positive duration, such as 10s", name, f.Value)
		}
	}
	return nil
}

// transcriptsExist checks lint's inputs before any report is started: a
// file that is not there is a mistake to state, not a run to report.
func transcriptsExist(files []string) error {
	for _, name := range files {
		if name == "-" {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return usagef("opening transcript: %w", err)
		}
		f.Close()
	}
	return nil
}
