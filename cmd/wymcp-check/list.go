package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/checks"
)

func newListCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every check with its ID, area, severity and title",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			for _, c := range checks.All() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Area, c.Severity, c.Title)
			}
			return tw.Flush()
		},
	}
}

func newExplainCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "explain ID",
		Short: "Explain a check: what it judges, why, and where the rule comes from",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			c := checks.Lookup(args[0])
			if c == nil {
				return usagef("unknown check %q (wymcp-check list shows them all)", args[0])
			}
			_, err := fmt.Fprintf(s.Out, "%s: %s\n\nArea:     %s\nSeverity: %s\nSpec:     %s\n\n%s\n",
				c.ID, c.Title, c.Area, c.Severity, c.SpecRef, strings.TrimSpace(c.Doc))
			return err
		},
	}
}
