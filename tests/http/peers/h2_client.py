#!/usr/bin/env python3
"""An HTTP/2 client on python3-h2 for corio's h2 server tests (h2_interop_test.cpp).

Usage: h2_client.py PORT SCENARIO. Each scenario prints one line per
observation, which the test compares; a line "ready" means: the test may now
act on the server (close it, say).

  bad-preface    a preface whose magic is wrong: prints "closed" when the
                 server closed the connection
  reset-mid-body a POST whose body stops half-way with RST_STREAM, then a
                 GET on the same connection: prints "GET <status>"
  closed-window  a client whose window stays shut (SETTINGS_INITIAL_WINDOW_SIZE
                 0, no WINDOW_UPDATE): prints "headers <status>" and "ready",
                 then waits for the server to end the connection
  goaway         a GET /slow in flight: prints "ready" once the response's
                 head came, then "goaway <code>" and "body <text>" as they come,
                 and "closed"
"""
import socket
import sys

import h2.config
import h2.connection
import h2.events
import h2.settings


def connect(port, settings=None):
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    if settings:
        conn.update_settings(settings)
    sock.sendall(conn.data_to_send())
    return sock, conn


def request(conn, stream_id, method, path, end_stream=True):
    conn.send_headers(stream_id, [(":method", method), (":path", path), (":scheme", "http"),
                                  (":authority", "127.0.0.1")], end_stream=end_stream)


def events(sock, conn):
    """Yields the connection's events until the server closes it (a close
    with our last bytes unread is a reset: the end too)."""
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return
        if not data:
            return
        for event in conn.receive_data(data):
            yield event
        out = conn.data_to_send()
        if out:
            sock.sendall(out)


def say(line):
    print(line, flush=True)


def bad_preface(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + b"\0" * 64)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    say("closed")


def reset_mid_body(port):
    sock, conn = connect(port)
    request(conn, 1, "POST", "/sink", end_stream=False)
    conn.send_data(1, b"x" * 1000)
    sock.sendall(conn.data_to_send())
    conn.reset_stream(1)
    request(conn, 3, "GET", "/hello")
    sock.sendall(conn.data_to_send())
    for event in events(sock, conn):
        if isinstance(event, h2.events.ResponseReceived) and event.stream_id == 3:
            say("GET " + dict(event.headers)[b":status"].decode())
            return


def closed_window(port):
    sock, conn = connect(port, {h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    request(conn, 1, "GET", "/flood")
    sock.sendall(conn.data_to_send())
    for event in events(sock, conn):
        if isinstance(event, h2.events.ResponseReceived):
            say("headers " + dict(event.headers)[b":status"].decode())
            say("ready")
    say("closed")


def goaway(port):
    # Frames read raw: python-h2 refuses the DATA that may follow a GOAWAY
    # on a stream the GOAWAY let finish.
    sock, conn = connect(port)
    request(conn, 1, "GET", "/slow")
    sock.sendall(conn.data_to_send())
    buf = b""
    body = b""
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            break
        if not data:
            break
        buf += data
        while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
            length, kind, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
            payload, buf = buf[9:9 + length], buf[9 + length:]
            if kind == 0x1:  # HEADERS
                say("ready")
            elif kind == 0x7:  # GOAWAY: last stream id, error code
                say("goaway " + str(int.from_bytes(payload[4:8], "big")))
            elif kind == 0x0:  # DATA
                body += payload
                if flags & 0x1:
                    say("body " + body.decode())
    say("closed")


if __name__ == "__main__":
    {"bad-preface": bad_preface, "reset-mid-body": reset_mid_body,
     "closed-window": closed_window, "goaway": goaway}[sys.argv[2]](int(sys.argv[1]))
