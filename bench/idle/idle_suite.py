"""The idle suite, used by bench/run: what a server pays for connections that do nothing.
See bench/idle/README.md for the protocol and a run.

For each N (--idle-conns: 10,000 and 100,000; --quick: 1,000) and protocol (idle_servers.PROTOCOLS),
one implementation at a time: start its server pinned to core 0; warm it up with N/100
connections (at most 100) that do the exchange and leave; read its RSS; open N
connections from idle_loadgen on core 1 (at most 128 being set up at once), each doing
one exchange, then idle; let it settle; measure its CPU over a quiet interval; read its
RSS again. Reported per connection:
  bytes/conn    growth of Rss in /proc/PID/smaps_rollup (a page-table walk, exact, where
                VmRSS in /proc/PID/status is a per-thread-cached approximation), over N;
                Pss in the JSON lines too (the same here: the growth is private memory)
  accept rate   N / the client's time from its first connect to its last exchange done
  accept CPU    the server's CPU (user + system) over that time, per connection
  idle CPU      the server's CPU over the quiet interval, in ms per second
Plus the cost of one suspended task: 100k tasks each waiting on one Event, RSS growth per
task, corio (core_bench's BM_mem_per_event_task, alone in its process) vs asyncio
(peers/asyncio_core.py --only mem_per_event_task).
"""
import json
import math
import resource
import select
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import (HERE, PYTHON, cpu_sample, free_loopback_port, log, num, pinned, ratio,
                      run_json_lines, server_client_cpus, show, start_server, stop_server,
                      target_path)
from idle_servers import IMPLS, NAMES, PROTOCOLS, Servers, name, selected, serving_pid, targets  # noqa: F401

QUICK_N = [1_000]
INFLIGHT = 128
PORTS_PER_SOURCE = 25_000  # of loopback's ephemeral range (32768-60999) per source address
FD_MARGIN = 256  # descriptors a server needs besides its connections


def timing(args):
    """(settle seconds, quiet-interval seconds)."""
    return (1.0, 5.0) if args.quick else (3.0, 10.0)


