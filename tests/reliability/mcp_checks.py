"""The nba-daily-brief MCP example attacked as a hostile host: over stdio
(one server per check, since many end with EOF or a closed stdout) and over
Streamable HTTP (one server for the group)."""
import json
import os
import select
import shutil
import tempfile
import threading
import time

import harness
from harness import CheckFailed, Group, expect, seconds, wait_until
from mcp_client import (INITIALIZED, HttpHost, StdioHost, brief, cancel, deep, encode, initialize,
                        request, save)

INTERNAL_WORDS = ("type_error", "nlohmann", "json.exception", "what()")
# JSON that is no valid request (JSON-RPC 2.0 sections 5.1 and 7, the
# spec's own examples among them): each answered by one -32600 with id
# null. MCP since 2025-06-18 has no batches, so a batch is one such error.
INVALID_REQUESTS = [b"{}", b'{"jsonrpc":"2.0"}', b'{"foo":"boo"}', b'{"jsonrpc":"2.0","method":1}',
                    b'{"jsonrpc":"2.0","method":1,"params":"bar"}',
                    b'{"jsonrpc":"2.0","method":"update","params":5}', b"[]", b"[1]", b"[1,2,3]"]


def is_invalid_request_answer(msgs):
    """One message: a -32600 error with id null."""
    return (len(msgs) == 1 and "id" in msgs[0] and msgs[0]["id"] is None and
            msgs[0].get("error", {}).get("code") == -32600)


class StdioGroup(Group):
    name = "mcp_stdio"

    def __init__(self, nba):
        super().__init__()
        self.nba = nba
        self.articles = tempfile.mkdtemp(prefix="corio-rel-articles-")

    def host(self):
        return StdioHost(self, self.nba, self.articles)

    def written(self, title):
        return os.path.exists(os.path.join(self.articles, title + ".md"))

    def stop(self):
        shutil.rmtree(self.articles, ignore_errors=True)


