#!/usr/bin/env bash
# shellcheck disable=SC2154 # port_NAME: set by start() through printf -v
# Tunnel device forwarding (ssh -w, "tun@openssh.com") between Longhaul and
# Debian's OpenSSH, both ways and Longhaul with itself: each end's tun
# device is moved into a network namespace of its own (created here), so
# that a ping and a checksummed TCP transfer between the two private
# addresses cross the tunnel and nothing else: no route, address or
# device outside those namespaces is touched, and no packet leaves the
# machine. Also: ethernet mode (tap) Longhaul with itself and to Debian, a key's
# tunnel="N" forcing the server's unit, PermitTunnel no refusing with
# Debian's client messages and exit status, and Longhaul's ssh printing
# what Debian's prints against either server; LocalCommand's %T and
# SSH_TUNNEL.
#
# Needs root (tun devices, namespaces) and /dev/net/tun; skips otherwise.
# Every device, namespace, process (by PID) and file made here is removed
# at exit, whatever the outcome.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LSSHD=$BUILD/bin/sshd
LSSH=$BUILD/bin/ssh
[ -x "$LSSHD" ] || lh_fail "sshd not built ($LSSHD)"
[ -x "$LSSH" ] || lh_fail "ssh not built ($LSSH)"
DSSH=/usr/bin/ssh
DSSHD=/usr/sbin/sshd
[ "$(id -u)" = 0 ] || lh_skip "needs root: tun devices and network namespaces"
[ -c /dev/net/tun ] || lh_skip "/dev/net/tun is missing (no tun driver)"
[ -x "$DSSH" ] || lh_skip "OpenSSH's ssh client not found at $DSSH"
[ -x "$DSSHD" ] || lh_skip "OpenSSH's sshd not found at $DSSHD"
command -v ip >/dev/null || lh_skip "iproute2's ip not found"
command -v ping >/dev/null || lh_skip "ping not found"
command -v python3 >/dev/null || lh_skip "python3 not found"
T=$LH_TMP

# Our namespaces and the units of our devices, chosen so that no two runs
# (ctest -j) and no device already present share them.
NS_A=lhtunA$$
NS_B=lhtunB$$
BASE=$((400 + ($$ % 500) * 16))
for ((u = BASE; u < BASE + 16; u++)); do
    if ip link show "tun$u" >/dev/null 2>&1 || ip link show "tap$u" >/dev/null 2>&1; then
        lh_skip "tun$u or tap$u exists already"
    fi
done
TUN_PIDS=()
tun_cleanup() {
    local u
    lh_stop_pids "${TUN_PIDS[@]:-}"
    ip netns pids "$NS_A" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns pids "$NS_B" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "$NS_A" 2>/dev/null || true
    ip netns del "$NS_B" 2>/dev/null || true
    # A device still in this namespace (a run stopped before moving it):
    # its ssh is gone, so it is going; delete it in case it was made
    # persistent by anything.
    for ((u = BASE; u < BASE + 16; u++)); do
        ip link del "tun$u" 2>/dev/null || true
        ip link del "tap$u" 2>/dev/null || true
    done
}
# Ours first (the clients hold the devices), then lib.sh's; errexit off,
# or the status handed on to lh_cleanup would end the trap there.
trap 'rc=$?; set +e; tun_cleanup; (exit $rc); lh_cleanup' EXIT
ip netns add "$NS_A"
ip netns add "$NS_B"
ip -n "$NS_A" link set lo up
ip -n "$NS_B" link set lo up
# No IPv6 in them: the packets a new interface sends by itself (router
# solicitations, MLD) would only be noise in the byte counts.
for ns in "$NS_A" "$NS_B"; do
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done

lh_make_host_keys "$T"
for k in id id_forced; do "$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/$k"; done
FORCED_UNIT=$((BASE + 15))
{
    cat "$T/id.pub"
    echo "tunnel=\"$FORCED_UNIT\" $(cat "$T/id_forced.pub")"
} >"$T/authorized_keys"

# start NAME SSHD [sshd_config lines...]: sets port_NAME.
start() {
    local name=$1 sshd=$2 p
    shift 2
    mkdir -p "$T/$name"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$T/$name/"
    lh_port p
    LH_SSHD=$sshd lh_start_sshd "$T/$name" "$p" "$@" "PermitRootLogin prohibit-password"
    printf -v "port_$name" %s "$p"
}
start debian "$DSSHD" "PermitTunnel yes"
start longhaul "$LSSHD" "PermitTunnel yes"
start debian_no "$DSSHD" "PermitTunnel no"
start longhaul_no "$LSSHD" "PermitTunnel no"
start longhaul_p2p "$LSSHD" "PermitTunnel point-to-point"

