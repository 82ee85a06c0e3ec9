#!/usr/bin/env bash
# Strict key exchange (kex-strict-*-v00@openssh.com, the Terrapin fix) from
# both ends, against a peer that injects packets into the initial exchange
# (regress/tools/kex_injector: Longhaul's transport core with its unencrypted
# output rewritten as a man in the middle would):
#   - Longhaul's ssh (a real process) against an injecting server: an
#     IGNORE ahead of KEXINIT (KEXINIT then has sequence number 1), after
#     KEXINIT, before NEWKEYS, a DEBUG before NEWKEYS, and the Terrapin
#     pattern (IGNORE injected, the first encrypted packet deleted): ssh must
#     disconnect with OpenSSH's words (compared with OpenSSH's own ssh against
#     the same server) and exit 255;
#   - Longhaul's sshd against an injecting client: the same injections must
#     be refused with OpenSSH sshd's DISCONNECT text (compared with OpenSSH's
#     sshd), logged, and the listener must keep serving;
#   - controls: without injection the exchange completes (so the refusals
#     come from the injections), and without strict kex the Terrapin pattern
#     goes unnoticed by both clients (so the injector's attack is real and
#     only strict kex stops it).
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSH=$BUILD/bin/ssh
LH_SSHD_BIN=$BUILD/bin/sshd
INJECTOR=$BUILD/regress/kex_injector
for f in "$LH_SSH" "$LH_SSHD_BIN" "$INJECTOR"; do
    [ -x "$f" ] || lh_fail "not built: $f"
done
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found (openssh-client)"
[ -x /usr/sbin/sshd ] || lh_skip "OpenSSH's sshd not found (openssh-server)"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found (openssh-client)"
T=$LH_TMP

"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/injector_host_key"

# What OpenSSH says for each injection, as the receiving side sees it.
expected() {
    case $1 in
        ignore-before-kexinit) echo "strict KEX violation: KEXINIT was not the first packet" ;;
        ignore-after-kexinit | terrapin) echo "strict KEX violation: unexpected packet type 2 (seqnr 1)" ;;
        ignore-before-newkeys) echo "strict KEX violation: unexpected packet type 2 (seqnr 2)" ;;
        debug-before-newkeys) echo "strict KEX violation: unexpected packet type 4 (seqnr 2)" ;;
    esac
}
MODES=(ignore-before-kexinit ignore-after-kexinit ignore-before-newkeys debug-before-newkeys terrapin)

# ---------------------------------------------------------------- client side

# start_injector NAME MODE [--no-strict]: a server, its port in $port_NAME
# (NAME with '-' as '_').
start_injector() {
    local name=$1
    shift
    rm -f "$T/$name.port"
    "$INJECTOR" server "$1" "$T/$name.port" "$T/injector_host_key" "${@:2}" >>"$T/$name.out" 2>"$T/$name.err" &
    LH_PIDS+=($!)
    lh_wait_until 10 test -s "$T/$name.port" || lh_fail "kex_injector did not start"
    printf -v "port_${name//-/_}" %s "$(cat "$T/$name.port")"
}

# client_run KIND PORT LOG: ssh against the injector; prints its exit status.
client_run() {
    local bin=ssh
    [ "$1" = longhaul ] && bin=$LH_SSH
    local rc=0
    timeout 30 "$bin" -F /dev/null -p "$2" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
        -o BatchMode=yes -o IdentityAgent=none 127.0.0.1 true </dev/null 2>"$3" || rc=$?
    echo "$rc"
}

# The last result line the injector printed (one per connection).
injector_result() {
    lh_wait_until 10 test -s "$T/$1.out" && tail -n 1 "$T/$1.out"
}

# Everything each client printed, its "Warning: Permanently added" line aside
# (both print it; it depends on when the host key was seen).
# OpenSSH ends every log line on stderr with CR LF, Longhaul (outside raw
# mode) with LF: the words are compared, not the line ends.
client_words() {
    tr -d '\r' <"$1" | grep -v '^Warning: Permanently added' || true
}

