"""The http2 suite, used by bench/run: h2load (Debian's nghttp2-client) against `corio serve`
and nginx (http2 on), over h2c with prior knowledge, h2 over TLS (ALPN) and HTTP/1.1, and
its tables. See bench/http2/README.md for the protocol and a run.

The pure parts -- h2load's report, nginx's config, the tables -- need no process; run()
starts the processes (pinning, ports, rounds).
"""
import os
import re
import subprocess
import tempfile
from pathlib import Path

from benchlib import (CPU_UNITS, capacity, cpu_cells, cpu_sample, free_loopback_port, log,
                      median_results, num, pinned, ratio, server_client_cpus, show, start_server,
                      stop_server, target_path)
import http_suite
from idle_servers import make_cert

H2LOAD = "/usr/bin/h2load"
# corio-base: corio (epoll) as built in --base-build-dir (an older commit's tree), for A/B.
IMPLS = ["corio", "corio-uring", "corio-base", "nginx"]
NAMES = {"corio": "corio (epoll)", "corio-uring": "corio (io_uring)", "corio-base": "corio (base build)",
         "nginx": "nginx (1 worker)"}
# (key, title, h2load's extra options): how a client speaks to the server.
PROTOS = [("h2c", "h2c (prior knowledge)", []), ("h2", "h2 over TLS (ALPN)", []),
          ("h1", "HTTP/1.1", ["--h1"])]
# (connections, streams in flight on each): the two shapes. HTTP/1.1 runs only
# the second: -m > 1 there would be pipelining, which no browser does.
SHAPES = [(10, 10), (100, 1)]
# (key, path, title): the small answer and the 64 KiB one (a static file on both sides).
PATHS = [("hello", "/hello", "GET /hello (13 B)"), ("64k", "/64k.bin", "GET /64k.bin (64 KiB file)")]
BODY_BYTES = 64 * 1024
# The goals: corio's h2 capacity over nginx's, and corio's h2 CPU per request
# over its own HTTP/1.1 one, both sides with 100 requests in flight.
GOAL_VS_NGINX = 1.1
GOAL_VS_H1 = 1.3


def combos():
    """Every measured (proto, conns, streams, path key), in table order."""
    return [(proto, c, m, path) for path, _, _ in PATHS for proto, _, _ in PROTOS
            for c, m in SHAPES if proto != "h1" or m == 1]


def metric(proto, conns, streams, path):
    """'h2_h2c_c10m10_hello_' and so on: the prefix of one combination's metrics."""
    return f"h2_{proto}_c{conns}m{streams}_{path}_"


