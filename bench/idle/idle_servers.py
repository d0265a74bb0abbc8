"""The idle suite's servers: who answers which protocol, and how each is started so that
idle connections stay open for the whole measurement (keep-alive timeouts of an hour;
each server's own defaults otherwise). See bench/idle/README.md.

server(proto, impl, ...) gives the command line (taskset is added by the caller), the
path the client asks for, or why the implementation cannot run here.
"""
import os
import shutil
import subprocess
from pathlib import Path

from benchlib import PYTHON, ROOT, build_go, corio_subcommand_help, log, target_path
import http_suite

# (key, title, implementations in table order, the reference peer of the ratios)
PROTOCOLS = [
    ("http", "HTTP/1.1 keep-alive, one GET /hello each", ["corio", "nginx", "go"], "nginx"),
    ("h2c", "HTTP/2 with prior knowledge (h2c), one GET /hello each", ["corio", "nginx"], "nginx"),
    ("tls", "HTTPS keep-alive (TLS 1.3, ECDSA P-256), one GET /hello each", ["corio", "nginx", "go"],
     "nginx"),
    ("ws", "WebSocket, no extension, one 128 B echo each",
     ["corio", "corio-handlers", "node-ws", "python-websockets"], "node-ws"),
    ("ws-deflate", "WebSocket, permessage-deflate agreed, one compressed 128 B echo each",
     ["corio", "corio-handlers", "node-ws", "python-websockets"], "node-ws"),
    ("ws-deflate-nct", "WebSocket, permessage-deflate with no context takeover either way, one "
     "compressed 128 B echo each", ["corio", "corio-handlers", "node-ws", "python-websockets"], "node-ws"),
    ("mcp", "MCP Streamable HTTP session, initialize + notifications/initialized each",
     ["corio", "ts-sdk"], "ts-sdk"),
]
IMPLS = ["corio", "nginx", "go", "node-ws", "python-websockets", "ts-sdk"]
NAMES = {"corio": "corio", "nginx": "nginx (1 worker)", "go": "Go net/http", "node-ws": "npm ws",
         "python-websockets": "python websockets", "ts-sdk": "MCP TypeScript SDK",
         "corio-handlers": "corio (handler set)"}
# corio serves WebSocket in two styles (docs/websocket.md): a route handler looping on
# receive() (the "corio" rows) and a handler set run per message (example_ws_echo
# --handlers); `--impl corio` measures both.
WS_NAMES = {"corio": "corio (coroutine)"}
VARIANTS = {"corio": ["corio-handlers"]}


def selected(impls):
    """impls with the variants their names bring along."""
    return set(impls).union(*(VARIANTS.get(i, []) for i in impls))


def name(proto, impl):
    return WS_NAMES.get(impl, NAMES[impl]) if proto.startswith("ws") else NAMES[impl]
CORIO_TARGETS = {"http": "corio_cli", "h2c": "corio_cli", "tls": "corio_cli", "ws": "example_ws_echo",
                 "ws-deflate": "example_ws_echo", "ws-deflate-nct": "example_ws_echo",
                 "mcp": "corio_mcp_echo_server"}
NGINX = http_suite.NGINX
WS_PEERS = ROOT / "tests" / "http" / "ws-peers"  # scripts/setup runs npm ci in it
MCP_SDK = ROOT / "tests" / "mcp" / "sdk" / "node_modules" / "@modelcontextprotocol" / "sdk"
KEEPALIVE_S = 3600  # no server may close an idle connection during the measurement


def targets(impls):
    return ["idle_loadgen", "corio_core_bench"] + (
        sorted(set(CORIO_TARGETS.values())) if "corio" in impls else [])


def make_cert(tmp):
    """A self-signed ECDSA P-256 certificate for localhost: (cert, key) paths, or None."""
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    cmd = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
           "-nodes", "-subj", "/CN=localhost", "-days", "2", "-keyout", str(key), "-out", str(cert)]
    if not shutil.which("openssl") or subprocess.run(cmd, capture_output=True).returncode != 0:
        log("idle: could not make a certificate with the openssl CLI: no TLS rows")
        return None
    return cert, key


