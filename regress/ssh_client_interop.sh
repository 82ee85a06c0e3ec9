#!/usr/bin/env bash
# Longhaul's ssh against Debian's OpenSSH sshd on 127.0.0.1: remote
# commands with exact output and exit codes, bulk data with every cipher,
# early close in both directions, pty sessions (echo, window-change, exit
# status) driven through tmux, password and keyboard-interactive login of a
# test user, an encrypted key, an agent-held key, known_hosts scenarios, and
# bad input ending in one clear line and exit 255.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
SSH=$BUILD/bin/ssh
[ -x "$SSH" ] || lh_fail "ssh not built ($SSH)"
lh_require_openssh_server
BULK_MB=${LH_BULK_MB:-256}

lh_make_host_keys "$LH_TMP"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$LH_TMP/id_ed25519"
"$LH_SSH_KEYGEN" -q -t ecdsa -N 'secret phrase' -f "$LH_TMP/id_encrypted"
"$LH_SSH_KEYGEN" -q -t rsa -b 2048 -N '' -f "$LH_TMP/id_agent"
cat "$LH_TMP/id_ed25519.pub" "$LH_TMP/id_encrypted.pub" "$LH_TMP/id_agent.pub" >"$LH_TMP/authorized_keys"
chmod 600 "$LH_TMP"/id_*
lh_port port
use_pam=no
[ "$(id -u)" = 0 ] && [ -f /etc/pam.d/sshd ] && use_pam=yes
lh_start_sshd "$LH_TMP" "$port" "UsePAM $use_pam" "PasswordAuthentication yes" "KbdInteractiveAuthentication yes"
me=$(id -un)

# known_hosts holding the server's real keys under the non-default port form.
for k in ed25519 ecdsa256 ecdsa384 ecdsa521 rsa; do
    echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$LH_TMP/ssh_host_${k}_key.pub")"
done >"$LH_TMP/known_hosts"
# (-p comes first and wins, as in OpenSSH: tests aimed elsewhere use noport.)
noport=(-F /dev/null -o "UserKnownHostsFile=$LH_TMP/known_hosts" -o StrictHostKeyChecking=yes
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none)
base=(-p "$port" "${noport[@]}")
key=(-i "$LH_TMP/id_ed25519")
T=$LH_TMP

# ---------------------------------------------------------------- commands
check_exact_output() {
    local cmd='printf "one\ntwo"; printf "to stderr" >&2; exit 42'
    "$SSH" "${base[@]}" "${key[@]}" "$me@127.0.0.1" "$cmd" >"$T/out" 2>"$T/err"
    local rc=$?
    ssh "${base[@]}" "${key[@]}" "$me@127.0.0.1" "$cmd" >"$T/ref_out" 2>"$T/ref_err"
    [ "$rc" = 42 ] && cmp -s "$T/out" "$T/ref_out" && cmp -s "$T/err" "$T/ref_err" &&
        [ "$(cat "$T/out")" = "$(printf 'one\ntwo')" ] && [ "$(cat "$T/err")" = "to stderr" ]
}
lh_check "remote command: exact stdout, stderr and exit status (same as OpenSSH's ssh)" check_exact_output

check_exit_codes() {
    local want rc
    for want in 0 1 7 255; do
        rc=0
        "$SSH" "${base[@]}" "${key[@]}" 127.0.0.1 "exit $want" || rc=$?
        [ "$rc" = "$want" ] || { echo "   exit $want: ssh exited $rc"; return 1; }
    done
    # Killed by a signal: OpenSSH's ssh exits 255.
    rc=0
    "$SSH" "${base[@]}" "${key[@]}" 127.0.0.1 'kill -9 $$' || rc=$?
    [ "$rc" = 255 ]
}
lh_check "exit statuses 0/1/7/255 and exit-signal -> 255" check_exit_codes

check_binary_stdin() {
    head -c 1000000 /dev/urandom >"$T/bin"
    "$SSH" "${base[@]}" "${key[@]}" 127.0.0.1 'cat' <"$T/bin" >"$T/bin.back" && cmp -s "$T/bin" "$T/bin.back"
}
lh_check "binary-safe stdin to stdout" check_binary_stdin

