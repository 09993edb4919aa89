package refserver_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/wymcp/wymcp-check/refserver"
)

// A stdio session: one request per line in, one reply per line out.
func ExampleServer_ServeStdio() {
	s, err := refserver.New(refserver.Options{Name: "demo", Version: "1.0.0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"add","arguments":{"a":2,"b":40}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"nope"}}
`)
	if err := s.ServeStdio(context.Background(), in, os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"demo","version":"1.0.0"}},"content":[{"text":"{\"sum\":42}","type":"text"}],"resultType":"complete","structuredContent":{"sum":42}}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"unknown tool \"nope\""}}
}

// The same request against a server started with a fault.
func ExampleNew_fault() {
	s, err := refserver.New(refserver.Options{Fault: "code-zero"})
	if err != nil {
		fmt.Println(err)
		return
	}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"nope"}}` + "\n")
	_ = s.ServeStdio(context.Background(), in, os.Stdout)
	_, err = refserver.New(refserver.Options{Fault: "typo"})
	fmt.Println(err != nil)
	// Output:
	// {"jsonrpc":"2.0","id":2,"error":{"code":0,"message":"unknown tool \"nope\""}}
	// true
}
