#!/usr/bin/env bash
# PerSourcePenalties and PerSourcePenaltyExemptList (OpenSSH 9.8+), each
# check run against Longhaul's sshd and, as the control, OpenSSH 10.5's
# (../shared/peers) with the same configuration:
#  - a source is refused at accept time (before the banner, with OpenSSH's
#    note and log lines) after a failed login, and accepted again once the
#    short penalty has run out;
#  - naming a user that does not exist, and LoginGraceTime passing, are
#    penalised with their own reasons;
#  - a source in PerSourcePenaltyExemptList, and any source under
#    "PerSourcePenalties no", is never refused;
#  - sshd -T prints the settings as OpenSSH 10.5 does.
# Servers listen on 127.0.0.1 ports from lh_port, are stopped by PID, and
# everything they write is under the test's temporary directory. Needs root
# (sshd's privilege separation and the peer's).
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LSSHD=$BUILD/bin/sshd
[ -x "$LSSHD" ] || lh_fail "not built: $LSSHD"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
[ "$(id -u)" = 0 ] || lh_skip "needs root (sshd's privilege separation)"
T=$LH_TMP
chmod 755 "$T"

peers=${LH_PEERS_DIR:-$(dirname "$0")/../../shared/peers}
peers=$(cd "$peers" 2>/dev/null && pwd) || peers=${LH_PEERS_DIR:-../shared/peers}
O10=$(printf '%s\n' "$peers"/openssh-10* 2>/dev/null | sort -V | tail -n1)
have_o10=0
[[ -n $O10 && -x $O10/sbin/sshd && -x $O10/libexec/sshd-session && -x $O10/libexec/sshd-auth ]] &&
    getent passwd sshd >/dev/null && have_o10=1
if [ "$have_o10" = 1 ]; then
    # (/var/empty is left in place when made here, as pq_kex_interop.sh
    # and wan_lib.sh leave it: standard, empty, possibly in use elsewhere.)
    [ -d /var/empty ] || { mkdir -p /var/empty && chmod 755 /var/empty; }
fi

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C good -f "$T/id_good"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C bad -f "$T/id_bad"
cp "$T/id_good.pub" "$T/authorized_keys"
chmod 644 "$T/authorized_keys"

# Short penalties: one failed login (3 s) is past min (1 s) at once. noauth
# is 0 so that the probes below (a banner read, lh_start_sshd's own
# readiness check) add nothing.
PEN="PerSourcePenalties authfail:3s invaliduser:3s noauth:0 grace-exceeded:3s min:1s"
# The LoginGraceTime server's penalty is longer: it starts only once the
# grace time ran out (OpenSSH 10.5 acts up to 3 s after it), and the next
# connection must still find it under a loaded machine.
PEN_GRACE="PerSourcePenalties authfail:3s invaliduser:3s noauth:0 grace-exceeded:10s min:1s"

# start IMPL NAME PORTVAR [sshd_config lines...]: Longhaul's sshd (IMPL
# longhaul) or OpenSSH 10.5's (openssh10) in $T/IMPL-NAME.
start() {
    local impl=$1 name=$2 var=$3 dir=$T/$1-$2
    shift 3
    mkdir -p "$dir"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$dir/"
    lh_port "$var"
    if [ "$impl" = longhaul ]; then
        LH_SSHD=$LSSHD lh_start_sshd "$dir" "${!var}" "$@"
    else
        # lh_start_sshd's configuration without "UsePAM no": this build has
        # no PAM, and with the "Unsupported option" error in its
        # configuration OpenSSH 10.5's sshd-session never enforces
        # LoginGraceTime (seen here).
        lh_write_sshd_config "$dir" "${!var}" "SshdSessionPath $O10/libexec/sshd-session" \
            "SshdAuthPath $O10/libexec/sshd-auth" "$@"
        sed -i '/^UsePAM /d' "$dir/sshd_config"
        "$O10/sbin/sshd" -t -f "$dir/sshd_config" || lh_fail "OpenSSH 10.5's sshd -t rejected the test config"
        "$O10/sbin/sshd" -D -e -f "$dir/sshd_config" 2>"$dir/sshd.log" &
        LH_PIDS+=($!)
        lh_wait_until 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "${!var}" 2>/dev/null ||
            { cat "$dir/sshd.log" >&2; lh_fail "OpenSSH 10.5's sshd did not start on port ${!var}"; }
    fi
    lh_known_hosts "$dir" "${!var}"
}

