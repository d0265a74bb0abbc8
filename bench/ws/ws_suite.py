#!/usr/bin/python3
"""The WebSocket echo suite: corio's example_ws_echo against Boost.Beast (beast_ws_echo.cpp),
the npm `ws` package and python3-websockets (tests/http/ws-peers/), in one run.

Every server runs pinned to core 0, the load generator (ws_loadgen.cpp: 10 connections,
one message in flight on each, binary, no compression) on core 1. For each message size
(1 KiB, 64 KiB) the implementations take turns, over three rounds (medians reported):
messages/s, and the server's CPU per message (user + system us from /proc/PID/stat,
sampled inside the traffic), its core's busy % and messages per server CPU-second (what
it could do given the whole core, since one load generator may not saturate it).

  bench/ws/ws_suite.py                    # ~1 min
  bench/ws/ws_suite.py --quick            # one round, shorter runs
  bench/ws/ws_suite.py --build-dir DIR    # default build/release, configured with
                                          #   -DCORIO_BUILD_BENCH=ON (targets example_ws_echo,
                                          #   ws_loadgen, beast_ws_echo)
"""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchlib import (PYTHON, ROOT, cpu_sample, free_loopback_port, json_lines, log, pinned,  # noqa: E402
                      server_cpu, show, start_server, stop_server)

SIZES = [1024, 65536]
CONNS = 10
IMPLS = ["corio", "beast", "node-ws", "python-websockets"]
PEERS = ROOT / "tests" / "http" / "ws-peers"


def server_cmd(impl, bdir):
    return {
        "corio": [str(bdir / "bin" / "example_ws_echo")],
        "beast": [str(bdir / "bench" / "beast_ws_echo")],
        "node-ws": ["node", str(PEERS / "node_peer.mjs"), "server", "--plain"],
        "python-websockets": [PYTHON, str(PEERS / "py_peer.py"), "server", "--plain"],
    }[impl]


def load(cmd, pid, duration, warmup):
    """Runs one load; samples the server's CPU inside the measured window."""
    lg = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    time.sleep(warmup + 0.1)
    before = cpu_sample(pid)
    time.sleep(duration - 0.2)
    after = cpu_sample(pid)
    out, _ = lg.communicate(timeout=duration + 30)
    results = json_lines(out)
    if not results:
        return None
    r = results[0]
    window = after[0] - before[0] if before and after else 0
    cpu = server_cpu(before, after, r["msgs_per_s"] * window) if window else {}
    r.update(cpu)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", type=Path, default=ROOT / "build" / "release")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    duration, warmup, rounds = (1.0, 0.2, 1) if args.quick else (2.0, 0.3, 3)
    loadgen = args.build_dir / "bench" / "ws_loadgen"
    servers = {}
    samples = {}
    try:
        for impl in IMPLS:
            port = free_loopback_port()
            proc = start_server(server_cmd(impl, args.build_dir) + ["--port", str(port)], port, 0, "ws", impl)
            if proc is not None:
                servers[impl] = (proc, port)
        for _ in range(rounds):
            for size in SIZES:
                for impl, (proc, port) in servers.items():
                    cmd = pinned([str(loadgen), "--port", str(port), "--size", str(size), "--conns", str(CONNS),
                                  "--duration", str(duration), "--warmup", str(warmup), "--impl", impl], 1)
                    r = load(cmd, proc.pid, duration, warmup)
                    if r:
                        samples.setdefault((impl, size), []).append(r)
    finally:
        for proc, _ in servers.values():
            stop_server(proc)
    rows = []
    for size in SIZES:
        for impl in IMPLS:
            rs = samples.get((impl, size))
            if not rs:
                continue
            med = {k: statistics.median(r[k] for r in rs) for k in ("msgs_per_s", "cpu_user_us", "cpu_sys_us", "busy_pct")
                   if all(k in r for r in rs)}
            cpu = med.get("cpu_user_us", 0) + med.get("cpu_sys_us", 0)
            rows.append([f"{size // 1024} KiB", impl, f"{med['msgs_per_s']:,.0f}",
                         f"{med.get('cpu_user_us', 0):.2f}", f"{med.get('cpu_sys_us', 0):.2f}", f"{cpu:.2f}",
                         f"{med.get('busy_pct', 0):.0f}", f"{1e6 / cpu:,.0f}" if cpu else "-"])
    show(f"WebSocket echo, {CONNS} connections, one message in flight each (medians of {rounds})",
         ["size", "server", "msgs/s", "user us/msg", "sys us/msg", "CPU us/msg", "busy %", "msgs/CPU-s"], rows)


if __name__ == "__main__":
    main()
