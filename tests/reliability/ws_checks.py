"""`example_ws_echo` attacked at its opening handshake (RFC 6455 section 4):
versions it does not speak, and handshakes that are no handshake."""
import os
import struct

from harness import Group, expect
from httpraw import Conn

KEY = b"dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455 section 1.3's example
ACCEPT = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
VERSION_13 = b"Sec-WebSocket-Version: 13\r\n"


def handshake(fields=VERSION_13, key=KEY, upgrade=b"Connection: Upgrade\r\n"):
    return (b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n" + upgrade +
            b"Sec-WebSocket-Key: " + key + b"\r\n" + fields + b"\r\n")


def masked_text(payload):
    """A client's text frame (FIN, opcode 1; masked, as RFC 6455 5.1 asks)."""
    mask = os.urandom(4)
    return (struct.pack("!BB", 0x81, 0x80 | len(payload)) + mask +
            bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


class WsGroup(Group):
    name = "ws"

    def __init__(self, ws_echo):
        super().__init__()
        self.ws_echo = ws_echo

    def start(self):
        self.prog = self.spawn([self.ws_echo, "--port", "0"])
        self.port = int(self.prog.wait_line("out", r"listening on ws://[^:]+:(\d+)/ws").group(1))

    def healthy(self, after):
        """A version-13 handshake is accepted and a text message echoed."""
        self.prog.expect_alive(after)
        with Conn(self.port) as c:
            c.send(handshake())
            r = c.read_response()
            expect(r.status == 101 and r.header("sec-websocket-accept") == ACCEPT,
                   f"after {after}: a version-13 handshake answered {r.status} {r.headers}")
            c.send(masked_text(b"ping"))
            frame = c.read_exact(6, "echoed frame")
            expect(frame == b"\x81\x04ping", f"after {after}: echoed {frame!r}")

    def stop(self):
        rc = self.prog.stop()
        expect(rc == 0, f"example_ws_echo ended with exit code {rc} after SIGINT, expected 0")


def ws_group(ws_echo):
    g = WsGroup(ws_echo)

    # Section 4.4: a version the server does not speak is answered with the
    # one it does, so that the client can retry with it.
    @g.check("version.unsupported")
    def unsupported_version():
        for fields in [b"Sec-WebSocket-Version: 8\r\n", b"", b"Sec-WebSocket-Version: garbage\r\n",
                       b"Sec-WebSocket-Version: 13, 8\r\n", VERSION_13 + b"Sec-WebSocket-Version: 8\r\n"]:
            what = f"a handshake with {fields.strip()!r}" if fields else "a handshake with no version"
            with Conn(g.port) as c:
                c.send(handshake(fields))
                r = c.read_response()
            expect(r.status == 426 and r.reason == "Upgrade Required",
                   f"{what}: answered {r.status} {r.reason!r}, expected 426 Upgrade Required")
            expect(r.header("sec-websocket-version") == "13",
                   f"{what}: the 426 names Sec-WebSocket-Version "
                   f"{r.header('sec-websocket-version')!r}, not 13")

    # Section 4.2.1: what is not an opening handshake is a 400.
    @g.check("handshake.malformed")
    def malformed_handshake():
        for data, what in [(handshake(key=b"short"), "a key that is not 16 bytes of base64"),
                           (handshake(key=KEY + b"\r\nSec-WebSocket-Key: " + KEY), "two keys"),
                           (handshake(upgrade=b""), "no Connection: Upgrade")]:
            with Conn(g.port) as c:
                c.send(data)
                r = c.read_response()
            expect(r.status == 400, f"{what}: answered {r.status}, expected 400")

    return g
