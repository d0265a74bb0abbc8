"""Raw HTTP/1.1 over a loopback socket: bytes as a hostile client sends
them, and a strict reader of the answer (every operation has a timeout)."""
import socket
import struct

from harness import CheckFailed, expect, seconds

MAX_HEAD = 256 * 1024


class Response:
    def __init__(self, status, headers, body, reason=""):
        self.status, self.headers, self.body, self.reason = status, headers, body, reason

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        return f"<{self.status} {self.body[:80]!r}>"


class Conn:
    """One client connection; reads are buffered so pipelined answers split
    cleanly."""

    def __init__(self, port, timeout=10, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:  # before connect, so the window the server sees is small
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(seconds(timeout))
        self.sock.connect(("127.0.0.1", port))
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def recv_some(self, n=65536):
        """Up to n bytes; b"" at EOF."""
        if self.buf:
            data, self.buf = self.buf[:n], self.buf[n:]
            return data
        return self.sock.recv(n)

    def _fill(self, what):
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise CheckFailed(f"no {what} within {self.sock.gettimeout():.0f} s")
        except ConnectionResetError:
            raise CheckFailed(f"connection reset before the whole {what} was read "
                              f"(got {self.buf[:120]!r})")
        if not data:
            raise CheckFailed(f"connection closed before the whole {what} "
                              f"(got {self.buf[:120]!r})")
        self.buf += data

    def _take(self, n, what):
        while len(self.buf) < n:
            self._fill(what)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def read_exact(self, n, what):
        """Exactly n bytes (a failure if the peer ends first)."""
        return self._take(n, what)

    def _line(self, what):
        while b"\r\n" not in self.buf:
            expect(len(self.buf) < MAX_HEAD, f"{what} longer than {MAX_HEAD} bytes")
            self._fill(what)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read_response(self, method="GET"):
        """The next answer, whole: head, then its body by Content-Length,
        chunked, or until close."""
        status_line = self._line("status line")
        parts = status_line.split(b" ", 2)
        expect(len(parts) >= 2 and parts[0].startswith(b"HTTP/1.") and parts[1].isdigit(),
               f"not a status line: {status_line[:120]!r}")
        status = int(parts[1])
        reason = parts[2].decode(errors="replace") if len(parts) > 2 else ""
        headers = {}
        while True:
            line = self._line("response head")
            if not line:
                break
            name, _, value = line.partition(b":")
            headers[name.decode().strip().lower()] = value.decode(errors="replace").strip()
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            body = b""
        elif headers.get("transfer-encoding", "").lower().endswith("chunked"):
            body = self._chunked_body()
        elif "content-length" in headers:
            body = self._take(int(headers["content-length"]), "body")
        else:
            body = self.read_until_close()[0]
        return Response(status, headers, body, reason)

    def _chunked_body(self):
        body = b""
        while True:
            size = int(self._line("chunk size").split(b";")[0], 16)
            if size == 0:
                while self._line("trailer"):
                    pass
                return body
            body += self._take(size, "chunk")
            expect(self._take(2, "chunk end") == b"\r\n", "a chunk not followed by CRLF")

    def read_until_close(self, limit=4 << 20):
        """(bytes, how): everything until the peer ends, how 'eof' or 'reset'."""
        data, self.buf = self.buf, b""
        while len(data) < limit:
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise CheckFailed(f"connection still open {self.sock.gettimeout():.0f} s "
                                  f"later (after {data[:120]!r})")
            except ConnectionResetError:
                return data, "reset"
            if not chunk:
                return data, "eof"
            data += chunk
        raise CheckFailed(f"more than {limit} bytes before the connection closed")

    def expect_closed(self, what):
        """The server closes this connection (EOF or reset) with no more data."""
        extra, _ = self.read_until_close()
        expect(not extra, f"after {what}: unexpected bytes before close: {extra[:120]!r}")

    def expect_open(self):
        """Still usable: a ping request on it is answered."""
        self.send(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        r = self.read_response()
        expect(r.status == 200, f"the kept-alive connection answered {r} to GET /hello")

    def abort(self):
        """Close with a reset (SO_LINGER 0), as a crashed client does."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def get(port, target="/hello", host="x", headers=b""):
    """One GET on a fresh connection (header lines, CRLF-ended, added): its
    Response."""
    with Conn(port) as c:
        c.send(f"GET {target} HTTP/1.1\r\nHost: {host}\r\n".encode() + headers + b"\r\n")
        return c.read_response()


def expect_refused(port, data, statuses, what):
    """data is answered with one of statuses, then the connection closes."""
    statuses = statuses if isinstance(statuses, tuple) else (statuses,)
    with Conn(port) as c:
        c.send(data)
        r = c.read_response()
        expect(r.status in statuses, f"{what}: answered {r.status} {r.body[:100]!r}, "
                                     f"expected {' or '.join(map(str, statuses))}")
        c.expect_closed(what)
        return r
