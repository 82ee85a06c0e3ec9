#!/usr/bin/env bash
# Port forwarding (issue 11) between Longhaul and Debian's OpenSSH, both
# ways and Longhaul with itself: ssh -W, -L (to a port and to a Unix
# socket, from a port and from a Unix socket), -D (SOCKS4 and 5) and -R
# (a port, port 0 with the allocated port printed, a Unix socket on the
# server, and a port alone: reverse SOCKS, limited by PermitRemoteOpen) to
# echo servers, with checksummed data both ways and
# half-closes, two and 64 connections at once, a SOCKS handshake cut byte
# by byte, a refused connect; sshd's
# refusals under AllowTcpForwarding, DisableForwarding, PermitOpen,
# PermitListen, permitopen= and restrict, logged as Debian's sshd logs
# them; ssh's messages and exit codes for refused forwards and a port in
# use (ExitOnForwardFailure), as Debian's ssh prints them; -J through one
# and two hops mixing Longhaul's and Debian's sshd.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
HERE=$(cd "$(dirname "$0")" && pwd)
DEBIAN_SSHD=/usr/sbin/sshd
LH_SSHD=$BUILD/bin/sshd
[ -x "$LH_SSHD" ] || lh_fail "sshd not built ($LH_SSHD)"
LH_SSH=$BUILD/bin/ssh
[ -x "$LH_SSH" ] || lh_fail "ssh not built ($LH_SSH)"
DEBIAN_SSH=/usr/bin/ssh
[ -x "$DEBIAN_SSH" ] || lh_skip "OpenSSH's ssh client not found at $DEBIAN_SSH"
[ -x "$DEBIAN_SSHD" ] || lh_skip "OpenSSH's sshd not found at $DEBIAN_SSHD"
command -v python3 >/dev/null || lh_skip "python3 not found"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found"
BULK_MB=${LH_BULK_MB:-16}
T=$LH_TMP

lh_make_host_keys "$T"
for k in id id_restrict id_permitopen; do "$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/$k"; done
lh_port ECHO_PORT
lh_port OTHER_PORT   # a second echo server, outside the permitted targets
lh_port CLOSED_PORT  # reserved and never listened on
{
    cat "$T/id.pub"
    echo "restrict $(cat "$T/id_restrict.pub")"
    echo "permitopen=\"127.0.0.1:$OTHER_PORT\" $(cat "$T/id_permitopen.pub")"
} >"$T/authorized_keys"
python3 "$HERE/echo_server.py" "$ECHO_PORT" &
LH_PIDS+=($!)
python3 "$HERE/echo_server.py" "$OTHER_PORT" &
LH_PIDS+=($!)
# A Unix-socket echo server for direct-streamlocal.
SOCK=$T/echo.sock
python3 "$HERE/echo_server.py" "$SOCK" &
LH_PIDS+=($!)
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
lh_wait_until 10 accepts "$ECHO_PORT" || lh_fail "the echo server did not start"
lh_wait_until 10 accepts "$OTHER_PORT" || lh_fail "the second echo server did not start"
lh_wait_until 10 test -S "$SOCK" || lh_fail "the Unix-socket echo server did not start"

head -c "$((BULK_MB << 20))" /dev/urandom >"$T/src"
WANT=$(sha256sum <"$T/src" | cut -d' ' -f1)
me=$(id -un)

# start NAME SSHD [sshd_config lines...]: an sshd in $T/NAME on its own port.
start() {
    local name=$1 sshd=$2
    shift 2
    mkdir -p "$T/$name"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$T/$name/"
    lh_port PORT
    LH_SSHD=$sshd lh_start_sshd "$T/$name" "$PORT" "$@" "PermitRootLogin prohibit-password"
    DIR=$T/$name
}
ssh_o() {
    echo -F /dev/null -p "$PORT" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes \
        -o IdentitiesOnly=yes -o IdentityAgent=none
}

