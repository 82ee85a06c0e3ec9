#!/usr/bin/env bash
# Longhaul's sshd with Debian's OpenSSH client tools: ssh with every
# cipher, MAC, kex and host key type (exact output and exit codes), 256 MiB
# through cat both ways, pty sessions, scp (SFTP and -O) and sftp -b trees
# with modes and times, password and keyboard-interactive login of a test
# user, authorized_keys options, sshd -i through a ProxyCommand, sshd -t;
# and hostile clients cut off by LoginGraceTime, MaxStartups and
# MaxAuthTries while other users keep working.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSHD=$BUILD/bin/sshd
[ -x "$LH_SSHD" ] || lh_fail "sshd not built ($LH_SSHD)"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found"
[ -x /usr/lib/openssh/sftp-server ] || lh_skip "OpenSSH's sftp-server not found (openssh-server)"
BULK_MB=${LH_BULK_MB:-256}
T=$LH_TMP

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id_ed25519"
"$LH_SSH_KEYGEN" -q -t ecdsa -N '' -f "$T/id_forced"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id_from"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id_restrict"
{
    cat "$T/id_ed25519.pub"
    echo "command=\"echo forced:\$SSH_ORIGINAL_COMMAND\" $(cat "$T/id_forced.pub")"
    echo "from=\"10.9.8.0/24\" $(cat "$T/id_from.pub")"
    echo "restrict $(cat "$T/id_restrict.pub")"
} >"$T/authorized_keys"
chmod 600 "$T"/id_*
use_pam=no
[ "$(id -u)" = 0 ] && [ -f /etc/pam.d/sshd ] && use_pam=yes
lh_port port
kex=$(ssh -Q kex | paste -sd,)
ciphers=$(ssh -Q cipher | paste -sd,)
macs=$(ssh -Q mac | paste -sd,)
hostkeys=$(ssh -Q key-sig | grep -v -e cert -e sk- | paste -sd,)
lh_start_sshd "$T" "$port" "UsePAM $use_pam" "KbdInteractiveAuthentication yes" "PasswordAuthentication yes" \
    "KexAlgorithms $kex" "Ciphers $ciphers" "MACs $macs" "HostKeyAlgorithms $hostkeys" "MaxAuthTries 3"
me=$(id -un)
for k in ed25519 ecdsa256 ecdsa384 ecdsa521 rsa; do
    echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$T/ssh_host_${k}_key.pub")"
