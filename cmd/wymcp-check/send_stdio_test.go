package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// stdioServerEnv makes the test binary a small stdio MCP server:
// "once" answers each request once, "twice" writes each response twice.
const stdioServerEnv = "WYMCP_CMD_STDIO_SERVER"

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(stdioServerEnv); ok {
		serveStdio(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serveStdio(mode string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 8<<20)
	for in.Scan() {
		msg := in.Bytes()
		id := gjson.GetBytes(msg, "id")
		if !id.Exists() {
			continue
		}
		var reply string
		switch gjson.GetBytes(msg, "method").Str {
		case "initialize":
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":"1"}}}`, id.Raw)
		case "ping":
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id.Raw)
		case "tools/list":
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, id.Raw)
		default:
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id.Raw)
		}
		os.Stdout.WriteString(reply + "\n")
		if mode == "twice" {
			os.Stdout.WriteString(reply + "\n")
		}
	}
}

// TestSendStdioReadsAsCheck: send over stdio reads what check reads
// by default (the lines up to a marker's reply), so a server that writes
// each response twice fails RPC1006 in send as in check; send read up to
// the first response only, and passed it. The twin: answered once, it
// passes.
func TestSendStdioReadsAsCheck(t *testing.T) {
	for mode, want := range map[string]exitCode{"twice": exitFindings, "once": exitOK} {
		t.Run(mode, func(t *testing.T) {
			t.Setenv(stdioServerEnv, mode)
			code, out, errOut := runMain(t, "", "send", "--timeout", "2s", "--fixture", "id/string", "--", os.Args[0])
			if code != want {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, want, out, errOut)
			}
			if failed := strings.Contains(out, "fail RPC1006"); failed != (mode == "twice") {
				t.Errorf("RPC1006 failed: %v, want %v:\n%s", failed, mode == "twice", out)
			}
		})
	}
}
