#!/usr/bin/python3
"""The http suite's aiohttp server (bench/http/README.md): the idiomatic shape.

A web.Application with one route, GET /hello -> "Hello, World!" (text/plain), served by
an AppRunner + TCPSite on 127.0.0.1 with the access log off (a log line per request
would measure the logging module, and nginx's access_log is off too). aiohttp's C
HTTP parser is used when it is built, as in Debian's python3-aiohttp.

Usage: aiohttp_hello.py [--port P] [--uvloop]   (P = 0 picks a free port)
Prints "listening on 127.0.0.1:PORT" as its first line, then serves until killed.
"""
import argparse
import asyncio

from aiohttp import web

import pyloop


async def hello(request):
    return web.Response(text="Hello, World!")


async def serve(port):
    app = web.Application()
    app.router.add_get("/hello", hello)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    print(f"listening on 127.0.0.1:{runner.addresses[0][1]}", flush=True)
    try:
        await asyncio.Event().wait()  # until killed
    finally:
        await runner.cleanup()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--uvloop", action="store_true")
    args = ap.parse_args()
    pyloop.run(serve(args.port), args.uvloop)


if __name__ == "__main__":
    main()
