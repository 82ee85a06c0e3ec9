#!/usr/bin/env bash
# Connection multiplexing (ControlMaster / ControlPath / ControlPersist,
# -M -S -O), both directions against OpenSSH 9.2's ssh, on Debian's sshd
# and Longhaul's:
#  (a) a Longhaul master and Longhaul mux clients: concurrent sessions with
#      checksummed data both ways, exit statuses, -O check/stop/exit with
#      Debian's messages and statuses, no new TCP connection per session;
#  (b) the Longhaul master and Debian's ssh as mux client;
#  (c) Debian's master (ssh -M -S path -f -N) and Longhaul's mux client;
#  (d) ControlMaster auto + ControlPersist 2: the first call returns, the
#      master stays, a second call reuses it, the master leaves when idle
#      and removes its socket.
#  (e) forwarding through a master, Longhaul's and Debian's masters each
#      with Longhaul's and Debian's mux clients: -O forward -L / -R 0 (the
#      allocated port on stdout) / -D, checksummed data through each,
#      -O cancel (and "port not forwarded" the second time), -W through
#      the master (data both ways, a refused target's message and status),
#      a login through a ProxyCommand "ssh -S path -W %h:%p", -L with a
#      session; ControlPersist with -W (the first -W call forks the master
#      and forwards through it); "ssh -f" leaves its caller's stdout.
#  (f) ControlMaster ask: Longhaul's and Debian's masters put the same
#      questions to a stand-in askpass (SSH_ASKPASS_PROMPT=confirm); "no"
#      refuses a session (the mux client then logs in by itself), a forward
#      and -O exit with Debian's messages, "yes" lets them through.
# Background masters are found by their -O check pid and stopped by it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
SSH=$BUILD/bin/ssh
LH_SSHD_BIN=$BUILD/bin/sshd
[ -x "$SSH" ] || lh_fail "ssh not built ($SSH)"
[ -x "$LH_SSHD_BIN" ] || lh_fail "sshd not built ($LH_SSHD_BIN)"
DEBIAN_SSH=/usr/bin/ssh
[ -x "$DEBIAN_SSH" ] || lh_skip "OpenSSH's ssh client not found at $DEBIAN_SSH"
lh_require_openssh_server
T=$LH_TMP

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id"
cp "$T/id.pub" "$T/authorized_keys"
chmod 600 "$T/id"

# start NAME SSHD: sets port_NAME; the server's log is $T/srv-NAME/sshd.log.
start() {
    local name=$1 sshd=$2 d="$T/srv-$1" p
    mkdir -p "$d"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$d/"
    lh_port p
    LH_SSHD=$sshd lh_start_sshd "$d" "$p"
    lh_known_hosts "$d" "$p"
    printf -v "port_$name" %s "$p"
}
start deb "$LH_SSHD"
start lh "$LH_SSHD_BIN"

