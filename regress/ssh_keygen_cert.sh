#!/usr/bin/env bash
# OpenSSH certificates with Longhaul's ssh-keygen beside Debian's: each
# lists the other's certificates (-L) with identical output (ed25519, ECDSA
# and RSA CAs, rsa-sha2-256/512 and ssh-rsa, user and host certificates,
# principals, validity, critical options and extensions), signing (-s) says
# and writes what Debian's does for the same arguments, -l fingerprints a
# certificate the same way, errors carry the same messages and statuses,
# -U signs with a CA key held by ssh-agent as Debian's does,
# and Debian's sshd (TrustedUserCAKeys) lets Debian's ssh log in with a
# user certificate signed by Longhaul's ssh-keygen.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
OURS=$BUILD/bin/ssh-keygen
THEIRS=$LH_SSH_KEYGEN
[ -x "$OURS" ] || lh_fail "ssh-keygen not built ($OURS)"
[ -x "$THEIRS" ] || lh_skip "OpenSSH ssh-keygen not found at $THEIRS (openssh-client)"
# Validity times print in local time: both sides in UTC.
export TZ=UTC

T=$LH_TMP
cd "$T"
check() { # check NAME: compares want.NAME with got.NAME
    LH_CHECKS=$((LH_CHECKS + 1))
    if cmp -s "want.$1" "got.$1"; then
        echo "ok: $1"
    else
        echo "FAIL: $1 differs" >&2
        diff "want.$1" "got.$1" >&2 || true
        LH_FAILED=$((LH_FAILED + 1))
    fi
}
same() { # same NAME ARGS...: both programs' stdout+stderr and status compared
    local name=$1
    shift
    set +e
    "$THEIRS" "$@" >"want.$name" 2>&1 </dev/null
    echo "status $?" >>"want.$name"
    "$OURS" "$@" >"got.$name" 2>&1 </dev/null
    echo "status $?" >>"got.$name"
    set -e
    check "$name"
}
# listing FILE: Debian's -L of FILE, without the file name line (a
# certificate's nonce and signature differ between signers; -L shows neither).
listing() { "$THEIRS" -L -f "$1" | tail -n +2; }

# --- Keys -------------------------------------------------------------------
"$THEIRS" -q -t ed25519 -N '' -C "ed25519 CA" -f ca_ed25519
"$THEIRS" -q -t ecdsa -b 384 -N '' -C "ecdsa CA" -f ca_ecdsa
"$THEIRS" -q -t rsa -b 2048 -N '' -C "rsa CA" -f ca_rsa
"$THEIRS" -q -t ed25519 -N 'ca pass' -C "encrypted CA" -f ca_enc
"$THEIRS" -q -t ed25519 -N '' -C "user ed25519" -f user_ed25519
"$THEIRS" -q -t ecdsa -b 256 -N '' -C "user ecdsa" -f user_ecdsa
"$THEIRS" -q -t rsa -b 2048 -N '' -C "user rsa" -f user_rsa
"$THEIRS" -q -t ed25519 -N '' -C "host ed25519" -f host_ed25519

# sign NAME CA KEY [ssh-keygen -s args...]: both sides sign KEY (a copy
# each: theirs.NAME.pub, ours.NAME.pub) with the same arguments; their
# messages and statuses must match, and Debian's listing of both
# certificates too.
sign() {
    local name=$1 ca=$2 key=$3
    shift 3
    cp "$key.pub" "theirs.$name.pub"
    cp "$key.pub" "ours.$name.pub"
    set +e
    "$THEIRS" -s "$ca" "$@" "theirs.$name.pub" >"want.sign_$name" 2>&1 </dev/null
    echo "status $?" >>"want.sign_$name"
    "$OURS" -s "$ca" "$@" "ours.$name.pub" >"got.sign_$name" 2>&1 </dev/null
    echo "status $?" >>"got.sign_$name"
    set -e
    sed -i "s/theirs\.$name/ours.$name/" "want.sign_$name"
    check "sign_$name"
    [ -f "theirs.$name-cert.pub" ] || return 0
    listing "theirs.$name-cert.pub" >"want.L_$name"
    listing "ours.$name-cert.pub" >"got.L_$name" 2>&1 || true
    check "L_$name"
    # The comment each writes after the certificate.
    cut -d' ' -f3- "theirs.$name-cert.pub" >"want.comment_$name"
    cut -d' ' -f3- "ours.$name-cert.pub" >"got.comment_$name"
    check "comment_$name"
}