# through_w KEY TARGET_PORT: the bulk data through ssh -W to the echo
# server and back (stdin's EOF half-closes the forward; the echo server's
# EOF ends ssh).
through_w() {
    local key=$1 port=$2 got
    # shellcheck disable=SC2046
    got=$("$SSH" $(ssh_o) -i "$T/$key" -W "127.0.0.1:$port" "$me@127.0.0.1" <"$T/src" 2>"$T/w.err" | sha256sum | cut -d' ' -f1)
    [ "$got" = "$WANT" ] || { cat "$T/w.err" >&2; return 1; }
}
# refused KEY TARGET_PORT: ssh -W fails as OpenSSH's does, "stdio
# forwarding failed" and status 255.
refused() {
    local key=$1 port=$2 rc=0
    # shellcheck disable=SC2046
    "$SSH" $(ssh_o) -i "$T/$key" -W "127.0.0.1:$port" "$me@127.0.0.1" </dev/null >/dev/null 2>"$T/w.err" || rc=$?
    [ "$rc" = 255 ] && grep -q "stdio forwarding failed" "$T/w.err" || { echo "  status $rc" >&2; cat "$T/w.err" >&2; return 1; }
}
# r_refused: ssh -R to a port PermitListen does not allow fails, with
# ExitOnForwardFailure, as OpenSSH's does.
r_refused() {
    local rc=0 p
    lh_port p
    # shellcheck disable=SC2046
    "$SSH" $(ssh_o) -i "$T/id" -N -o ExitOnForwardFailure=yes -R "127.0.0.1:$p:127.0.0.1:$ECHO_PORT" "$me@127.0.0.1" \
        </dev/null 2>"$T/r.err" || rc=$?
    [ "$rc" = 255 ] && grep -q "Error: remote port forwarding failed for listen port $p" "$T/r.err" ||
        { echo "  status $rc" >&2; cat "$T/r.err" >&2; return 1; }
}
# l_lines SSH TARGET_PORT: what ssh -L prints (channel numbers as N) when one connection through it to TARGET_PORT is refused.
l_lines() {
    local ssh=$1 port=$2 lp pid
    lh_port lp
    # shellcheck disable=SC2046
    "$ssh" $(ssh_o) -i "$T/id" -N -L "127.0.0.1:$lp:127.0.0.1:$port" "$me@127.0.0.1" 2>"$T/l_lines.err" &
    pid=$!
    lh_wait_until 10 accepts "$lp" || { kill "$pid"; cat "$T/l_lines.err" >&2; return 1; }
    python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1",int(sys.argv[1]))); s.settimeout(10); s.recv(1)' "$lp" || true
    lh_wait_until 5 grep -q "open failed" "$T/l_lines.err" || true
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    # (Each line once: the listening probe above is a connection too.)
    grep -v -e '^Warning: Permanently added' "$T/l_lines.err" | tr -d '\r' |
        sed -E 's/channel [0-9]+/channel N/' | sort -u | paste -sd'|'
}
l_refused() {
    local got
    got=$(l_lines "$SSH" "$1")
    [ "$got" = "$2" ] || { echo "  got '$got'" >&2; return 1; }
}
# logged NAME LINE: sshd's log (in $T/NAME) has LINE, within 5 s.
logged() { lh_wait_until 5 grep -qF -- "$2" "$T/$1/sshd.log" || { tail -n5 "$T/$1/sshd.log" >&2; return 1; }; }

# ---------------------------------------------------------------- forwarding
echo_via() {
    python3 - "$1" "$2" <<'PYEOF'
import hashlib, socket, sys, threading
port, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
if port.isdigit():
    s = socket.create_connection(("127.0.0.1", int(port)))
else:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(port)
def send():
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
t = threading.Thread(target=send); t.start()
h = hashlib.sha256()
while True:
    d = s.recv(1 << 20)
    if not d:
        break
    h.update(d)
t.join()
print(h.hexdigest())
PYEOF
}
# background NAME ssh-args...: a forwarding ssh -N, stopped at exit.
background() {
    local name=$1
    shift
    # shellcheck disable=SC2046
    "$SSH" $(ssh_o) -i "$T/id" -N -o ExitOnForwardFailure=yes "$@" "$me@127.0.0.1" 2>"$T/$name.err" &
    LH_PIDS+=($!)
}
two_at_once() {
    local a b pa
    echo_via "$1" "$T/src" >"$T/a" &
    pa=$!
    echo_via "$1" "$T/src" >"$T/b" || return 1
    wait "$pa" || return 1
    a=$(cat "$T/a") b=$(cat "$T/b")
    [ "$a" = "$WANT" ] && [ "$b" = "$WANT" ]
}
one() { [ "$(echo_via "$1" "$T/src")" = "$WANT" ]; }
# many PORT N: N connections at once through the forward, 256 KiB each way
# apiece (different bytes per stream), every one intact.
many() {
    python3 - "$1" "$2" <<'PYEOF'
import hashlib, os, socket, sys, threading
port, n = int(sys.argv[1]), int(sys.argv[2])
ok = []
def stream(i):
    data = hashlib.sha256(str(i).encode()).digest() * 8192  # 256 KiB
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    def send():
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    t = threading.Thread(target=send); t.start()
    got = bytearray()
    while True:
        d = s.recv(1 << 16)
        if not d:
            break
        got += d
    t.join()
    s.close()
    if bytes(got) == data:
        ok.append(i)
threads = [threading.Thread(target=stream, args=(i,)) for i in range(n)]
for t in threads: t.start()
for t in threads: t.join()
if len(ok) != n:
    print(f"  {len(ok)} of {n} streams intact", file=sys.stderr)
    sys.exit(1)
PYEOF
}
socks() {
    [ "$(python3 "$HERE/socks_client.py" --version 5 --early hello --send ' world' "$1" 127.0.0.1 "$ECHO_PORT")" = "hello world" ] &&
        [ "$(python3 "$HERE/socks_client.py" --version 4 --user u --send-bytes 65536 "$1" 127.0.0.1 "$ECHO_PORT" | wc -c)" = 65536 ]
}
listening() { lh_wait_until 10 accepts "$1" || { cat "$T/$2.err" >&2; return 1; }; }

