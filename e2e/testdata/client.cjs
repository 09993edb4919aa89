// A real MCP client for the e2e tests: the TypeScript SDK's Client, over
// Streamable HTTP or stdio. It connects (initialize, initialized), lists
// the tools, calls one, and closes, then prints one JSON line: the tool
// names and the call's result. The SDK comes from the pinned npm
// packages (.ci/run installs them; NODE_PATH names their node_modules).
//
//   node client.cjs http URL TOOL ARGS_JSON
//   node client.cjs stdio TOOL ARGS_JSON COMMAND [ARG...]
'use strict';
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ListRootsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

async function main(argv) {
  const [mode, ...rest] = argv;
  let transport, tool, args;
  if (mode === 'http' && rest.length === 3) {
    const [url, t, a] = rest;
    transport = new StreamableHTTPClientTransport(new URL(url));
    tool = t;
    args = JSON.parse(a);
  } else if (mode === 'stdio' && rest.length >= 3) {
    const [t, a, command, ...cmdArgs] = rest;
    transport = new StdioClientTransport({ command, args: cmdArgs, stderr: 'inherit', env: process.env });
    tool = t;
    args = JSON.parse(a);
  } else {
    throw new Error('usage: client.cjs http URL TOOL ARGS_JSON | stdio TOOL ARGS_JSON COMMAND [ARG...]');
  }
  // With the roots capability: a server may then ask for them
  // (roots/list), and the relays pair that request with this answer.
  const client = new Client({ name: 'wymcp-e2e-ts-client', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///tmp/wymcp-e2e', name: 'e2e' }] }));
  client.onerror = (err) => console.error('client error:', err && err.message);
  await client.connect(transport);
  const listed = await client.listTools();
  const result = await client.callTool({ name: tool, arguments: args });
  await client.close();
  return { server: client.getServerVersion(), tools: listed.tools.map((t) => t.name), result };
}

// Bounded: a client that hangs is a failed test, not a stuck one.
const timer = setTimeout(() => {
  console.error('client: no result within 60s');
  process.exit(2);
}, 60000);

main(process.argv.slice(2)).then(
  (out) => {
    clearTimeout(timer);
    process.stdout.write(JSON.stringify(out) + '\n');
  },
  (err) => {
    clearTimeout(timer);
    console.error('client failed:', err && err.stack ? err.stack : err);
    process.exit(1);
  },
);
