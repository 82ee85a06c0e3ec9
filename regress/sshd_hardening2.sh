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
# 10. settings this sshd cannot enforce are refused by sshd -t and sshd;
#     those it implements work (RequiredRSASize, UnusedConnectionTimeout,
#     PerSourceMaxStartups/PerSourceNetBlockSize, Match LogLevel); Debian's
#     stock sshd_config still loads.
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

# known_hosts_for PORT: $T/known_hosts.PORT for the servers' host keys.
known_hosts_for() { lh_known_hosts "$T" "$1"; }
# ssh_to PORT KEY [ssh args...]: OpenSSH's ssh as the test user with one key.
ssh_to() { lh_ssh_to "$T" "$@"; }
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
# new_server_match NAME PORTVAR "MATCH LINES" [sshd_config lines...]: as
# new_server, with the Match lines (newline-separated) at the end of the
# configuration (LH_SSHD_TAIL).
new_server_match() {
    local name=$1 var=$2 tail=$3 dir=$T/$1
    shift 3
    mkdir -p "$dir"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$dir/"
    lh_port "$var"
    # lh_start_sshd's configuration, then extended and checked.
    LH_SSHD_TAIL=$tail lh_write_sshd_config "$dir" "${!var}" "$@"
    "$LH_SSHD" -t -f "$dir/sshd_config" || lh_fail "sshd -t rejected the test config"
    "$LH_SSHD" -D -e -f "$dir/sshd_config" 2>"$dir/sshd.log" &
    LH_PIDS+=($!)
    lh_wait_until 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/${!var}" 2>/dev/null || lh_fail "sshd did not start on ${!var}"
    known_hosts_for "${!var}"
}
askpass=$(lh_askpass)
# want N: whether defect N's checks run (LH_ONLY="5 7" runs only those; for
# reproducing one defect quickly).
want() { [ -z "${LH_ONLY:-}" ] || [[ " $LH_ONLY " == *" $1 "* ]]; }
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
if want 5; then
rss_bound_kib=$((64 * 1024))
# Under AddressSanitizer (CI's asan stage) a process carries shadow memory
# and a quarantine of freed blocks on top of what it holds: a smaller
# quarantine and a wider bound. The flood still cannot pass it unless
# reading never pauses (then the server takes hundreds of MiB in 20 s).
# (grep without -q: an early exit would kill nm with SIGPIPE, and pipefail
# would turn a match into a failure; clang links ASan statically, so nm's
# output is large.)
if nm -D "$LH_SSHD" 2>/dev/null | grep -c __asan_init >/dev/null || ldd "$LH_SSHD" 2>/dev/null | grep -c libasan >/dev/null; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
    rss_bound_kib=$((192 * 1024))
    echo "  sshd is built with AddressSanitizer: RSS bound $((rss_bound_kib / 1024)) MiB"
fi
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
# flood_check MODE ARGS...: runs the prober for up to 20 s (it stops 3 s
# after the server stopped reading; a server that keeps reading gets all
# 20 s); fails if the server grew past the bound.
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
    # The server stopped reading: what the prober got into the socket is
    # bounded too (without the pause it is whatever 20 s of CPU can parse).
    local sent
    sent=$(sed -n 's/^sent \([0-9]*\) bytes.*/\1/p' "$out" | head -1)
    [ -n "$sent" ] && [ "$sent" -lt $((128 << 20)) ] && [ "$peak" -gt 0 ] && [ "$peak" -lt "$rss_bound_kib" ]
}
# Control: the limits do not get in the way of bulk output to a client that reads.
check_bulk_output() {
    local n
    n=$(ssh_to "$port_flood" "$T/id_user" "$user@127.0.0.1" 'head -c 67108864 /dev/zero' | wc -c)
    [ "$n" = 67108864 ] || { echo "  got $n bytes"; return 1; }
}
lh_check "5. 64 MiB of session output reach a client that reads (control)" check_bulk_output
lh_check "5. a client that floods before authentication and never reads: connection RSS bounded" \
    flood_check flood-preauth "$port_flood" 20
lh_check "5. a client that floods after authentication and never reads: connection RSS bounded" \
    flood_check flood-postauth "$port_flood" "$user" "$pw" 20
fi

