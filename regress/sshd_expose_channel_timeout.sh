#!/usr/bin/env bash
# ExposeAuthInfo and ChannelTimeout (sshd_config(5) of OpenSSH 9.2), with
# Debian's ssh as the client and Debian's sshd as the control: every check
# runs against both servers, with the same configuration.
#  - ExposeAuthInfo yes: SSH_USER_AUTH names /tmp/sshauth.<15 characters>,
#    the user's, mode 0600, listing the key that logged in ("publickey
#    ssh-ed25519 AAAA..."), or "publickey ..." then "password" in that
#    order under AuthenticationMethods publickey,password; a subsystem and
#    ForceCommand see it too; the file is gone once the client logs out.
#    Both servers print the same lines (the random name aside).
#  - ChannelTimeout direct-tcpip=2s session:command=2s: a forwarded
#    connection idle for 2 s is closed by the server (an idle one after an
#    exchange, and one that never carried a byte), a busy one stays open;
#    a command silent for 2 s loses its channel (ssh exits 255, no exit
#    status), a command that prints every half second runs to its end.
#  - sshd -T prints both settings as Debian's does.
# Needs root (test users); without it, it skips.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
HERE=$(cd "$(dirname "$0")" && pwd)
LONGHAUL_SSHD=$BUILD/bin/sshd
DEBIAN_SSHD=/usr/sbin/sshd
[ -x "$LONGHAUL_SSHD" ] || lh_fail "sshd not built ($LONGHAUL_SSHD)"
[ -x "$DEBIAN_SSHD" ] || lh_skip "OpenSSH's sshd not found at $DEBIAN_SSHD"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
command -v python3 >/dev/null || lh_skip "python3 not found"
[ "$(id -u)" = 0 ] || lh_skip "needs root: test users"
T=$LH_TMP
chmod 755 "$T"

# A server removes SSH_USER_AUTH's file when the connection ends; a
# connection process killed by a signal leaves it, OpenSSH's as well
# (lib.sh's cleanup kills what a test user still runs after a failed
# check). So the cleanup first removes the test users' files, told by
# owner while the users exist, then does lib.sh's.
eval "lib_$(declare -f lh_cleanup_users)"
lh_cleanup_users() {
    local u
    for u in "${LH_USERS[@]:-}"; do
        [ -n "$u" ] && id -u "$u" >/dev/null 2>&1 || continue
        find /tmp -maxdepth 1 -name 'sshauth.*' -user "$u" -delete 2>/dev/null || true
    done
    lib_lh_cleanup_users
}

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C auth-info-key -f "$T/id_user"
cat "$T/id_user.pub" >"$T/authorized_keys"
chmod 644 "$T/authorized_keys"
lh_make_user "Pw-$RANDOM-$RANDOM"
user=$LH_USER
pw2="Pw-$RANDOM-$RANDOM"
lh_make_user "$pw2"
user2=$LH_USER # AuthenticationMethods publickey,password and a ForceCommand
askpass=$(lh_askpass)
key_text=$(cut -d' ' -f1,2 "$T/id_user.pub")

lh_port ECHO_PORT
python3 "$HERE/echo_server.py" "$ECHO_PORT" &
LH_PIDS+=($!)
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
lh_wait_until 10 accepts "$ECHO_PORT" || lh_fail "the echo server did not start"

# idle_probe.py PORT MODE SECONDS: connects through a forward and reports
# "closed after X s" (the server closed the channel) or "open after X s".
# hello: one line echoed, then silence; silent: never a byte; busy: a
# byte every half second.
cat >"$T/idle_probe.py" <<'EOF'
import select, socket, sys, time
port, mode, limit = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port))
if mode == "hello":
    s.sendall(b"hello\n")
    got = b""
    while not got.endswith(b"\n"):
        d = s.recv(100)
        if not d:
            print("closed before the echo")
            sys.exit(1)
        got += d
t0 = time.monotonic()
next_send = t0
while True:
    now = time.monotonic()
    if now - t0 > limit:
        print("open after %.1f s" % (now - t0))
        break
    if mode == "busy" and now >= next_send:
        s.sendall(b"x")
        next_send = now + 0.5
    r, _, _ = select.select([s], [], [], 0.05)
    if r and not s.recv(100):
        print("closed after %.1f s" % (time.monotonic() - t0))
        break
EOF

server_lines=(
    "ExposeAuthInfo yes"
    "ChannelTimeout direct-tcpip=2s session:command=2s"
    'Subsystem showauth cat "$SSH_USER_AUTH"'
)
match_block="Match User $user2
  AuthenticationMethods publickey,password
  ForceCommand cat \"\$SSH_USER_AUTH\""

