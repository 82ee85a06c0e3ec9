#!/usr/bin/env bash
# Longhaul's ssh-agent beside Debian's: Debian's ssh-add drives both with
# the same steps (rsa, ecdsa, ed25519 keys and a user certificate; -l, -L,
# -d, -D, -x/-X, -t, -c answered yes and no, -T) and the outputs must be
# identical; Debian's ssh and Longhaul's ssh log in through our agent with
# each key type and forward it (-A) to a second hop; -s/-c/-k output,
# the default socket's directory and modes, the command form, the end of
# the agent on SIGTERM, and a connection from another uid refused.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
AGENT=$BUILD/bin/ssh-agent
LH_SSH=$BUILD/bin/ssh
DEB_AGENT=/usr/bin/ssh-agent
DEB_ADD=/usr/bin/ssh-add
DEB_SSH=/usr/bin/ssh
[ -x "$AGENT" ] || lh_fail "ssh-agent not built ($AGENT)"
[ -x "$DEB_AGENT" ] && [ -x "$DEB_ADD" ] || lh_skip "Debian's ssh-agent/ssh-add not found (openssh-client)"
T=$LH_TMP
chmod 711 "$T"
unset SSH_AUTH_SOCK SSH_AGENT_PID DISPLAY SSH_ASKPASS SSH_ASKPASS_REQUIRE

# Keys, a CA and a user certificate for the ECDSA key (ssh-add adds
# id_ecdsa-cert.pub beside id_ecdsa).
for t in rsa ecdsa ed25519; do
    "$LH_SSH_KEYGEN" -q -t "$t" -N '' -C "$t-comment" -f "$T/id_$t"
done
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C ca -f "$T/ca"
"$LH_SSH_KEYGEN" -q -s "$T/ca" -I cert-id -n "$(id -un)" "$T/id_ecdsa.pub"

# The askpass helpers: lock passwords from $T/password, confirmations from
# $T/answer ("yes" allows; anything else refuses, as OpenSSH's does).
printf '#!/bin/sh\ncat "%s/password"\n' "$T" >"$T/askpass.sh"
printf '#!/bin/sh\nread a <"%s/answer"; [ "$a" = yes ] && echo yes && exit 0; exit 1\n' "$T" >"$T/confirm.sh"
chmod +x "$T/askpass.sh" "$T/confirm.sh"

# start_agent NAME BINARY: a foreground agent on $T/NAME.sock (log in
# $T/NAME.log), asking $T/confirm.sh for -c keys.
start_agent() {
    local name=$1 bin=$2
    SSH_ASKPASS=$T/confirm.sh SSH_ASKPASS_REQUIRE=force "$bin" -d -a "$T/$name.sock" >/dev/null 2>"$T/$name.log" &
    LH_PIDS+=($!)
    lh_wait_until 10 test -S "$T/$name.sock" || lh_fail "$name agent did not start"
}
start_agent ours "$AGENT"
start_agent debian "$DEB_AGENT"

add() { SSH_AUTH_SOCK=$sock "$DEB_ADD" "$@" 2>&1; echo "rc=$?"; }
lock() {
    echo "$2" >"$T/password"
    SSH_AUTH_SOCK=$sock SSH_ASKPASS=$T/askpass.sh SSH_ASKPASS_REQUIRE=force "$DEB_ADD" "$1" 2>&1
    echo "rc=$?"
}

