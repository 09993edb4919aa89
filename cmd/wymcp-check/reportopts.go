package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/report"
	"github.com/wymcp/wymcp-check/schema"
)

// reportOptions are the flags every judging command shares.
type reportOptions struct {
	Format   string
	Output   string
	Contract string
	FailOn   string
	Color    string
	Verbose  bool
	Schema   string
}

func addReportFlags(cmd *cobra.Command, o *reportOptions) {
	addEnum(cmd, &o.Format, "format", "human", "report format", report.Formats()...)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "write the report to `FILE` instead of stdout")
	cmd.Flags().StringVar(&o.Contract, "contract", "strict", "the error-envelope contract: strict, spec, or a contract `FILE` (JSON)")
	addEnum(cmd, &o.FailOn, "fail-on", "fail", "what fails the gate (exit 1): fail = any fail or error; warn = warnings too", "fail", "warn")
	addEnum(cmd, &o.Color, "color", "auto", "color the human report", "auto", "always", "never")
	cmd.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "human report: list passes and skips too")
	cmd.Flags().StringVar(&o.Schema, "schema", "builtin", "validate replies against the checker's protocol schemas (builtin), none (off), or a protocol schema `FILE` such as the official schema.json of a version")
}

// validator resolves --schema.
func (o *reportOptions) validator() (checks.SchemaValidator, error) {
	switch o.Schema {
	case "builtin", "":
		return checks.ProtocolSchemas(schema.NewRegistry()), nil
	case "off":
		return nil, nil
	}
	u, err := schema.LoadUserSchema(o.Schema, nil)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--schema: %w", err)}
	}
	return checks.UserSchema(u), nil
}

// session is one judged run: the contract, the report writer and the
// running summary.
type session struct {
	contract *envelope.Contract
	schemas  checks.SchemaValidator
	w        report.Writer
	sum      report.Summary
	failWarn bool
	close    func() error
}

func (o *reportOptions) open(s *streams, meta report.Meta) (*session, error) {
	c, err := envelope.LoadContract(o.Contract)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--contract: %w", err)}
	}
	sv, err := o.validator()
	if err != nil {
		return nil, err
	}
	out, closeOut := s.Out, func() error { return nil }
	color := s.colorOn(o.Color)
	if o.Output != "" {
		f, err := os.Create(o.Output)
		if err != nil {
			return nil, &usageError{fmt.Errorf("--output: %w", err)}
		}
		out, closeOut, color = f, f.Close, o.Color == "always"
	}
	w, err := report.New(o.Format, out, color)
	if err != nil {
		closeOut()
		return nil, &usageError{err}
	}
	meta.Tool, meta.Version, meta.Contract = "wymcp-check", version, c.Name
	meta.Verbose, meta.FailOnWarn = o.Verbose, o.FailOn == "warn"
	if meta.Started.IsZero() {
		meta.Started = s.Now()
	}
	if err := w.Begin(meta); err != nil {
		closeOut()
		return nil, fmt.Errorf("writing report: %w", err)
	}
	return &session{contract: c, schemas: sv, w: w, failWarn: meta.FailOnWarn, close: closeOut}, nil
}

func (ss *session) exchange(fixture string, vs []checks.Verdict) error {
	for _, v := range vs {
		ss.sum.Add(v)
	}
	if err := ss.w.Exchange(fixture, vs); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

func (ss *session) note(n string) { ss.sum.Notes = append(ss.sum.Notes, n) }

// finish writes the summary and returns errFindings when the gate fails.
func (ss *session) finish() error {
	err := ss.w.End(ss.sum)
	if cerr := ss.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if ss.sum.Gate(ss.failWarn) {
		return errFindings
	}
	return nil
}
