"""Process and table helpers shared by bench/run and the suite modules (echo/, http/).

Everything here is about running programs the way the benchmarks need them -- pinned to
a core, listening on a free loopback port, stopped cleanly -- and reading what the
kernel says about them (/proc: peak RSS, CPU time). Nothing here knows a suite.
"""
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent  # bench/
ROOT = HERE.parent
PYTHON = "/usr/bin/python3"  # Debian's python3 (python3-uvloop); `python3` may be a pyenv shim


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def pinned(cmd, cpu):
    return (["taskset", "-c", str(cpu)] if shutil.which("taskset") and cpu >= 0 else []) + cmd


def target_path(bdir, target):
    # The corio tool and the examples are written to <build>/bin (tools/ and
    # examples/CMakeLists.txt); benchmarks to <build>/bench.
    if target == "corio_cli":
        return bdir / "bin" / "corio"
    return bdir / ("bin" if target.startswith("example_") else "bench") / target


def build_go(bdir, name):
    """bench/peers/<name>.go built into bdir/bench (go build caches): its path, or None
    with a message (scripts/setup bench installs golang-go)."""
    if not shutil.which("go"):
        log(f"no `go` (scripts/setup bench installs golang-go): no {name}")
        return None
    out = Path(bdir) / "bench" / name
    p = subprocess.run(["go", "build", "-o", str(out), str(HERE / "peers" / f"{name}.go")],
                       capture_output=True, text=True)
    if p.returncode != 0:
        log(f"go build {name} failed: {p.stderr.strip()}")
        return None
    return out