# The same ssh-add session against an agent: what it prints.
session() {
    sock=$T/$1.sock
    set +e
    add -l
    add "$T/id_rsa" "$T/id_ecdsa" "$T/id_ed25519"
    add -l
    add -L
    add -d "$T/id_rsa"
    add -l
    add -d "$T/id_rsa"
    # Re-adding replaces the comment.
    cp "$T/id_ed25519" "$T/other_name" && cp "$T/id_ed25519.pub" "$T/other_name.pub"
    "$LH_SSH_KEYGEN" -q -c -C renamed -f "$T/other_name" >/dev/null
    add "$T/other_name"
    add -l
    lock -x secret
    add -l
    add "$T/id_rsa"
    lock -X wrong
    add -l
    lock -X secret
    add -l
    add -D
    add -l
    add -t 2 "$T/id_ed25519"
    add -l
    sleep 3
    add -l
    echo yes >"$T/answer"
    add -c "$T/id_ed25519"
    add -T "$T/id_ed25519.pub"
    echo no >"$T/answer"
    add -T "$T/id_ed25519.pub"
    add -D
    add -T "$T/id_ed25519.pub"
    set -e
}
session ours >"$T/session.ours"
session debian >"$T/session.debian"
check_session() {
    diff -u "$T/session.debian" "$T/session.ours" && grep -q "Agent locked" "$T/session.ours" &&
        grep -q "The agent has no identities" "$T/session.ours"
}
lh_check "ssh-add session: output identical to Debian's agent" check_session
check_confirm() {
    grep -q "^Agent signature failed for $T/id_ed25519.pub: agent refused operation" "$T/session.ours" &&
        grep -q "user refused key" "$T/ours.log" && grep -q "(renamed)" "$T/session.ours"
}
lh_check "ssh-add -c: yes signs, no refuses" check_confirm
check_sign_log() {
    # The agents' lines for the three signature requests (signed, refused,
    # key not found), the debug lines included.
    diff -u <(grep -o 'process_sign_request2: .*' "$T/debian.log") <(grep -o 'process_sign_request2: .*' "$T/ours.log") &&
        grep -q 'process_sign_request2: ED25519 key not found' "$T/ours.log"
}
lh_check "signature requests logged as by Debian's agent" check_sign_log

# ssh-agent -t: the default lifetime; -E: the hash of logged fingerprints.
check_default_lifetime() {
    "$AGENT" -d -t 1 -E md5 -a "$T/life.sock" >/dev/null 2>"$T/life.log" &
    LH_PIDS+=($!)
    lh_wait_until 10 test -S "$T/life.sock" || return 1
    SSH_AUTH_SOCK=$T/life.sock "$DEB_ADD" -q "$T/id_ed25519" 2>/dev/null &&
        [ "$(SSH_AUTH_SOCK=$T/life.sock "$DEB_ADD" -l | wc -l)" = 1 ] &&
        grep -q '^debug1: process_add_identity: add ssh-ed25519 MD5:[0-9a-f:]* "ed25519-comment" (life: 1)' "$T/life.log" &&
        lh_wait_until 5 sh -c "! SSH_AUTH_SOCK=$T/life.sock $DEB_ADD -l >/dev/null"
}
lh_check "ssh-agent -t 1 -E md5: keys expire, MD5 fingerprints logged" check_default_lifetime

