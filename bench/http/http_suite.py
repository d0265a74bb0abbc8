"""The http suite's pure parts, used by bench/run: nginx's config, wrk's report, tables.

bench/run starts the processes (pinning, ports, rounds); this module only turns text
into numbers and numbers into tables, so it can be read (and changed) on its own.
See bench/http/README.md for the protocol.
"""
import re

# Server participants in table order, and their table names.
SERVERS = ["corio", "nginx", "beast", "aiohttp", "aiohttp-uvloop"]
# Client participants (10,000 GETs against nginx), in table order.
CLIENTS = ["corio", "curl", "aiohttp", "aiohttp-uvloop"]
NAMES = {"corio": "corio", "nginx": "nginx", "beast": "Beast", "aiohttp": "aiohttp",
         "aiohttp-uvloop": "aiohttp+uvloop", "curl": "libcurl multi"}
# The goals for the server: (peer, bound on the ratio corio/peer, strictly above
# it or not, wording). aiohttp's goal is on asyncio's own loop, as Debian ships it.
SERVER_GOALS = [("nginx", 0.8, False, "within 20% of nginx"), ("beast", 1.0, True, "above Beast"),
                ("aiohttp", 10.0, False, "10x aiohttp")]
CLIENT_RATIOS = ["curl", "aiohttp"]

# One worker, no access log, keep-alive left at nginx's defaults (keepalive_timeout 75s,
# keepalive_requests 1000). Every path nginx writes to is inside the temp dir `prefix`,
# so it runs as any user without touching /var. `return` answers from the config: no
# file I/O, nginx's fastest path.
NGINX_CONF = """\
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    default_type text/plain;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location = /hello {{ return 200 "Hello, World!"; }}
    }}
}}
"""


def nginx_conf(prefix, port):
    return NGINX_CONF.format(prefix=prefix, port=port)


_UNIT_US = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 6e7}


def parse_wrk(text):
    """wrk --latency's report -> {"rps", "p50", "p99" (us), "errors"}; None without a rate.

    errors counts socket errors (connect, read, write, timeout) and non-2xx/3xx answers."""
    rps = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    if rps is None:
        return None
    out = {"rps": float(rps.group(1)), "errors": 0}
    for pct, value, unit in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M):
        out["p" + pct] = float(value) * _UNIT_US[unit]
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if sock:
        out["errors"] += sum(int(n) for n in sock.groups())
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if non2xx:
        out["errors"] += int(non2xx.group(1))
    return out


def median_results(samples):
    """{(impl, metric): [result, ...]} -> one result each: the median for rates and
    latencies, the sum for error counts (an error in any round flags the row)."""
    out = []
    for (impl, metric), rs in samples.items():
        if metric.endswith("_errors"):
            out.append(dict(rs[0], value=sum(r["value"] for r in rs)))
        else:
            out.append(sorted(rs, key=lambda r: r["value"])[len(rs) // 2])
    return out


def _show(title, hdr, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(hdr, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    print()
    print(title)
    print(line(hdr))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))


def _num(v, digits=0):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def _ratio(a, b):
    return "n/a" if a is None or not b else f"{a / b:.2f}x"


def _rate_cell(val, impl, prefix):
    rate, errors = val.get((impl, prefix + "rps")), val.get((impl, prefix + "errors"))
    return _num(rate) + (f" ({errors:.0f} errors!)" if errors else "")


def server_tables(results, duration, rounds):
    val = {(r["impl"], r["metric"]): r["value"] for r in results}
    impls = [i for i in SERVERS if (i, "http_rps") in val]
    if not impls:
        print("\nHTTP server: no participant ran.")
        return
    peers = [p for p, _, _, _ in SERVER_GOALS if "corio" in impls and p in impls]
    corio = val.get(("corio", "http_rps"))

    def rss(impl):
        v = val.get((impl, "http_peak_rss"))
        return "n/a" if v is None else f"{v / 2**20:.1f}"

    rows = [[NAMES[i], _rate_cell(val, i, "http_"), _num(val.get((i, "http_p50"))),
             _num(val.get((i, "http_p99"))), rss(i)] +
            (["" if i == "corio" else _ratio(corio, val[(i, "http_rps")])] if corio else [])
            for i in impls]
    _show(f"HTTP server: wrk -t1 -c100 -d{duration:g}s GET /hello, median of {rounds} round(s)",
          ["server", "requests/s", "p50 (us)", "p99 (us)", "peak RSS (MiB)"] +
          (["corio/server"] if corio else []), rows)
    if peers:
        def verdict(peer, bound, strict):
            if not val[(peer, "http_rps")]:
                return "n/a"
            r = corio / val[(peer, "http_rps")]
            return "PASS" if r > bound or (r == bound and not strict) else "FAIL"

        goals = [[f"corio/{NAMES[p]}", _ratio(corio, val[(p, "http_rps")]),
                  f"{'>' if strict else '>='} {g:g}x ({why})", verdict(p, g, strict)]
                 for p, g, strict, why in SERVER_GOALS if p in peers]
        _show("HTTP server goals (issue 5)", ["ratio", "measured", "goal", "verdict"], goals)
    print()
    print("Ratios > 1 mean corio serves more requests per second. Servers on core 0 (one thread, "
          "one loop; nginx: 1 worker), wrk on core 1, loopback, keep-alive; p50/p99 from wrk "
          "--latency. Peak RSS: VmHWM of the serving process (nginx: its worker).")
    if any(val.get((i, "http_errors")) for i in impls):
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
    rows = [[NAMES[i], _rate_cell(val, i, "http_client_"), _num(val.get((i, "http_client_connects")))] +
            [_ratio(corio, val[(p, "http_client_rps")]) if i == "corio" else "" for p in peers]
            for i in impls]
    _show(f"HTTP client: {requests:,} GETs, {concurrency} in flight, against nginx "
          f"(median of {rounds} round(s))",
          ["client", "requests/s", "TCP connects"] + [f"corio/{NAMES[p]}" for p in peers], rows)
    print()
    print("Ratios > 1 mean corio's ClientSession fetches faster. nginx (1 worker) on core 0, "
          "client on core 1; keep-alive pools of at most 100 connections; bodies read whole. "
          "TCP connects: as reported by the client (n/a: it cannot tell).")
    if "corio" not in impls:
        print("corio: not run (no corio_get in this build -- it needs "
              "include/corio/http/client.hpp -- or --impl left it out).")