check_client_refuses() {
    local mode=$1 want rc_lh rc_os res_lh res_os
    want=$(expected "$mode")
    start_injector "c_$mode" "$mode"
    local port_var="port_c_${mode//-/_}"
    rc_lh=$(client_run longhaul "${!port_var}" "$T/c_$mode.lh.err")
    res_lh=$(injector_result "c_$mode")
    : >"$T/c_$mode.out"
    rc_os=$(client_run openssh "${!port_var}" "$T/c_$mode.os.err")
    res_os=$(injector_result "c_$mode")
    echo "     Longhaul ssh: exit $rc_lh: $(client_words "$T/c_$mode.lh.err" | paste -sd'|') | injector: $res_lh"
    echo "     OpenSSH ssh:  exit $rc_os: $(client_words "$T/c_$mode.os.err" | paste -sd'|') | injector: $res_os"
    # OpenSSH says "Disconnecting HOST port PORT: TEXT" and nothing more.
    [ "$rc_lh" = 255 ] && [ "$rc_os" = 255 ] &&
        [ "$(client_words "$T/c_$mode.os.err")" = "Disconnecting 127.0.0.1 port ${!port_var}: $want" ] &&
        [ "$(client_words "$T/c_$mode.lh.err")" = "$(client_words "$T/c_$mode.os.err")" ] &&
        [ "$res_lh" = "result: disconnected by peer: 2: $want" ] && [ "$res_lh" = "$res_os" ] ||
        { cat "$T/c_$mode.err"; return 1; }
}

check_client_completes() {
    local name=$1 kind=$2
    shift 2
    start_injector "$name" "$@"
    local port_var="port_${name//-/_}" rc res
    rc=$(client_run "$kind" "${!port_var}" "$T/$name.$kind.err")
    res=$(injector_result "$name")
    echo "     $kind ssh: exit $rc, injector: $res"
    # The injector ends the connection itself once the exchange is through.
    [ "$res" = "result: kex completed" ] && [ "$rc" = 255 ] &&
        grep -q 'kex_injector: done' "$T/$name.$kind.err" || { cat "$T/$name.$kind.err" "$T/$name.err"; return 1; }
}

lh_check "client control: no injection, the exchange completes (Longhaul ssh)" \
    check_client_completes c_none longhaul none
for mode in "${MODES[@]}"; do
    lh_check "client: $mode refused, exit 255, OpenSSH's words" check_client_refuses "$mode"
done
lh_check "client control: Terrapin without strict kex goes unnoticed (Longhaul ssh)" \
    check_client_completes c_nostrict_lh longhaul terrapin --no-strict
lh_check "client control: Terrapin without strict kex goes unnoticed (OpenSSH ssh)" \
    check_client_completes c_nostrict_os openssh terrapin --no-strict

# ---------------------------------------------------------------- server side

for name in lh deb; do
    mkdir -p "$T/$name"
    lh_make_host_keys "$T/$name"
    : >"$T/$name/authorized_keys"
done
lh_port port_lh
lh_port port_deb
LH_SSHD=$LH_SSHD_BIN lh_start_sshd "$T/lh" "$port_lh"
LH_SSHD=/usr/sbin/sshd lh_start_sshd "$T/deb" "$port_deb"

injector_client() {
    timeout 30 "$INJECTOR" client "$1" "$2" 2>>"$T/client_injector.err" | tail -n 1
}

check_server_refuses() {
    local mode=$1 want res_lh res_os
    want=$(expected "$mode")
    res_lh=$(injector_client "$mode" "$port_lh")
    res_os=$(injector_client "$mode" "$port_deb")
    echo "     Longhaul sshd: $res_lh"
    echo "     OpenSSH sshd:  $res_os"
    [ "$res_lh" = "result: disconnected by peer: 2: $want" ] && [ "$res_lh" = "$res_os" ] &&
        lh_wait_until 5 grep -qF "$want" "$T/lh/sshd.log" || { tail -n 5 "$T/lh/sshd.log"; return 1; }
}

# The log line, as OpenSSH's sshd writes it (a fail2ban filter written for
# OpenSSH matches it): "Disconnecting ADDR port PORT: TEXT [preauth]".
check_server_log() {
    local mode=$1 want pattern
    want=$(expected "$mode")
    pattern="^Disconnecting 127\.0\.0\.1 port [0-9]+: ${want//[()]/.} \[preauth\]\$"
    echo "     Longhaul sshd: $(grep -F "$want" "$T/lh/sshd.log" | tail -n 1)"
    echo "     OpenSSH sshd:  $(grep -F "$want" "$T/deb/sshd.log" | tail -n 1)"
    tr -d '\r' <"$T/deb/sshd.log" | lh_matches -E "$pattern" && tr -d '\r' <"$T/lh/sshd.log" | lh_matches -E "$pattern"
}

check_server_completes() {
    local res
    res=$(injector_client none "$1")
    echo "     $res"
    [ "$res" = "result: kex completed" ]
}

lh_check "server control: no injection, the exchange completes (Longhaul sshd)" check_server_completes "$port_lh"
for mode in "${MODES[@]}"; do
    lh_check "server: $mode refused with OpenSSH sshd's words, logged" check_server_refuses "$mode"
    lh_check "server: $mode logged in OpenSSH sshd's form" check_server_log "$mode"
done
lh_check "server: the listener still serves after the refusals" check_server_completes "$port_lh"

lh_summary
