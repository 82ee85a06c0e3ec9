#!/usr/bin/env bash
# OpenSSH certificates with Longhaul's ssh-keygen beside Debian's: each
# lists the other's certificates (-L) with identical output (ed25519, ECDSA
# and RSA CAs, rsa-sha2-256/512 and ssh-rsa, user and host certificates,
# principals, validity, critical options and extensions), signing (-s) says
# and writes what Debian's does for the same arguments, -l fingerprints a
# certificate the same way, errors carry the same messages and statuses,
# -U signs with a CA key held by ssh-agent as Debian's does,
# Debian's sshd (TrustedUserCAKeys) lets Debian's ssh log in with a
# user certificate signed by Longhaul's ssh-keygen, and KRLs (-k, -u, -z,
# -s CA or none; serials, ranges, key IDs, key:, sha1:, sha256:, hash:,
# key and certificate files) written by each are read alike by Debian's
# -Q and refuse certificates in Debian's sshd (RevokedKeys).
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
# The certificate flags without -s: parsed (a bad -V or -z still fails as
# Debian's does), otherwise ignored by the other operations.
same certflags_fingerprint -h -I id -n a,b -V +1d -z 5 -O clear -l -f user_ed25519.pub
same certflags_print_public -I id -n a -y -f user_ed25519
same certflags_list -h -O no-pty -L -f theirs.host-cert.pub
same certflags_bad_validity -V nonsense -l -f user_ed25519.pub
same certflags_bad_serial -z x5 -l -f user_ed25519.pub

# --- KRLs: ours writes (-k), Debian's reads (-Q), and the reverse ----------
# Each side writes its KRL in its own directory (krl.t Debian's, krl.o
# ours) from the same inputs; messages and statuses must match, and
# Debian's -Q must give the same answers (and listing, but for the time it
# was generated) for both KRLs.
mkdir -p krl.t krl.o
KRL_KEYS="user_ed25519.pub user_ecdsa.pub user_rsa.pub host_ed25519.pub ca_rsa.pub"
KRL_CERTS="theirs.user_ed25519-cert.pub theirs.host-cert.pub theirs.user_ecdsa-cert.pub theirs.quiet-cert.pub
    theirs.user_rsa_256-cert.pub theirs.before-cert.pub ours.user_ed25519-cert.pub ours.options-cert.pub"
