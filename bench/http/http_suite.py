"""The http suite, used by bench/run: hello servers driven by wrk, GET clients against
nginx, and their tables. See bench/http/README.md for the protocol.

The pure parts -- nginx's config, wrk's report, the tables -- need no process and can be
read (and tried) on their own; run() starts the processes (pinning, ports, rounds).
"""
import os
import re
import subprocess
import tempfile
from pathlib import Path

from benchlib import (CPU_UNITS, HERE, PYTHON, ROOT, build_go, capacity, corio_subcommand_help,
                      cpu_cells, cpu_sample, free_loopback_port, log, median_results, num,
                      peak_rss, pinned, ratio, run_json_lines, server_client_cpus, server_cpu,
                      show, start_server, stop_server, target_path)

# Server participants in table order, and their table names. corio-base is corio's
# server and client from another build (bench/run --base-build-dir: an older commit's);
# corio runs on epoll, corio-uring on io_uring (the default, `best`, on Linux 6.1 and later):
# CORIO_BACKEND says which, for both.
SERVERS = ["corio", "corio-uring", "corio-base", "nginx", "go", "beast", "aiohttp", "aiohttp-uvloop"]
# Client participants (10,000 GETs against nginx), in table order.
CLIENTS = ["corio", "corio-base", "curl", "aiohttp", "aiohttp-uvloop"]
NAMES = {"corio": "corio (epoll)", "corio-uring": "corio (io_uring)", "corio-base": "corio (base build)", "nginx": "nginx", "go": "Go net/http", "beast": "Beast",
         "aiohttp": "aiohttp", "aiohttp-uvloop": "aiohttp+uvloop", "curl": "libcurl multi"}
# The goals for the server: (peer, bound on the ratio corio/peer, strictly above
# it or not, wording). aiohttp's goal is on asyncio's own loop, as Debian ships it.
SERVER_GOALS = [("nginx", 0.8, False, "within 20% of nginx"), ("beast", 1.0, True, "above Beast"),
                ("aiohttp", 10.0, False, "10x aiohttp")]
CLIENT_RATIOS = ["corio-base", "curl", "aiohttp"]
TARGETS = {"corio": "corio_cli", "beast": "beast_hello", "curl": "curl_multi_get"}
CORIO_CLIENT_HEADER = ROOT / "include" / "corio" / "http" / "client.hpp"  # corio_get needs it
NGINX = "/usr/sbin/nginx"
REQUESTS, CONCURRENCY = 10000, 100  # the client part: GETs, and how many in flight
# wrk's runs per server, (connections, Connection: close): the first is the suite's
# classic table (metrics http_*), the others add their own (http_c<N>_*, and
# http_close_c<N>_* for a connection per request: crawlers, HTTP/1.0 clients, health
# checks, where accept, the first receive and the close are the work). The
# Connection: close runs are only for CLOSE_IMPLS, the servers the shape was asked of
# (issue 29: io_uring pays per connection where epoll does not).
WRK_SHAPES = [(100, False), (1000, False), (100, True)]
WRK_CONNS = [conns for conns, close in WRK_SHAPES if not close]
CLOSE_IMPLS = ("corio", "corio-uring", "corio-base", "nginx")
# Below this a server's core was waiting for wrk: its requests/s is wrk's, not its own.
SATURATED_PCT = 90.0

# One worker, no access log, keep-alive left at nginx's defaults (keepalive_timeout 75s,
# keepalive_requests 1000). Every path nginx writes to is inside the temp dir `prefix`,
# so it runs as any user without touching /var. `return` answers from the config: no
# file I/O, nginx's fastest path. The idle suite (bench/idle) fills in the blanks: more
# connections, a longer keep-alive, TLS.
NGINX_CONF = """\
worker_processes 1;
{top}daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections {worker_connections}; }}
http {{
    access_log off;
    default_type text/plain;
{http}    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port}{listen};
{server}        location = /hello {{ return 200 "Hello, World!"; }}
    }}
}}
"""


def nginx_conf(prefix, port, worker_connections=1024, top="", http="", listen="", server=""):
    """The config; top, http and server are whole lines (with their newline) added at the
    top level, in http {} and in server {}, listen the listen directive's parameters."""
    return NGINX_CONF.format(prefix=prefix, port=port, worker_connections=worker_connections,
                             top=top, http=http, listen=listen, server=server)


_UNIT_US = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 6e7}