def parse_h2load(text):
    """h2load's report -> {"rps", "requests" (succeeded), "errors" (failed + errored +
    timeout + non-2xx)}; None without a rate.

    >>> parse_h2load("finished in 2.01s, 45373.50 req/s, 1.74MB/s\\n"
    ...   "requests: 90747 total, 90847 started, 90747 done, 90740 succeeded, 7 failed, "
    ...   "0 errored, 0 timeout\\nstatus codes: 90740 2xx, 0 3xx, 2 4xx, 0 5xx\\n")
    {'rps': 45373.5, 'requests': 90740, 'errors': 9}
    >>> parse_h2load("connect: Connection refused\\n") is None
    True
    """
    rps = re.search(r"^finished in [\d.]+m?s, ([\d.]+) req/s", text, re.M)
    counts = re.search(r"^requests: .* (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout",
                       text, re.M)
    if rps is None or counts is None:
        return None
    bad = re.search(r"^status codes: \d+ 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text, re.M)
    errors = sum(int(n) for n in counts.groups()[1:]) + (sum(int(n) for n in bad.groups()) if bad else 0)
    return {"rps": float(rps.group(1)), "requests": int(counts.group(1)), "errors": errors}


def nginx_config(tmp, ports, cert, root):
    """One nginx worker on three listeners -- HTTP/1.1, h2c, h2 over TLS (when cert) --
    serving /hello from its config and the rest from root. keepalive_requests is raised:
    its default (1,000) would make nginx send GOAWAY every 1,000 requests, and h2load does
    not reconnect."""
    extra = f"        listen 127.0.0.1:{ports['h2c']} http2;\n"
    if cert:
        extra += (f"        listen 127.0.0.1:{ports['h2']} ssl http2;\n"
                  f"        ssl_certificate {cert[0]};\n        ssl_certificate_key {cert[1]};\n"
                  "        ssl_protocols TLSv1.2 TLSv1.3;\n")
    extra += f"        keepalive_requests 100000000;\n        location / {{ root {root}; }}\n"
    return http_suite.nginx_conf(tmp, ports["h1"], worker_connections=1024, server=extra)


def targets(impls):
    return ["corio_cli"] if "corio" in impls or "corio-uring" in impls else []


def timing(args):
    """(seconds per measured h2load run, rounds)."""
    return (2, args.rounds or 1) if args.quick else (5, args.rounds or 3)


class Servers:
    """The processes of one run: {(impl, proto): (process, serving pid, port)}; corio serves h2c
    and HTTP/1.1 on one port (it tells them apart by the preface) and TLS on another."""

    def __init__(self, tmp, bdir, cpu, base_dir=None):
        self.tmp, self.bdir, self.cpu, self.base_dir = tmp, bdir, cpu, base_dir
        self.procs, self.where = [], {}
        # nginx started as root runs its worker as nobody: the files must be world-readable.
        tmp.chmod(0o755)
        self.root = tmp / "root"
        self.root.mkdir()
        (self.root / "64k.bin").write_bytes(os.urandom(BODY_BYTES))
        self.cert = make_cert(tmp)

    def start(self, impl):
        if impl == "nginx":
            return self.nginx()
        binary = target_path(self.base_dir if impl == "corio-base" else self.bdir, "corio_cli")
        if not binary.exists():
            return log(f"http2: skipping {impl}: {binary} not built")
        backend = "io_uring" if impl == "corio-uring" else "epoll"
        base = ["env", f"CORIO_BACKEND={backend}", str(binary), "serve",
                "--workers", "1", "--quiet", "--root", str(self.root)]
        port = self.spawn(impl, base + ["--port"], "h2c", "h1")
        if self.cert and port:
            tls = ["--tls-cert", str(self.cert[0]), "--tls-key", str(self.cert[1]), "--port"]
            self.spawn(impl, base + tls, "h2")

    def spawn(self, impl, cmd, *protos):
        port = free_loopback_port()
        proc = start_server(cmd + [str(port)], port, self.cpu, "http2", impl)
        if proc is not None:
            self.procs.append(proc)
            self.where.update({(impl, p): (proc, proc.pid, port) for p in protos})
        return proc and port

    def nginx(self):
        if not os.access(http_suite.NGINX, os.X_OK):
            return log(f"http2: skipping nginx: {http_suite.NGINX} not installed")
        ports = {p: free_loopback_port() for p, _, _ in PROTOS}
        (self.tmp / "nginx.conf").write_text(nginx_config(self.tmp, ports, self.cert, self.root))
        cmd = [http_suite.NGINX, "-p", str(self.tmp), "-c", "nginx.conf", "-e", str(self.tmp / "error.log")]
        proc = start_server(cmd, ports["h1"], self.cpu, "http2", "nginx")
        if proc is not None:
            self.procs.append(proc)
            pid = http_suite.serving_pid("nginx", proc)
            self.where.update({("nginx", p): (proc, pid, ports[p]) for p, _, _ in PROTOS
                               if p != "h2" or self.cert})

    def check(self, impl, proto):
        """Drops a server that exited (it crashed: say so) from the turns."""
        proc = self.where[(impl, proto)][0]
        if proc.poll() is not None:
            log(f"http2: {impl}'s server for {proto} exited with {proc.returncode}")
            self.where = {k: v for k, v in self.where.items() if v[0] is not proc}

    def stop(self):
        for proc in self.procs:
            stop_server(proc)


def h2load(url, proto, conns, streams, duration, cpu):
    """One h2load run (1 thread): parse_h2load's dict, or None."""
    opts = dict((k, o) for k, _, o in PROTOS)[proto]
    cmd = pinned([H2LOAD, "-t1", f"-c{conns}", f"-m{streams}", "-D", str(duration)] + opts + [url], cpu)
    log("+", " ".join(cmd))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=duration + 30)
    except subprocess.TimeoutExpired:
        return log("  h2load timed out")
    report = parse_h2load(p.stdout)
    if report is None or report["requests"] == 0:
        log(f"  no request answered (h2load exit {p.returncode}):\n{p.stdout[-2000:]}")
        return None
    if report["errors"]:
        log(f"  {report['errors']} errors (failed, timed out or non-2xx)")
    return report


def measured(pid, port, combo, duration, cpu):
    """A 1 s warm-up run, then one measured run with the serving process's CPU sampled
    just before and after it: {metric suffix: (value, unit)}."""
    proto, conns, streams, path = combo
    scheme = "https" if proto == "h2" else "http"
    url = f"{scheme}://127.0.0.1:{port}{dict((k, p) for k, p, _ in PATHS)[path]}"
    h2load(url, proto, conns, streams, 1, cpu)
    before = cpu_sample(pid)
    report = h2load(url, proto, conns, streams, duration, cpu) or {}
    after = cpu_sample(pid)
    out = {k: (report[k], u) for k, u in (("rps", "req/s"), ("errors", "count")) if k in report}
    out.update({k: (v, CPU_UNITS[k]) for k, v in
                http_suite.server_cpu(before, after, report.get("requests")).items()})
    return out


