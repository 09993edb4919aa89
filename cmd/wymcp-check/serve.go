package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/refserver"
)

func newFaultsCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "faults",
		Short: "List the reference server's named faults (for --demo-fault)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			for _, f := range refserver.Faults() {
				fmt.Fprintf(tw, "%s\t%s\n", f.Name, f.Breaks)
			}
			return tw.Flush()
		},
	}
}

type serveOptions struct {
	Stdio bool
	Addr  string
	Fault string
}

// newRefserverCmd serves the reference server, over stdio (for the stdio
// demo, which starts the checker's own binary) or HTTP on loopback.
func newRefserverCmd(s *streams) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "refserver",
		Short: "Serve the reference MCP server (stdio, or HTTP on 127.0.0.1)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := refserver.New(refserver.Options{Fault: o.Fault})
			if err != nil {
				return usagef("--fault %q: not a fault (wymcp-check faults lists them)", o.Fault)
			}
			defer srv.Close()
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if o.Stdio {
				err := srv.ServeStdio(ctx, s.In, s.Out)
				if errors.Is(err, refserver.ErrCrash) {
					return &targetError{err} // the crash fault: exit non-zero, as a crashing server would
				}
				return err
			}
			host, _, err := net.SplitHostPort(o.Addr)
			if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
				return usagef("--addr %q: the reference server binds loopback only (127.0.0.1:PORT)", o.Addr)
			}
			l, err := net.Listen("tcp", o.Addr)
			if err != nil {
				// (The address may be taken: a usage error naming the flag,
				// as proxy's --listen.)
				return usagef("--addr %s: %v", o.Addr, err)
			}
			fmt.Fprintf(s.ErrOut, "reference server on http://%s/mcp%s\n", l.Addr(), faultSuffix(o.Fault))
			hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				hs.Shutdown(sctx)
			}()
			if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.Stdio, "stdio", false, "serve over stdin/stdout")
	cmd.Flags().StringVar(&o.Addr, "addr", "127.0.0.1:3001", "HTTP listen address (loopback only)")
	cmd.Flags().StringVar(&o.Fault, "fault", "", "inject a named fault")
	return cmd
}