def stdio_group(nba):
    g = StdioGroup(nba)

    @g.check("deep_nesting")
    def deep_nesting():
        h = g.host()
        h.initialize()
        h.send(deep(100_000))
        h.send(b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"a":' + b"[" * 100_000 +
               b"]" * 100_000 + b"}}")
        h.ping(7, "two messages 100,000 deep")
        parse_errors = [m for m in h.messages() if m.get("error", {}).get("code") == -32700]
        expect(len(parse_errors) == 2, f"100,000-deep messages got {h.messages()[-3:]}, "
                                         "expected two -32700 answers")
        h.finish()

    @g.check("cancel_in_same_write_then_eof")
    def cancel_same_write():
        h = g.host()
        h.initialize()
        h.send(brief(7), cancel(7))
        h.finish(timeout=15)

    @g.check("initialize_not_cancelled")
    def initialize_not_cancelled():
        h = g.host()
        h.send(initialize(), cancel(0))
        h.result(0, "initialize cancelled in the same write")
        h.send(INITIALIZED)
        h.ping(1, "a cancelled initialize")
        h.finish()

    @g.check("eof_with_100_in_flight", limit=120)
    def eof_with_100_in_flight():
        for run in range(3):
            h = g.host()
            h.initialize()
            h.send(*[brief(i) for i in range(1, 101)])
            msgs = h.finish(timeout=60)
            answered = {m["id"] for m in msgs if "result" in m and not m["result"].get("isError")}
            lost = sorted(set(range(1, 101)) - answered)
            expect(not lost, f"run {run + 1}: {len(lost)} of 100 calls in flight at EOF never "
                             f"answered (ids {lost[:10]})")

    @g.check("over_limit_last_line")
    def over_limit_last_line():
        h = g.host()
        h.initialize()
        h.send(save(1, "rel-control"))
        h.result(1, "save_article under the limit")
        expect(g.written("rel-control"), "save_article under the limit wrote no file")
        h.write(b" " * (5 << 20) + encode(save(2, "rel-over-limit")))  # no newline, then EOF
        msgs = h.finish()
        expect(not g.written("rel-over-limit"), "a 5 MiB last line without a newline was executed "
                                                "(save_article wrote its file)")
        expect(not [m for m in msgs if m.get("id") == 2 and "result" in m],
               "the over-limit save_article was answered with a result")
        expect([m for m in msgs if m.get("error", {}).get("code") in (-32600, -32700)],
               "the over-limit last line got no error answer")

    @g.check("before_initialize")
    def before_initialize():
        h = g.host()
        h.send(request(1, "tools/list"))
        h.error(1, None, "tools/list before initialize")
        h.send(save(2, "rel-before-init"))
        h.error(2, None, "tools/call before initialize")
        expect(not g.written("rel-before-init"), "a tools/call before initialize wrote its file")
        h.send(request(3, "ping"))
        h.result(3, "ping before initialize (allowed)")
        h.initialize()
        h.ping(4, "requests before initialize")
        h.finish()

    @g.check("second_initialize")
    def second_initialize():
        h = g.host()
        h.initialize()
        h.send(initialize(id=9))
        h.error(9, None, "a second initialize")
        h.ping(10, "a second initialize")
        h.finish()

    @g.check("initialize_fields")
    def initialize_fields():
        h = g.host()
        bad = {1: initialize(1, protocolVersion=None), 2: initialize(2, protocolVersion=5),
               3: initialize(3, capabilities=None), 4: initialize(4, clientInfo=None),
               5: request(5, "initialize", [1])}
        h.send(*bad.values())
        for id, msg in bad.items():
            err = h.error(id, -32602, f"initialize with {json.dumps(msg['params'])[:80]}")
            leaked = [w for w in INTERNAL_WORDS if w in err.get("message", "")]
            expect(not leaked, f"an error answer shows internal text: {err['message'][:120]}")
        h.initialize()
        h.ping(6, "malformed initialize requests")
        h.finish()

    @g.check("nul_and_trailing_garbage")
    def trailing_garbage():
        h = g.host()
        h.initialize()
        shapes = {1: encode(save(1, "rel-trailing")) + b" x", 2: encode(request(2, "ping")) + b"\x00",
                  3: encode(request(3, "ping")) + encode(request(3, "ping")),
                  4: encode(request(4, "ping"))[:-1] + b"\x00}"}
        for data in shapes.values():
            h.write(data + b"\n")
        h.ping(5, "messages with trailing garbage")
        parse_errors = [m for m in h.messages() if m.get("error", {}).get("code") == -32700]
        expect(len(parse_errors) == len(shapes) and not [m for m in h.messages() if m.get("id") in shapes],
               f"{len(shapes)} messages with trailing bytes or a NUL got {h.messages()[1:6]}, "
               "expected as many -32700 answers (id null) and nothing else")
        expect(not g.written("rel-trailing"), "a save_article with trailing garbage wrote its file")
        h.finish()

    @g.check("duplicate_inflight_id")
    def duplicate_id():
        h = g.host()
        h.initialize()
        h.send(brief(7), brief(7))
        wait_until(lambda: len(h.answers(7)) >= 2, 10,
                   "two in-flight calls with id 7 did not both get an answer")
        kinds = sorted("error" if "error" in m else "result" for m in h.answers(7))
        expect(kinds == ["error", "result"], f"two in-flight calls with id 7 got {kinds}, "
                                             "expected one error and one result")
        h.finish()  # every line was whole JSON: no bare null

    @g.check("garbage_lines")
    def garbage_lines():
        h = g.host()
        h.initialize()
        lines = [b"\xff\xfe", b"null", b"1", b'"x"', b"[]", b"[1,2]", b"{}", b'{"jsonrpc":"2.0"}',
                 b'{"jsonrpc":"1.0","id":1,"method":"ping"}', b'{"jsonrpc":"2.0","id":{},"method":"ping"}',
                 b'{"jsonrpc":"2.0","id":1,"method":5}', b"", b"   ", b'{"a":1e999999}',
                 b'{"a":"\\ud800"}', b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}',
                 b'{"jsonrpc":"2.0","id":3,"method":"nope"}', b"{" * 300, b'{"jsonrpc":"2.0","id":4,'
                 b'"method":"tools/call","params":{"name":"save_article","arguments":{"title":5}}}']
        h.write(b"\n".join(lines) + b"\n")
        h.ping(99, f"{len(lines)} malformed lines")
        h.finish()

    @g.check("invalid_request_objects")
    def invalid_request_objects():
        h = g.host()
        h.initialize()
        for i, line in enumerate(INVALID_REQUESTS):
            # A line's error is written as it is read; the ping after it runs
            # as a task: what comes before the ping's answer is the line's.
            seen, sync = len(h.messages()), f"after-{i}"
            h.write(line + b"\n" + encode(request(sync, "ping")) + b"\n")
            h.result(sync, f"ping after {line!r}")
            got = [m for m in h.messages()[seen:] if m.get("id") != sync]
            expect(is_invalid_request_answer(got),
                   f"{line.decode()} was answered {json.dumps(got)[:200]}, "
                   "expected one -32600 with id null")
        h.finish()

    @g.check("host_closes_stdout")
    def host_closes_stdout():
        read_end, write_end = os.pipe()
        h = StdioHost(g, g.nba, g.articles, stdout=write_end)
        prog = h.prog
        os.close(write_end)
        prog.wait_line("err", r"serving MCP on stdio")
        h.send(initialize())
        ready, _, _ = select.select([read_end], [], [], seconds(10))
        expect(ready and os.read(read_end, 65536), "no answer to initialize on stdout")
        banner = len(prog.stderr())
        os.close(read_end)  # the host goes away; stdin stays open
        try:
            h.send(INITIALIZED, *[request(i, "tools/list") for i in range(1, 201)])
        except CheckFailed:
            pass  # it may already have ended: that is the point
        rc = prog.wait_exit(15)
        logged = prog.stderr()[banner:]
        expect(len(logged) <= 1, f"after the host closed stdout the server logged {len(logged)} "
                                 f"lines (at most one expected): {logged[:3]}")
        expect(rc is not None and rc >= 0, f"the server died with signal {-rc} on a closed stdout")

    # The output's mark bounds the answers, Session's max_in_flight the
    # requests: before the cap, ASan builds read all 40,000 (900 MB).
    @g.check("host_stops_reading", limit=120)
    def host_stops_reading():
        read_end, write_end = os.pipe()
        h = StdioHost(g, g.nba, g.articles, stdout=write_end)
        os.close(write_end)
        h.prog.wait_line("err", r"serving MCP on stdio")
        rss = h.prog.rss_kb()
        writer = threading.Thread(target=send_many, args=(h, 40_000), daemon=True)
        writer.start()
        # The server must stop taking requests while its answers are not read.
        sent = []
        wait_until(lambda: stalled(h, sent), 60, "the server kept reading stdin while its "
                                                 "stdout was not read")
        grown = h.prog.rss_kb() - rss
        got = drain_lines(read_end, writer)
        expect(grown <= harness.RSS_SLACK_KB, f"with its stdout unread the server grew by "
                                               f"{grown // 1024} MB (bound {harness.RSS_SLACK_KB // 1024} MB)")
        expect(got == 40_001, f"{got} answers to initialize and 40,000 tools/list, expected 40,001")

    return g


