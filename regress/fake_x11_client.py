#!/usr/bin/env python3
"""An X client stand-in for regress/x11_forwarding.sh, run on the server.

    fake_x11_client.py BYTES [B|l] [COOKIE_HEX]

Connects to $DISPLAY ("host:N" is TCP port 6000 + N; ":N" and "unix:N" the
socket /tmp/.X11-unix/XN), sends an X11 connection setup in the given byte
order (default 'l') with MIT-MAGIC-COOKIE-1 and the cookie `xauth list
$DISPLAY` gives (or COOKIE_HEX), expects the fake server's b"\\x01OK", then
sends BYTES random bytes and reads as many back. Prints
"sent SHA256" and "got SHA256"; exit status 0 only when they match, 2 when
the connection setup was refused or cut.
"""

import hashlib
import os
import socket
import struct
import subprocess
import sys
import threading

PROTO = b"MIT-MAGIC-COOKIE-1"


def pad(b):
    return b + b"\0" * ((4 - len(b) % 4) % 4)


def cookie_of(display):
    out = subprocess.run(["xauth", "list", display], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == PROTO.decode():
            return bytes.fromhex(parts[2])
    raise SystemExit("no cookie for %s in xauth list" % display)


def connect(display):
    host, _, rest = display.rpartition(":")
    number = int(rest.split(".")[0])
    if host in ("", "unix"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("/tmp/.X11-unix/X%d" % number)
        return s
    return socket.create_connection((host, 6000 + number), timeout=20)


def main():
    size = int(sys.argv[1])
    order = sys.argv[2] if len(sys.argv) > 2 else "l"
    display = os.environ["DISPLAY"]
    cookie = bytes.fromhex(sys.argv[3]) if len(sys.argv) > 3 else cookie_of(display)
    fmt = ">" if order == "B" else "<"
    setup = order.encode() + b"\0" + struct.pack(fmt + "HHHH", 11, 0, len(PROTO), len(cookie)) + b"\0\0"
    setup += pad(PROTO) + pad(cookie)
    s = connect(display)
    s.settimeout(30)
    # The setup in two writes, split inside the cookie: the forwarding
    # must wait for the whole of it.
    cut = len(setup) - 7
    s.sendall(setup[:cut])
    s.sendall(setup[cut:])
    reply = b""
    try:
        while len(reply) < 3:
            chunk = s.recv(3 - len(reply))
            if not chunk:
                break
            reply += chunk
    except OSError:
        pass
    if reply != b"\x01OK":
        print("setup refused: %r" % reply)
        return 2
    data = os.urandom(size)
    got = []

    # Until every byte is back: OpenSSH's X11 channels do not carry a
    # half-close (real X clients never make one), so no EOF is sent.
    def reader():
        n = 0
        while n < size:
            chunk = s.recv(65536)
            if not chunk:
                break
            got.append(chunk)
            n += len(chunk)

    t = threading.Thread(target=reader)
    t.start()
    s.sendall(data)
    t.join()
    s.close()
    a = hashlib.sha256(data).hexdigest()
    b = hashlib.sha256(b"".join(got)).hexdigest()
    print("sent", a)
    print("got", b)
    return 0 if a == b else 1


if __name__ == "__main__":
    sys.exit(main())
