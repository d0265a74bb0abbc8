#!/usr/bin/env python3
"""The layering of DESIGN.md, checked from the includes (as Trio checks that
trio.Lock uses only trio._core's public API).

The allowed arrows are the CMake link graph: corio_add_layer(<layer> DEPENDS
...) in CMakeLists.txt, taken transitively; a layer's ROOMS are folders of
src/ compiled into it (the executor in core). Three rules, over every file of
src/<layer>/ (and its rooms) and every public header of a layer:

  1. No upward include: a file of layer L includes a public header of layer M
     only when M is L or a layer L depends on.
  2. No src/ internals across layers: "<dir>/x.hpp" from src/ (the private
     include root) only from the same layer's folder.
  3. No detail header of a layer used by a lower one: rule 1 for
     include/corio/detail/, whose headers belong to layers too.

Every public header must be placed in a layer (HEADER_LAYERS, or its folder
under include/corio/): a new header that is not fails the check, so that
its layer is decided, not guessed.

Usage: check_layers.py SOURCE_DIR   (exit 1 and one line per violation)
"""
import re
import sys
from pathlib import Path

# Public headers directly under include/corio/ (and detail/), by layer.
# Folders (http/, mcp/, json/, pg/, redis/, testing/) are their own layer.
HEADER_LAYERS = {
    "core": """c_string call_graph clock coro errors event_loop exception_context
        executor future handle loop_stats os_error outcome run run_options
        socket source_location stall_detector task threadsafe_hold to_thread
        detail/await_site detail/awaitable detail/driver detail/executor_call
        detail/file_op detail/frame_alloc detail/future_awaiter detail/future_state
        detail/intrusive detail/io_wait detail/loop_core detail/loop_io
        detail/loop_observer detail/os_error detail/runtime_threads
        detail/sanitizers detail/entropy detail/file_system detail/process_system detail/sim_world detail/socket_system detail/task_state""",
    "debug": "inspect task_tree",
    "async": """as_completed daily gather shield sleep task_group timeout wait
        detail/multi_wait""",
    "sync": """barrier condition event lock queue semaphore
        detail/acquire detail/queue_base detail/wait_queue""",
    "net": """datagram dns file pipe_streams server ssl stream_reader stream_writer
        streams subprocess detail/transport""",
    "http": "http",
    "mcp": "mcp",
    "pg": "pg",
    "redis": "redis",
}
UMBRELLA = {"corio"}  # corio.hpp includes every layer: it belongs to none

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
LAYER_CALL = re.compile(r"corio_add_layer\((\w+)([^)]*)\)", re.S)


def keyword_list(args, keyword):
    """The names after keyword in corio_add_layer's arguments, up to the next keyword."""
    found = re.search(keyword + r"((?:\s+\w+)+?)(?:\s+(?:ROOMS|DEPENDS|PUBLIC_LIBS|PRIVATE_LIBS)|\s*$)",
                      args)
    return set(found.group(1).split()) if found else set()


def layer_calls(root):
    """{layer: its corio_add_layer arguments}, from CMakeLists.txt."""
    return dict(LAYER_CALL.findall((root / "CMakeLists.txt").read_text()))


def folders(root):
    """{folder of src/: the layer it belongs to} (each layer's own and its rooms)."""
    owner = {}
    for name, args in layer_calls(root).items():
        owner[name] = name
        for room in keyword_list(args, "ROOMS"):
            owner[room] = name
    return owner


def link_graph(root):
    """{layer: set of layers it may include}, from CMakeLists.txt."""
    direct = {name: keyword_list(args, "DEPENDS") for name, args in layer_calls(root).items()}
    closure = {}

    def reach(layer):
        if layer not in closure:
            closure[layer] = {layer}
            for d in direct.get(layer, ()):
                closure[layer] |= reach(d)
        return closure[layer]

    for layer in direct:
        reach(layer)
    return closure


