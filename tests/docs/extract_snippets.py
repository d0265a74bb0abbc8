#!/usr/bin/env python3
"""Turns the ```cpp blocks of Markdown files into C++ the test suite compiles.

The convention (docs/README.md, "Every code block is compiled"): a block's
kind is set by an HTML comment on the line before its fence, invisible on
the rendered page.

  (no marker)                  a fragment: declarations at namespace scope,
                               compiled; the fragments of one file share one
                               namespace, in order, so later ones may use
                               earlier ones
  <!-- doc: fragment in NS -->, <!-- doc: body in NS ... -->
                               the same, compiled inside namespace NS (a
                               header's example written as its own code is)
  <!-- doc: global -->         declarations outside that namespace, at global
                               scope, where they are: for what must be there,
                               such as a specialization of a corio template
                               (`template <> struct corio::http::Fields<T>`)
  <!-- doc: body -->           the statements of a corio::Coro<> function,
                               compiled (they may use the file's fragments);
                               `body (PARAMS)` gives the function parameters,
                               for the names a block uses without declaring
                               them (`body (corio::http::Request& req)`)
  <!-- doc: body run -->       the same, then run with corio::run_main
  <!-- doc: program -->        a whole program with `int main()`, built and run;
                               it must exit with 0, or N with `program exit=N`;
                               `program build-only` is built, never run (a
                               server that waits for Ctrl-C); `file=PATH`
                               after either: the block must be that file of
                               the tree (an example) less its opening comment
  <!-- doc: fail TEXT -->      must NOT compile (warnings are errors), and the
                               compiler's messages must contain TEXT (or one of
                               `A|B`: g++ and clang word things differently)
  <!-- doc: output -->         on a ```text block: the exact standard output
                               of the program or run block before it; after a
                               fail block, what g++ says: its `main.cpp:` lines
                               must be in g++'s messages (the block is compiled
                               as main.cpp; checked with g++ only)

The public headers' examples are compiled the same way: a block of `///`
comment lines indented by four more spaces (Doxygen's code block), with the
marker on the `///` line before it (`/// <!-- doc: body -->`; Doxygen drops
HTML comments); `<!-- doc: text -->` says an indented block is not C++ (a
diagram, sample output). A header block without a marker is not compiled:
the manifest lists it, and docs.snippets fails on it.

Usage: extract_snippets.py OUTDIR FILE.md... [--headers FILE.hpp...]
(paths relative to the source tree)
Writes OUTDIR/<name>.cpp per Markdown file (one translation unit each), and
OUTDIR/headers.cpp for all the headers' blocks (one translation unit),
OUTDIR/fail/<name>_<line>.cpp per fail block, and OUTDIR/manifest.json for
check_snippets.py. Files are rewritten only when their text changes, so an
edit to one page recompiles one translation unit.
"""

import json
import pathlib
import re
import sys

MARKER = re.compile(r"^<!--\s*doc:\s*(\w+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^```(\S*)\s*$")
INCLUDE = re.compile(r"^\s*#\s*include\b")
KINDS = {"fragment", "global", "body", "program", "fail", "output"}
PREAMBLE = "#include <corio/corio.hpp>\n"


class SnippetError(Exception):
    pass


def parse_blocks(path):
    """Yields (kind, argument, language, first code line number, code lines)
    for every fenced block; a marker applies to the next fence."""
    lines = path.read_text(encoding="utf-8").splitlines()
    marker = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line)
        fence = FENCE.match(line)
        if m:
            if m.group(1) not in KINDS:
                raise SnippetError(f"{path}:{i + 1}: unknown snippet kind {m.group(1)!r}")
            marker = (m.group(1), m.group(2), i + 1)
        elif fence:
            end = i + 1
            while end < len(lines) and lines[end].rstrip() != "```":
                end += 1
            if end == len(lines):
                raise SnippetError(f"{path}:{i + 1}: unterminated code block")
            kind, arg = ("fragment", "") if marker is None else marker[:2]
            if fence.group(1) or marker is not None:
                yield kind, arg, fence.group(1), i + 2, lines[i + 1:end]
            marker = None
            i = end
        elif marker is not None and line.strip():
            raise SnippetError(f"{path}:{marker[2]}: a marker must come right before a code block")
        i += 1


HEADER_LINE = re.compile(r"^\s*///(.*)$")
HEADER_CODE = "    "  # after the `/// ` of a comment line


