#!/usr/bin/env bash
# Forwarded connections under pressure (issue 11's lifecycle tests), with
# Longhaul's ssh and sshd (-L) and Debian's ssh against Longhaul's sshd:
#   - a slow consumer: 48 MiB pushed through -L into a target that reads
#     about 8 MiB/s; every byte arrives, and neither ssh nor sshd's
#     connection process holds more than a bounded amount meanwhile (the
#     window pushes back to the producer instead of buffering);
#   - a disconnect under backpressure: a client writes into a target that
#     never reads until everything between them is full, then resets its
#     connection; the target's connection is closed in turn, the forward
#     keeps serving new connections, and sshd logs the channel's end.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
HERE=$(cd "$(dirname "$0")" && pwd)
LH_SSHD=$BUILD/bin/sshd
LH_SSH=$BUILD/bin/ssh
[ -x "$LH_SSHD" ] || lh_fail "sshd not built ($LH_SSHD)"
[ -x "$LH_SSH" ] || lh_fail "ssh not built ($LH_SSH)"
DEBIAN_SSH=/usr/bin/ssh
[ -x "$DEBIAN_SSH" ] || lh_skip "OpenSSH's ssh client not found at $DEBIAN_SSH"
command -v python3 >/dev/null || lh_skip "python3 not found"
T=$LH_TMP
SLOW_MB=${LH_SLOW_MB:-48}
# What a process may hold at its peak while the slow consumer drains
# (VmHWM): its ordinary size (about 10 MiB) plus a few windows, well below
# the 58 MiB or more that buffering the producer's 48 MiB would take. On 3
# December sshd's connection reached 44 MiB here (its window grew before
# the slow consumer showed as the limit); since channels on a short path
# open with 128 KiB and bulk channels share one margin (docs/PERFORMANCE.md,
# 4-5 December) the window no longer grows at all in this case, and both
# ends peaked at 8-15 MiB (clean-clone CI of 7 December; five runs here,
# three of them with two busy loops beside). Under AddressSanitizer the
# shadow memory and quarantine come on top: 43-56 MiB in that CI run and
# here, against the 90 allowed.
rss_bound_mib=28
if nm -D "$LH_SSHD" 2>/dev/null | grep -c __asan_init >/dev/null || ldd "$LH_SSHD" 2>/dev/null | grep -c libasan >/dev/null; then
    rss_bound_mib=90
fi

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id"
cp "$T/id.pub" "$T/authorized_keys"
lh_port ECHO_PORT
lh_port SLOW_PORT
lh_port STALL_PORT
python3 "$HERE/echo_server.py" "$ECHO_PORT" &
LH_PIDS+=($!)

