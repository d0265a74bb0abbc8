"""The db suite, used by bench/run: corio's pg and redis clients against their
Python peers on the same servers in the same run.

PostgreSQL: `SELECT $1::int` round trips one at a time and 16 tasks on one
connection (corio pipelines them; asyncpg and psycopg have no pipelining for
them and serve them in turn), and a 100k-row fetch; peers asyncpg and psycopg 3
(async). Redis: GET and SET one at a time and 16 deep on one connection; peers
redis-py's asyncio client (16 deep: an explicit pipeline of 16) and
redis-benchmark (-c 1 -P 1 / -P 16). Servers (tests/common/db_server.py, fsync
off) run on core 0, clients on core 1; each figure is the median of the rounds.
"Per client CPU-second" counts the client's user + system time over the
measured window (redis-benchmark: its whole run, from wait4).
"""
import csv
import io
import os
import subprocess
import tempfile
from pathlib import Path

from benchlib import PYTHON, ROOT, log, pinned, ratio, run_json_lines, show

HERE = Path(__file__).resolve().parent
SERVER = ROOT / "tests" / "common" / "db_server.py"
PG_IMPLS = ["corio", "asyncpg", "psycopg"]
REDIS_IMPLS = ["corio", "redis-py", "redis-benchmark"]
PG_METRICS = [("pg_select_1", "SELECT $1::int, 1 at a time"),
              ("pg_select_16", "SELECT $1::int, 16 tasks"),
              ("pg_fetch_100k", "fetch 100k rows")]
REDIS_METRICS = [(f"redis_{c}_{n}", f"{c.upper()}, {n} deep") for n in (1, 16) for c in ("get", "set")]


def targets(impls):
    return ["corio_db_bench"] if "corio" in impls else []


def redis_benchmark(port, depth, cpu):
    """redis-benchmark's GET and SET rates at one connection and `depth`, as results."""
    cmd = pinned(["redis-benchmark", "-p", str(port), "-c", "1", "-P", str(depth), "-n",
                  str(20000 * depth), "-t", "get,set", "-d", "64", "-q", "--csv"], cpu)
    log("+", " ".join(cmd))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = p.stdout.read()
    _, _, usage = os.wait4(p.pid, 0)
    used = usage.ru_utime + usage.ru_stime
    rows = list(csv.reader(io.StringIO(out)))[1:]
    ops = 2 * 20000 * depth
    return [{"impl": "redis-benchmark", "metric": f"redis_{r[0].lower()}_{depth}",
             "ops_per_s": float(r[1]), "ops_per_cpu_s": ops / used if used else 0.0} for r in rows]


def run(args, impls, bdir, built):
    if "corio" in impls and "corio_db_bench" not in built:
        log("db: corio_db_bench not built (needs libpq-dev and libhiredis-dev)")
    duration, rounds = (1.0, 1) if args.quick else (3.0, 3)
    client_cpu, server_cpu = (args.cpu, 0) if args.cpu >= 0 else (-1, -1)
    samples = {}
    with tempfile.TemporaryDirectory(prefix="corio-db-bench-") as tmp:
        os.chmod(tmp, 0o755)  # the postgres user must reach its directory inside
        dirs = {kind: Path(tmp) / kind for kind in ("pg", "redis")}
        for kind, d in dirs.items():
            subprocess.run(pinned([PYTHON, str(SERVER), "start", kind, str(d)], server_cpu),
                           check=True, stdout=subprocess.DEVNULL)
        try:
            dsn = (dirs["pg"] / "address").read_text().strip()
            address = (dirs["redis"] / "address").read_text().strip()
            commands = {
                "corio": [str(bdir / "bench" / "corio_db_bench"), "--pg", dsn, "--redis", address],
                "asyncpg": [PYTHON, str(HERE / "py_db_bench.py"), "--lib", "asyncpg", "--pg",
                            "postgresql://postgres@" + address.split(":")[0] + ":" +
                            (dirs["pg"] / "port").read_text().strip() + "/postgres"],
                "psycopg": [PYTHON, str(HERE / "py_db_bench.py"), "--lib", "psycopg", "--pg", dsn],
                "redis-py": [PYTHON, str(HERE / "py_db_bench.py"), "--lib", "redis-py", "--redis",
                             address],
            }
            if "corio_db_bench" not in built:
                commands.pop("corio")
            for _ in range(rounds):
                for impl, cmd in commands.items():
                    if impl not in impls:
                        continue
                    line = pinned(cmd + ["--duration", str(duration)], client_cpu)
                    for r in run_json_lines(line, timeout=20 * duration + 60):
                        samples.setdefault((r["impl"], r["metric"]), []).append(r)
                if "redis-benchmark" in impls:
                    for depth in (1, 16):
                        for r in redis_benchmark(address.split(":")[1], depth, client_cpu):
                            samples.setdefault((r["impl"], r["metric"]), []).append(r)
        finally:
            for kind, d in dirs.items():
                subprocess.run([PYTHON, str(SERVER), "stop", kind, str(d)])
    return [sorted(rs, key=lambda r: r["ops_per_s"])[len(rs) // 2] for rs in samples.values()]


def table(results):
    val = {(r["impl"], r["metric"]): r for r in results}
    for title, impls, metrics, peer in [
            ("PostgreSQL", PG_IMPLS, PG_METRICS, "asyncpg"),
            ("Redis", REDIS_IMPLS, REDIS_METRICS, "redis-benchmark")]:
        present = [i for i in impls if any(r["impl"] == i for r in results)]
        for key, what in [("ops_per_s", "per second"), ("ops_per_cpu_s", "per client CPU-second")]:
            hdr = ["workload"] + present + [f"corio/{peer}"]
            rows = []
            for metric, label in metrics:
                cells = [val.get((i, metric), {}).get(key) for i in present]
                mine, theirs = val.get(("corio", metric), {}), val.get((peer, metric), {})
                rows.append([label] + ["n/a" if c is None else f"{c:,.0f}" for c in cells] +
                            [ratio(mine.get(key), theirs.get(key))])
            show(f"{title}: operations {what} (median of rounds; higher is better)", hdr, rows)
    print("fetch 100k rows counts fetches; 16 tasks/deep share one connection.")
