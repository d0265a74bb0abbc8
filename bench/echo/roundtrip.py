#!/usr/bin/python3
"""What one echo round trip costs a server, counted in the kernel (issue 29): the
packets it transmits, its syscalls, its io_uring submissions and completions, and
(--profile) where its CPU goes, by kernel path, in µs per round trip.

bench/run --suite echo says which server is cheaper; this says why. Counts per round
trip do not move with the machine's speed, so two servers (or two builds) compare on
them even when their CPU times are lost in the noise of a busy machine.

  bench/echo/roundtrip.py --server 'env CORIO_BACKEND=io_uring build/release/bin/corio echo-server --port {port}'
  bench/echo/roundtrip.py --size 1024 --conns 10 --profile --server '...'

Needs root (perf tracepoints) and echo_loadgen (bench/run builds it). Server on core 0,
load generator on core 1, as the echo suite runs them.
"""
import argparse
import collections
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOADGEN = HERE.parent.parent / "build" / "release" / "bench" / "echo_loadgen"

# Tracepoints counted on the server's task (loopback: a packet it sends is received,
# and answered, in its own context, so net_dev_queue counts its data and pure ACKs).
EVENTS = {
    "packets sent": "net:net_dev_queue",
    "send(2)": "syscalls:sys_enter_sendto",
    "recv(2)": "syscalls:sys_enter_recvfrom",
    "epoll_wait": "syscalls:sys_enter_epoll_wait",
    "io_uring_enter": "syscalls:sys_enter_io_uring_enter",
    "io_uring SQEs": "io_uring:io_uring_submit_req",
    "io_uring CQEs": "io_uring:io_uring_complete",
    "io_uring poll arms": "io_uring:io_uring_poll_arm",
    "context switches": "sched:sched_switch",
}

# --profile: a sample goes to the first category any frame of its stack matches.
CATEGORIES = [
    ("softirq: loopback delivery, ACKs", ("net_rx_action",)),
    ("send: copy into the socket", ("_copy_from_iter",)),
    ("send: TCP", ("tcp_sendmsg", "__x64_sys_sendto")),
    ("receive: copy out of the socket", ("_copy_to_iter",)),
    ("receive: TCP", ("tcp_recvmsg", "sock_recvmsg")),
    ("io_uring", ("io_", "__io_", "__do_sys_io_uring_enter")),
    ("epoll", ("ep_", "do_epoll_wait")),
    ("user: memcpy", ("__memmove", "__memcpy")),
]


def start_load(args, port, seconds):
    cmd = ["taskset", "-c", "1", str(args.loadgen), "--port", str(port), "--size", str(args.size),
           "--conns", str(args.conns), "--duration", str(seconds), "--warmup", "0.3", "--impl", "x"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def round_trips(load, seconds):
    """The round trips made in `seconds` of the load generator's measured window."""
    out = load.communicate()[0]
    m = re.search(r"conns: (\d+) msg/s", out)
    if not m:
        sys.exit(f"roundtrip.py: echo_loadgen said: {out}")
    return int(m.group(1)) * seconds


def measure(args, perf_args):
    """Runs the server under load with `perf <perf_args> -p PID -- sleep N`: (round trips, perf stderr)."""
    port = random.randint(20000, 40000)
    server = subprocess.Popen(["taskset", "-c", "0", "sh", "-c", "exec " + args.server.format(port=port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        load = start_load(args, port, args.seconds + 1)
        # Counted from the end of the warm-up: 1,000 connects take a while.
        while (line := load.stdout.readline()) and "connected" not in line:
            pass
        time.sleep(0.5)
        perf = subprocess.run(["perf"] + perf_args + ["-p", str(server.pid), "--", "sleep", str(args.seconds)],
                              capture_output=True, text=True)
        return round_trips(load, args.seconds), perf.stderr
    finally:
        server.terminate()
        server.wait()


def parse_stat(err):
    r"""perf stat -x, output: {event: count}; events perf could not count are left out.

    >>> parse_stat("1234,,net:net_dev_queue,3000,100.00,,\n<not counted>,,io_uring:io_uring_complete,0,0,,\n"
    ...            "2001.5,msec,task-clock,2001,100.00,0.667,CPUs utilized")
    {'net:net_dev_queue': 1234.0, 'task-clock': 2001.5}
    """
    value = {}
    for line in err.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[0].replace(".", "").isdigit():
            value[fields[2]] = float(fields[0])
    return value


def counts(args):
    rts, err = measure(args, ["stat", "-x,", "-e", ",".join(EVENTS.values()), "-e", "task-clock"])
    value = parse_stat(err)
    print(f"{rts:,.0f} round trips of {args.size} B x {args.conns} connections; per round trip:")
    print(f"  {'server CPU, µs':22s} {value.get('task-clock', 0) * 1000 / rts:8.2f}")
    for name, event in EVENTS.items():
        if value.get(event):
            print(f"  {name:22s} {value[event] / rts:8.2f}")


def samples(data):
    """(period, [frames, leaf first]) per sample of a perf.data with call graphs."""
    out = subprocess.run(["perf", "script", "-i", data, "-F", "period,ip,sym"],
                         capture_output=True, text=True).stdout
    for block in out.split("\n\n"):
        lines = block.strip().splitlines()
        if len(lines) < 2:
            continue
        frames = [f.split(None, 1)[1] for f in lines[1:] if len(f.split(None, 1)) == 2]
        yield int(lines[0].split()[0]), frames


def category(frames):
    """The first category, in CATEGORIES' order, that a frame of the stack matches.

    >>> category(["_copy_to_iter", "tcp_recvmsg_locked", "io_recv", "io_cqring_wait"])
    'receive: copy out of the socket'
    >>> category(["tcp_v4_rcv", "net_rx_action", "do_softirq", "tcp_sendmsg_locked"])
    'softirq: loopback delivery, ACKs'
    >>> category(["_int_malloc"])
    'other'
    """
    for name, prefixes in CATEGORIES:
        if any(f.startswith(prefixes) for f in frames):
            return name
    return "other"


def profile(args):
    with tempfile.TemporaryDirectory() as tmp:
        data = f"{tmp}/perf.data"
        rts, _ = measure(args, ["record", "-q", "-g", "-o", data])
        spent = collections.Counter()
        for period, frames in samples(data):
            spent[category(frames)] += period
    total = sum(spent.values())
    print(f"server CPU by path, µs per round trip (perf samples, {rts:,.0f} round trips):")
    print(f"  {'total':34s} {total / 1e3 / rts:7.2f}")
    for name, ns in spent.most_common():
        print(f"  {name:34s} {ns / 1e3 / rts:7.2f}  {100 * ns / total:4.1f}%")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", required=True, help="the server's command; {port} is replaced")
    p.add_argument("--size", type=int, default=65536, help="message bytes (default 65536)")
    p.add_argument("--conns", type=int, default=100, help="connections (default 100)")
    p.add_argument("--seconds", type=int, default=3, help="seconds counted (default 3)")
    p.add_argument("--profile", action="store_true", help="also profile where the CPU goes (perf record -g)")
    p.add_argument("--loadgen", type=Path, default=LOADGEN, help=f"echo_loadgen (default {LOADGEN})")
    args = p.parse_args()
    counts(args)
    if args.profile:
        profile(args)


if __name__ == "__main__":
    main()
