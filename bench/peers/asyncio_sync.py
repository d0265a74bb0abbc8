#!/usr/bin/python3
"""Python asyncio (and uvloop, if importable) peer for the sync-layer and thread benchmarks.

Same five metrics as bench/sync_bench.cpp; prints one JSON object per line:
    {"impl": "asyncio"|"uvloop", "metric": "...", "value": ..., "unit": "ns"}

Equivalents:
  lock_uncontended  one task: `async with lock: pass`; ns per acquire/release pair
  lock_contended    LOCK_TASKS tasks, each n x `async with lock: await asyncio.sleep(0)`;
                    ns per hand-off = total / (LOCK_TASKS * n)
  queue_bounded     producer `await q.put(i)` into asyncio.Queue(QUEUE_MAX), consumer
                    `await q.get()`; ns per item
  queue_unbounded   the same on asyncio.Queue(); the producer yields (sleep(0)) after
                    every BURST puts; ns per item
  to_thread         `await asyncio.to_thread(one)`, one after another; ns per round trip

Usage: asyncio_sync.py [--quick] [--reps N] [--impl asyncio|uvloop|all] [--only METRIC]
  --quick: ~0.1 s per metric and 1 rep (otherwise ~0.5 s and 3 reps, median).
"""
import asyncio
import statistics
import time

import peer_common
from peer_common import emit

LOCK_TASKS = 4  # sync_bench.cpp kLockTasks
QUEUE_MAX = 100  # kQueueMax
BURST = 100  # kBurst



# Each benchmark coroutine takes n and returns (seconds, operations).

# --- 1. lock_uncontended -----------------------------------------------------------------
async def lock_uncontended(n):
    lock = asyncio.Lock()
    t0 = time.perf_counter()
    for _ in range(n):
        async with lock:
            pass
    return time.perf_counter() - t0, n


# --- 2. lock_contended -------------------------------------------------------------------
async def _lock_worker(lock, n):
    sleep = asyncio.sleep
    for _ in range(n):
        async with lock:
            await sleep(0)


async def lock_contended(n):
    lock = asyncio.Lock()
    t0 = time.perf_counter()
    await asyncio.gather(*(_lock_worker(lock, n) for _ in range(LOCK_TASKS)))
    return time.perf_counter() - t0, n * LOCK_TASKS


# --- 3. queue_bounded / queue_unbounded ----------------------------------------------------
async def _consumer(q):
    get = q.get
    total = 0
    while True:
        v = await get()
        if v < 0:
            return total
        total += v


async def queue_bounded(n):
    q = asyncio.Queue(QUEUE_MAX)
    cons = asyncio.create_task(_consumer(q))
    put = q.put
    t0 = time.perf_counter()
    for i in range(n):
        await put(i & 0xFFFF)
    t = time.perf_counter() - t0  # as the C++ side: the consumer's last <= QUEUE_MAX not timed
    await put(-1)
    await cons
    return t, n


async def queue_unbounded(n):
    q = asyncio.Queue()
    cons = asyncio.create_task(_consumer(q))
    put = q.put
    sleep = asyncio.sleep
    bursts = max(1, n // BURST)
    t0 = time.perf_counter()
    for b in range(bursts):
        for i in range(BURST):
            await put(i)
        await sleep(0)  # the consumer drains the burst
    t = time.perf_counter() - t0
    await put(-1)
    await cons
    return t, bursts * BURST


# --- 4. to_thread ------------------------------------------------------------------------
def one():
    return 1


async def to_thread(n):
    to_thread_ = asyncio.to_thread
    acc = await to_thread_(one)  # outside the timing: starts the pool's thread
    t0 = time.perf_counter()
    for _ in range(n):
        acc += await to_thread_(one)
    return time.perf_counter() - t0, n


METRICS = [
    ("lock_uncontended", lock_uncontended),
    ("lock_contended", lock_contended),
    ("queue_bounded", queue_bounded),
    ("queue_unbounded", queue_unbounded),
    ("to_thread", to_thread),
]


def measure_ns(runner, fn, quick, reps):
    """Median ns per op; n calibrated so one run takes ~target seconds."""
    target = 0.1 if quick else 0.5
    n = 100
    while True:
        t, ops = runner.run(fn(n))
        if t >= target / 10:
            n = max(100, int(n * target / max(t, 1e-9)))
            break
        n *= 10
    runs = []
    for _ in range(reps):
        t, ops = runner.run(fn(n))
        runs.append(t * 1e9 / ops)
    return statistics.median(runs)


def run_impl(impl, loop_factory, args):
    with asyncio.Runner(loop_factory=loop_factory) as r:
        for name, fn in METRICS:
            if args.only is None or args.only == name:
                emit(impl, name, measure_ns(r, fn, args.quick, args.reps), "ns")



if __name__ == "__main__":
    peer_common.main(__doc__, run_impl)