# ---------------------------------------------------------------- PAM service
# A PAM service of our own, named after the sshd binary as OpenSSH names it
# (__progname). Without PAM the PAM checks are skipped (recorded).
pam_missing=
[ -d /etc/pam.d ] || pam_missing="no /etc/pam.d (PAM)"
[ -n "$pam_missing" ] || [ -e /lib/x86_64-linux-gnu/security/pam_exec.so ] ||
    [ -n "$(find / -xdev -name pam_exec.so -print -quit 2>/dev/null)" ] ||
    pam_missing="pam_exec.so not installed (libpam-modules)"
service="sshd-lhtest2-$$"
if [ -z "$pam_missing" ]; then
    mkdir -p "$T/bin"
    ln -s "$BUILD/bin/sshd" "$T/bin/$service"
    # Records each pam_open_session / pam_close_session (PAM_TYPE).
    printf '#!/bin/sh\necho "$PAM_TYPE $PAM_USER" >>"%s/pam-sessions"\nexit 0\n' "$T" >"$T/session-hook.sh"
    chmod 755 "$T/session-hook.sh"
    LH_CLEANUP_FILES+=("/etc/pam.d/$service")
    {
        echo "# Longhaul regress/sshd_hardening2.sh (pid $$); removed when the test ends."
        echo "auth     required pam_unix.so"
        echo "account  required pam_unix.so"
        echo "session  required pam_unix.so"
        echo "session  optional pam_exec.so quiet $T/session-hook.sh"
        echo "password required pam_unix.so"
    } >"/etc/pam.d/$service"
fi
# new_pam_server NAME PORTVAR [sshd_config lines...]
new_pam_server() {
    local name=$1 var=$2
    shift 2
    LH_SSHD=$T/bin/$service new_server "$name" "$var" "UsePAM yes" "$@"
}

# ---------------------------------------------------------------- 6. abandoned PAM conversation
# keyboard-interactive is started, and at its prompts the client sends a
# signed publickey request instead. The account check after the publickey
# success used to wait in select() for the abandoned conversation, with no
# timeout: the connection hung (and held a MaxStartups slot) until
# LoginGraceTime, or for ever with LoginGraceTime 0.
if ! want 6; then
    :
elif [ -n "$pam_missing" ]; then
    lh_skip_check "6. an abandoned PAM conversation does not hang the login" "$pam_missing"
else
    new_pam_server pam6 port_pam6 "KbdInteractiveAuthentication yes" "PasswordAuthentication yes" "LoginGraceTime 0"
    check_abandoned_kbdint() {
        "$PROBER" kbdint-abandon "$port_pam6" "$user" "$T/id_user" >"$T/abandon.out" 2>&1
        echo "  $(paste -sd' ' "$T/abandon.out" | cut -c1-200)"
        grep -qx "result: authenticated" "$T/abandon.out" &&
            [ "$(awk '/^elapsed_ms/ {print $2}' "$T/abandon.out")" -lt 10000 ]
    }
    lh_check "6. publickey after an abandoned keyboard-interactive conversation logs in promptly" check_abandoned_kbdint
    # A failed password (its PAM transaction finished) and then a key.
    check_password_then_key() {
        local start=$SECONDS out
        out=$(LH_ASKPASS_ANSWER=wrong-password SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none \
            timeout 30 ssh -F /dev/null -p "$port_pam6" -o "UserKnownHostsFile=$T/known_hosts.$port_pam6" \
            -o StrictHostKeyChecking=yes -o NumberOfPasswordPrompts=1 -o IdentitiesOnly=yes -o IdentityAgent=none \
            -i "$T/id_user" -o PreferredAuthentications=password,publickey "$user@127.0.0.1" 'echo in' </dev/null 2>/dev/null)
        echo "  took $((SECONDS - start)) s"
        [ "$out" = in ] && [ $((SECONDS - start)) -lt 10 ]
    }
    lh_check "6. publickey after a failed PAM password logs in promptly" check_password_then_key
fi