# --- logins through our agent ------------------------------------------------
login_checks() {
    local port
    lh_make_host_keys "$T"
    {
        cat "$T/id_rsa.pub" "$T/id_ed25519.pub"
        echo "cert-authority $(cat "$T/ca.pub")"
    } >"$T/authorized_keys"
    chmod 644 "$T/authorized_keys"
    lh_port port
    lh_start_sshd "$T" "$port"
    lh_known_hosts "$T" "$port"
    sock=$T/ours.sock
    local user
    user=$(id -un)
    # login SSH KEYFILE: the agent holds that key alone (a key file next to
    # its -cert.pub brings the certificate too; only the certificate is
    # authorized for the ECDSA key), and ssh has no key of its own that the
    # server accepts (authorized_keys is the test's).
    login() {
        local ssh=$1 key=$2
        SSH_AUTH_SOCK=$T/ours.sock "$DEB_ADD" -D >/dev/null 2>&1
        SSH_AUTH_SOCK=$T/ours.sock "$DEB_ADD" "$key" >/dev/null 2>&1 || return 1
        test "$(SSH_AUTH_SOCK=$T/ours.sock "$ssh" -F /dev/null -p "$port" -o "UserKnownHostsFile=$T/known_hosts.$port" \
            -o StrictHostKeyChecking=yes -o BatchMode=yes "$user@127.0.0.1" echo logged-in 2>"$T/login.err")" = logged-in
    }
    # Agent forwarding: the second hop (Debian's ssh on the far side)
    # authenticates through the forwarded agent, which also sees
    # session-bind with the forwarded flag.
    forwarded() {
        local ssh=$1
        local hop="ssh -F /dev/null -p $port -o UserKnownHostsFile=$T/known_hosts.$port -o StrictHostKeyChecking=yes -o BatchMode=yes $user@127.0.0.1 echo second-hop"
        test "$(SSH_AUTH_SOCK=$T/ours.sock "$ssh" -A -F /dev/null -p "$port" -o "UserKnownHostsFile=$T/known_hosts.$port" \
            -o StrictHostKeyChecking=yes -o BatchMode=yes "$user@127.0.0.1" "$hop" 2>"$T/login.err")" = second-hop
    }
    local ssh name
    for ssh in "$DEB_SSH" "$LH_SSH"; do
        name=longhaul
        [ "$ssh" = "$DEB_SSH" ] && name=debian
        [ -x "$ssh" ] || { lh_skip_check "login with $ssh" "not built"; continue; }
        lh_check "$name ssh: rsa key from the agent" login "$ssh" "$T/id_rsa"
        lh_check "$name ssh: ecdsa certificate from the agent" login "$ssh" "$T/id_ecdsa"
        lh_check "$name ssh: ed25519 key from the agent" login "$ssh" "$T/id_ed25519"
        lh_check "$name ssh -A: second hop through the forwarded agent" forwarded "$ssh"
    done
    # The agent checked the host's session-bind signatures.
    lh_check "session-bind recorded" grep -q "process_ext_session_bind: recorded" "$T/ours.log"
    # AddKeysToAgent: the key file a login used goes to the agent with the
    # setting's constraints, as Debian's ssh adds it (Debian's agent logs
    # what it got: the key, its comment, lifetime and confirm).
    added_key() { # SSH SETTING: Debian's agent's add line after one login with id_ed25519's file
        local ssh=$1 sock=$T/debian.sock from
        SSH_AUTH_SOCK=$sock "$DEB_ADD" -D >/dev/null 2>&1
        from=$(wc -l <"$T/debian.log")
        SSH_AUTH_SOCK=$sock "$ssh" -F /dev/null -p "$port" -o "UserKnownHostsFile=$T/known_hosts.$port" \
            -o StrictHostKeyChecking=yes -o BatchMode=yes -o "AddKeysToAgent=$2" -o IdentitiesOnly=yes \
            -i "$T/id_ed25519" "$user@127.0.0.1" true </dev/null 2>/dev/null || echo "login failed"
        tail -n +"$((from + 1))" "$T/debian.log" | grep 'add_identity\|process_add' || echo "nothing added"
    }
    check_add_keys() {
        local setting out_deb out_lh
        for setting in yes confirm 1h no; do
            out_deb=$(added_key "$DEB_SSH" "$setting")
            out_lh=$(added_key "$LH_SSH" "$setting")
            if [ "$out_deb" != "$out_lh" ]; then
                echo "   AddKeysToAgent $setting: Debian's ssh: $out_deb"
                echo "   AddKeysToAgent $setting: Longhaul's:   $out_lh"
                return 1
            fi
            [ "$setting" = no ] || [[ $out_deb == *ed25519-comment* ]] ||
                { echo "   AddKeysToAgent $setting: Debian's ssh added nothing: $out_deb"; return 1; }
        done
    }
    lh_check "AddKeysToAgent yes, confirm, a lifetime, no: the agent gets what Debian's ssh gives it" check_add_keys
    destination_checks "$port"
}

