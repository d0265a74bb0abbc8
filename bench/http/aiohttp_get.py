#!/usr/bin/python3
"""The http suite's aiohttp client (bench/http/README.md, "Client"): N GETs of one URL,
at most C in flight, through one ClientSession.

The session's TCPConnector(limit=C) pools keep-alive connections; C worker tasks take
requests from a shared count until N have been started, each reading the whole body
(`await resp.read()`). The same shape as curl_multi_get.c and corio_get.cpp. The clock
runs from the first request to the last body read; interpreter start is not in it.

Usage: aiohttp_get.py --url URL [--requests N] [--concurrency C] [--uvloop]
Prints JSON lines: http_client_rps (req/s) and http_client_errors (requests that raised
or were not 200), with impl "aiohttp" (or "aiohttp-uvloop").
"""
import argparse
import asyncio
import json
import sys
import time

import aiohttp

import pyloop


async def fetch_all(url, requests, concurrency):
    """(seconds, errors) for `requests` GETs of url, `concurrency` at a time."""
    remaining = requests
    errors = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker():
            nonlocal remaining, errors
            while remaining > 0:
                remaining -= 1
                try:
                    async with session.get(url) as resp:
                        await resp.read()
                        errors += resp.status != 200
                except aiohttp.ClientError as e:
                    print(f"aiohttp_get: {e!r}", file=sys.stderr)
                    errors += 1

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(min(concurrency, requests))))
        return time.perf_counter() - start, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--concurrency", type=int, default=100)
    ap.add_argument("--uvloop", action="store_true")
    args = ap.parse_args()
    impl = "aiohttp-uvloop" if args.uvloop else "aiohttp"
    seconds, errors = pyloop.run(fetch_all(args.url, args.requests, args.concurrency), args.uvloop)
    for metric, value, unit in (("http_client_rps", args.requests / seconds, "req/s"),
                                ("http_client_errors", errors, "count")):
        result = {"impl": impl, "metric": metric, "value": round(value, 1), "unit": unit}
        print(json.dumps(result), flush=True)
    sys.exit(0 if errors == 0 else 1)


if __name__ == "__main__":
    main()