def parse_header_blocks(path, skipped):
    """Yields the same tuples as parse_blocks for the examples in a
    header's `///` comments; appends "path:line" of each unmarked one to
    skipped."""
    marker = None
    block = None
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines() + [""]):
        m = HEADER_LINE.match(line)
        text = m.group(1)[1:] if m else None
        if text is not None and text.startswith(HEADER_CODE):
            if block is None:
                block = (i + 1, [])
            block[1].append(text[len(HEADER_CODE):])
        elif block is not None and text is not None and not text.strip():
            block[1].append("")
        else:
            if block is not None:
                code = "\n".join(block[1]).rstrip("\n").split("\n")
                if marker is None:
                    skipped.append(f"{path}:{block[0]}")
                elif marker[0] != "text":
                    yield marker[0], marker[1], "cpp", block[0], code
                marker, block = None, None
            mm = MARKER.match(text.strip()) if text is not None else None
            if mm:
                if mm.group(1) not in KINDS - {"output"} | {"text"}:
                    raise SnippetError(f"{path}:{i + 1}: unknown snippet kind {mm.group(1)!r}")
                marker = (mm.group(1), mm.group(2))
            elif text is None or text.strip():
                marker = None


def split_includes(code):
    """The block's #include lines (hoisted to the top of the file), and the
    code with each of them blanked so that #line numbers stay right."""
    includes = [line.strip() for line in code if INCLUDE.match(line)]
    rest = ["" if INCLUDE.match(line) else line for line in code]
    return includes, rest


def line_directive(lineno, path):
    return f'#line {lineno} "{path}"'


class Page:
    """One Markdown file's snippets, as they are turned into C++."""

    def __init__(self, path):
        self.path = path
        # "docs/tasks.md" -> docs_tasks (CMake's MAKE_C_IDENTIFIER of the same)
        self.name = re.sub(r"\W", "_", str(path.with_suffix("")).lower())
        self.includes = []
        self.scope = []      # the fragments and bodies, in order
        self.programs = []   # each in its own namespace
        self.registrations = []
        self.fails = []
        self.runs = []       # manifest entries of programs and run blocks
        self.last = None     # the entry an output block belongs to

    def add(self, kind, arg, lang, lineno, code):
        where = f"{self.path}:{lineno - 1}"
        if kind == "output":
            if lang != "text" or self.last is None or "output" in self.last:
                raise SnippetError(f"{where}: an output block must follow a program, run or "
                                   "fail block")
            self.last["output"] = "\n".join(code) + "\n"
            return
        if lang != "cpp" and kind == "fragment":
            return  # shell, CMake, text: not C++
        if lang != "cpp":
            raise SnippetError(f"{where}: a {kind} marker on a {lang or 'plain'} block")
        if kind == "fail":
            if not arg:
                raise SnippetError(f"{where}: fail needs the expected message text")
            self.fails.append({"where": where, "expect": arg, "code": code})
            self.last = self.fails[-1]
            return
        includes, rest = split_includes(code)
        self.includes += [i for i in includes if i not in self.includes]
        self.shown = code  # as on the page, includes and all (program file=)
        body = [line_directive(lineno, self.path)] + rest
        inside = re.fullmatch(r"in ([\w:]+)\s*(.*)", arg)
        if inside and kind in ("fragment", "body") and inside.group(2) != "run":
            # Code as the header reads it, inside its namespace: the page's
            # namespace is closed around it, as for a global block.
            ns = f"doc_{self.name}"
            self.scope += [f"}}  // namespace {ns}", f"namespace {inside.group(1)}::doc_{len(self.scope)} {{"]
            self.add_scoped(kind, inside.group(2), lineno, body, where)
            self.scope += ["}", f"namespace {ns} {{"]
        else:
            self.add_scoped(kind, arg, lineno, body, where)

    def add_scoped(self, kind, arg, lineno, body, where):
        if kind == "fragment":
            self.scope += body
        elif kind == "global":
            # The page's namespace is closed around the block and reopened
            # after it, so the blocks keep their order.
            ns = f"doc_{self.name}"
            self.scope += [f"}}  // namespace {ns}"] + body + [f"namespace {ns} {{"]
        elif kind == "body":
            self.add_body(arg, lineno, body, where)
        else:
            self.add_program(arg, lineno, body, where)

    def add_body(self, arg, lineno, body, where):
        params = re.fullmatch(r"\((.*)\)", arg)
        if arg not in ("", "run") and params is None:
            raise SnippetError(f"{where}: body takes only 'run' or (PARAMETERS)")
        fn = f"body_{len(self.scope)}_{lineno}"
        signature = f"corio::Coro<> {fn}({params.group(1) if params else ''}) {{"
        self.scope += [signature] + body + ["  co_return;", "}"]
        if arg == "run":
            self.register(f"[] {{ return corio::run_main(doc_{self.name}::{fn}()); }}", where)

    def add_program(self, arg, lineno, body, where):
        status = re.fullmatch(r"(?:exit=(\d+)|build-only)?(?:\s*file=(\S+))?", arg)
        if status is None:
            raise SnippetError(f"{where}: program takes only exit=N or build-only, and file=PATH")
        if status.group(2):
            same_as_file(self.shown, pathlib.Path(status.group(2)), where)
        arg = arg.split("file=")[0].strip()
        ns = f"doc_{self.name}_program_{lineno}"
        self.programs += ["#define main doc_main", f"namespace {ns} {{"] + body
        self.programs += [f"}}  // namespace {ns}", "#undef main"]
        if arg != "build-only":
            self.register(f"&{ns}::doc_main", where, int(status.group(1) or 0))

    def register(self, program, where, status=0):
        name = f"{self.name}:{where.rsplit(':', 1)[1]}"
        self.registrations.append(
            f'const corio_docs::Registered reg_{len(self.runs)}("{name}", {program});')
        self.runs.append({"name": name, "where": where, "exit": status})
        self.last = self.runs[-1]

    def translation_unit(self):
        head = [f"// Generated by tests/docs/extract_snippets.py from {self.path}: edit that.",
                PREAMBLE.rstrip()] + self.includes + ['#include "registry.hpp"']
        scope = [f"namespace doc_{self.name} {{"] + self.scope + [f"}}  // namespace doc_{self.name}"]
        regs = ["namespace {"] + self.registrations + ["}  // namespace"]
        return "\n".join(head + scope + self.programs + regs) + "\n"

    def fail_unit(self, fail):
        """The block as a user's main.cpp: the compiler's messages then read
        as the page shows them."""
        includes, rest = split_includes(fail["code"])
        lines = [PREAMBLE.rstrip()] + includes + [line_directive(1, "main.cpp")] + rest
        return "\n".join(lines) + "\n"