def raise_nofile():
    """The soft RLIMIT_NOFILE raised to the hard one (inherited by every server and client
    started here); returns the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def memory(pid):
    """{"rss", "pss"} in bytes from /proc/PID/smaps_rollup, or None once it is gone."""
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Rss", "Pss"):
                    out[key.lower()] = int(rest.split()[0]) * 1024
    except OSError:
        return None
    return out if len(out) == 2 else None


def cpu_seconds(pid):
    """The process's CPU time (all its live threads) in seconds: the sum of
    /proc/PID/task/*/schedstat's run time (ns), else /proc/PID/stat's utime + stime (10 ms
    ticks: too coarse for an idle server), or None once it is gone."""
    total, tasks = 0, Path(f"/proc/{pid}/task")
    try:
        for t in tasks.iterdir():
            total += int((t / "schedstat").read_text().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        s = cpu_sample(pid)
        return None if s is None else s[1] + s[2]


def read_json_line(proc, deadline):
    """The next JSON line proc prints, or None if it ends or the deadline passes first."""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = proc.stdout.readline()
        if not line:
            return None
        if line.startswith("{"):
            return json.loads(line)
    return None


class Clients:
    """idle_loadgen processes holding n connections between them, each within the fd limit
    and the ephemeral ports of its own source addresses."""

    def __init__(self, loadgen, port, proto, path, n, nofile, cpu):
        per_proc = nofile - FD_MARGIN
        procs = math.ceil(n / per_proc)
        sources = math.ceil(per_proc / PORTS_PER_SOURCE) if procs > 1 else math.ceil(n / PORTS_PER_SOURCE)
        self.timeout = max(120.0, n / 50)  # a server slower than 50 connections/s fails the row
        self.procs = []
        for i in range(procs):
            conns = n // procs + (1 if i < n % procs else 0)
            cmd = pinned([str(loadgen), "--port", str(port), "--proto", "http" if proto == "tls" else proto,
                          "--path", path, "--tls", "1" if proto == "tls" else "0", "--conns", str(conns),
                          "--inflight", str(INFLIGHT), "--sources", str(sources),
                          "--source-base", str(1 + i * sources), "--timeout", str(self.timeout)], cpu)
            log("+", " ".join(cmd))
            self.procs.append(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))

    def established(self):
        """The clients' first lines merged: established, failed, seconds (the slowest),
        deflate, no_takeover, cpu_s; None if one did not report in time."""
        deadline = time.monotonic() + self.timeout + 30
        lines = [read_json_line(p, deadline) for p in self.procs]
        if any(line is None for line in lines):
            return None
        keys = ("established", "failed", "deflate", "no_takeover", "cpu_s")
        merged = {k: sum(line[k] for line in lines) for k in keys}
        merged["seconds"] = max(line["seconds"] for line in lines)
        return merged

    def close(self):
        """Closes their stdin (they report and exit, closing every connection): open,
        closed (by the server while idle) and pings summed, or None."""
        deadline = time.monotonic() + 30
        lines = []
        for p in self.procs:
            try:
                p.stdin.close()
            except OSError:
                pass
            lines.append(read_json_line(p, deadline))
        for p in self.procs:
            try:
                p.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if any(line is None for line in lines):
            return None
        return {k: sum(line[k] for line in lines) for k in ("open", "closed", "pings")}


def warm_up(loadgen, port, proto, path, n, cpu):
    """n connections that do the exchange and leave: what a server sets up once (TLS
    tables, a JIT, pools) is then in the baseline, not in the connections' bytes."""
    clients = Clients(loadgen, port, proto, path, n, n + FD_MARGIN + 1, cpu)
    clients.established()
    clients.close()
    time.sleep(1.0)  # the server notices the closes


def measure(servers, proto, impl, n, args, loadgen, nofile):
    """One server, N connections: its result dict, or None (with a message)."""
    server_core, load_core = server_client_cpus(args)
    port = free_loopback_port()
    cmd, path, why = servers.command(proto, impl, port, n)
    if cmd is None:
        log(f"idle: skipping {impl} for {proto}: {why}")
        return None
    proc = start_server(cmd, port, server_core, "idle", impl)
    if proc is None:
        return None
    clients = None
    try:
        warm_up(loadgen, port, proto, path, max(10, min(100, n // 100)), load_core)
        pid = serving_pid(impl, proc)
        mem0, cpu0 = memory(pid), cpu_seconds(pid)
        clients = Clients(loadgen, port, proto, path, n, nofile, load_core)
        up = clients.established()
        cpu1 = cpu_seconds(pid)
        settle, quiet = timing(args)
        time.sleep(settle)
        cpu2 = cpu_seconds(pid)
        time.sleep(quiet)
        cpu3, mem1 = cpu_seconds(pid), memory(pid)
        end = clients.close()
        clients = None
        if up is None or None in (mem0, mem1, cpu0, cpu1, cpu2, cpu3) or proc.poll() is not None:
            log(f"idle: {impl} {proto} N={n}: the server or a client did not report (server exit "
                f"{proc.poll()})")
            return None
        return {"established": up["established"], "failed": up["failed"], "deflate": up["deflate"],
                "no_takeover": up["no_takeover"],
                "closed": None if end is None else end["closed"], "pings": None if end is None else end["pings"],
                "bytes_per_conn": (mem1["rss"] - mem0["rss"]) / n, "pss_per_conn": (mem1["pss"] - mem0["pss"]) / n,
                "accept_rate": up["established"] / up["seconds"] if up["seconds"] > 0 else None,
                "accept_cpu_us": (cpu1 - cpu0) / max(1, up["established"]) * 1e6,
                "accept_busy_pct": 100 * (cpu1 - cpu0) / up["seconds"] if up["seconds"] > 0 else None,
                "client_cpu_s": up["cpu_s"], "idle_cpu_ms_per_s": (cpu3 - cpu2) / quiet * 1e3}
    finally:
        if clients is not None:
            clients.close()
        stop_server(proc)


def run(args, impls, bdir, built):
    if "idle_loadgen" not in built:
        log("idle: idle_loadgen not built: no idle suite")
        return task_results(args, impls, bdir, built)
    nofile = raise_nofile()
    loadgen = target_path(bdir, "idle_loadgen")
    results = []
    with tempfile.TemporaryDirectory(prefix="corio-bench-idle-") as tmp:
        servers = Servers(bdir, built, Path(tmp), nofile)
        for n in QUICK_N if args.quick else [int(c) for c in args.idle_conns.split(",") if c.strip()]:
            if n + FD_MARGIN > nofile:
                log(f"idle: N={n:,} skipped: a server holding them needs {n + FD_MARGIN:,} descriptors; "
                    f"RLIMIT_NOFILE's hard limit here is {nofile:,} (raising it needs CAP_SYS_RESOURCE)")
                continue
            for proto, _, proto_impls, _ in PROTOCOLS:
                if args.idle_protos and proto not in args.idle_protos.split(","):
                    continue
                for impl in (i for i in proto_impls if i in selected(impls)):
                    r = measure(servers, proto, impl, n, args, loadgen, nofile)
                    if r is None:
                        continue
                    for key, value in r.items():
                        results.append({"impl": impl, "metric": f"idle_{proto}_{n}_{key}", "value": value,
                                        "unit": UNITS.get(key, "")})
    return results + task_results(args, impls, bdir, built)


UNITS = {"bytes_per_conn": "bytes", "pss_per_conn": "bytes", "accept_rate": "conn/s", "accept_cpu_us": "us",
         "accept_busy_pct": "%", "client_cpu_s": "s", "idle_cpu_ms_per_s": "ms/s"}


def task_results(args, impls, bdir, built):
    """One suspended task's bytes: corio's BM_mem_per_event_task alone in its process, and
    asyncio's same program."""
    results = []
    if "corio" in impls and "corio_core_bench" in built:
        cmd = pinned([str(target_path(bdir, "corio_core_bench")), "--benchmark_filter=^BM_mem_per_event_task/",
                      "--benchmark_format=json"], args.cpu)
        log("+", " ".join(cmd))
        p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=120)
        try:
            b = json.loads(p.stdout)["benchmarks"][0]
            results += [{"impl": "corio", "metric": "task_event_rss", "value": b["rss_per_task"], "unit": "bytes"},
                        {"impl": "corio", "metric": "task_event_heap", "value": b["bytes_per_task"], "unit": "bytes"}]
        except (json.JSONDecodeError, KeyError, IndexError):
            log("idle: could not read corio_core_bench's output")
    if "asyncio" not in impls:
        return results
    peer = [PYTHON, str(HERE / "peers" / "asyncio_core.py"), "--impl", "asyncio", "--only", "mem_per_event_task"]
    key = {"mem_per_event_task_rss": "task_event_rss", "mem_per_event_task_tracemalloc": "task_event_heap"}
    return results + [dict(r, metric=key[r["metric"]]) for r in run_json_lines(pinned(peer, args.cpu), timeout=120)]


def table(results):
    val = {(r["impl"], r["metric"]): r["value"] for r in results}
    ns = sorted({int(r["metric"].split("_")[2]) for r in results if r["metric"].startswith("idle_")})
    for proto, title, proto_impls, ref in PROTOCOLS:
        rows = []
        for n in ns:
            def get(impl, key, n=n):
                return val.get((impl, f"idle_{proto}_{n}_{key}"))
            for impl in proto_impls:
                if get(impl, "bytes_per_conn") is None:
                    continue
                rows.append([name(proto, impl), f"{n:,}", num(get(impl, "bytes_per_conn")),
                             ratio(get(impl, "bytes_per_conn"), get(ref, "bytes_per_conn")),
                             num(get(impl, "accept_rate")), num(get(impl, "accept_cpu_us"), 1),
                             ratio(get(impl, "accept_cpu_us"), get(ref, "accept_cpu_us")),
                             num(get(impl, "accept_busy_pct")), num(get(impl, "idle_cpu_ms_per_s"), 2),
                             notes(proto, impl, get)])
        if rows:
            show(f"{title}: idle connections (reference: {NAMES[ref]})",
                 ["impl", "N", "bytes/conn", f"vs {ref}", "accept conn/s", "accept CPU us/conn", f"vs {ref}",
                  "busy %", "idle CPU ms/s", "notes"], rows)
    tasks = [(i, val.get((i, "task_event_rss")), val.get((i, "task_event_heap"))) for i in ("corio", "asyncio")]
    if any(rss is not None for _, rss, _ in tasks):
        show("One suspended task: 100k tasks, each awaiting one Event (bytes per task)",
             ["impl", "RSS growth", "heap growth", "RSS vs asyncio"],
             [[i, num(rss), num(heap), ratio(rss, val.get(("asyncio", "task_event_rss")))] for i, rss, heap in tasks])
    print()
    print("bytes/conn: growth of the serving process's Rss (/proc/PID/smaps_rollup) from after a warm-up "
          "to after the quiet interval, over N; kernel socket memory is in no process's RSS. accept "
          "conn/s: N over the client's first connect to its last exchange done, at most 128 in "
          "progress; accept CPU: the server's CPU (user + system) over that time per connection, and "
          "busy %: of its core. Below ~90% busy the client or the machine set the pace, not the server: "
          "compare the CPU per connection then. idle CPU: the server's CPU over the quiet interval "
          "(schedstat run time). Heap growth of a task: mallinfo2 (corio), tracemalloc (asyncio).")


def notes(proto, impl, get):
    """Anything that makes a row suspect: failures, connections the server closed, and for
    WebSocket whether permessage-deflate (and no context takeover) was agreed and how many
    pings were answered."""
    def count(key):
        return int(get(impl, key) or 0)
    out = []
    if count("failed"):
        out.append(f"{count('failed'):,} failed")
    if get(impl, "closed") is None:
        out.append("no final report from the client")
    elif count("closed"):
        out.append(f"{count('closed'):,} closed while idle")
    if proto.startswith("ws-deflate") and count("deflate") != count("established"):
        out.append(f"deflate agreed on {count('deflate'):,} only")
    if proto == "ws-deflate-nct" and count("no_takeover") != count("deflate"):
        out.append(f"no context takeover agreed on {count('no_takeover'):,} only")
    if count("pings"):
        out.append(f"{count('pings'):,} pings answered")
    return "; ".join(out)
