#!/usr/bin/env python3
"""A SOCKS 4, 4a and 5 test client for the regress scripts (ssh -D, ssh -R port).

    socks_client.py [options] PROXY_PORT TARGET_HOST TARGET_PORT

Connects to 127.0.0.1:PROXY_PORT (--proxy-host to change), makes the
handshake, then copies stdin (or --send TEXT, or --send-bytes N of a
checksummable pattern) to the target, half-closes, and writes what comes
back to stdout until the target closes. Status lines go to stderr.

The handshake can be cut on purpose, as the forwarding tests need:
  --fragment N     write the handshake N bytes at a time (1: byte by byte),
                   pausing --pause seconds (default 0.02) between writes,
                   with TCP_NODELAY, so the server sees separate reads;
  --pipeline       SOCKS5: send the greeting and the request together,
                   without waiting for the method choice;
  --early TEXT     send TEXT in the same write as the request (bytes the
                   server must keep as the start of the stream).

Protocol choices: --version 4|4a|5 (default 5), --atyp ipv4|ipv6|domain
(SOCKS5; default: from the target's form), --command connect|bind|udp
(default connect), --methods 0,2 (SOCKS5 methods offered; default 0),
--user NAME (SOCKS4 user id).

Exit status: 0 the request was granted (and the data copied); 1 the
server refused: the reply code is printed to stdout as "reply=0xNN"
("reply=none" when it closed without one) and nothing else is done;
2 bad usage or a connection error. With --reply-only the client stops
after the reply in every case and prints "reply=0xNN" (0x5a/0x00 granted).
"""

import argparse
import hashlib
import ipaddress
import socket
import sys
import time

import tcp_pipe  # beside this script


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("proxy_port", type=int)
    p.add_argument("target_host")
    p.add_argument("target_port", type=int)
    p.add_argument("--proxy-host", default="127.0.0.1")
    p.add_argument("--version", choices=["4", "4a", "5"], default="5")
    p.add_argument("--atyp", choices=["ipv4", "ipv6", "domain"])
    p.add_argument("--command", choices=["connect", "bind", "udp"], default="connect")
    p.add_argument("--methods", default="0")
    p.add_argument("--user", default="")
    p.add_argument("--fragment", type=int, default=0)
    p.add_argument("--pause", type=float, default=0.02)
    p.add_argument("--pipeline", action="store_true")
    p.add_argument("--early", default="")
    p.add_argument("--send")
    p.add_argument("--send-bytes", type=int)
    p.add_argument("--reply-only", action="store_true")
    p.add_argument("--timeout", type=float, default=20.0)
    return p.parse_args(argv)


def pattern(n):
    """N bytes that differ at every offset (a counter's bytes, hashed)."""
    out = bytearray()
    block = 0
    while len(out) < n:
        out += hashlib.sha256(block.to_bytes(8, "big")).digest()
        block += 1
    return bytes(out[:n])


COMMANDS = {"connect": 1, "bind": 2, "udp": 3}


def socks4_request(a):
    cmd = COMMANDS[a.command]
    if a.command == "udp":
        cmd = 3  # not a SOCKS4 command: the server must refuse it
    head = bytes([4, cmd]) + a.target_port.to_bytes(2, "big")
    user = a.user.encode() + b"\0"
    if a.version == "4a":
        return head + bytes([0, 0, 0, 1]) + user + a.target_host.encode() + b"\0"
    return head + ipaddress.IPv4Address(a.target_host).packed + user


def socks5_request(a):
    atyp = a.atyp
    if atyp is None:
        try:
            atyp = "ipv4" if ipaddress.ip_address(a.target_host).version == 4 else "ipv6"
        except ValueError:
            atyp = "domain"
    head = bytes([5, COMMANDS[a.command], 0])
    if atyp == "ipv4":
        addr = bytes([1]) + ipaddress.IPv4Address(a.target_host).packed
    elif atyp == "ipv6":
        addr = bytes([4]) + ipaddress.IPv6Address(a.target_host).packed
    else:
        name = a.target_host.encode()
        addr = bytes([3, len(name)]) + name
    return head + addr + a.target_port.to_bytes(2, "big")


def send_cut(sock, data, a):
    """Writes data in --fragment pieces with pauses (all at once without)."""
    if a.fragment <= 0:
        sock.sendall(data)
        return
    for i in range(0, len(data), a.fragment):
        sock.sendall(data[i:i + a.fragment])
        if i + a.fragment < len(data):
            time.sleep(a.pause)


def recv_exact(sock, n):
    """n bytes, or fewer if the server closed first."""
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            break
        out += chunk
    return out


def refused(code):
    print("reply=" + ("none" if code is None else "0x%02x" % code))
    sys.stdout.flush()
    return 1


def handshake(sock, a):
    """Returns (granted, reply code or None)."""
    early = a.early.encode()
    if a.version in ("4", "4a"):
        send_cut(sock, socks4_request(a) + early, a)
        reply = recv_exact(sock, 8)
        if len(reply) < 8:
            return False, None
        return reply[1] == 0x5A, reply[1]
    methods = bytes(int(m, 0) for m in a.methods.split(",") if m != "")
    greeting = bytes([5, len(methods)]) + methods
    request = socks5_request(a) + early
    if a.pipeline:
        send_cut(sock, greeting + request, a)
    else:
        send_cut(sock, greeting, a)
    choice = recv_exact(sock, 2)
    if len(choice) < 2:
        return False, None
    if choice[1] != 0:
        return False, choice[1]
    if not a.pipeline:
        send_cut(sock, request, a)
    reply = recv_exact(sock, 4)
    if len(reply) < 4:
        return False, None
    # The bound address that follows: IPv4, a name or IPv6.
    rest = {1: 4, 4: 16}.get(reply[3])
    if rest is None and reply[3] == 3:
        n = recv_exact(sock, 1)
        rest = n[0] if n else 0
    recv_exact(sock, (rest or 0) + 2)
    return reply[1] == 0, reply[1]


def main(argv):
    a = parse_args(argv)
    try:
        sock = socket.create_connection((a.proxy_host, a.proxy_port), timeout=a.timeout)
    except OSError as e:
        print("socks_client: connect to %s port %d: %s" % (a.proxy_host, a.proxy_port, e), file=sys.stderr)
        return 2
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        granted, code = handshake(sock, a)
        if a.reply_only:
            print("reply=" + ("none" if code is None else "0x%02x" % code))
            return 0 if granted else 1
        if not granted:
            return refused(code)
        if a.send is None and a.send_bytes is None:
            # stdin as it comes (a FIFO fed in phases keeps the stream open).
            tcp_pipe.pipe_stdin(sock)
            return 0
        sock.sendall(a.send.encode() if a.send is not None else pattern(a.send_bytes))
        sock.shutdown(socket.SHUT_WR)
        out = sys.stdout.buffer
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            out.write(chunk)
        out.flush()
        return 0
    except OSError as e:
        print("socks_client: %s" % e, file=sys.stderr)
        return 2
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
