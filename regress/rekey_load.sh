#!/usr/bin/env bash
# Rekeying under load: ssh and sshd move bulk data both ways with a small
# RekeyLimit, so that several key re-exchanges happen in the middle of each
# transfer, started by either side:
#   A  Longhaul ssh (RekeyLimit 16M)  -> Longhaul sshd (RekeyLimit 16M)
#   B  Longhaul ssh (RekeyLimit 16M)  -> OpenSSH sshd: the client rekeys
#   C  Longhaul ssh                   -> OpenSSH sshd (RekeyLimit 16M): the server rekeys
#   D  OpenSSH ssh                    -> Longhaul sshd (RekeyLimit 16M): the server rekeys
#   E  OpenSSH ssh (RekeyLimit 16M)   -> Longhaul sshd: the client rekeys
#   F  Longhaul ssh (RekeyLimit 16M)  -> OpenSSH sshd offering curve25519-sha256
#      and ssh-ed25519 first: the client sends its ephemeral key with each
#      re-exchange's KEXINIT (a right first_kex_packet_follows guess), which
#      OpenSSH must take
#   G  OpenSSH ssh -> Longhaul sshd with RekeyLimit 16M only in a "Match User
#      root" block: the server rekeys, as in D (the user's limit applies
#      once authentication is done, as OpenSSH's do_authenticated() sets it)
#   H  the same with the Match block for another user: no rekey at all
#   I  a Match block's RekeyLimit interval ("default 2"): an idle session of
#      five seconds sees the server re-key
# Each moves LH_REKEY_MB (default 48) MiB up (ssh ... sha256sum < file) and
# down (ssh ... cat file | sha256sum) under a different cipher; the digests
# must match, every ssh must exit 0, and each transfer must cross more than
# one rekey: counted from the client's -v log (Longhaul's "rekey completed",
# OpenSSH's "SSH2_MSG_NEWKEYS received" after the first) and, for OpenSSH's
# sshd, from its LogLevel DEBUG log as well. (Longhaul's sshd logs no line
# per rekey, so its side is counted by its peer.) Where the client starts
# the re-exchanges (A down: Longhaul's sshd sends and the client, receiving,
# re-keys first; F both ways), every one after the first must be a guess the
# server took (the client's "guessed" line at -v). In A up the receiving
# sshd starts them, a sixteenth before the limit.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSH=$BUILD/bin/ssh
LH_SSHD_BIN=$BUILD/bin/sshd
[ -x "$LH_SSH" ] || lh_fail "ssh not built ($LH_SSH)"
[ -x "$LH_SSHD_BIN" ] || lh_fail "sshd not built ($LH_SSHD_BIN)"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found (openssh-client)"
[ -x /usr/sbin/sshd ] || lh_skip "OpenSSH's sshd not found (openssh-server)"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found (openssh-client)"

MB=${LH_REKEY_MB:-48}
LIMIT=16M
T=$LH_TMP

"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id_ed25519"
head -c "$((MB * 1024 * 1024))" /dev/urandom >"$T/data"
want=$(sha256sum <"$T/data" | cut -d' ' -f1)

# Four servers: Longhaul's and OpenSSH's, each with and without RekeyLimit.
start() {
    local name=$1 bin=$2 port=$3
    shift 3
    mkdir -p "$T/$name"
    lh_make_host_keys "$T/$name"
    cp "$T/id_ed25519.pub" "$T/$name/authorized_keys"
    LH_SSHD=$bin lh_start_sshd "$T/$name" "$port" "LogLevel DEBUG" "$@"
    for k in ed25519 ecdsa256 ecdsa384 ecdsa521 rsa; do
        echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$T/$name/ssh_host_${k}_key.pub")"
    done >>"$T/known_hosts"
}
lh_port p_lh_rekey
lh_port p_lh_plain
lh_port p_deb_rekey
lh_port p_deb_plain
lh_port p_deb_guess
lh_port p_lh_match
lh_port p_lh_other
lh_port p_lh_idle
start lh_rekey "$LH_SSHD_BIN" "$p_lh_rekey" "RekeyLimit $LIMIT"
start lh_plain "$LH_SSHD_BIN" "$p_lh_plain"
start deb_rekey /usr/sbin/sshd "$p_deb_rekey" "RekeyLimit $LIMIT"
start deb_plain /usr/sbin/sshd "$p_deb_plain"
start deb_guess /usr/sbin/sshd "$p_deb_guess" "KexAlgorithms curve25519-sha256,ecdh-sha2-nistp256" \
    "HostKeyAlgorithms ssh-ed25519,ecdsa-sha2-nistp256"