ssh_o() { # PORT KEY
    echo -F /dev/null -p "$1" -i "$2" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none
}

head -c $((4 << 20)) /dev/urandom >"$T/src"
WANT=$(sha256sum <"$T/src" | cut -d' ' -f1)

# A TCP sink in namespace B that answers with the SHA-256 of what it read.
cat >"$T/sink.py" <<'PY'
import hashlib, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
open(sys.argv[3], "w").close()  # listening
c, _ = s.accept()
h = hashlib.sha256()
while True:
    b = c.recv(65536)
    if not b:
        break
    h.update(b)
c.sendall(h.hexdigest().encode())
c.close()
PY
cat >"$T/source.py" <<'PY'
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
with open(sys.argv[3], "rb") as f:
    c.sendall(f.read())
c.shutdown(socket.SHUT_WR)
out = b""
while True:
    b = c.recv(4096)
    if not b:
        break
    out += b
print(out.decode())
PY

dev_exists() { ip link show "$1" >/dev/null 2>&1; }

# tunnel NAME CLIENT PORT MODE UNIT_A UNIT_B NET: CLIENT -w UNIT_A:UNIT_B in
# MODE (point-to-point or ethernet) to the server on PORT; the client's
# device goes to namespace A as 10.NET.0.1, the server's to B as
# 10.NET.0.2; then a ping (over IPv6 too in point-to-point mode) and 4 MiB
# one way with its checksum back.
tunnel() {
    local name=$1 client=$2 port=$3 mode=$4 ua=$5 ub=$6 net=$7 kind=tun pid got
    [ "$mode" = ethernet ] && kind=tap
    # shellcheck disable=SC2046
    "$client" $(ssh_o "$port" "$T/id") -o LogLevel=ERROR -N -o ExitOnForwardFailure=yes -o "Tunnel=$mode" \
        -w "$ua:$ub" root@127.0.0.1 2>"$T/$name.log" &
    pid=$!
    TUN_PIDS+=("$pid")
    lh_wait_until 10 dev_exists "$kind$ua" || { echo "no $kind$ua" >&2; cat "$T/$name.log" >&2; return 1; }
    lh_wait_until 10 dev_exists "$kind$ub" || { echo "no $kind$ub" >&2; cat "$T/$name.log" >&2; return 1; }
    ip link set "$kind$ua" netns "$NS_A" && ip link set "$kind$ub" netns "$NS_B" || return 1
    if [ "$kind" = tun ]; then
        ip -n "$NS_A" addr add "10.$net.0.1" peer "10.$net.0.2" dev "$kind$ua" &&
            ip -n "$NS_B" addr add "10.$net.0.2" peer "10.$net.0.1" dev "$kind$ub" || return 1
    else
        ip -n "$NS_A" addr add "10.$net.0.1/30" dev "$kind$ua" &&
            ip -n "$NS_B" addr add "10.$net.0.2/30" dev "$kind$ub" || return 1
    fi
    ip -n "$NS_B" link set "$kind$ub" up && ip -n "$NS_A" link set "$kind$ua" up || return 1
    ip netns exec "$NS_A" ping -q -c 3 -i 0.2 -w 10 "10.$net.0.2" >"$T/$name.ping" ||
        { cat "$T/$name.ping" "$T/$name.log" >&2; return 1; }
    if [ "$kind" = tun ]; then
        # IPv6 too (the header says 24, OpenBSD's AF_INET6), switched on for
        # these two devices only now that both are up.
        ip netns exec "$NS_A" sysctl -qw "net.ipv6.conf.$kind$ua.disable_ipv6=0" &&
            ip netns exec "$NS_B" sysctl -qw "net.ipv6.conf.$kind$ub.disable_ipv6=0" &&
            ip -n "$NS_A" addr add "fd6c:$net::1/64" dev "$kind$ua" nodad &&
            ip -n "$NS_B" addr add "fd6c:$net::2/64" dev "$kind$ub" nodad || return 1
        ip netns exec "$NS_A" ping -6 -q -c 3 -i 0.2 -w 10 "fd6c:$net::2" >"$T/$name.ping6" ||
            { cat "$T/$name.ping6" "$T/$name.log" >&2; return 1; }
    fi
    rm -f "$T/$name.listening"
    ip netns exec "$NS_B" python3 "$T/sink.py" "10.$net.0.2" 5001 "$T/$name.listening" &
    local sink=$!
    TUN_PIDS+=("$sink")
    lh_wait_until 10 test -e "$T/$name.listening" || return 1
    got=$(timeout 60 ip netns exec "$NS_A" python3 "$T/source.py" "10.$net.0.2" 5001 "$T/src") ||
        { cat "$T/$name.log" >&2; return 1; }
    wait "$sink" || true
    [ "$got" = "$WANT" ] || { echo "checksum $got, want $WANT" >&2; return 1; }
    # The end of the client takes both devices with it.
    kill "$pid" && wait "$pid" 2>/dev/null
    lh_wait_until 10 eval "! ip -n $NS_A link show $kind$ua >/dev/null 2>&1" &&
        lh_wait_until 10 eval "! ip -n $NS_B link show $kind$ub >/dev/null 2>&1" ||
        { echo "a device outlived its ssh" >&2; return 1; }
}