# banner PORT: the first line the server sends (without CR), empty if none.
banner() {
    timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && head -n1 <&3' _ "$1" 2>/dev/null | tr -d '\r' || true
}
# login DIR PORT KEY USER: OpenSSH's ssh runs `true`.
login() {
    timeout 20 ssh -F /dev/null -p "$2" -o "UserKnownHostsFile=$1/known_hosts.$2" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$3" "$4@127.0.0.1" true 2>"$1/ssh.err"
}
# failed_login DIR PORT [USER]: a login with a key that is not authorised.
failed_login() {
    if login "$1" "$2" "$T/id_bad" "${3:-root}"; then
        echo "  the unauthorised key logged in"
        return 1
    fi
    grep -q "Permission denied" "$1/ssh.err" || { echo "  ssh said: $(cat "$1/ssh.err")"; return 1; }
}
# refused PORT LOG REASON: the next connection is closed before the banner,
# with OpenSSH's note, and the listener logs why.
refused() {
    local port=$1 log=$2 reason=$3 b
    b=$(banner "$port")
    [ "$b" = "Not allowed at this time" ] || { echo "  first line while penalised: '$b'"; return 1; }
    lh_wait_until 5 in_log "$log" -E "^drop connection #[0-9]+ from \[127\.0\.0\.1\]:[0-9]+ on \[127\.0\.0\.1\]:$port $reason\$" ||
        { echo "  no drop line for '$reason' in the log:"; tail -n 8 "$log" | sed 's/^/    /'; return 1; }
}
# in_log LOG GREP-ARGS...: grep -q over the log without CRs (OpenSSH's
# sshd -e ends its lines with CR LF).
in_log() {
    local log=$1
    shift
    tr -d '\r' <"$log" | lh_matches "$@"
}
# accepted PORT: the server sends its version line.
accepted() {
    local b
    b=$(banner "$1")
    [[ $b == SSH-2.0-* ]] || { echo "  first line: '$b'"; return 1; }
}
# penalty_line LOG REASON SECONDS: the listener logged the new penalty as
# OpenSSH 10.5 words it.
penalty_line() {
    lh_wait_until 5 in_log "$1" -F "srclimit_penalise: ipv4: new 127.0.0.1/32 active penalty of $3 seconds for $2" ||
        { echo "  no penalty line in the log:"; tail -n 8 "$1" | sed 's/^/    /'; return 1; }
}

check_authfail() {
    local impl=$1 port=$2 dir=$T/$1-pen
    failed_login "$dir" "$port" || return 1
    penalty_line "$dir/sshd.log" "penalty: failed authentication" 3.000 || return 1
    refused "$port" "$dir/sshd.log" "penalty: failed authentication" || return 1
    # The penalty is 3 s: accepted again once it has run out, and the
    # authorised key logs in.
    sleep 3.5
    accepted "$port" || return 1
    login "$dir" "$port" "$T/id_good" root || { echo "  login after expiry: $(cat "$dir/ssh.err")"; return 1; }
}

check_invalid_user() {
    local impl=$1 port=$2 dir=$T/$1-pen
    failed_login "$dir" "$port" "nosuchuser$$" || return 1
    penalty_line "$dir/sshd.log" "penalty: attempted authentication by invalid user" 3.000 || return 1
    refused "$port" "$dir/sshd.log" "penalty: attempted authentication by invalid user" || return 1
    sleep 3.5
    accepted "$port"
}

check_grace() {
    local impl=$1 port=$2 dir=$T/$1-grace
    # Connect and say nothing past LoginGraceTime (1 s); once the penalty
    # is logged, the next connection is refused.
    # (OpenSSH 10.5 takes up to about 3 s to act on a 1 s LoginGraceTime.)
    timeout 10 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && sleep 6' _ "$port" &
    local holder=$!
    lh_wait_until 8 in_log "$dir/sshd.log" -F "penalty of 10.000 seconds for penalty: exceeded LoginGraceTime" || true
    penalty_line "$dir/sshd.log" "penalty: exceeded LoginGraceTime" 10.000 || { kill "$holder" 2>/dev/null; return 1; }
    refused "$port" "$dir/sshd.log" "penalty: exceeded LoginGraceTime" || { kill "$holder" 2>/dev/null; return 1; }
    kill "$holder" 2>/dev/null || true
    wait "$holder" 2>/dev/null || true
}