done >"$T/known_hosts"
o=(-F /dev/null -p "$port" -o "UserKnownHostsFile=$T/known_hosts" -o StrictHostKeyChecking=yes -o BatchMode=yes
   -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id_ed25519")

# ---------------------------------------------------------------- algorithms
run_cmd() {
    # exact output and status
    local out
    out=$(ssh "${o[@]}" "$@" 127.0.0.1 'printf "out"; printf "err" >&2; exit 5' 2>"$T/err")
    [ $? = 5 ] && [ "$out" = out ] && [ "$(cat "$T/err")" = err ]
}
# Every algorithm both sides implement (Longhaul's ssh -Q lists what this build has).
ours() { "$BUILD/bin/ssh" -Q "$1" | grep -Fx -f <(ssh -Q "$1"); }
for c in $(ours cipher); do
    if [[ $c == *gcm* || $c == chacha* ]]; then
        lh_check "ssh -c $c" run_cmd -c "$c"
    else
        for m in $(ours mac); do
            lh_check "ssh -c $c -m $m" run_cmd -c "$c" -m "$m"
        done
    fi
done
for k in $(ours kex); do
    lh_check "ssh -o KexAlgorithms=$k" run_cmd -o "KexAlgorithms=$k"
done
for h in ssh-ed25519 ecdsa-sha2-nistp256 ecdsa-sha2-nistp384 ecdsa-sha2-nistp521 rsa-sha2-512 rsa-sha2-256; do
    lh_check "host key $h" run_cmd -o "HostKeyAlgorithms=$h"
done
# Plain ssh-rsa (SHA-1) is offered because this config asks for it.
lh_check "host key ssh-rsa (configured)" run_cmd -o "HostKeyAlgorithms=ssh-rsa"

check_exit_signal() {
    ssh "${o[@]}" 127.0.0.1 'kill -TERM $$'
    [ $? = 255 ]
}
lh_check "exit-signal reaches OpenSSH's ssh (exit 255)" check_exit_signal

# ---------------------------------------------------------------- bulk
head -c "${BULK_MB}M" /dev/urandom >"$T/bulk"
want=$(sha256sum <"$T/bulk" | cut -d' ' -f1)
check_bulk_up() {
    ssh "${o[@]}" 127.0.0.1 "cat > $T/bulk.up" <"$T/bulk" && [ "$(sha256sum <"$T/bulk.up" | cut -d' ' -f1)" = "$want" ]
}
lh_check "${BULK_MB} MiB client -> server through cat" check_bulk_up
check_bulk_down() {
    ssh "${o[@]}" 127.0.0.1 "cat $T/bulk" >"$T/bulk.down" &&
        [ "$(sha256sum <"$T/bulk.down" | cut -d' ' -f1)" = "$want" ]
}
lh_check "${BULK_MB} MiB server -> client through cat" check_bulk_down
rm -f "$T/bulk" "$T/bulk.up" "$T/bulk.down"

check_stdin_eof() { [ "$(ssh "${o[@]}" 127.0.0.1 'cat; echo done' </dev/null)" = done ]; }
lh_check "client EOF reaches the program" check_stdin_eof
check_trailing_output() {
    # Output written just before exit must all arrive.
    [ "$(ssh "${o[@]}" 127.0.0.1 'head -c 3000000 /dev/zero; exit 0' | wc -c)" = 3000000 ]
}
lh_check "trailing output before exit is never lost" check_trailing_output

# ---------------------------------------------------------------- pty
check_pty() {
    local out
    out=$(lh_in_pty "stty cols 91 rows 33; ssh ${o[*]} -tt 127.0.0.1 'tty; stty size; echo TERM=\$TERM; exit 6'; echo rc=\$?")
    echo "$out" | grep -q '^/dev/pts/' && echo "$out" | grep -q '^33 91' && echo "$out" | grep -q 'rc=6'
}
lh_check "ssh -tt: pty with size, exit status" check_pty
if command -v tmux >/dev/null; then
    check_pty_interactive() {
        local sock="$T/tmux.sock" ok=0
        tmux -S "$sock" new-session -d -x 80 -y 24 "ssh ${o[*]} -tt 127.0.0.1; echo rc=\$? > $T/tmux_rc; sleep 10"
        pane() { tmux -S "$sock" capture-pane -p -t 0; }
        pane_has() { pane | lh_matches "$1"; }
        # The remote shell is up once its prompt shows.
        lh_wait_until 20 pane_has '[#$] *$' &&
            tmux -S "$sock" send-keys -t 0 'echo typed-$((6*7))' Enter &&
            lh_wait_until 10 pane_has '^typed-42' &&
            tmux -S "$sock" resize-window -t 0 -x 120 -y 30 && {
                # Ask until the new size has reached the remote pty.
                local i
                for i in $(seq 1 20); do
                    tmux -S "$sock" send-keys -t 0 'stty size' Enter
                    lh_wait_until 1 pane_has '^30 120' && break
                done
            } && pane_has '^30 120' &&
            tmux -S "$sock" send-keys -t 0 'exit 9' Enter &&
            lh_wait_until 10 test -s "$T/tmux_rc" && [ "$(cat "$T/tmux_rc")" = rc=9 ] && ok=1
        [ "$ok" = 1 ] || pane | sed 's/^/   | /'
        tmux -S "$sock" kill-server 2>/dev/null
        [ "$ok" = 1 ]
    }
    lh_check "interactive shell via tmux: echo, window-change, exit status" check_pty_interactive
else
    lh_skip_check "interactive shell via tmux" "tmux not installed (contrib/install-deps.sh installs it)"
fi

# ---------------------------------------------------------------- file transfer
mkdir -p "$T/tree/sub/deeper"
head -c 100000 /dev/urandom >"$T/tree/data.bin"
echo hello >"$T/tree/sub/hello.txt"
echo deep >"$T/tree/sub/deeper/x"
chmod 640 "$T/tree/data.bin"
chmod 700 "$T/tree/sub/deeper"
touch -d '2020-01-02 03:04:05' "$T/tree/sub/hello.txt" "$T/tree/data.bin"
same_tree() {
    (cd "$1" && find . -printf '%p %m %s %T@\n' | sort) >"$T/a.list"
    (cd "$2" && find . -printf '%p %m %s %T@\n' | sort) >"$T/b.list"
    # Directory mtimes change as files land; compare files' times and every mode.
    diff <(grep -v '^\. \|/deeper [0-9]* [0-9]* \|/sub [0-9]* [0-9]* ' "$T/a.list" | awk '{print $1,$2,$3,int($4)}') \
         <(grep -v '^\. \|/deeper [0-9]* [0-9]* \|/sub [0-9]* [0-9]* ' "$T/b.list" | awk '{print $1,$2,$3,int($4)}') >/dev/null &&
        diff -r "$1" "$2" >/dev/null
}
check_scp_sftp_mode() { scp -q "${o[@]/-p/-P}" -rp "$T/tree" "127.0.0.1:$T/copy1" && same_tree "$T/tree" "$T/copy1"; }
lh_check "scp -rp (SFTP mode) keeps contents, modes and times" check_scp_sftp_mode
check_scp_legacy() { scp -q -O "${o[@]/-p/-P}" -rp "$T/tree" "127.0.0.1:$T/copy2" && same_tree "$T/tree" "$T/copy2"; }
lh_check "scp -O -rp (legacy) keeps contents, modes and times" check_scp_legacy
check_scp_down() { scp -q "${o[@]/-p/-P}" -rp "127.0.0.1:$T/tree" "$T/copy3" && same_tree "$T/tree" "$T/copy3"; }
lh_check "scp -rp from the server" check_scp_down
check_sftp_batch() {
    printf 'put -rp %s %s\nget -rp %s %s\nls -l %s\n' "$T/tree" "$T/copy4" "$T/copy4" "$T/copy5" "$T/copy4" >"$T/batch"
    sftp -q "${o[@]/-p/-P}" -b "$T/batch" 127.0.0.1 >/dev/null && same_tree "$T/tree" "$T/copy4" && same_tree "$T/tree" "$T/copy5"
}
lh_check "sftp -b put -rp / get -rp" check_sftp_batch

# ---------------------------------------------------------------- authorized_keys options
check_forced_command() {
    [ "$(ssh "${o[@]/$T\/id_ed25519/$T/id_forced}" 127.0.0.1 'ls /')" = "forced:ls /" ]
}
lh_check "authorized_keys command= forces the command (SSH_ORIGINAL_COMMAND set)" check_forced_command
check_from_refused() {
    ssh "${o[@]/$T\/id_ed25519/$T/id_from}" -o PreferredAuthentications=publickey 127.0.0.1 true 2>/dev/null
    [ $? = 255 ] && grep -q "not from a permitted host" "$T/sshd.log"
}
lh_check "authorized_keys from= refuses a key from elsewhere" check_from_refused
check_restrict() {
    # restrict: the pty request is refused (OpenSSH's ssh -tt then gives up);
    # without a pty the key still runs commands.
    local out
    out=$(lh_in_pty "ssh ${o[*]/$T\/id_ed25519/$T/id_restrict} -tt 127.0.0.1 'tty'")
    echo "$out" | grep -q "PTY allocation request failed on channel 0" &&
        [ "$(ssh "${o[@]/$T\/id_ed25519/$T/id_restrict}" 127.0.0.1 'echo no-pty-ok')" = no-pty-ok ]
}
lh_check "authorized_keys restrict: no pty" check_restrict

# ---------------------------------------------------------------- password / kbdint
if [ "$use_pam" = yes ]; then
    pw="Pw-$RANDOM-$RANDOM"
    lh_make_user "$pw"
    user=$LH_USER
    askpass=$(lh_askpass)
    po=(-F /dev/null -p "$port" -o "UserKnownHostsFile=$T/known_hosts" -o StrictHostKeyChecking=yes
        -o PubkeyAuthentication=no -o NumberOfPasswordPrompts=1)
    check_password() {
        [ "$(LH_ASKPASS_ANSWER=$pw SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none \
            ssh "${po[@]}" -o PreferredAuthentications=password "$user@127.0.0.1" 'whoami; echo $HOME' </dev/null)" = \
            "$(printf '%s\n/home/%s' "$user" "$user")" ]
    }
    lh_check "password login of a test user (PAM), runs as the user" check_password
    check_kbdint() {
        [ "$(LH_ASKPASS_ANSWER=$pw SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none \
            ssh "${po[@]}" -o PreferredAuthentications=keyboard-interactive "$user@127.0.0.1" whoami </dev/null)" = "$user" ]
    }
    lh_check "keyboard-interactive login of a test user (PAM)" check_kbdint
    check_failed_password_logged() {
        local rc=0
        LH_ASKPASS_ANSWER=wrong SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none \
            ssh "${po[@]}" -o PreferredAuthentications=password "$user@127.0.0.1" true </dev/null 2>/dev/null || rc=$?
        [ "$rc" = 255 ] && grep -q "Failed password for $user from 127.0.0.1 port [0-9]* ssh2" "$T/sshd.log"
    }
    lh_check "failed password logged as OpenSSH does (fail2ban format)" check_failed_password_logged
    check_brute_force() {
        # Three wrong passwords in one connection: cut off by MaxAuthTries 3.
        local rc=0
        LH_ASKPASS_ANSWER=wrong SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none \
            ssh -o NumberOfPasswordPrompts=10 "${po[@]}" -o PreferredAuthentications=password "$user@127.0.0.1" true \
            </dev/null 2>"$T/err" || rc=$?
        [ "$rc" = 255 ] && grep -q "Too many authentication failures" "$T/err" &&
            grep -q "maximum authentication attempts exceeded for $user" "$T/sshd.log" &&
            run_cmd # another user keeps working
    }
    lh_check "password brute force cut off by MaxAuthTries; others keep working" check_brute_force
else
    for c in "password login (PAM)" "keyboard-interactive login (PAM)" "failed password logged" \
        "password brute force cut off by MaxAuthTries"; do
        lh_skip_check "$c" "needs root and /etc/pam.d/sshd (openssh-server)"
    done
fi

# ---------------------------------------------------------------- hostile clients
# A second server with short limits, so the cut-offs are quick to observe.
mkdir -p "$T/strict"
cp "$T"/ssh_host_* "$T/authorized_keys" "$T/strict/"
lh_port port2
lh_start_sshd "$T/strict" "$port2" "LoginGraceTime 3" "MaxStartups 4:100:4"
strict_pid=${LH_PIDS[-1]}
o2=("${o[@]/#$port/$port2}")
o2=("${o2[@]/$T\/known_hosts/$T/known_hosts2}")
sed "s/\]:$port /]:$port2 /" "$T/known_hosts" >"$T/known_hosts2"
run_cmd2() {
    local out
    out=$(ssh "${o2[@]}" 127.0.0.1 'printf "out"; exit 5')
    [ $? = 5 ] && [ "$out" = out ]
}
check_garbage() {
    # The server must end the connection itself (cat sees EOF, not the
    # timeout), say why in its log, and keep serving others.
    local rc=0
    exec 3<>"/dev/tcp/127.0.0.1/$port2"
    head -c 4096 /dev/urandom >&3 2>/dev/null
    timeout 10 cat <&3 >/dev/null 2>&1 || rc=$?
    exec 3<&- 3>&-
    [ "$rc" = 0 ] || { echo "   the server kept the garbage connection open (cat: status $rc)"; return 1; }
    grep -q "kex_exchange_identification: " "$T/strict/sshd.log" && run_cmd2
}
lh_check "a client sending garbage is disconnected; the server keeps serving" check_garbage
check_stall() {
    local start end
    start=$(date +%s)
    exec 3<>"/dev/tcp/127.0.0.1/$port2"
    timeout 20 cat <&3 >/dev/null
    end=$(date +%s)
    exec 3<&- 3>&-
    # (The monitor writes the line once the child that kept the time has
    # exited, as OpenSSH's does: a moment after the client sees the close.)
    [ $((end - start)) -ge 2 ] && [ $((end - start)) -le 10 ] &&
        lh_wait_until 5 grep -q "Timeout before authentication" "$T/strict/sshd.log"
}
lh_check "a client that stalls is cut off by LoginGraceTime 3" check_stall
connections_logged() { grep -c "Connection from 127.0.0.1 port" "$T/strict/sshd.log" || true; }
no_connection_processes() { ! pgrep -P "$strict_pid" >/dev/null; }
check_max_startups() {
    local fds=() fd i rc=0 before
    # Earlier connections (the garbage and stalling clients) must be gone,
    # or they would still count as startups.
    lh_wait_until 30 no_connection_processes || { echo "   earlier connections still open"; return 1; }
    before=$(connections_logged)
    for i in 1 2 3 4; do
        exec {fd}<>"/dev/tcp/127.0.0.1/$port2"
        fds+=("$fd")
    done
    # The four are counted once the server has taken them (each logs
    # "Connection from"), not merely once the kernel accepted them.
    lh_wait_until 10 eval '[ "$(connections_logged)" -ge $((before + 4)) ]' || {
        echo "   the server did not log the four connections"
        return 1
    }
    # The fifth unauthenticated connection is past MaxStartups 4.
    ssh "${o2[@]}" 127.0.0.1 true 2>/dev/null || rc=$?
    for fd in "${fds[@]}"; do exec {fd}<&-; done
    # Service resumes once the four are gone: poll for it.
    [ "$rc" = 255 ] && grep -q "past MaxStartups" "$T/strict/sshd.log" && lh_wait_until 10 run_cmd2
}
lh_check "unauthenticated connections beyond MaxStartups are dropped; then service resumes" check_max_startups

# ---------------------------------------------------------------- sshd -i, sshd -t
check_inetd() {
    local out
    out=$(ssh -F /dev/null -o "ProxyCommand=$LH_SSHD -i -f $T/sshd_config" -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o IdentitiesOnly=yes -i "$T/id_ed25519" -o LogLevel=ERROR \
        inetd-host 'echo via-inetd')
    [ "$out" = via-inetd ]
}
lh_check "sshd -i through a ProxyCommand" check_inetd
check_chroot_refused() {
    # A jail that cannot be entered ends the session, as OpenSSH's fatal();
    # never served unconfined. (regress/sshd_chroot.sh serves real jails.)
    # Not root, sshd cannot chroot at all and refuses the session instead.
    local rc=0
    ssh -F /dev/null -o "ProxyCommand=$LH_SSHD -i -f $T/sshd_config -o ChrootDirectory=/nonexistent-longhaul-jail -E $T/chroot.log" \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o IdentitiesOnly=yes \
        -i "$T/id_ed25519" -o LogLevel=ERROR inetd-host 'echo unconfined' >"$T/chroot.out" 2>/dev/null || rc=$?
    [ $rc = 255 ] && [ ! -s "$T/chroot.out" ] &&
        grep -Eq 'fatal: stat\("/nonexistent-longhaul-jail"\): No such file or directory|ChrootDirectory needs sshd to run as root' \
            "$T/chroot.log"
}
lh_check "ChrootDirectory that cannot be entered refuses the session instead of ignoring it" check_chroot_refused
check_t_good() { "$LH_SSHD" -t -f "$T/sshd_config"; }
lh_check "sshd -t accepts the test config" check_t_good
check_t_bad() {
    cp "$T/sshd_config" "$T/bad_config"
    echo "NoSuchKeyword yes" >>"$T/bad_config"
    "$LH_SSHD" -t -f "$T/bad_config" 2>"$T/err"
    local rc=$?
    [ $rc = 255 ] && grep -q "line [0-9]*: Bad configuration option: NoSuchKeyword" "$T/err" &&
        grep -q "terminating, 1 bad configuration options" "$T/err"
}
lh_check "sshd -t rejects an unknown keyword with file:line (exit 255)" check_t_bad
check_t_missing_key() {
    "$LH_SSHD" -t -f "$T/sshd_config" -o "HostKey=/nonexistent" -h /nonexistent2 >/dev/null 2>&1
    printf 'Port 22\nHostKey %s/none\n' "$T" >"$T/nokey_config"
    "$LH_SSHD" -t -f "$T/nokey_config" 2>"$T/err"
    [ $? = 1 ] && grep -q "no hostkeys available" "$T/err"
}
lh_check "sshd -t without usable host keys fails" check_t_missing_key

# ---------------------------------------------------------------- IPQoS
# The TOS byte on the server's socket once a session runs (ss --tos):
# interactive with a pty, bulk without, on Longhaul's sshd as on Debian's.
cp "$T/id_ed25519.pub" "$T/id.pub"
lh_start_named_sshd debian /usr/sbin/sshd "IPQoS af21 cs1"
lh_start_named_sshd longhaul "$LH_SSHD" "IPQoS af21 cs1"
server_tos() { # NAME -T|-tt: the server socket's TOS while a session runs
    local p="port_$1"
    lh_tos_while "sport = :${!p}" ssh -F /dev/null -p "${!p}" -o "UserKnownHostsFile=$T/srv-$1/known_hosts.${!p}" \
        -o StrictHostKeyChecking=yes -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none \
        -i "$T/id_ed25519" "$2" 127.0.0.1 'echo ready; sleep 5'
}
check_server_ipqos() {
    local mode a b
    for mode in -T -tt; do
        a=$(server_tos debian "$mode")
        b=$(server_tos longhaul "$mode")
        [ -n "$a" ] && [ "$a" = "$b" ] || { echo "   ssh $mode: Debian's sshd '$a', Longhaul's '$b'"; return 1; }
    done
}
lh_check "IPQoS af21 cs1: the server socket's TOS with and without a pty, as Debian's sshd sets it" check_server_ipqos


# ---------------------------------------------------------------- ModuliFile
# diffie-hellman-group-exchange from the ModuliFile, Debian's ssh against
# both servers: a file of 2048-bit groups serves the request silently; a
# file holding only a 1024-bit group (RFC 2409's second Oakley group, below
# every request) falls back to a fixed group with OpenSSH's warning, once
# per exchange, from the monitor (no " [preauth]"). Longhaul's connection
# process parses the listener's copy of the file only when a client asks
# for a group.
awk '!/^#/ && $5 == 2047' "$(dirname "$0")/../tests/data/moduli_sample" >"$T/moduli_2048"
oakley2=FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF
echo "20200101000000 2 6 100 1023 2 $oakley2" >"$T/moduli_1024"
GEX_PIDS=()
check_moduli_file() {
    local size name p out n sshd
    local -A warned
    for size in 2048 1024; do
        for name in debian longhaul; do
            [ "$name" = debian ] && sshd=/usr/sbin/sshd || sshd=$LH_SSHD
            lh_start_named_sshd "gex$name" "$sshd" "ModuliFile $T/moduli_$size"
            GEX_PIDS+=("${LH_PIDS[-1]}")
            p="port_gex$name"
            out=$(ssh -F /dev/null -p "${!p}" -o "UserKnownHostsFile=$T/srv-gex$name/known_hosts.${!p}" \
                -o StrictHostKeyChecking=yes -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none \
                -o KexAlgorithms=diffie-hellman-group-exchange-sha256 -i "$T/id_ed25519" 127.0.0.1 'echo gex-ok' 2>&1) &&
                [ "$out" = gex-ok ] || { echo "   $name's sshd, $size-bit file: $out"; return 1; }
            lh_stop_pids "${GEX_PIDS[@]}"
            GEX_PIDS=()
            n=$(tr -d '\r' <"$T/srv-gex$name/sshd.log" | grep -c "^WARNING: no suitable primes in $T/moduli_$size\$" || true)
            warned[$name]=$n
        done
        [ "${warned[debian]}" = "${warned[longhaul]}" ] && [ "${warned[debian]}" = "$([ "$size" = 1024 ] && echo 1 || echo 0)" ] ||
            { echo "   $size-bit file: the warning logged ${warned[debian]} time(s) by Debian's sshd, ${warned[longhaul]} by Longhaul's"; return 1; }
    done
}
lh_check "ModuliFile: DH-GEX groups from the file, and OpenSSH's warning when none fits" check_moduli_file
lh_stop_pids "${GEX_PIDS[@]:-}"

lh_summary
