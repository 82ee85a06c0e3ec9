#!/usr/bin/env bash
# Post-quantum key exchange: mlkem768x25519-sha256 (ML-KEM-768 with X25519),
# OpenSSH 9.9+'s method and OpenSSH 10's default, and
# sntrup761x25519-sha512 (Streamlined NTRU Prime with X25519), OpenSSH 9.x's.
#  1. Longhaul's ssh and sshd choose it by default, and carry data through
#     rekeys made with it;
#  2. OpenSSH 10.5 (../shared/peers) in both directions: its ssh against
#     Longhaul's sshd and Longhaul's ssh against its sshd negotiate it by
#     default, checksummed data through rekeys, and OpenSSH's client prints
#     no warning about a key exchange that is not post-quantum;
#  3. Debian's OpenSSH 9.2 (which has no ML-KEM) meets Longhaul on its own
#     default, sntrup761x25519-sha512, both ways, and on the @openssh.com
#     name when a configuration asks for it.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LSSH=$BUILD/bin/ssh
LSSHD=$BUILD/bin/sshd
for f in "$LSSH" "$LSSHD"; do
    [ -x "$f" ] || lh_fail "not built: $f"
done
lh_require_openssh_server
[ "$(id -u)" = 0 ] || lh_skip "needs root (sshd and the peer's privilege separation)"
T=$LH_TMP
# Every server here on its default key exchange list, sntrup761x25519
# included (regress/lib.sh leaves it out elsewhere).
LH_SSHD_ALL_KEX=1

# OpenSSH 10 from ../shared/peers (or LH_PEERS_DIR), run from where it was
# built (its README): helper paths given explicitly.
peers=${LH_PEERS_DIR:-$(dirname "$0")/../../shared/peers}
peers=$(cd "$peers" 2>/dev/null && pwd) || peers=${LH_PEERS_DIR:-../shared/peers}
O10=$(printf '%s\n' "$peers"/openssh-10* 2>/dev/null | sort -V | tail -n1)
have_o10=0
[[ -n $O10 && -x $O10/bin/ssh && -x $O10/sbin/sshd && -x $O10/libexec/sshd-session && -x $O10/libexec/sshd-auth ]] &&
    have_o10=1

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id"
cp "$T/id.pub" "$T/authorized_keys"
head -c $((4 * 1024 * 1024)) /dev/urandom >"$T/data"
want=$(sha256sum <"$T/data" | cut -d' ' -f1)

# Longhaul's sshd, defaults for the key exchange; rekeys every 1 MiB.
lh_port port_l
LH_SSHD=$LSSHD lh_start_sshd "$T" "$port_l" "RekeyLimit 1M"
lh_known_hosts "$T" "$port_l"

# Debian's sshd beside it (9.2: sntrup761x25519, no ML-KEM), for part 3.
D=$T/debian
mkdir -p "$D" && cp "$T"/ssh_host_* "$T/authorized_keys" "$D/"
lh_port port_d
lh_start_sshd "$D" "$port_d"
lh_known_hosts "$D" "$port_d"

# client_run SSH PORT DIR LOG: uploads the data into sha256sum and prints
# the remote digest; -v output in LOG.
client_run() {
    local ssh=$1 port=$2 dir=$3 log=$4
    shift 4
    "$ssh" -F /dev/null -p "$port" -o "UserKnownHostsFile=$dir/known_hosts.$port" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id" -o RekeyLimit=1M "$@" -v \
        root@127.0.0.1 sha256sum <"$T/data" 2>"$log" | cut -d' ' -f1
}

# kex_of LOG: the method a client's -v log says was chosen.
kex_of() { tr -d '\r' <"$1" | sed -n 's/.*kex: algorithm: \([^ ]*\).*/\1/p' | head -n1; }

# rekeys_of LOG: how many key exchanges the client's -v log shows after the
# first (OpenSSH logs "SSH2_MSG_NEWKEYS received" for each, the first
# included; Longhaul "rekey completed" for each later one).
rekeys_of() {
    local newkeys rekeys
    newkeys=$(grep -c 'SSH2_MSG_NEWKEYS received' "$1" || true)
    rekeys=$(grep -c 'rekey completed' "$1" || true)
    echo $((rekeys + (newkeys > 0 ? newkeys - 1 : 0)))
}

check_longhaul_default() {
    local got
    got=$(client_run "$LSSH" "$port_l" "$T" "$T/l.log") || { cat "$T/l.log"; return 1; }
    [ "$got" = "$want" ] || { echo "   digest $got, want $want"; return 1; }
    [ "$(kex_of "$T/l.log")" = mlkem768x25519-sha256 ] || { echo "   kex: $(kex_of "$T/l.log")"; return 1; }
    [ "$(rekeys_of "$T/l.log")" -ge 2 ] || { echo "   key exchanges: $(rekeys_of "$T/l.log")"; return 1; }
}
lh_check "Longhaul both ends: mlkem768x25519-sha256 by default, 4 MiB checksummed through rekeys" check_longhaul_default

