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


def traps(path, root):
    for lineno, line in code_lines(path):
        if BRACED_CO_AWAIT.search(line):
            yield (f"{path.relative_to(root)}:{lineno}: a co_await inside a braced initializer "
                   f"(g++ 12 destroys its value twice): await into a variable first\n  {line.strip()}")


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