def run(args, impls, bdir, built):  # noqa: ARG001 (built: bench/run's suite interface)
    """Every server at once on core 0 (idle ones cost nothing), h2load on core 1 visiting
    them in turns, combination by combination, round after round; medians of the rounds."""
    if not os.access(H2LOAD, os.X_OK):
        log(f"http2: no {H2LOAD} (apt-get install nghttp2-client; scripts/setup test installs it)")
        return []
    server_core, load_core = server_client_cpus(args)
    duration, rounds = timing(args)
    samples = {}
    with tempfile.TemporaryDirectory(prefix="corio-bench-h2-") as tmp:
        base_dir = Path(args.base_build_dir).resolve() if args.base_build_dir else None
        servers = Servers(Path(tmp), bdir, server_core, base_dir)
        try:
            for impl in (i for i in IMPLS if i in impls or (i == "corio-base" and base_dir)):
                servers.start(impl)
            for _ in range(rounds):
                for combo in combos():
                    for impl in IMPLS:
                        if (impl, combo[0]) not in servers.where:
                            continue
                        _, pid, port = servers.where[(impl, combo[0])]
                        for key, (value, unit) in measured(pid, port, combo, duration, load_core).items():
                            m = metric(*combo) + key
                            samples.setdefault((impl, m), []).append(
                                {"impl": impl, "metric": m, "value": value, "unit": unit})
                        servers.check(impl, combo[0])
        finally:
            servers.stop()
    return median_results(samples)


def cost(val, impl, combo):
    """(user, system) µs per request of impl at combo, or (None, None)."""
    prefix = metric(*combo)
    return val.get((impl, prefix + "cpu_user_us")), val.get((impl, prefix + "cpu_sys_us"))


def table(results):
    val = {(r["impl"], r["metric"]): r["value"] for r in results}
    impls = [i for i in IMPLS if any(k[0] == i for k in val)]
    if not impls:
        print("\nHTTP/2: no participant ran (h2load or the servers missing).")
        return
    rows = []
    for combo in combos():
        proto, conns, streams, path = combo
        for impl in impls:
            rps = val.get((impl, metric(*combo) + "rps"))
            if rps is None:
                continue
            errors = val.get((impl, metric(*combo) + "errors"))
            cap, nginx_cap = capacity(*cost(val, impl, combo)), capacity(*cost(val, "nginx", combo))
            rows.append([dict((k, p) for k, p, _ in PATHS)[path], dict((k, t) for k, t, _ in PROTOS)[proto],
                         f"-c{conns} -m{streams}", NAMES[impl],
                         num(rps) + (f" ({errors:.0f} errors!)" if errors else "")] +
                        cpu_cells(*cost(val, impl, combo), val.get((impl, metric(*combo) + "busy_pct"))) +
                        [num(cap), "" if impl == "nginx" else ratio(cap, nginx_cap)])
    show("HTTP/2 and HTTP/1.1 servers under h2load -t1, median of the rounds",
         ["path", "protocol", "load", "server", "requests/s", "server CPU µs/req (user+sys)", "busy %",
          "requests/CPU-s", "vs nginx (req/CPU-s)"], rows)
    goals(val, impls)
    print()
    print("Servers on core 0 (one loop; nginx: 1 worker), h2load on core 1, loopback. Server CPU: "
          "utime + stime of the serving process (/proc/PID/stat) around each measured run, over "
          "the requests h2load completed; requests/CPU-s = 1e6 / that. One h2load thread is the "
          "limit well before the servers are (see busy %): judge them on requests/CPU-s.")


def goals(val, impls):
    """The issue's two goals per path and h2 protocol, on the default backend where it ran
    (io_uring, where the kernel has it: bench/run names the rows), else on epoll."""
    me = "corio-uring" if "corio-uring" in impls else "corio" if "corio" in impls else None
    if me is None:
        return
    rows = []
    for path, _, title in PATHS:
        h1_cost = cost(val, me, ("h1", 100, 1, path))
        h1 = None if None in h1_cost else sum(h1_cost)
        for proto in ("h2c", "h2"):
            for conns, streams in SHAPES:
                combo = (proto, conns, streams, path)
                mine, theirs = cost(val, me, combo), cost(val, "nginx", combo)
                cap = capacity(*mine)
                vs_nginx = cap / capacity(*theirs) if cap and capacity(*theirs) else None
                vs_h1 = sum(mine) / h1 if h1 and None not in mine else None
                rows.append([title, proto, f"-c{conns} -m{streams}",
                             _verdict(vs_nginx, GOAL_VS_NGINX, above=True),
                             _verdict(vs_h1, GOAL_VS_H1, above=False) if proto == "h2c" else ""])
    show(f"HTTP/2 goals (issue 30), {NAMES[me]}: requests/CPU-s >= {GOAL_VS_NGINX}x nginx's; CPU "
         f"per h2c request <= {GOAL_VS_H1}x corio's HTTP/1.1 request at -c100 -m1",
         ["path", "protocol", "load", "corio/nginx, req/CPU-s", "corio h2c/h1, CPU per request"], rows)


def _verdict(r, bound, above):
    if r is None:
        return "n/a"
    ok = r >= bound if above else r <= bound
    return f"{r:.2f}x {'PASS' if ok else 'FAIL'}"