# ---------------------------------------------------------------- bulk data
# The default cipher carries the whole volume (past the largest window, so
# the window ramps and tops out); every other cipher an eighth of it, still
# thousands of full-size packets each way (CI's time budget, docs/TESTING.md).
head -c "${BULK_MB}M" /dev/urandom >"$T/bulk"
head -c "$((BULK_MB * 1024 / 8))K" "$T/bulk" >"$T/bulk.part"
check_bulk() { # CIPHER FILE
    "$SSH" "${base[@]}" "${key[@]}" -c "$1" 127.0.0.1 'cat' <"$2" >"$T/bulk.back" &&
        [ "$(sha256sum <"$T/bulk.back" | cut -d' ' -f1)" = "$(sha256sum <"$2" | cut -d' ' -f1)" ]
}
for cipher in $("$SSH" -Q cipher); do
    if [ "$cipher" = chacha20-poly1305@openssh.com ]; then
        lh_check "${BULK_MB} MiB through 'ssh host cat' and back, $cipher" check_bulk "$cipher" "$T/bulk"
    else
        lh_check "$((BULK_MB * 1024 / 8)) KiB through 'ssh host cat' and back, $cipher" check_bulk "$cipher" "$T/bulk.part"
    fi
done
rm -f "$T/bulk" "$T/bulk.part" "$T/bulk.back"

# ---------------------------------------------------------------- early close
check_stdin_closed_early() {
    [ "$("$SSH" "${base[@]}" "${key[@]}" 127.0.0.1 'cat; echo done' </dev/null)" = done ]
}
lh_check "stdin closed at once: EOF reaches the remote command" check_stdin_closed_early

check_remote_stops_reading() {
    local out
    out=$(head -c 50M /dev/zero | timeout 30 "$SSH" "${base[@]}" "${key[@]}" 127.0.0.1 'head -c 10 >/dev/null; echo early')
    [ "$out" = early ]
}
lh_check "remote closes its stdin early while we still send: no hang" check_remote_stops_reading

check_local_reader_stops() {
    local line
    line=$(timeout 30 "$SSH" "${base[@]}" "${key[@]}" 127.0.0.1 'yes' | head -1)
    [ "$line" = y ]
}
lh_check "local reader stops early (| head -1): no hang" check_local_reader_stops

check_remote_closes_stdout() {
    local out
    out=$(timeout 30 "$SSH" "${base[@]}" "${key[@]}" 127.0.0.1 'echo first; exec 1>&-; sleep 0.3; echo late >&2' 2>&1)
    [ "$out" = "$(printf 'first\nlate')" ]
}
lh_check "remote closes stdout before exiting: stderr still arrives" check_remote_closes_stdout

# ---------------------------------------------------------------- pty (tmux)
if command -v tmux >/dev/null; then
    sock="$T/tmux.sock"
    # The pane's shell records its terminal settings before and after ssh,
    # so the test can see that ssh put the tty back as it found it.
    tmux -S "$sock" new-session -d -x 80 -y 24 \
        "stty -g > $T/stty_before; $SSH ${base[*]} ${key[*]} -t 127.0.0.1 'stty size; trap \"stty size\" WINCH; while ! read -t 0.2 line; do :; done; echo got:\$line; exit 7'; echo rc=\$? > $T/pty_rc; stty -g > $T/stty_after; stty -a > $T/stty_after_a; sleep 30"
    capture() { tmux -S "$sock" capture-pane -p -t 0; }
    wait_for() {
        local i
        for i in $(seq 1 100); do capture | lh_matches "$1" && return 0; sleep 0.1; done
        return 1
    }
    check_pty_size() { wait_for '^24 80'; }
    lh_check "pty: the remote tty has the local size" check_pty_size
    check_window_change() {
        tmux -S "$sock" resize-window -t 0 -x 100 -y 40 2>/dev/null || tmux -S "$sock" resize-pane -t 0 -x 100 -y 40
        wait_for '^40 100'
    }
    lh_check "pty: window-change follows a resize" check_window_change
    check_echo() {
        tmux -S "$sock" send-keys -t 0 'hello-pty' Enter
        # A clean-clone CI run (sanitizer builds beside it) once saw no
        # "got:" within 10 s; on failure the pane shows how far it got.
        if ! { wait_for 'got:hello-pty' || wait_for 'got:hello-pty'; } || ! capture | lh_matches '^hello-pty'; then
            echo "  pane:" >&2
            capture | sed 's/^/    | /' >&2
            return 1
        fi
    }
    lh_check "pty: typed input is echoed by the remote tty and read" check_echo
    check_pty_exit() {
        lh_wait_until 10 test -s "$T/pty_rc" && [ "$(cat "$T/pty_rc")" = "rc=7" ]
    }
    lh_check "pty: exit status of the remote shell" check_pty_exit
    check_cooked_restored() {
        # After ssh returned, the local tty is back exactly as it was (cooked:
        # icanon and echo on), not left in raw mode.
        lh_wait_until 10 test -s "$T/stty_after_a" &&
            [ "$(cat "$T/stty_after")" = "$(cat "$T/stty_before")" ] &&
            grep -qw icanon "$T/stty_after_a" && grep -qw echo "$T/stty_after_a" || {
            echo "   before: $(cat "$T/stty_before" 2>/dev/null)"
            echo "   after:  $(cat "$T/stty_after" 2>/dev/null)"
            return 1
        }
    }
    lh_check "pty: the local tty is back in cooked mode after ssh exits" check_cooked_restored
    tmux -S "$sock" kill-server 2>/dev/null || true