LH_SSHD_TAIL=$'Match User root\n  RekeyLimit '$LIMIT start lh_match "$LH_SSHD_BIN" "$p_lh_match"
LH_SSHD_TAIL=$'Match User root Address 127.0.0.1\n  RekeyLimit default 2' start lh_idle "$LH_SSHD_BIN" "$p_lh_idle"
LH_SSHD_TAIL=$'Match User nobody\n  RekeyLimit 1M 1' start lh_other "$LH_SSHD_BIN" "$p_lh_other"

common=(-F /dev/null -o "UserKnownHostsFile=$T/known_hosts" -o StrictHostKeyChecking=yes -o BatchMode=yes
        -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id_ed25519" -v)

# rekeys_in LOG KIND: key exchanges after the first, from a client's -v log.
rekeys_in() {
    local n
    case $2 in
        longhaul) n=$(grep -c 'rekey completed' "$1" || true) ;;
        openssh) n=$(($(grep -c 'SSH2_MSG_NEWKEYS received' "$1" || true) - 1)) ;;
    esac
    echo "$n"
}

# transfer NAME DIRECTION CLIENT-KIND SERVER-NAME PORT SSH-ARGS...
# DIRECTION up: the file through sha256sum on the server; down: cat'ed back.
transfer() {
    local name=$1 dir=$2 kind=$3 server=$4 port=$5
    shift 5
    local ssh_bin=ssh
    [ "$kind" = longhaul ] && ssh_bin=$LH_SSH
    local log="$T/$name.$dir.log" got rc server_before=0 server_after=0
    [[ $server == deb_* ]] && server_before=$(grep -c 'SSH2_MSG_NEWKEYS received' "$T/$server/sshd.log" || true)
    if [ "$dir" = up ]; then
        got=$(timeout 120 "$ssh_bin" "${common[@]}" -p "$port" "$@" root@127.0.0.1 sha256sum <"$T/data" 2>"$log")
        rc=$?
        got=${got%% *}
    else
        got=$(set -o pipefail; timeout 120 "$ssh_bin" "${common[@]}" -p "$port" "$@" root@127.0.0.1 \
            cat "$T/data" 2>"$log" | sha256sum | cut -d' ' -f1)
        rc=$?
    fi
    local rekeys
    rekeys=$(rekeys_in "$log" "$kind")
    if [ -n "${WANT_NO_REKEY:-}" ]; then
        echo "     $name $dir: exit $rc, client saw $rekeys rekeys (want none)"
        [ "$rc" = 0 ] && [ "$got" = "$want" ] && [ "$rekeys" = 0 ] || { tail -n 20 "$log"; return 1; }
        return 0
    fi
    [[ $server == deb_* ]] && server_after=$(grep -c 'SSH2_MSG_NEWKEYS received' "$T/$server/sshd.log" || true)
    local server_rekeys=$((server_after - server_before - 1))
    echo "     $name $dir: exit $rc, client saw $rekeys rekeys$([[ $server == deb_* ]] && echo ", OpenSSH's sshd $server_rekeys")"
    if [ "$rc" != 0 ] || [ "$got" != "$want" ] || [ "$rekeys" -le 1 ]; then
        echo "     digest $got (want $want)"
        tail -n 20 "$log"
        return 1
    fi
    if [ -n "${WANT_GUESS:-}" ]; then
        # The first re-exchange may not guess (it learns what the server
        # lists first); every one after it must have been taken.
        local guessed
        guessed=$(grep -c 'rekey: the server took our first key exchange packet' "$log" || true)
        echo "     $name $dir: $guessed of $rekeys re-exchanges guessed right"
        if [ "$guessed" -lt $((rekeys - 1)) ] || [ "$guessed" -lt 1 ]; then
            tail -n 20 "$log"
            return 1
        fi
    fi
    if [[ $server == deb_* ]] && [ "$server_rekeys" -le 1 ]; then
        echo "     OpenSSH's sshd logged $server_rekeys rekeys"
        tail -n 20 "$T/$server/sshd.log"
        return 1
    fi
}