def same_as_file(code, path, where):
    """A program shown on a page as it stands in the tree (an example):
    the block must be the file, less the file's opening comment."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = 0
    while start < len(lines) and (lines[start].startswith("//") or not lines[start].strip()):
        start += 1
    shown = [line.rstrip() for line in code]
    for n, (a, b) in enumerate(zip(shown, lines[start:])):
        if a != b.rstrip():
            raise SnippetError(f"{where}: the block differs from {path}:{start + n + 1}")
    if len(shown) != len(lines) - start:
        raise SnippetError(f"{where}: the block has {len(shown)} lines, {path} {len(lines) - start}")


def write_if_changed(path, text):
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_page(out, page, manifest):
    """page's translation unit and fail sources, and its manifest entries."""
    write_if_changed(out / f"{page.name}.cpp", page.translation_unit())
    manifest["programs"] += page.runs
    for fail in page.fails:
        cpp = out / "fail" / f"{page.name}_{fail['where'].rsplit(':', 1)[1]}.cpp"
        write_if_changed(cpp, page.fail_unit(fail))
        entry = {k: v for k, v in fail.items() if k != "code"}
        manifest["fails"].append(dict(entry, source=str(cpp)))


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[-2], file=sys.stderr)
        return 2
    out = pathlib.Path(argv[1])
    (out / "fail").mkdir(parents=True, exist_ok=True)
    split = argv.index("--headers") if "--headers" in argv else len(argv)
    manifest = {"programs": [], "fails": [], "headers_not_compiled": []}
    try:
        for md in argv[2:split]:
            page = Page(pathlib.Path(md))
            for block in parse_blocks(page.path):
                page.add(*block)
            write_page(out, page, manifest)
        # All the headers' examples in one translation unit (headers.cpp):
        # one parse of corio.hpp for all of them.
        page = Page(pathlib.Path("headers"))
        # A header's example names a result to show its type, and may not
        # use it: `std::size_t index = co_await b.wait();`.
        page.includes += ['#pragma GCC diagnostic ignored "-Wunused-variable"',
                          '#pragma GCC diagnostic ignored "-Wunused-but-set-variable"']
        page.includes.append("using namespace std::chrono_literals;  // co_await sleep(10s)")
        page.includes += ['#include "header_names.hpp"', "using namespace corio_docs;"]
        blocks = []
        for hpp in map(pathlib.Path, argv[split + 1:]):
            found = list(parse_header_blocks(hpp, manifest["headers_not_compiled"]))
            if found:
                page.includes.append(f"#include <{hpp.relative_to('include')}>")
            blocks += [(hpp, block) for block in found]
        # The global blocks first: the types they declare (a struct with its
        # Fields) are used by other headers' examples, in any order.
        blocks.sort(key=lambda b: b[1][0] != "global")
        for hpp, block in blocks:
            page.path = hpp  # for the #line directives and the messages
            page.add(*block)
        page.path = pathlib.Path("include/corio")
        write_page(out, page, manifest)
    except SnippetError as e:
        print(f"extract_snippets: {e}", file=sys.stderr)
        return 1
    write_if_changed(out / "manifest.json", json.dumps(manifest, indent=1) + "\n")
    (out / "snippets.stamp").write_text("")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