# --- Ours signs, Debian lists (and signs the same for comparison) ------------
sign user_ed25519 ca_ed25519 user_ed25519 -I "alice@longhaul" -n alice,bob -V 20200101:20400101 -z 42 \
    -O force-command=/bin/true -O source-address=127.0.0.1/32,::1
sign user_ecdsa ca_ecdsa user_ecdsa -I "any principal"
sign user_rsa_256 ca_rsa user_rsa -t rsa-sha2-256 -I "rsa user" -n alice -O clear -z 7
sign user_rsa_512 ca_rsa user_rsa -t rsa-sha2-512 -I "rsa 512" -n alice -V always:20400101123456
sign user_rsa_default ca_rsa user_ed25519 -I "rsa default" -V 20200101Z:forever
sign user_sha1 ca_rsa user_ed25519 -t ssh-rsa -I sha1 -n alice
sign host ca_ed25519 host_ed25519 -h -I "host cert" -n host.example,127.0.0.1 -V 20200101000000:20400101000000 -z 1000
sign host_ext ca_ecdsa host_ed25519 -h -O permit-pty -I "host with extension"
sign options ca_ed25519 user_ecdsa -I opts -O no-pty -O NO-AGENT-FORWARDING -O verify-required \
    -O critical:custom@example.com=value -O extension:flag@example.com -O extension:kv@example.com=v
sign clear_permit ca_ed25519 user_ed25519 -I cp -O clear -O permit-pty -O permit-user-rc -V 0x10:0x20
sign encrypted ca_enc user_ed25519 -P 'ca pass' -I enc -n bob
sign quiet ca_ed25519 user_ed25519 -q -I quiet
sign before ca_ed25519 user_ed25519 -I before -V always:20300101
sign huge_times ca_ed25519 user_ed25519 -I huge -V 0x1:0x7fffffffffffffff

# -U: the CA's private half held by (Debian's) ssh-agent; -s names its
# public key (or the private key file, whose .pub is read). Refusals: no
# agent, an empty agent, an agent without the CA, no such CA file.
if command -v ssh-agent >/dev/null && command -v ssh-add >/dev/null; then
    eval "$(ssh-agent -s -a "$T/agent.sock")" >/dev/null
    LH_PIDS+=("$SSH_AGENT_PID")
    sign agent_empty ca_ed25519.pub user_ed25519 -U -I agent
    ssh-add -q ca_rsa 2>/dev/null
    sign agent_without_ca ca_ed25519.pub user_ed25519 -U -I agent
    ssh-add -q ca_ed25519 2>/dev/null
    sign agent_ed25519 ca_ed25519.pub user_ecdsa -U -I agent -n alice,bob -z 9 -O no-pty
    sign agent_rsa_512 ca_rsa.pub user_ed25519 -U -I agent-rsa -n alice
    sign agent_rsa_sha1 ca_rsa.pub user_ed25519 -U -t ssh-rsa -I agent-sha1
    sign agent_private_path ca_ed25519 user_ed25519 -U -I from-private-path
    sign agent_no_file no_such_ca user_ed25519 -U -I missing
    kill "$SSH_AGENT_PID"
    sign agent_gone ca_ed25519.pub user_ed25519 -U -I gone
    unset SSH_AUTH_SOCK SSH_AGENT_PID
    sign agent_absent ca_ed25519.pub user_ed25519 -U -I absent
else
    lh_skip_check "ssh-keygen -U" "OpenSSH's ssh-agent and ssh-add not found"
