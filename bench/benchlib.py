"""Process and table helpers shared by bench/run and the suite modules (echo/, http/).

Everything here is about running programs the way the benchmarks need them -- pinned to
a core, listening on a free loopback port, stopped cleanly -- and reading what the
kernel says about them (/proc: peak RSS, CPU time). Nothing here knows a suite.
"""
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
    # The corio tool is written to <build>/bin (tools/CMakeLists.txt); benchmarks to <build>/bench.
    return bdir / "bin" / "corio" if target == "corio_cli" else bdir / "bench" / target


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