# pairing LABEL SSH SSHD: every forward kind through this pair.
pairing() {
    local label=$1
    SSH=$2
    start "$label" "$3" "AllowTcpForwarding yes" "AllowStreamLocalForwarding yes"
    lh_check "$label -W: $BULK_MB MiB to the echo server and back, intact" through_w id "$ECHO_PORT"
    local lport uport sport lpath
    lh_port lport
    background "$label-l" -L "127.0.0.1:$lport:127.0.0.1:$ECHO_PORT"
    lh_check "$label -L: listening" listening "$lport" "$label-l"
    lh_check "$label -L: two connections at once, $BULK_MB MiB each way, intact" two_at_once "$lport"
    lh_check "$label -L: 64 streams at once, 256 KiB each way apiece, intact" many "$lport" 64
    lh_port uport
    background "$label-u" -L "127.0.0.1:$uport:$SOCK"
    lh_check "$label -L to a Unix socket: listening" listening "$uport" "$label-u"
    lh_check "$label -L to a Unix socket: $BULK_MB MiB, intact" one "$uport"
    lpath=$T/$label-listen.sock
    background "$label-p" -L "$lpath:127.0.0.1:$ECHO_PORT"
    lh_check "$label -L from a Unix socket: listening" lh_wait_until 10 test -S "$lpath"
    lh_check "$label -L from a Unix socket: $BULK_MB MiB, intact" one "$lpath"
    lh_port sport
    background "$label-d" -D "127.0.0.1:$sport"
    lh_check "$label -D: listening" listening "$sport" "$label-d"
    lh_check "$label -D: SOCKS5 and SOCKS4 through the server" socks "$sport"
    socks_cut() {
        [ "$(python3 "$HERE/socks_client.py" --version 4a --fragment 1 --pause 0.01 --early hello --send ' world' \
            "$1" localhost "$ECHO_PORT")" = "hello world" ]
    }
    lh_check "$label -D: a SOCKS4a handshake cut byte by byte, with early data" socks_cut "$sport"
    # -R: the server listens; its connections come back to the echo server.
    local rport rpath got
    lh_port rport
    background "$label-r" -R "127.0.0.1:$rport:127.0.0.1:$ECHO_PORT"
    lh_check "$label -R: the server listens" listening "$rport" "$label-r"
    lh_check "$label -R: two connections at once, $BULK_MB MiB each way, intact" two_at_once "$rport"
    background "$label-r0" -R "127.0.0.1:0:127.0.0.1:$ECHO_PORT"
    allocated() { grep -oE "Allocated port [0-9]+ for remote forward to 127.0.0.1:$ECHO_PORT" "$T/$label-r0.err" 2>/dev/null; }
    allocated_seen() { allocated >/dev/null; }
    if lh_check "$label -R 0: 'Allocated port N for remote forward to ...'" lh_wait_until 10 allocated_seen; then
        got=$(allocated | head -n1 | cut -d' ' -f3)
        lh_check "$label -R 0: the allocated port carries $BULK_MB MiB, intact" one "$got"
    fi
    # -R port alone: reverse dynamic forwarding, the server's port a SOCKS
    # proxy whose connections the client makes; PermitRemoteOpen limits them.
    local rdport rdport2
    lh_port rdport
    background "$label-rd" -R "127.0.0.1:$rdport"
    lh_check "$label -R port (reverse SOCKS): the server listens" listening "$rdport" "$label-rd"
    lh_check "$label -R port (reverse SOCKS): SOCKS5 and SOCKS4 through the client" socks "$rdport"
    lh_check "$label -R port (reverse SOCKS): a SOCKS4a handshake cut byte by byte, with early data" socks_cut "$rdport"
    lh_port rdport2
    background "$label-rd2" -o "PermitRemoteOpen=127.0.0.1:$CLOSED_PORT" -R "127.0.0.1:$rdport2"
    rd_denied() {
        local rc=0
        python3 "$HERE/socks_client.py" --version 5 --send x "$rdport2" 127.0.0.1 "$ECHO_PORT" >"$T/rd_denied.out" 2>&1 || rc=$?
        [ "$rc" = 1 ] || { cat "$T/rd_denied.out" >&2; return 1; }
    }
    lh_check "$label -R port with PermitRemoteOpen: the server listens" listening "$rdport2" "$label-rd2"
    lh_check "$label -R port: PermitRemoteOpen refuses a target it does not list" rd_denied
    rpath=$T/$label-remote.sock
    background "$label-rs" -R "$rpath:127.0.0.1:$ECHO_PORT"
    lh_check "$label -R from a Unix socket on the server: listening" lh_wait_until 10 test -S "$rpath"
    lh_check "$label -R from a Unix socket on the server: $BULK_MB MiB, intact" one "$rpath"
    lh_check "$label connect refused: -W fails" refused id "$CLOSED_PORT"
    lh_check "$label connect refused: -L says 'connect failed'" l_refused "$CLOSED_PORT" \
        "channel N: open failed: connect failed: Connection refused"
}
pairing debian-ssh-longhaul-sshd "$DEBIAN_SSH" "$LH_SSHD"
lh_check "longhaul sshd: the -W channel's summary in its log" logged debian-ssh-longhaul-sshd \
    "(direct-tcpip) summary: in $((BULK_MB << 20)) bytes, out $((BULK_MB << 20)) bytes"