check_debian() {
    local got
    got=$(client_run /usr/bin/ssh "$port_l" "$T" "$T/d1.log") || { cat "$T/d1.log"; return 1; }
    [ "$got" = "$want" ] && [ "$(kex_of "$T/d1.log")" = sntrup761x25519-sha512 ] &&
        [ "$(rekeys_of "$T/d1.log")" -ge 2 ] ||
        { echo "   Debian ssh -> Longhaul sshd: $got, kex $(kex_of "$T/d1.log"), rekeys $(rekeys_of "$T/d1.log")"; return 1; }
    got=$(client_run "$LSSH" "$port_d" "$D" "$T/d2.log") || { cat "$T/d2.log"; return 1; }
    [ "$got" = "$want" ] && [ "$(kex_of "$T/d2.log")" = sntrup761x25519-sha512 ] &&
        [ "$(rekeys_of "$T/d2.log")" -ge 2 ] ||
        { echo "   Longhaul ssh -> Debian sshd: $got, kex $(kex_of "$T/d2.log"), rekeys $(rekeys_of "$T/d2.log")"; return 1; }
    got=$(client_run "$LSSH" "$port_d" "$D" "$T/d3.log" -o KexAlgorithms=sntrup761x25519-sha512@openssh.com) ||
        { cat "$T/d3.log"; return 1; }
    [ "$got" = "$want" ] && [ "$(kex_of "$T/d3.log")" = sntrup761x25519-sha512@openssh.com ] ||
        { echo "   @openssh.com name: $got, kex $(kex_of "$T/d3.log")"; return 1; }
}
lh_check "Debian's OpenSSH 9.2 (no ML-KEM): its default sntrup761x25519-sha512 both ways, through rekeys" check_debian

check_openssh10() {
    if [ "$have_o10" != 1 ]; then
        lh_skip_check "OpenSSH 10 interop" "no OpenSSH 10 build at $peers (../shared/peers/README.md)"
        return 0
    fi
    local got O=$T/o10
    # Its ssh -> Longhaul's sshd.
    got=$(client_run "$O10/bin/ssh" "$port_l" "$T" "$T/o1.log") || { cat "$T/o1.log"; return 1; }
    [ "$got" = "$want" ] || { echo "   OpenSSH 10 ssh -> Longhaul sshd: digest $got"; cat "$T/o1.log"; return 1; }
    [ "$(kex_of "$T/o1.log")" = mlkem768x25519-sha256 ] || { echo "   kex: $(kex_of "$T/o1.log")"; return 1; }
    [ "$(rekeys_of "$T/o1.log")" -ge 2 ] || { echo "   key exchanges: $(rekeys_of "$T/o1.log")"; return 1; }
    if grep -i 'post-quantum' "$T/o1.log"; then
        echo "   OpenSSH 10 warned about the key exchange"
        return 1
    fi
    got=$(client_run "$O10/bin/ssh" "$port_l" "$T" "$T/o3.log" -o KexAlgorithms=sntrup761x25519-sha512) ||
        { cat "$T/o3.log"; return 1; }
    [ "$got" = "$want" ] && [ "$(kex_of "$T/o3.log")" = sntrup761x25519-sha512 ] ||
        { echo "   OpenSSH 10 ssh -> Longhaul sshd, sntrup761x25519-sha512: $got, kex $(kex_of "$T/o3.log")"; return 1; }
    # Longhaul's ssh -> its sshd (privilege separation: /var/empty and the
    # sshd user, as Debian's openssh-server makes them).
    getent passwd sshd >/dev/null || { lh_skip_check "OpenSSH 10 sshd" "no 'sshd' user (openssh-server makes it)"; return 0; }
    # (/var/empty is left in place when made here, as regress/wan_lib.sh
    # leaves it: standard, empty, and possibly in use by another test.)
    [ -d /var/empty ] || { mkdir -p /var/empty && chmod 755 /var/empty; }
    mkdir -p "$O" && cp "$T"/ssh_host_* "$T/authorized_keys" "$O/"
    local port_o
    lh_port port_o
    LH_SSHD=$O10/sbin/sshd lh_start_sshd "$O" "$port_o" "SshdSessionPath $O10/libexec/sshd-session" \
        "SshdAuthPath $O10/libexec/sshd-auth" "RekeyLimit 1M"
    lh_known_hosts "$O" "$port_o"
    got=$(client_run "$LSSH" "$port_o" "$O" "$T/o2.log") || { cat "$T/o2.log"; return 1; }
    [ "$got" = "$want" ] || { echo "   Longhaul ssh -> OpenSSH 10 sshd: digest $got"; cat "$T/o2.log"; return 1; }
    [ "$(kex_of "$T/o2.log")" = mlkem768x25519-sha256 ] || { echo "   kex: $(kex_of "$T/o2.log")"; return 1; }
    [ "$(rekeys_of "$T/o2.log")" -ge 2 ] || { echo "   key exchanges: $(rekeys_of "$T/o2.log")"; return 1; }
}
lh_check "OpenSSH 10.5 both ways: mlkem768x25519-sha256 by default, checksummed through rekeys, no warning; sntrup761x25519-sha512 when asked" check_openssh10

check_refused() {
    # A client that offers only the hybrid method and a server without it:
    # no common method, reported and ended as OpenSSH's ssh does.
    local rc=0
    "$LSSH" -F /dev/null -p "$port_d" -o "UserKnownHostsFile=$D/known_hosts.$port_d" -o BatchMode=yes \
        -o KexAlgorithms=mlkem768x25519-sha256 -i "$T/id" root@127.0.0.1 true 2>"$T/none.err" || rc=$?
    [ "$rc" = 255 ] && grep -q 'no matching key exchange method found' "$T/none.err" ||
        { echo "   exit $rc:"; cat "$T/none.err"; return 1; }
}
lh_check "KexAlgorithms naming only mlkem768x25519-sha256 against Debian's sshd: no matching method, exit 255" check_refused

lh_summary
