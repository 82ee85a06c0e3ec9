#!/usr/bin/env bash
# ssh's ~C command line (issue 11), typed into Longhaul's ssh on a terminal
# (tmux) against Debian's sshd and Longhaul's: "commandline disabled"
# unless EnableEscapeCommandline; -L, -D and -R added and cancelled with
# OpenSSH's messages (compared line for line with what Debian's ssh prints
# for the same input); a connection in flight through each forward keeps
# going after its listener is cancelled, with checksummed data, while new
# connections are refused; the same port forwarded again afterwards;
# "!command" and LocalCommand only with PermitLocalCommand; after the
# session ends, ssh waits for the forwarded connections still open, and ~&
# puts it in the background for that wait (checked against Debian's ssh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
HERE=$(cd "$(dirname "$0")" && pwd)
LH_SSH=$BUILD/bin/ssh
LH_SSHD=$BUILD/bin/sshd
[ -x "$LH_SSH" ] || lh_fail "ssh not built ($LH_SSH)"
[ -x "$LH_SSHD" ] || lh_fail "sshd not built ($LH_SSHD)"
DEBIAN_SSHD=/usr/sbin/sshd
[ -x "$DEBIAN_SSHD" ] || lh_skip "OpenSSH's sshd not found at $DEBIAN_SSHD"
command -v tmux >/dev/null || lh_skip "tmux not found"
command -v python3 >/dev/null || lh_skip "python3 not found"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found"
T=$LH_TMP
me=$(id -un)

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id"
cp "$T/id.pub" "$T/authorized_keys"
lh_port ECHO_PORT
python3 "$HERE/echo_server.py" "$ECHO_PORT" &
LH_PIDS+=($!)
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
refuses() { ! accepts "$1"; }
lh_wait_until 10 accepts "$ECHO_PORT" || lh_fail "the echo server did not start"
head -c $((2 << 20)) /dev/urandom >"$T/src"
head -c $((1 << 20)) "$T/src" >"$T/first_half"
tail -c $((1 << 20)) "$T/src" >"$T/second_half"
WANT=$(sha256sum <"$T/src" | cut -d' ' -f1)

# start NAME SSHD: a server in $T/NAME; sets PORT.
start() {
    mkdir -p "$T/$1"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$T/$1/"
    lh_port PORT
    LH_SSHD=$2 lh_start_sshd "$T/$1" "$PORT" "PermitRootLogin prohibit-password"
}
start debian "$DEBIAN_SSHD"
DEBIAN_PORT=$PORT
start longhaul "$LH_SSHD"
LONGHAUL_PORT=$PORT

TMUX_SOCK=$T/tmux.sock
# session NAME SSH PORT [ssh options...]: an ssh with a pty in tmux session
# NAME, its stderr (where ~C's messages go) in $T/NAME.err.
session() {
    local name=$1 ssh=$2 port=$3
    shift 3
    local cmd="$ssh -F /dev/null -p $port -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
    cmd+=" -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -o LogLevel=INFO -i $T/id $*"
    cmd+=" -tt $me@127.0.0.1 'echo session-up; exec sleep 600' 2>$T/$name.err"
    tmux -S "$TMUX_SOCK" new-session -d -s "$name" -x 200 -y 50 "$cmd"
    if [ -z "${TMUX_PID:-}" ]; then
        TMUX_PID=$(tmux -S "$TMUX_SOCK" display-message -p '#{pid}')
        LH_PIDS+=("$TMUX_PID")
    fi
    lh_wait_until 20 pane_has "$name" '^session-up' || { cat "$T/$name.err" >&2; return 1; }
}
pane() { tmux -S "$TMUX_SOCK" capture-pane -p -S -500 -t "$1"; }
pane_has() { pane "$1" | lh_matches "$2"; }
prompts() { pane "$1" | grep -c '^ssh>' || true; }
prompts_above() { [ "$(prompts "$1")" -gt "$2" ]; }
err_since() { tail -n +"$(($2 + 1))" "$T/$1.err" | tr -d '\r'; }
err_has_since() { err_since "$1" "$2" | lh_matches -xF -- "$3"; }

