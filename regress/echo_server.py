#!/usr/bin/env python3
"""A TCP echo server for the forwarding regress tests.

    echo_server.py PORT
    echo_server.py /path/to/socket   (a Unix socket, mode 0666)

Listens on 127.0.0.1:PORT and, when the machine has IPv6, on [::1]:PORT;
echoes every connection's bytes back and half-closes after the client's
EOF, so a client that sends N bytes and shuts down its write side reads
exactly those N bytes and then EOF. Runs until killed.
"""

import os
import socket
import sys
import threading


def serve(conn):
    with conn:
        while True:
            data = conn.recv(65536)
            if not data:
                break
            conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)


def listen(family, address, port):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((address, port))
    s.listen(64)
    return s


def accept_loop(s):
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def main():
    if not sys.argv[1].isdigit():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(sys.argv[1])
        os.chmod(sys.argv[1], 0o666)
        s.listen(64)
        accept_loop(s)
        return
    port = int(sys.argv[1])
    sockets = [listen(socket.AF_INET, "127.0.0.1", port)]
    try:
        sockets.append(listen(socket.AF_INET6, "::1", port))
    except OSError:
        pass  # no IPv6 here: the IPv6 checks say so themselves
    for s in sockets[1:]:
        threading.Thread(target=accept_loop, args=(s,), daemon=True).start()
    accept_loop(sockets[0])


if __name__ == "__main__":
    main()