else
    lh_skip_check "pty checks" "tmux not installed (contrib/install-deps.sh installs it)"
fi

# ---------------------------------------------------------------- password / kbd-interactive
if [ "$(id -u)" = 0 ] && [ "$use_pam" = yes ]; then
    pw="Pw-$RANDOM-$RANDOM"
    lh_make_user "$pw"
    user=$LH_USER
    askpass=$(lh_askpass)
    pwopts=(-F /dev/null -p "$port" -o "UserKnownHostsFile=$LH_TMP/known_hosts" -o StrictHostKeyChecking=yes
            -o PubkeyAuthentication=no -o IdentityAgent=none -o NumberOfPasswordPrompts=1)
    check_password() {
        [ "$(LH_ASKPASS_ANSWER=$pw SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force \
            "$SSH" "${pwopts[@]}" -o PreferredAuthentications=password "$user@127.0.0.1" whoami </dev/null)" = "$user" ]
    }
    lh_check "password login of a test user (PAM)" check_password
    check_kbdint() {
        [ "$(LH_ASKPASS_ANSWER=$pw SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force \
            "$SSH" "${pwopts[@]}" -o PreferredAuthentications=keyboard-interactive "$user@127.0.0.1" whoami </dev/null)" = "$user" ]
    }
    lh_check "keyboard-interactive login of a test user (PAM)" check_kbdint
    check_wrong_password() {
        local rc=0
        LH_ASKPASS_ANSWER=wrong SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force \
            "$SSH" "${pwopts[@]}" -o PreferredAuthentications=password "$user@127.0.0.1" true </dev/null 2>"$T/err" ||
            rc=$?
        [ "$rc" = 255 ] && grep -q "Permission denied (publickey,password,keyboard-interactive)." "$T/err"
    }
    lh_check "wrong password: Permission denied, exit 255" check_wrong_password
else
    for c in "password login (PAM)" "keyboard-interactive login (PAM)" "wrong password"; do
        lh_skip_check "$c" "needs root and /etc/pam.d/sshd (openssh-server)"
    done
fi

# ---------------------------------------------------------------- keys
askpass=$(lh_askpass)
check_encrypted_key() {
    [ "$(LH_ASKPASS_ANSWER='secret phrase' SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force \
        "$SSH" "${base[@]/BatchMode=yes/BatchMode=no}" -i "$T/id_encrypted" 127.0.0.1 'echo enc-ok' </dev/null)" = enc-ok ]
}
lh_check "passphrase-encrypted key (passphrase through SSH_ASKPASS)" check_encrypted_key

check_wrong_passphrase() {
    local rc=0
    LH_ASKPASS_ANSWER='not it' SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force \
        "$SSH" "${base[@]/BatchMode=yes/BatchMode=no}" -o PreferredAuthentications=publickey -o NumberOfPasswordPrompts=1 \
        -i "$T/id_encrypted" 127.0.0.1 true </dev/null 2>"$T/err" || rc=$?
    [ "$rc" = 255 ] && grep -q "Permission denied" "$T/err"
}
lh_check "wrong passphrase: Permission denied, exit 255" check_wrong_passphrase

