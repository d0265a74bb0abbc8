"""`corio serve --root` attacked over raw HTTP/1.1: request smuggling shapes,
Host values, chunk extensions, request-target forms, limits with lingering
close, path traversal, garbage and truncation, hang-ups mid-download; a
reader too slow for --min-send-rate."""
import os
import random
import select
import shutil
import tempfile
import time

from harness import CheckFailed, Group, expect, expect_bounded, seconds, wait_until
from httpraw import Conn, expect_refused, get

BIG = 1 << 20
UPLOAD = 20 << 20  # over corio serve's default body limit (16 MiB)
H = b"Host: x\r\n"


class ServeGroup(Group):
    """One `corio serve` on a temp dir: a 1 MB file and an index.html."""

    def __init__(self, corio, name="http", preexec_fn=None, args=()):
        self.name = name
        super().__init__()
        self.corio, self.preexec_fn, self.args = corio, preexec_fn, list(args)
        self.root = tempfile.mkdtemp(prefix="corio-rel-")
        self.big = random.Random(13).randbytes(BIG)
        with open(os.path.join(self.root, "big.bin"), "wb") as f:
            f.write(self.big)
        with open(os.path.join(self.root, "index.html"), "wb") as f:
            f.write(b"<h1>index</h1>\n")

    def start(self):
        self.prog = self.spawn([self.corio, "serve", "--root", self.root, "--port", "0", "--quiet",
                                *self.args], preexec_fn=self.preexec_fn)
        self.port = int(self.prog.wait_line("out", r"listening on http://[^:]+:(\d+)").group(1))

    def healthy(self, after):
        self.prog.expect_alive(after)
        r = get(self.port)
        expect(r.status == 200 and r.body == b"Hello, World!",
               f"after {after}: GET /hello answered {r}")
        noisy = [l for l in self.prog.stderr() if b"xception" in l or b"never retrieved" in l]
        expect(not noisy, f"after {after}: stderr reports {noisy[:2]}")

    def stop(self):
        rc = self.prog.stop()
        expect(rc == 0, f"corio serve ended with exit code {rc} after SIGINT, expected 0")
        shutil.rmtree(self.root, ignore_errors=True)


def hang_up(conn, i):
    """Alternately a plain close (FIN) and a reset (SO_LINGER 0)."""
    if i % 2:
        conn.abort()
    else:
        conn.close()


def post(body_headers, body, target="/hello"):
    return b"POST " + target.encode() + b" HTTP/1.1\r\n" + H + body_headers + b"\r\n" + body