def send_many(h, n):
    h.sent = 0
    h.send(initialize(), INITIALIZED)
    for start in range(1, n + 1, 500):
        h.send(*[request(i, "tools/list") for i in range(start, min(start + 500, n + 1))])
        h.sent = start + 499
    h.prog.proc.stdin.close()


def stalled(h, seen):
    """True once the writer made no progress over the last second."""
    seen.append((time.monotonic(), getattr(h, "sent", 0)))
    old = [s for t, s in seen if t <= time.monotonic() - 1.0]
    return bool(old) and old[-1] == seen[-1][1] and seen[-1][1] > 0


def drain_lines(fd, writer):
    """Reads fd to its end: the number of lines (answers) read."""
    lines, tail = 0, b""
    while True:
        ready, _, _ = select.select([fd], [], [], seconds(30))
        expect(ready, "the server stopped answering while its answers were read again")
        data = os.read(fd, 1 << 20)
        if not data:
            break
        tail += data
        lines += tail.count(b"\n")
        tail = tail[tail.rfind(b"\n") + 1:]
    os.close(fd)
    writer.join(seconds(10))
    return lines


class HttpGroup(Group):
    name = "mcp_http"

    def __init__(self, nba):
        super().__init__()
        self.nba = nba
        self.articles = tempfile.mkdtemp(prefix="corio-rel-articles-")

    def start(self):
        self.prog = self.spawn([self.nba, "--http", "0", "--articles", self.articles])
        port = self.prog.wait_line("err", r"http://127\.0\.0\.1:(\d+)/mcp").group(1)
        self.host = HttpHost(int(port))
        self.host.initialize()

    def healthy(self, after):
        self.prog.expect_alive(after)
        self.host.ping(after)

    def stop(self):
        rc = self.prog.stop()
        shutil.rmtree(self.articles, ignore_errors=True)
        expect(rc in (0, 130), f"the MCP HTTP server ended with exit code {rc} after SIGINT")


