#!/usr/bin/env python3
"""Runs the official MCP conformance suite's client scenarios against a client.

Usage: run_client_suite.py CLIENT_EXE SCENARIO...

For each scenario, `conformance client --command CLIENT_EXE --scenario S`
from the npm tree next to this file (pinned in package-lock.json, installed
by scripts/setup); the suite starts its test server and runs the client
with the server's URL. Each scenario's checks.json is judged: it passes
only if none of its checks is a FAILURE or a WARNING (the issue's rule: a
warning is a failure), at least one succeeded, and the suite itself
reported success. Exit status 0
when every scenario passed.

Scenarios run a few at a time (the suite's node processes mostly wait),
except sse-retry, which measures the client's reconnection delay and runs
alone first so that a busy machine cannot make it late.
"""
import concurrent.futures
import json
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
NODE = HERE / "node_modules" / ".bin" / "node"
SUITE = HERE / "node_modules" / ".bin" / "conformance"
SCENARIO_TIMEOUT = 60  # seconds; a scenario takes one or two
PARALLEL = 4


def run_scenario(client, scenario, out):
    """The list of bad checks (empty: passed) and the suite's output."""
    cmd = [str(NODE), str(SUITE), "client", "--command", client, "--scenario", scenario,
           "--timeout", "20000", "-o", str(out)]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=SCENARIO_TIMEOUT)
    files = list(out.glob("**/checks.json"))
    if not files:
        return [{"status": "FAILURE", "id": scenario, "errorMessage": "no checks written"}], run.stdout
    checks = json.loads(files[0].read_text())
    bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
    if not any(c.get("status") == "SUCCESS" for c in checks):
        # A client that never connected leaves some scenarios without a
        # single check: that is no pass.
        bad.append({"status": "FAILURE", "id": scenario, "errorMessage": "no check succeeded"})
    if run.returncode != 0 and not bad:
        bad = [{"status": "FAILURE", "id": scenario, "errorMessage": f"suite exit {run.returncode}"}]
    return bad, run.stdout


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    if not NODE.exists() or not SUITE.exists():
        sys.exit(f"run_client_suite: the conformance suite is not installed in {HERE}/node_modules: "
                 "run scripts/setup (npm ci --prefix tests/mcp/conformance)")
    client, scenarios = sys.argv[1], sys.argv[2:]
    timed = [s for s in scenarios if s == "sse-retry"]
    rest = [s for s in scenarios if s != "sse-retry"]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="mcp-conformance-client-") as scratch:
        def run(indexed):
            i, scenario = indexed
            return scenario, *run_scenario(client, scenario, pathlib.Path(scratch) / str(i))

        results = [run(x) for x in enumerate(timed)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            results += pool.map(run, enumerate(rest, start=len(timed)))
    for scenario, bad, output in results:
        if not bad:
            print(f"passed {scenario}")
            continue
        failed += 1
        print(f"FAILED {scenario}")
        for c in bad:
            print(f"    {c['status']} {c.get('id')}: {c.get('errorMessage') or c.get('description')}")
        print("    " + output.strip().replace("\n", "\n    "))
    print(f"conformance: {len(scenarios) - failed} of {len(scenarios)} client scenarios passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
