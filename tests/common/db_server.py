#!/usr/bin/env python3
"""Throwaway PostgreSQL and Redis servers for the tests and examples.

    db_server.py start pg|redis DIR    # prints the address, writes DIR/address
    db_server.py restart pg|redis DIR  # immediate stop, then start on the same port
    db_server.py stop pg|redis DIR     # stops it and removes DIR

Servers listen on 127.0.0.1 on a free port (asked of the kernel with port 0)
and keep everything under DIR. initdb and postgres refuse to run as root, so
as root they run as the `postgres` user the Debian package creates, and the
cluster lives in a directory of its own under the system's temporary
directory (DIR/pg_home names it): `postgres` may not be able to reach DIR,
e.g. a build tree in a clone under a private temporary directory.
"""
import glob
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin(name):
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    bindir = os.environ.get("CORIO_PG_BINDIR") or (dirs[-1] if dirs else "")
    return os.path.join(bindir, name)


def as_pg(cmd):
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--"] + cmd
    return cmd


def pg_home(d):
    """Where the cluster lives (see the module's comment)."""
    named = d / "pg_home"
    if named.exists():
        return pathlib.Path(named.read_text())
    home = d
    if os.geteuid() == 0:
        home = pathlib.Path(tempfile.mkdtemp(prefix="corio-pg-"))
        shutil.chown(home, "postgres")
    named.write_text(str(home))
    return home


def pg_tls(d):
    """A throwaway self-signed certificate, so clients may ask for sslmode=require."""
    key, cert = d / "server.key", d / "server.crt"
    if not key.exists():
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                        "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.chmod(key, 0o600)
        if os.geteuid() == 0:
            shutil.chown(key, "postgres")
            shutil.chown(cert, "postgres")
    return f"-c ssl=on -c ssl_cert_file={cert} -c ssl_key_file={key}"


def pg_start(d, port):
    d = pg_home(d)
    data = d / "data"
    if not data.exists():
        subprocess.run(as_pg([pg_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                              "--no-sync", "-E", "UTF8", "--locale=C"]),
                       check=True, stdout=subprocess.DEVNULL)
    opts = (f"-p {port} -k {d} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60 "
            + (pg_tls(d) if shutil.which("openssl") else ""))
    subprocess.run(as_pg([pg_bin("pg_ctl"), "-D", str(data), "-o", opts, "-l", str(d / "log"),
                          "-w", "-t", "30", "start"]), check=True, stdout=subprocess.DEVNULL)
    # Plain TCP unless a client asks for TLS (sslmode=require in its own conninfo).
    return f"host=127.0.0.1 port={port} user=postgres dbname=postgres sslmode=disable"


def pg_stop(d):
    d = pg_home(d)
    subprocess.run(as_pg([pg_bin("pg_ctl"), "-D", str(d / "data"), "-m", "immediate", "-w",
                          "stop"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def redis_start(d, port):
    subprocess.run(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(d),
                    "--save", "", "--appendonly", "no", "--daemonize", "yes",
                    "--pidfile", str(d / "redis.pid"), "--logfile", str(d / "log")], check=True)
    for _ in range(300):  # daemonize returns before the port is open
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return f"127.0.0.1:{port}"
        except OSError:
            time.sleep(0.01)
    raise SystemExit("redis-server did not open its port")


def redis_stop(d):
    pidfile = d / "redis.pid"
    if not pidfile.exists():
        return
    pid = int(pidfile.read_text())
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        return
    for _ in range(300):  # gone, or a zombie nobody reaps (PID 1 in a container may not)
        try:
            state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.01)
    pidfile.unlink(missing_ok=True)


SERVERS = {"pg": (pg_start, pg_stop), "redis": (redis_start, redis_stop)}


def main():
    action, kind, d = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    start, stop = SERVERS[kind]
    if action == "start":
        d.mkdir(parents=True, exist_ok=True)
        port = free_port()
        (d / "port").write_text(str(port))
        address = start(d, port)
        (d / "address").write_text(address)
        print(address)
    elif action == "restart":
        stop(d)
        start(d, int((d / "port").read_text()))
    elif action == "stop":
        stop(d)
        if kind == "pg" and (d / "pg_home").exists():
            shutil.rmtree(pg_home(d), ignore_errors=True)
        shutil.rmtree(d, ignore_errors=True)
    else:
        raise SystemExit(f"unknown action {action}")


if __name__ == "__main__":
    main()