# The slow consumer: reads 64 KiB every 8 ms, then answers with the count
# and the SHA-256 of what it read. The stalled target: accepts and never
# reads, and records when its peer's close reaches it.
python3 - "$SLOW_PORT" "$STALL_PORT" "$T/stall.log" <<'PYEOF' &
import hashlib, socket, sys, threading, time
slow_port, stall_port, stall_log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def listener(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    return s
def slow(conn):
    h, n = hashlib.sha256(), 0
    while True:
        d = conn.recv(65536)
        if not d:
            break
        h.update(d); n += len(d)
        time.sleep(0.008)
    conn.sendall(f"{n} {h.hexdigest()}\n".encode())
    conn.close()
def stall(conn):
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    time.sleep(4)  # the client fills everything and resets meanwhile
    # Then drain: the forward must have ended this connection.
    t0 = time.time()
    try:
        while conn.recv(1 << 20):
            pass
        how = "eof"
    except OSError as e:
        how = "error " + e.__class__.__name__
    with open(stall_log, "a") as f:
        f.write(f"closed {how} after {time.time() - t0:.1f} s\n")
    conn.close()
def serve(s, fn):
    while True:
        c, _ = s.accept()
        threading.Thread(target=fn, args=(c,), daemon=True).start()
a, b = listener(slow_port), listener(stall_port)
threading.Thread(target=serve, args=(b, stall), daemon=True).start()
serve(a, slow)
PYEOF
LH_PIDS+=($!)
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$ECHO_PORT" "$SLOW_PORT" "$STALL_PORT"; do
    lh_wait_until 10 accepts "$p" || lh_fail "a target server did not start on $p"
done
: >"$T/stall.log"

lh_port PORT
lh_start_sshd "$T" "$PORT" "AllowTcpForwarding yes" "PermitRootLogin prohibit-password"
SSHD_PID=${LH_PIDS[-1]}
me=$(id -un)

# forward SSH NAME SPEC...: ssh -N with the forwards, in the background;
# its PID in FWD_PID.
forward() {
    local ssh=$1 name=$2
    shift 2
    "$ssh" -F /dev/null -p "$PORT" -i "$T/id" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -o ExitOnForwardFailure=yes -N "$@" \
        "$me@127.0.0.1" 2>"$T/$name.err" &
    FWD_PID=$!
    LH_PIDS+=("$FWD_PID")
}
# hwm_mib PID: the process's peak resident size (VmHWM) in MiB.
hwm_mib() { awk '/^VmHWM:/ { print int($2 / 1024) }' "/proc/$1/status" 2>/dev/null || echo 0; }
# The connection process sshd forked for the newest connection.
sshd_child() { pgrep -P "$SSHD_PID" | tail -n 1; }

# ---------------------------------------------------------------- slow consumer
slow_consumer() { # SSH NAME
    local ssh=$1 name=$2 lport child got ssh_peak sshd_peak want
    lh_port lport
    forward "$ssh" "$name" -L "127.0.0.1:$lport:127.0.0.1:$SLOW_PORT"
    lh_wait_until 10 accepts "$lport" || { cat "$T/$name.err" >&2; return 1; }
    child=$(sshd_child)
    head -c "$((SLOW_MB << 20))" /dev/urandom >"$T/slow.src"
    want="$((SLOW_MB << 20)) $(sha256sum <"$T/slow.src" | cut -d' ' -f1)"
    got=$(python3 - "$lport" "$T/slow.src" <<'PYEOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(open(sys.argv[2], "rb").read())
s.shutdown(socket.SHUT_WR)
print(s.makefile().readline().strip())
PYEOF
)
    ssh_peak=$(hwm_mib "$FWD_PID")
    sshd_peak=$(hwm_mib "$child")
    echo "  $name: peak RSS ssh ${ssh_peak} MiB, sshd connection ${sshd_peak} MiB (bound ${rss_bound_mib} MiB)"
    kill "$FWD_PID" 2>/dev/null || true
    [ "$got" = "$want" ] || { echo "  the target got '$got', want '$want'" >&2; return 1; }
    [ "$sshd_peak" -gt 0 ] && [ "$sshd_peak" -le "$rss_bound_mib" ] || return 1
    # Only Longhaul's own client is held to the bound.
    [ "$ssh" != "$LH_SSH" ] || [ "$ssh_peak" -le "$rss_bound_mib" ]
}
lh_check "longhaul ssh -L into a slow consumer: $SLOW_MB MiB intact, memory bounded" slow_consumer "$LH_SSH" lh-slow
lh_check "debian ssh -L into a slow consumer: $SLOW_MB MiB intact, sshd's memory bounded" slow_consumer "$DEBIAN_SSH" deb-slow

# ---------------------------------------------------------------- disconnect under backpressure
backpressure_reset() { # SSH NAME
    local ssh=$1 name=$2 lport eport before got
    lh_port lport
    lh_port eport
    forward "$ssh" "$name" -L "127.0.0.1:$lport:127.0.0.1:$STALL_PORT" -L "127.0.0.1:$eport:127.0.0.1:$ECHO_PORT"
    lh_wait_until 10 accepts "$lport" || { cat "$T/$name.err" >&2; return 1; }
    lh_wait_until 10 accepts "$eport" || { cat "$T/$name.err" >&2; return 1; }
    before=$(wc -l <"$T/stall.log")
    # Write until nothing more is taken for a second, then reset (SO_LINGER 0).
    python3 - "$lport" <<'PYEOF' || return 1
import socket, struct, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setblocking(False)
chunk, sent, idle_since = b"x" * 65536, 0, None
deadline = time.time() + 20
while time.time() < deadline:
    try:
        sent += s.send(chunk)
        idle_since = None
    except BlockingIOError:
        idle_since = idle_since or time.time()
        if time.time() - idle_since > 1.0:
            break
        time.sleep(0.01)
print(f"  wrote {sent >> 20} MiB before the path was full", file=sys.stderr)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
PYEOF
    # The stalled target's connection ends once it reads again.
    lh_wait_until 20 bash -c "[ \$(wc -l <'$T/stall.log') -gt $before ]" ||
        { echo "  the target's connection never ended" >&2; return 1; }
    tail -n 1 "$T/stall.log" | sed 's/^/  target: /'
    # The forward still carries a new connection, and ssh still runs.
    got=$(python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"still here"); s.shutdown(socket.SHUT_WR)
print(s.makefile().read())' "$eport")
    [ "$got" = "still here" ] || { echo "  a new connection got '$got'" >&2; return 1; }
    kill -0 "$FWD_PID" 2>/dev/null || { echo "  ssh exited" >&2; cat "$T/$name.err" >&2; return 1; }
    kill "$FWD_PID" 2>/dev/null || true
}
lh_check "longhaul ssh -L, a client reset under backpressure: the target's connection ends, the forward goes on" \
    backpressure_reset "$LH_SSH" lh-reset
lh_check "debian ssh -L, a client reset under backpressure: the target's connection ends, the forward goes on" \
    backpressure_reset "$DEBIAN_SSH" deb-reset
lh_check "sshd logged the end of every forwarded channel" \
    lh_wait_until 5 bash -c "[ \$(grep -c '(direct-tcpip) summary' '$T/sshd.log') -ge 6 ]"
lh_summary