check_unprotected_key() {
    cp "$T/id_ed25519" "$T/id_open"
    cp "$T/id_ed25519.pub" "$T/id_open.pub"
    chmod 644 "$T/id_open"
    local rc=0
    "$SSH" "${base[@]}" -i "$T/id_open" -o PreferredAuthentications=publickey 127.0.0.1 true 2>"$T/err" || rc=$?
    [ "$rc" = 255 ] && grep -q "UNPROTECTED PRIVATE KEY FILE" "$T/err" && grep -q 'Load key ".*id_open": bad permissions' "$T/err"
}
lh_check "a private key others can read is refused, as ssh does" check_unprotected_key

if command -v ssh-agent >/dev/null && command -v ssh-add >/dev/null; then
    ssh-agent -a "$T/agent.sock" -D >/dev/null 2>&1 &
    LH_PIDS+=($!)
    lh_wait_until 5 test -S "$T/agent.sock" || lh_fail "ssh-agent did not start"
    SSH_AUTH_SOCK="$T/agent.sock" ssh-add -q "$T/id_agent" 2>/dev/null || lh_fail "ssh-add failed"
    check_agent() {
        # Authenticated with the agent's key ("Server accepts key: ... agent").
        SSH_AUTH_SOCK="$T/agent.sock" "$SSH" -F /dev/null -p "$port" -o "UserKnownHostsFile=$LH_TMP/known_hosts" \
            -o BatchMode=yes -v 127.0.0.1 'echo agent-ok' >"$T/out" 2>"$T/err" &&
            [ "$(cat "$T/out")" = agent-ok ] && grep -q "Authenticated to 127.0.0.1" "$T/err" &&
            tr -d '\r' <"$T/err" | lh_matches "Server accepts key: .* agent$"
    }
    lh_check "key held by ssh-agent (SSH_AUTH_SOCK)" check_agent
    check_agent_pub() {
        # -i names the agent's key by its public half alone (0644, as
        # ssh-keygen writes it), as OpenSSH allows; IdentitiesOnly keeps
        # to it.
        cp "$T/id_agent.pub" "$T/only.pub" && chmod 644 "$T/only.pub" &&
            SSH_AUTH_SOCK="$T/agent.sock" "$SSH" -F /dev/null -p "$port" -o "UserKnownHostsFile=$LH_TMP/known_hosts" \
                -o BatchMode=yes -o IdentitiesOnly=yes -i "$T/only.pub" -v 127.0.0.1 'echo agent-ok' >"$T/out" 2>"$T/err" &&
            [ "$(cat "$T/out")" = agent-ok ] &&
            tr -d '\r' <"$T/err" | lh_matches "Server accepts key: $T/only.pub .* explicit agent$"
    }
    lh_check "-i key.pub with IdentitiesOnly: the agent signs with that key" check_agent_pub
else
    lh_skip_check "key held by ssh-agent" "ssh-agent or ssh-add not installed (openssh-client)"
fi

# ---------------------------------------------------------------- known_hosts
kh_opts=(-F /dev/null -p "$port" -o BatchMode=yes -o IdentityAgent=none "${key[@]}")
check_unknown_refused() {
    local rc=0
    : >"$T/kh_empty"
    "$SSH" "${kh_opts[@]}" -o "UserKnownHostsFile=$T/kh_empty" -o StrictHostKeyChecking=yes 127.0.0.1 true 2>"$T/err" ||
        rc=$?
    [ "$rc" = 255 ] && grep -q "Host key verification failed." "$T/err" && [ ! -s "$T/kh_empty" ]
}
lh_check "known_hosts: unknown host refused with StrictHostKeyChecking=yes" check_unknown_refused

check_accept_new() {
    rm -f "$T/kh_new"
    "$SSH" "${kh_opts[@]}" -o "UserKnownHostsFile=$T/kh_new" -o StrictHostKeyChecking=accept-new 127.0.0.1 true 2>"$T/err" &&
        grep -q "Permanently added '\[127.0.0.1\]:$port'" "$T/err" && grep -q "^\[127.0.0.1\]:$port ssh-ed25519 " "$T/kh_new" &&
        "$SSH" "${kh_opts[@]}" -o "UserKnownHostsFile=$T/kh_new" -o StrictHostKeyChecking=yes 127.0.0.1 true
}
lh_check "known_hosts: accept-new adds [host]:port, then the key is known" check_accept_new

