"""The rest of the `corio` tool: echo-server under abrupt closes, and
`corio fetch` against a lying server (bodies cut short or malformed)."""
import socket
import subprocess
import threading

from harness import Group, expect, expect_bounded, seconds, tool_help
from httpraw import Conn


class EchoGroup(Group):
    name = "echo"

    def __init__(self, corio):
        super().__init__()
        self.corio = corio

    def start(self):
        self.prog = self.spawn([self.corio, "echo-server", "--port", "0"])
        self.port = int(self.prog.wait_line("out", r"listening on [^:]+:(\d+)").group(1))

    def healthy(self, after):
        self.prog.expect_alive(after)
        with Conn(self.port) as c:
            c.send(b"ping\n")
            got = b""
            while len(got) < 5:
                data = c.recv_some()
                expect(data, f"after {after}: the echo server closed before echoing")
                got += data
        expect(got == b"ping\n", f"after {after}: echoed {got!r}")

    def stop(self):
        rc = self.prog.stop()
        expect(rc in (0, 130), f"corio echo-server ended with exit code {rc} after SIGINT")


def echo_group(corio):
    g = EchoGroup(corio)

    @g.check("abrupt_closes")
    def abrupt_closes():
        fds, rss = g.prog.fd_count(), g.prog.rss_kb()
        for i in range(300):
            c = Conn(g.port)
            c.send(b"x" * 4096)
            if i % 2:  # half of them mid-echo: the server has bytes to send back
                expect(c.recv_some(1), f"connection {i}: nothing echoed")
            c.abort()
        expect_bounded(g.prog, fds, rss, "300 abrupt closes")
        g.healthy("300 abrupt closes")  # the loop has seen every reset by now
        expect(not g.prog.stderr(), f"stderr after 300 resets: {len(g.prog.stderr())} lines, "
                                    f"first {g.prog.stderr()[:2]}")

    return g


# What the lying server sends after its head, by path.
LIES = {
    "/ok": b"Content-Length: 5\r\n\r\nhello",
    "/short": b"Content-Length: 100\r\n\r\nonly ten b",
    "/chunk-cut": b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
    "/bad-chunk": b"Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
}


class LyingServer:
    """A loopback HTTP server that answers 200 with a broken body, then
    closes."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(seconds(60))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn):
        with conn:
            conn.settimeout(seconds(10))
            head = b""
            try:
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    data = conn.recv(4096)
                    if not data:
                        return
                    head += data
                path = head.split(b" ")[1].decode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n" + LIES.get(path, b"\r\n"))
            except OSError:
                pass

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self):
        self.sock.close()


class FetchGroup(Group):
    name = "fetch"

    def __init__(self, corio):
        super().__init__()
        self.corio = corio

    def start(self):
        self.server = LyingServer()

    def stop(self):
        self.server.close()

    def fetch(self, *paths):
        """(exit code, output) of `corio fetch` on paths of the lying server."""
        urls = [self.server.url(p) for p in paths]
        run = subprocess.run([self.corio, "fetch", "--timeout", "20"] + urls, capture_output=True,
                             text=True, timeout=seconds(60))
        return run.returncode, run.stdout + run.stderr


def fetch_group(corio):
    g = FetchGroup(corio)

    @g.check("whole_body")
    def whole_body():
        rc, out = g.fetch("/ok")
        expect(rc == 0 and "1 of 1 succeeded" in out,
               f"corio fetch of a whole 5-byte body: exit {rc}, output {out[-300:]!r}")

    for name, path, what in [("short_body", "/short", "a body short of its Content-Length"),
                             ("truncated_chunked", "/chunk-cut", "a chunked body cut before its end"),
                             ("bad_chunk_size", "/bad-chunk", "a chunk size that is not hex")]:
        @g.check(name)
        def broken_body(path=path, what=what):
            rc, out = g.fetch(path, "/ok")
            expect(rc != 0, f"corio fetch exited 0 on {what}: {out[-300:]!r}")
            expect("1 of 2 succeeded" in out, f"corio fetch on {what} and a whole body did not "
                                              f"report 1 of 2 succeeded: {out[-300:]!r}")
            rows = [l for l in out.splitlines() if g.server.url(path) in l and "(" in l]
            expect(rows, f"corio fetch did not report the error of {what}: {out[-300:]!r}")

    return g


def redirect_secrets_check(corio, report):
    """A Cookie the caller set must not follow a redirect to another origin
    (CVE-2022-27776's class). Only a client the caller hands headers to can
    show it, and no real program is one: the cookie jar's own cookies were
    always kept to their origin."""
    if "--header" in tool_help(corio, "fetch"):
        report.add("SKIP", "fetch.redirect_secrets",
                   "corio fetch now takes request headers: add a check that a Cookie given to "
                   "it is not sent on after a 302 to another port")
    else:
        report.add("SKIP", "fetch.redirect_secrets",
                   "no real program sends a caller-set Cookie (corio fetch has no header "
                   "option); tests/http/client_redirect_test.cpp covers it")