# escape NAME KEYS: types Enter, then KEYS (an escape sequence) at the
# start of the new line.
escape() {
    tmux -S "$TMUX_SOCK" send-keys -t "$1" Enter
    tmux -S "$TMUX_SOCK" send-keys -t "$1" -l -- "$2"
}
# type_cmdline NAME LINE: ~C, then LINE at the "ssh> " prompt.
type_cmdline() {
    local name=$1 line=$2 p
    p=$(prompts "$name")
    escape "$name" '~C'
    lh_wait_until 10 prompts_above "$name" "$p" || {
        echo "  no ssh> prompt" >&2
        pane "$name" | grep -v '^$' | tail -5 >&2
        return 1
    }
    tmux -S "$TMUX_SOCK" send-keys -t "$name" -l -- "$line"
    tmux -S "$TMUX_SOCK" send-keys -t "$name" Enter
}
# cmdline NAME LINE WANT: ~C, LINE at the "ssh> " prompt; the lines ssh
# wrote to stderr for it, '|'-joined, must be WANT (waits for WANT's last
# line).
cmdline() {
    local name=$1 line=$2 want=$3 n got
    n=$(wc -l <"$T/$name.err")
    type_cmdline "$name" "$line" || return 1
    if [ -n "$want" ]; then
        lh_wait_until 10 err_has_since "$name" "$n" "${want##*|}" || true
    else
        sleep 0.3 # nothing to wait for: give a wrong message a moment to show
    fi
    got=$(err_since "$name" "$n" | paste -sd'|')
    [ "$got" = "$want" ] || { echo "  '$line': got '$got', want '$want'" >&2; return 1; }
}

# ---------------------------------------------------------------- disabled
session plain "$LH_SSH" "$DEBIAN_PORT"
check_disabled() {
    local n
    n=$(wc -l <"$T/plain.err")
    escape plain '~C'
    lh_wait_until 10 err_has_since plain "$n" "commandline disabled" && [ "$(prompts plain)" = 0 ]
}
lh_check "~C without EnableEscapeCommandline: commandline disabled" check_disabled
check_help_hides_c() {
    escape plain '~?'
    lh_wait_until 10 err_has_since plain 0 " ~?   - this message" && ! grep -q '~C' "$T/plain.err"
}
lh_check "~? leaves ~C out when the command line is disabled" check_help_hides_c

