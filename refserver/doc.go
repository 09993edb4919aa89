// Package refserver is a reference MCP server that keeps the strict
// error-envelope contract, with named faults to inject. It powers
// `wymcp-check check --demo` and the checker's own tests.
//
// It imports nothing from this module: a bug shared by the judge and the
// judged would hide itself. Requests are read from their raw bytes with
// gjson (case-sensitive, absent ≠ null); ids are echoed byte for byte.
//
// # Versions
//
// 2026-07-28 is served statelessly: every request carries params._meta with
// io.modelcontextprotocol/protocolVersion and clientCapabilities, and over
// HTTP the headers MCP-Protocol-Version, Mcp-Method and Mcp-Name (and
// Mcp-Param-* for the parameters a tool marks with x-mcp-header).
// 2025-11-25 and 2025-06-18 are served after an initialize handshake (an
// HTTP session, or the rest of a stdio stream). server/discover and the -32022
// error list only 2026-07-28 as supported: it is the one version a
// request's _meta may name.
//
// Four tools, all read-only: "add" sums two integers a and b within
// ±(2^53−1); "search" looks words up, with a schema that has a nested
// closed object, arrays, an enum, a const and formats (annotations: not
// asserted); "weather" marks its parameters region (a string) and days
// (an integer) with x-mcp-header, and over 2026-07-28 HTTP checks the
// Mcp-Param-Region and Mcp-Param-Days headers that mirror them; "ask"
// takes one optional argument, subject, and in 2026-07-28 asks for a
// confirmation: a request that declares form-mode elicitation gets an
// input_required result (one elicitation/create, and a requestState
// "ask:confirm:v1." followed by an HMAC of the tool and its arguments
// under a key of the server's, Options.StateKey), a retry answering it
// with that state a complete result, one with a state tampered with or
// issued for other arguments -32602 (T-MRTR-5, T-MRTR-6), one without
// the answer input_required again (T-MRTR-9); a request without
// the capability gets -32021 naming it (T-LIFE-13). In 2025-xx it asks
// nothing and answers "not confirmed". Arguments that break an inputSchema give an isError result
// in 2025-11-25 and 2026-07-28, and -32602 with data.errors in 2025-06-18
// (T-TOOL-8).
//
// Besides tools: two prompts ("greet" needs a name), two resources and
// a template of numbered notes, completion of prompt arguments and the
// template's variable, logging/setLevel (2025-xx) and a per-request
// logLevel (2026-07-28), and subscriptions/listen (2026-07-28: the
// acknowledgment, then an open stream). Lists have one page; any cursor
// is one never issued (-32602). A ping before initialize (stdio) is
// answered; a second initialize in a session is refused (-32600).
//
// # Replies
//
// Every error message is one lowercase line; data is absent or uses only
// errors, header, expected, received, supported, requested; a request value
// appears only as the single value the error is about, escaped and cut to
// 64 bytes. data.errors is distilled: one entry per JSON Pointer location,
// sorted, problems sorted and de-duplicated.
//
//	condition                                   code    HTTP  id
//	body over 1 MiB                             -32600  413   absent
//	not UTF-8 / not JSON                        -32700  400   absent
//	batch (JSON array), not an object           -32600  400   absent
//	id null, fractional, object, array, bool    -32600  400   absent
//	jsonrpc not "2.0", method missing/not str   -32600  400   echoed if readable
//	params not an object                        -32602  400   echoed
//	2026: _meta missing or mistyped             -32602  400   echoed
//	2026: MCP-Protocol-Version missing/differs  -32020  400   echoed
//	2026: _meta version not served              -32022  400   echoed
//	2026: Mcp-Method, Mcp-Name missing/differs  -32020  400   echoed
//	2026: Mcp-Param-* missing/differs/invalid   -32020  400   echoed
//	2026: unknown or removed method             -32601  404   echoed
//	2026: a POSTed JSON-RPC response            -32600  400   echoed
//	2025: unknown method                        -32601  200   echoed
//	2025: unknown or ended session              -32600  404   echoed
//	2025: MCP-Protocol-Version ≠ session's      -32600  400   echoed
//	2026: ask tool without form elicitation     -32021  400   echoed
//	unknown tool, invalid cursor                -32602  200   echoed
//	unknown prompt, missing prompt argument     -32602  200   echoed
//	resources/read of an unknown URI: 2026      -32602  200   echoed
//	  2025-xx                                   -32002  200   echoed
//	bad log level, bad completion reference     -32602  200   echoed
//	second initialize in a session              -32600  200   echoed
//	2025: no Mcp-Session-Id, 2025 version header -32600 400   echoed
//	Host not loopback on a loopback address     -32600  403   absent
//	malformed tools/call, bad initialize params -32602  200   echoed
//	2025-06-18: arguments break inputSchema     -32602  200   echoed
//	Origin neither loopback nor this host       -32600  403   absent
//	GET, or DELETE without a session            -32600  405   absent (Allow: POST)
//	notification                                —       202   (empty body)
//	DELETE of a live session                    —       204   (empty body)
//
// Precedence in 2026-07-28 (AMB-4 leaves it open): body size, JSON,
// message shape, params, _meta, MCP-Protocol-Version, version served,
// Mcp-Method, Mcp-Name, Mcp-Param-*, method. So header 2026-07-28 with no _meta version
// is -32602; header and _meta both 1900-01-01 is -32022; header 1900-01-01
// with _meta 2026-07-28 is -32020.
//
// A request asking for progress (params._meta.progressToken) of a tool run
// gets one notifications/progress before its reply: on stdio always, over
// HTTP in 2026-07-28 when Accept lists text/event-stream (the reply is then
// an SSE stream). 2025-xx HTTP replies are always JSON. A 2026-07-28
// tools/call of add whose _meta sets a logLevel gets, the same way, one
// notifications/message at that level (T-LOG-2).
//
// # Faults
//
// Faults lists the injectable defects. Each breaks one rule in one
// situation and leaves every other reply unchanged, which the tests check
// by running every case file against every fault.
package refserver