def http_group(nba):
    g = HttpGroup(nba)

    @g.check("deep_nesting")
    def deep_nesting():
        for session in (True, False):
            g.host.expect_error(deep(100_000), (400,), -32700, f"a 100,000-deep POST "
                                f"({'in' if session else 'without'} a session)", session)
        g.host.expect_error(b"[" * 100_000 + b"]" * 100_000, (400,), -32700, "100,000 nested arrays")

    @g.check("garbage")
    def garbage():
        for body in [b"\x00\xff", b"{", b"\xff\xfe{}", b'{"jsonrpc":"2.0","id":1,"method":"ping"} x',
                     b'{"jsonrpc":"2.0","id":1,"method":"ping"}\x00', b"null", b"[]", b"{}", b"{" * 300]:
            g.host.expect_error(body, (400,), None, f"POST {body[:40]!r}")
        # Well-formed JSON-RPC with bad params: an error answer on the stream.
        g.host.expect_error(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}', (200, 400),
                            -32602, "ping with params [1]")

    @g.check("invalid_request_objects")
    def invalid_request_objects():
        for body in INVALID_REQUESTS:
            r = g.host.post(body)
            got = g.host.messages(r)
            expect(r.status == 400 and is_invalid_request_answer(got),
                   f"POST {body.decode()}: answered {r.status} {r.body[:160]!r}, expected 400 "
                   "and one -32600 with id null")

    @g.check("oversized")
    def oversized():
        big = b" " * (5 << 20) + encode(request(1, "ping"))
        g.host.expect_error(big, (413,), None, "a 5 MiB POST")
        chunked = b"".join(b"%x\r\n" % len(p) + p + b"\r\n" for p in
                           [big[i:i + 65536] for i in range(0, len(big), 65536)]) + b"0\r\n\r\n"
        g.host.expect_error(chunked, (413,), None, "a 5 MiB chunked POST",
                            headers=b"Transfer-Encoding: chunked\r\n")

    # The whole 20 MiB sent before the answer is read, as most clients do:
    # the lingering close must read it all (it stopped at 1 MiB, and the
    # client got EPIPE or a reset instead of its 413).
    @g.check("oversized_upload")
    def oversized_upload():
        try:
            r = g.host.post(b" " * (20 << 20) + encode(request(1, "ping")))
        except (BrokenPipeError, ConnectionResetError) as e:
            raise CheckFailed(f"a 20 MiB POST: {e.__class__.__name__} while sending it, so its "
                              "413 was never read (the lingering close stopped reading)")
        expect(r.status == 413, f"a 20 MiB POST answered {r.status} {r.body[:120]!r}, expected 413")

    return g