# ---------------------------------------------------------------- 7. user enumeration
# A Match User block whose pattern covers both the test user and a name
# that does not exist: OpenSSH evaluates Match for invalid users too (with
# the name as given and no groups), so the methods offered are the same.
# They used to differ: the invalid user got the global list.
if want 7; then
    nouser="lhtest$$_nouser"
    new_server_match match7 port_m7 "Match User lhtest$$_*
    AuthenticationMethods publickey" "PasswordAuthentication yes" "KbdInteractiveAuthentication no"
    # methods_offered WHO: what OpenSSH's client -v reports after the "none" probe.
    methods_offered() {
        ssh -v -F /dev/null -p "$port_m7" -o "UserKnownHostsFile=$T/known_hosts.$port_m7" -o StrictHostKeyChecking=yes \
            -o BatchMode=yes -o PubkeyAuthentication=no -o PreferredAuthentications=password "$1@127.0.0.1" true \
            </dev/null 2>&1 | tr -d '\r' | sed -n 's/^debug1: Authentications that can continue: //p' | head -1
    }
    check_same_methods() {
        local valid invalid
        ! getent passwd "$nouser" >/dev/null || return 1
        valid=$(methods_offered "$user")
        invalid=$(methods_offered "$nouser")
        echo "  existing user: '$valid'; invalid user: '$invalid'"
        [ "$valid" = publickey ] && [ "$valid" = "$invalid" ]
    }
    lh_check "7. Match User applies to an invalid user: the same methods as for an existing one" check_same_methods

    # Failed password attempts: the median time for an existing and an
    # invalid user within 100 ms of each other (a coarse check: each attempt
    # is a whole ssh run, and the server adds its per-user failure delay).
    # The two users' attempts alternate, so a load that comes and goes (the
    # other tests of ctest -j2) weighs on both medians alike.
    new_server timing7 port_t7 "PasswordAuthentication yes" "KbdInteractiveAuthentication no" "MaxStartups 100"
    failure_ms() {
        local start
        start=$(date +%s%N)
        try_password "$port_t7" "$1" password "wrong-$RANDOM" >/dev/null 2>&1 || true
        echo $((($(date +%s%N) - start) / 1000000))
    }
    check_timing() {
        local i a=() b=() am bm d
        for i in 1 2 3 4 5 6 7 8 9; do
            a+=("$(failure_ms "$user")")
            b+=("$(failure_ms "$nouser")")
        done
        am=$(printf '%s\n' "${a[@]}" | sort -n | sed -n 5p)
        bm=$(printf '%s\n' "${b[@]}" | sort -n | sed -n 5p)
        d=$((am > bm ? am - bm : bm - am))
        echo "  failed password, median of 9 alternating: existing user ${am} ms, invalid user ${bm} ms (difference ${d} ms, tolerance 100 ms)"
        [ "$d" -lt 100 ]
    }
    lh_check "7. a failed password takes about as long for an invalid user as for an existing one" check_timing
fi