def parse_wrk(text):
    """wrk --latency's report -> {"rps", "requests", "p50", "p99" (us), "errors"}; None
    without a rate. requests is the count wrk completed in its run ("N requests in").

    errors counts socket errors (connect, read, write, timeout) and non-2xx/3xx answers.

    >>> parse_wrk("  Latency Distribution\\n     50%  1.50ms\\n     99%  900.00us\\n"
    ...           "  171234 requests in 2.00s, 20.74MB read\\n"
    ...           "  Non-2xx or 3xx responses: 3\\nRequests/sec:  85612.34\\n")
    {'rps': 85612.34, 'errors': 3, 'p50': 1500.0, 'p99': 900.0, 'requests': 171234}
    >>> parse_wrk("unable to connect to 127.0.0.1:1 Connection refused\\n") is None
    True
    """
    rps = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    if rps is None:
        return None
    out = {"rps": float(rps.group(1)), "errors": 0}
    for pct, value, unit in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M):
        out["p" + pct] = float(value) * _UNIT_US[unit]
    count = re.search(r"^\s*(\d+) requests in ", text, re.M)
    if count:
        out["requests"] = int(count.group(1))
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if sock:
        out["errors"] += sum(int(n) for n in sock.groups())
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if non2xx:
        out["errors"] += int(non2xx.group(1))
    return out


def targets(impls):
    """The C/C++ targets the selected participants need."""
    out = [TARGETS[i] for i in ("corio", "beast", "curl") if i in impls]
    if "corio" in impls and CORIO_CLIENT_HEADER.exists():
        out.append("corio_get")
    return out


def timing(args):
    """(seconds per wrk run, rounds)."""
    return (2, args.rounds or 1) if args.quick else (5, args.rounds or 3)


def build_of(impl, bdir, built, args):
    """(implementation, build dir, targets built) a participant runs from: corio-base is
    corio as built in --base-build-dir."""
    if impl != "corio-base":
        return impl, bdir, built
    base = Path(args.base_build_dir).resolve()
    return "corio", base, {t for t in ("corio_cli", "corio_get") if target_path(base, t).exists()}


def server_cmd(impl, port, bdir, built, tmp):
    """impl's hello server listening on 127.0.0.1:port, or (None, why not)."""
    if impl == "nginx":
        if not os.access(NGINX, os.X_OK):
            return None, f"{NGINX} not installed"
        (tmp / "nginx.conf").write_text(nginx_conf(tmp, port, worker_connections=4 * max(WRK_CONNS)))
        return [NGINX, "-p", str(tmp), "-c", "nginx.conf", "-e", str(tmp / "error.log")], ""
    if impl == "go":
        path = build_go(bdir, "go_hello")
        return ([str(path), "-port", str(port)], "") if path else (None, "go_hello not built")
    if impl in ("aiohttp", "aiohttp-uvloop"):
        cmd = [PYTHON, str(HERE / "http" / "aiohttp_hello.py"), "--port", str(port)]
        return cmd + (["--uvloop"] if impl == "aiohttp-uvloop" else []), ""
    target = TARGETS["corio" if impl == "corio-uring" else impl]
    if target not in built:
        return None, f"{target} not built"
    path = target_path(bdir, target)
    if impl == "beast":
        return [str(path), "--port", str(port)], ""
    help_text = corio_subcommand_help(path, "serve")
    if help_text is None:
        return None, f"{path} has no `serve --port` yet"
    # Single loop: the comparison is corio's one loop against nginx's one worker.
    # No access log, as nginx's and aiohttp's are off.
    extra = (["--workers", "1"] if "--workers" in help_text else []) + \
        (["--quiet"] if "--quiet" in help_text else [])
    backend = "io_uring" if impl == "corio-uring" else "epoll"
    return ["env", f"CORIO_BACKEND={backend}", str(path), "serve", "--port", str(port)] + extra, ""


def client_cmd(impl, bdir, built):
    """impl's GET client (it adds --url/--requests/--concurrency), or (None, why not)."""
    if impl in ("aiohttp", "aiohttp-uvloop"):
        cmd = [PYTHON, str(HERE / "http" / "aiohttp_get.py")]
        return cmd + (["--uvloop"] if impl == "aiohttp-uvloop" else []), ""
    if impl == "corio" and not CORIO_CLIENT_HEADER.exists():
        return None, f"{CORIO_CLIENT_HEADER} does not exist yet"
    target = "corio_get" if impl == "corio" else TARGETS[impl]
    if target not in built:
        return None, f"{target} not built"
    return [str(target_path(bdir, target))], ""


