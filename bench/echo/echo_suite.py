"""The echo suite, used by bench/run: one TCP echo server per implementation, driven in
turns by echo/loadgen.cpp, and its tables. See bench/echo/README.md for the protocol.
"""
from pathlib import Path

from benchlib import (HERE, PYTHON, build_go, capacity, corio_subcommand_help, cpu_cells, load_turns, num,
                      ratio, show, show_peak_rss, target_path)

# (message size, connections); implementations in table order.
COMBOS = [(1024, 10), (1024, 100), (1024, 1000), (65536, 10), (65536, 100), (65536, 1000)]
# corio is corio's server on epoll, corio-uring the same on io_uring (the default, `best`,
# on Linux 6.1 and later): CORIO_BACKEND says which, for both;
# uring-fixed the C io_uring server with --fixed-files (issue 19; not in the default
# --impl list: ask for it). corio-base and corio-uring-base are the same two from another
# build (bench/run --base-build-dir: an older commit's), in turns with this one's.
IMPLS = ["corio", "corio-uring", "corio-base", "corio-uring-base", "epoll", "uring", "uring-fixed", "asio", "libuv",
         "go", "asyncio", "uvloop"]
TARGETS = {"epoll": "epoll_echo", "uring": "uring_echo", "uring-fixed": "uring_echo",
           "asio": "asio_echo", "libuv": "uv_echo", "corio": "corio_cli", "corio-uring": "corio_cli"}
NAMES = {"corio": "corio (epoll)", "corio-uring": "corio (io_uring)", "corio-base": "corio (base build)",
         "corio-uring-base": "corio (io_uring, base build)", "epoll": "epoll (C)",
         "uring": "io_uring (C)", "uring-fixed": "io_uring fixed files (C)", "asio": "Asio",
         "libuv": "libuv", "go": "Go", "asyncio": "asyncio", "uvloop": "uvloop"}
# (ours, peer) ratio columns: each backend against its own limit, and against each other.
RATIOS = [("corio", "epoll"), ("corio-uring", "uring"), ("corio-uring", "corio"),
          ("corio", "corio-base"), ("corio-uring", "corio-uring-base"),
          ("uring-fixed", "uring"), ("corio", "asio"), ("corio", "go"), ("corio", "uvloop")]


def targets(impls):
    """The C/C++ targets the selected implementations need."""
    return ["echo_loadgen"] + [TARGETS[i] for i in IMPLS if i in impls and i in TARGETS]


def timing(args):
    """(measured seconds per load run, warm-up seconds, rounds)."""
    return (1.0, 0.2, args.rounds or 1) if args.quick else (2.0, 0.3, args.rounds or 3)


def server_cmd(impl, bdir, built, base=None):
    """The command line of impl's echo server minus --port, or (None, why not). base: the
    --base-build-dir, where the -base impls' corio comes from."""
    if impl.endswith("-base"):
        base = Path(base).resolve()
        return server_cmd(impl[:-len("-base")], base, {"corio_cli"} if target_path(
            base, "corio_cli").exists() else set())
    if impl == "go":
        path = build_go(bdir, "go_echo")
        return ([str(path)], "") if path else (None, "go_echo not built")
    if impl in ("asyncio", "uvloop"):
        return [PYTHON, str(HERE / "echo" / "asyncio_echo.py")] + (["--uvloop"] if impl == "uvloop" else []), ""
    target = TARGETS[impl]
    if target not in built:
        return None, f"{target} not built"
    path = target_path(bdir, target)
    if impl.startswith("corio"):
        if corio_subcommand_help(path, "echo-server") is None:
            return None, f"{path} has no echo-server subcommand yet"
        backend = "io_uring" if impl.startswith("corio-uring") else "epoll"
        return ["env", f"CORIO_BACKEND={backend}", str(path), "echo-server"], ""
    return [str(path)] + (["--fixed-files"] if impl == "uring-fixed" else []), ""


