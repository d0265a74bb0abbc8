#!/usr/bin/python3
"""Echo server on asyncio streams (or on uvloop with --uvloop): the idiomatic shape.

Pure byte echo (bench/echo/README.md): asyncio.start_server, and per connection
`data = await reader.read(65536)`, `writer.write(data)`, `await writer.drain()` until
EOF. asyncio (and uvloop) set TCP_NODELAY on TCP connections by themselves.

Usage: asyncio_echo.py [--port P] [--uvloop]   (127.0.0.1; P = 0 picks a free port)
Prints "listening on 127.0.0.1:PORT" as its first line (as `corio echo-server`
does), then serves until killed.
"""
import argparse
import asyncio


async def echo(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def serve(port):
    server = await asyncio.start_server(echo, "127.0.0.1", port)
    print(f"listening on 127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--uvloop", action="store_true")
    args = ap.parse_args()
    if args.uvloop:
        import uvloop
        loop_factory = uvloop.new_event_loop
    else:
        loop_factory = asyncio.new_event_loop  # the selector (epoll) loop
    loop = loop_factory()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(serve(args.port))
    except KeyboardInterrupt:
        pass
    finally:
        loop.close()


if __name__ == "__main__":
    main()