lh_check "longhaul sshd: a refused connect logged as connect_to ... failed." logged debian-ssh-longhaul-sshd \
    "connect_to 127.0.0.1 port $CLOSED_PORT: failed."
pairing longhaul-ssh-debian-sshd "$LH_SSH" "$DEBIAN_SSHD"
pairing longhaul-ssh-longhaul-sshd "$LH_SSH" "$LH_SSHD"

# ---------------------------------------------------------------- jump hosts
# -J through one and two hops mixing Longhaul's and Debian's sshd, with
# Longhaul's and Debian's ssh: each hop's ssh reads the same -F file (the
# -o options stay with the first), as OpenSSH's ProxyJump does.
port_of() { grep -m1 '^Port ' "$T/$1/sshd_config" | cut -d' ' -f2; }
P_LH=$(port_of debian-ssh-longhaul-sshd)
P_DEB=$(port_of longhaul-ssh-debian-sshd)
P_LH2=$(port_of longhaul-ssh-longhaul-sshd)
printf '%s\n' "Host *" "    IdentityFile $T/id" "    IdentitiesOnly yes" "    IdentityAgent none" \
    "    StrictHostKeyChecking no" "    UserKnownHostsFile /dev/null" "    BatchMode yes" >"$T/jump_config"
# jumped SSH HOPS TARGET_PORT: the bulk data to the target through the
# hops and its checksum back; the remote exit status comes through too,
# and nothing is printed (the hops are ended by SIGHUP, silently).
jumped() {
    local ssh=$1 hops=$2 port=$3 got rc=0
    got=$("$ssh" -F "$T/jump_config" -J "$hops" -p "$port" "$me@127.0.0.1" sha256sum <"$T/src" 2>"$T/j.err") || rc=$?
    [ "$rc" = 0 ] && [ "${got%% *}" = "$WANT" ] || { echo "  status $rc" >&2; cat "$T/j.err" >&2; return 1; }
    rc=0
    "$ssh" -F "$T/jump_config" -J "$hops" -p "$port" "$me@127.0.0.1" 'exit 7' </dev/null 2>"$T/j.err" || rc=$?
    [ "$rc" = 7 ] && ! grep -v '^Warning: Permanently added' "$T/j.err" | lh_matches . ||
        { echo "  status $rc" >&2; cat "$T/j.err" >&2; return 1; }
}
for client in longhaul debian; do
    ssh_bin=$LH_SSH
    [ "$client" = debian ] && ssh_bin=$DEBIAN_SSH
    lh_check "$client ssh -J longhaul-sshd -> debian-sshd: $BULK_MB MiB, intact" \
        jumped "$ssh_bin" "$me@127.0.0.1:$P_LH" "$P_DEB"
    lh_check "$client ssh -J debian-sshd -> longhaul-sshd: $BULK_MB MiB, intact" \
        jumped "$ssh_bin" "$me@127.0.0.1:$P_DEB" "$P_LH"
    lh_check "$client ssh -J debian-sshd,longhaul-sshd -> longhaul-sshd: $BULK_MB MiB, intact" \
        jumped "$ssh_bin" "$me@127.0.0.1:$P_DEB,$me@127.0.0.1:$P_LH2" "$P_LH"