class Servers:
    """Command lines per (protocol, implementation), in the temp dir tmp."""

    def __init__(self, bdir, built, tmp, nofile):
        self.bdir, self.built, self.tmp, self.nofile = bdir, built, tmp, nofile
        self.cert = make_cert(tmp)
        self.go = build_go(bdir, "go_hello") if bdir is not None else None

    def command(self, proto, impl, port, conns):
        """(command line, path asked for, "") or (None, None, why not)."""
        tls = proto == "tls"
        if tls and self.cert is None:
            return None, None, "no certificate"
        tls_files = [str(f) for f in self.cert] if tls else []
        if impl in ("corio", "corio-handlers"):
            return self.corio(proto, port, conns, tls_files, impl == "corio-handlers")
        if impl == "nginx":
            if not os.access(NGINX, os.X_OK):
                return None, None, f"{NGINX} not installed"
            # TLS 1.3 as the row says: nginx 1.22 (Debian 12) leaves it out of its default
            # ssl_protocols (1.23.4 added it), and TLS 1.2 keeps less per connection.
            ssl = (f"        ssl_certificate {tls_files[0]};\n        ssl_certificate_key {tls_files[1]};\n"
                   "        ssl_protocols TLSv1.2 TLSv1.3;\n" if tls else "")
            # Below a sixteenth of worker_connections free, nginx closes idle keep-alive
            # connections to make room (ngx_drain_connections): keep well above it.
            conf = http_suite.nginx_conf(self.tmp, port, worker_connections=conns + conns // 8 + 256,
                                         top=f"worker_rlimit_nofile {self.nofile};\n",
                                         http=f"    keepalive_timeout {KEEPALIVE_S}s;\n",
                                         listen=" ssl" if tls else " http2" if proto == "h2c" else "",
                                         server=ssl)
            (self.tmp / "nginx.conf").write_text(conf)
            return [NGINX, "-p", str(self.tmp), "-c", "nginx.conf", "-e", str(self.tmp / "error.log")], \
                "/hello", ""
        if impl == "go":
            if self.go is None:
                return None, None, "go_hello not built"
            tls_args = ["-tls-cert", tls_files[0], "-tls-key", tls_files[1]] if tls else []
            return [str(self.go), "-port", str(port), "-idle-timeout", str(KEEPALIVE_S)] + tls_args, \
                "/hello", ""
        return self.scripted(proto, impl, port)

    def corio(self, proto, port, conns, tls_files, handlers=False):
        target = CORIO_TARGETS[proto]
        if target not in self.built:
            return None, None, f"{target} not built"
        path = str(target_path(self.bdir, target))
        if proto == "mcp":
            return [path, "--http", str(port), "--max-sessions", str(conns + 1000),
                    "--idle-timeout", str(KEEPALIVE_S)], "/mcp", ""
        if proto.startswith("ws"):
            return [path, "--port", str(port)] + (["--handlers"] if handlers else []), "/ws", ""
        help_text = corio_subcommand_help(path, "serve") or ""
        if tls_files and "--tls-cert" not in help_text:
            return None, None, "this `corio serve` has no --tls-cert"
        tls_args = ["--tls-cert", tls_files[0], "--tls-key", tls_files[1]] if tls_files else []
        return [path, "serve", "--port", str(port), "--workers", "1", "--quiet",
                "--idle-timeout", str(KEEPALIVE_S)] + tls_args, "/hello", ""

    @staticmethod
    def scripted(proto, impl, port):
        """The Node and Python peers: the ws suite's interop peers, the MCP SDK's server."""
        plain = ["--plain"] if proto == "ws" else []
        if impl == "node-ws":
            if not shutil.which("node") or not (WS_PEERS / "node_modules" / "ws").is_dir():
                return None, None, f"no node or no npm ws in {WS_PEERS} (scripts/setup bench installs it)"
            return ["node", str(WS_PEERS / "node_peer.mjs"), "server", "--port", str(port)] + plain, "/ws", ""
        if impl == "python-websockets":
            if subprocess.run([PYTHON, "-c", "import websockets"], stderr=subprocess.DEVNULL).returncode:
                return None, None, f"{PYTHON} cannot import websockets (apt-get install python3-websockets)"
            return [PYTHON, str(WS_PEERS / "py_peer.py"), "server", "--port", str(port)] + plain, "/ws", ""
        if impl == "ts-sdk":
            if not shutil.which("node") or not MCP_SDK.is_dir():
                return None, None, "no node or no MCP TypeScript SDK (scripts/setup installs it)"
            return ["node", str(ROOT / "bench" / "mcp" / "ts_echo_server.mjs"), "--http", str(port),
                    "--keep-alive", "0"], "/mcp", ""
        return None, None, "not a server of this protocol"


def serving_pid(impl, proc):
    """The process holding the connections (nginx: its worker)."""
    return http_suite.serving_pid(impl, proc)