# start NAME SSHD: a server in $T/NAME on port_NAME, the lines above and
# the Match block at the end.
start() {
    local name=$1 sshd=$2 dir=$T/$1 p
    mkdir -p "$dir" && chmod 755 "$dir"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$dir/"
    lh_port p
    lh_write_sshd_config "$dir" "$p" "${server_lines[@]}"
    printf '%s\n' "$match_block" >>"$dir/sshd_config"
    [ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 0755 /run/sshd; }
    "$sshd" -t -f "$dir/sshd_config" || lh_fail "$name: sshd -t rejected the test config"
    "$sshd" -D -e -f "$dir/sshd_config" 2>"$dir/sshd.log" &
    LH_PIDS+=($!)
    lh_wait_until 5 accepts "$p" || { cat "$dir/sshd.log" >&2; lh_fail "$name: sshd did not start on $p"; }
    lh_known_hosts "$T" "$p"
    printf -v "port_$name" %s "$p"
}
start debian "$DEBIAN_SSHD"
start longhaul "$LONGHAUL_SSHD"

# ssh_key NAME [ssh args...]: Debian's ssh to server NAME as $user with the key.
ssh_key() {
    local name=$1 port_var=port_$1
    shift
    lh_ssh_to "$T" "${!port_var}" "$T/id_user" "$@"
}

# ---------------------------------------------------------------- ExposeAuthInfo
# The session's view: the file's lines, its mode, owner and type, its name.
auth_info_command='cat "$SSH_USER_AUTH"; stat -c "%a %U %F" "$SSH_USER_AUTH"; echo "$SSH_USER_AUTH"'
check_auth_info() {
    local name=$1 out path
    out=$(ssh_key "$name" "$user@127.0.0.1" "$auth_info_command") || { echo "  ssh failed"; return 1; }
    printf '%s\n' "$out" >"$T/auth_info.$name"
    path=$(sed -n 3p <<<"$out")
    local want
    want=$(printf '%s\n%s\n%s' "publickey $key_text" "600 $user regular file" "$path")
    [ "$out" = "$want" ] || { echo "  got:"; sed 's/^/    /' <<<"$out"; echo "  wanted:"; sed 's/^/    /' <<<"$want"; return 1; }
    [[ "$path" =~ ^/tmp/sshauth\.[A-Za-z0-9]{15}$ ]] || { echo "  name $path is not /tmp/sshauth.<15 characters>"; return 1; }
    # Gone once the connection is over.
    lh_wait_until 5 test ! -e "$path" || { echo "  $path is still there after logout"; return 1; }
}
for name in debian longhaul; do
    lh_check "$name: SSH_USER_AUTH lists the key, a 0600 file of the user's under /tmp, removed at logout" \
        check_auth_info "$name"
done
same_form() {
    local d l
    d=$(sed -E 's#/tmp/sshauth\.[A-Za-z0-9]{15}#/tmp/sshauth.NAME#' "$T/auth_info.debian")
    l=$(sed -E 's#/tmp/sshauth\.[A-Za-z0-9]{15}#/tmp/sshauth.NAME#' "$T/auth_info.longhaul")
    [ -n "$d" ] && [ "$d" = "$l" ] || { diff <(echo "$d") <(echo "$l") | sed 's/^/  /'; return 1; }
}
lh_check "longhaul's session sees the same lines as debian's" same_form

check_subsystem() {
    local out
    out=$(ssh_key "$1" -s "$user@127.0.0.1" showauth </dev/null) || { echo "  ssh failed"; return 1; }
    [ "$out" = "publickey $key_text" ] || { echo "  got: $out"; return 1; }
}
for name in debian longhaul; do
    lh_check "$name: a subsystem sees SSH_USER_AUTH" check_subsystem "$name"
done

