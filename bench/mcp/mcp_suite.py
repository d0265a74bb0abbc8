"""The mcp suite, used by bench/run: tools/call round trips over stdio pipes, then over
Streamable HTTP.

mcp_roundtrip (a plain-POSIX driver) starts each server as its child, initializes
it, and keeps N tools/call "echo" requests in flight for a fixed time: N = 1 measures
strict round trips, N = 16 throughput. Servers: corio (corio_mcp_echo_server) and the
official TypeScript SDK's McpServer (ts_echo_server.mjs, Node, the SDK scripts/setup
installs under tests/mcp/sdk). The driver runs on one core, the server on the other;
implementations take turns over rounds and each rate is the median.

Over HTTP each server runs with --http PORT (corio: mcp::serve_streamable_http; the SDK:
StreamableHTTPServerTransport on Node's http module); the harness opens a session
(initialize + notifications/initialized) and wrk (wrk_call.lua) POSTs tools/call "echo"
into it over 1 and 16 connections; each answer is a JSON body (corio: a quick answer with
nothing before it) or an SSE stream ending with the result (the SDK).
"""
import json
import shutil
import urllib.request
from pathlib import Path

from benchlib import free_loopback_port, ratio, show, start_server, stop_server
import http_suite

HERE = Path(__file__).resolve().parent
SDK = HERE.parent.parent / "tests" / "mcp" / "sdk" / "node_modules" / "@modelcontextprotocol" / "sdk"
IMPLS = ["corio", "ts-sdk"]
INFLIGHT = [1, 16]


def server_cmd(impl, bdir, built, log):
    """The server's command line, or None (with a message) when it cannot run here."""
    if impl == "corio":
        if "corio_mcp_echo_server" not in built:
            log("mcp: corio_mcp_echo_server not built; skipping corio")
            return None
        return [str(bdir / "bench" / "corio_mcp_echo_server")]
    node = shutil.which("node")
    if not node or not SDK.is_dir():
        log("mcp: no node or no TypeScript SDK (run scripts/setup); skipping ts-sdk")
        return None
    return [node, str(HERE / "ts_echo_server.mjs")]


def run(args, impls, bdir, built, pinned, run_json_lines, log):
    if "mcp_roundtrip" not in built:
        log("mcp: mcp_roundtrip not built: no mcp suite")
        return []
    duration, rounds = (1.0, 1) if args.quick else (3.0, 3)
    two_cores = args.cpu >= 0
    servers = {i: cmd for i in IMPLS if i in impls
               for cmd in [server_cmd(i, bdir, built, log)] if cmd}
    samples = {}
    for _ in range(rounds):
        for n in INFLIGHT:
            for impl, cmd in servers.items():
                driver = [str(bdir / "bench" / "mcp_roundtrip"), "--impl", impl, "--duration",
                          str(duration), "--inflight", str(n), "--"]
                line = pinned(driver + pinned(cmd, 0 if two_cores else -1), 1 if two_cores else -1)
                for r in run_json_lines(line, timeout=duration + 60):
                    samples.setdefault((r["impl"], r["metric"]), []).append(r)
    return [sorted(rs, key=lambda r: r["value"])[len(rs) // 2] for rs in samples.values()]


def open_session(url):
    """initialize and notifications/initialized: the session's id."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(message):
        req = urllib.request.Request(url, json.dumps(message).encode(), headers)
        with urllib.request.urlopen(req, timeout=10) as r:
            r.read()
            return r.headers.get("Mcp-Session-Id")

    sid = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "bench", "version": "1"}}})
    headers.update({"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return sid


def run_http(args, impls, bdir, built, log):
    """Each server on core 0 with --http, wrk on core 1, in turns over rounds."""
    duration, rounds = (1, 1) if args.quick else (3, 3)
    two_cores = args.cpu >= 0
    servers = {}
    try:
        for impl in (i for i in IMPLS if i in impls):
            cmd = server_cmd(impl, bdir, built, log)
            if cmd is None:
                continue
            port = free_loopback_port()
            proc = start_server(cmd + ["--http", str(port)], port, 0 if two_cores else -1, "mcp", impl)
            if proc is not None:
                servers[impl] = (proc, f"http://127.0.0.1:{port}/mcp")
        samples = {}
        for _ in range(rounds):
            for n in INFLIGHT:
                for impl, (_, url) in servers.items():
                    env = {"MCP_SESSION": open_session(url)}
                    report = http_suite.wrk(url, duration, 1 if two_cores else -1, False, conns=n,
                                            script=HERE / "wrk_call.lua", env=env) or {}
                    if "rps" in report and not report["errors"]:
                        metric = f"mcp_http_call_rate_{n}"
                        samples.setdefault((impl, metric), []).append(
                            {"impl": impl, "metric": metric, "value": report["rps"], "unit": "calls/s"})
        return [sorted(rs, key=lambda r: r["value"])[len(rs) // 2] for rs in samples.values()]
    finally:
        for proc, _ in servers.values():
            stop_server(proc)


def table(results):
    val = {(r["impl"], r["metric"]): r["value"] for r in results}
    impls = [i for i in IMPLS if any(r["impl"] == i for r in results)]
    for prefix, title, note in [
            ("mcp_call_rate", "MCP tools/call over stdio pipes",
             "Driver (mcp_roundtrip, plain POSIX) on core 1, server on core 0"),
            ("mcp_http_call_rate", "MCP tools/call over Streamable HTTP",
             "wrk (wrk_call.lua, one session, JSON or SSE answers) on core 1, server on core 0")]:
        hdr = ["in flight"] + impls + (["corio/ts-sdk"] if len(impls) == 2 else [])
        rows = []
        for n in INFLIGHT:
            cells = [val.get((i, f"{prefix}_{n}")) for i in impls]
            row = [str(n)] + ["n/a" if c is None else f"{c:,.0f}" for c in cells]
            if len(impls) == 2:
                row.append(ratio(cells[0], cells[1]))
            rows.append(row)
        show(f"{title} (calls/s, median of rounds; higher is better)", hdr, rows)
        print(f"{note}; 1 in flight is a strict round trip, 16 keeps the server busy.")
