#!/usr/bin/env python3
"""The WebSocket interop tests' python3-websockets peer.

  py_peer.py server [--plain] [--port P]
                                   echo server on loopback (P, default 0: a free port); prints "port N"
  py_peer.py client URL [--plain]  the exchange below against an echo server;
                                   prints "ok" and exits 0 when every check held

--plain turns permessage-deflate off; otherwise it is offered (client) or
accepted (server), and the client checks that it was agreed, with server_no_context_takeover
(what corio's server answers by default).
"""
import asyncio
import os
import sys

import websockets

MAX = 1 << 24


def compression(args):
    return None if "--plain" in args else "deflate"


async def echo(ws, path=None):
    try:
        async for message in ws:
            await ws.send(message)
    except websockets.ConnectionClosed:
        pass


async def serve(args):
    port = int(args[args.index("--port") + 1]) if "--port" in args else 0
    async with websockets.serve(echo, "127.0.0.1", port, compression=compression(args), max_size=MAX) as server:
        print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
        await asyncio.Future()


def check(cond, what):
    if not cond:
        raise SystemExit(f"check failed: {what}")


async def client(url, args):
    async with websockets.connect(url, compression=compression(args), max_size=MAX) as ws:
        extensions = ws.response_headers.get("Sec-WebSocket-Extensions") or ""
        check(("permessage-deflate" in extensions) == ("--plain" not in args), f"extensions {extensions!r}")
        # corio's server compresses each message on its own unless told otherwise.
        check(("server_no_context_takeover" in extensions) == ("--plain" not in args), f"extensions {extensions!r}")
        for message in ["h\u00e9llo", b"\x00\x01\x02", "", "a" * (1 << 20), os.urandom(300000)]:
            await ws.send(message)
            check(await ws.recv() == message, f"echo of a {type(message).__name__} of {len(message)}")
        for i in range(30):  # alike: this client's context carries over, corio parks its window between
            message = f'{{"seq":{i},"body":"the same words again and again, and then the same words once more"}}'
            await ws.send(message)
            check(await ws.recv() == message, f"echo of alike message {i}")
        await ws.send(["frag", "men", "ted"])
        check(await ws.recv() == "fragmented", "a fragmented text message")
        await ws.send([b"\xff", b"\xfe"])
        check(await ws.recv() == b"\xff\xfe", "a fragmented binary message")
        pong = await ws.ping(b"hi")
        await asyncio.wait_for(pong, 10)
        await ws.close(4000, "done")
        check(ws.close_code == 4000, f"close code {ws.close_code}")
    print("ok")


def main():
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "server":
        asyncio.run(serve(rest))
    else:
        asyncio.run(client(rest[0], rest[1:]))


if __name__ == "__main__":
    main()
