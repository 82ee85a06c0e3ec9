#!/usr/bin/env python3
"""A plain TCP client for the forwarding regress tests.

    tcp_pipe.py PORT

Connects to 127.0.0.1:PORT, copies stdin to the connection (half-closing
it at stdin's end) and the connection to stdout until the peer closes.
Exit status 0, or 2 when the connection could not be made. With a FIFO as
stdin a test can send in phases and keep the connection open meanwhile
(a forward cancelled with a connection in flight).
"""

import socket
import sys
import threading


def pipe_stdin(s):
    """Copies stdin to socket s as it comes (half-closing at its end) and
    s to stdout until the peer closes. Shared with socks_client.py."""

    def send():
        while True:
            data = sys.stdin.buffer.read1(65536)
            if not data:
                break
            s.sendall(data)
        s.shutdown(socket.SHUT_WR)

    t = threading.Thread(target=send, daemon=True)
    t.start()
    while True:
        data = s.recv(65536)
        if not data:
            break
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    t.join()


def main():
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
    except OSError as e:
        print(f"tcp_pipe: {e}", file=sys.stderr)
        return 2
    s.settimeout(60)
    pipe_stdin(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