def run_json_lines(cmd, timeout=None):
    """Run cmd; the JSON objects it printed one per line on stdout ([] if it timed out)."""
    log("+", " ".join(map(str, cmd)))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        log(f"  timed out after {timeout} s")
        return []
    if p.returncode != 0:
        log(f"  exited with {p.returncode}")
    return json_lines(p.stdout)


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def corio_subcommand_help(binary, name):
    """`corio NAME --help`'s text when NAME is a subcommand with a --port option, else None."""
    try:
        p = subprocess.run([str(binary), name, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    # CLI11 prints the top-level help (exit 0) for an unknown subcommand with --help: look
    # for the subcommand's own --port option too.
    return p.stdout if p.returncode == 0 and "--port" in p.stdout else None


def server_client_cpus(args):
    """(server core, load core): 0 and 1, or no pinning (-1) with --cpu -1 or one core."""
    pin = args.cpu >= 0 and (os.cpu_count() or 1) >= 2
    return (0, 1) if pin else (-1, -1)


def free_loopback_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(proc, port, timeout=15.0):
    """True once 127.0.0.1:port accepts a connection; False if proc dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def start_server(cmd, port, cpu, suite, impl):
    """Start cmd pinned to cpu; the process once it listens on 127.0.0.1:port, else None.
    taskset execs the server, so the process's pid is the server's own."""
    cmd = pinned(cmd, cpu)
    log("+", " ".join(cmd))
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    if wait_listening(proc, port):
        return proc
    log(f"{suite}: {impl} server did not listen on 127.0.0.1:{port}; skipping it")
    stop_server(proc)
    return None


def stop_server(proc):
    """SIGTERM, then SIGKILL after 5 s. nginx's master needs the SIGTERM: it stops its
    worker on the way out, which a SIGKILL would leave behind."""
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def running_servers(cmds, cpu, suite):
    """cmds: {impl: command line, to which --port P is added}. Each starts pinned to cpu
    on a free port; yields {impl: (proc, port)} of those that listen, and stops them all
    on the way out."""
    servers = {}
    try:
        for impl, cmd in cmds.items():
            port = free_loopback_port()
            proc = start_server(cmd + ["--port", str(port)], port, cpu, suite, impl)
            if proc is not None:
                servers[impl] = (proc, port)
        yield servers
    finally:
        for proc, _ in servers.values():
            stop_server(proc)


def load_turns(suite, loadgen, server_cmd, impls, combos, timing, args, bdir, built):
    """A suite of servers driven by one load generator. Every impl's server (server_cmd(
    impl, bdir, built): its command line minus --port, or (None, why not)) runs at once on
    core 0 (idle ones cost nothing), each on its own port; the load generator (target
    loadgen, taking --port --size --conns --duration --warmup --impl) on core 1 visits
    them in turn, combination (size, conns) by combination, round after round, so that a
    noisy moment of the shared machine hits them all alike instead of whichever ran then
    (see load() for what the load generator prints). timing is (duration, warm-up, rounds); a server that exits leaves the turns. Returns
    each metric's median over rounds, and every server's {suite}_peak_rss."""
    if loadgen not in built:
        log(f"{loadgen} not built: no {suite} suite")
        return []
    cmds = {}
    for impl in impls:
        cmd, why = server_cmd(impl, bdir, built)
        if cmd is None:
            log(f"{suite}: skipping {impl}: {why}")
        else:
            cmds[impl] = cmd
    loadgen = target_path(bdir, loadgen)
    server_core, load_core = server_client_cpus(args)
    duration, warmup, rounds = timing
    samples = {}  # (impl, metric) -> [results]
    with running_servers(cmds, server_core, suite) as servers:
        for _ in range(rounds):
            for size, conns in combos:
                for impl, (proc, port) in list(servers.items()):
                    cmd = pinned([str(loadgen), "--port", str(port), "--size", str(size),
                                  "--conns", str(conns), "--duration", str(duration),
                                  "--warmup", str(warmup), "--impl", impl], load_core)
                    for r in load(cmd, proc.pid, duration, warmup):
                        samples.setdefault((r["impl"], r["metric"]), []).append(r)
                    if proc.poll() is not None:
                        log(f"{suite}: {impl} server exited with {proc.returncode}")
                        del servers[impl]
        results = median_results(samples)
        for impl, (proc, _) in servers.items():
            rss = peak_rss(proc.pid)
            if rss is not None:
                results.append({"impl": impl, "metric": f"{suite}_peak_rss", "value": rss, "unit": "bytes"})
    return results


# The server's CPU is sampled inside the load's traffic, this long before it stops, so
# that a late wake-up of this (unpinned) process still samples while messages flow.
CPU_MARGIN = 0.1


def load(cmd, server_pid, duration, warmup):
    """One load-generator run: its JSON result lines plus the server's CPU metrics, [] on
    failure. The server's CPU is sampled while the load runs -- from the end of the
    warm-up to just before the end -- not around the whole process, which would count
    the connects, the warm-up and the drain against the measured rate. In steady state
    CPU per message is then (busy fraction) / (messages per second). The load generator
    prints "connected" first, once its connections are up: the clock starts there (with
    a small listen backlog, 1,000 connects can take seconds of SYN retries). The rate is
    the result whose metric ends in _rate; the CPU metrics take its name minus that."""
    log("+", " ".join(cmd))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()  # "connected": its warm-up starts now
        start = time.monotonic()
        time.sleep(warmup)
        before = cpu_sample(server_pid)
        time.sleep(max(0.0, start + warmup + duration - CPU_MARGIN - time.monotonic()))
        after = cpu_sample(server_pid)
        out, _ = proc.communicate(timeout=duration + warmup + 30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        log("  load generator timed out")
        return []
    if proc.returncode != 0:
        log(f"  exited with {proc.returncode}")
        return []
    results = json_lines(out)
    rate = next((r for r in results if r["metric"].endswith("_rate")), None)
    if rate is not None and before is not None and after is not None:
        key = rate["metric"].removesuffix("_rate")
        cpu = server_cpu(before, after, rate["value"] * (after[0] - before[0]))
        results += [{"impl": rate["impl"], "metric": f"{key}_{m}", "value": v, "unit": CPU_UNITS[m]}
                    for m, v in cpu.items()]
    return results


def peak_rss(pid):
    """The process's peak resident set (VmHWM) in bytes, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def cpu_sample(pid):
    """(monotonic s, user CPU s, system CPU s) of the process (all its threads) now, or
    None once it is gone. The kernel counts in clock ticks (10 ms at USER_HZ 100), so a
    window of a second or more is needed for a 1% reading."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 2, the command name, may hold spaces and parentheses: count from the last ')'.
    # What follows it is field 3 onwards, so utime (field 14) and stime (15) are at 11, 12.
    fields = stat[stat.rindex(")") + 2:].split()
    tick = os.sysconf("SC_CLK_TCK")
    return time.monotonic(), int(fields[11]) / tick, int(fields[12]) / tick


def server_cpu(before, after, requests):
    """The server's CPU cost between two cpu_sample()s spanning `requests` requests:
    {"cpu_user_us", "cpu_sys_us" (per request), "busy_pct" (of its core)}; {} when a
    sample or the count is missing.

    >>> server_cpu((10.0, 1.0, 2.0), (12.0, 1.5, 3.0), 100000)
    {'cpu_user_us': 5.0, 'cpu_sys_us': 10.0, 'busy_pct': 75.0}
    """
    if before is None or after is None or not requests or after[0] <= before[0]:
        return {}
    user, system = after[1] - before[1], after[2] - before[2]
    return {"cpu_user_us": user / requests * 1e6, "cpu_sys_us": system / requests * 1e6,
            "busy_pct": 100.0 * (user + system) / (after[0] - before[0])}


CPU_UNITS = {"cpu_user_us": "us", "cpu_sys_us": "us", "busy_pct": "%"}


def median_results(samples):
    """{(impl, metric): [result, ...]} -> one result each: the median for rates, latencies
    and CPU costs, the sum for error counts (an error in any round flags the row)."""
    out = []
    for (impl, metric), rs in samples.items():
        if metric.endswith("_errors"):
            out.append(dict(rs[0], value=sum(r["value"] for r in rs)))
        else:
            out.append(sorted(rs, key=lambda r: r["value"])[len(rs) // 2])
    return out


def show(title, hdr, rows):
    """Print a Markdown table (with a title line above it when title is not empty)."""
    widths = [max(len(str(x)) for x in col) for col in zip(hdr, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    print()
    if title:
        print(title)
    print(line(hdr))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))


def show_peak_rss(hdr, rss):
    """The servers' peak RSS table: hdr's columns after the first, rss their VmHWM bytes
    (None: n/a)."""
    show("Server peak RSS over the whole run (VmHWM, MiB)", hdr,
         [["peak RSS"] + ["n/a" if v is None else f"{v / 2**20:.1f}" for v in rss]])


def ratio(a, b):
    """a/b as '1.23x' ('0.012x' when small), or 'n/a' when either is missing or b is 0."""
    if a is None or not b:
        return "n/a"
    r = a / b
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"


def num(v, digits=0):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def cpu_cells(user, system, busy):
    """The 'server CPU us/req (user+sys)' and 'busy %' cells of a row."""
    cost = "n/a" if user is None or system is None else f"{user + system:.1f} ({user:.1f}+{system:.1f})"
    return [cost, num(busy)]


def capacity(user, system):
    """Requests per server CPU-second: 1e6 / (user + sys us per request), or None."""
    return None if user is None or system is None or user + system <= 0 else 1e6 / (user + system)
