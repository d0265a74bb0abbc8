// The official MCP TypeScript SDK (Client + StdioClientTransport, or
// StreamableHTTPClientTransport) drives corio's example server, as Claude
// Desktop or any MCP host would.
//
//   node client_test.mjs SERVER [stdio|http]   (stdio by default)
//
// http: the server runs with --http 0 and says its URL on stderr; the same
// checks run over Streamable HTTP, plus the session's own (DELETE, 404).
//
// Each check is a node:test test; a failure exits non-zero (CTest sees it).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [server, mode = "stdio"] = process.argv.slice(2);
const articles = mkdtempSync(join(tmpdir(), "corio-articles-"));
const day = { target_date: "2026-11-29" };  // four headlines in the shipped news file
const children = [];
let client;
const logs = [];

// The server started with --http 0: its URL, once its stderr says it.
function startHttpServer(args) {
  const child = spawn(server, [...args, "--http", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let said = "";
    child.stderr.on("data", (chunk) => {
      said += chunk;
      const m = said.match(/serving MCP on (http:\/\/\S+)/);
      if (m) resolve(new URL(m[1]));
    });
    child.on("exit", (code) => reject(new Error(`server exited (${code}) before listening: ${said}`)));
  });
}

// A connected client for a server started with args, over this run's transport.
async function connectClient(args) {
  const c = new Client({ name: "corio-sdk-test", version: "1.0.0" });
  if (mode === "http") {
    c.url = await startHttpServer(args);  // for the checks that speak HTTP themselves
    await c.connect(new StreamableHTTPClientTransport(c.url));
  } else {
    await c.connect(new StdioClientTransport({ command: server, args, stderr: "ignore" }));
  }
  return c;
}

before(async () => {
  client = await connectClient(["--articles", articles]);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
});

after(async () => {
  await client.close();
  for (const child of children) child.kill("SIGINT");
  rmSync(articles, { recursive: true, force: true });
});

test("initialize negotiates the SDK's revision and names the server", () => {
  assert.equal(client.getServerVersion().name, "nba-daily-brief");
  assert.ok(client.getServerCapabilities().tools);
  assert.equal(client.transport.protocolVersion ?? "2025-11-25", "2025-11-25");
});

test("tools/list has the three tools with their schemas", async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ["generate_brief", "get_nba_news", "save_article"]);
  const news = tools.find((t) => t.name === "get_nba_news");
  assert.deepEqual(news.inputSchema.required, ["target_date"]);
});

test("get_nba_news returns text and structured content", async () => {
  const r = await client.callTool({ name: "get_nba_news", arguments: day });
  assert.equal(r.isError, false);
  assert.match(r.content[0].text, /Nuggets extend home streak/);
  assert.equal(r.structuredContent.items.length, 4);
});

test("save_article writes the file; an escaping title is refused with isError", async () => {
  const ok = await client.callTool({ name: "save_article", arguments: { title: "brief", body_md: "# hi\n" } });
  assert.equal(ok.isError, false, JSON.stringify(ok));
  assert.equal(readFileSync(join(articles, "brief.md"), "utf8"), "# hi\n");
  const bad = await client.callTool({ name: "save_article", arguments: { title: "../../x", body_md: "pwned" } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /refused title/);
  assert.equal(existsSync(join(articles, "../../x.md")), false);
});

test("an unknown tool is a protocol error -32602", async () => {
  await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (e) => e.code === -32602);
});

test("invalid arguments are a tool error the model can read", async () => {
  const r = await client.callTool({ name: "get_nba_news", arguments: { target_date: 20261129 } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /target_date/);
});

test("a tool that refuses its input reports isError, and the server lives on", async () => {
  const r = await client.callTool({ name: "get_nba_news", arguments: { target_date: "29/11/2026" } });
  assert.equal(r.isError, true);
  assert.deepEqual(await client.ping(), {});
});

test("a handler that throws is an isError result, not a dead server", async () => {
  // A second server whose articles directory cannot exist (under a file):
  // save_article's write throws inside the handler.
  const broken = await connectClient(["--articles", "/dev/null/articles"]);
  const r = await broken.callTool({ name: "save_article", arguments: { title: "t", body_md: "b" } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /Tool save_article failed/);
  assert.deepEqual(await broken.ping(), {});
  await broken.close();
});

test("progress notifications arrive for a long call", async () => {
  const progress = [];
  const r = await client.callTool({ name: "generate_brief", arguments: day }, undefined, {
    onprogress: (p) => progress.push(p.progress),
  });
  assert.equal(r.isError, false);
  // The server sends 1..4, then the result. The SDK runs notification
  // handlers a microtask late but responses at once, so when the last
  // notification and the result arrive in one read it drops that
  // notification ("unknown token"): accept 1..3 or 1..4.
  assert.ok(progress.length >= 3, JSON.stringify(progress));
  assert.deepEqual(progress, [1, 2, 3, 4].slice(0, progress.length));
});

test("two slow calls overlap: together they take about one, not two", async () => {
  const start = performance.now();
  await Promise.all([
    client.callTool({ name: "generate_brief", arguments: day }),
    client.callTool({ name: "generate_brief", arguments: day }),
  ]);
  const seconds = (performance.now() - start) / 1000;
  // One call sleeps 4 x 0.3 s; in sequence two would need 2.4 s.
  assert.ok(seconds >= 1.1 && seconds < 2.2, `took ${seconds} s`);
});

test("a cancelled call is abandoned and the server keeps answering", async () => {
  const ac = new AbortController();
  const call = client.callTool({ name: "generate_brief", arguments: day }, undefined, { signal: ac.signal });
  setTimeout(() => ac.abort("changed my mind"), 400);
  await assert.rejects(call);
  assert.deepEqual(await client.ping(), {});
});

test("logging follows logging/setLevel", async () => {
  await client.setLoggingLevel("info");
  logs.length = 0;
  await client.callTool({ name: "get_nba_news", arguments: day });
  assert.ok(logs.some((l) => l.level === "info" && /2026-11-29/.test(l.data)), JSON.stringify(logs));
  await client.setLoggingLevel("error");
  logs.length = 0;
  await client.callTool({ name: "get_nba_news", arguments: day });
  assert.deepEqual(logs, []);
});

if (mode === "http") {
  test("http: the session has an id; DELETE ends it and its id then gets 404", async () => {
    const c = await connectClient(["--articles", articles]);
    const sessionId = c.transport.sessionId;
    assert.match(sessionId ?? "", /^[0-9a-f]{32}$/);
    assert.deepEqual(await c.ping(), {});
    await c.transport.terminateSession();
    const r = await fetch(c.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream",
                 "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
    });
    assert.equal(r.status, 404);
    assert.equal((await r.json()).error.code, -32001);
    await c.close();
  });

  test("http: a foreign Origin is refused (DNS rebinding)", async () => {
    const r = await fetch(client.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream",
                 Origin: "http://evil.example" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
                             params: { protocolVersion: "2025-11-25", capabilities: {},
                                       clientInfo: { name: "x", version: "1" } } }),
    });
    assert.equal(r.status, 403);
  });
}