# krl_gen NAME ARGS...: both run `ssh-keygen -k ARGS` in their directory
# (inputs are ../FILE there), standard input from $KRL_STDIN.
krl_gen() {
    local name=$1
    shift
    set +e
    (cd krl.t && "$THEIRS" -k "$@") >"want.krlgen_$name" 2>&1 <"${KRL_STDIN:-/dev/null}"
    echo "status $?" >>"want.krlgen_$name"
    (cd krl.o && "$OURS" -k "$@") >"got.krlgen_$name" 2>&1 <"${KRL_STDIN:-/dev/null}"
    echo "status $?" >>"got.krlgen_$name"
    set -e
    check "krlgen_$name"
}
# krl_query KRL: Debian's -Q (each key and certificate: REVOKED or ok) and
# -Q -l of both sides' KRL; ours -Q on Debian's KRL for the plain keys.
krl_query() {
    local krl=$1
    set +e
    # shellcheck disable=SC2086
    "$THEIRS" -Q -f "krl.t/$krl" $KRL_KEYS $KRL_CERTS >"want.krlq_$krl" 2>&1
    echo "status $?" >>"want.krlq_$krl"
    # shellcheck disable=SC2086
    "$THEIRS" -Q -f "krl.o/$krl" $KRL_KEYS $KRL_CERTS >"got.krlq_$krl" 2>&1
    echo "status $?" >>"got.krlq_$krl"
    "$THEIRS" -Q -l -f "krl.t/$krl" 2>&1 | grep -v '^# Generated at ' >"want.krll_$krl"
    "$THEIRS" -Q -l -f "krl.o/$krl" 2>&1 | grep -v '^# Generated at ' >"got.krll_$krl"
    # shellcheck disable=SC2086
    "$THEIRS" -Q -f "krl.t/$krl" $KRL_KEYS >"want.krlours_$krl" 2>&1
    echo "status $?" >>"want.krlours_$krl"
    # shellcheck disable=SC2086
    "$OURS" -Q -f "krl.t/$krl" $KRL_KEYS >"got.krlours_$krl" 2>&1
    echo "status $?" >>"got.krlours_$krl"
    set -e
    check "krlq_$krl"
    check "krll_$krl"
    check "krlours_$krl"
}
{
    echo '# certificates of the Ed25519 CA, keys four ways'
    echo 'serial: 1'
    echo 'serial: 5-9'
    echo '  SERIAL: 0x20   # hex, a comment after it'
    echo 'serial: 42'
    for s in 100 102 104 106 110 111 112 130; do echo "serial: $s"; done
    echo 'serial: 1000-1003'
    echo 'serial: 2000000'
    echo 'serial: 5000000-6000000'
    echo 'serial: 0xffffffffffffff00-0xffffffffffffffff'
    echo 'id: quiet'
    echo 'id: any principal'
    echo "key: $(cat user_ecdsa.pub)"
    echo "sha1: $(cat host_ed25519.pub)"
    echo "sha256: $(cat ca_rsa.pub)"
    echo "hash: $("$THEIRS" -l -f user_rsa.pub | cut -d' ' -f2)"
    echo
} >krl.spec
printf 'serial: 7\nid: before\n' >krl_any.spec
printf 'serial: 43-50\nid: quiet\n' >krl_more.spec

krl_gen empty -f empty.krl
krl_query empty.krl
krl_gen keys -f keys.krl ../user_ed25519.pub ../user_rsa.pub
krl_query keys.krl
krl_gen certs -f certs.krl ../theirs.user_ed25519-cert.pub ../theirs.host-cert.pub ../theirs.user_ecdsa-cert.pub
krl_query certs.krl
krl_gen spec -f spec.krl -s ../ca_ed25519.pub ../krl.spec
krl_query spec.krl
krl_gen any_ca -f any.krl -s none ../krl_any.spec
krl_query any.krl
krl_gen version -f version.krl -z 17 -C 'longhaul KRL' ../user_ecdsa.pub
krl_query version.krl
KRL_STDIN=krl_more.spec krl_gen stdin -f stdin.krl -s ../ca_ed25519 -
krl_query stdin.krl
# -u: the keys KRL gains the spec's certificates, the version KRL a new
# version; a KRL made by the other side is updated alike.
krl_gen update -u -f keys.krl -s ../ca_ed25519.pub ../krl.spec ../theirs.user_rsa_256-cert.pub
krl_query keys.krl
krl_gen update_version -u -f version.krl -z 18 -s ../ca_ecdsa.pub ../krl_more.spec
krl_query version.krl
cp krl.t/certs.krl krl.t/cross.krl
cp krl.t/certs.krl krl.o/cross.krl
krl_gen update_theirs -u -q -f cross.krl -s ../ca_ed25519.pub ../krl_more.spec ../user_rsa.pub
krl_query cross.krl
# Refusals: the same message and status, and no KRL written.
printf 'serial: 5x\n' >krl_bad_serial.spec
printf 'serial: 9-3\n' >krl_bad_range.spec
printf 'serial: 0\n' >krl_zero.spec
printf 'hash: SHA256:abc\n' >krl_bad_hash.spec
printf 'hash: MD5:00\n' >krl_md5.spec
printf 'key: ssh-ed25519 AAAA\n' >krl_bad_key.spec
krl_gen no_file ../krl.spec
krl_gen no_ca -f x.krl ../krl.spec
krl_gen id_no_ca -f x.krl ../krl_any.spec
krl_gen bad_serial -f x.krl -s ../ca_ed25519.pub ../krl_bad_serial.spec
krl_gen bad_range -f x.krl -s ../ca_ed25519.pub ../krl_bad_range.spec
krl_gen zero_serial -f x.krl -s ../ca_ed25519.pub ../krl_zero.spec
krl_gen bad_hash -f x.krl ../krl_bad_hash.spec
krl_gen md5_hash -f x.krl ../krl_md5.spec
krl_gen bad_key -f x.krl ../krl_bad_key.spec
krl_gen private_key -f x.krl ../user_ed25519
krl_gen missing_input -f x.krl ../missing.spec
krl_gen missing_ca -f x.krl -s ../missing.pub ../krl.spec
krl_gen update_missing -u -f missing.krl ../user_ed25519.pub
krl_gen update_not_krl -u -f ../krl.spec ../user_ed25519.pub
krl_gen bad_version -f x.krl -z 1x ../user_ed25519.pub
LH_CHECKS=$((LH_CHECKS + 1))
if [ -e krl.o/x.krl ] || [ -e krl.o/missing.krl ]; then
    echo "FAIL: a refused ssh-keygen -k wrote a KRL" >&2
    LH_FAILED=$((LH_FAILED + 1))
