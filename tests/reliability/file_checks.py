"""`corio serve --root` as a static file server clients resume and revalidate
against: byte ranges (one, several, none satisfiable, abusive sets) and
conditional requests on the validators of a first GET."""
from harness import expect
from http_checks import BIG, H, ServeGroup
from httpraw import Conn, get


def range_of(g, spec):
    """GET /big.bin with `Range: bytes=<spec>`."""
    return get(g.port, "/big.bin", headers=b"Range: bytes=" + spec.encode() + b"\r\n")


def byteranges(r):
    """The parts of a multipart/byteranges answer: [(Content-Range, bytes)].
    Each part is CRLF, the boundary line, its fields, a blank line and its
    bytes; a CRLF and the closing boundary end the last."""
    ctype = r.header("content-type") or ""
    expect(ctype.startswith("multipart/byteranges") and "boundary=" in ctype,
           f"several ranges answered with Content-Type {ctype!r}, not multipart/byteranges")
    delimiter = b"\r\n--" + ctype.split("boundary=", 1)[1].strip('"').encode()
    body = r.body if r.body.startswith(b"\r\n") else b"\r\n" + r.body  # the first CRLF is optional
    pieces = body.split(delimiter)
    expect(pieces[0] == b"" and pieces[-1] == b"--\r\n",
           f"a multipart/byteranges body not framed by its boundary: {r.body[:80]!r}")
    parts = []
    for piece in pieces[1:-1]:
        head, _, data = piece.partition(b"\r\n\r\n")
        fields = dict(line.decode().lower().split(": ", 1) for line in head.split(b"\r\n")[1:])
        parts.append((fields.get("content-range"), data))
    return parts


def expect_not_modified(g, field, value, what):
    """A 304 with no body: the same connection answers a next request."""
    with Conn(g.port) as c:
        c.send(b"GET /big.bin HTTP/1.1\r\n" + H + field + b": " + value.encode() + b"\r\n\r\n")
        r = c.read_response()
        expect(r.status == 304, f"{what}: answered {r.status}, expected 304")
        c.expect_open()  # a body after the 304 would be read as this answer


def files_group(corio):
    g = ServeGroup(corio, name="http_files")
    whole = f"/{BIG}"

    @g.check("range.single")
    def single_range():
        r = range_of(g, "0-9")
        expect(r.status == 206 and r.body == g.big[:10],
               f"Range: bytes=0-9 answered {r.status} with {len(r.body)} bytes, "
               "expected 206 and the file's first 10")
        expect(r.header("content-range") == "bytes 0-9" + whole,
               f"Range: bytes=0-9 answered Content-Range {r.header('content-range')!r}")
        expect(r.header("accept-ranges") == "bytes", "the 206 does not say Accept-Ranges: bytes")
        r = range_of(g, "-5")
        expect(r.status == 206 and r.body == g.big[-5:],
               f"Range: bytes=-5 answered {r.status} with {len(r.body)} bytes, not the last 5")

    @g.check("range.multiple")
    def multiple_ranges():
        r = range_of(g, "0-9,100-109,-10")
        expect(r.status == 206, f"three ranges answered {r.status}, expected 206")
        want = [(f"bytes 0-9{whole}", g.big[:10]), (f"bytes 100-109{whole}", g.big[100:110]),
                (f"bytes {BIG - 10}-{BIG - 1}{whole}", g.big[-10:])]
        got = byteranges(r)
        expect(got == want, f"three ranges answered the parts {[(c, len(d)) for c, d in got]}")

    @g.check("range.unsatisfiable")
    def unsatisfiable():
        r = range_of(g, f"{BIG}-{BIG + 10}")
        expect(r.status == 416, f"a range past the end answered {r.status}, expected 416")
        expect(r.header("content-range") == "bytes */" + str(BIG),
               f"the 416 has Content-Range {r.header('content-range')!r}, expected bytes */{BIG}")

    # CVE-2011-3192 ("Apache Killer"): each of many overlapping ranges a copy
    # of the file. The server ignores a Range over its limits and coalesces
    # overlaps, so nothing answers more than the file once.
    @g.check("range.abusive")
    def abusive_ranges():
        for spec, what in [(",".join(f"5-{i}" for i in range(1300)), "1,300 overlapping ranges"),
                           (",".join(["0-"] * 200), "200 whole-file ranges"),
                           (",".join(f"{i}-" for i in range(16)), "16 overlapping ranges")]:
            r = range_of(g, spec)
            expect(r.status in (200, 206) and len(r.body) <= BIG + 4096,
                   f"{what}: answered {r.status} with {len(r.body)} bytes, more than the "
                   f"{BIG}-byte file once")

    @g.check("conditional")
    def conditional():
        first = get(g.port, "/big.bin")
        etag, modified = first.header("etag"), first.header("last-modified")
        expect(etag and modified, f"a file served without validators: ETag {etag!r}, "
                                  f"Last-Modified {modified!r}")
        expect_not_modified(g, b"If-None-Match", etag, f"If-None-Match: {etag}")
        expect_not_modified(g, b"If-Modified-Since", modified, f"If-Modified-Since: {modified}")
        r = get(g.port, "/big.bin", headers=b'If-None-Match: "other"\r\n')
        expect(r.status == 200 and r.body == g.big,
               f"If-None-Match with another tag answered {r.status}, {len(r.body)} bytes")

    return g
