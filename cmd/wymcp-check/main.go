// Command wymcp-check judges MCP servers against JSON-RPC 2.0, the MCP
// protocol of the version they speak, and the error-envelope contract.
package main

import "os"

func main() { os.Exit(int(Main(os.Args[1:], systemStreams()))) }
