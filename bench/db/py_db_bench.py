"""The Python peers of bench/db: the same workloads as corio_db_bench.cpp on
asyncpg, psycopg 3 (async) and redis-py's asyncio client, printing the same
JSON lines (operations per second and per CPU-second of this process over the
measured window).

    py_db_bench.py --lib asyncpg|psycopg --pg DSN [--duration S]
    py_db_bench.py --lib redis-py --redis HOST:PORT [--duration S]
"""
import argparse
import asyncio
import json
import resource
import time


def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def report(impl, metric, ops, wall0, cpu0):
    wall, used = time.monotonic() - wall0, cpu() - cpu0
    print(json.dumps({"impl": impl, "metric": metric, "ops": ops, "ops_per_s": ops / wall,
                      "ops_per_cpu_s": ops / used if used else 0.0}), flush=True)


async def timed(impl, metric, width, one, duration):
    """`width` copies of `one` (an async callable) looping until the deadline."""
    until = time.monotonic() + duration
    wall0, cpu0 = time.monotonic(), cpu()

    async def loop():
        n = 0
        while time.monotonic() < until:
            await one(n)
            n += 1
        return n
    counts = await asyncio.gather(*(loop() for _ in range(width)))
    report(impl, metric, sum(counts), wall0, cpu0)


async def asyncpg_suite(dsn, duration):
    import asyncpg
    conn = await asyncpg.connect(dsn)
    one_at_a_time = asyncio.Lock()

    async def select(n):
        assert await conn.fetchval("SELECT $1::int", n) == n

    # asyncpg refuses a second operation on a busy connection: 16 tasks
    # share it through a lock (it has no pipelining to offer them).
    async def select_shared(n):
        async with one_at_a_time:
            await select(n)

    async def fetch(_):
        rows = await conn.fetch("SELECT g FROM generate_series(1, 100000) g")
        assert sum(r[0] for r in rows) == 5000050000
    await timed("asyncpg", "pg_select_1", 1, select, duration)
    await timed("asyncpg", "pg_select_16", 16, select_shared, duration)
    await timed("asyncpg", "pg_fetch_100k", 1, fetch, duration)
    await conn.close()


async def psycopg_suite(dsn, duration):
    import psycopg
    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)

    async def select(n):
        cur = await conn.execute("SELECT %s::int", (n,))
        assert (await cur.fetchone())[0] == n

    async def fetch(_):
        cur = await conn.execute("SELECT g FROM generate_series(1, 100000) g")
        assert sum(r[0] for r in await cur.fetchall()) == 5000050000
    await timed("psycopg", "pg_select_1", 1, select, duration)
    await timed("psycopg", "pg_select_16", 16, select, duration)
    await timed("psycopg", "pg_fetch_100k", 1, fetch, duration)
    await conn.close()


async def redis_suite(address, duration):
    import redis.asyncio as aredis
    host, port = address.rsplit(":", 1)
    r = aredis.Redis(host=host, port=int(port), single_connection_client=True)
    value = b"v" * 64
    await r.set("bench:key", value)

    async def get(_):
        await r.get("bench:key")

    async def put(_):
        await r.set("bench:key", value)
    await timed("redis-py", "redis_get_1", 1, get, duration)
    await timed("redis-py", "redis_set_1", 1, put, duration)

    # redis-py's asyncio client pipelines only through an explicit pipeline:
    # 16 commands a round trip, the same depth as corio's 16 in flight.
    async def batch(command):
        async def run(_):
            pipe = r.pipeline(transaction=False)
            for _ in range(16):
                pipe.get("bench:key") if command == "get" else pipe.set("bench:key", value)
            await pipe.execute()
        return run
    for command in ("get", "set"):
        until = time.monotonic() + duration
        wall0, cpu0, n = time.monotonic(), cpu(), 0
        run = await batch(command)
        while time.monotonic() < until:
            await run(n)
            n += 16
        report("redis-py", f"redis_{command}_16", n, wall0, cpu0)
    await r.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True, choices=["asyncpg", "psycopg", "redis-py"])
    ap.add_argument("--pg")
    ap.add_argument("--redis")
    ap.add_argument("--duration", type=float, default=3.0)
    a = ap.parse_args()
    if a.lib == "asyncpg":
        asyncio.run(asyncpg_suite(a.pg, a.duration))
    elif a.lib == "psycopg":
        asyncio.run(psycopg_suite(a.pg, a.duration))
    else:
        asyncio.run(redis_suite(a.redis, a.duration))


if __name__ == "__main__":
    main()
