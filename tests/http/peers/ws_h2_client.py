#!/usr/bin/env python3
"""A WebSocket client over HTTP/2 (RFC 8441 extended CONNECT) on python3-h2,
for corio's server tests (ws_h2_interop_test.cpp). The WebSocket frames are
written and parsed here (RFC 6455), so nothing of corio's is on this side.

Usage: ws_h2_client.py PORT SCENARIO. Each scenario prints one line per
observation, which the test compares.

  setting   the server's SETTINGS_ENABLE_CONNECT_PROTOCOL: "setting <value>"
  echo      text, binary, a ping, then the close handshake: "status", the
            answers, "close <code>", "end-stream" (the server's END_STREAM)
  large     a 1 MiB message, past both peers' windows: "echoed <size> <ok>"
  many      8 WebSockets and a GET /hello on one connection, interleaved:
            "ws <i> <text>" for each, "GET <status> <body>"
  reset     a WebSocket reset with RST_STREAM(CANCEL), then a GET on the same
            connection: "GET <status> <body>"
  unmasked  a frame without a mask (a protocol error: RFC 6455 section 5.1):
            "close <code>", "end-stream", then a GET: "GET <status> <body>"
  deflate   offers permessage-deflate: "extensions <value>", then a message
            compressed both ways: "text <text>"
"""
import socket
import struct
import sys
import zlib

import h2.config
import h2.connection
import h2.events
import h2.settings

from ws_wire import frame, parse

TEXT, BINARY, CLOSE, PING, PONG = 1, 2, 8, 9, 10


def say(line):
    print(line, flush=True)


def closed(got):
    """A close frame's line: "close <code>"."""
    if got is None or got[1] != CLOSE:
        return "no close"
    return "close %d" % struct.unpack("!H", got[2][:2])[0]


