"""The file suite, used by bench/run: 4 KiB random reads at queue depth 1 and 16, and
1 MiB sequential reads, from one 64 MiB file in the page cache, by corio::AsyncFile
(corio_file_bench.cpp) on epoll, where the reads run on the loop's thread pool
("corio"), and on io_uring, where they go to the ring ("corio-uring"), and by fio's
psync engine (depth D: D threads, as a pool would) and io_uring engine (depth D: D
reads in flight on one thread), the limit. Each run is pinned to the same core and
reads for the same time; reported: operations per second and the process's CPU per
operation.
"""
import json
import resource
import shutil
import subprocess

from benchlib import log, num, pinned, ratio, run_json_lines, show, target_path

SIZE = 64 << 20
# (metric key, fio rw, block size, depth)
PATTERNS = [("file_rand4k_qd1", "randread", "4k", 1), ("file_rand4k_qd16", "randread", "4k", 16),
            ("file_seq1m", "read", "1M", 1)]
LABELS = {"file_rand4k_qd1": "4 KiB random, depth 1", "file_rand4k_qd16": "4 KiB random, depth 16",
          "file_seq1m": "1 MiB sequential"}
IMPLS = ["corio", "corio-uring", "fio-psync", "fio-io_uring"]
# corio's two runs, one per backend (CORIO_BACKEND); the bench names itself after the
# backend it ran on, so an io_uring refused by the kernel gives no corio-uring figures.
CORIO_RUNS = {"corio": "epoll", "corio-uring": "io_uring"}
# (ours, peer) ratio columns: the pool path against its limit, the ring against the pool
# and against its limit.
RATIOS = [("corio", "fio-psync"), ("corio-uring", "corio"), ("corio-uring", "fio-io_uring")]


def targets(impls):
    return ["corio_file_bench"] if any(i in impls for i in CORIO_RUNS) else []


def corio_runs(args, impls, bdir, path, rw, depth, seconds):
    """corio_file_bench's results for one pattern, on each selected backend."""
    results = []
    for impl, backend in CORIO_RUNS.items():
        if impl not in impls:
            continue
        cmd = ["env", f"CORIO_BACKEND={backend}"] + pinned(
            [str(target_path(bdir, "corio_file_bench")), "--file", str(path), "--pattern",
             "seq1m" if rw == "read" else "rand4k", "--depth", str(depth), "--seconds", str(seconds)],
            args.cpu)
        got = run_json_lines(cmd, timeout=seconds + 30)
        if any(r["impl"] != impl for r in got):
            log(f"file: {impl} ran on another backend (io_uring refused?): its figures are left out")
            got = [r for r in got if r["impl"] == impl]
        results += got
    return results


def make_file(bdir):
    path = bdir / "bench-file.bin"
    if not path.exists() or path.stat().st_size != SIZE:
        with open(path, "wb") as f:
            for _ in range(SIZE >> 20):
                f.write(bytes(range(256)) * 4096)
    with open(path, "rb") as f:  # into the page cache, as every run reads it
        while f.read(1 << 20):
            pass
    return path


def fio(engine, path, rw, bs, depth, seconds, cpu):
    """fio's (op/s, CPU us per op) for one pattern, or None. Its CPU is the child's
    rusage (all threads; its few ms of start-up included), not fio's own usr_cpu and
    sys_cpu, which group_reporting averages over the psync threads."""
    jobs = ["--ioengine=psync", "--thread", f"--numjobs={depth}", "--group_reporting"] \
        if engine == "psync" else ["--ioengine=io_uring", f"--iodepth={depth}"]
    cmd = pinned(["fio", "--name=corio-bench", f"--filename={path}", "--readonly", f"--rw={rw}",
                  f"--bs={bs}", f"--size={SIZE}", "--invalidate=0", f"--runtime={seconds}",
                  "--time_based", "--output-format=json"] + jobs, cpu)
    log("+", " ".join(cmd))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        log(f"  fio exited with {p.returncode}")
        return None
    job = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]
    iops, ops = job["read"]["iops"], job["read"]["total_ios"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return iops, cpu * 1e6 / ops if ops else None


def run(args, impls, bdir, built):
    seconds = 1 if args.quick else 2
    path = make_file(bdir)
    results = []

    def add(impl, key, ops, cpu_us):
        results.append({"impl": impl, "metric": f"{key}_ops", "value": ops, "unit": "op/s"})
        if cpu_us is not None:
            results.append({"impl": impl, "metric": f"{key}_cpu_us", "value": cpu_us, "unit": "us/op"})

    for key, rw, bs, depth in PATTERNS:
        if "corio_file_bench" in built:
            results += corio_runs(args, impls, bdir, path, rw, depth, seconds)
        if "fio" in impls and shutil.which("fio"):
            for engine in ("psync", "io_uring"):
                got = fio(engine, path, rw, bs, depth, seconds, args.cpu)
                if got is not None:
                    add(f"fio-{engine}", key, *got)
    if "fio" in impls and not shutil.which("fio"):
        log("file: no fio (apt-get install fio): no fio columns")
    return results


def table(results):
    val = {(r["impl"], r["metric"]): r["value"] for r in results}
    impls = [i for i in IMPLS if any(r["impl"] == i for r in results)]
    pairs = [(a, b) for a, b in RATIOS if a in impls and b in impls]
    hdr = ["file reads"] + impls + [f"{a}/{b}" for a, b in pairs]
    for what, title in (("ops", "File reads per second (higher is better)"),
                        ("cpu_us", "CPU per read, µs, all threads (lower is better)")):
        rows = []
        for key, *_ in PATTERNS:
            cells = {i: val.get((i, f"{key}_{what}")) for i in impls}
            shown = [num(cells[i], 0 if what == "ops" else 2) for i in impls]
            # ratios so that > 1 means corio is better
            rs = [ratio(cells[a], cells[b]) if what == "ops" else ratio(cells[b], cells[a])
                  for a, b in pairs]
            rows.append([LABELS[key]] + shown + rs)
        show(title, hdr, rows)
    print()
    print("One 64 MiB file in the page cache, read for the same time by each; pinned to one core "
          "(fio psync at depth D runs D threads, as corio's pool does; fio io_uring keeps D reads in "
          "flight on one thread; corio-uring keeps D reads in its loop's ring). Ratios > 1 mean the "
          "first is faster / cheaper.")
