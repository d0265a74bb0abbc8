#!/usr/bin/env python3
"""A WebSocket server over HTTP/2 (RFC 8441 extended CONNECT) on python3-h2,
and over HTTP/1.1's Upgrade on the same port, for corio's client tests
(interop/ws_h2_client_interop_test.cpp). The WebSocket frames are parsed and
written here (RFC 6455), so nothing of corio's is on this side. Prints
"port N" once listening.

Usage: ws_h2_server.py [--no-connect] [--tls CERT KEY ALPN,...]
  --no-connect  the h2 SETTINGS leave SETTINGS_ENABLE_CONNECT_PROTOCOL out
  --tls         TLS with that certificate, choosing among the client's
                ALPN protocols the first of this list that it offers

A connection speaks h2 when it starts with the client preface (h2c prior
knowledge) or ALPN chose h2, else HTTP/1.1. Paths:

  /hello    GET: 200 "hello"
  /echo     a WebSocket echoing text and binary messages, answering pings;
            a close is answered, then the stream (or connection) ends
  /version  as /echo, after a first text message: "h2" or "http/1.1"
  /close    a WebSocket the server closes at once (4000 "bye"); the stream
            ends once the client's close came
  /reset    as /echo until its first message, then RST_STREAM(CANCEL)
  /refuse   403
"""
import base64
import hashlib
import ssl
import struct
import sys
import threading

import h2.config
import h2.connection
import h2.events
import h2.settings

from ws_wire import frame, listener, parse

TEXT, BINARY, CLOSE, PING, PONG = 1, 2, 8, 9, 10
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class WsEcho:
    """One WebSocket's server side, whatever carries it: bytes in (feed), bytes
    out (self.out), and whether the carrier should end (done) or reset it."""

    def __init__(self, path, version):
        self.path = path
        self.inbox = b""
        self.out = b""
        self.message = None   # (opcode, payload so far) of a fragmented message
        self.closing = False  # our close frame went
        self.done = False     # both close frames went: end the stream
        self.reset = False    # /reset's first message came
        if path == "/version":
            self.out += frame(TEXT, version.encode(), mask=False)
        if path == "/close":
            self.close(struct.pack("!H", 4000) + b"bye")

    def close(self, payload):
        if not self.closing:
            self.out += frame(CLOSE, payload, mask=False)
            self.closing = True

    def feed(self, data):
        self.inbox += data
        while not self.done and not self.reset:
            got = parse(self.inbox)
            if got is None:
                return
            fin, _, opcode, payload, self.inbox = got
            self.on_frame(fin, opcode, payload)

    def on_frame(self, fin, opcode, payload):
        if opcode == PING:
            self.out += frame(PONG, payload, mask=False)
        elif opcode == CLOSE:
            self.close(payload[:2])
            self.done = True
        elif opcode == PONG:
            pass
        else:
            kind, so_far = self.message or (opcode, b"")
            self.message = None if fin else (kind, so_far + payload)
            if fin:
                self.on_message(kind, so_far + payload)

    def on_message(self, opcode, payload):
        if self.path == "/reset":
            self.reset = True
        elif not self.closing:
            self.out += frame(opcode, payload, mask=False)


def accept_of(key):
    return base64.b64encode(hashlib.sha1(key + GUID).digest())


def serve_http1(sock, first):
    """One HTTP/1.1 request: an Upgrade to a WebSocket, or GET /hello."""
    head = first
    while b"\r\n\r\n" not in head:
        more = sock.recv(65536)
        if not more:
            return
        head += more
    head, rest = head.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    path = lines[0].split(b" ")[1].decode()
    fields = {k.strip().lower(): v.strip() for k, v in (l.split(b":", 1) for l in lines[1:])}
    if path == "/hello" or b"sec-websocket-key" not in fields:
        sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello")
        return
    sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Accept: " + accept_of(fields[b"sec-websocket-key"]) + b"\r\n\r\n")
    ws = WsEcho(path, "http/1.1")
    data = rest
    while True:
        ws.feed(data)
        sock.sendall(ws.out)
        ws.out = b""
        if ws.done or ws.reset:
            return
        data = sock.recv(65536)
        if not data:
            return


