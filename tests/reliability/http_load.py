"""`corio serve` under load and time attacks, each group on a server of its
own (their waits overlap the other groups'): connection churn, slow readers
of the 1 MB file, slowloris, a body that never comes, fd exhaustion."""
import fcntl
import os
import resource
import select
import struct
import termios
import time

import harness
from harness import CheckFailed, expect, expect_bounded, wait_until
from http_checks import H, ServeGroup, hang_up
from httpraw import Conn, get

GET_BIG = b"GET /big.bin HTTP/1.1\r\n" + H + b"\r\n"
GET_HELLO = b"GET /hello HTTP/1.1\r\n" + H + b"\r\n"
# The server's defaults (include/corio/http/server.hpp), which this suite's
# `corio serve` keeps. Timer-driven, so not scaled for slow builds.
HEADER_TIMEOUT = 10
BODY_TIMEOUT = 30


def unread_bytes(conn):
    """Bytes waiting in a client socket's receive queue."""
    raw = fcntl.ioctl(conn.sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
    return struct.unpack("i", raw)[0]


def read_sampling_rss(prog, conn, count, body, rss_before, what):
    """Reads count answers of body slowly from conn, checking the server's
    RSS along the way: a server that buffers what a slow reader has not
    taken yet grows by the whole of it."""
    peak = rss_before
    for i in range(count):
        r = conn.read_response()
        expect(r.status == 200 and r.body == body,
               f"{what}: answer {i + 1} was {r.status}, {len(r.body)} bytes, not the 1 MB file")
        peak = max(peak, prog.rss_kb())
    expect(peak - rss_before <= harness.RSS_SLACK_KB,
           f"{what}: the server's RSS grew by {(peak - rss_before) // 1024} MB "
           f"(bound {harness.RSS_SLACK_KB // 1024} MB)")


def load_group(corio):
    g = ServeGroup(corio, name="http_load")

    @g.check("churn", limit=120)
    def churn():
        for _ in range(50):  # warm the allocator before the baseline
            Conn(g.port).close()
        get(g.port)
        fds, rss = g.prog.fd_count(), g.prog.rss_kb()
        for i in range(2000):
            c = Conn(g.port)
            if i % 4 >= 2:
                c.send(GET_HELLO)
            if i % 4 == 3:
                expect(c.read_response().status == 200, f"cycle {i}: GET /hello failed")
            hang_up(c, i)
            if i % 200 == 0:
                g.prog.expect_alive(f"{i} connect/close cycles")
        expect_bounded(g.prog, fds, rss, "2,000 connect/close cycles")

    @g.check("slow_readers", limit=90)
    def slow_readers():
        fds, rss = g.prog.fd_count(), g.prog.rss_kb()
        conns = [Conn(g.port, rcvbuf=4096) for _ in range(60)]
        for c in conns:
            c.send(GET_BIG)
        wait_until(lambda: all(unread_bytes(c) > 0 for c in conns), 20,
                   "the server did not start answering all 60 slow readers")
        for i, c in enumerate(conns):
            read_sampling_rss(g.prog, c, 1, g.big, rss, f"slow reader {i + 1} of 60")
            c.close()
        expect_bounded(g.prog, fds, rss, "60 slow readers of the 1 MB file")

    @g.check("pipelined_unread", limit=90)
    def pipelined_unread():
        rss = g.prog.rss_kb()
        with Conn(g.port, rcvbuf=4096) as c:
            c.send(GET_BIG * 64)
            read_sampling_rss(g.prog, c, 64, g.big, rss, "64 pipelined GETs of the 1 MB file")

    return g


def trickle_until_closed(conns, limit):
    """Sends each connection a header line a second until the server closes
    it; the seconds that took for the last one."""
    start, live = time.monotonic(), list(conns)
    while live and time.monotonic() - start < limit:
        for c in list(live):
            try:
                c.send(b"X-Trickle: 1\r\n")
            except (BrokenPipeError, ConnectionResetError):
                live.remove(c)
        readable, _, _ = select.select([c.sock for c in live], [], [], 1.0)
        for c in [c for c in live if c.sock in readable]:
            c.read_until_close()  # an optional 408, then the end
            live.remove(c)
    expect(not live, f"{len(live)} of {len(conns)} trickling connections still open "
                     f"{limit} s later (header timeout {HEADER_TIMEOUT} s)")
    return time.monotonic() - start


def slow_group(corio):
    g = ServeGroup(corio, name="http_slow")

    @g.check("slowloris", limit=HEADER_TIMEOUT + 40)
    def slowloris():
        conns = [Conn(g.port) for _ in range(5)]
        for c in conns:
            c.send(b"GET /hello HTTP/1.1\r\n")
        expect(get(g.port).status == 200, "GET /hello not answered beside 5 slowloris clients")
        took = trickle_until_closed(conns, HEADER_TIMEOUT + 20)
        expect(took >= HEADER_TIMEOUT / 2, f"trickling connections closed after {took:.1f} s, "
                                           f"well before the {HEADER_TIMEOUT} s header timeout")

    @g.check("body_never_comes", limit=BODY_TIMEOUT + 40)
    def body_never_comes():
        with Conn(g.port) as c:
            c.send(b"POST /hello HTTP/1.1\r\n" + H + b"Content-Length: 1000\r\n\r\n" + b"x" * 10)
            c.sock.settimeout(BODY_TIMEOUT + 20)
            start = time.monotonic()
            c.read_until_close()
            took = time.monotonic() - start
        expect(took >= BODY_TIMEOUT / 2, f"a stalled body was closed after {took:.1f} s, well "
                                         f"before the {BODY_TIMEOUT} s body timeout")

    return g


FD_LIMIT = 64


def limit_fds():
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def emfile_group(corio):
    g = ServeGroup(corio, name="http_emfile", preexec_fn=limit_fds)

    @g.check("accept_at_emfile", limit=60)
    def accept_at_emfile():
        if harness.SANITIZED:
            raise harness.Skipped(
                "UBSan's vptr check probes memory through a pipe: with no fd left it reports "
                "a false 'invalid vptr' (seen in SocketTransport's constructor) and halts")
        fds = g.prog.fd_count()
        held = [Conn(g.port) for _ in range(FD_LIMIT + 40)]
        wait_until(lambda: g.prog.fd_count() >= FD_LIMIT - 1, 10,
                   f"the server never reached its {FD_LIMIT} fd limit")
        cpu, start = cpu_seconds(g.prog.pid), time.monotonic()
        time.sleep(2)  # the window the CPU use is measured over
        used = (cpu_seconds(g.prog.pid) - cpu) / (time.monotonic() - start)
        expect(used < 0.25, f"at EMFILE the server used {used:.0%} of a CPU (accept spinning)")
        for c in held:
            c.abort()
        recovered = []

        def answers():
            try:
                recovered.append(get(g.port).status)
            except (CheckFailed, OSError):
                return False
            return recovered[-1] == 200
        wait_until(answers, 15, "the server did not answer again after the fds were freed")
        wait_until(lambda: g.prog.fd_count() <= fds + 2, 10,
                   f"fd count did not come back after EMFILE: {fds} before, {g.prog.fd_count()} now")
        expect(len(g.prog.stderr()) < 50,
               f"{len(g.prog.stderr())} stderr lines at EMFILE (one per failed accept?)")

    return g


def tls_check(corio, report):
    """`corio serve` TLS: there is nothing to attack unless it can serve it."""
    text = harness.tool_help(corio, "serve")
    if "--cert" in text or "--tls" in text:
        report.add("SKIP", "http_tls", "corio serve now has TLS options: add the TLS stall and "
                                       "truncation attacks to this suite")
    else:
        report.add("SKIP", "http_tls", "corio serve has no TLS option (corio serve --help)")