# AuthenticationMethods publickey,password: both lines, in that order,
# seen by the ForceCommand.
check_two_methods() {
    local name=$1 port_var=port_$1 out
    out=$(LH_ASKPASS_ANSWER=$pw2 SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none \
        ssh -F /dev/null -p "${!port_var}" -o "UserKnownHostsFile=$T/known_hosts.${!port_var}" \
        -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id_user" \
        -o NumberOfPasswordPrompts=1 "$user2@127.0.0.1" true </dev/null) || { echo "  ssh failed"; return 1; }
    printf '%s\n' "$out" >"$T/two_methods.$name"
    [ "$out" = "$(printf '%s\n%s' "publickey $key_text" password)" ] || { echo "  got:"; sed 's/^/    /' <<<"$out"; return 1; }
}
for name in debian longhaul; do
    lh_check "$name: publickey,password: both methods in order, seen by ForceCommand" check_two_methods "$name"
done

# ---------------------------------------------------------------- ChannelTimeout
# Through ssh -N -L: three connections at once, two idle (one after an
# exchange, one that never carries a byte), one busy for 6 s.
check_forward_timeout() {
    local name=$1 port_var=port_$1 lport fwd_pid out_hello out_silent out_busy
    lh_port lport
    # ssh itself in the background (not a function's subshell), so that
    # $! is its PID.
    ssh -F /dev/null -p "${!port_var}" -o "UserKnownHostsFile=$T/known_hosts.${!port_var}" \
        -o StrictHostKeyChecking=yes -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none \
        -i "$T/id_user" -N -o ExitOnForwardFailure=yes -L "$lport:127.0.0.1:$ECHO_PORT" "$user@127.0.0.1" &
    fwd_pid=$!
    LH_PIDS+=("$fwd_pid")
    lh_wait_until 10 accepts "$lport" || { echo "  the forward did not start"; return 1; }
    python3 "$T/idle_probe.py" "$lport" hello 6 >"$T/probe.hello.$name" &
    local p1=$!
    python3 "$T/idle_probe.py" "$lport" silent 6 >"$T/probe.silent.$name" &
    local p2=$!
    python3 "$T/idle_probe.py" "$lport" busy 6 >"$T/probe.busy.$name" &
    local p3=$!
    wait "$p1" "$p2" "$p3" || true
    kill "$fwd_pid" 2>/dev/null || true
    wait "$fwd_pid" 2>/dev/null || true
    out_hello=$(cat "$T/probe.hello.$name")
    out_silent=$(cat "$T/probe.silent.$name")
    out_busy=$(cat "$T/probe.busy.$name")
    echo "  $name: idle after an exchange: $out_hello; never used: $out_silent; busy: $out_busy"
    # OpenSSH counts whole seconds: it closes after 1 to 2 s; Longhaul
    # after 2 s plus up to two 200 ms ticks. Either way well before 6 s.
    closed_in_time "$out_hello" && closed_in_time "$out_silent" && [[ "$out_busy" == "open after "* ]]
}
closed_in_time() {
    [[ "$1" =~ ^closed\ after\ ([0-9]+)\.([0-9])\ s$ ]] || return 1
    local tenths=$((BASH_REMATCH[1] * 10 + BASH_REMATCH[2]))
    [ "$tenths" -ge 9 ] && [ "$tenths" -le 40 ]
}
for name in debian longhaul; do
    lh_check "$name: ChannelTimeout direct-tcpip=2s closes idle forwarded connections, not a busy one" \
        check_forward_timeout "$name"
done
logged_inactivity() {
    grep -qE "channel [0-9]+: closing after 2 seconds of inactivity" "$T/$1/sshd.log" ||
        { echo "  no 'closing after 2 seconds of inactivity' in $1's log"; return 1; }
}
for name in debian longhaul; do
    lh_check "$name: logs 'channel N: closing after 2 seconds of inactivity'" logged_inactivity "$name"
done

# session:command=2s: a silent command loses its channel (no exit status:
# ssh says 255); one that prints every half second runs to its end.
check_session_timeout() {
    local name=$1 rc=0 t0 took out
    t0=$EPOCHREALTIME
    ssh_key "$name" "$user@127.0.0.1" 'sleep 8' </dev/null || rc=$?
    took=$(lh_seconds_since "$t0")
    echo "  $name: 'sleep 8' ended after $took s with status $rc"
    [ "$rc" = 255 ] && [ "${took%.*}" -lt 6 ] || return 1
    rc=0
    out=$(ssh_key "$name" "$user@127.0.0.1" 'for i in 1 2 3 4 5 6 7 8; do echo $i; sleep 0.5; done' </dev/null) || rc=$?
    [ "$rc" = 0 ] && [ "$(echo $out)" = "1 2 3 4 5 6 7 8" ] || { echo "  busy command: status $rc, printed $(echo $out)"; return 1; }
}
for name in debian longhaul; do
    lh_check "$name: ChannelTimeout session:command=2s closes a silent command's channel, not a busy one's" \
        check_session_timeout "$name"
done

# ---------------------------------------------------------------- sshd -T
check_dump() {
    local d l
    d=$("$DEBIAN_SSHD" -T -f "$T/debian/sshd_config" | grep -E '^(exposeauthinfo|channeltimeout) ')
    l=$("$LONGHAUL_SSHD" -T -f "$T/longhaul/sshd_config" | grep -E '^(exposeauthinfo|channeltimeout) ')
    echo "$l" | sed 's/^/  /'
    [ "$d" = "$l" ] || { diff <(echo "$d") <(echo "$l") | sed 's/^/  /'; return 1; }
    d=$("$DEBIAN_SSHD" -T -f "$T/debian/sshd_config" -C "user=$user2,addr=127.0.0.1,host=localhost,lport=22" |
        grep -E '^(exposeauthinfo|channeltimeout|forcecommand|authenticationmethods) ')
    l=$("$LONGHAUL_SSHD" -T -f "$T/longhaul/sshd_config" -C "user=$user2,addr=127.0.0.1,host=localhost,lport=22" |
        grep -E '^(exposeauthinfo|channeltimeout|forcecommand|authenticationmethods) ')
    [ "$d" = "$l" ] || { diff <(echo "$d") <(echo "$l") | sed 's/^/  /'; return 1; }
}
lh_check "sshd -T prints ExposeAuthInfo and ChannelTimeout as Debian's does" check_dump

lh_summary
