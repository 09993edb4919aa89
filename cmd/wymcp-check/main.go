// Command wymcp-check judges MCP servers against JSON-RPC 2.0, the MCP
// protocol of the version they speak, and the error-envelope contract.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	catchSIGPIPE()
	os.Exit(int(Main(os.Args[1:], systemStreams())))
}

// catchSIGPIPE makes a write to a closed pipe on stdout or stderr
// (`check … | head -1`, a relay's client or reader gone) fail with EPIPE,
// as a write to a full disk does, until the returned func is called.
// Left alone, Go's runtime kills the process on it, its --report files
// cut short (review rev73); caught, every command takes the failed write
// as it takes any other (exit 2, the other reports written whole), and
// the relays take it for a client gone and go on to their end. Caught,
// not ignored: an ignored signal stays ignored in the server wrap and
// check execute.
func catchSIGPIPE() (stop func()) {
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	return func() { signal.Stop(pipes) }
}