def protocol_group(corio):
    g = ServeGroup(corio)

    @g.check("baseline")
    def baseline():
        expect(get(g.port, "/").body == b"<h1>index</h1>\n", "GET / is not the index page")
        with Conn(g.port) as c:
            c.send(b"GET /big.bin HTTP/1.1\r\n" + H + b"\r\n")
            r = c.read_response()
        expect(r.status == 200 and r.body == g.big,
               f"GET /big.bin: {r.status}, {len(r.body)} bytes, not the 1 MB file")

    @g.check("close_mid_download")
    def close_mid_download():
        fds, rss = g.prog.fd_count(), g.prog.rss_kb()
        for i in range(20):
            # A small window, so most of the file is still to send when we go.
            c = Conn(g.port, rcvbuf=4096)
            c.send(b"GET /big.bin HTTP/1.1\r\n" + H + b"\r\n")
            expect(c.recv_some(1024), "no bytes of /big.bin before the hang-up")
            hang_up(c, i)
            g.prog.expect_alive(f"hang-up {i + 1} of 20 mid-download (SIGPIPE?)")
        expect_bounded(g.prog, fds, rss, "20 hang-ups mid-download")

    smuggling = {
        "cl_te": [b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
                  b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n"],
        "two_cl": [b"Content-Length: 3\r\nContent-Length: 4\r\n",
                   b"Content-Length: 3\r\nContent-Length: 3\r\n", b"Content-Length: 3, 4\r\n"],
        "bad_cl": [b"Content-Length: abc\r\n", b"Content-Length: -3\r\n", b"Content-Length: +3\r\n",
                   b"Content-Length: 3 3\r\n", b"Content-Length: 0x3\r\n",
                   b"Content-Length: 99999999999999999999999\r\n"],
        "te_not_chunked_last": [b"Transfer-Encoding: chunked, gzip\r\n",
                                b"Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n",
                                b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"],
        "obs_fold": [b"X-Fold: a\r\n b\r\n", b"X-Fold: a\r\n\tb\r\n",
                     b"Content-Length: 3\r\n 4\r\n"],
    }
    for shape, variants in smuggling.items():
        @g.check(f"smuggling.{shape}")
        def smuggle(variants=variants, shape=shape):
            for headers in variants:
                # What a front end that took the other reading would see as a
                # second request follows: it must never be answered.
                data = post(headers, b"abc0\r\n\r\nGET /smuggled HTTP/1.1\r\n" + H + b"\r\n")
                expect_refused(g.port, data, 400, f"{shape} {headers!r}")

    @g.check("host.invalid")
    def invalid_host():
        for host in [b"a b", b"a/b", b"a@b", b"a:b:c", b"[::1", b"a:port", b"a,b", b"a\tb",
                     b"a?b", b"a#b"]:
            data = b"GET /hello HTTP/1.1\r\nHost: " + host + b"\r\n\r\n"
            expect_refused(g.port, data, 400, f"Host: {host!r}")
        expect_refused(g.port, b"GET /hello HTTP/1.1\r\n\r\n", 400, "no Host in HTTP/1.1")
        expect_refused(g.port, b"GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400,
                       "two Host fields")
        for host in ["example.com", "example.com:8080", "127.0.0.1", "[::1]:80", "a-b.c_d"]:
            r = get(g.port, host=host)
            expect(r.status == 200, f"a valid Host {host!r} was answered {r.status}")

    @g.check("chunk_ext.bad")
    def bad_chunk_extensions():
        # No route of `corio serve` reads a body: the server drains it before
        # answering, and a malformed one makes the answer a 400 and ends the
        # connection instead of being taken as valid.
        for size_line in [b"2;", b"3;a=\"b", b"3;f@o=1", b"3;=1", b"3 ;a\x00=1", b"zz", b"-3"]:
            data = b"GET /hello HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n" + \
                size_line + b"\r\nabc\r\n0\r\n\r\n"
            r = expect_refused(g.port, data, 400, f"chunk line {size_line!r}")
            expect(r.header("connection") == "close",
                   f"chunk line {size_line!r}: the answer does not say Connection: close")
        for size_line in [b"3;a=b", b"3;a=\"b c\"", b"3 ; a = b"]:
            with Conn(g.port) as c:
                c.send(b"GET /hello HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n" +
                       size_line + b"\r\nabc\r\n0\r\n\r\n")
                r = c.read_response()
                expect(r.status == 200 and r.header("connection") != "close",
                       f"a valid chunk line {size_line!r} was answered {r} / {r.headers}")
                c.expect_open()

    @g.check("target_forms")
    def target_forms():
        expect_refused(g.port, b"GET hello HTTP/1.1\r\n" + H + b"\r\n", 400, "GET hello")
        expect_refused(g.port, b"GET * HTTP/1.1\r\n" + H + b"\r\n", 400, "GET *")
        expect_refused(g.port, b"CONNECT x:80 HTTP/1.1\r\nHost: x:80\r\n\r\n", 501, "CONNECT x:80")
        expect_refused(g.port, b"GET x:80 HTTP/1.1\r\n" + H + b"\r\n", 400, "GET x:80")
        with Conn(g.port) as c:
            c.send(b"GET http://x/index.html HTTP/1.1\r\n" + H + b"\r\n")
            r = c.read_response()
            expect(r.status == 200 and r.body == b"<h1>index</h1>\n",
                   f"the absolute-form GET http://x/index.html was answered {r}")
            c.expect_open()

    def lingering(data, extra, status, what):
        """Over a limit: the answer still reads after we sent more bytes."""
        with Conn(g.port) as c:
            c.send(data)
            try:
                c.send(extra)
            except (BrokenPipeError, ConnectionResetError) as e:
                expect(False, f"{what}: {e.__class__.__name__} while the client still sent "
                              "(no lingering close)")
            r = c.read_response()
            expect(r.status == status, f"{what}: answered {r}, expected {status}")
            c.expect_closed(what)

    @g.check("limits.request_line")
    def request_line_limit():
        lingering(b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n" + H + b"\r\n",
                  b"X: " + b"y" * (256 << 10), 414, "a 9 KB request line")

    @g.check("limits.headers")
    def header_limits():
        many = b"".join(b"X-%d: v\r\n" % i for i in range(150))
        lingering(b"GET /hello HTTP/1.1\r\n" + H + many + b"\r\n", b"z" * (256 << 10), 431,
                  "150 header fields")
        lingering(b"GET /hello HTTP/1.1\r\n" + H + b"X-Big: " + b"v" * (70 << 10) + b"\r\n\r\n",
                  b"z" * (256 << 10), 431, "a 70 KB header field")

    @g.check("limits.body")
    def body_limit():
        lingering(post(b"Content-Length: 17000000\r\n", b""), b"b" * (1 << 20), 413,
                  "a 17 MB Content-Length")

    # A client that sends its whole body before reading (most do): the
    # lingering close must outlast the upload, however large, for the 413
    # to be read. The server's cap was 1 MiB; now it is lingering_time.
    @g.check("limits.body_upload")
    def body_upload():
        lingering(post(b"Content-Length: %d\r\n" % UPLOAD, b""), b"u" * UPLOAD, 413,
                  "a 20 MiB upload over the 16 MiB body limit")

    @g.check("path_traversal")
    def path_traversal():
        for target in ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
                       "/..%2f..%2f..%2fetc%2fpasswd", "//etc/passwd", "/big.bin/../../x",
                       "/%00index.html", "/index.html%00.txt"]:
            r = get(g.port, target)
            expect(r.status >= 400 and b"root:" not in r.body,
                   f"GET {target} answered {r.status} {r.body[:60]!r}")

    @g.check("garbage")
    def garbage():
        rng = random.Random(7)
        shapes = [b"G\x00T /hello HTTP/1.1\r\n" + H + b"\r\n", b"GET /hello HTTP/9.9\r\n" + H + b"\r\n",
                  b"GET /hello HTTP/1.1\r\nnocolon\r\n\r\n", b"GET /hello HTTP/1.1\n" + b"Host: x\n\n",
                  b"GET /hello HTTP/1.1\r\nX: \x00\r\n" + H + b"\r\n", b" GET /hello HTTP/1.1\r\n\r\n",
                  b"GET  /hello  HTTP/1.1\r\n" + H + b"\r\n", b"\x16\x03\x01\x00\xa5\x01\r\n\r\n"]
        shapes += [rng.randbytes(rng.randrange(1, 2000)) + b"\r\n\r\n" for _ in range(20)]
        for data in shapes:
            with Conn(g.port) as c:
                c.send(data)
                raw, _ = c.read_until_close()
            expect(not raw or raw.startswith(b"HTTP/1.1 4") or raw.startswith(b"HTTP/1.1 5"),
                   f"garbage {data[:40]!r} was answered {raw[:40]!r}")

    @g.check("truncated")
    def truncated():
        fds, rss = g.prog.fd_count(), g.prog.rss_kb()
        cuts = [b"GET / HTT", b"GET /hello HTTP/1.1\r\n" + H, post(b"Content-Length: 100\r\n", b"x" * 10),
                post(b"Transfer-Encoding: chunked\r\n", b"5\r\nab"),
                post(b"Transfer-Encoding: chunked\r\n", b"5\r\nabcde\r\n"), b"GET /big.bin HTTP/1.1\r\n"]
        for i, data in enumerate(cuts * 4):
            c = Conn(g.port)
            c.send(data)
            hang_up(c, i)
        expect_bounded(g.prog, fds, rss, "truncated requests")

    return g


HUGE = 16 << 20  # far more than the kernel's buffers take (tcp_wmem's maximum is 4 MiB)
MIN_SEND_RATE, RATE_WINDOW = 8192, 2  # bytes/s, seconds


def read_slowly_until_closed(conn, rate, limit):
    """Reads rate bytes a second, a quarter at a time, until the server ends
    the connection: the seconds that took. A reset shows in poll() at once,
    where recv() would first return the bytes still queued."""
    conn.sock.setblocking(False)
    poller = select.poll()
    poller.register(conn.sock, select.POLLIN | select.POLLRDHUP)
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if any(ev & (select.POLLERR | select.POLLHUP | select.POLLRDHUP) for _, ev in poller.poll(0)):
            return time.monotonic() - start
        try:
            if not conn.sock.recv(rate // 4):
                return time.monotonic() - start
        except BlockingIOError:
            pass
        except ConnectionResetError:
            return time.monotonic() - start
        time.sleep(0.25)
    raise CheckFailed(f"a client reading {rate} B/s still held the answer open {limit:.0f} s later "
                      f"(--min-send-rate {MIN_SEND_RATE})")


def send_rate_group(corio):
    """`corio serve --min-send-rate`: send_timeout is per wait, so without a
    floor a client reading 256 B/s holds a large answer open for ever."""
    g = ServeGroup(corio, name="http_send_rate", args=[
        "--min-send-rate", str(MIN_SEND_RATE), "--min-send-rate-window", str(RATE_WINDOW)])
    with open(os.path.join(g.root, "huge.bin"), "wb") as f:
        f.write(b"h" * HUGE)
    get_huge = b"GET /huge.bin HTTP/1.1\r\n" + H + b"\r\n"

    @g.check("slow_reader", limit=60)
    def slow_reader():
        fds = g.prog.fd_count()
        with Conn(g.port, rcvbuf=4096) as c:
            c.send(get_huge)
            took = read_slowly_until_closed(c, 256, seconds(30))
        expect(took >= RATE_WINDOW / 2, f"the slow reader was closed after {took:.1f} s, before "
                                        f"a {RATE_WINDOW} s window of waiting for it")
        wait_until(lambda: g.prog.fd_count() <= fds, 10, "the slow reader's fd was not released")

    @g.check("fast_reader")
    def fast_reader():
        with Conn(g.port) as c:
            c.send(get_huge)
            r = c.read_response()
        expect(r.status == 200 and len(r.body) == HUGE,
               f"a fast reader got {r.status} and {len(r.body)} bytes of the 16 MB file")

    return g