lh_check "Longhaul ssh -w to Debian's sshd: ping (IPv4, IPv6), 4 MiB checksummed" \
    tunnel l2d "$LSSH" "$port_debian" point-to-point "$BASE" $((BASE + 1)) 201
lh_check "Debian's ssh -w to Longhaul's sshd: ping (IPv4, IPv6), 4 MiB checksummed" \
    tunnel d2l "$DSSH" "$port_longhaul" point-to-point $((BASE + 2)) $((BASE + 3)) 202
lh_check "Longhaul ssh -w to Longhaul's sshd: ping (IPv4, IPv6), 4 MiB checksummed" \
    tunnel l2l "$LSSH" "$port_longhaul" point-to-point $((BASE + 4)) $((BASE + 5)) 203
lh_check "Debian's ssh -w to Debian's sshd (the reference): ping (IPv4, IPv6), 4 MiB checksummed" \
    tunnel d2d "$DSSH" "$port_debian" point-to-point $((BASE + 6)) $((BASE + 7)) 204
lh_check "Longhaul with Longhaul, Tunnel ethernet (tap): ping, 4 MiB checksummed" \
    tunnel l2l_eth "$LSSH" "$port_longhaul" ethernet $((BASE + 8)) $((BASE + 9)) 205
lh_check "Longhaul ssh, Tunnel ethernet to Debian's sshd: ping, 4 MiB checksummed" \
    tunnel l2d_eth "$LSSH" "$port_debian" ethernet $((BASE + 10)) $((BASE + 11)) 206

# refused CLIENT PORT KEY [ssh args...]: the client's stderr and exit
# status for a tunnel the server refuses: with ExitOnForwardFailure, and
# without it (then the session's `true` runs and ssh ends).
refused() {
    local client=$1 port=$2 key=$3
    shift 3
    # shellcheck disable=SC2046
    timeout 20 "$client" $(ssh_o "$port" "$key") -o LogLevel=INFO -o ExitOnForwardFailure=yes "$@" \
        root@127.0.0.1 true </dev/null 2>&1 | sed -e 's/\r$//' -e '/^Warning: Permanently added/d'
    echo "status ${PIPESTATUS[0]}"
    # shellcheck disable=SC2046
    timeout 20 "$client" $(ssh_o "$port" "$key") -o LogLevel=INFO "$@" root@127.0.0.1 true </dev/null 2>&1 |
        sed -e 's/\r$//' -e '/^Warning: Permanently added/d'
    echo "status ${PIPESTATUS[0]}"
}
# same_as REFERENCE CLIENT PORT KEY [args...]: the same output as Debian's
# ssh against Debian's sshd.
same_as() {
    local want=$1 got
    shift
    got=$(refused "$@")
    [ "$got" = "$want" ] || { printf 'got:\n%s\nwant:\n%s\n' "$got" "$want" >&2; return 1; }
}
U=$((BASE + 12))
REF_NO=$(refused "$DSSH" "$port_debian_no" "$T/id" -w "$U:$U")
echo "Debian's ssh against Debian's PermitTunnel no prints:"
sed 's/^/    /' <<<"$REF_NO"
reference_shape() {
    local l="channel 0: open failed: connect failed: open failed"
    [ "$(printf '%s\n' "$l" "Tunnel forwarding failed" "status 255" "$l" "Tunnel forwarding failed" "status 0")" = \
        "$REF_NO" ]
}
lh_check "Debian's ssh refused by Debian's PermitTunnel no: connect failed, status 255 / 0" reference_shape
lh_check "Longhaul ssh refused by Debian's PermitTunnel no: Debian's messages and status" \
    same_as "$REF_NO" "$LSSH" "$port_debian_no" "$T/id" -w "$U:$U"
lh_check "Debian's ssh refused by Longhaul's PermitTunnel no: the same" \
    same_as "$REF_NO" "$DSSH" "$port_longhaul_no" "$T/id" -w "$U:$U"
