#!/usr/bin/env python3
"""A stand-in X server for regress/x11_forwarding.sh.

    fake_x11_server.py PORT COOKIE_HEX LOG

Listens on 127.0.0.1:PORT (display PORT - 6000). Each connection must
start with an X11 connection setup (either byte order) carrying
MIT-MAGIC-COOKIE-1 and the cookie COOKIE_HEX, the one the test put in its
xauthority; the server then answers b"\\x01OK" and echoes every byte until
the client's EOF. Any other setup gets b"\\x00NO" and is closed. One line
per connection goes to LOG: "accepted" or "refused: why". Runs until
killed.
"""

import socket
import struct
import sys
import threading

PROTO = b"MIT-MAGIC-COOKIE-1"


def read_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise EOFError("EOF in the connection setup")
        buf += chunk
    return buf


def pad4(n):
    return (n + 3) & ~3


def note(log, line):
    with open(log, "a") as f:
        f.write(line + "\n")


def serve(conn, cookie, log):
    with conn:
        try:
            head = read_exact(conn, 12)
            if head[0:1] == b"B":
                name_len, data_len = struct.unpack(">HH", head[6:10])
            elif head[0:1] == b"l":
                name_len, data_len = struct.unpack("<HH", head[6:10])
            else:
                raise ValueError("bad byte order byte %r" % head[0:1])
            name = read_exact(conn, pad4(name_len))[:name_len]
            data = read_exact(conn, pad4(data_len))[:data_len]
            if name != PROTO or data != cookie:
                raise ValueError("wrong authorization %r %s" % (name, data.hex()))
        except (EOFError, ValueError) as e:
            note(log, "refused: %s" % e)
            try:
                conn.sendall(b"\x00NO")
            except OSError:
                pass
            return
        note(log, "accepted")
        conn.sendall(b"\x01OK")
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            conn.sendall(chunk)
        conn.shutdown(socket.SHUT_WR)


def main():
    port, cookie, log = int(sys.argv[1]), bytes.fromhex(sys.argv[2]), sys.argv[3]
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, cookie, log), daemon=True).start()


if __name__ == "__main__":
    main()