def serving_pid(impl, proc):
    """The process that answers requests: nginx's master forks one worker that does."""
    if impl == "nginx":
        try:
            children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        except OSError:
            children = []
        if children:
            return int(children[0])
    return proc.pid  # taskset execs the server, so proc.pid is the server itself


def wrk(url, duration, cpu, latency, conns=CONCURRENCY, script=None, env=None, headers=()):
    """One wrk run (1 thread, conns connections; script: a Lua script, env: its
    environment's additions, headers: "Name: value" added to each request): parse_wrk's
    dict, or None."""
    cmd = ["wrk", "-t1", f"-c{conns}", f"-d{duration}s"] + (["--latency"] if latency else [])
    cmd += ["-s", str(script)] if script else []
    cmd += [arg for header in headers for arg in ("-H", header)]
    cmd = pinned(cmd + [url], cpu)
    log("+", " ".join(cmd))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=duration + 30,
                           env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        log("  wrk timed out")
        return None
    report = parse_wrk(p.stdout)
    if report is None:
        log(f"  no Requests/sec in wrk's output (exit {p.returncode}):\n{p.stdout}")
    elif report["errors"]:
        log(f"  {report['errors']} errors (socket errors or non-2xx answers)")
    return report


def metric_prefix(conns, close=False):
    """
    >>> [metric_prefix(c, close) for c, close in WRK_SHAPES]
    ['http_', 'http_c1000_', 'http_close_c100_']
    """
    if close:
        return f"http_close_c{conns}_"
    return "http_" if conns == WRK_CONNS[0] else f"http_c{conns}_"


def measured_wrk(impl, proc, port, duration, cpu, conns, close=False):
    """A 1 s warm-up, then one measured wrk run with the serving process's CPU sampled
    just before and after it: {metric: (value, unit)}."""
    url = f"http://127.0.0.1:{port}/hello"
    headers = ["Connection: close"] if close else []
    wrk(url, 1, cpu, latency=False, conns=conns, headers=headers)
    pid = serving_pid(impl, proc)
    before = cpu_sample(pid)
    report = wrk(url, duration, cpu, latency=True, conns=conns, headers=headers) or {}
    after = cpu_sample(pid)
    units = {"rps": "req/s", "p50": "us", "p99": "us", "errors": "count"}
    out = {k: (v, units[k]) for k, v in report.items() if k in units}
    out.update({k: (v, CPU_UNITS[k]) for k, v in server_cpu(before, after, report.get("requests")).items()})
    return out


def server_rounds(servers, duration, rounds, cpu):
    """wrk against each server in turn, `rounds` times."""
    samples = {}
    for _ in range(rounds):
        for conns, close in WRK_SHAPES:
            for impl, (proc, port) in list(servers.items()):
                if close and impl not in CLOSE_IMPLS:
                    continue
                prefix = metric_prefix(conns, close)
                measured = measured_wrk(impl, proc, port, duration, cpu, conns, close)
                for key, (value, unit) in measured.items():
                    samples.setdefault((impl, prefix + key), []).append(
                        {"impl": impl, "metric": prefix + key, "value": value, "unit": unit})
                if proc.poll() is not None:
                    log(f"http: {impl} server exited with {proc.returncode}")
                    del servers[impl]
    results = median_results(samples)
    for impl, (proc, _) in servers.items():
        rss = peak_rss(serving_pid(impl, proc))
        if rss is not None:
            results.append({"impl": impl, "metric": "http_peak_rss", "value": rss, "unit": "bytes"})
    return results


def client_rounds(clients, port, rounds, cpu):
    """Each client's ({impl: command}) REQUESTS GETs against nginx on port, in turns,
    `rounds` times. Results are the impl's: corio-base's client says it is corio."""
    samples = {}
    url = f"http://127.0.0.1:{port}/hello"
    for _ in range(rounds):
        for impl, cmd in clients.items():
            cmd = pinned(cmd + ["--url", url, "--requests", str(REQUESTS),
                                "--concurrency", str(CONCURRENCY)], cpu)
            for r in run_json_lines(cmd, timeout=300):
                samples.setdefault((impl, r["metric"]), []).append(dict(r, impl=impl))
    return median_results(samples)


