#!/usr/bin/python3
"""Python asyncio (and uvloop, if importable) peer for the core-runtime benchmarks.

Same five metrics as bench/core_bench.cpp; prints one JSON object per line:
    {"impl": "asyncio"|"uvloop", "metric": "...", "value": ..., "unit": "..."}

Equivalents:
  spawn_await   await asyncio.create_task(child())
  switch        two tasks, each N x await asyncio.sleep(0); ns per switch = total / 2N
  direct_await  await child()   (async def child(): return x + 1)
  mem_per_task  100k tasks each awaiting one pending loop.create_future();
                RSS delta (/proc/self/statm, tracemalloc off) and tracemalloc delta
                (a second, separate round) per task
  mem_per_event_task  the same with each task in Event.wait() on one asyncio.Event;
                only with --only mem_per_event_task (bench/idle runs it)
  timers_1m     1M loop.call_at(start + d, cb), d uniform in [0, 1 s] (seed fixed,
                generated before timing); wall from first schedule to last fire, and
                process CPU time (time.process_time) over the same span

Usage: asyncio_core.py [--quick] [--reps N] [--impl asyncio|uvloop|all] [--only METRIC]
  --quick: ~0.1 s per timed metric, 1 rep, 100k timers instead of 1M.
"""
import asyncio
import gc
import os
import random
import statistics
import time
import tracemalloc

import peer_common
from peer_common import emit

MEM_TASKS = 100_000
TIMERS = 1_000_000
PAGE = os.sysconf("SC_PAGESIZE")



def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


async def child(x):
    return x + 1


# --- 1. spawn_await ----------------------------------------------------------------------
async def spawn_await(n):
    create_task = asyncio.create_task
    acc = 0
    t0 = time.perf_counter()
    for _ in range(n):
        acc += await create_task(child(acc & 1))
    return time.perf_counter() - t0


# --- 2. switch ---------------------------------------------------------------------------
async def _switcher(n):
    sleep = asyncio.sleep
    for _ in range(n):
        await sleep(0)


async def switch(n):
    t0 = time.perf_counter()
    await asyncio.gather(_switcher(n), _switcher(n))
    return time.perf_counter() - t0


# --- 3. direct_await ---------------------------------------------------------------------
async def direct_await(n):
    acc = 0
    t0 = time.perf_counter()
    for _ in range(n):
        acc += await child(acc & 1)
    return time.perf_counter() - t0


def measure_ns(runner, fn, quick, reps, ops_per_iter=1.0):
    """Median ns per op; n calibrated so one run takes ~target seconds."""
    target = 0.1 if quick else 1.0
    n = 1000
    while True:
        t = runner.run(fn(n))
        if t >= target / 10:
            n = max(1000, int(n * target / max(t, 1e-9)))
            break
        n *= 10
    runs = [runner.run(fn(n)) * 1e9 / (n * ops_per_iter) for _ in range(reps)]
    return statistics.median(runs)


# --- 4. mem_per_task ---------------------------------------------------------------------
async def _waiter(fut):
    await fut


async def _event_waiter(ev):
    await ev.wait()


async def mem_round(use_tracemalloc, event=False):
    """Bytes per task suspended on one future (or, with event, in one Event's wait())."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    ev = asyncio.Event()
    waiting = (lambda: _event_waiter(ev)) if event else lambda: _waiter(fut)
    tasks = [None] * MEM_TASKS  # container allocated before the baseline
    await asyncio.sleep(0)
    gc.collect()
    if use_tracemalloc:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
    else:
        base = rss_bytes()
    for i in range(MEM_TASKS):
        tasks[i] = loop.create_task(waiting())
    await asyncio.sleep(0)  # every task runs its first step and suspends on fut
    await asyncio.sleep(0)
    if use_tracemalloc:
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    else:
        after = rss_bytes()
    fut.set_result(None)
    ev.set()
    await asyncio.gather(*tasks)
    return (after - base) / MEM_TASKS


# --- 5. timers_1m ------------------------------------------------------------------------
async def timers(n):
    loop = asyncio.get_running_loop()
    rng = random.Random(20240611)
    delays = [rng.random() for _ in range(n)]
    done = loop.create_future()
    state = {"fired": 0, "t_last": 0.0}

    def cb():
        state["fired"] += 1
        if state["fired"] == n:
            state["t_last"] = time.perf_counter()
            done.set_result(None)

    call_at = loop.call_at
    c0 = time.process_time()
    t0 = time.perf_counter()
    start = loop.time()  # deadlines in [start, start + 1 s]
    for d in delays:
        call_at(start + d, cb)
    t_sched = time.perf_counter()
    await done
    c1 = time.process_time()
    return state["t_last"] - t0, c1 - c0, t_sched - t0


def run_impl(impl, loop_factory, args):
    def sel(m):
        return args.only is None or args.only == m

    if args.only == "mem_per_event_task":
        with asyncio.Runner(loop_factory=loop_factory) as r:
            emit(impl, "mem_per_event_task_rss", r.run(mem_round(False, event=True)), "bytes")
        with asyncio.Runner(loop_factory=loop_factory) as r:
            emit(impl, "mem_per_event_task_tracemalloc", r.run(mem_round(True, event=True)), "bytes")
        return
    if sel("mem_per_task"):
        # A fresh runner per round; RSS round first (tracemalloc slows and bloats).
        with asyncio.Runner(loop_factory=loop_factory) as r:
            emit(impl, "mem_per_task_rss", r.run(mem_round(False)), "bytes")
        with asyncio.Runner(loop_factory=loop_factory) as r:
            emit(impl, "mem_per_task_tracemalloc", r.run(mem_round(True)), "bytes")
    with asyncio.Runner(loop_factory=loop_factory) as r:
        if sel("spawn_await"):
            emit(impl, "spawn_await", measure_ns(r, spawn_await, args.quick, args.reps), "ns")
        if sel("switch"):
            emit(impl, "switch", measure_ns(r, switch, args.quick, args.reps, 2.0), "ns")
        if sel("direct_await"):
            emit(impl, "direct_await", measure_ns(r, direct_await, args.quick, args.reps), "ns")
    if sel("timers_1m"):
        n = TIMERS // 10 if args.quick else TIMERS
        with asyncio.Runner(loop_factory=loop_factory) as r:
            wall, cpu, sched = r.run(timers(n))
        name = "timers_1m" if n == TIMERS else f"timers_{n // 1000}k"
        emit(impl, f"{name}_wall", wall, "s")
        emit(impl, f"{name}_cpu", cpu, "s")
        emit(impl, f"{name}_sched", sched, "s")



if __name__ == "__main__":
    peer_common.main(__doc__, run_impl)
