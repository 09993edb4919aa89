// Command gosdkserver is a small MCP server built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), as its examples write one:
// one tool, "add", default options. The e2e tests build it in its own
// module (never the checker's) and check it live, over Streamable HTTP
// and stdio.
//
//	gosdkserver -http 127.0.0.1:0   prints its endpoint URL on stdout, then serves
//	gosdkserver -stdio              serves stdin and stdout
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type addIn struct {
	A int `json:"a" jsonschema:"first addend"`
	B int `json:"b" jsonschema:"second addend"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func add(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
	return nil, addOut{Sum: in.A + in.B}, nil
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "wymcp-e2e-gosdk", Version: "0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "add two integers", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, add)
	return s
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this loopback address")
	stdio := flag.Bool("stdio", false, "serve stdin and stdout")
	flag.Parse()
	switch {
	case *stdio:
		if err := newServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
	case *addr != "":
		l, err := net.Listen("tcp", *addr)
		if err != nil {
			log.Fatal(err)
		}
		if ip := l.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
			log.Fatalf("refusing to serve on %s: loopback only", ip)
		}
		s := newServer()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		mux := http.NewServeMux()
		mux.Handle("/mcp", h)
		fmt.Printf("http://%s/mcp\n", l.Addr())
		os.Stdout.Sync()
		log.Fatal(http.Serve(l, mux))
	default:
		flag.Usage()
		os.Exit(2)
	}
}