class Peer:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        self.flush()
        self.settings = {}
        self.inbox = {}      # stream id: bytes received, not yet parsed
        self.ended = set()   # streams the server ended
        self.reset = set()   # streams the server reset
        self.heads = {}      # stream id: response headers
        self.bodies = {}     # plain requests' bodies
        self.settings_done = False
        self.wait(lambda: self.settings_done)

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def pump(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the server closed the connection")
        for event in self.conn.receive_data(data):
            self.on(event)
        self.flush()

    def on(self, event):
        if isinstance(event, h2.events.RemoteSettingsChanged):
            for code, setting in event.changed_settings.items():
                self.settings[code] = setting.new_value
            self.settings_done = True
        elif isinstance(event, h2.events.ResponseReceived):
            self.heads[event.stream_id] = dict(event.headers)
        elif isinstance(event, h2.events.DataReceived):
            self.inbox[event.stream_id] = self.inbox.get(event.stream_id, b"") + event.data
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.ended.add(event.stream_id)
        elif isinstance(event, h2.events.StreamReset):
            self.reset.add(event.stream_id)

    def wait(self, done):
        while not done():
            self.pump()

    def open_ws(self, path="/ws", extensions=None):
        sid = self.conn.get_next_available_stream_id()
        headers = [(":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "http"),
                   (":path", path), (":authority", "127.0.0.1"), ("sec-websocket-version", "13")]
        if extensions:
            headers.append(("sec-websocket-extensions", extensions))
        self.conn.send_headers(sid, headers)
        self.flush()
        self.wait(lambda: sid in self.heads or sid in self.reset)
        return sid

    def send(self, sid, data):
        """All of data, as the windows let it go."""
        while data:
            room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
            if room <= 0:
                self.pump()
                continue
            self.conn.send_data(sid, data[:room])
            data = data[room:]
            self.flush()

    def receive(self, sid):
        """The next whole frame of stream sid: (fin, opcode, payload, rsv1), or None at its end."""
        while True:
            got = parse(self.inbox.get(sid, b""))
            if got:
                fin, rsv1, opcode, payload, rest = got
                self.inbox[sid] = rest
                return fin, opcode, payload, rsv1
            if sid in self.ended or sid in self.reset:
                return None
            self.pump()

    def message(self, sid):
        """The next data message, its fragments joined: (opcode, payload, rsv1)."""
        fin, opcode, payload, rsv1 = self.receive(sid)
        while not fin:
            fin, _, more, _ = self.receive(sid)
            payload += more
        return opcode, payload, rsv1

    def get(self, path="/hello"):
        sid = self.conn.get_next_available_stream_id()
        self.conn.send_headers(sid, [(":method", "GET"), (":path", path), (":scheme", "http"),
                                     (":authority", "127.0.0.1")], end_stream=True)
        self.flush()
        self.wait(lambda: sid in self.ended or sid in self.reset)
        say("GET %s %s" % (self.heads[sid].get(b":status", b"?").decode(),
                           self.inbox.pop(sid, b"").decode()))

    def close_handshake(self, sid, code=1000):
        self.send(sid, frame(CLOSE, struct.pack("!H", code)))
        say(closed(self.receive(sid)))
        self.conn.end_stream(sid)
        self.flush()
        self.wait(lambda: sid in self.ended or sid in self.reset)
        say("end-stream" if sid in self.ended else "reset")


def setting(port):
    peer = Peer(port)
    say("setting %s" % peer.settings.get(h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL))


def echo(port):
    peer = Peer(port)
    sid = peer.open_ws()
    head = peer.heads[sid]
    say("status %s accept %s" % (head[b":status"].decode(), b"sec-websocket-accept" in head))
    peer.send(sid, frame(TEXT, b"hello"))
    say("text %s" % peer.message(sid)[1].decode())
    peer.send(sid, frame(BINARY, b"\x00\x01\x02"))
    say("binary %s" % peer.message(sid)[1].hex())
    peer.send(sid, frame(PING, b"p1"))
    _, opcode, payload, _ = peer.receive(sid)
    say("%s %s" % ("pong" if opcode == PONG else opcode, payload.decode()))
    peer.close_handshake(sid)


def large(port):
    peer = Peer(port)
    sid = peer.open_ws()
    data = bytes((i * 7919) % 251 for i in range(1 << 20))
    peer.send(sid, frame(BINARY, data))
    opcode, payload, _ = peer.message(sid)
    say("echoed %d %s" % (len(payload), payload == data))
    peer.close_handshake(sid)


def many(port):
    peer = Peer(port)
    sids = [peer.open_ws() for _ in range(8)]
    for i, sid in enumerate(sids):
        peer.send(sid, frame(TEXT, ("m%d" % i).encode()))
    peer.get()
    for i, sid in enumerate(reversed(sids)):
        say("ws %d %s" % (len(sids) - 1 - i, peer.message(sid)[1].decode()))
    for sid in sids:
        peer.close_handshake(sid)


def reset(port):
    peer = Peer(port)
    sid = peer.open_ws()
    peer.send(sid, frame(TEXT, b"before the reset"))
    peer.message(sid)
    peer.conn.reset_stream(sid, 8)  # CANCEL
    peer.flush()
    peer.get()


def unmasked(port):
    peer = Peer(port)
    sid = peer.open_ws()
    peer.send(sid, frame(TEXT, b"no mask", mask=False))
    say(closed(peer.receive(sid)))
    peer.wait(lambda: sid in peer.ended or sid in peer.reset)
    say("end-stream" if sid in peer.ended else "reset")
    peer.get()


def deflate(port):
    peer = Peer(port)
    sid = peer.open_ws(extensions="permessage-deflate; client_max_window_bits")
    say("extensions %s" % peer.heads[sid].get(b"sec-websocket-extensions", b"").decode())
    c = zlib.compressobj(wbits=-15)
    body = c.compress(b"squeeze me " * 20) + c.flush(zlib.Z_SYNC_FLUSH)
    peer.send(sid, frame(TEXT, body[:-4], rsv1=True))
    opcode, payload, rsv1 = peer.message(sid)
    text = zlib.decompressobj(wbits=-15).decompress(payload + b"\x00\x00\xff\xff") if rsv1 else payload
    say("text %s %s" % (text.decode().count("squeeze me"), "compressed" if rsv1 else "plain"))
    peer.close_handshake(sid)


if __name__ == "__main__":
    {"setting": setting, "echo": echo, "large": large, "many": many, "reset": reset,
     "unmasked": unmasked, "deflate": deflate}[sys.argv[2]](int(sys.argv[1]))
