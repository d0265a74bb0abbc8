"""What the asyncio/uvloop peers share: the JSON-line output and the command line."""
import argparse
import asyncio
import json
import sys


def emit(impl, metric, value, unit):
    print(json.dumps({"impl": impl, "metric": metric, "value": value, "unit": unit}), flush=True)


def main(doc, run_impl):
    """Parses [--quick] [--reps N] [--impl asyncio|uvloop|all] [--only METRIC] and calls
    run_impl(impl_name, loop_factory, args) for asyncio's own loop and for uvloop."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--impl", choices=["asyncio", "uvloop", "all"], default="all")
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    if args.quick:
        args.reps = 1
    if args.impl in ("asyncio", "all"):
        run_impl("asyncio", asyncio.new_event_loop, args)  # new_event_loop: selector (epoll) loop
    if args.impl in ("uvloop", "all"):
        try:
            import uvloop
        except ImportError:
            print("uvloop not importable; skipping (apt-get install python3-uvloop)", file=sys.stderr)
        else:
            run_impl("uvloop", uvloop.new_event_loop, args)
