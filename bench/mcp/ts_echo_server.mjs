// The peer for bench/mcp: the official TypeScript SDK's McpServer with one
// trivial tool, "echo", as corio_echo_server.cpp has it: over stdio, or
// over Streamable HTTP on 127.0.0.1:PORT/mcp with --http PORT (Node's own
// http module, one transport and server per session, as the SDK's
// stateful example does). Uses the SDK scripts/setup installs for the tests.
// --keep-alive S: Node's keep-alive timeout for idle connections (its default
// is 5 s; 0: none), for bench/idle, which holds thousands of idle sessions.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";

import { McpServer } from "../../tests/mcp/sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js";
import { StdioServerTransport } from "../../tests/mcp/sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js";
import { StreamableHTTPServerTransport } from "../../tests/mcp/sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js";
import { z } from "../../tests/mcp/sdk/node_modules/zod/index.js";

function echoServer() {
  const server = new McpServer({ name: "ts-echo", version: "1.0.0" });
  server.registerTool("echo", { description: "Says it back", inputSchema: { text: z.string() } },
                      async ({ text }) => ({ content: [{ type: "text", text }] }));
  return server;
}

const at = process.argv.indexOf("--http");
if (at < 0) {
  await echoServer().connect(new StdioServerTransport());
} else {
  const sessions = new Map();  // session id -> transport
  const http = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = id && sessions.get(id);
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      await echoServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  const keepAlive = process.argv.indexOf("--keep-alive");
  if (keepAlive >= 0) http.keepAliveTimeout = Number(process.argv[keepAlive + 1]) * 1000;
  http.listen(Number(process.argv[at + 1]), "127.0.0.1");
}