def run(args, impls, bdir, built):
    """The servers at once on core 0, echo_loadgen on core 1 visiting them in turn."""
    if args.base_build_dir:
        impls = impls + [f"{i}-base" for i in ("corio", "corio-uring") if i in impls]

    def cmd(impl, bdir, built):
        return server_cmd(impl, bdir, built, args.base_build_dir)
    return load_turns("echo", "echo_loadgen", cmd, [i for i in IMPLS if i in impls], COMBOS,
                      timing(args), args, bdir, built)


def label(size, conns):
    return f"{size // 1024} KiB x {conns} conns"


def table(results):
    val = {(r["impl"], r["metric"]): r["value"] for r in results}
    impls = [i for i in IMPLS if any(r["impl"] == i for r in results)]
    pairs = [(a, b) for a, b in RATIOS if a in impls and b in impls]
    hdr = ["echo"] + [NAMES[i] for i in impls]
    ratio_hdr = hdr + [f"{NAMES[a]}/{NAMES[b]}" for a, b in pairs]

    def get(impl, size, conns, what):
        return val.get((impl, f"echo_{size}x{conns}_{what}"))

    def with_ratios(size, conns, value):
        """A row of value(impl, size, conns) per implementation, then the ratio columns."""
        cells = {i: value(i, size, conns) for i in impls}
        return [label(size, conns)] + [num(cells[i]) for i in impls] + \
            [ratio(cells[a], cells[b]) for a, b in pairs]

    def metric(what):
        return lambda i, s, c: get(i, s, c, what)

    show("Echo round trips per second (msg/s; higher is better)", ratio_hdr,
         [with_ratios(s, c, metric("rate")) for s, c in COMBOS])
    show("Echo payload throughput (MB/s, one direction)", hdr,
         [[label(s, c)] + [num(get(i, s, c, "mbps")) for i in impls] for s, c in COMBOS])

    def lat(i, s, c):
        a, b = get(i, s, c, "p50"), get(i, s, c, "p99")
        return "n/a" if a is None or b is None else f"{a:,.0f} / {b:,.0f}"
    show("Echo round-trip latency, p50 / p99 (us)", hdr,
         [[label(s, c)] + [lat(i, s, c) for i in impls] for s, c in COMBOS])

    def cpu(i, s, c):
        cost, busy = cpu_cells(get(i, s, c, "cpu_user_us"), get(i, s, c, "cpu_sys_us"),
                               get(i, s, c, "busy_pct"))
        return cost if busy == "n/a" else f"{cost}, {busy}%"
    show("Echo server CPU per round trip, µs user+sys (user+sys), and busy % of its core", hdr,
         [[label(s, c)] + [cpu(i, s, c) for i in impls] for s, c in COMBOS])

    def per_cpu_second(i, s, c):
        return capacity(get(i, s, c, "cpu_user_us"), get(i, s, c, "cpu_sys_us"))
    show("Echo round trips per server CPU-second (1e6 / CPU µs per msg; higher is better)",
         ratio_hdr, [with_ratios(s, c, per_cpu_second) for s, c in COMBOS])
    show_peak_rss(hdr, [val.get((i, "echo_peak_rss")) for i in impls])
    print()
    print("Ratios > 1 mean corio is faster / cheaper. Closed loop: each connection sends one "
          "message, waits for all of its bytes to come back, sends the next. Server on core 0, "
          "load generator (echo/loadgen.cpp, raw epoll) on core 1; loopback TCP, TCP_NODELAY.")
    print("Server CPU: /proc/PID/stat utime + stime, sampled while the load runs, over the "
          "round trips made meanwhile; busy % = that CPU time over the wall time. A server whose "
          "core is well under 100% busy waits on the load generator (or shares core 0 with other "
          "work on a busy machine), so its msg/s is not its own; round trips per CPU-second is "
          "what its core could do on its own.")
    if "corio" not in impls:
        print("corio: not run (no `corio echo-server` in this build, or --impl left it out).")
