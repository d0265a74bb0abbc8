#!/usr/bin/env python3
"""Memory per idle connection: a server's RSS growth over N connections, each left open after
one exchange. WebSocket echo servers with and without permessage-deflate, and TLS servers.

  bench/ws/idle_memory.py [--n 2000] [--build-dir build/release] [--only NAME,...]

Cases (a missing program is skipped with a line saying so):
  ws:  corio (examples/http/ws_echo.cpp), python-websockets and npm ws (tests/http/ws-peers),
       each plain and with permessage-deflate offered as browsers offer it
       ("permessage-deflate; client_max_window_bits"); one ~1.5 KiB text message each, above
       npm ws's 1 KiB compression threshold, so every server inflates one message and deflates one.
  tls: `corio echo-server` with --cert/--key (one 6-byte echo) and nginx (1 worker; one keep-alive
       GET answered from the config), each also without TLS, so the TLS share is the difference.

Method: start the server, open and close 20 connections (warm-up), read VmRSS, open N connections
(200 at a time) and make each one's exchange, wait 1 s, read VmRSS again; bytes per connection =
growth / N. The client is this script (asyncio; its own memory is not counted). One run prints one
table; rerun for spread (a shared machine moves these by a few hundred bytes).
"""
import argparse
import asyncio
import base64
import os
import re
import shutil
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PEERS = ROOT / "tests" / "http" / "ws-peers"
PYTHON = "/usr/bin/python3"  # Debian's, with python3-websockets
NGINX = "/usr/sbin/nginx"
MESSAGE = ('{"type":"quote","symbol":"ACME","bid":1000,"ask":1001,"note":"the same words again"},' * 20)[:1500]

NGINX_CONF = """\
worker_processes 1;
worker_rlimit_nofile {fds};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections {fds}; }}
http {{
  access_log off;
  keepalive_timeout 600s;
  keepalive_requests 100000;
  client_body_temp_path {prefix}/body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
  server {{
    listen 127.0.0.1:{port} {ssl};
    {certs}
    location / {{ return 200 "ok"; }}
  }}
}}
"""


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def worker_pid(proc, name):
    """nginx's master forks the worker that holds the connections."""
    if name.startswith("nginx"):
        for _ in range(50):
            children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
            if children:
                return int(children[0])
            time.sleep(0.1)
    return proc.pid


# ---- clients ---------------------------------------------------------------------------------

