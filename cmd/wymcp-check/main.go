// Command wymcp-check judges MCP servers against JSON-RPC 2.0, the MCP
// protocol of the version they speak, and the error-envelope contract.
package main

import (
	"io"
	"log"
	"os"
)

func main() {
	// net/http's client says through the standard logger that a server
	// sent bytes on an idle kept-alive connection (a Content-Length
	// shorter than its body); the connection is dropped, and what the
	// checker says goes through its streams alone.
	log.SetOutput(io.Discard)
	os.Exit(int(Main(os.Args[1:], systemStreams())))
}
