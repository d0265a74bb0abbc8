"""A hostile MCP host for the nba-daily-brief example: JSON-RPC lines over
its stdin and stdout, or POSTs to its Streamable HTTP endpoint."""
import json

from harness import CheckFailed, describe_exit, expect, wait_until
from httpraw import Conn

PROTOCOL = "2025-11-25"


def initialize(id=0, **params):
    p = {"protocolVersion": PROTOCOL, "capabilities": {},
         "clientInfo": {"name": "reliability", "version": "1"}}
    p.update(params)
    return request(id, "initialize", {k: v for k, v in p.items() if v is not None})


def request(id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method, params=None):
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


INITIALIZED = notification("notifications/initialized")


def cancel(id):
    return notification("notifications/cancelled", {"requestId": id})


def brief(id):
    """A slow tool call (0.3 s per headline) that reports progress."""
    return request(id, "tools/call", {"name": "generate_brief", "arguments": {"target_date": "today"},
                                      "_meta": {"progressToken": id}})


def save(id, title, body="attack"):
    return request(id, "tools/call", {"name": "save_article",
                                      "arguments": {"title": title, "body_md": body}})


def deep(depth, id=5):
    """A ping whose params nest `depth` objects deep."""
    return (b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":' % id + b'{"a":' * depth + b"1" +
            b"}" * depth + b"}")


def encode(msg):
    return msg if isinstance(msg, bytes) else json.dumps(msg).encode()


class StdioHost:
    """The server on stdio, as its host: writes lines, and checks that every
    line it prints is one whole JSON object."""

    def __init__(self, group, nba, articles, stdout=None):
        """stdout: a pipe's write end to give the server instead of ours."""
        self.prog = group.spawn([nba, "--articles", articles], stdin=True, stdout=stdout)

    def write(self, data):
        try:
            self.prog.proc.stdin.write(data)
            self.prog.proc.stdin.flush()
        except BrokenPipeError:
            raise CheckFailed(f"the server stopped reading stdin: "
                              f"{describe_exit(self.prog.proc.poll())}; stderr {self.prog.stderr()[-3:]}")

    def send(self, *msgs):
        """Each message as one line, all in one write."""
        self.write(b"".join(encode(m) + b"\n" for m in msgs))

    def messages(self):
        out = []
        for line in self.prog.stdout():
            expect(line.endswith(b"\n"), f"stdout ends with half a line: {line[:120]!r}")
            try:
                msg = json.loads(line)
            except ValueError:
                raise CheckFailed(f"a stdout line is not JSON: {line[:120]!r}")
            expect(isinstance(msg, dict), f"a stdout line is not a JSON object: {line[:120]!r}")
            out.append(msg)
        return out

    def answers(self, id):
        return [m for m in self.messages() if m.get("id") == id and ("result" in m or "error" in m)]

    def answer(self, id, timeout=10):
        """The (first) answer to request id."""
        def answered():
            self.prog.expect_alive(f"waiting for the answer to id {id}")
            return self.answers(id)
        wait_until(answered, timeout, f"no answer to the request with id {id}")
        return self.answers(id)[0]

    def error(self, id, code=None, what=""):
        """The answer to id, which must be an error (with code, if given)."""
        m = self.answer(id)
        expect("error" in m and (code is None or m["error"].get("code") == code),
               f"{what}: answered {json.dumps(m)[:200]}, expected an error {code or ''}")
        return m["error"]

    def result(self, id, what=""):
        m = self.answer(id)
        expect("result" in m, f"{what}: answered {json.dumps(m)[:200]}, expected a result")
        return m["result"]

    def initialize(self):
        self.send(initialize())
        self.result(0, "initialize")
        self.send(INITIALIZED)

    def ping(self, id, after):
        self.prog.expect_alive(after)
        self.send(request(id, "ping"))
        self.result(id, f"ping after {after}")

    def finish(self, timeout=15):
        """EOF on stdin: the server must end on its own, cleanly."""
        self.prog.proc.stdin.close()
        rc = self.prog.wait_exit(timeout)
        expect(rc == 0, f"the server ended with {describe_exit(rc)} at EOF; "
                        f"stderr {self.prog.stderr()[-3:]}")
        return self.messages()


class HttpHost:
    """A Streamable HTTP client of POST /mcp, one connection per POST."""

    def __init__(self, port):
        self.port, self.session = port, None

    def post(self, body, session=True, headers=b""):
        head = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\n")
        if session and self.session:
            head += b"Mcp-Session-Id: " + self.session.encode() + b"\r\n"
        if b"Transfer-Encoding" not in headers:
            head += b"Content-Length: %d\r\n" % len(body)
        with Conn(self.port, timeout=30) as c:
            c.send(head + headers + b"\r\n" + body)
            return c.read_response()

    @staticmethod
    def messages(r):
        """The JSON-RPC messages of an answer: a JSON body or SSE events
        (an event with empty data, the priming event, is none)."""
        if (r.header("content-type") or "").startswith("text/event-stream"):
            return [json.loads(line[5:]) for line in r.body.decode().splitlines()
                    if line.startswith("data:") and line[5:].strip()]
        return [json.loads(r.body)] if r.body else []

    def initialize(self):
        r = self.post(encode(initialize()), session=False)
        expect(r.status == 200, f"initialize over HTTP answered {r}")
        self.session = r.header("mcp-session-id")
        expect(self.session, "initialize over HTTP gave no Mcp-Session-Id")
        r = self.post(encode(INITIALIZED))
        expect(r.status == 202, f"notifications/initialized over HTTP answered {r}")

    def ping(self, after):
        r = self.post(encode(request(1, "ping")))
        msgs = self.messages(r) if r.status == 200 else []
        expect(msgs and msgs[-1].get("result") == {},
               f"after {after}: ping over HTTP answered {r.status} {r.body[:120]!r}")

    def expect_error(self, body, statuses, code, what, session=True, headers=b""):
        r = self.post(body, session, headers)
        expect(r.status in statuses, f"{what}: answered {r.status} {r.body[:120]!r}, "
                                     f"expected {statuses}")
        msgs = self.messages(r)
        expect(msgs and "error" in msgs[0] and (code is None or msgs[0]["error"]["code"] == code),
               f"{what}: the answer is not a JSON-RPC error {code or ''}: {r.body[:120]!r}")

