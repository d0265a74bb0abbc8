#!/usr/bin/env python3
"""The reliability suite: starts the real programs on loopback and attacks
them from outside as a hostile client would (README.md lists the checks).

    attack.py CORIO NBA_DAILY_BRIEF WS_ECHO [--sanitized] [--only REGEX] [--serial]

CORIO is the `corio` tool, NBA_DAILY_BRIEF the MCP example server, WS_ECHO
the WebSocket example server. Every group of checks runs against programs
of its own, the groups in parallel (their waits overlap); one line per
check; the exit status is 1 if any check failed (or a check marked as a
known bug passed).
"""
import argparse
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import file_checks  # noqa: E402
import harness  # noqa: E402
import http_checks  # noqa: E402
import http_load  # noqa: E402
import mcp_checks  # noqa: E402
import timeout_checks  # noqa: E402
import tool_checks  # noqa: E402
import ws_checks  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corio")
    parser.add_argument("nba")
    parser.add_argument("ws_echo")
    parser.add_argument("--sanitized", action="store_true",
                        help="ASan/UBSan builds: slower programs, freed memory kept resident")
    parser.add_argument("--only", default="", help="run the checks whose names match this regex")
    parser.add_argument("--serial", action="store_true", help="one group at a time")
    args = parser.parse_args()
    if args.sanitized:
        harness.SANITIZED = True
        harness.SCALE = 4.0
        harness.RSS_SLACK_KB = 320 * 1024  # ASan's quarantine is 256 MB

    groups = [http_checks.protocol_group(args.corio), http_checks.send_rate_group(args.corio),
              file_checks.files_group(args.corio), timeout_checks.timeouts_group(args.corio),
              http_load.load_group(args.corio),
              http_load.slow_group(args.corio), http_load.emfile_group(args.corio),
              tool_checks.echo_group(args.corio), tool_checks.fetch_group(args.corio),
              mcp_checks.stdio_group(args.nba), mcp_checks.http_group(args.nba),
              ws_checks.ws_group(args.ws_echo)]
    pattern = re.compile(args.only)
    selected = lambda name: bool(pattern.search(name))  # noqa: E731
    report = harness.Report()
    start = time.monotonic()
    if selected("http_tls"):
        http_load.tls_check(args.corio, report)
    if selected("fetch.redirect_secrets"):
        tool_checks.redirect_secrets_check(args.corio, report)
    threads = [threading.Thread(target=harness.run_group, args=(g, report, selected), daemon=True)
               for g in groups]
    for t in threads:
        t.start()
        if args.serial:
            t.join()
    for t in threads:
        t.join()
    c = report.counts
    print(f"\n{c['PASS']} passed, {c['FAIL']} failed, {c['SKIP']} skipped "
          f"in {time.monotonic() - start:.1f} s")
    return 1 if report.failed() or not sum(c.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