done

# The number of remote forwards is the client's to choose: Longhaul's sshd
# grants 256 per connection and refuses the next (each holds listening
# descriptors).
too_many_forwards() {
    local args=() i rc=0
    for i in $(seq 1 257); do args+=(-R "127.0.0.1:0:127.0.0.1:$i"); done
    # shellcheck disable=SC2046
    # (timeout: with every forward granted, ssh -N would never end.)
    PORT=$P_LH timeout 60 "$DEBIAN_SSH" $(PORT=$P_LH ssh_o) -i "$T/id" -N -o ExitOnForwardFailure=yes "${args[@]}" "$me@127.0.0.1" \
        </dev/null >/dev/null 2>"$T/many.err" || rc=$?
    [ "$rc" = 255 ] && grep -q "Error: remote port forwarding failed for listen port 0" "$T/many.err" &&
        logged debian-ssh-longhaul-sshd "remote forwarding refused: 256 forwards are listening on this connection already"
}
lh_check "longhaul sshd: the 257th remote forward of a connection is refused" too_many_forwards

# Longhaul's scp and sftp pass -J on to ssh, as OpenSSH's do.
scp_jumped() {
    rm -f "$T/copy"
    "$BUILD/bin/scp" -q -F "$T/jump_config" -J "$me@127.0.0.1:$P_LH" -P "$P_DEB" "$T/src" "$me@127.0.0.1:$T/copy" &&
        cmp -s "$T/src" "$T/copy"
}
sftp_jumped() {
    rm -f "$T/copy"
    echo "get $T/src $T/copy" | "$BUILD/bin/sftp" -q -F "$T/jump_config" -J "$me@127.0.0.1:$P_LH" -P "$P_DEB" \
        -b - "$me@127.0.0.1" >/dev/null && cmp -s "$T/src" "$T/copy"
}
lh_check "longhaul scp -J longhaul-sshd -> debian-sshd: $BULK_MB MiB, intact" scp_jumped
lh_check "longhaul sftp -J longhaul-sshd -> debian-sshd: $BULK_MB MiB, intact" sftp_jumped