# opts NAME: the client options for server NAME (either ssh takes them).
opts() {
    local d="$T/srv-$1" p
    p=port_$1
    OPTS=(-F /dev/null -p "${!p}" -o "UserKnownHostsFile=$d/known_hosts.${!p}" -o StrictHostKeyChecking=yes
          -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id")
}
accepted() { grep -c "Accepted publickey" "$T/srv-$1/sshd.log" || true; }

# master_pid CTLPATH: the pid a master reports to -O check (Debian's ssh asks).
master_pid() {
    "$DEBIAN_SSH" -F /dev/null -S "$1" -O check 127.0.0.1 2>&1 | sed -n 's/^Master running (pid=\([0-9]*\)).*/\1/p'
}
gone() { ! kill -0 "$1" 2>/dev/null; }

head -c $((3 * 1024 * 1024 + 12345)) /dev/urandom >"$T/data"
HERE=$(dirname "$0")
lh_port ECHO_PORT
lh_port CLOSED_PORT # reserved and never listened on
python3 "$HERE/echo_server.py" "$ECHO_PORT" &
LH_PIDS+=($!)
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
lh_wait_until 10 accepts "$ECHO_PORT" || lh_fail "the echo server did not start"
SUM=$(sha256sum <"$T/data" | cut -d' ' -f1)

# data_both_ways SSH CTLPATH: stdin to the remote checksum, and the remote
# file back to our stdout; three sessions at once.
data_both_ways() {
    local ssh=$1 ctl=$2 i ok=0 pids=()
    for i in 1 2 3; do
        timeout 60 "$ssh" -F /dev/null -S "$ctl" 127.0.0.1 'sha256sum' <"$T/data" >"$T/up.$i" 2>"$T/up.$i.err" &
        pids+=($!)
        timeout 60 "$ssh" -F /dev/null -S "$ctl" 127.0.0.1 "cat '$T/data'" </dev/null >"$T/down.$i" 2>"$T/down.$i.err" &
        pids+=($!)
    done
    # (Not a bare wait: the servers are this shell's children too.)
    wait "${pids[@]}"
    for i in 1 2 3; do
        [ "$(cut -d' ' -f1 <"$T/up.$i")" = "$SUM" ] || { echo "   upload $i: $(cat "$T/up.$i" "$T/up.$i.err")"; ok=1; }
        cmp -s "$T/data" "$T/down.$i" || { echo "   download $i differs: $(cat "$T/down.$i.err")"; ok=1; }
    done
    return $ok
}

# statuses SSH CTLPATH: exit statuses, stdout and stderr kept apart.
statuses() {
    local ssh=$1 ctl=$2 want rc
    for want in 0 1 7 255; do
        rc=0
        timeout 20 "$ssh" -F /dev/null -S "$ctl" 127.0.0.1 "exit $want" </dev/null || rc=$?
        [ "$rc" = "$want" ] || { echo "   exit $want: got $rc"; return 1; }
    done
    rc=0
    timeout 20 "$ssh" -F /dev/null -S "$ctl" 127.0.0.1 'echo out; echo err >&2; exit 42' </dev/null \
        >"$T/o" 2>"$T/e" || rc=$?
    [ "$rc" = 42 ] && [ "$(cat "$T/o")" = out ] && [ "$(cat "$T/e")" = err ] ||
        { echo "   rc $rc, out '$(cat "$T/o")', err '$(cat "$T/e")'"; return 1; }
}

# ------------------------------------------------ (a) + (b): Longhaul master
for srv in deb lh; do
    opts $srv
    CTL=$T/lm-$srv
    n0=$(accepted $srv)
    timeout 20 "$SSH" "${OPTS[@]}" -M -S "$CTL" -N -f 127.0.0.1 >/dev/null 2>"$T/lm-$srv.err" ||
        lh_fail "Longhaul master to $srv: $(cat "$T/lm-$srv.err")"
    lh_wait_until 5 test -S "$CTL" || lh_fail "no control socket from the Longhaul master"
    MPID=$(master_pid "$CTL")
    [ -n "$MPID" ] && LH_PIDS+=("$MPID")

    check_mode() { [ "$(stat -c %a "$CTL")" = 600 ]; }
    lh_check "[$srv] Longhaul master: ControlPath created with mode 0600" check_mode

    check_check() {
        local out rc=0 ref
        out=$("$SSH" -F /dev/null -S "$CTL" -O check 127.0.0.1 2>&1) || rc=$?
        ref=$("$DEBIAN_SSH" -F /dev/null -S "$CTL" -O check 127.0.0.1 2>&1)
        [ "$rc" = 0 ] && [ "$out" = "$(printf 'Master running (pid=%s)\r' "$MPID")" ] && [ "$out" = "$ref" ]
    }
    lh_check "[$srv] -O check: 'Master running (pid=N)', status 0, from Longhaul's and Debian's ssh" check_check

    lh_check "[$srv] Longhaul mux clients: 3+3 concurrent sessions, 3 MiB each way, checksums" data_both_ways "$SSH" "$CTL"
    lh_check "[$srv] Longhaul mux clients: exit statuses 0/1/7/255/42, stdout and stderr apart" statuses "$SSH" "$CTL"
    lh_check "[$srv] Debian's ssh as mux client of Longhaul's master: data both ways" data_both_ways "$DEBIAN_SSH" "$CTL"
    lh_check "[$srv] Debian's ssh as mux client of Longhaul's master: exit statuses" statuses "$DEBIAN_SSH" "$CTL"

    check_one_connection() { [ "$(accepted $srv)" = $((n0 + 1)) ]; }
    lh_check "[$srv] every session went over the master's one connection" check_one_connection

    check_exit() {
        local out rc=0
        out=$("$SSH" -F /dev/null -S "$CTL" -O exit 127.0.0.1 2>&1) || rc=$?
        [ "$rc" = 0 ] && [ "$out" = "$(printf 'Exit request sent.\r')" ] &&
            lh_wait_until 5 gone "$MPID" && ! test -e "$CTL"
    }
    lh_check "[$srv] -O exit: 'Exit request sent.', the master exits and removes its socket" check_exit
done

# -O stop on a Longhaul master: the socket goes, the master stays.
opts deb
CTL=$T/lm-stop
timeout 20 "$SSH" "${OPTS[@]}" -M -S "$CTL" -N -f 127.0.0.1 >/dev/null 2>"$T/lm-stop.err" || lh_fail "master: $(cat "$T/lm-stop.err")"
lh_wait_until 5 test -S "$CTL" || lh_fail "no control socket from the Longhaul master"
MPID=$(master_pid "$CTL")
[ -n "$MPID" ] && LH_PIDS+=("$MPID")
check_stop() {
    local out rc=0
    out=$("$SSH" -F /dev/null -S "$CTL" -O stop 127.0.0.1 2>&1) || rc=$?
    [ "$rc" = 0 ] && [ "$out" = "$(printf 'Stop listening request sent.\r')" ] && ! test -e "$CTL" && kill -0 "$MPID"
}
lh_check "-O stop: 'Stop listening request sent.', the socket is removed, the master stays" check_stop
kill "$MPID" 2>/dev/null || true

check_existing() {
    # A second master on a path in use says so and works without it.
    local out rc=0
    : >"$T/taken"
    out=$(timeout 20 "$SSH" "${OPTS[@]}" -M -S "$T/taken" 127.0.0.1 'echo fine' 2>&1 </dev/null) || rc=$?
    [ "$rc" = 0 ] && [[ "$out" == *"ControlSocket $T/taken already exists, disabling multiplexing"* ]] &&
        [[ "$out" == *fine* ]] || { echo "   rc $rc: $out"; return 1; }
}
lh_check "a master whose ControlPath exists: 'ControlSocket PATH already exists, disabling multiplexing'" check_existing

check_missing() {
    local c out ref rc ref_rc
    for c in check exit stop; do
        rc=0 ref_rc=0
        out=$("$SSH" -F /dev/null -S "$T/none" -O $c 127.0.0.1 2>&1) || rc=$?
        ref=$("$DEBIAN_SSH" -F /dev/null -S "$T/none" -O $c 127.0.0.1 2>&1) || ref_rc=$?
        [ "$rc" = 255 ] && [ "$ref_rc" = 255 ] && [ "$out" = "$ref" ] &&
            [[ "$out" == "Control socket connect($T/none): No such file or directory"* ]] ||
            { echo "   -O $c: $rc '$out' vs $ref_rc '$ref'"; return 1; }
    done
}
lh_check "-O check/exit/stop without a master: Debian's message and status 255" check_missing

# ------------------------------------------------ (c): Debian's master
for srv in deb lh; do
    opts $srv
    CTL=$T/dm-$srv
    n0=$(accepted $srv)
    timeout 20 "$DEBIAN_SSH" "${OPTS[@]}" -M -S "$CTL" -f -N 127.0.0.1 >/dev/null 2>"$T/dm.err" ||
        lh_fail "Debian's master: $(cat "$T/dm.err")"
    lh_wait_until 5 test -S "$CTL" || lh_fail "no control socket from Debian's master"
    MPID=$(master_pid "$CTL")
    [ -n "$MPID" ] && LH_PIDS+=("$MPID")
    check_dcheck() {
        local out rc=0
        out=$("$SSH" -F /dev/null -S "$CTL" -O check 127.0.0.1 2>&1) || rc=$?
        [ "$rc" = 0 ] && [ "$out" = "$(printf 'Master running (pid=%s)\r' "$MPID")" ]
    }
    lh_check "[$srv] Longhaul's -O check against Debian's master" check_dcheck
    lh_check "[$srv] Longhaul mux clients of Debian's master: data both ways" data_both_ways "$SSH" "$CTL"
    lh_check "[$srv] Longhaul mux clients of Debian's master: exit statuses" statuses "$SSH" "$CTL"
    check_one_connection() { [ "$(accepted $srv)" = $((n0 + 1)) ]; }
    lh_check "[$srv] Debian's master: one connection for all of them" check_one_connection
    check_dexit() {
        local out rc=0
        out=$("$SSH" -F /dev/null -S "$CTL" -O exit 127.0.0.1 2>&1) || rc=$?
        [ "$rc" = 0 ] && [ "$out" = "$(printf 'Exit request sent.\r')" ] && lh_wait_until 5 gone "$MPID"
    }
    lh_check "[$srv] Longhaul's -O exit ends Debian's master" check_dexit
done

# ------------------------------------------------ (d): auto + ControlPersist
for srv in deb lh; do
    opts $srv
    persist=(-o ControlMaster=auto -o "ControlPath=$T/cp-%C" -o ControlPersist=2)
    n0=$(accepted $srv)
    check_persist() {
        local out rc=0 t0=$EPOCHREALTIME ctl pid
        out=$(timeout 20 "$SSH" "${OPTS[@]}" "${persist[@]}" 127.0.0.1 'echo first; exit 3' </dev/null) || rc=$?
        [ "$rc" = 3 ] && [ "$out" = first ] || { echo "   first call: rc $rc, '$out'"; return 1; }
        ctl=$(ls "$T"/cp-* 2>/dev/null | head -n 1)
        [ -S "$ctl" ] || { echo "   no control socket after the first call"; return 1; }
        pid=$(master_pid "$ctl")
        [ -n "$pid" ] && LH_PIDS+=("$pid")
        rc=0
        out=$(timeout 20 "$SSH" "${OPTS[@]}" "${persist[@]}" 127.0.0.1 'echo second' </dev/null) || rc=$?
        [ "$rc" = 0 ] && [ "$out" = second ] || { echo "   second call: rc $rc, '$out'"; return 1; }
        [ "$(accepted $srv)" = $((n0 + 1)) ] || { echo "   $(($(accepted $srv) - n0)) connections"; return 1; }
        # Idle for 2 s: the master leaves and removes its socket.
        lh_wait_until 8 gone "$pid" && ! test -e "$ctl" || { echo "   master still there"; return 1; }
    }
    lh_check "[$srv] ControlMaster auto + ControlPersist 2: one connection, the master leaves when idle" check_persist
done

# ------------------------------------------------ (e): forwarding through a master
# echoed PORT: the data through a TCP connection to PORT comes back intact.
echoed() {
    local sum
    sum=$(timeout 30 python3 "$HERE/tcp_pipe.py" "$1" <"$T/data" | sha256sum | cut -d' ' -f1)
    [ "$sum" = "$SUM" ] || { echo "   port $1: the echo differs"; return 1; }
}
# new_master IMPL CTL: a master (Longhaul's or Debian's) on server deb; sets MPID.
new_master() {
    local bin=$SSH
    [ "$1" = deb ] && bin=$DEBIAN_SSH
    opts deb
    timeout 20 "$bin" "${OPTS[@]}" -M -S "$2" -f -N 127.0.0.1 >/dev/null 2>"$T/fm.err" ||
        lh_fail "$1 master: $(cat "$T/fm.err")"
    lh_wait_until 5 test -S "$2" || lh_fail "no control socket from the $1 master"
    MPID=$(master_pid "$2")
    [ -n "$MPID" ] && LH_PIDS+=("$MPID")
}
for m in lh deb; do
    for c in lh deb; do
        CTL=$T/fwd-$m-$c
        new_master $m "$CTL"
        C=$SSH
        [ $c = deb ] && C=$DEBIAN_SSH
        tag="[$m master, $c client]"
        lh_port LP
        lh_port DP
        n0=$(accepted deb)
        check_fwd_local() {
            local rc=0
            "$C" -F /dev/null -S "$CTL" -O forward -L "$LP:127.0.0.1:$ECHO_PORT" 127.0.0.1 >"$T/o" 2>"$T/e" || rc=$?
            [ "$rc" = 0 ] && [ ! -s "$T/o" ] || { echo "   rc $rc: $(cat "$T/o" "$T/e")"; return 1; }
            echoed "$LP"
        }
        lh_check "$tag -O forward -L: status 0, 3 MiB echoed through it" check_fwd_local
        check_fwd_remote() {
            local rc=0 port again
            port=$("$C" -F /dev/null -S "$CTL" -O forward -R "0:127.0.0.1:$ECHO_PORT" 127.0.0.1 2>"$T/e") || rc=$?
            [ "$rc" = 0 ] && [[ $port =~ ^[0-9]+$ ]] || { echo "   rc $rc: '$port' $(cat "$T/e")"; return 1; }
            again=$("$C" -F /dev/null -S "$CTL" -O forward -R "0:127.0.0.1:$ECHO_PORT" 127.0.0.1 2>"$T/e")
            [ "$again" = "$port" ] || { echo "   asked again: '$again' (first $port)"; return 1; }
            echoed "$port"
        }
        lh_check "$tag -O forward -R 0: the allocated port on stdout (the same when asked again), echoed" check_fwd_remote
        check_fwd_dynamic() {
            local rc=0 sum
            "$C" -F /dev/null -S "$CTL" -O forward -D "$DP" 127.0.0.1 2>"$T/e" || rc=$?
            [ "$rc" = 0 ] || { echo "   rc $rc: $(cat "$T/e")"; return 1; }
            sum=$(timeout 30 python3 "$HERE/socks_client.py" "$DP" 127.0.0.1 "$ECHO_PORT" <"$T/data" | sha256sum | cut -d' ' -f1)
            [ "$sum" = "$SUM" ] || { echo "   the echo through SOCKS5 differs"; return 1; }
        }
        lh_check "$tag -O forward -D: SOCKS5 through it, echoed" check_fwd_dynamic
        check_cancel() {
            local rc=0 out
            "$C" -F /dev/null -S "$CTL" -O cancel -L "$LP:127.0.0.1:$ECHO_PORT" 127.0.0.1 2>"$T/e" || rc=$?
            [ "$rc" = 0 ] || { echo "   rc $rc: $(cat "$T/e")"; return 1; }
            lh_wait_until 5 eval '! accepts $LP' || { echo "   port $LP still listening"; return 1; }
            rc=0
            out=$("$C" -F /dev/null -S "$CTL" -O cancel -L "$LP:127.0.0.1:$ECHO_PORT" 127.0.0.1 2>&1) || rc=$?
            [ "$rc" = 0 ] && [[ "$out" == *"forwarding request failed: port not forwarded"* ]] &&
                [[ "$out" == *"master cancel forward request failed"* ]] || { echo "   again: rc $rc: $out"; return 1; }
            "$C" -F /dev/null -S "$CTL" -O cancel -D "$DP" 127.0.0.1 2>"$T/e" || { echo "   -D: $(cat "$T/e")"; return 1; }
            lh_wait_until 5 eval '! accepts $DP' || { echo "   port $DP still listening"; return 1; }
        }
        lh_check "$tag -O cancel -L and -D: the listeners close; a second cancel: 'port not forwarded', status 0" check_cancel
        check_stdio() {
            local sum rc=0 out
            sum=$(timeout 30 "$C" -F /dev/null -S "$CTL" -W "127.0.0.1:$ECHO_PORT" 127.0.0.1 <"$T/data" | sha256sum | cut -d' ' -f1)
            [ "$sum" = "$SUM" ] || { echo "   -W: the echo differs"; return 1; }
            out=$(timeout 20 "$C" -F /dev/null -S "$CTL" -W "127.0.0.1:$CLOSED_PORT" 127.0.0.1 2>&1 </dev/null) || rc=$?
            [ "$rc" = 255 ] && [[ "$out" == *"Stdio forwarding request failed: Session open refused by peer"* ]] ||
                { echo "   closed port: rc $rc: $out"; return 1; }
        }
        lh_check "$tag -W through the master: 3 MiB echoed; a refused target: Debian's message, status 255" check_stdio
        check_proxy_command() {
            local out rc=0
            opts deb
            out=$(timeout 30 "$C" "${OPTS[@]}" -o "ProxyCommand=$C -F /dev/null -S $CTL -W %h:%p 127.0.0.1" \
                127.0.0.1 'echo through-the-master' </dev/null 2>"$T/e") || rc=$?
            [ "$rc" = 0 ] && [ "$out" = through-the-master ] || { echo "   rc $rc: '$out' $(cat "$T/e")"; return 1; }
        }
        lh_check "$tag a login through ProxyCommand 'ssh -S path -W %h:%p'" check_proxy_command
        check_session_forward() {
            local out rc=0 lp2
            lh_port lp2
            out=$(timeout 20 "$C" -F /dev/null -S "$CTL" -L "$lp2:127.0.0.1:$ECHO_PORT" 127.0.0.1 'echo ran' </dev/null 2>"$T/e") ||
                rc=$?
            [ "$rc" = 0 ] && [ "$out" = ran ] || { echo "   rc $rc: '$out' $(cat "$T/e")"; return 1; }
            echoed "$lp2"
        }
        lh_check "$tag -L with a command: the forward added to the master, the session run, echoed after it" check_session_forward
        lh_check "$tag no login but the ProxyCommand one: the rest went over the master" eval '[ "$(accepted deb)" = $((n0 + 1)) ]'
        "$SSH" -F /dev/null -S "$CTL" -O exit 127.0.0.1 >/dev/null 2>&1 || true
        lh_wait_until 5 gone "$MPID" || kill "$MPID" 2>/dev/null || true
    done
done

for srv in deb lh; do
    opts $srv
    persist=(-o ControlMaster=auto -o "ControlPath=$T/cw-%C" -o ControlPersist=3)
    n0=$(accepted $srv)
    check_persist_stdio() {
        local sum ctl pid
        sum=$(timeout 30 "$SSH" "${OPTS[@]}" "${persist[@]}" -W "127.0.0.1:$ECHO_PORT" 127.0.0.1 <"$T/data" | sha256sum | cut -d' ' -f1)
        [ "$sum" = "$SUM" ] || { echo "   first -W: the echo differs"; return 1; }
        ctl=$(ls "$T"/cw-* 2>/dev/null | head -n 1)
        [ -S "$ctl" ] || { echo "   no control socket after the first call"; return 1; }
        pid=$(master_pid "$ctl")
        [ -n "$pid" ] && LH_PIDS+=("$pid")
        sum=$(timeout 30 "$DEBIAN_SSH" "${OPTS[@]}" "${persist[@]}" -W "127.0.0.1:$ECHO_PORT" 127.0.0.1 <"$T/data" | sha256sum | cut -d' ' -f1)
        [ "$sum" = "$SUM" ] || { echo "   second -W (Debian's ssh): the echo differs"; return 1; }
        [ "$(accepted $srv)" = $((n0 + 1)) ] || { echo "   $(($(accepted $srv) - n0)) logins"; return 1; }
        lh_wait_until 10 gone "$pid" && ! test -e "$ctl" || { echo "   master still there"; return 1; }
    }
    lh_check "[$srv] ControlPersist with -W: the first call forwards through the master it forks, Debian's ssh reuses it" check_persist_stdio
done

check_fork_stdout() {
    # "ssh -f" goes to the background holding none of its caller's stdio,
    # so a command substitution around it returns (as with OpenSSH).
    local lp pid out
    opts deb
    lh_port lp
    out=$(timeout 20 "$SSH" "${OPTS[@]}" -f -N -L "$lp:127.0.0.1:$ECHO_PORT" 127.0.0.1; echo returned) ||
        { echo "   the substitution did not return: '$out'"; return 1; }
    [ "$out" = returned ] || { echo "   '$out'"; return 1; }
    lh_wait_until 5 accepts "$lp" || { echo "   no listener"; return 1; }
    echoed "$lp" || return 1
    pid=$(ss -Htlnp "sport = :$lp" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)
    [ -n "$pid" ] && kill "$pid"
}
lh_check "ssh -f -N -L: the caller's stdout is let go (\$(ssh -f ...) returns), the forward works" check_fork_stdout

# ------------------------------------------------ (f): ControlMaster ask
# The stand-in askpass: logs its prompt and hint, answers what $T/answer says.
cat >"$T/askpass" <<'ASK'
#!/bin/sh
printf '%s|%s\n' "$1" "$SSH_ASKPASS_PROMPT" >>"$ASKPASS_LOG"
cat "$ASKPASS_ANSWER"
ASK
chmod +x "$T/askpass"
for m in lh deb; do
    bin=$SSH
    [ $m = deb ] && bin=$DEBIAN_SSH
    opts deb
    CTL=$T/ask-$m
    export ASKPASS_LOG=$T/ask-$m.log ASKPASS_ANSWER=$T/answer
    : >"$ASKPASS_LOG"
    echo no >"$T/answer"
    # The master is the one that asks: it gets the display and the program.
    DISPLAY=:99 SSH_ASKPASS=$T/askpass SSH_ASKPASS_REQUIRE=force \
        timeout 20 "$bin" "${OPTS[@]}" -o ControlMaster=ask -S "$CTL" -f -N 127.0.0.1 >/dev/null 2>"$T/am.err" ||
        lh_fail "$m master (ask): $(cat "$T/am.err")"
    lh_wait_until 5 test -S "$CTL" || lh_fail "no control socket from the $m master (ask)"
    MPID=$(master_pid "$CTL")
    [ -n "$MPID" ] && LH_PIDS+=("$MPID")
    n0=$(accepted deb)
    check_ask_no() {
        local out rc=0 lp
        # A refused session: the mux client logs in by itself.
        out=$(timeout 20 "$SSH" "${OPTS[@]}" -S "$CTL" 127.0.0.1 'echo ran' </dev/null 2>"$T/e") || rc=$?
        [ "$rc" = 0 ] && [ "$out" = ran ] && grep -q "Master refused session request: Permission denied" "$T/e" &&
            [ "$(accepted deb)" = $((n0 + 1)) ] || { echo "   session: rc $rc '$out' $(cat "$T/e")"; return 1; }
        lh_port lp
        rc=0
        out=$("$SSH" -F /dev/null -S "$CTL" -O forward -L "$lp:127.0.0.1:$ECHO_PORT" 127.0.0.1 2>&1) || rc=$?
        [ "$rc" = 255 ] && [[ "$out" == *"Master refused forwarding request: Permission denied"* ]] &&
            ! accepts "$lp" || { echo "   -O forward: rc $rc: $out"; return 1; }
        rc=0
        out=$("$SSH" -F /dev/null -S "$CTL" -O exit 127.0.0.1 2>&1) || rc=$?
        [ "$rc" = 255 ] && [[ "$out" == *"Master refused termination request: Permission denied"* ]] &&
            kill -0 "$MPID" || { echo "   -O exit: rc $rc: $out"; return 1; }
    }
    lh_check "[$m master] ControlMaster ask, answered no: session, forward and exit refused as Debian's master refuses them" check_ask_no
    check_ask_yes() {
        local out rc=0 lp
        echo yes >"$T/answer"
        n0=$(accepted deb)
        out=$(timeout 20 "$DEBIAN_SSH" -F /dev/null -S "$CTL" 127.0.0.1 'echo ran' </dev/null 2>"$T/e") || rc=$?
        [ "$rc" = 0 ] && [ "$out" = ran ] && [ "$(accepted deb)" = "$n0" ] || { echo "   session: rc $rc '$out'"; return 1; }
        lh_port lp
        "$DEBIAN_SSH" -F /dev/null -S "$CTL" -O forward -L "$lp:127.0.0.1:$ECHO_PORT" 127.0.0.1 2>"$T/e" ||
            { echo "   -O forward: $(cat "$T/e")"; return 1; }
        echoed "$lp" || return 1
        sum=$(timeout 30 "$SSH" -F /dev/null -S "$CTL" -W "127.0.0.1:$ECHO_PORT" 127.0.0.1 <"$T/data" | sha256sum | cut -d' ' -f1)
        [ "$sum" = "$SUM" ] || { echo "   -W: the echo differs"; return 1; }
        "$SSH" -F /dev/null -S "$CTL" -O exit 127.0.0.1 >/dev/null 2>&1 && lh_wait_until 5 gone "$MPID" ||
            { echo "   -O exit did not end the master"; return 1; }
    }
    lh_check "[$m master] ControlMaster ask, answered yes: session, -O forward, -W and -O exit go through" check_ask_yes
done
check_ask_prompts() {
    # Each master asked the same questions, hinted "confirm".
    sed "s/$ECHO_PORT/ECHO/g; s/:[0-9]* -> /:N -> /" "$T/ask-lh.log" >"$T/ask-lh.norm"
    sed "s/$ECHO_PORT/ECHO/g; s/:[0-9]* -> /:N -> /" "$T/ask-deb.log" >"$T/ask-deb.norm"
    diff "$T/ask-deb.norm" "$T/ask-lh.norm" >"$T/ask.diff" && [ -s "$T/ask-lh.norm" ] ||
        { echo "   Debian's master asked (<) / Longhaul's (>):"; sed 's/^/     /' "$T/ask.diff"; return 1; }
    grep -q '^Allow shared connection to 127.0.0.1? |confirm$' "$T/ask-lh.log" || return 1
    sed 's/^/     /' "$T/ask-lh.log"
}
lh_check "ControlMaster ask: Longhaul's master asks Debian's master's questions, word for word" check_ask_prompts

lh_summary