"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/other_key"
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$T/other_key.pub")" >"$T/kh_changed"
check_changed_key() {
    local rc=0
    "$SSH" "${kh_opts[@]}" -o "UserKnownHostsFile=$T/kh_changed" -o StrictHostKeyChecking=yes 127.0.0.1 'echo should-not-run' \
        >"$T/out2" 2>"$T/err2" || rc=$?
    [ "$rc" = 255 ] && grep -q "REMOTE HOST IDENTIFICATION HAS CHANGED" "$T/err2" && [ ! -s "$T/out2" ] &&
        grep -q "Offending ED25519 key in $T/kh_changed:1" "$T/err2"
}
lh_check "known_hosts: a changed key is refused with OpenSSH's warning" check_changed_key
check_changed_key_no() {
    # StrictHostKeyChecking=no: OpenSSH's ssh warns, turns password and
    # keyboard-interactive authentication off and goes on with the key; the
    # same outcome (status, output) is expected here, with the warning.
    local rc=0 ref_rc=0
    "$SSH" "${kh_opts[@]}" -o "UserKnownHostsFile=$T/kh_changed" -o StrictHostKeyChecking=no 127.0.0.1 'echo ran' \
        >"$T/out" 2>"$T/err" || rc=$?
    ssh "${kh_opts[@]}" -o "UserKnownHostsFile=$T/kh_changed" -o StrictHostKeyChecking=no 127.0.0.1 'echo ran' \
        >"$T/ref_out" 2>"$T/ref_err" || ref_rc=$?
    [ "$rc" = "$ref_rc" ] && cmp -s "$T/out" "$T/ref_out" && grep -q "REMOTE HOST IDENTIFICATION HAS CHANGED" "$T/err" &&
        grep -q "Password authentication is disabled" "$T/err" || {
        echo "   ours: status $rc, output '$(cat "$T/out")'; OpenSSH's: status $ref_rc, output '$(cat "$T/ref_out")'"
        return 1
    }
}
lh_check "known_hosts: StrictHostKeyChecking=no with a changed key behaves as OpenSSH's ssh" check_changed_key_no

check_hashed() {
    cp "$LH_TMP/known_hosts" "$T/kh_hashed"
    "$LH_SSH_KEYGEN" -q -H -f "$T/kh_hashed" >/dev/null 2>&1
    grep -q '^|1|' "$T/kh_hashed" &&
        "$SSH" "${kh_opts[@]}" -o "UserKnownHostsFile=$T/kh_hashed" -o StrictHostKeyChecking=yes 127.0.0.1 true
}
lh_check "known_hosts: hashed entries (ssh-keygen -H) match" check_hashed

check_hash_new() {
    rm -f "$T/kh_hashnew"
    "$SSH" "${kh_opts[@]}" -o "UserKnownHostsFile=$T/kh_hashnew" -o StrictHostKeyChecking=accept-new \
        -o HashKnownHosts=yes 127.0.0.1 true 2>/dev/null && grep -q '^|1|' "$T/kh_hashnew" &&
        ssh-keygen -F "[127.0.0.1]:$port" -f "$T/kh_hashnew" >/dev/null
}
lh_check "known_hosts: HashKnownHosts adds a hashed line OpenSSH finds" check_hash_new

# ---------------------------------------------------------------- bad input
one_line_255() {
    # $1: expected text; rest: command. Exit 255, the text on stderr, within the time limit.
    local want=$1
    shift
    local start end rc
    start=$(date +%s)
    timeout 20 "$@" >/dev/null 2>"$T/err" </dev/null
    rc=$?
    end=$(date +%s)
    [ "$rc" = 255 ] && grep -q -- "$want" "$T/err" && [ $((end - start)) -lt 15 ] || {
        echo "   rc=$rc after $((end - start))s: $(head -3 "$T/err")"
        return 1
    }
}
printf 'Hostname 127.0.0.1\nBogusKeyword yes\n' >"$T/bad_config"
lh_check "bad input: unknown config keyword" one_line_255 "line 2: Bad configuration option: boguskeyword" \
    "$SSH" -F "$T/bad_config" 127.0.0.1 true