def run(args, impls, bdir, built):
    """The server part, then the client part, against servers that all run at once on
    core 0, each on its own port (idle ones cost nothing), as in the echo suite: the load
    (wrk, then each client) on core 1 takes them in turns, round after round, and each
    metric is the median over rounds. nginx also runs, as the clients' server, when only
    clients are selected. Returns (server results, client results)."""
    server_core, load_core = server_client_cpus(args)
    duration, rounds = timing(args)
    if args.base_build_dir and "corio" in impls:
        impls = impls + ["corio-base"]
    wanted = [i for i in SERVERS if i in impls]
    clients = {}
    for impl in (i for i in CLIENTS if i in impls):
        cmd, why = client_cmd(*build_of(impl, bdir, built, args))
        if cmd is None:
            log(f"http: skipping the {impl} client: {why}")
        else:
            clients[impl] = cmd
    if clients and "nginx" not in wanted:
        wanted.append("nginx")
    servers = {}  # impl -> (proc, port)
    with tempfile.TemporaryDirectory(prefix="corio-bench-nginx-") as tmp:
        try:
            for impl in wanted:
                port = free_loopback_port()
                as_built, in_dir, targets_built = build_of(impl, bdir, built, args)
                cmd, why = server_cmd(as_built, port, in_dir, targets_built, Path(tmp))
                if cmd is None:
                    log(f"http: skipping the {impl} server: {why}")
                    continue
                proc = start_server(cmd, port, server_core, "http", impl)
                if proc is not None:
                    servers[impl] = (proc, port)
            measured = {i: s for i, s in servers.items() if i in impls}
            server_results = server_rounds(measured, duration, rounds, load_core)
            if clients and "nginx" not in servers:
                log("http: nginx is not running: no client part")
            if not clients or "nginx" not in servers:
                return server_results, []
            return server_results, client_rounds(clients, servers["nginx"][1], rounds, load_core)
        finally:
            for proc, _ in servers.values():
                stop_server(proc)


def tables(server_results, client_results, args):
    duration, rounds = timing(args)
    server_tables(server_results, duration, rounds)
    client_tables(client_results, REQUESTS, CONCURRENCY, rounds)


def _rate_cell(val, impl, prefix):
    rate, errors = val.get((impl, prefix + "rps")), val.get((impl, prefix + "errors"))
    return num(rate) + (f" ({errors:.0f} errors!)" if errors else "")


def _verdict(corio, peer, bound, strict):
    if corio is None or not peer:
        return "n/a"
    r = corio / peer
    return "PASS" if r > bound or (r == bound and not strict) else "FAIL"


def server_tables(results, duration, rounds):
    val = {(r["impl"], r["metric"]): r["value"] for r in results}
    impls = [i for i in SERVERS if (i, "http_rps") in val]
    if not impls:
        print("\nHTTP server: no participant ran.")
        return
    rps, cap = None, None
    for conns, close in WRK_SHAPES:
        shown = [i for i in impls if (i, metric_prefix(conns, close) + "rps") in val]
        if not shown:
            continue
        got = server_table(val, shown, conns, duration, rounds, close)
        rps, cap = (rps, cap) if rps is not None else got
    goals = [[f"corio/{NAMES[p]}", f"{'>' if strict else '>='} {g:g}x ({why})",
              ratio(rps["corio"], rps[p]), _verdict(rps["corio"], rps[p], g, strict),
              ratio(cap["corio"], cap[p]), _verdict(cap["corio"], cap[p], g, strict)]
             for p, g, strict, why in SERVER_GOALS if "corio" in impls and p in impls]
    if goals:
        show(f"HTTP server goals (issue 5, at -c{WRK_CONNS[0]}), on throughput and on capacity",
             ["ratio", "goal", "requests/s", "verdict", "requests/CPU-s", "verdict"], goals)
    server_footnotes(val, impls)


