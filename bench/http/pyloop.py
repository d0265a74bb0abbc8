"""The event loop the http suite's Python peers run on: asyncio's own or uvloop's.

Shared by aiohttp_hello.py and aiohttp_get.py, which take `--uvloop` to run the same
program on uvloop (bench/run's `aiohttp-uvloop` participant).
"""
import asyncio


def run(main, use_uvloop):
    """Run coroutine `main` to completion on a fresh loop; Ctrl-C ends it quietly."""
    if use_uvloop:
        import uvloop
        loop = uvloop.new_event_loop()
    else:
        loop = asyncio.new_event_loop()  # the selector (epoll) loop
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(main)
    except KeyboardInterrupt:
        return None
    finally:
        loop.close()
