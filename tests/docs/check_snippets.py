#!/usr/bin/env python3
"""The docs.snippets test: runs every runnable docs snippet and checks that
every `fail` snippet fails to compile with its expected message.

Usage: check_snippets.py MANIFEST RUNNER CXX [COMPILER ARGS...]
MANIFEST and the fail sources come from extract_snippets.py; RUNNER is the
corio_doc_snippets program; CXX and its arguments compile a fail snippet
(-fsyntax-only is added: nothing is linked).
"""

import concurrent.futures
import json
import re
import subprocess
import sys

RUN_TIMEOUT = 30      # seconds; the snippets are written to end in well under one
COMPILE_TIMEOUT = 120  # a shared 2-core machine may compile slowly


def check_program(runner, program):
    """A message for each way the program failed; [] when it passed."""
    try:
        r = subprocess.run([runner, "run", program["name"]], capture_output=True, text=True,
                           timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return [f"{program['where']}: still running after {RUN_TIMEOUT} s"]
    problems = []
    if r.returncode != program["exit"]:
        problems.append(f"{program['where']}: exit status {r.returncode}, not {program['exit']}\n"
                        f"{r.stderr}")
    elif r.returncode == 0 and r.stderr:
        # A clean run says nothing on stderr: no "exception never retrieved"
        # or "task destroyed while pending" reports slip into the docs.
        problems.append(f"{program['where']}: wrote to stderr\n{r.stderr}")
    expected = program.get("output")
    if expected is not None and r.stdout != expected:
        problems.append(f"{program['where']}: the output differs from the page's\n"
                        f"--- page ---\n{expected}--- program ---\n{r.stdout}")
    return problems


def normalized(messages):
    """g++'s messages as a user sees them: without -Werror (the check needs
    it, the page shows warnings) and with plain quotes (the C locale's)."""
    messages = messages.replace("\u2018", "'").replace("\u2019", "'")
    return re.sub(r"error: (.*) \[-Werror=([\w+-]+)\]", r"warning: \1 [-W\2]", messages)


def check_fail(compiler, gnu, fail):
    r = subprocess.run(compiler + ["-fsyntax-only", fail["source"]], capture_output=True,
                       text=True, timeout=COMPILE_TIMEOUT)
    if r.returncode == 0:
        return [f"{fail['where']}: compiles, but the page says it does not"]
    if not any(text in r.stderr for text in fail["expect"].split("|")):
        return [f"{fail['where']}: the compiler does not say {fail['expect']!r}:\n{r.stderr[:3000]}"]
    if not gnu or "output" not in fail:
        return []
    said = normalized(r.stderr).splitlines()
    shown = [line for line in normalized(fail["output"]).splitlines() if line.startswith("main.cpp:")]
    missing = [line for line in shown if line not in said]
    return [f"{fail['where']}: g++ no longer says\n  {line}" for line in missing]


def is_gnu(compiler):
    version = subprocess.run(compiler[:1] + ["--version"], capture_output=True, text=True).stdout
    return "Free Software Foundation" in version and "clang" not in version


def listed(runner):
    out = subprocess.run([runner, "list"], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        manifest = json.load(f)
    runner, compiler = argv[2], argv[3:]
    problems = []
    missing = {p["name"] for p in manifest["programs"]} - listed(runner)
    problems += [f"{name}: in the manifest but not in {runner} (stale build?)" for name in missing]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [pool.submit(check_program, runner, p) for p in manifest["programs"]]
        gnu = is_gnu(compiler)
        jobs += [pool.submit(check_fail, compiler, gnu, f) for f in manifest["fails"]]
        for job in jobs:
            problems += job.result()
    total = len(manifest["programs"]) + len(manifest["fails"])
    # A header's example without a marker (extract_snippets.py) is not
    # compiled: every one must say what it is.
    problems += [f"{where}: a header example without a doc: marker (body, fragment, text...)"
                 for where in manifest["headers_not_compiled"]]
    for p in problems:
        print(p, file=sys.stderr)
    print(f"docs snippets: {len(manifest['programs'])} run, {len(manifest['fails'])} checked "
          f"not to compile; {len(problems)} problem(s) in {total}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
