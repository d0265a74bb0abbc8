#!/usr/bin/env python3
"""Runs the official MCP conformance suite against a server and judges it.

Usage: run_suite.py SERVER_EXE [--server-arg ARG]... [--require CHECK]... [conformance args...]
       (conformance args by default: --suite all)

Starts SERVER_EXE --port 0 [ARG...], reads its URL from its first stdout line, runs
`conformance server --url URL` from the npm tree next to this file (pinned
in package-lock.json, installed by scripts/setup) with its results written
to a scratch directory, and reads every scenario's checks.json. A scenario
passes only if none of its checks is a FAILURE or a WARNING (the issue's
rule: a warning is a failure), and every --require'd check id must be among
the checks and a SUCCESS (so that a scenario which only reports INFO, e.g.
"the server answered JSON, SSE not tested", cannot pass for one that tests
the streams). Exit status 0 when every scenario passed.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
NODE = HERE / "node_modules" / ".bin" / "node"
SUITE = HERE / "node_modules" / ".bin" / "conformance"
SUITE_TIMEOUT = 300  # seconds; the whole suite takes well under a minute


def start_server(exe, server_args):
    proc = subprocess.Popen([exe, "--port", "0", *server_args], stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip()
    if not url.startswith("http://"):
        proc.kill()
        sys.exit(f"run_suite: {exe} printed no URL (got {url!r})")
    return proc, url


def judge(results_dir, required):
    """(scenario, [bad checks]) for every scenario the suite wrote; a
    required check id that no scenario reported as a SUCCESS is a bad check."""
    verdicts = []
    succeeded = set()
    for checks_file in sorted(results_dir.glob("*/checks.json")):
        scenario = checks_file.parent.name.removeprefix("server-").rsplit("-", 6)[0]
        checks = json.loads(checks_file.read_text())
        bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
        succeeded |= {c.get("id") for c in checks if c.get("status") == "SUCCESS"}
        verdicts.append((scenario, bad))
    missing = [{"status": "MISSING", "id": r, "description": "required, not a SUCCESS"}
               for r in required if r not in succeeded]
    if missing:
        verdicts.append(("(required checks)", missing))
    return verdicts


def split_args(argv):
    """(server args, required check ids, conformance args) from argv."""
    server_args, required, rest = [], [], []
    it = iter(argv)
    for a in it:
        if a in ("--server-arg", "--require"):
            (server_args if a == "--server-arg" else required).append(next(it))
        else:
            rest.append(a)
    return server_args, required, rest


def listed_server_scenarios():
    """The server scenarios the suite has (its `list`), for --suite all."""
    out = subprocess.run([str(NODE), str(SUITE), "list"], stdout=subprocess.PIPE, text=True,
                         check=True, timeout=60).stdout
    section = out.split("Server scenarios", 1)[1].split("Client scenarios", 1)[0]
    return {line.split()[1] for line in section.splitlines() if line.strip().startswith("- ")}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if not NODE.exists() or not SUITE.exists():
        sys.exit(f"run_suite: the conformance suite is not installed in {HERE}/node_modules: "
                 "run scripts/setup (npm ci --prefix tests/mcp/conformance)")
    server_args, required, args = split_args(sys.argv[2:])
    args = args or ["--suite", "all"]
    proc, url = start_server(sys.argv[1], server_args)
    try:
        with tempfile.TemporaryDirectory(prefix="mcp-conformance-") as out:
            cmd = [str(NODE), str(SUITE), "server", "--url", url, "-o", out, *args]
            run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 timeout=SUITE_TIMEOUT)
            verdicts = judge(pathlib.Path(out), required)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    if not verdicts:
        print(run.stdout)
        sys.exit("run_suite: the suite wrote no results")
    if args == ["--suite", "all"]:
        # A scenario that ended before writing its checks must not pass unseen.
        missing = listed_server_scenarios() - {s for s, _ in verdicts}
        if missing:
            print(run.stdout)
            sys.exit(f"run_suite: no results for {', '.join(sorted(missing))}")
    failed = [(s, bad) for s, bad in verdicts if bad]
    for scenario, bad in failed:
        print(f"FAILED {scenario}")
        for c in bad:
            print(f"    {c['status']} {c.get('id')}: {c.get('errorMessage') or c.get('description')}")
    print(f"conformance: {len(verdicts) - len(failed)} of {len(verdicts)} scenarios passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