def header_layer(rel):
    """The layer of include/corio/<rel> (rel without .hpp), or None."""
    first = rel.split("/")[0]
    if first in ("http", "mcp", "json", "pg", "redis", "testing"):
        return first
    for layer, names in HEADER_LAYERS.items():
        if rel in names.split():
            return layer
    return None


def check(root):
    allowed = link_graph(root)
    problems = []
    files = []  # (path, layer)
    inc = root / "include" / "corio"
    for h in sorted(inc.rglob("*.hpp")):
        rel = h.relative_to(inc).with_suffix("").as_posix()
        if rel in UMBRELLA:
            continue
        layer = header_layer(rel)
        if layer is None:
            problems.append(f"include/corio/{rel}.hpp: in no layer (add it to HEADER_LAYERS)")
            continue
        files.append((h, layer))
    owner = folders(root)
    for folder, layer in owner.items():
        for f in sorted((root / "src" / folder).rglob("*")):
            if f.suffix in (".cpp", ".hpp"):
                files.append((f, layer))
    for path, layer in files:
        for kind, target in INCLUDE.findall(path.read_text()):
            where = path.relative_to(root)
            if kind == "<" and target.startswith("corio/"):
                rel = target[len("corio/"):].removesuffix(".hpp")
                if rel == "version":
                    continue
                other = header_layer(rel)
                if other is None and rel not in UMBRELLA:
                    problems.append(f"{where}: includes <{target}>, in no layer")
                elif other is not None and other not in allowed[layer]:
                    problems.append(f"{where} ({layer}): includes <{target}> of layer {other}")
            elif kind == '"' and path.is_relative_to(root / "src"):
                first = target.split("/")[0]
                if first in owner and owner[first] != layer:
                    problems.append(f"{where} ({layer}): includes \"{target}\", {first}'s internals")
    return problems


def self_test():
    """The checker finds each kind of violation in a small made-up tree."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "CMakeLists.txt").write_text(
            "corio_add_layer(core ROOMS executor)\ncorio_add_layer(json PUBLIC_LIBS x)\n"
            "corio_add_layer(http DEPENDS core json\n  PRIVATE_LIBS z)\n")
        for d in ("include/corio/http", "include/corio/detail", "src/core", "src/executor",
                  "src/http/wire"):
            (root / d).mkdir(parents=True)
        (root / "include/corio/coro.hpp").write_text("#include <corio/http/url.hpp>\n")
        (root / "include/corio/http/url.hpp").write_text("#include <corio/coro.hpp>\n")
        (root / "include/corio/detail/loop_io.hpp").write_text("")
        (root / "include/corio/stray.hpp").write_text("")
        (root / "src/core/loop.cpp").write_text('#include "http/wire/syntax.hpp"\n')
        (root / "src/http/wire/syntax.hpp").write_text('#include "core/loop_state.hpp"\n')
        (root / "src/executor/pool.cpp").write_text('#include "core/loop_state.hpp"\n')
        (root / "src/http/pool_user.cpp").write_text('#include "executor/pool.hpp"\n')
        (root / "src/http/ok.cpp").write_text(
            '#include <corio/detail/loop_io.hpp>\n#include "http/wire/syntax.hpp"\n')
        found = sorted(check(root))
    expected = sorted([
        "include/corio/coro.hpp (core): includes <corio/http/url.hpp> of layer http",
        "include/corio/stray.hpp: in no layer (add it to HEADER_LAYERS)",
        "src/core/loop.cpp (core): includes \"http/wire/syntax.hpp\", http's internals",
        "src/http/wire/syntax.hpp (http): includes \"core/loop_state.hpp\", core's internals",
        "src/http/pool_user.cpp (http): includes \"executor/pool.hpp\", executor's internals",
    ])
    if found != expected:
        print("self-test: expected", expected, "found", found, sep="\n  ")
        return 1
    print("check_layers: self-test passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    problems = check(root)
    for p in problems:
        print(p)
    print(f"check_layers: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
