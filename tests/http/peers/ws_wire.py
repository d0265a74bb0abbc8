"""What the Python peers share: RFC 6455 frames written and parsed by hand
(nothing of corio's), and a listener on a free loopback port."""
import os
import socket
import struct


def frame(opcode, payload, mask=True, rsv1=False):
    """A final frame; masked as a client's must be, unmasked as a server's."""
    head = bytes([0x80 | (0x40 if rsv1 else 0) | opcode])
    n = len(payload)
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + unmask(payload, key)


def unmask(data, key):
    """data XOR the repeated 4-byte key (masking and unmasking alike)."""
    n = len(data)
    return (int.from_bytes(data, "big") ^ int.from_bytes((key * (n // 4 + 1))[:n], "big")).to_bytes(n, "big")


def parse(buf):
    """The first whole frame in buf, unmasked: (fin, rsv1, opcode, payload, rest), or None."""
    if len(buf) < 2:
        return None
    n, at = buf[1] & 0x7F, 2
    if n == 126:
        if len(buf) < 4:
            return None
        n, at = struct.unpack("!H", buf[2:4])[0], 4
    elif n == 127:
        if len(buf) < 10:
            return None
        n, at = struct.unpack("!Q", buf[2:10])[0], 10
    key = buf[at:at + 4] if buf[1] & 0x80 else None
    at += 4 if key else 0
    if len(buf) < at + n:
        return None
    payload = unmask(buf[at:at + n], key) if key else buf[at:at + n]
    return buf[0] & 0x80, buf[0] & 0x40, buf[0] & 0x0F, payload, buf[at + n:]


def listener():
    """A listening socket on 127.0.0.1, its port printed ("port N") for the test."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    print("port", sock.getsockname()[1], flush=True)
    return sock