else
    echo "ok: refused -k runs wrote no KRL"
fi

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
    "$THEIRS" -q -t ed25519 -N '' -C revoked -f id_revoked
    chmod 600 id_login id_wrong id_forced id_revoked
    "$OURS" -q -s ca_ed25519 -I "login for $user" -n "$user" -V -5m:+1h id_login.pub
    "$OURS" -q -s ca_ed25519 -I wrong -n "not-$user" id_wrong.pub
    "$OURS" -q -s ca_ed25519 -I forced -n "$user" -O force-command="echo forced-command" id_forced.pub
    # A certificate revoked by serial in a KRL made by ours (RevokedKeys).
    "$OURS" -q -s ca_ed25519 -I revoked -n "$user" -z 77 id_revoked.pub
    printf 'serial: 70-80\nid: nobody\n' >sshd_krl.spec
    "$OURS" -q -k -f revoked.krl -s ca_ed25519.pub sshd_krl.spec
    chmod 644 revoked.krl
    lh_port port
    # No authorized_keys: only the CA's certificates can log in.
    lh_start_sshd "$T" "$port" "TrustedUserCAKeys $T/trusted_ca.pub" "PubkeyAuthentication yes" \
        "RevokedKeys $T/revoked.krl"
    lh_known_hosts "$T" "$port"
    cert_login() { # KEY COMMAND: the command's output over a certificate login
        lh_ssh_to "$T" "$port" "$T/$1" -o "CertificateFile=$T/$1-cert.pub" -l "$user" 127.0.0.1 "$2" 2>>"$T/ssh.err"
    }
    accepted() { [ "$(cert_login id_login 'echo logged-in')" = logged-in ]; }
    wrong_principal_refused() { ! cert_login id_wrong 'echo logged-in' >/dev/null; }
    force_command_applied() { [ "$(cert_login id_forced 'echo not-forced')" = forced-command ]; }
    revoked_refused() { ! cert_login id_revoked 'echo logged-in' >/dev/null; }
    lh_check "Debian sshd accepts our user certificate" accepted
    lh_check "Debian sshd refuses our certificate for another principal" wrong_principal_refused
    lh_check "Debian sshd applies our certificate's force-command" force_command_applied
    lh_check "Debian sshd refuses a certificate our KRL revokes (RevokedKeys)" revoked_refused
    if ! accepted; then
        tail -n 30 "$T/sshd.log" >&2
        cat "$T/ssh.err" >&2
    fi
fi

lh_summary || lh_fail "$LH_FAILED comparisons differ or were skipped"
echo "PASS: ssh-keygen certificates compatible with OpenSSH's"
