#!/usr/bin/env python3
"""Runs an ssh-keysign helper once, as ssh would, for the hostbased tests.

    keysign_request.py HELPER CASE HOST PORT HOSTKEY_PUB USER OTHER_PUB

Connects to HOST:PORT (the helper finds its local name from this socket,
handed over on descriptor 3), builds the request ssh sends for a hostbased
login of USER with the key in HOSTKEY_PUB, spoilt as CASE says, and prints
the helper's exit status, its stderr lines ("err: ...") and its reply
("signature ALG HEX", or "reply HEX" when it is not one).

CASE: good; bad-version (message version 3); bad-fd (descriptor 1); short
(no data); chost (another host name); luser (another user); service;
method; session-id (31 bytes); algorithm (ecdsa with the ed25519 key);
trailing (a byte after the request); unknown-key (OTHER_PUB's key).
"""
import base64
import os
import socket
import struct
import subprocess
import sys


def string(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">I", len(b)) + b


def key_blob(path):
    with open(path) as f:
        return base64.b64decode(f.read().split()[1])


def local_name(sock):
    # OpenSSH's get_local_name: the local address's name, else gethostname.
    try:
        return socket.getnameinfo(sock.getsockname(), socket.NI_NAMEREQD)[0]
    except OSError:
        return socket.gethostname()


def main():
    helper, case, host, port, pub, user, other = sys.argv[1:8]
    sock = socket.create_connection((host, int(port)))
    fields = {
        "session_id": bytes([0x42]) * (31 if case == "session-id" else 32),
        "service": "ssh-userauth" if case == "service" else "ssh-connection",
        "method": "publickey" if case == "method" else "hostbased",
        "alg": "ecdsa-sha2-nistp256" if case == "algorithm" else "ssh-ed25519",
        "blob": key_blob(other if case == "unknown-key" else pub),
        "chost": ("otherhost" if case == "chost" else local_name(sock)) + ".",
        "luser": "root" if case == "luser" else user,
    }
    data = (string(fields["session_id"]) + bytes([50]) + string("bob") + string(fields["service"]) +
            string(fields["method"]) + string(fields["alg"]) + string(fields["blob"]) +
            string(fields["chost"]) + string(fields["luser"]))
    if case == "trailing":
        data += b"\0"
    version = 3 if case == "bad-version" else 2
    fd = 1 if case == "bad-fd" else 3
    body = bytes([version]) + struct.pack(">I", fd) + (b"" if case == "short" else string(data))
    message = struct.pack(">I", len(body)) + body

    if sock.fileno() != 3:
        os.dup2(sock.fileno(), 3)
    p = subprocess.run([helper], input=message, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       pass_fds=(3,), timeout=30)
    print("status %d" % p.returncode)
    for line in p.stderr.decode(errors="replace").replace("\r", "").splitlines():
        print("err: " + line)
    out = p.stdout
    if out:
        try:
            (n,) = struct.unpack(">I", out[:4])
            assert n == len(out) - 4 and out[4] == 2
            (slen,) = struct.unpack(">I", out[5:9])
            sig = out[9:9 + slen]
            (alen,) = struct.unpack(">I", sig[:4])
            print("signature %s %s" % (sig[4:4 + alen].decode(), sig.hex()))
        except (AssertionError, struct.error, UnicodeDecodeError):
            print("reply " + out.hex())


if __name__ == "__main__":
    main()