printf 'Port 22 23 "unterminated\n' >"$T/bad_config2"
lh_check "bad input: malformed config line" one_line_255 "line 1:" "$SSH" -F "$T/bad_config2" 127.0.0.1 true
head -c 300 "$T/id_ed25519" >"$T/corrupt_key"
chmod 600 "$T/corrupt_key"
lh_check "bad input: corrupt key file" one_line_255 'Load key' \
    "$SSH" "${base[@]}" -i "$T/corrupt_key" -o PreferredAuthentications=publickey 127.0.0.1 true
lh_port closed_port # reserved, so nothing else listens on it
lh_check "bad input: nothing listening" one_line_255 "connect to host 127.0.0.1 port $closed_port: Connection refused" \
    "$SSH" "${noport[@]}" -p "$closed_port" 127.0.0.1 true
start_fake() {
    "$BUILD/regress/fake_server" "$1" "$T/fake_$1.port" >/dev/null 2>&1 &
    LH_PIDS+=($!)
    lh_wait_until 5 test -s "$T/fake_$1.port" || lh_fail "fake_server $1 did not start"
}
for m in silent close garbage badversion; do start_fake $m; done
silent=$(cat "$T/fake_silent.port")
lh_check "bad input: silent server, ConnectTimeout=2 honoured" one_line_255 "Connection timed out during banner exchange" \
    "$SSH" "${noport[@]}" -p "$silent" -o ConnectTimeout=2 127.0.0.1 true
closing=$(cat "$T/fake_close.port")
lh_check "bad input: server closes mid-handshake" one_line_255 "Connection closed by 127.0.0.1 port $closing" \
    "$SSH" "${noport[@]}" -p "$closing" 127.0.0.1 true
garbage=$(cat "$T/fake_garbage.port")
lh_check "bad input: server sends garbage" one_line_255 "Bad packet length" \
    "$SSH" "${noport[@]}" -p "$garbage" 127.0.0.1 true
old=$(cat "$T/fake_badversion.port")
lh_check "bad input: protocol 1 server" one_line_255 "Bad remote protocol version identification\|Protocol major versions differ" \
    "$SSH" "${noport[@]}" -p "$old" 127.0.0.1 true

# ---------------------------------------------------------------- RequiredRSASize
# The server's RSA host key (2048 bits) under RequiredRSASize 4096: both
# ssh programs die with OpenSSH's line before any look-up; an RSA identity
# of 2048 bits is dropped, with OpenSSH's error line, and never offered.
rsa_refusals() { # SSH: stderr and status of both refusals
    local rc=0
    "$1" "${base[@]}" "${key[@]}" -o HostKeyAlgorithms=rsa-sha2-512 -o RequiredRSASize=4096 "$me@127.0.0.1" true \
        </dev/null 2>&1 || rc=$?
    echo "status $rc"
    rc=0
    "$1" "${base[@]}" -i "$T/id_agent" -o RequiredRSASize=4096 -o PreferredAuthentications=publickey \
        "$me@127.0.0.1" true </dev/null 2>&1 || rc=$?
    echo "status $rc"
}
check_required_rsa_size() {
    rsa_refusals ssh | tr -d '\r' >"$T/rsa.debian"
    rsa_refusals "$SSH" | tr -d '\r' >"$T/rsa.longhaul"
    grep -qx 'Bad server host key: Invalid key length' "$T/rsa.debian" &&
        grep -q 'Invalid key length' <(sed 1,2d "$T/rsa.debian") &&
        diff "$T/rsa.debian" "$T/rsa.longhaul" >"$T/rsa.diff" ||
        { echo "   (< Debian's ssh, > Longhaul's)"; sed 's/^/   /' "$T/rsa.diff" "$T/rsa.debian"; return 1; }
}
lh_check "RequiredRSASize: a short RSA host key and identity refused in OpenSSH's words" check_required_rsa_size

