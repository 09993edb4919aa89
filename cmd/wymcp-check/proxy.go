package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/wymcp/wymcp-check/proxy"
)

type proxyOptions struct {
	relayOptions
	URL       string
	Listen    string
	ListenAny bool
	Headers   []string
}

func newProxyCmd(s *streams) *cobra.Command {
	o := &proxyOptions{}
	cmd := &cobra.Command{
		Use:   "proxy [flags] URL",
		Short: "Relay a client's Streamable HTTP traffic to a server and judge it live",
		Long: `proxy listens on loopback and relays every request of your MCP client to the
server at URL, and every reply back, unchanged: bodies byte for byte, each SSE
event as soon as it arrives, sessions, GET streams and DELETE included. Point
the client at the address it prints instead of the server's.

Each message is shown as it passes, one line each (-v adds bodies and
headers), and the server's reply to each client request is judged with the
same checks as check, the expectation derived from the request the client
really sent. The client's own messages are judged too (area client: ids,
lifecycle, headers, schema, tool arguments), against what the proxy saw of
their session; their findings come under their line. Ctrl-C stops it and
prints a summary.

A request left without its response for --timeout, or whose connection the
server drops, is judged as check judges it: the proxy asks the server, on a
connection of its own, whether it is alive (ping, or server/discover in
2026-07-28, in the request's session, with its credentials and the --header
values; the client never sees it). A live server left the request unanswered
(RPC1006 fails); one that drops the request and then refuses connections died
on it (PRO1005). The client still waits as long as it likes: a reply that
comes later is relayed and noted, not judged again. A dropped connection
reaches the client dropped; only a server the proxy cannot connect to at all
gets a 502 from the proxy.

A 2025-xx POST stream that ends after an event id without its response is
held for the client to resume with GET and Last-Event-ID (for --timeout): the
resumed stream's events join the exchange, which is judged when its response
comes, as check judges a stream it resumes itself. Not resumed, it is judged
as it ended (RPC1006 warns).

Messages over --max-bytes are relayed whole; their exchange gets an error
(could not judge), which fails the gate as in check. The client's
Authorization and Cookie headers and the values of --header are never shown
nor recorded.

` + proxyExitHelp,
		Example: `  wymcp-check proxy http://127.0.0.1:3001/mcp --listen 127.0.0.1:6277
  wymcp-check proxy https://mcp.example.com/mcp -H "Authorization: Bearer $TOKEN" --record traffic.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.URL, o.changed = args[0], cmd.Flags().Changed
			return proxyRun(cmd.Context(), s, o)
		},
	}
	addRelayFlags(cmd, &o.relayOptions)
	cmd.Flags().StringVar(&o.Listen, "listen", "127.0.0.1:0", "address to listen on, `HOST:PORT` (port 0: any free port, printed)")
	cmd.Flags().BoolVar(&o.ListenAny, "listen-any", false, "allow a --listen address that is not loopback (anyone who reaches it reaches the server, with your --header values)")
	cmd.Flags().StringArrayVarP(&o.Headers, "header", "H", nil, "set a header on every request to the server, `'Name: value'` (repeatable; replaces the client's; values are never shown)")
	return cmd
}

// loopback reports whether a listen host is this machine only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func proxyRun(ctx context.Context, s *streams, o *proxyOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	up, err := url.Parse(o.URL)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return usagef("target %q: want an http:// or https:// URL", o.URL)
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return usagef("--listen %q: want HOST:PORT", o.Listen)
	}
	if !loopback(host) && !o.ListenAny {
		return usagef("--listen %q is not a loopback address: the proxy would let anyone who reaches it talk to the server (with your --header values); add --listen-any if you mean it", o.Listen)
	}
	extra, err := parseHeaders(o.Headers)
	if err != nil {
		return err
	}
	// Listening is the last check of the flags (the address may be
	// taken): before any file is opened, so that a --listen that fails
	// leaves an earlier log, recording or report as it was.
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return usagef("--listen: %v", err)
	}
	red := proxy.NewRedactor(extra)
	learnQuery(red, up)
	out, w, closeSinks, err := openRelay(s, &o.relayOptions, red, s.Out, s.OutTTY, "proxy "+shownURL(up))
	if err != nil {
		l.Close()
		return err
	}
	defer out.close()
	h := proxy.NewHTTP(proxy.HTTPConfig{Upstream: up, Header: extra, Redactor: red,
		Limits: proxy.Limits{MaxBytes: o.MaxBytes, Timeout: o.Timeout}, Observer: w})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: log.New(io.Discard, "", 0)}
	// The client is pointed at the upstream's path as it was written (an
	// escaped slash stays escaped); its query the relay adds itself.
	local := &url.URL{Scheme: "http", Host: l.Addr().String(), Path: up.Path, RawPath: up.RawPath}
	if !loopback(host) {
		fmt.Fprintf(out, "warning: listening on %s, which is not loopback: anyone who reaches it reaches the server through the proxy\n", l.Addr())
	}
	fmt.Fprintf(out, "proxy: listening on %s, relaying to %s (Ctrl-C stops)\n", local, shownURL(up))

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	stop()

	st, inTime := h.Close()
	srv.Close()
	var notes []string
	if !inTime {
		notes = append(notes, "the output was still busy when the proxy stopped; the last lines may be missing")
	}
	writeWithin(out, w.summary(st, notes), 2*time.Second)
	if err := closeSinks(notes); err != nil {
		return err
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", serveErr)
	}
	if why := w.neverReached(); why != "" {
		// A wrong URL must not pass a CI gate: the target could not be
		// driven, as check's unreachable target (exit 3).
		return &targetError{errors.New(why)}
	}
	if w.gate(o.FailOn == "warn") {
		return errFindings
	}
	return nil
}

// shownURL is u as a report or the terminal may show it: no password,
// and the query's values hidden (a server may take its key there).
func shownURL(u *url.URL) string {
	c := *u
	if c.RawQuery != "" {
		q := c.Query()
		for k, vs := range q {
			for i := range vs {
				vs[i] = "xxxxx"
			}
			q[k] = vs
		}
		c.RawQuery = q.Encode()
	}
	return c.Redacted()
}

// learnQuery takes the values of the upstream URL's query for secrets:
// the relay sends them with every request the client's own query does
// not replace, as secret as a --header value. A server may echo them
// decoded, as they were written in the URL, or escaped anew.
func learnQuery(red *proxy.Redactor, up *url.URL) {
	for k, vs := range up.Query() {
		for _, v := range vs {
			red.Learn("Query-"+k, v)
			red.Learn("Query-"+k, url.QueryEscape(v))
		}
	}
	for _, kv := range strings.Split(up.RawQuery, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			red.Learn("Query-"+k, v)
		}
	}
}