# ---------------------------------------------------------------- refusals
# Each refusal: ssh's line, and sshd's log line, which Debian's sshd writes
# in the same words for the same request (checked against it below).
refusal_lines() {
    local sshd=$1 name=$2
    start "$name-pf" "$sshd" "AllowTcpForwarding yes" "PermitOpen 127.0.0.1:$OTHER_PORT" "PermitListen 127.0.0.1:1"
    lh_check "$name PermitOpen: refused" refused id "$ECHO_PORT"
    lh_check "$name PermitOpen: logged" logged "$name-pf" \
        "Received request from 127.0.0.1 port"
    lh_check "$name PermitOpen: the permitted target works" through_w id "$OTHER_PORT"
    lh_check "$name permitopen=: refused elsewhere" refused id_permitopen "$ECHO_PORT"
    lh_check "$name permitopen=: its target works" through_w id_permitopen "$OTHER_PORT"
    lh_check "$name PermitListen: -R refused" r_refused
    lh_check "$name restrict: refused" refused id_restrict "$OTHER_PORT"
    lh_check "$name restrict: logged" logged "$name-pf" "refused local port forward: originator"
    start "$name-no" "$sshd" "AllowTcpForwarding no"
    lh_check "$name AllowTcpForwarding no: refused" refused id "$ECHO_PORT"
    lh_check "$name AllowTcpForwarding no: logged" logged "$name-no" "refused local port forward: originator"
    start "$name-remote" "$sshd" "AllowTcpForwarding remote"
    lh_check "$name AllowTcpForwarding remote: refused" refused id "$ECHO_PORT"
    start "$name-df" "$sshd" "DisableForwarding yes"
    lh_check "$name DisableForwarding: refused" refused id "$ECHO_PORT"
}
SSH=$DEBIAN_SSH
refusal_lines "$LH_SSHD" longhaul
refusal_lines "$DEBIAN_SSHD" debian
# The same words in both logs (the ports and originators differ).
same_line() {
    local pattern=$1 a b
    a=$(tr -d '\r' <"$T/longhaul-$2/sshd.log" | grep -o "$pattern" | head -n1 | sed -E 's/port [0-9]+/port N/g')
    b=$(tr -d '\r' <"$T/debian-$2/sshd.log" | grep -o "$pattern" | head -n1 | sed -E 's/port [0-9]+/port N/g')
    [ -n "$a" ] && [ "$a" = "$b" ] || { echo "  longhaul: '$a'" >&2; echo "  debian:   '$b'" >&2; return 1; }
}
lh_check "PermitOpen refusal logged as Debian's sshd logs it" same_line "Received request from .*denied\." pf
lh_check "restrict refusal logged as Debian's sshd logs it" same_line "refused local port forward: .*" pf

# ---------------------------------------------------------------- ssh's messages
# Longhaul's ssh and Debian's against Debian's sshd (debian-pf: PermitOpen
# 127.0.0.1:OTHER_PORT): the same lines and exit codes.
PORT=$(grep -m1 '^Port ' "$T/debian-pf/sshd_config" | cut -d' ' -f2)
# outcome SSH ARGS...: "status: the lines" of one run.
outcome() {
    local ssh=$1 rc=0
    shift
    # shellcheck disable=SC2046
    "$ssh" $(ssh_o) -i "$T/id" "$@" "$me@127.0.0.1" </dev/null >/dev/null 2>"$T/o.err" || rc=$?
    echo "$rc: $(grep -v -e '^Warning: Permanently added' "$T/o.err" | tr -d '\r' | sed -E 's/channel [0-9]+/channel N/' | paste -sd'|')"
}
same_outcome() {
    local a b
    a=$(outcome "$LH_SSH" "$@")
    b=$(outcome "$DEBIAN_SSH" "$@")
    [ "$a" = "$b" ] || { echo "  longhaul: '$a'" >&2; echo "  debian:   '$b'" >&2; return 1; }
}
lh_check "ssh -W refused: the lines and exit code of Debian's ssh" same_outcome -W "127.0.0.1:$ECHO_PORT"
same_l_lines() {
    local a b
    a=$(l_lines "$LH_SSH" "$1")
    b=$(l_lines "$DEBIAN_SSH" "$1")
    [ -n "$a" ] && [ "$a" = "$b" ] || { echo "  longhaul: '$a'" >&2; echo "  debian:   '$b'" >&2; return 1; }
}
lh_check "ssh -L, a connection refused by PermitOpen: Debian's ssh's line" same_l_lines "$ECHO_PORT"
lh_port RPORT
lh_check "ssh -R refused by PermitListen, ExitOnForwardFailure: as Debian's ssh" same_outcome -N \
    -o ExitOnForwardFailure=yes -R "127.0.0.1:$RPORT:127.0.0.1:$ECHO_PORT"
lh_check "the PermitListen refusal logged as Debian's sshd logs it" same_line "Received request from .* to remote forward to .*denied\." pf
lh_port BUSY
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(120)' "$BUSY" &
LH_PIDS+=($!)
lh_wait_until 10 accepts "$BUSY" || lh_fail "could not occupy a port"
lh_check "ssh -L to a port in use, ExitOnForwardFailure: as Debian's ssh" same_outcome -N \
    -o ExitOnForwardFailure=yes -L "127.0.0.1:$BUSY:127.0.0.1:$ECHO_PORT"

lh_summary