# ---------------------------------------------------------------- IPQoS
# The TOS byte on ssh's socket once its session runs (ss --tos): the
# interactive value with a tty, the bulk one without, as Debian's ssh
# sets them (Debian's defaults lowdelay/throughput, af21, none).
tos_of() { # SSH ARGS...: the TOS of ssh's connection while its remote command runs
    local ssh=$1
    shift
    lh_tos_while "dst 127.0.0.1:$port" "$ssh" "${base[@]}" "${key[@]}" "$@" "$me@127.0.0.1" 'echo ready; sleep 5'
}
check_ipqos() {
    local args a b
    for args in "-T" "-tt" "-T -o IPQoS=af21" "-tt -o IPQoS=cs1" "-T -o IPQoS=none"; do
        # shellcheck disable=SC2086
        a=$(tos_of ssh $args)
        # shellcheck disable=SC2086
        b=$(tos_of "$SSH" $args)
        # (ss prints no tos for 0: IPQoS none leaves it unset.)
        { [ -n "$a" ] || [[ $args == *none* ]]; } && [ "$a" = "$b" ] ||
            { echo "   $args: Debian's ssh '$a', Longhaul's '$b'"; return 1; }
    done
}
lh_check "IPQoS: the socket's TOS with and without a tty, as Debian's ssh sets it" check_ipqos

# What ssh says before it connects, byte for byte as Debian's ssh (stdin
# not a terminal, a port where nothing listens): the pty refusal, said
# before connecting for a shell, -t, -n, RemoteCommand and -G and not for
# -T, -N, -q or -O; fatal errors (command line, configuration) end in CR
# LF, usage ones and the log file's in LF; the exit status too; -E's file
# is made 0600.
check_early_messages() {
    local closed args a b
    lh_port closed
    printf 'Bogus yes\n' >"$LH_TMP/bad_config"
    for args in "127.0.0.1" "127.0.0.1 true" "-t 127.0.0.1 true" "-n -t 127.0.0.1 true" "-T 127.0.0.1" \
        "-N 127.0.0.1" "-q 127.0.0.1" "-o RemoteCommand=true 127.0.0.1" "-G 127.0.0.1" \
        "-O check -S $LH_TMP/none 127.0.0.1" "-f 127.0.0.1" "-1 127.0.0.1" "-p bad 127.0.0.1" "-e xx 127.0.0.1" \
        "-L bad 127.0.0.1" "-o RemoteCommand=true 127.0.0.1 true" "-E $LH_TMP/no/such/log 127.0.0.1" \
        "-F $LH_TMP/bad_config 127.0.0.1"; do
        # shellcheck disable=SC2086
        a=$(ssh -F /dev/null -p "$closed" $args 2>&1 </dev/null | grep -v '^[a-z0-9]* ' | od -c; echo "${PIPESTATUS[0]}")
        # shellcheck disable=SC2086
        b=$("$SSH" -F /dev/null -p "$closed" $args 2>&1 </dev/null | grep -v '^[a-z0-9]* ' | od -c; echo "${PIPESTATUS[0]}")
        [ "$a" = "$b" ] || { echo "   [$args] Debian's ssh:"; echo "$a"; echo "   Longhaul's:"; echo "$b"; return 1; }
    done
    # getopt's refusals (CR LF: OpenSSH's getopt reports through its logger)
    # and the usage after them.
    for args in "-Z 127.0.0.1" "127.0.0.1 -l" "-W"; do
        # shellcheck disable=SC2086
        a=$(ssh $args 2>&1 </dev/null | od -c; echo "${PIPESTATUS[0]}")
        # shellcheck disable=SC2086
        b=$("$SSH" $args 2>&1 </dev/null | od -c; echo "${PIPESTATUS[0]}")
        [ "$a" = "$b" ] || { echo "   [$args] Debian's ssh:"; echo "$a"; echo "   Longhaul's:"; echo "$b"; return 1; }
    done
    # -E makes its file 0600 whatever the umask: debug output is private.
    for b in ssh "$SSH"; do
        rm -f "$LH_TMP/e.log"
        (umask 022 && "$b" -F /dev/null -p "$closed" -E "$LH_TMP/e.log" 127.0.0.1 true </dev/null)
        [ "$(stat -c %a "$LH_TMP/e.log")" = 600 ] || { echo "   $b -E: mode $(stat -c %a "$LH_TMP/e.log")"; return 1; }
    done
}
lh_check "messages before connecting (the pty refusal, command-line errors) as Debian's ssh writes them" check_early_messages

lh_summary