# never_refused IMPL NAME PORT: failed logins, yet connections and logins go on.
never_refused() {
    local impl=$1 port=$3 dir=$T/$1-$2 i
    for i in 1 2 3; do
        failed_login "$dir" "$port" || return 1
    done
    accepted "$port" || return 1
    login "$dir" "$port" "$T/id_good" root || { echo "  login: $(cat "$dir/ssh.err")"; return 1; }
    if tr -d '\r' <"$dir/sshd.log" | grep -E "srclimit_penalise|drop connection"; then
        echo "  (logged above: a penalty where none belongs)"
        return 1
    fi
}

impls=(longhaul)
if [ "$have_o10" = 1 ]; then
    impls+=(openssh10)
else
    lh_skip_check "OpenSSH 10.5 control" "no OpenSSH 10.5 peer in $peers (or no 'sshd' user)"
fi

for impl in "${impls[@]}"; do
    start "$impl" pen port_pen "$PEN"
    start "$impl" grace port_grace "$PEN_GRACE" "LoginGraceTime 1"
    start "$impl" exempt port_exempt "$PEN" "PerSourcePenaltyExemptList 10.0.0.0/8,127.0.0.1"
    start "$impl" off port_off "PerSourcePenalties no"
    lh_check "$impl: refused at accept after a failed login, accepted again after the 3 s penalty" \
        check_authfail "$impl" "$port_pen"
    lh_check "$impl: an invalid user is penalised for it" check_invalid_user "$impl" "$port_pen"
    lh_check "$impl: LoginGraceTime exceeded is penalised" check_grace "$impl" "$port_grace"
    lh_check "$impl: a source in PerSourcePenaltyExemptList is never refused" \
        never_refused "$impl" exempt "$port_exempt"
    lh_check "$impl: PerSourcePenalties no never refuses" never_refused "$impl" off "$port_off"
done

# The lines both servers logged for the same events, ports aside.
check_same_log_lines() {
    local a b
    a=$(tr -d '\r' <"$T/longhaul-pen/sshd.log" | grep -E "srclimit_penalise: ipv4: new|^drop connection" | sed -E 's/:[0-9]+ on/:P on/; s/\]:[0-9]+ penalty/]:P penalty/')
    b=$(tr -d '\r' <"$T/openssh10-pen/sshd.log" | grep -E "srclimit_penalise: ipv4: new|^drop connection" | sed -E 's/:[0-9]+ on/:P on/; s/\]:[0-9]+ penalty/]:P penalty/')
    [ -n "$a" ] && [ "$a" = "$b" ] || { diff <(echo "$b") <(echo "$a") | sed 's/^/  /'; return 1; }
}
[ "$have_o10" = 1 ] && lh_check "penalty and drop log lines are OpenSSH 10.5's" check_same_log_lines

# sshd -T: the same values as OpenSSH 10.5 (which spells the keywords in
# mixed case) for the same configuration, and the same refusals.
check_dump() {
    local cfg n=0 l o
    for cfg in "PerSourcePenalties no" "PerSourcePenalties yes" "$PEN" \
        "PerSourcePenalties authfail:1.5 max:1h30m overflow:deny-all max-sources6:5" \
        "PerSourcePenalties overflow6:permissive overflow:deny-all crash:0 max-sources4:10" \
        "PerSourcePenaltyExemptList 10.0.0.0/8,!10.1.0.0/16,::1
PerSourcePenalties yes" \
        "PerSourcePenalties bogus:1" "PerSourcePenalties authfail:2.5m" "PerSourcePenalties yes authfail:1" \
        "PerSourcePenalties max-sources4:-1" "PerSourcePenaltyExemptList 10.0.0.0/33"; do
        n=$((n + 1))
        printf '%s\nHostKey %s\n' "$cfg" "$T/ssh_host_ed25519_key" >"$T/dump$n.cfg"
        l=$("$LSSHD" -T -f "$T/dump$n.cfg" 2>&1 | tr -d '\r' | grep -iE '^persourcepenalt|line 1' | tr 'A-Z' 'a-z' | sort)
        o=$("$O10/sbin/sshd" -T -f "$T/dump$n.cfg" -o "SshdSessionPath $O10/libexec/sshd-session" \
            -o "SshdAuthPath $O10/libexec/sshd-auth" 2>&1 | tr -d '\r' | grep -iE '^persourcepenalt|line 1' |
            tr 'A-Z' 'a-z' | sort)
        [ -n "$l" ] && [ "$l" = "$o" ] || { echo "  $cfg:"; diff <(echo "$o") <(echo "$l") | sed 's/^/    /'; return 1; }
    done
}
[ "$have_o10" = 1 ] && lh_check "sshd -T prints the settings (and refuses bad ones) as OpenSSH 10.5 does" check_dump

lh_summary