# ---------------------------------------------------------------- 9. sessions and accounts
if want 9; then
    # (a) An expired shadow password (UsePAM no) no longer logs in; OpenSSH
    # would force a change, this sshd refuses, with OpenSSH's log line.
    pw_exp="PwExp-$RANDOM-$RANDOM"
    lh_make_user "$pw_exp"
    user_exp=$LH_USER
    chage -d 2000-01-01 -M 30 "$user_exp"
    new_server exp9 port_e9 "PasswordAuthentication yes" "KbdInteractiveAuthentication no"
    check_expired_password() {
        ! try_password "$port_e9" "$user_exp" password "$pw_exp" >/dev/null 2>&1 &&
            grep -q "User $user_exp password has expired (password aged)" "$T/exp9/sshd.log" &&
            try_password "$port_e9" "$user" password "$pw" >/dev/null 2>&1
    }
    lh_check "9a. an expired shadow password is refused (UsePAM no), a current one logs in" check_expired_password

    # (b) AuthenticationMethods publickey,publickey: the options of both
    # keys apply, merged as OpenSSH's sshauthopt_merge() does.
    mkdir -p "$T/merge9"
    {
        echo "command=\"echo forced-first\" $(cat "$T/id_user.pub")"
        cat "$T/id_second.pub"
    } >"$T/merge9/authorized_keys.src"
    new_server merge9 port_m9 "AuthenticationMethods publickey,publickey"
    cp "$T/merge9/authorized_keys.src" "$T/merge9/authorized_keys"
    check_first_key_forced_command() {
        local out
        out=$(ssh_to "$port_m9" "$T/id_user" -i "$T/id_second" "$user@127.0.0.1" 'echo free' 2>/dev/null)
        echo "  output: '$out'"
        [ "$out" = forced-first ]
    }
    lh_check "9b. publickey,publickey: the first key's forced command still applies" check_first_key_forced_command
    check_conflicting_commands() {
        {
            echo "command=\"echo first\" $(cat "$T/id_user.pub")"
            echo "command=\"echo second\" $(cat "$T/id_second.pub")"
        } >"$T/merge9/authorized_keys"
        local out
        out=$(ssh_to "$port_m9" "$T/id_user" -i "$T/id_second" "$user@127.0.0.1" 'echo free' 2>/dev/null)
        cp "$T/merge9/authorized_keys.src" "$T/merge9/authorized_keys"
        echo "  output: '$out'"
        [ -z "$out" ] && grep -q "forced command options do not match" "$T/merge9/sshd.log"
    }
    lh_check "9b. publickey,publickey: different forced commands refuse the login" check_conflicting_commands

    # (c) Client environment (AcceptEnv *) cannot override what sshd sets,
    # and at most 129 variables are taken (OpenSSH's session_env_req).
    new_server env9 port_env9 "AcceptEnv *"
    check_env_override() {
        local out
        out=$(ssh_to "$port_env9" "$T/id_user" -o "SetEnv=USER=evil HOME=/tmp/evil PATH=/evil LH_KEPT=yes" \
            "$user@127.0.0.1" 'echo "$USER $HOME $PATH $LH_KEPT"' 2>/dev/null)
        echo "  session sees: '$out'"
        [ "$out" = "$user $home /usr/local/bin:/usr/bin:/bin:/usr/games yes" ]
    }
    lh_check "9c. client env cannot override USER, HOME and PATH (AcceptEnv *)" check_env_override
    check_env_count() {
        local i vars="" n
        for ((i = 0; i < 300; i++)); do vars="$vars LH_V$i=x"; done
        n=$(ssh_to "$port_env9" "$T/id_user" -o "SetEnv=$vars" "$user@127.0.0.1" 'env | grep -c "^LH_V"' 2>/dev/null)
        echo "  300 sent, $n set"
        [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$n" -le 129 ]
    }
    lh_check "9c. at most 129 client environment variables are taken" check_env_count
    check_env_bytes() {
        local big n
        big=$(head -c 61440 /dev/zero | tr '\0' x)
        # A prefix nothing else uses: the asan stage exports LH_BULK_MB,
        # which SendEnv=LH_B* would send too.
        n=$(env LHBIGENV1="$big" LHBIGENV2="$big" LHBIGENV3="$big" LHBIGENV4="$big" LHBIGENV5="$big" LHBIGENV6="$big" \
            ssh -F /dev/null -p "$port_env9" -o "UserKnownHostsFile=$T/known_hosts.$port_env9" \
            -o StrictHostKeyChecking=yes -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none \
            -i "$T/id_user" -o "SendEnv=LHBIGENV*" "$user@127.0.0.1" 'env | grep -c "^LHBIGENV"' 2>/dev/null)
        echo "  6 x 60 KiB sent, $n set"
        [ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le 4 ]
    }
    lh_check "9c. at most 256 KiB of client environment are taken (bounded memory)" check_env_bytes

    # (d) The PAM session is closed once (by the root process that opened
    # it), not again by the user's process.
    if [ -n "$pam_missing" ]; then
        lh_skip_check "9d. the PAM session is closed once" "$pam_missing"
    else
        : >"$T/pam-sessions"
        chmod 666 "$T/pam-sessions"
        new_pam_server pam9 port_p9 "KbdInteractiveAuthentication no"
        closes() { grep -c "^close_session $user\$" "$T/pam-sessions" || true; }
        check_pam_close_once() {
            [ "$(ssh_to "$port_p9" "$T/id_user" "$user@127.0.0.1" 'echo in' 2>/dev/null)" = in ] || return 1
            lh_wait_until 5 test "$(closes)" -ge 1
            sleep 1
            echo "  pam_exec saw: $(paste -sd, "$T/pam-sessions")"
            [ "$(grep -c "^open_session $user\$" "$T/pam-sessions")" = 1 ] && [ "$(closes)" = 1 ]
        }
        lh_check "9d. the PAM session is opened once and closed once" check_pam_close_once
    fi
fi

# ---------------------------------------------------------------- 10. settings never ignored
if want 10; then
    # (a) What this server cannot enforce yet is refused by sshd -t and by
    # sshd itself, naming the keyword, in a Match block too.
    mkdir -p "$T/cfg10"
    lh_port port_refuse10 # never bound unless a check fails
    cfg10() { # cfg10 NAME LINES...: a config with our host key and the lines
        local f=$T/cfg10/$1
        shift
        { printf '%s\n' "$@"; echo "HostKey $T/ssh_host_ed25519_key"; echo "ListenAddress 127.0.0.1"
          echo "Port $port_refuse10"; echo "PidFile none"; } >"$f"
        echo "$f"
    }
    check_refused() {
        local name=$1 want_msg=$2 f rc out
        shift 2
        f=$(cfg10 "$name" "$@")
        rc=0; out=$("$LH_SSHD" -t -f "$f" 2>&1) || rc=$?
        [ "$rc" != 0 ] && [[ "$out" == *"$want_msg"* ]] || { echo "  sshd -t: status $rc, said: $out"; return 1; }
        # sshd itself, not only -t: it must exit at once, not serve.
        rc=0; out=$(timeout 10 "$LH_SSHD" -D -e -f "$f" 2>&1) || rc=$?
        [ "$rc" != 0 ] && [ "$rc" != 124 ] && [[ "$out" == *"$want_msg"* ]] ||
            { echo "  sshd: status $rc, said: $out"; return 1; }
    }
    # (ChannelTimeout and ExposeAuthInfo yes, refused here before, are
    # enforced now: regress/sshd_expose_channel_timeout.sh.)
    lh_check "10a. LogVerbose is refused at start-up" \
        check_refused lv "line 1: LogVerbose is not supported yet" "LogVerbose kex.c:*:1000"
    # (PerSourcePenalties and PerSourcePenaltyExemptList are enforced now:
    # regress/sshd_penalties.sh; a bad value is still refused at start-up.)
    lh_check "10a. a bad PerSourcePenalties value is refused at start-up" \
        check_refused psp "line 1: unsupported PerSourcePenalties keyword bogus:1" "PerSourcePenalties bogus:1"
    # (RekeyLimit inside a Match block, refused here before, is enforced
    # now: regress/rekey_load.sh, cases G to I.)
    # (HostKeyAgent is implemented now: regress/sshd_host_key_agent.sh. An
    # agent that is not there leaves the private host keys serving, as
    # OpenSSH's sshd does.)
    check_hka_absent() {
        local f rc=0 out
        f=$(cfg10 hka "HostKeyAgent /run/nonexistent.sock")
        out=$("$LH_SSHD" -t -f "$f" 2>&1) || rc=$?
        [ "$rc" = 0 ] && [[ "$out" == *'Could not connect to agent "/run/nonexistent.sock"'* ]] ||
            { echo "  sshd -t: status $rc, said: $out"; return 1; }
    }
    lh_check "10a. HostKeyAgent with no agent there: private host keys still serve" check_hka_absent

    # (b) Debian 12's stock sshd_config (read, never modified) passes sshd -t,
    # as it does with Debian's own sshd.
    check_debian_config() {
        local out rc=0
        out=$("$LH_SSHD" -t -f /etc/ssh/sshd_config -h "$T/ssh_host_ed25519_key" 2>&1) || rc=$?
        [ -n "$out" ] && echo "  $out"
        [ "$rc" = 0 ]
    }
    if [ -r /etc/ssh/sshd_config ]; then
        lh_check "10b. Debian's stock /etc/ssh/sshd_config passes sshd -t" check_debian_config
    else
        lh_skip_check "10b. Debian's stock /etc/ssh/sshd_config passes sshd -t" "/etc/ssh/sshd_config not found"
    fi
    # Its keywords start a server that logs in; X11Forwarding yes is served
    # (regress/x11_forwarding.sh), so nothing is said about it.
    mkdir -p "$T/deb10.d"
    echo "PrintMotd no" >"$T/deb10.d/local.conf"
    new_server deb10 port_deb10 "Include $T/deb10.d/*.conf" "KbdInteractiveAuthentication no" \
        "X11Forwarding yes" "AcceptEnv LANG LC_*"
    check_debian_keywords() {
        [ "$(ssh_to "$port_deb10" "$T/id_user" "$user@127.0.0.1" 'echo in' 2>/dev/null)" = in ] &&
            ! grep -q "X11Forwarding.*not supported" "$T/deb10/sshd.log"
    }
    lh_check "10b. Debian's keywords (Include, X11Forwarding yes, PrintMotd, AcceptEnv) start a working server" \
        check_debian_keywords

    # (c) RequiredRSASize: a 1024-bit RSA user key is refused under 2048 with
    # OpenSSH's log line, and logs in where the default (1024) applies.
    "$LH_SSH_KEYGEN" -q -t rsa -b 1024 -N '' -C small-rsa -f "$T/id_rsa1024"
    new_server rsa10 port_rsa10 "RequiredRSASize 2048"
    new_server rsa10ok port_rsa10ok
    cat "$T/id_rsa1024.pub" >"$T/rsa10/authorized_keys"
    cat "$T/id_rsa1024.pub" >"$T/rsa10ok/authorized_keys"
    check_required_rsa_size() {
        [ "$(ssh_to "$port_rsa10ok" "$T/id_rsa1024" "$user@127.0.0.1" 'echo in' 2>/dev/null)" = in ] || {
            echo "  control: the 1024-bit key did not log in under the default"; return 1; }
        ssh_to "$port_rsa10" "$T/id_rsa1024" "$user@127.0.0.1" 'echo in' >/dev/null 2>&1 && {
            echo "  the 1024-bit key logged in under RequiredRSASize 2048"; return 1; }
        grep -q "refusing RSA key: Invalid key length" "$T/rsa10/sshd.log"
    }
    lh_check "10c. RequiredRSASize 2048 refuses a 1024-bit RSA user key (1024 logs in by default)" check_required_rsa_size
    check_required_rsa_host_key() {
        local f out rc=0
        f=$(cfg10 rsahost "RequiredRSASize 3072")
        sed -i "s|^HostKey .*|HostKey $T/ssh_host_rsa_key|" "$f"
        out=$("$LH_SSHD" -t -f "$f" 2>&1) || rc=$?
        [ "$rc" != 0 ] && [[ "$out" == *"Host key $T/ssh_host_rsa_key: Invalid key length"* ]] ||
            { echo "  status $rc: $out"; return 1; }
    }
    lh_check "10c. RequiredRSASize 3072 refuses a 2048-bit RSA host key" check_required_rsa_host_key

    # (d) UnusedConnectionTimeout: a connection with no channel (ssh -N) is
    # closed after it; one with an open session outlives it.
    new_server unused10 port_unused10 "UnusedConnectionTimeout 2"
    check_unused_timeout() {
        local start end pid i
        start=$(date +%s)
        ssh_to "$port_unused10" "$T/id_user" -N "$user@127.0.0.1" >/dev/null 2>&1 &
        pid=$!
        for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        end=$(date +%s)
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid"
            echo "  ssh -N still connected after $((end - start)) s"
            return 1
        fi
        echo "  ssh -N ended after $((end - start)) s"
        [ $((end - start)) -ge 1 ] &&
            grep -q "terminating inactive connection from user $user 127.0.0.1 port" "$T/unused10/sshd.log" &&
            [ "$(ssh_to "$port_unused10" "$T/id_user" "$user@127.0.0.1" 'sleep 4; echo alive' 2>/dev/null)" = alive ]
    }
    lh_check "10d. UnusedConnectionTimeout 2 closes a connection without channels; a session outlives it" \
        check_unused_timeout

    # (e) PerSourceMaxStartups: the third unauthenticated connection from
    # one address is dropped with OpenSSH's note; another address (its own
    # /32) is not; a slot comes back when a connection ends. With
    # PerSourceNetBlockSize 8, 127.0.0.2 shares 127.0.0.1's block.
    new_server psm10 port_psm10 "PerSourceMaxStartups 2"
    new_server psn10 port_psn10 "PerSourceMaxStartups 1" "PerSourceNetBlockSize 8"
    startups_probe() { # startups_probe PORT HOLD: what each connection reads first
        python3 - "$1" "$2" <<'PY'
import socket, sys, time
port, hold = int(sys.argv[1]), int(sys.argv[2])
def first_line(src):
    s = socket.socket()
    s.settimeout(5)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    data = b""
    try:
        while not data.endswith(b"\n"):
            c = s.recv(1)
            if not c:
                break
            data += c
    except socket.timeout:
        pass
    return s, data.decode(errors="replace").strip().split("-")[0] or "(closed)"
held = [first_line("127.0.0.1") for _ in range(hold)]
print("held:", " ".join(l for _, l in held))
print("next:", first_line("127.0.0.1")[1])
print("other:", first_line("127.0.0.2")[1])
for s, _ in held:
    s.close()
again = "(none)"
for _ in range(50):
    again = first_line("127.0.0.1")[1]
    if again == "SSH":
        break
    time.sleep(0.1)
print("again:", again)
PY
    }
    check_per_source() {
        local out
        out=$(startups_probe "$port_psm10" 2) || return 1
        echo "$out" | sed 's/^/  /'
        [ "$out" = "$(printf 'held: SSH SSH\nnext: Exceeded MaxStartups\nother: SSH\nagain: SSH')" ] &&
            grep -q "drop connection #2 from \[127.0.0.1\]:[0-9]* on \[127.0.0.1\]:$port_psm10 past MaxStartups" \
                "$T/psm10/sshd.log"
    }
    lh_check "10e. PerSourceMaxStartups 2: the third startup from an address is dropped, others pass" check_per_source
    check_net_block() {
        local out
        out=$(startups_probe "$port_psn10" 1) || return 1
        echo "$out" | sed 's/^/  /'
        [ "$out" = "$(printf 'held: SSH\nnext: Exceeded MaxStartups\nother: Exceeded MaxStartups\nagain: SSH')" ]
    }
    lh_check "10e. PerSourceNetBlockSize 8: 127.0.0.2 counts in 127.0.0.1's block" check_net_block

    # (f) A Match block's LogLevel applies to the user's connection.
    new_server_match loglvl10 port_ll10 "Match User $user
  LogLevel DEBUG1" "LogLevel INFO"
    check_match_log_level() {
        [ "$(ssh_to "$port_ll10" "$T/id_user" "$user@127.0.0.1" 'echo in' 2>/dev/null)" = in ] &&
            grep -q "debug1: " "$T/loglvl10/sshd.log"
    }
    lh_check "10f. LogLevel DEBUG1 in Match User applies to that user's connection" check_match_log_level

    # (g) -g is LoginGraceTime from the command line (it was read and then
    # dropped): sshd -T shows it as Debian's sshd does, the last -g winning
    # over -o; a bad value or option is answered as Debian's answers it.
    # Every run has -t or -T: none can start serving.
    check_grace_option() {
        local f args a b
        f=$(cfg10 grace "PasswordAuthentication no")
        for args in "-g 3m" "-o LoginGraceTime=5 -g 1h" "-g 1h -g 30"; do
            a=$(/usr/sbin/sshd -T -f "$f" $args 2>&1 | grep '^logingracetime')
            b=$("$LH_SSHD" -T -f "$f" $args 2>&1 | grep '^logingracetime')
            [ -n "$a" ] && [ "$a" = "$b" ] || { echo "  $args: Debian's '$a', ours '$b'"; return 1; }
        done
        for args in "-g bogus" "-g 1x" "-Z" "-h"; do
            # The first line is each one's version.
            a=$(/usr/sbin/sshd -t -f "$f" $args 2>&1 | grep -v '^OpenSSH_'; echo "rc=${PIPESTATUS[0]}")
            b=$("$LH_SSHD" -t -f "$f" $args 2>&1 | grep -v '^Longhaul_'; echo "rc=${PIPESTATUS[0]}")
            [ "$a" = "$b" ] || { echo "  $args: Debian's"; echo "$a"; echo "  ours"; echo "$b"; return 1; }
        done
    }
    lh_check "10g. -g sets LoginGraceTime as Debian's does; bad values and options answered alike" check_grace_option
fi

lh_summary
