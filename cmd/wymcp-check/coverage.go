package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/report"
	"github.com/wymcp/wymcp-check/runner"
)

func newCoverageCmd(s *streams) *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "coverage",
		Short: "Show which rules the corpus and the checks cover, without a target",
		Long: `coverage prints the rule catalogue's coverage: for each rule of the MCP
digest, whether it can be checked from outside, and the fixtures, runner
probes and checks that cite it. A checkable rule nothing cites yet is
listed with the reason. A run's own coverage (what it exercised, what the
server offered nothing to probe for) is in every check report.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fx, err := fixtures.Embedded()
			if err != nil {
				return fmt.Errorf("embedded fixtures: %w", err)
			}
			rows := report.CatalogueCoverage(runner.Citations(fx), checks.All())
			checkable, covered := 0, 0
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			for _, r := range rows {
				if r.Status != report.CovNotCheckable {
					checkable++
				}
				if r.Status == "covered" {
					covered++
				}
				if !verbose && r.Status == "covered" {
					continue
				}
				detail := r.Why
				if r.Status == "covered" {
					detail = fmt.Sprintf("%d fixture(s): %s; checks: %s", len(r.Fixtures), short(r.Fixtures, 3), strings.Join(r.Checks, " "))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Versions, r.Status, detail)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "\n%d of %d checkable rules have a fixture or a check (%d fixtures, %d checks); -v lists every rule\n",
				covered, checkable, len(fx), len(checks.All()))
			return nil
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list every rule, covered ones too")
	return cmd
}

// short joins at most n names, then says how many more.
func short(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, " ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], " "), len(names)-n)
}
