// The peer for bench/mcp: the official TypeScript SDK's McpServer over
// stdio with one trivial tool, "echo", as corio_echo_server.cpp has it.
// Uses the SDK that scripts/setup installs for the tests (tests/mcp/sdk).
import { McpServer } from "../../tests/mcp/sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js";
import { StdioServerTransport } from "../../tests/mcp/sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js";
import { z } from "../../tests/mcp/sdk/node_modules/zod/index.js";

const server = new McpServer({ name: "ts-echo", version: "1.0.0" });
server.registerTool("echo", { description: "Says it back", inputSchema: { text: z.string() } },
                    async ({ text }) => ({ content: [{ type: "text", text }] }));
await server.connect(new StdioServerTransport());