def ws_frame(payload, compressed):
    mask = os.urandom(4)
    head = bytes([0x81, 0]) if not compressed else bytes([0xC1, 0])
    n = len(payload)
    if n < 126:
        head = head[:1] + bytes([0x80 | n])
    elif n < 65536:
        head = head[:1] + bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head = head[:1] + bytes([0x80 | 127]) + struct.pack("!Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def read_ws_frame(r):
    b0, b1 = await r.readexactly(2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", await r.readexactly(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", await r.readexactly(8))[0]
    await r.readexactly(n)
    return b0


async def ws_open(port, path, deflate, ctx=None):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    req = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n")
    if deflate:
        req += "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
    w.write((req + "\r\n").encode())
    head = (await r.readuntil(b"\r\n\r\n")).decode("latin-1")
    if " 101 " not in head.split("\r\n")[0]:
        raise RuntimeError(head.split("\r\n")[0])
    agreed = "permessage-deflate" in head.lower()
    if agreed != deflate:
        raise RuntimeError(f"deflate {'not ' if deflate else ''}agreed: {head!r}")
    payload = MESSAGE.encode()
    if agreed:
        m = re.search(r"client_max_window_bits=(\d+)", head)
        c = zlib.compressobj(wbits=-int(m.group(1)) if m else -15)
        payload = (c.compress(payload) + c.flush(zlib.Z_SYNC_FLUSH))[:-4]
    w.write(ws_frame(payload, agreed))
    await read_ws_frame(r)
    return w, head


async def echo_open(port, path, deflate, ctx=None):
    r, w = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
    w.write(b"hello\n")
    await r.readexactly(6)
    return w, ""


async def http_open(port, path, deflate, ctx=None):
    r, w = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
    w.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    head = (await r.readuntil(b"\r\n\r\n")).decode("latin-1")
    n = int(re.search(r"(?i)content-length:\s*(\d+)", head).group(1))
    await r.readexactly(n)
    return w, head


async def open_many(opener, n, port, path, deflate, ctx):
    conns = []
    for start in range(0, n, 200):
        batch = [opener(port, path, deflate, ctx) for _ in range(min(200, n - start))]
        conns += await asyncio.gather(*batch)
    return conns


def client_context(tls):
    if not tls:
        return None
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def measure(pid, opener, n, port, path, deflate, tls):
    ctx = client_context(tls)
    warm = await open_many(opener, 20, port, path, deflate, ctx)
    for w, _ in warm:
        w.close()
    await asyncio.sleep(0.5)
    before = rss(pid)
    conns = await open_many(opener, n, port, path, deflate, ctx)
    await asyncio.sleep(1.0)
    after = rss(pid)
    answer = conns[0][1]
    for w, _ in conns:
        w.close()
    return (after - before) / n, answer


# ---- servers ---------------------------------------------------------------------------------

def certificates(tmp):
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


def cases(bdir, tmp, n):
    corio, ws_echo = bdir / "bin" / "corio", bdir / "bin" / "example_ws_echo"
    node_ok = shutil.which("node") and (PEERS / "node_modules" / "ws").exists()
    cert, key = certificates(tmp)
    nginx_certs = f"ssl_certificate {cert}; ssl_certificate_key {key};"
    out = []
    for deflate in (False, True):
        suffix = "deflate" if deflate else "plain"
        plain = [] if deflate else ["--plain"]
        out.append((f"ws corio {suffix}", [str(ws_echo), "--port", "{port}"], ws_echo.exists(), ws_open, "/ws", deflate, False))
        out.append((f"ws python-websockets {suffix}", [PYTHON, str(PEERS / "py_peer.py"), "server", "--port", "{port}"] + plain,
                    True, ws_open, "/", deflate, False))
        out.append((f"ws npm-ws {suffix}", ["node", str(PEERS / "node_peer.mjs"), "server", "--port", "{port}"] + plain,
                    node_ok, ws_open, "/", deflate, False))
    for tls in (False, True):
        suffix = "tls" if tls else "tcp"
        tls_args = ["--cert", str(cert), "--key", str(key)] if tls else []
        out.append((f"corio echo-server {suffix}", [str(corio), "echo-server", "--port", "{port}"] + tls_args,
                    corio.exists(), echo_open, "", False, tls))
        conf = NGINX_CONF.format(prefix=tmp, port="{port}", fds=n + 200, ssl="ssl" if tls else "",
                                 certs=nginx_certs if tls else "")
        out.append((f"nginx {'https' if tls else 'http'}", [NGINX, "-p", str(tmp), "-c", "nginx-{port}.conf", "-e",
                    str(tmp / "error.log")], os.access(NGINX, os.X_OK), http_open, "", False, tls, conf))
    return out


def run_case(case, tmp, n):
    name, argv, present, opener, path, deflate, tls = case[:7]
    if not present:
        return name, None, "not built or not installed"
    port = free_port()
    argv = [a.replace("{port}", str(port)) for a in argv]
    if len(case) > 7:
        (tmp / f"nginx-{port}.conf").write_text(case[7].replace("{port}", str(port)))
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):  # until it listens
            try:
                asyncio.run(asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 1))
                break
            except OSError:
                time.sleep(0.1)
        per, answer = asyncio.run(measure(worker_pid(proc, name), opener, n, port, path, deflate, tls))
        ext = re.search(r"(?im)^sec-websocket-extensions:\s*(.*?)\r?$", answer)
        return name, per, ext.group(1) if ext else ""
    finally:
        proc.terminate()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--build-dir", default=str(ROOT / "build" / "release"))
    ap.add_argument("--only", help="comma-separated substrings of case names")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        print(f"| connection, idle after one exchange ({args.n} conns) | bytes per connection | agreed |")
        print("|---|---|---|")
        for case in cases(Path(args.build_dir), tmp, args.n):
            if args.only and not any(s in case[0] for s in args.only.split(",")):
                continue
            name, per, note = run_case(case, tmp, args.n)
            print(f"| {name} | {'-' if per is None else f'{per:,.0f}'} | {note} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