fi
# Refusals: the same message and status, and no certificate.
sign no_id ca_ed25519 user_ed25519 -n alice
sign bad_option ca_ed25519 user_ed25519 -I x -O no-such-option
sign bad_source ca_ed25519 user_ed25519 -I x -O source-address=10.0.0.1/8
sign bad_serial ca_ed25519 user_ed25519 -I x -z 12x
sign bad_validity ca_ed25519 user_ed25519 -I x -V 20200101
sign empty_validity ca_ed25519 user_ed25519 -I x -V 20300101:20200101
sign bad_from ca_ed25519 user_ed25519 -I x -V yesterday:forever
sign empty_principal ca_ed25519 user_ed25519 -I x -n a,,b
sign wrong_alg ca_ed25519 user_ed25519 -t rsa-sha2-256 -I x
sign bad_pass ca_enc user_ed25519 -P wrong -I x
sign missing_ca /nonexistent/ca user_ed25519 -I x
same sign_missing_key -s ca_ed25519 -I x missing.pub
same sign_a_cert -s ca_ed25519 -I x theirs.host-cert.pub
# Relative validity: from a minute before now to 52 weeks on (compared as
# spans, since the two run a second or so apart).
"$OURS" -q -s ca_ed25519 -I rel -V +52w user_ed25519.pub
span=$("$THEIRS" -L -f user_ed25519-cert.pub | sed -n 's/^ *Valid: from \(.*\) to \(.*\)$/\1 \2/p')
read -r from to <<<"$span"
secs=$(($(date -d "$to" +%s) - $(date -d "$from" +%s)))
LH_CHECKS=$((LH_CHECKS + 1))
if [ "$secs" -ge $((52 * 7 * 86400)) ] && [ "$secs" -le $((52 * 7 * 86400 + 120)) ]; then
    echo "ok: relative validity +52w ($from to $to)"
else
    echo "FAIL: relative validity +52w gave '$span'" >&2
    LH_FAILED=$((LH_FAILED + 1))
fi

# --- Debian signs, ours lists: output identical -----------------------------
for c in theirs.*-cert.pub; do
    n=${c#theirs.}
    n=${n%-cert.pub}
    same "list_$n" -L -f "$c"
    same "fp_$n" -l -f "$c"
    same "fpv_$n" -lv -E md5 -f "$c"
done
cat theirs.host-cert.pub user_ed25519.pub theirs.options-cert.pub >several
same list_several -L -f several
same list_plain -L -f user_ed25519.pub
same list_missing -L -f missing-cert.pub
printf 'garbage\n\n' >garbage
same list_garbage -L -f garbage

# --- Debian's sshd accepts a certificate signed by ours ----------------------
if [ ! -x "$LH_SSHD" ] || ! command -v ssh >/dev/null; then
    lh_skip_check "sshd login with our certificate" "OpenSSH's sshd or ssh not found (openssh-server, openssh-client)"
elif [ "$(id -u)" != 0 ]; then
    lh_skip_check "sshd login with our certificate" "needs root (a test user)"
else
    lh_make_user "pw-$RANDOM"
    user=$LH_USER
    chmod 711 "$T"
    lh_make_host_keys "$T"
    cp ca_ed25519.pub trusted_ca.pub
    chmod 644 trusted_ca.pub
    "$THEIRS" -q -t ed25519 -N '' -C login -f id_login
    "$THEIRS" -q -t ed25519 -N '' -C wrong -f id_wrong
    "$THEIRS" -q -t ed25519 -N '' -C forced -f id_forced
    chmod 600 id_login id_wrong id_forced
    "$OURS" -q -s ca_ed25519 -I "login for $user" -n "$user" -V -5m:+1h id_login.pub
    "$OURS" -q -s ca_ed25519 -I wrong -n "not-$user" id_wrong.pub
    "$OURS" -q -s ca_ed25519 -I forced -n "$user" -O force-command="echo forced-command" id_forced.pub
    lh_port port
    # No authorized_keys: only the CA's certificates can log in.
    lh_start_sshd "$T" "$port" "TrustedUserCAKeys $T/trusted_ca.pub" "PubkeyAuthentication yes"
    lh_known_hosts "$T" "$port"
    cert_login() { # KEY COMMAND: the command's output over a certificate login
        lh_ssh_to "$T" "$port" "$T/$1" -o "CertificateFile=$T/$1-cert.pub" -l "$user" 127.0.0.1 "$2" 2>>"$T/ssh.err"
    }
    accepted() { [ "$(cert_login id_login 'echo logged-in')" = logged-in ]; }
    wrong_principal_refused() { ! cert_login id_wrong 'echo logged-in' >/dev/null; }
    force_command_applied() { [ "$(cert_login id_forced 'echo not-forced')" = forced-command ]; }
    lh_check "Debian sshd accepts our user certificate" accepted
    lh_check "Debian sshd refuses our certificate for another principal" wrong_principal_refused
    lh_check "Debian sshd applies our certificate's force-command" force_command_applied
    if ! accepted; then
        tail -n 30 "$T/sshd.log" >&2
        cat "$T/ssh.err" >&2
    fi
fi

lh_summary || lh_fail "$LH_FAILED comparisons differ or were skipped"
echo "PASS: ssh-keygen certificates compatible with OpenSSH's"