# ---------------------------------------------------------------- messages
# Each command line with what OpenSSH prints for it, checked with Debian's
# ssh too, so the expectations are OpenSSH's own (the ports are ours, held
# by lh_port and never listened on by anyone else).
lh_port LP
lh_port DP
lh_port RP
in_use="bind [127.0.0.1]:$LP: Address already in use|channel_setup_fwd_listener_tcpip: cannot listen to port: $LP"
MESSAGES=(
    "help" "$(printf '%s\n' "Commands:" \
        "      -L[bind_address:]port:host:hostport    Request local forward" \
        "      -R[bind_address:]port:host:hostport    Request remote forward" \
        "      -D[bind_address:]port                  Request dynamic forward" \
        "      -KL[bind_address:]port                 Cancel local forward" \
        "      -KR[bind_address:]port                 Cancel remote forward" \
        "      -KD[bind_address:]port                 Cancel dynamic forward" | paste -sd'|')"
    "-L 0:x" "Bad local forwarding specification."
    "-X" "Invalid command."
    "-K" "Invalid command."
    "-KX 1" "Invalid command."
    "!true" "Invalid command."
    "-L $LP:127.0.0.1:$ECHO_PORT extra" "Bad local forwarding specification."
    "-R nonsense" "Bad remote forwarding specification."
    "-KL x:y:z" "Bad forwarding close specification."
    "L $LP:127.0.0.1:$ECHO_PORT" "Forwarding port."
    "-L$LP:127.0.0.1:$ECHO_PORT" "$in_use|Port forwarding failed."
    "-KL 127.0.0.1:$LP" "Unknown port forwarding."
    "-KL$LP" "Canceled forwarding."
    "-KL$LP" "Unknown port forwarding."
    "-D $DP" "Forwarding port."
    "-KL $DP" "Unknown port forwarding."
    "-KD $DP" "Canceled forwarding."
    "-KD $DP" "Unknown port forwarding."
    "-R $RP:127.0.0.1:$ECHO_PORT" "Forwarding port."
    "-KR $RP" "Canceled forwarding."
    "-KR $RP" "Unknown port forwarding."
    "-R $RP" "Forwarding port."
    "-KR $RP" "Canceled forwarding."
)
check_messages() {
    local name=$1 ssh=$2 i
    session "$name" "$ssh" "$DEBIAN_PORT" -o EnableEscapeCommandline=yes
    for ((i = 0; i < ${#MESSAGES[@]}; i += 2)); do
        cmdline "$name" "${MESSAGES[i]}" "${MESSAGES[i + 1]}" || return 1
    done
}
if [ -x /usr/bin/ssh ]; then
    lh_check "~C messages: Debian's ssh prints what this test expects ($((${#MESSAGES[@]} / 2)) lines)" \
        check_messages debian_messages /usr/bin/ssh
else
    lh_skip_check "~C messages of Debian's ssh" "OpenSSH's ssh client not found at /usr/bin/ssh"
fi
lh_check "~C messages: Longhaul's ssh prints the same" check_messages longhaul_messages "$LH_SSH"

# ---------------------------------------------------------------- forwards
# open_inflight PORT [KIND]: a connection through PORT (KIND plain, the
# default, or socks) that has sent the first half of the data and got it
# back; its writer in fd $w, its reader's PID in $inflight_pid.
open_inflight() {
    rm -f "$T/in.fifo" "$T/out"
    mkfifo "$T/in.fifo"
    if [ "${2:-plain}" = socks ]; then
        python3 "$HERE/socks_client.py" "$1" 127.0.0.1 "$ECHO_PORT" <"$T/in.fifo" >"$T/out" 2>"$T/client.err" &
    else
        python3 "$HERE/tcp_pipe.py" "$1" <"$T/in.fifo" >"$T/out" 2>"$T/client.err" &
    fi
    inflight_pid=$!
    exec {w}>"$T/in.fifo"
    cat "$T/first_half" >&"$w"
    size_is() { [ "$(stat -c %s "$T/out")" = $((1 << 20)) ]; }
    lh_wait_until 20 size_is || { echo "  first half not echoed" >&2; cat "$T/client.err" >&2; exec {w}>&-; return 1; }
}
# close_inflight: the second half through the same connection; all of it
# back intact.
close_inflight() {
    local rc=0 got
    cat "$T/second_half" >&"$w"
    exec {w}>&-
    wait "$inflight_pid" || rc=$?
    got=$(sha256sum <"$T/out" | cut -d' ' -f1)
    [ "$rc" = 0 ] && [ "$got" = "$WANT" ] || { echo "  client status $rc" >&2; cat "$T/client.err" >&2; return 1; }
}
# inflight NAME PORT KIND CANCEL: a connection in flight through PORT; the
# forward is cancelled (CANCEL at the prompt); new connections are
# refused; the rest of the data then goes through the same connection,
# and all of it comes back intact.
inflight() {
    local name=$1 port=$2 kind=$3 cancel=$4
    open_inflight "$port" "$kind" || return 1
    cmdline "$name" "$cancel" "Canceled forwarding." || { exec {w}>&-; return 1; }
    lh_wait_until 10 refuses "$port" || { echo "  $port still accepts after the cancel" >&2; exec {w}>&-; return 1; }
    close_inflight
}
# through PORT KIND: a fresh connection carries all the data both ways.
through() {
    local got
    if [ "$2" = socks ]; then
        got=$(python3 "$HERE/socks_client.py" "$1" 127.0.0.1 "$ECHO_PORT" <"$T/src" | sha256sum | cut -d' ' -f1)
    else
        got=$(python3 "$HERE/tcp_pipe.py" "$1" <"$T/src" | sha256sum | cut -d' ' -f1)
    fi
    [ "$got" = "$WANT" ]
}
# forward_cycle NAME ADD CANCEL PORT KIND: add, use, cancel with a
# connection in flight, cancel again (unknown), add the same port again.
forward_cycle() {
    local name=$1 add=$2 cancel=$3 port=$4 kind=$5
    cmdline "$name" "$add" "Forwarding port." &&
        lh_wait_until 10 accepts "$port" && through "$port" "$kind" &&
        inflight "$name" "$port" "$kind" "$cancel" &&
        cmdline "$name" "$cancel" "Unknown port forwarding." &&
        cmdline "$name" "$add" "Forwarding port." &&
        lh_wait_until 10 accepts "$port" && through "$port" "$kind" &&
        cmdline "$name" "$cancel" "Canceled forwarding." &&
        lh_wait_until 10 refuses "$port"
}
for server in debian longhaul; do
    port_var=${server^^}_PORT
    name=fwd_$server
    session "$name" "$LH_SSH" "${!port_var}" -o EnableEscapeCommandline=yes
    lh_port LP
    lh_port DP
    lh_port RP
    lh_check "~C -L/-KL ($server sshd): in-flight connection survives the cancel, port reused" \
        forward_cycle "$name" "-L $LP:127.0.0.1:$ECHO_PORT" "-KL $LP" "$LP" plain
    lh_check "~C -D/-KD ($server sshd): in-flight SOCKS connection survives the cancel, port reused" \
        forward_cycle "$name" "-D $DP" "-KD $DP" "$DP" socks
    lh_check "~C -R/-KR ($server sshd): in-flight connection survives the cancel, port reused" \
        forward_cycle "$name" "-R $RP:127.0.0.1:$ECHO_PORT" "-KR $RP" "$RP" plain
done
check_r_dynamic() {
    lh_port RDP
    cmdline fwd_longhaul "-R $RDP" "Forwarding port." && lh_wait_until 10 accepts "$RDP" &&
        through "$RDP" socks && cmdline fwd_longhaul "-KR $RDP" "Canceled forwarding." && lh_wait_until 10 refuses "$RDP"
}
lh_check "~C -R port (reverse SOCKS) and -KR" check_r_dynamic
check_allocated() {
    local n p
    n=$(wc -l <"$T/fwd_longhaul.err")
    type_cmdline fwd_longhaul "-R 0:127.0.0.1:$ECHO_PORT" &&
        lh_wait_until 10 err_has_since fwd_longhaul "$n" "Forwarding port." &&
        lh_wait_until 10 grep -q "^Allocated port [0-9]* for remote forward to 127.0.0.1:$ECHO_PORT" "$T/fwd_longhaul.err" &&
        p=$(grep -o "^Allocated port [0-9]*" "$T/fwd_longhaul.err" | tail -1 | cut -d' ' -f3) &&
        through "$p" plain && cmdline fwd_longhaul "-KR $p" "Canceled forwarding." && lh_wait_until 10 refuses "$p"
}
# OpenSSH's ssh prints nothing for this one (its ~C sends the request
# without waiting for the reply, so it cannot use the port either).
lh_check "~C -R 0: the allocated port printed, used and cancelled" check_allocated

# ---------------------------------------------------------------- after the session
# A session whose remote command ends on ^D (cat), with a -L forward, in a
# pane where bash reports "ssh-exited STATUS" when ssh ends and stays.
# Sets LP. OpenSSH's client stays after the session while a forwarded
# connection is open; ~& backgrounds it for that wait.
catsession() {
    local name=$1 ssh=$2 port=$3 cmd
    lh_port LP
    cmd="$ssh -F /dev/null -p $port -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
    cmd+=" -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -o LogLevel=INFO -i $T/id"
    cmd+=" -L $LP:127.0.0.1:$ECHO_PORT -tt $me@127.0.0.1 'echo session-up; cat >/dev/null; echo cat-done'"
    tmux -S "$TMUX_SOCK" new-session -d -s "$name" -x 200 -y 50 \
        "$cmd 2>$T/$name.err; echo ssh-exited \$?; exec sleep 600"
    if [ -z "${TMUX_PID:-}" ]; then
        TMUX_PID=$(tmux -S "$TMUX_SOCK" display-message -p '#{pid}')
        LH_PIDS+=("$TMUX_PID")
    fi
    lh_wait_until 20 pane_has "$name" '^session-up' && lh_wait_until 10 accepts "$LP" ||
        { cat "$T/$name.err" >&2; return 1; }
}
# no_ssh_forwarding PORT: no process runs with this test's -L for PORT.
no_ssh_forwarding() { ! pgrep -f -- "-L $1:127.0.0.1:$ECHO_PORT" >/dev/null; }
check_waits_for_forwarded() {
    local name=$1 ssh=$2 port=$3
    catsession "$name" "$ssh" "$port" && open_inflight "$LP" || return 1
    tmux -S "$TMUX_SOCK" send-keys -t "$name" C-d
    lh_wait_until 10 pane_has "$name" '^cat-done' || { echo "  the remote cat did not end" >&2; exec {w}>&-; return 1; }
    sleep 1 # nothing to wait for: a client that does not wait exits now
    pane_has "$name" '^ssh-exited' && { echo "  ssh exited with a forwarded connection open" >&2; exec {w}>&-; return 1; }
    close_inflight && lh_wait_until 10 pane_has "$name" '^ssh-exited 0$'
}
check_background() {
    local name=$1 ssh=$2 port=$3
    catsession "$name" "$ssh" "$port" && open_inflight "$LP" || return 1
    escape "$name" '~&'
    lh_wait_until 10 pane_has "$name" '^ssh-exited 0$' || { echo "  ssh did not exit 0 after ~&" >&2; exec {w}>&-; return 1; }
    grep -qxF '~& [backgrounded]' "$T/$name.err" || { echo "  no '~& [backgrounded]' line" >&2; exec {w}>&-; return 1; }
    # The child sent the ^D: the remote cat ended; the listener is gone.
    lh_wait_until 10 pane_has "$name" '^cat-done' || { echo "  the session's input did not end" >&2; exec {w}>&-; return 1; }
    lh_wait_until 10 refuses "$LP" || { echo "  $LP still accepts" >&2; exec {w}>&-; return 1; }
    close_inflight || return 1
    # The background child ends once that connection has closed.
    lh_wait_until 10 no_ssh_forwarding "$LP" ||
        { echo "  the background ssh is still running" >&2; return 1; }
}
if [ -x /usr/bin/ssh ]; then
    lh_check "session over, a forwarded connection open: Debian's ssh waits for it (what this test expects)" \
        check_waits_for_forwarded wait_openssh /usr/bin/ssh "$DEBIAN_PORT"
    lh_check "~&: Debian's ssh backgrounds, ends the session's input, serves the open connection (what this test expects)" \
        check_background bg_openssh /usr/bin/ssh "$DEBIAN_PORT"
else
    lh_skip_check "~& and the wait after the session, Debian's ssh" "OpenSSH's ssh client not found at /usr/bin/ssh"
fi
for server in debian longhaul; do
    port_var=${server^^}_PORT
    lh_check "session over, a forwarded connection open ($server sshd): ssh waits for it, then exits 0" \
        check_waits_for_forwarded "wait_lh_$server" "$LH_SSH" "${!port_var}"
    lh_check "~& ($server sshd): ssh backgrounds, ends the session's input, serves the open connection" \
        check_background "bg_lh_$server" "$LH_SSH" "${!port_var}"
done

# ---------------------------------------------------------------- local commands
check_local_commands() {
    session local_yes "$LH_SSH" "$DEBIAN_PORT" -o EnableEscapeCommandline=yes -o PermitLocalCommand=yes \
        -o "'LocalCommand=touch $T/lc-%r-%p'"
    lh_wait_until 10 test -e "$T/lc-$me-$DEBIAN_PORT" || { echo "  LocalCommand did not run" >&2; return 1; }
    cmdline local_yes "!touch $T/bang" "" && lh_wait_until 10 test -e "$T/bang" &&
        cmdline local_yes "help" "$(printf '%s\n' \
            "Commands:" \
            "      -L[bind_address:]port:host:hostport    Request local forward" \
            "      -R[bind_address:]port:host:hostport    Request remote forward" \
            "      -D[bind_address:]port                  Request dynamic forward" \
            "      -KL[bind_address:]port                 Cancel local forward" \
            "      -KR[bind_address:]port                 Cancel remote forward" \
            "      -KD[bind_address:]port                 Cancel dynamic forward" \
            "      !args                                  Execute local command" | paste -sd'|')"
}
lh_check "LocalCommand and ~C !command with PermitLocalCommand yes" check_local_commands
check_local_refused() {
    session local_no "$LH_SSH" "$DEBIAN_PORT" -o EnableEscapeCommandline=yes \
        -o "'LocalCommand=touch $T/lc-no'"
    cmdline local_no "!touch $T/bang-no" "Invalid command." && [ ! -e "$T/lc-no" ] && [ ! -e "$T/bang-no" ]
}
lh_check "without PermitLocalCommand: no LocalCommand, ~C !command invalid" check_local_refused

lh_summary
