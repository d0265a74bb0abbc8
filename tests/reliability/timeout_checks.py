"""`corio serve` with its timeouts shortened by its options: a client that
stalls in the request head, between requests, in a body, or stops reading
an answer is closed within the option's bound, far before the library's
default (10, 75, 30 and 60 s), so a check fails if an option is ignored."""
import os
import select
import time

from harness import CheckFailed, expect, wait_until
from http_checks import HUGE, H, ServeGroup
from httpraw import Conn

TIMEOUT = 1  # seconds, every timeout of this group's server
# Generous over TIMEOUT (the sweeper's rounds, a slow build), yet under the
# shortest default (10 s): a check fails only if an option has no effect.
BOUND = TIMEOUT + 5


def closed_within(conn, what):
    """The seconds until the server ends conn (reading what it sends, an
    optional 408 or the rest of an answer); a failure after BOUND s."""
    conn.sock.settimeout(BOUND)
    start = time.monotonic()
    try:
        conn.read_until_close()
    except CheckFailed:
        raise CheckFailed(f"{what}: still open {BOUND} s later (option set to {TIMEOUT} s)")
    return time.monotonic() - start


def reset_within(conn, what):
    """Like closed_within, for a client that reads nothing: the server's
    FIN waits behind its unsent bytes, so only its reset (POLLERR/POLLHUP)
    can show."""
    poller = select.poll()
    poller.register(conn.sock, select.POLLERR | select.POLLHUP)
    start = time.monotonic()
    if not poller.poll(BOUND * 1000):
        raise CheckFailed(f"{what}: still open {BOUND} s later (option set to {TIMEOUT} s)")
    return time.monotonic() - start


def timeouts_group(corio):
    g = ServeGroup(corio, name="http_timeouts", args=[
        arg for which in ("header", "idle", "body", "send")
        for arg in (f"--{which}-timeout", str(TIMEOUT))])
    with open(os.path.join(g.root, "huge.bin"), "wb") as f:
        f.write(b"h" * HUGE)

    @g.check("header")
    def header_timeout():
        with Conn(g.port) as c:
            c.send(b"GET /hel")  # half a request line, then nothing
            closed_within(c, "half a request line")

    @g.check("idle")
    def idle_timeout():
        with Conn(g.port) as c:
            c.send(b"GET /hello HTTP/1.1\r\n" + H + b"\r\n")
            expect(c.read_response().status == 200, "GET /hello was not answered")
            closed_within(c, "a kept-alive connection with no next request")

    @g.check("body")
    def body_timeout():
        with Conn(g.port) as c:
            c.send(b"POST /hello HTTP/1.1\r\n" + H + b"Content-Length: 1000\r\n\r\n" + b"x" * 10)
            closed_within(c, "a POST with 10 of its 1,000 body bytes")

    @g.check("send")
    def send_timeout():
        fds = g.prog.fd_count()
        with Conn(g.port, rcvbuf=4096) as c:
            c.send(b"GET /huge.bin HTTP/1.1\r\n" + H + b"\r\n")
            reset_within(c, "a client that reads none of a 16 MB answer")
        wait_until(lambda: g.prog.fd_count() <= fds, 10, "the stalled reader's fd was not released")

    return g