# Destination constraints through real logins: a second sshd (port2) with
# other host keys; Debian's ssh-add restricts id_ed25519 with -H/-h in our
# agent and in Debian's, then Debian's and Longhaul's ssh log in through
# each agent. Both agents must give the same outcomes (login allowed, or
# "Permission denied" since the key is hidden or its signature refused) and
# the same ssh-add -l listings, and ours the expected ones. ssh-add -h looks
# hosts up by name in the -H file; the agent matches host keys only, so the
# second hop is named "127.0.0.1:PORT2" there (a label, like a host alias).
destination_checks() {
    local port1=$1 port2 user
    user=$(id -un)
    mkdir -p "$T/srv2" && chmod 711 "$T/srv2"
    lh_make_host_keys "$T/srv2"
    cp "$T/authorized_keys" "$T/srv2/authorized_keys"
    lh_port port2
    lh_start_sshd "$T/srv2" "$port2"
    lh_known_hosts "$T/srv2" "$port2"
    cat "$T/known_hosts.$port1" "$T/srv2/known_hosts.$port2" >"$T/known_hosts.both"
    {
        sed "s/^\[127.0.0.1\]:$port1 /127.0.0.1 /" "$T/known_hosts.$port1"
        sed "s/^\[127.0.0.1\]:$port2 /127.0.0.1:$port2 /" "$T/srv2/known_hosts.$port2"
    } >"$T/dest_hosts"
    local opts="-F /dev/null -o UserKnownHostsFile=$T/known_hosts.both -o StrictHostKeyChecking=yes -o BatchMode=yes"
    # restrict AGENT SPEC...: the agent holds id_ed25519 alone, with -h SPEC each.
    restrict() {
        local sock=$T/$1.sock s a=()
        shift
        for s in "$@"; do a+=(-h "$s"); done
        SSH_AUTH_SOCK=$sock "$DEB_ADD" -D >/dev/null 2>&1
        SSH_AUTH_SOCK=$sock "$DEB_ADD" -H "$T/dest_hosts" "${a[@]}" "$T/id_ed25519" 2>&1 | sed "s#$T/##"
    }
    # outcome AGENT SSH PORT [-A] REMOTE-COMMAND: the command's output, or
    # "denied" when the (first or second hop's) login was refused.
    outcome() {
        local sock=$T/$1.sock ssh=$2 p=$3 out
        shift 3
        # shellcheck disable=SC2086
        if out=$(SSH_AUTH_SOCK=$sock "$ssh" $opts -p "$p" "${@:1:$#-1}" "$user@127.0.0.1" "${!#}" 2>"$T/dest.err"); then
            echo "$out"
        elif grep -q "Permission denied" "$T/dest.err"; then
            echo "denied"
        else
            echo "error: $(tr '\r\n' '  ' <"$T/dest.err")"
        fi
    }
    local hop2="ssh $opts -p $port2 $user@127.0.0.1 echo second-hop"
    # transcript AGENT SSH: every step, one line each.
    transcript() {
        local a=$1 ssh=$2
        echo "== -h 127.0.0.1"
        restrict "$a" 127.0.0.1
        echo "first: $(outcome "$a" "$ssh" "$port1" "echo logged-in")"
        echo "second: $(outcome "$a" "$ssh" "$port2" "echo logged-in")"
        echo "forwarded to second: $(outcome "$a" "$ssh" "$port1" -A "$hop2")"
        echo "listed beyond first: $(outcome "$a" "$ssh" "$port1" -A "ssh-add -l | grep -c ED25519 || true")"
        echo "plain -l: $(SSH_AUTH_SOCK=$T/$a.sock "$DEB_ADD" -l 2>&1)"
        echo "== -h 127.0.0.1 -h 127.0.0.1>127.0.0.1:PORT2"
        restrict "$a" 127.0.0.1 "127.0.0.1>127.0.0.1:$port2"
        echo "first: $(outcome "$a" "$ssh" "$port1" "echo logged-in")"
        echo "second: $(outcome "$a" "$ssh" "$port2" "echo logged-in")"
        echo "forwarded to second: $(outcome "$a" "$ssh" "$port1" -A "$hop2")"
        echo "listed beyond first: $(outcome "$a" "$ssh" "$port1" -A "ssh-add -l | grep -c ED25519 || true")"
        SSH_AUTH_SOCK=$T/$a.sock "$DEB_ADD" -D >/dev/null 2>&1
    }
    local ssh name
    for ssh in "$DEB_SSH" "$LH_SSH"; do
        name=longhaul
        [ "$ssh" = "$DEB_SSH" ] && name=debian
        [ -x "$ssh" ] || { lh_skip_check "destination constraints with $ssh" "not built"; continue; }
        transcript ours "$ssh" >"$T/dest.$name.ours"
        transcript debian "$ssh" >"$T/dest.$name.debian"
        lh_check "$name ssh, ssh-add -h: same outcomes as with Debian's agent" \
            diff -u "$T/dest.$name.debian" "$T/dest.$name.ours"
        # What each step must give (the order of transcript's lines).
        printf '%s\n' "== -h 127.0.0.1" "Identity added: id_ed25519 (ed25519-comment)" "first: logged-in" \
            "second: denied" "forwarded to second: denied" "listed beyond first: 0" \
            "plain -l: $("$LH_SSH_KEYGEN" -l -f "$T/id_ed25519.pub")" \
            "== -h 127.0.0.1 -h 127.0.0.1>127.0.0.1:PORT2" "Identity added: id_ed25519 (ed25519-comment)" \
            "first: logged-in" "second: denied" "forwarded to second: second-hop" "listed beyond first: 1" \
            >"$T/dest.expected"
        lh_check "$name ssh, ssh-add -h: allowed on the listed hops, refused elsewhere" \
            diff -u "$T/dest.expected" "$T/dest.$name.ours"
    done
}
if [ "$(id -u)" = 0 ] && [ -x "$LH_SSHD" ]; then
    login_checks
