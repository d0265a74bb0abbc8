#!/usr/bin/env python3
"""examples/db/products_api against the tests' PostgreSQL: every endpoint
with its statuses and bodies, the refusals in FastAPI's 422 shape (each
entry as FastAPI 0.115 with pydantic 2.13 words it for the same program,
examples/db/products_api.py), then Ctrl-C, which must stop it at once.

Usage: products_api_example.py BINARY ADDRESS_FILE
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request


def call(base, method, path, body=None, raw=None):
    data = raw if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, text = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read()
    return status, json.loads(text) if text else None


def check(base):
    status, made = call(base, "POST", "/products", {"name": "hammer", "stock": 3})
    assert status == 201 and made["name"] == "hammer" and made["kind"] == "part", (status, made)
    pid = made["id"]
    assert call(base, "GET", f"/products/{pid}") == (200, made)
    status, _ = call(base, "POST", "/products", {"name": "saw", "stock": 1, "kind": "tool"})
    assert status == 201
    status, page = call(base, "GET", f"/products?after={pid - 1}&limit=2")
    assert status == 200 and [p["name"] for p in page] == ["hammer", "saw"], page
    updated = {"name": "mallet", "stock": 0, "kind": "kit"}
    assert call(base, "PUT", f"/products/{pid}", updated) == (200, dict(updated, id=pid))
    assert call(base, "PUT", "/products/2000000000", updated) == (404, {"detail": "no such product"})

    status, refused = call(base, "POST", "/products", {"name": "", "stock": -1, "kind": "x"})
    assert status == 422, status
    assert refused["detail"] == [  # in the fields' order, as pydantic's
        {"type": "string_too_short", "loc": ["body", "name"], "msg": "String should have at least 1 character",
         "input": "", "ctx": {"min_length": 1}},
        {"type": "greater_than_equal", "loc": ["body", "stock"], "msg": "Input should be greater than or equal to 0",
         "input": -1, "ctx": {"ge": 0}},
        {"type": "enum", "loc": ["body", "kind"], "msg": "Input should be 'tool', 'part' or 'kit'", "input": "x",
         "ctx": {"expected": "'tool', 'part' or 'kit'"}}], refused
    status, refused = call(base, "POST", "/products", {"stock": 1})
    assert (status, refused["detail"]) == (422, [
        {"type": "missing", "loc": ["body", "name"], "msg": "Field required", "input": {"stock": 1}}]), refused
    status, refused = call(base, "POST", "/products", raw=b'{"name": "saw", "stock": }')
    assert status == 422, status
    [entry] = refused["detail"]
    entry.pop("ctx")  # {"error": ...}: Python's words there ("Expecting value"), corio's own here
    assert entry == {"type": "json_invalid", "loc": ["body", 25], "msg": "JSON decode error", "input": {}}, refused
    assert call(base, "GET", "/products/abc") == (422, {"detail": [
        {"type": "int_parsing", "loc": ["path", "product_id"],
         "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "abc"}]})
    assert call(base, "GET", "/products?limit=500") == (422, {"detail": [
        {"type": "less_than_equal", "loc": ["query", "limit"], "msg": "Input should be less than or equal to 100",
         "input": "500", "ctx": {"le": 100}}]})

    assert call(base, "DELETE", f"/products/{pid}") == (204, None)
    assert call(base, "DELETE", f"/products/{pid}") == (404, {"detail": "no such product"})
    assert call(base, "GET", f"/products/{pid}") == (404, {"detail": "no such product"})


def main(binary, address_file):
    with open(address_file) as f:
        dsn = f.read().strip()
    proc = subprocess.Popen([binary], env=dict(os.environ, DSN=dsn, PORT="0"), stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()  # "serving on http://127.0.0.1:PORT"
        assert first.startswith("serving on "), first
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # the access log
        check(first.split()[-1])
        began = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0, proc.returncode
        assert time.monotonic() - began < 10, "Ctrl-C stops an idle server at once"
    finally:
        if proc.poll() is None:
            proc.kill()
    print("products_api: every endpoint answered as FastAPI's would")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
