package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/fixtures"
	"github.com/wymcp/wymcp-check/rules"
)

func newListCmd(s *streams) *cobra.Command {
	var fx bool
	var dir string
	cmd := &cobra.Command{
		Use:   "list [--fixtures [--dir DIR]]",
		Short: "List every check (ID, area, severity, title), or every fixture (ID, versions, transports, rules)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if dir != "" && !fx {
				// (The checks would print, and DIR go unread in silence.)
				return usagef("--dir %s needs --fixtures: it adds the fixtures of DIR to the list of fixtures", dir)
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			if !fx {
				for _, c := range checks.All() {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Area, c.Severity, c.Title)
				}
				return tw.Flush()
			}
			all, problems, err := loadFixtures(&checkOptions{FixtureDir: dir})
			if err != nil {
				return err
			}
			for _, f := range all {
				opt := ""
				if f.Off {
					opt = " (off by default: --call-tools)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\n", f.ID, strings.Join(f.Versions, ","), strings.Join(f.Transports, ","), strings.Join(f.Rules, ", "), opt)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(problems) > 0 {
				return usagef("--dir: %d fixture problem(s): %s", len(problems), strings.Join(problems, "; "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fx, "fixtures", false, "list the fixtures instead of the checks")
	cmd.Flags().StringVar(&dir, "dir", "", "with --fixtures: also list the fixtures of `DIR`")
	return cmd
}

func newExplainCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "explain ID",
		Short: "Explain a check (ERR1002) or a rule of the MCP digest (T-ERR-9, AMB-17)",
		Long: `explain prints what a check judges, why, and the rules behind it; or,
for a rule ID (T-… or AMB-…), the rule in the project's words: its level,
the protocol versions it binds, and the checks and fixtures that cite it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if c := checks.Lookup(args[0]); c != nil {
				return explainCheck(s.Out, c)
			}
			if r := rules.Lookup(args[0]); r != nil {
				return explainRule(s.Out, r)
			}
			return usagef("unknown check %q: not a check ID (wymcp-check list shows them) nor a rule ID such as T-ERR-9 or AMB-17", args[0])
		},
	}
}

func explainCheck(w io.Writer, c *checks.Check) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\nArea:     %s\nSeverity: %s\nSpec:     %s\n\n%s\n",
		c.ID, c.Title, c.Area, c.Severity, c.SpecRef, strings.TrimSpace(c.Doc))
	if ids := rules.Cited(c.SpecRef); len(ids) > 0 {
		b.WriteString("\nRules (wymcp-check explain RULE for each):\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, id := range ids {
			if r := rules.Lookup(id); r != nil {
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.ID, r.Level, r.Title)
			}
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func explainRule(w io.Writer, r *rules.Rule) error {
	var b strings.Builder
	checkable := "yes, from outside the server"
	if !r.Checkable {
		checkable = "no: not observable from outside the server"
	}
	fmt.Fprintf(&b, "%s: %s\n\nLevel:     %s\nVersions:  %s\nDigest:    %s\nCheckable: %s\n\n%s\n",
		r.ID, r.Title, r.Level, r.Versions, r.Section, checkable, r.Text)
	var cs []string
	for _, c := range checks.All() {
		if slices.Contains(c.Rules(), r.ID) {
			cs = append(cs, c.ID)
		}
	}
	var fs []string
	if all, err := fixtures.Embedded(); err == nil {
		for _, f := range all {
			if slices.Contains(f.Rules, r.ID) {
				fs = append(fs, f.ID)
			}
		}
	}
	b.WriteString("\n")
	if len(cs) > 0 {
		fmt.Fprintf(&b, "Checks citing it:   %s\n", strings.Join(cs, ", "))
	}
	if len(fs) > 0 {
		fmt.Fprintf(&b, "Fixtures citing it: %s\n", strings.Join(fs, ", "))
	}
	if len(cs)+len(fs) == 0 {
		b.WriteString("No check or fixture cites it yet.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
