// The MCP Inspector's CLI mode, a second official client, against corio's
// example server: each check is one `mcp-inspector --cli SERVER --method ...`.
//
//   node inspector_test.mjs SERVER [ARTICLES_DIR]   (default: a fresh temporary directory)
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";

const [server, articlesArg] = process.argv.slice(2);
const articles = articlesArg ?? mkdtempSync(join(tmpdir(), "corio-articles-"));
const cli = join(dirname(fileURLToPath(import.meta.url)), "node_modules", ".bin", "mcp-inspector");
// The Inspector keeps settings under HOME: a scratch one, never the user's.
const env = { ...process.env, HOME: mkdtempSync(join(tmpdir(), "corio-inspector-")) };

after(() => {
  rmSync(env.HOME, { recursive: true, force: true });
  if (!articlesArg) rmSync(articles, { recursive: true, force: true });
});

function inspect(...args) {
  return new Promise((resolve) => {
    execFile(cli, ["--cli", server, "--articles", articles, ...args], { env, timeout: 60000 },
             (error, stdout, stderr) => resolve({ code: error ? error.code ?? 1 : 0, stdout, stderr }));
  });
}

test("tools/list", async () => {
  const r = await inspect("--method", "tools/list");
  assert.equal(r.code, 0, r.stderr);
  const names = JSON.parse(r.stdout).tools.map((t) => t.name).sort();
  assert.deepEqual(names, ["generate_brief", "get_nba_news", "save_article"]);
});

test("tools/call get_nba_news", async () => {
  const r = await inspect("--method", "tools/call", "--tool-name", "get_nba_news", "--tool-arg", "target_date=2026-11-28");
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  assert.equal(result.isError, false);
  assert.match(result.content[0].text, /Lakers edge Suns/);
});

test("tools/call save_article refuses an escaping title", async () => {
  const r = await inspect("--method", "tools/call", "--tool-name", "save_article",
                          "--tool-arg", "title=../../x", "--tool-arg", "body_md=pwned");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).isError, true);
});

test("an unknown tool fails the call", async () => {
  const r = await inspect("--method", "tools/call", "--tool-name", "no_such_tool");
  assert.notEqual(r.code, 0);
  assert.match(r.stdout + r.stderr, /Unknown tool|-32602/);
});