def server_table(val, impls, conns, duration, rounds, close=False):
    """The throughput and capacity tables of the wrk runs with `conns` connections
    (close: a connection per request): ({impl: requests/s}, {impl: requests per
    CPU-second})."""
    prefix = metric_prefix(conns, close)
    shape = f"-c{conns}" + (" Connection: close" if close else "")
    rps = {i: val[(i, prefix + "rps")] for i in impls}
    cpu = {i: (val.get((i, prefix + "cpu_user_us")), val.get((i, prefix + "cpu_sys_us")))
           for i in impls}
    cap = {i: capacity(*cpu[i]) for i in impls}
    corio = "corio" in impls

    def vs_corio(values, impl):
        return "" if impl == "corio" else ratio(values["corio"], values[impl])

    def row(i):
        rss = val.get((i, "http_peak_rss"))
        cells = [NAMES[i], _rate_cell(val, i, prefix), num(val.get((i, prefix + "p50"))),
                 num(val.get((i, prefix + "p99")))] + \
            cpu_cells(*cpu[i], val.get((i, prefix + "busy_pct")))
        cells.append("n/a" if rss is None else f"{rss / 2**20:.1f}")
        return cells + ([vs_corio(rps, i)] if corio else [])

    show(f"HTTP server: wrk -t1 -c{conns} -d{duration:g}s GET /hello"
         f"{', Connection: close' if close else ''}, median of {rounds} round(s)",
         ["server", "requests/s", "p50 (us)", "p99 (us)", "server CPU µs/req (user+sys)", "busy %",
          "peak RSS (MiB)"] + (["corio/server"] if corio else []), [row(i) for i in impls])
    show(f"HTTP server capacity at {shape}: requests per server CPU-second (1e6 / CPU µs per "
         "request)", ["server", "requests/CPU-s"] + (["corio/server"] if corio else []),
         [[NAMES[i], num(cap[i])] + ([vs_corio(cap, i)] if corio else []) for i in impls])
    return rps, cap


def server_footnotes(val, impls):
    print()
    print("Ratios > 1 mean corio serves more requests per second (per CPU-second). Servers on "
          "core 0 (one thread, one loop; nginx: 1 worker), wrk on core 1, loopback, keep-alive "
          "(but in the Connection: close tables, a connection per request); "
          "p50/p99 from wrk --latency. Peak RSS: VmHWM of the serving process (nginx: its worker).")
    print("Server CPU: utime + stime of the serving process (/proc/PID/stat) just before and "
          "after each measured wrk run, over wrk's request count; busy % = that CPU time over "
          "the run's wall time. Capacity matters here: one wrk thread saturates near 70-100k "
          "req/s on this machine, so a server whose core is not ~100% busy is waiting for wrk, "
          "its requests/s is wrk's limit and throughput ratios shrink toward 1; requests per "
          "CPU-second is what its core could serve on its own.")
    prefixes = [metric_prefix(*shape) for shape in WRK_SHAPES]
    waiting = [NAMES[i] for i in impls
               if any(val.get((i, p + "busy_pct"), 100) < SATURATED_PCT for p in prefixes)]
    if waiting:
        print(f"Below {SATURATED_PCT:g}% busy (waiting for wrk, or sharing core 0 with other "
              f"work on a busy machine; judge them on capacity): "
              f"{', '.join(waiting)}.")
    if any(val.get((i, p + "errors")) for i in impls for p in prefixes):
        print("A row marked 'errors!' had socket errors or non-2xx answers: its rate is suspect.")
    if "corio" not in impls:
        print("corio: not run (no `corio serve --port` in this build, or --impl left it out).")


def client_tables(results, requests, concurrency, rounds):
    val = {(r["impl"], r["metric"]): r["value"] for r in results}
    impls = [i for i in CLIENTS if (i, "http_client_rps") in val]
    if not impls:
        print("\nHTTP client: no participant ran.")
        return
    corio = val.get(("corio", "http_client_rps"))
    peers = [p for p in CLIENT_RATIOS if "corio" in impls and p in impls]
    rows = [[NAMES[i], _rate_cell(val, i, "http_client_"), num(val.get((i, "http_client_connects")))] +
            [ratio(corio, val[(p, "http_client_rps")]) if i == "corio" else "" for p in peers]
            for i in impls]
    show(f"HTTP client: {requests:,} GETs, {concurrency} in flight, against nginx "
         f"(median of {rounds} round(s))",
         ["client", "requests/s", "TCP connects"] + [f"corio/{NAMES[p]}" for p in peers], rows)
    print()
    print("Ratios > 1 mean corio's ClientSession fetches faster. nginx (1 worker) on core 0, "
          "client on core 1; keep-alive pools of at most 100 connections; bodies read whole. "
          "TCP connects: as reported by the client (n/a: it cannot tell).")
    if "corio" not in impls:
        print("corio: not run (no corio_get in this build -- it needs "
              "include/corio/http/client.hpp -- or --impl left it out).")
