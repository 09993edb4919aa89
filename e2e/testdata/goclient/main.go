// Command goclient is a real MCP client for the e2e tests: the official
// Go SDK's client, over Streamable HTTP or stdio. It connects, lists the
// tools, calls one, and closes, then prints one JSON line: the protocol
// version negotiated, the tool names and the call's result.
//
//	goclient [-protocol V] -tool NAME -args JSON -http URL
//	goclient [-protocol V] -tool NAME -args JSON -- COMMAND [ARG...]
//
// It is a module of its own, built by the e2e tests with go build, so the
// checker's module never depends on the SDK it is tested against.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("http", "", "the server's Streamable HTTP endpoint")
	protocol := flag.String("protocol", "", "protocol version to ask for (default: the SDK's latest)")
	tool := flag.String("tool", "", "the tool to call")
	args := flag.String("args", "{}", "the tool's arguments, a JSON object")
	flag.Parse()
	var arguments map[string]any
	if err := json.Unmarshal([]byte(*args), &arguments); err != nil {
		return fmt.Errorf("-args: %w", err)
	}
	var transport mcp.Transport
	switch {
	case *url != "" && flag.NArg() == 0:
		// With the standalone GET stream (the SDK's default): a server
		// that asks the client things (roots/list) asks there.
		transport = &mcp.StreamableClientTransport{Endpoint: *url, MaxRetries: -1}
	case *url == "" && flag.NArg() > 0:
		transport = &mcp.CommandTransport{Command: exec.Command(flag.Arg(0), flag.Args()[1:]...), TerminateDuration: 5 * time.Second}
	default:
		return errors.New("want -http URL, or -- COMMAND [ARG...]")
	}
	// Bounded: a client that hangs is a failed test, not a stuck one.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "wymcp-e2e-go-client", Version: "1.0.0"}, nil)
	// The SDK declares the roots capability; a server may then ask for
	// them (roots/list), which the relays pair with the answer.
	client.AddRoots(&mcp.Root{URI: "file:///tmp/wymcp-e2e", Name: "e2e"})
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: *protocol})
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		cs.Close()
		return fmt.Errorf("listing tools: %w", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: *tool, Arguments: arguments})
	if err != nil {
		cs.Close()
		return fmt.Errorf("calling %s: %w", *tool, err)
	}
	if err := cs.Close(); err != nil {
		return fmt.Errorf("closing: %w", err)
	}
	var names []string
	for _, t := range listed.Tools {
		names = append(names, t.Name)
	}
	out := map[string]any{"tools": names, "result": res}
	if ir := cs.InitializeResult(); ir != nil {
		out["protocolVersion"] = ir.ProtocolVersion
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