env_guess() { WANT_GUESS=1 "$@"; }
env_no_rekey() { WANT_NO_REKEY=1 "$@"; }

# idle_rekeys PORT: key exchanges after the first that an idle session of
# five seconds sees (OpenSSH's ssh -v, the server re-keying by time).
idle_rekeys() {
    local log="$T/idle.$1.log" rc=0
    timeout 60 ssh "${common[@]}" -p "$1" root@127.0.0.1 sleep 5 2>"$log" </dev/null || rc=$?
    local n
    n=$(rekeys_in "$log" openssh)
    echo "     idle session on port $1: exit $rc, $n rekeys"
    [ "$rc" = 0 ] || { tail -n 20 "$log"; return 1; }
    IDLE_REKEYS=$n
}
check_idle() {
    local want=$1 port=$2
    idle_rekeys "$port" || return 1
    case $want in
        some) [ "$IDLE_REKEYS" -ge 1 ] ;;
        none) [ "$IDLE_REKEYS" = 0 ] ;;
    esac
}

for dir in up down; do
    guess_a=()
    [ "$dir" = down ] && guess_a=(env_guess)
    lh_check "A $dir: Longhaul ssh <-> Longhaul sshd, RekeyLimit $LIMIT both, chacha20-poly1305" \
        "${guess_a[@]}" transfer A "$dir" longhaul lh_rekey "$p_lh_rekey" -o "RekeyLimit=$LIMIT" -c chacha20-poly1305@openssh.com
    lh_check "B $dir: Longhaul ssh (RekeyLimit $LIMIT) -> OpenSSH sshd, aes128-gcm" \
        transfer B "$dir" longhaul deb_plain "$p_deb_plain" -o "RekeyLimit=$LIMIT" -c aes128-gcm@openssh.com
    lh_check "C $dir: Longhaul ssh -> OpenSSH sshd (RekeyLimit $LIMIT), aes256-ctr + hmac-sha2-256-etm" \
        transfer C "$dir" longhaul deb_rekey "$p_deb_rekey" -c aes256-ctr -m hmac-sha2-256-etm@openssh.com
    lh_check "D $dir: OpenSSH ssh -> Longhaul sshd (RekeyLimit $LIMIT), aes256-gcm" \
        transfer D "$dir" openssh lh_rekey "$p_lh_rekey" -c aes256-gcm@openssh.com
    lh_check "E $dir: OpenSSH ssh (RekeyLimit $LIMIT) -> Longhaul sshd, aes128-ctr + hmac-sha2-512-etm" \
        transfer E "$dir" openssh lh_plain "$p_lh_plain" -o "RekeyLimit=$LIMIT" -c aes128-ctr -m hmac-sha2-512-etm@openssh.com
    lh_check "F $dir: Longhaul ssh (RekeyLimit $LIMIT) -> OpenSSH sshd, curve25519 first: guessed re-exchanges" \
        env_guess transfer F "$dir" longhaul deb_guess "$p_deb_guess" -o "RekeyLimit=$LIMIT" -c chacha20-poly1305@openssh.com
    lh_check "G $dir: OpenSSH ssh -> Longhaul sshd, RekeyLimit $LIMIT in Match User root, aes128-gcm" \
        transfer G "$dir" openssh lh_match "$p_lh_match" -c aes128-gcm@openssh.com
    lh_check "H $dir: OpenSSH ssh -> Longhaul sshd, RekeyLimit 1M only in Match User nobody: no rekey" \
        env_no_rekey transfer H "$dir" openssh lh_other "$p_lh_other" -c aes128-gcm@openssh.com
done
lh_check "I: a Match block's RekeyLimit interval (2 s): an idle session of 5 s is re-keyed" check_idle some "$p_lh_idle"
lh_check "I: the interval of another user's Match block does not apply" check_idle none "$p_lh_other"

lh_summary
