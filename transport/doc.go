// Package transport carries the checker's bytes to an MCP server and back,
// over Streamable HTTP or stdio, and turns what happened into an
// envelope.Exchange.
//
// A transport only moves bytes. It sends a request exactly as given (no
// re-encoding, no headers of its own) and records the reply as it
// arrived. The one thing it knows of JSON-RPC is when a reply is over: a
// stream (SSE events, stdio lines) ends its exchange at the first message
// that is a response, that is a JSON object without a "method" member (or
// a JSON array, a batch reply). Requests and notifications the server
// sends first, and lines that are not JSON-RPC messages at all, are
// recorded and do not end the exchange.
//
// Every exchange is bounded by Limits in time, bytes and messages, so a
// hostile or broken server can never hang, flood or crash the checker.
// Server misbehaviour never becomes a Go error: it is written into
// Exchange.Failure, with whatever partial reply was read, for the checks
// to judge.
package transport