lh_check "Longhaul ssh refused by Longhaul's PermitTunnel no: the same" \
    same_as "$REF_NO" "$LSSH" "$port_longhaul_no" "$T/id" -w "$U:$U"
lh_check "Longhaul's PermitTunnel point-to-point refuses ethernet (Debian's ssh)" \
    same_as "$REF_NO" "$DSSH" "$port_longhaul_p2p" "$T/id" -o Tunnel=ethernet -w "$U:$U"
none_left() { ! dev_exists "tun$U" && ! dev_exists "tap$U"; }
lh_check "no device left by the refusals" none_left

# forced CLIENT PORT: a key with tunnel="FORCED_UNIT" asking for "any" gets
# that unit on the server; asking for another named unit is refused.
forced() {
    local client=$1 port=$2 ua=$((BASE + 13)) pid ok=0
    # shellcheck disable=SC2046
    "$client" $(ssh_o "$port" "$T/id_forced") -o LogLevel=ERROR -N -w "$ua:any" root@127.0.0.1 2>"$T/forced.log" &
    pid=$!
    TUN_PIDS+=("$pid")
    lh_wait_until 10 dev_exists "tun$FORCED_UNIT" || ok=1
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    lh_wait_until 10 eval "! dev_exists tun$FORCED_UNIT" || ok=1
    return $ok
}
REF_FORCED=$(refused "$DSSH" "$port_debian" "$T/id_forced" -w "$((BASE + 13)):$((BASE + 14))")
lh_check "tunnel=\"N\": Debian's sshd gives unit N for any (Longhaul ssh)" forced "$LSSH" "$port_debian"
lh_check "tunnel=\"N\": Longhaul's sshd gives unit N for any (Debian's ssh)" forced "$DSSH" "$port_longhaul"
lh_check "tunnel=\"N\": Debian's sshd refuses another unit as PermitTunnel no is refused (the reference)" \
    test "$REF_FORCED" = "$REF_NO"
lh_check "tunnel=\"N\": Longhaul's sshd refuses another unit (Debian's ssh)" \
    same_as "$REF_FORCED" "$DSSH" "$port_longhaul" "$T/id_forced" -w "$((BASE + 13)):$((BASE + 14))"
lh_check "tunnel=\"N\": Longhaul's sshd refuses another unit (Longhaul ssh)" \
    same_as "$REF_FORCED" "$LSSH" "$port_longhaul" "$T/id_forced" -w "$((BASE + 13)):$((BASE + 14))"

# LocalCommand's %T names the client's device; the server's sessions see
# theirs in SSH_TUNNEL, as Debian's sshd sets it. ssh stays while the
# tunnel is open (as OpenSSH does), so `timeout` ends it.
local_command_t() {
    local u=$((BASE + 13)) got
    # shellcheck disable=SC2046
    timeout 3 "$LSSH" $(ssh_o "$port_longhaul" "$T/id") -o LogLevel=ERROR -o PermitLocalCommand=yes \
        -o "LocalCommand=echo %T >$T/percent_t" -w "$u:any" root@127.0.0.1 true </dev/null || true
    got=$(cat "$T/percent_t" 2>/dev/null)
    [ "$got" = "tun$u" ] || { echo "%T: '$got'" >&2; return 1; }
}
ssh_tunnel_env() { # CLIENT PORT
    local u=$((BASE + 13)) v=$((BASE + 14)) got
    # shellcheck disable=SC2046,SC2016
    got=$(timeout 3 "$1" $(ssh_o "$2" "$T/id") -o LogLevel=ERROR -w "$u:$v" root@127.0.0.1 'echo "[$SSH_TUNNEL]"' \
        </dev/null) || true
    [ "$got" = "[tun$v]" ] || { echo "SSH_TUNNEL: '$got'" >&2; return 1; }
}
lh_check "LocalCommand's %T is the client's tun device" local_command_t
lh_check "Debian's sshd: SSH_TUNNEL names the server's device (the reference, Longhaul ssh)" \
    ssh_tunnel_env "$LSSH" "$port_debian"
lh_check "Longhaul's sshd: SSH_TUNNEL names the server's device (Debian's ssh)" ssh_tunnel_env "$DSSH" "$port_longhaul"

# Longhaul's own refusal of a bad -w, as OpenSSH words it.
bad_w() {
    local got
    got=$("$LSSH" -w 1:x 127.0.0.1 2>&1) && return 1
    [ "$got" = "Bad tun device '1:x'" ]
}
lh_check "ssh -w 1:x: Bad tun device '1:x'" bad_w

lh_summary