class H2Server:
    """One h2 connection: plain requests and WebSocket streams side by side,
    each stream's output sent as the peer's windows allow."""

    def __init__(self, sock, first, connect_protocol):
        self.sock = sock
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        if connect_protocol:
            # In the first SETTINGS frame: a client decides on that one.
            codes = h2.settings.SettingCodes
            self.conn.local_settings = h2.settings.Settings(
                client=False, initial_values={codes.MAX_CONCURRENT_STREAMS: 100,
                                              codes.ENABLE_CONNECT_PROTOCOL: 1})
        self.conn.initiate_connection()
        self.sockets = {}   # stream id: WsEcho
        self.pending = {}   # stream id: [bytes to send, END_STREAM after them]
        self.first = first

    def run(self):
        self.flush()
        data = self.first
        while True:
            for event in self.conn.receive_data(data):
                self.on(event)
            self.send_pending()
            self.flush()
            data = self.sock.recv(65536)
            if not data:
                return

    def flush(self):
        out = self.conn.data_to_send()
        if out:
            self.sock.sendall(out)

    def on(self, event):
        if isinstance(event, h2.events.RequestReceived):
            self.on_request(event.stream_id, dict(event.headers))
        elif isinstance(event, h2.events.DataReceived):
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            ws = self.sockets.get(event.stream_id)
            if ws:
                ws.feed(event.data)
                self.after(event.stream_id, ws)
        elif isinstance(event, h2.events.StreamEnded):
            self.sockets.pop(event.stream_id, None)
        elif isinstance(event, h2.events.StreamReset):
            self.sockets.pop(event.stream_id, None)
            self.pending.pop(event.stream_id, None)

    def on_request(self, sid, fields):
        path = fields[b":path"].decode()
        if fields[b":method"] != b"CONNECT":
            self.answer(sid, "200" if path == "/hello" else "404", b"hello" if path == "/hello" else b"")
        elif fields.get(b":protocol") != b"websocket" or path == "/refuse":
            self.answer(sid, "403", b"")
        else:
            head = [(":status", "200")]
            offered = fields.get(b"sec-websocket-protocol")
            if offered:
                head.append(("sec-websocket-protocol", offered.split(b",")[0].strip().decode()))
            self.conn.send_headers(sid, head)
            self.sockets[sid] = WsEcho(path, "h2")
            self.after(sid, self.sockets[sid])

    def answer(self, sid, status, body):
        self.conn.send_headers(sid, [(":status", status), ("content-length", str(len(body)))])
        self.pending[sid] = [body, True]

    def after(self, sid, ws):
        """What ws has to send queued on its stream; a reset at once."""
        if ws.reset:
            self.conn.reset_stream(sid, 8)  # CANCEL
            self.sockets.pop(sid, None)
            self.pending.pop(sid, None)
            return
        queued = self.pending.setdefault(sid, [b"", False])
        queued[0] += ws.out
        queued[1] = ws.done
        ws.out = b""

    def send_pending(self):
        for sid, queued in list(self.pending.items()):
            data, end = queued
            while data:
                room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
                if room <= 0:
                    break
                self.conn.send_data(sid, data[:room])
                data = data[room:]
            queued[0] = data
            if not data:
                if end:
                    self.conn.end_stream(sid)
                del self.pending[sid]


def opening(sock):
    """The connection's first bytes: the h2 preface whole, or enough to tell
    it is not one."""
    first = b""
    while len(first) < len(PREFACE) and PREFACE.startswith(first):
        more = sock.recv(len(PREFACE) - len(first))
        if not more:
            raise EOFError("the client went")
        first += more
    return first


def serve(sock, connect_protocol):
    try:
        if isinstance(sock, ssl.SSLSocket):
            h2_chosen = sock.selected_alpn_protocol() == "h2"
            first = b""
        else:
            first = opening(sock)
            h2_chosen = first == PREFACE
        if h2_chosen:
            H2Server(sock, first, connect_protocol).run()
        else:
            serve_http1(sock, first)
    except (OSError, EOFError):
        pass
    finally:
        sock.close()


def main(args):
    connect_protocol = "--no-connect" not in args
    context = None
    if "--tls" in args:
        at = args.index("--tls")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args[at + 1], args[at + 2])
        context.set_alpn_protocols(args[at + 3].split(","))
    sock_listening = listener()
    while True:
        sock, _ = sock_listening.accept()
        if context:
            try:
                sock = context.wrap_socket(sock, server_side=True)
            except (OSError, ssl.SSLError):
                sock.close()
                continue
        threading.Thread(target=serve, args=(sock, connect_protocol), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