else
    lh_skip_check "logins through the agent" "needs root and $LH_SSHD"
fi

# --- -s, -c, -k, the default socket, the command form ------------------------
norm() { sed -e "s#$T/[^/]*/#DIR/#g" -e 's/[0-9][0-9]*/N/g'; }
start_kill() { # BINARY NAME SHELL-FLAG...
    local bin=$1 name=$2
    shift 2
    mkdir -p "$T/$name"
    local out pid
    out=$("$bin" "$@" -a "$T/$name/s")
    pid=$(echo "$out" | sed -n 's/^echo Agent pid \([0-9]*\);$/\1/p')
    LH_PIDS+=("$pid")
    echo "$out"
    SSH_AGENT_PID=$pid "$bin" "$@" -k
}
for flag in -s -c; do
    lh_check "ssh-agent $flag and -k: output as Debian's" \
        test "$(start_kill "$AGENT" o$flag "$flag" | norm)" = "$(start_kill "$DEB_AGENT" d$flag "$flag" | norm)"
done
check_shell_env() {
    test "$(SHELL=/bin/tcsh start_kill "$AGENT" oshell | norm)" = "$(SHELL=/bin/tcsh start_kill "$DEB_AGENT" dshell | norm)"
}
lh_check "csh output chosen from \$SHELL" check_shell_env
check_errors() {
    local a
    for a in "-Z" "-t" "-t xx" "-O foo" "-E foo" "-c -s" "-s true" "-P a -P b"; do
        # shellcheck disable=SC2086
        test "$("$AGENT" $a 2>&1; echo "rc=$?")" = "$("$DEB_AGENT" $a 2>&1; echo "rc=$?")" || { echo "differs: $a"; return 1; }
    done
    # A path already there (never unlinked) and one too long for a socket.
    : >"$T/taken"
    local long
    long=$T/$(printf '%0120d' 0)
    test "$("$AGENT" -a "$T/taken" 2>&1; echo "rc=$?")" = "$("$DEB_AGENT" -a "$T/taken" 2>&1; echo "rc=$?")" &&
        test "$("$AGENT" -a "$long" 2>&1; echo "rc=$?")" = "$("$DEB_AGENT" -a "$long" 2>&1; echo "rc=$?")" &&
        test -f "$T/taken" || return 1
    test "$(env -u SSH_AGENT_PID "$AGENT" -k 2>&1; echo "rc=$?")" = "$(env -u SSH_AGENT_PID "$DEB_AGENT" -k 2>&1; echo "rc=$?")" &&
        test "$(SSH_AGENT_PID=1x "$AGENT" -k 2>&1; echo "rc=$?")" = "$(SSH_AGENT_PID=1x "$DEB_AGENT" -k 2>&1; echo "rc=$?")"
}
lh_check "usage errors as Debian's" check_errors
check_default_socket() {
    local out sock dir pid
    out=$(TMPDIR=$T "$AGENT" -s)
    sock=$(echo "$out" | sed -n 's/^SSH_AUTH_SOCK=\([^;]*\);.*/\1/p')
    pid=$(echo "$out" | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')
    LH_PIDS+=("$pid")
    dir=$(dirname "$sock")
    # Every X of the template random, as OpenSSH's mkdtemp makes them
    # (glibc's leaves six X's: 1 in 62^6 by chance).
    [[ $sock =~ ^$T/ssh-[A-Za-z0-9]{12}/agent\.[0-9]+$ ]] && [[ $sock != *XXXXXX* ]] &&
        [ "$(stat -c %a "$dir")" = 700 ] && [ "$(stat -c %a "$sock")" = 600 ] && [ -S "$sock" ] &&
        kill "$pid" && lh_wait_until 5 test ! -e "$dir"
}
lh_check "default socket: TMPDIR/ssh-XXXXXXXXXXXX/agent.PID, 0700/0600, removed on SIGTERM" check_default_socket
check_command() {
    local out
    out=$("$AGENT" -a "$T/cmd.sock" sh -c 'echo "sock=$SSH_AUTH_SOCK"; test -n "$SSH_AGENT_PID" && echo pid-set; '"$DEB_ADD"' -l; exit 3' 2>&1) && return 1
    [ $? = 3 ] || true
    [ "$out" = "$(printf 'sock=%s\npid-set\nThe agent has no identities.' "$T/cmd.sock")" ] &&
        lh_wait_until 15 test ! -e "$T/cmd.sock"
}
lh_check "command form: variables set, agent gone after the command" check_command

# Destination constraints (ssh-add -h) without a server: Debian's ssh-add
# adds a restricted key to our agent and to Debian's; what it prints, and
# ssh-add -l on a plain (unbound) connection, which lists the key as local
# use, must be the same.
check_destination_add() {
    "$AGENT" -d -a "$T/dest.sock" >/dev/null 2>"$T/dest.log" &
    LH_PIDS+=($!)
    "$DEB_AGENT" -D -a "$T/dest_deb.sock" >/dev/null 2>&1 &
    LH_PIDS+=($!)
    lh_wait_until 10 test -S "$T/dest.sock" && lh_wait_until 10 test -S "$T/dest_deb.sock" || return 1
    echo "127.0.0.1 $(cat "$T/id_ed25519.pub")" >"$T/dest_known_hosts"
    local s out=()
    for s in dest dest_deb; do
        out+=("$(SSH_AUTH_SOCK=$T/$s.sock "$DEB_ADD" -H "$T/dest_known_hosts" -h 127.0.0.1 "$T/id_ed25519" 2>&1
            echo "rc=$?"
            SSH_AUTH_SOCK=$T/$s.sock "$DEB_ADD" -l 2>&1)")
    done
    [ "${out[0]}" = "${out[1]}" ] && [[ ${out[0]} == *"rc=0"*"ed25519-comment (ED25519)"* ]] &&
        grep -q "(destination constraints: 1)" "$T/dest.log"
}
lh_check "ssh-add -h: key added and listed (unbound connection) as by Debian's agent" check_destination_add

# --- another uid ---------------------------------------------------------------
check_other_uid() {
    mkdir -p "$T/shared" && chmod 711 "$T/shared"
    "$AGENT" -d -a "$T/shared/s" >/dev/null 2>"$T/shared.log" &
    LH_PIDS+=($!)
    lh_wait_until 10 test -S "$T/shared/s" || return 1
    # The socket is 0600; opened up here so that only the peer check stands.
    chmod 666 "$T/shared/s"
    ! SSH_AUTH_SOCK=$T/shared/s setpriv --reuid=nobody --regid=nogroup --clear-groups "$DEB_ADD" -l >/dev/null 2>&1 &&
        lh_wait_until 5 grep -q "uid mismatch: peer euid $(id -u nobody) != uid $(id -u)" "$T/shared.log"
}
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
    lh_check "a connection from another uid is refused" check_other_uid
else
    lh_skip_check "another uid refused" "needs root, setpriv and the nobody user"
fi

lh_summary
