"""The ws suite, used by bench/run: corio's example_ws_echo against Boost.Beast
(beast_ws_echo.cpp), the npm `ws` package and python3-websockets (tests/http/ws-peers/),
driven in turns by ws/ws_loadgen.cpp, and its tables. See bench/ws/README.md.

Every server runs pinned to core 0, the load generator (10 connections, one binary
message in flight on each, no compression) on core 1. For each message size (1 KiB,
64 KiB) the implementations take turns, over three rounds (medians reported):
messages/s, and the server's CPU per message (user + system us from /proc/PID/stat,
sampled inside the traffic), its core's busy % and messages per server CPU-second (what
it could do given the whole core, since one load generator may not saturate it).
"""
import shutil
import subprocess

from benchlib import (PYTHON, ROOT, capacity, cpu_cells, load_turns, num, ratio, show,
                      show_peak_rss, target_path)

SIZES = [1024, 65536]
CONNS = 10
COMBOS = [(size, CONNS) for size in SIZES]  # load_turns' (size, connections)
IMPLS = ["corio", "beast", "node-ws", "python-websockets"]
NAMES = {"corio": "corio", "beast": "Beast", "node-ws": "npm ws", "python-websockets": "python websockets"}
TARGETS = {"corio": "example_ws_echo", "beast": "beast_ws_echo"}
PEERS = ROOT / "tests" / "http" / "ws-peers"  # scripts/setup runs npm ci in it


def targets(impls):
    """The C/C++ targets the selected implementations need."""
    return ["ws_loadgen"] + [TARGETS[i] for i in IMPLS if i in impls and i in TARGETS]


def timing(args):
    """(measured seconds per load run, warm-up seconds, rounds)."""
    return (1.0, 0.2, args.rounds or 1) if args.quick else (2.0, 0.3, args.rounds or 3)


def server_cmd(impl, bdir, built):
    """The command line of impl's echo server minus --port, or (None, why not)."""
    if impl == "node-ws":
        if not shutil.which("node") or not (PEERS / "node_modules" / "ws").is_dir():
            return None, f"no node or no npm ws in {PEERS} (scripts/setup bench installs it)"
        return ["node", str(PEERS / "node_peer.mjs"), "server", "--plain"], ""
    if impl == "python-websockets":
        if subprocess.run([PYTHON, "-c", "import websockets"], stderr=subprocess.DEVNULL).returncode:
            return None, f"{PYTHON} cannot import websockets (apt-get install python3-websockets)"
        return [PYTHON, str(PEERS / "py_peer.py"), "server", "--plain"], ""
    if TARGETS[impl] not in built:
        return None, f"{TARGETS[impl]} not built"
    return [str(target_path(bdir, TARGETS[impl]))], ""


def run(args, impls, bdir, built):
    """The servers at once on core 0, ws_loadgen on core 1 visiting them in turn."""
    return load_turns("ws", "ws_loadgen", server_cmd, [i for i in IMPLS if i in impls], COMBOS,
                      timing(args), args, bdir, built)


def table(results):
    val = {(r["impl"], r["metric"]): r["value"] for r in results}
    impls = [i for i in IMPLS if (i, "ws_1024_rate") in val or (i, "ws_65536_rate") in val]
    if not impls:
        print("\nWebSocket echo: no participant ran.")
        return
    peers = [p for p in impls if p != "corio" and "corio" in impls]
    hdr = ["ws echo"] + [NAMES[i] for i in impls]

    def get(impl, size, what):
        return val.get((impl, f"ws_{size}_{what}"))

    def cost(impl, size):
        user, system = get(impl, size, "cpu_user_us"), get(impl, size, "cpu_sys_us")
        return None if user is None or system is None else user + system

    def per_cpu_second(impl, size):
        return capacity(get(impl, size, "cpu_user_us"), get(impl, size, "cpu_sys_us"))

    def with_ratios(value):
        """A row per size of value(impl, size), then the corio/peer ratios."""
        return [[f"{s // 1024} KiB"] + [num(value(i, s)) for i in impls] +
                [ratio(value("corio", s), value(p, s)) for p in peers] for s in SIZES]

    ratio_hdr = hdr + [f"corio/{NAMES[p]}" for p in peers]
    show(f"WebSocket echo messages per second ({CONNS} connections, one message in flight "
         "each; higher is better)", ratio_hdr, with_ratios(lambda i, s: get(i, s, "rate")))

    def cpu(i, s):
        cells = cpu_cells(get(i, s, "cpu_user_us"), get(i, s, "cpu_sys_us"), get(i, s, "busy_pct"))
        return cells[0] if cells[1] == "n/a" else f"{cells[0]}, {cells[1]}%"
    show("WebSocket echo server CPU per message, µs user+sys (user+sys), and busy % of its core",
         hdr, [[f"{s // 1024} KiB"] + [cpu(i, s) for i in impls] for s in SIZES])
    show("WebSocket echo messages per server CPU-second (1e6 / CPU µs per msg; higher is better)",
         ratio_hdr, with_ratios(per_cpu_second))
    if "corio" in impls and "beast" in impls:
        show("WebSocket goal (issue 16): server CPU per message below Beast's",
             ["size", "corio/Beast CPU µs per msg", "verdict"],
             [[f"{s // 1024} KiB", ratio(cost("corio", s), cost("beast", s)),
               "n/a" if not cost("beast", s) or cost("corio", s) is None
               else "PASS" if cost("corio", s) < cost("beast", s) else "FAIL"] for s in SIZES])
    show_peak_rss(hdr, [val.get((i, "ws_peak_rss")) for i in impls])
    print()
    print("Ratios > 1 mean corio echoes more messages (per CPU-second); the goal's ratio < 1 "
          "means corio's server spends less CPU per message. Server on core 0, ws_loadgen "
          "(raw epoll, masked binary frames, no permessage-deflate) on core 1; loopback TCP.")
    print("Server CPU: /proc/PID/stat utime + stime, sampled while the load runs, over the "
          "messages echoed meanwhile. One load generator on one core does not saturate the "
          "fast servers (see busy %): their msgs/s is its limit, messages per CPU-second theirs.")
    if "corio" not in impls:
        print("corio: not run (example_ws_echo not built, or --impl left it out).")
