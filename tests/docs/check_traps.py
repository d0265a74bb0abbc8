#!/usr/bin/env python3
"""The docs.traps test: looks for the compiler traps that compile silently
and can be seen in the text (docs/getting-started.md, "g++ 12 habits").

  a co_await inside a braced initializer, `Client c{co_await f()};`:
  g++ 12 destroys the awaited temporary twice. Looked for in code: the
  fenced blocks of Markdown pages (their prose may name the trap), every
  line of C++ files (header comments' examples included). Written as clang-format
  writes code, a braced initializer's `{` follows a name, `>`, `=`, `(` or
  `,` with no space, a block's `{` follows a space, so a block that starts
  with a co_await (`-> Coro<> { co_await ...`) is not taken for one.

  a co_await in the condition of an if, while, for, do or switch, in a
  coroutine whose body declares no variable (`if (!co_await step())` alone):
  g++ 12 lays the frame out wrongly and the coroutine can never run (Coro
  aborts it where it is made; lambdas are spared). Looked for per body of a
  function returning Coro, in the same code; the test for
  "declares a variable" is a pattern, so it errs towards silence.

Usage: check_traps.py SOURCE_DIR   (checks README.md, docs/, examples/,
tools/ and include/corio/ under it; a fixture directory in the tests)
"""

import pathlib
import re
import sys

BRACED_CO_AWAIT = re.compile(r"(?:[\w>]|[=(,]\s*)\{\s*co_await\b")
SUFFIXES = {".md", ".cpp", ".hpp"}


def sources(root):
    yield from (p for p in [root / "README.md"] if p.exists())
    for folder in ("docs", "examples", "tools", "include/corio"):
        yield from sorted(p for p in (root / folder).rglob("*") if p.suffix in SUFFIXES)


def code_lines(path):
    """(line number, line) of the code in path: all of a C++ file, the
    fenced blocks of a Markdown page."""
    in_block = path.suffix != ".md"
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if path.suffix == ".md" and line.startswith("```"):
            in_block = not in_block
        elif in_block:
            yield lineno, line


# A coroutine function's head, from its Coro return type to its `{` (lambdas are spared).
CORO_HEAD = re.compile(r"\bCoro\b[^;{}]*\)[^;{}]*\{")
AWAIT_CONDITION = re.compile(
    r"\b(?:if|while|switch)\s*\((?:[^(){};]|\([^(){};]*\))*\bco_await\b"
    r"|\bfor\s*\((?:[^(){}]|\([^(){}]*\))*\bco_await\b")
COMMENT = re.compile(r"//[^\n]*")
NOT_A_TYPE = "return|co_return|co_await|co_yield|throw|delete|new|goto|case|else|do|using|typedef"
DECLARATION = re.compile(
    r"(?:^|[;{(])\s*(?!(?:" + NOT_A_TYPE + r")\b)(?:(?:const|static|constexpr)\s+)*"
    r"[A-Za-z_][\w:]*(?:\s*<[^;(){}]*>)?(?:\s*[&*]+\s*|\s+)(?:[A-Za-z_]\w*|\[[^\]]*\])\s*[={;(\[:]",
    re.MULTILINE)


def bodies(lines):
    """(line number, text) of each coroutine function's body in lines, (line number, line)
    pairs of one file or one fenced block: from its head's `{` to the matching `}`."""
    text = "\n".join(line for _, line in lines)
    starts = [0]
    for _, line in lines:
        starts.append(starts[-1] + len(line) + 1)
    for head in CORO_HEAD.finditer(text):
        depth, end = 1, head.end()
        while depth and end < len(text):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        row = next(i for i, s in enumerate(starts) if s > head.start()) - 1
        yield lines[row][0], COMMENT.sub("", text[head.end():end - 1])


def blocks(path):
    """The code of path in pieces that stand alone: a C++ file, or one fenced block."""
    block, previous = [], None
    for lineno, line in code_lines(path):
        if previous is not None and lineno != previous + 1 and block:
            yield block
            block = []
        block.append((lineno, line))
        previous = lineno
    if block:
        yield block


def traps(path, root):
    for lineno, line in code_lines(path):
        if BRACED_CO_AWAIT.search(line):
            yield (f"{path.relative_to(root)}:{lineno}: a co_await inside a braced initializer "
                   f"(g++ 12 destroys its value twice): await into a variable first\n  {line.strip()}")
    for block in blocks(path):
        for lineno, body in bodies(block):
            condition = AWAIT_CONDITION.search(body)
            if condition and not DECLARATION.search(body):
                yield (f"{path.relative_to(root)}:{lineno}: a co_await in a condition, in a coroutine "
                       f"that declares no variable (g++ 12 never runs it): await into a variable "
                       f"first\n  {condition.group(0).strip()}")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1])
    found = [t for path in sources(root) for t in traps(path, root)]
    for t in found:
        print(t, file=sys.stderr)
    print(f"docs traps: {len(found)} found")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
