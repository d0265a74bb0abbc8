#!/usr/bin/env python3
"""An HTTP/2 server (h2c, prior knowledge) on python3-h2 for corio's client
tests (interop/h2_client_interop_test.cpp). Prints "port N" once listening.

  GET /hello         200 "hello over h2"
  POST /echo         200 with the request body's length (an answer within one
                     frame and the default window: this server does no flow control of its own)
  GET /refuse-once   the first time: RST_STREAM REFUSED_STREAM; then 200 "answered"
  GET /goaway-once   the first time: GOAWAY naming the streams before it as the
                     last processed, then the connection closes; then 200 "answered"
"""
import sys
import threading

import h2.config
import h2.connection
import h2.errors
import h2.events

from ws_wire import listener

seen = set()
seen_lock = threading.Lock()


def first_time(path):
    with seen_lock:
        if path in seen:
            return False
        seen.add(path)
        return True


def answer(conn, stream_id, body):
    conn.send_headers(stream_id, [(":status", "200"), ("content-length", str(len(body)))])
    conn.send_data(stream_id, body, end_stream=True)


def on_request(conn, stream_id, path, body):
    """False when the connection is to end."""
    if path == "/refuse-once" and first_time(path):
        conn.reset_stream(stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
    elif path == "/goaway-once" and first_time(path):
        conn.close_connection(h2.errors.ErrorCodes.NO_ERROR, last_stream_id=max(stream_id - 2, 0))
        return False
    elif path == "/echo":
        answer(conn, stream_id, str(len(body)).encode())
    elif path in ("/hello", "/refuse-once", "/goaway-once"):
        answer(conn, stream_id, b"answered" if path != "/hello" else b"hello over h2")
    else:
        conn.send_headers(stream_id, [(":status", "404"), ("content-length", "0")], end_stream=True)
    return True


def serve(sock):
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    paths, bodies = {}, {}
    going = True
    while going:
        data = sock.recv(65536)
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                paths[event.stream_id] = dict(event.headers)[b":path"].decode()
                bodies[event.stream_id] = b""
            elif isinstance(event, h2.events.DataReceived):
                bodies[event.stream_id] += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            if isinstance(event, h2.events.StreamEnded) and going:
                going = on_request(conn, event.stream_id, paths[event.stream_id],
                                   bodies.pop(event.stream_id))
        sock.sendall(conn.data_to_send())
    sock.close()


def main():
    sock_listening = listener()
    while True:
        sock, _ = sock_listening.accept()
        threading.Thread(target=serve, args=(sock,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
