#!/usr/bin/env python3
"""The client tests' scripted HTTP/1.1 peer (loopback, port 0).

Prints "PORT <n>" on stdout once listening, then serves until killed.
Each path is one behaviour the tests need; /stats reports what the server
saw of its connections, so keep-alive and pool limits are checked from the
other side of the socket.
"""
import gzip
import json
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

lock = threading.Lock()
stats = {"connections": 0, "active": 0, "max_active": 0, "requests": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        with lock:
            stats["connections"] += 1
            stats["active"] += 1
            stats["max_active"] = max(stats["max_active"], stats["active"])

    def finish(self):
        with lock:
            stats["active"] -= 1
        super().finish()

    def send(self, status, body, headers=()):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(n) if n else b""

    def handle_any(self):
        with lock:
            stats["requests"] += 1
        url = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        route = getattr(self, "do_" + url.path.strip("/").replace("-", "_"), None)
        if route is None:
            self.body()
            self.send(404, "not found")
            return
        route(q)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_any

    def do_echo(self, q):
        data = self.body()
        reply = {
            "method": self.command,
            "path": self.path,
            "query": q,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": data.decode("latin-1"),
            "client_port": self.client_address[1],
        }
        self.send(200, json.dumps(reply), [("Content-Type", "application/json")])

    def do_stats(self, q):
        with lock:
            self.send(200, json.dumps(stats), [("Content-Type", "application/json")])

    def do_hold(self, q):
        time.sleep(int(q.get("ms", "200")) / 1000)
        self.send(200, "held")

    def do_redirect(self, q):
        self.body()
        self.send(int(q.get("code", "302")), "moving", [("Location", q.get("to", "/echo"))])

    def do_loop(self, q):
        self.send(302, "", [("Location", "/loop")])

    def do_set_cookie(self, q):
        self.send(200, "ok", [("Set-Cookie", "%s=%s; Path=/" % (k, v)) for k, v in q.items()])

    def do_gzip(self, q):
        raw = ("corio " * int(q.get("n", "1000"))).encode()
        self.send(200, gzip.compress(raw), [("Content-Encoding", "gzip")])

    def do_deflate(self, q):
        raw = ("corio " * int(q.get("n", "1000"))).encode()
        self.send(200, zlib.compress(raw), [("Content-Encoding", "deflate")])

    def do_big(self, q):
        """A chunked body of `mb` MiB, made as it goes (never whole here either)."""
        total = int(q.get("mb", "50")) << 20
        block = bytes(range(256)) * 256  # 64 KiB
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sent = 0
        while sent < total:
            piece = block[: min(len(block), total - sent)]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            sent += len(piece)
        self.wfile.write(b"0\r\n\r\n")

    def do_silent(self, q):
        time.sleep(30)

    def do_truncated(self, q):
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b"only ten b")
        self.wfile.flush()
        self.close_connection = True

    def do_close(self, q):
        self.send(200, "bye", [("Connection", "close")])
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print("PORT", server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
