"""The mcp suite, used by bench/run: tools/call round trips over stdio pipes.

mcp_roundtrip (a plain-POSIX driver) starts each server as its child, initializes
it, and keeps N tools/call "echo" requests in flight for a fixed time: N = 1 measures
strict round trips, N = 16 throughput. Servers: corio (corio_mcp_echo_server) and the
official TypeScript SDK's McpServer (ts_echo_server.mjs, Node, the SDK scripts/setup
installs under tests/mcp/sdk). The driver runs on one core, the server on the other;
implementations take turns over rounds and each rate is the median.
"""
import shutil
from pathlib import Path

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


def table(results):
    val = {(r["impl"], r["metric"]): r["value"] for r in results}
    impls = [i for i in IMPLS if any(r["impl"] == i for r in results)]
    print()
    print("MCP tools/call over stdio pipes (calls/s, median of rounds; higher is better)")
    hdr = ["in flight"] + impls + (["corio/ts-sdk"] if len(impls) == 2 else [])
    rows = []
    for n in INFLIGHT:
        cells = [val.get((i, f"mcp_call_rate_{n}")) for i in impls]
        row = [str(n)] + ["n/a" if c is None else f"{c:,.0f}" for c in cells]
        if len(impls) == 2:
            row.append("n/a" if None in cells or not cells[1] else f"{cells[0] / cells[1]:.2f}x")
        rows.append(row)
    widths = [max(len(str(x)) for x in col) for col in zip(hdr, *rows)]
    fmt_row = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    print(fmt_row(hdr))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(fmt_row(r))
    print("Driver (mcp_roundtrip, plain POSIX) on core 1, server on core 0; 1 in flight is a strict "
          "round trip, 16 keeps the server busy.")
