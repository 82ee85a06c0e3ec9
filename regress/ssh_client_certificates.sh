#!/usr/bin/env bash
# Longhaul's ssh logging in with user certificates made by Debian's
# ssh-keygen, against Debian's sshd (TrustedUserCAKeys, no authorized_keys
# for the user) and, when ../shared/peers has it, OpenSSH 10.5's sshd:
# ed25519, ECDSA and RSA certificates (RSA offered as
# rsa-sha2-512-cert-v01@openssh.com, or -256 when PubkeyAcceptedAlgorithms
# says so), found as "<key>-cert.pub" beside -i key or named by
# CertificateFile, the -v lines and their order the same as Debian's ssh
# prints, and refusals (an expired certificate, certificates filtered out
# by PubkeyAcceptedAlgorithms) ending in "Permission denied".
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
SSH=$BUILD/bin/ssh
[ -x "$SSH" ] || lh_fail "ssh not built ($SSH)"
lh_require_openssh_server
[ "$(id -u)" = 0 ] || lh_skip "needs root (sshd logs in the user running it only as root)"
T=$LH_TMP
me=$(id -un)

lh_make_host_keys "$T"
# A CA and, per key type, a key with "<key>-cert.pub" beside it.
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C "regress CA" -f "$T/ca"
sign() { # KEY [ssh-keygen -s options...]
    local key=$1
    shift
    "$LH_SSH_KEYGEN" -q -s "$T/ca" -I "regress $(basename "$key")" -n "$me" "$@" "$key.pub"
}
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id_ed25519" && sign "$T/id_ed25519" -V -5m:+1h
"$LH_SSH_KEYGEN" -q -t ecdsa -b 384 -N '' -f "$T/id_ecdsa" && sign "$T/id_ecdsa" -V -5m:+1h
"$LH_SSH_KEYGEN" -q -t rsa -b 2048 -N '' -f "$T/id_rsa" && sign "$T/id_rsa" -V -5m:+1h
# CertificateFile: the certificate away from its key, under another name.
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id_cf" && sign "$T/id_cf" && mv "$T/id_cf-cert.pub" "$T/elsewhere.crt"
# Expired a year ago.
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id_expired" && sign "$T/id_expired" -V 20000101000000:20010101000000
# A certificate for another principal.
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id_other"
"$LH_SSH_KEYGEN" -q -s "$T/ca" -I other -n "not-$me" "$T/id_other.pub"
chmod 600 "$T"/id_*

# Debian's sshd: the CA trusted, no authorized_keys file at all (the plain
# keys can never log in), DEBUG1 so the log names the offered algorithm.
D=$T/debian
mkdir -p "$D" && cp "$T"/ssh_host_* "$D/"
lh_port port_d
lh_start_sshd "$D" "$port_d" "TrustedUserCAKeys $T/ca.pub" "LogLevel DEBUG1"
lh_known_hosts "$D" "$port_d"

# run SSH PORT DIR LOG [args...]: a remote `echo cert-ok`, -v output in LOG.
run() {
    local ssh=$1 port=$2 dir=$3 log=$4
    shift 4
    "$ssh" -F /dev/null -p "$port" -o "UserKnownHostsFile=$dir/known_hosts.$port" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -v "$@" "$me@127.0.0.1" 'echo cert-ok' 2>"$log"
}

# auth_lines LOG: the -v lines about keys, in order, without the "debug1: ".
auth_lines() {
    tr -d '\r' <"$1" | sed -n 's/^debug1: \(Will attempt key: .*\|Offering public key: .*\|Server accepts key: .*\)$/\1/p'
}

# log_since MARK FILE: the part of FILE after its first MARK bytes.
log_since() { tail -c +"$(($1 + 1))" "$2"; }
size_of() { stat -c %s "$1"; }

fp() { "$LH_SSH_KEYGEN" -lf "$1" | cut -d' ' -f2; }

# login_with NAME KEY CERT_LABEL CERT_ALG [ssh args...]: logs in with -i
# KEY (its -cert.pub beside it), checks the -v lines against OpenSSH's
# wording and Debian's ssh, and that the server took the certificate with
# CERT_ALG.
login_with() {
    local name=$1 key=$2 label=$3 alg=$4 out mark
    shift 4
    mark=$(size_of "$D/sshd.log")
    out=$(run "$SSH" "$port_d" "$D" "$T/$name.log" -i "$key" "$@") || { cat "$T/$name.log"; return 1; }
    [ "$out" = cert-ok ] || { echo "   output: $out"; return 1; }
    local f
    f=$(fp "$key.pub")
    auth_lines "$T/$name.log" >"$T/$name.lines"
    grep -qxF "Offering public key: $key $label $f explicit" "$T/$name.lines" &&
        grep -qxF "Server accepts key: $key $label $f explicit" "$T/$name.lines" ||
        { echo "   -v lines:"; cat "$T/$name.lines"; return 1; }
    sleep 0.2
    log_since "$mark" "$D/sshd.log" >"$T/$name.sshd"
    grep -q "userauth_pubkey: publickey test pkalg $alg pkblob $label $f" "$T/$name.sshd" &&
        grep -q "Accepted publickey for $me from 127.0.0.1 port [0-9]* ssh2: $label $f ID regress" "$T/$name.sshd" ||
        { echo "   sshd log:"; grep -i 'pubkey\|cert\|Accepted' "$T/$name.sshd"; return 1; }
    # Debian's ssh, the same command: the same lines in the same order.
    run /usr/bin/ssh "$port_d" "$D" "$T/$name.ref.log" -i "$key" "$@" >/dev/null || { cat "$T/$name.ref.log"; return 1; }
    auth_lines "$T/$name.ref.log" >"$T/$name.ref.lines"
    diff "$T/$name.ref.lines" "$T/$name.lines" || { echo "   (< Debian's ssh, > Longhaul's)"; return 1; }
}

lh_check "ed25519: -i key offers key-cert.pub after the key, ssh-ed25519-cert-v01, lines as Debian's ssh" \
    login_with ed25519 "$T/id_ed25519" ED25519-CERT ssh-ed25519-cert-v01@openssh.com
lh_check "ECDSA P-384: ecdsa-sha2-nistp384-cert-v01" \
    login_with ecdsa "$T/id_ecdsa" ECDSA-CERT ecdsa-sha2-nistp384-cert-v01@openssh.com
lh_check "RSA: rsa-sha2-512-cert-v01 chosen from server-sig-algs" \
    login_with rsa "$T/id_rsa" RSA-CERT rsa-sha2-512-cert-v01@openssh.com
lh_check "RSA with PubkeyAcceptedAlgorithms=rsa-sha2-256-cert-v01@openssh.com: rsa-sha2-256-cert-v01" \
    login_with rsa256 "$T/id_rsa" RSA-CERT rsa-sha2-256-cert-v01@openssh.com \
    -o PubkeyAcceptedAlgorithms=rsa-sha2-256-cert-v01@openssh.com

check_certificate_file() {
    local out f
    f=$(fp "$T/id_cf.pub")
    out=$(run "$SSH" "$port_d" "$D" "$T/cf.log" -i "$T/id_cf" -o "CertificateFile=$T/elsewhere.crt") ||
        { cat "$T/cf.log"; return 1; }
    [ "$out" = cert-ok ] || return 1
    auth_lines "$T/cf.log" >"$T/cf.lines"
    # The certificate comes first, under its own file name.
    [ "$(head -n1 "$T/cf.lines")" = "Will attempt key: $T/elsewhere.crt ED25519-CERT $f explicit" ] &&
        tr -d '\r' <"$T/cf.log" | lh_matches -xF "debug1: certificate file $T/elsewhere.crt type 7" || { cat "$T/cf.log"; return 1; }
    run /usr/bin/ssh "$port_d" "$D" "$T/cf.ref.log" -i "$T/id_cf" -o "CertificateFile=$T/elsewhere.crt" >/dev/null ||
        { cat "$T/cf.ref.log"; return 1; }
    auth_lines "$T/cf.ref.log" >"$T/cf.ref.lines"
    diff "$T/cf.ref.lines" "$T/cf.lines" || { echo "   (< Debian's ssh, > Longhaul's)"; return 1; }
}
lh_check "CertificateFile: offered first, signed with the -i key holding its key" check_certificate_file

check_certificate_file_ssh_config() {
    local out
    printf 'Host cert-test\n  HostName 127.0.0.1\n  CertificateFile %s\n  IdentityFile %s\n' \
        "$T/elsewhere.crt" "$T/id_cf" >"$T/config"
    out=$("$SSH" -F "$T/config" -p "$port_d" -o "UserKnownHostsFile=$D/known_hosts.$port_d" \
        -o StrictHostKeyChecking=yes -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none \
        -l "$me" cert-test 'echo cert-ok' 2>"$T/cfg.log") || { cat "$T/cfg.log"; return 1; }
    [ "$out" = cert-ok ]
}
lh_check "CertificateFile and IdentityFile from ssh_config" check_certificate_file_ssh_config

check_certificate_file_without_key() {
    # No identity holds the certificate's key: OpenSSH's debug line, then
    # the next key (whose plain form the server refuses).
    local rc=0
    run "$SSH" "$port_d" "$D" "$T/nokey.log" -i "$T/id_ed25519" -o "CertificateFile=$T/elsewhere.crt" || rc=$?
    [ "$rc" = 255 ] &&
        grep -qF "no separate private key for certificate \"$T/elsewhere.crt\"" "$T/nokey.log" &&
        grep -q "Permission denied (publickey" "$T/nokey.log" || { echo "   exit $rc"; cat "$T/nokey.log"; return 1; }
}
lh_check "CertificateFile whose key no identity holds: skipped with OpenSSH's debug line" check_certificate_file_without_key

check_agent_signs() {
    # The private key only in ssh-agent: the certificate (beside -i key's
    # .pub, or from CertificateFile) is signed through the agent.
    if ! command -v ssh-agent >/dev/null || ! command -v ssh-add >/dev/null; then
        lh_skip_check "agent-held key" "ssh-agent or ssh-add not installed (openssh-client)"
        return 0
    fi
    ssh-agent -a "$T/agent.sock" -D >/dev/null 2>&1 &
    LH_PIDS+=($!)
    lh_wait_until 5 test -S "$T/agent.sock" || { echo "   ssh-agent did not start"; return 1; }
    "$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/agent_key" && sign "$T/agent_key" &&
        SSH_AUTH_SOCK="$T/agent.sock" ssh-add -q "$T/agent_key" 2>/dev/null || { echo "   ssh-add failed"; return 1; }
    # A key file ssh would refuse to load (mode 644, "UNPROTECTED PRIVATE
    # KEY FILE"): the login works only if the agent signs. (-i needs the file
    # to exist, as OpenSSH's does.)
    chmod 644 "$T/agent_key"
    local ssh out name
    mv "$T/agent_key-cert.pub" "$T/agent.crt"
    cp "$T/agent.crt" "$T/agent_i-cert.pub"
    cp "$T/agent_key" "$T/agent_i" && cp "$T/agent_key.pub" "$T/agent_i.pub" && chmod 644 "$T/agent_i"
    for name in agent_i agent_cf; do
        for ssh in "$SSH" /usr/bin/ssh; do
            local args=(-i "$T/agent_i")
            [ "$name" = agent_cf ] && args=(-i "$T/agent_key" -o "CertificateFile=$T/agent.crt")
            out=$(SSH_AUTH_SOCK="$T/agent.sock" "$ssh" -F /dev/null -p "$port_d" \
                -o "UserKnownHostsFile=$D/known_hosts.$port_d" -o StrictHostKeyChecking=yes -o BatchMode=yes \
                -o IdentitiesOnly=yes -v "${args[@]}" "$me@127.0.0.1" 'echo cert-ok' 2>"$T/$name.log") ||
                { echo "   $ssh $name:"; cat "$T/$name.log"; return 1; }
            [ "$out" = cert-ok ] || return 1
            [ "$ssh" = "$SSH" ] && auth_lines "$T/$name.log" >"$T/$name.lines"
        done
        auth_lines "$T/$name.log" >"$T/$name.ref.lines"
        grep -q "^Server accepts key: .* ED25519-CERT " "$T/$name.lines" && ! grep -q UNPROTECTED "$T/$name.log" &&
            diff "$T/$name.ref.lines" "$T/$name.lines" || { echo "   $name (< Debian's ssh, > Longhaul's)"; return 1; }
    done
}
lh_check "private key only in ssh-agent: -i key's certificate and a CertificateFile signed through the agent" \
    check_agent_signs

# refused NAME [ssh args...]: the login fails as OpenSSH's does.
refused() {
    local name=$1 rc=0
    shift
    run "$SSH" "$port_d" "$D" "$T/$name.log" "$@" || rc=$?
    [ "$rc" = 255 ] && grep -q "^$me@127.0.0.1: Permission denied (publickey" "$T/$name.log" ||
        { echo "   exit $rc"; cat "$T/$name.log"; return 1; }
}

check_expired() {
    local mark
    mark=$(size_of "$D/sshd.log")
    refused expired -i "$T/id_expired" || return 1
    grep -q "Offering public key: $T/id_expired ED25519-CERT" "$T/expired.log" || { cat "$T/expired.log"; return 1; }
    sleep 0.2
    log_since "$mark" "$D/sshd.log" | lh_matches "Certificate invalid: expired" ||
        { echo "   sshd log:"; log_since "$mark" "$D/sshd.log" | grep -i cert; return 1; }
}
lh_check "expired certificate: refused (sshd: Certificate invalid: expired), Permission denied" check_expired

check_wrong_principal() {
    refused principal -i "$T/id_other"
}
lh_check "certificate for another principal: Permission denied" check_wrong_principal

check_filtered() {
    refused filtered -i "$T/id_ed25519" -o 'PubkeyAcceptedAlgorithms=-*-cert-v01@openssh.com' || return 1
    grep -qF "Skipping ssh-ed25519-cert-v01@openssh.com key $T/id_ed25519 - corresponding algorithm not in PubkeyAcceptedAlgorithms" \
        "$T/filtered.log" || { cat "$T/filtered.log"; return 1; }
    ! grep -q "ED25519-CERT" <(auth_lines "$T/filtered.log")
}
lh_check "PubkeyAcceptedAlgorithms without certificates: the certificate is skipped, Permission denied" check_filtered

check_ssh_g() {
    local ours theirs
    ours=$("$SSH" -G -F /dev/null h 2>/dev/null | grep '^pubkeyacceptedalgorithms ')
    theirs=$(/usr/bin/ssh -G -F /dev/null h 2>/dev/null | grep '^pubkeyacceptedalgorithms ')
    [ "$ours" = "$theirs" ] || { echo "   ours:   $ours"; echo "   Debian: $theirs"; return 1; }
}
lh_check "ssh -G pubkeyacceptedalgorithms: Debian's default (security keys included)" check_ssh_g

# --- OpenSSH 10.5's sshd (../shared/peers/README.md), when present.
peers=${LH_PEERS_DIR:-$(dirname "$0")/../../shared/peers}
peers=$(cd "$peers" 2>/dev/null && pwd) || peers=${LH_PEERS_DIR:-../shared/peers}
O10=$(printf '%s\n' "$peers"/openssh-10* 2>/dev/null | sort -V | tail -n1)
check_openssh10() {
    if [[ -z $O10 || ! -x $O10/sbin/sshd || ! -x $O10/libexec/sshd-session || ! -x $O10/libexec/sshd-auth ]]; then
        lh_skip_check "OpenSSH 10.5 sshd" "no OpenSSH 10 build at $peers (../shared/peers/README.md)"
        return 0
    fi
    getent passwd sshd >/dev/null || { lh_skip_check "OpenSSH 10.5 sshd" "no 'sshd' user (openssh-server makes it)"; return 0; }
    # (/var/empty is left in place when made here, as pq_kex_interop.sh does.)
    [ -d /var/empty ] || { mkdir -p /var/empty && chmod 755 /var/empty; }
    local O=$T/o10 port_o out k
    mkdir -p "$O" && cp "$T"/ssh_host_* "$O/"
    lh_port port_o
    LH_SSHD=$O10/sbin/sshd lh_start_sshd "$O" "$port_o" "SshdSessionPath $O10/libexec/sshd-session" \
        "SshdAuthPath $O10/libexec/sshd-auth" "TrustedUserCAKeys $T/ca.pub" "LogLevel DEBUG1"
    lh_known_hosts "$O" "$port_o"
    for k in ed25519 ecdsa rsa; do
        out=$(run "$SSH" "$port_o" "$O" "$T/o10_$k.log" -i "$T/id_$k") || { cat "$T/o10_$k.log"; return 1; }
        [ "$out" = cert-ok ] || { echo "   $k: $out"; return 1; }
    done
    out=$(run "$SSH" "$port_o" "$O" "$T/o10_cf.log" -i "$T/id_cf" -o "CertificateFile=$T/elsewhere.crt") ||
        { cat "$T/o10_cf.log"; return 1; }
    [ "$out" = cert-ok ] || return 1
    sleep 0.2
    grep -q "pkalg rsa-sha2-512-cert-v01@openssh.com" "$O/sshd.log" || { grep -i 'pkalg' "$O/sshd.log"; return 1; }
    local rc=0
    run "$SSH" "$port_o" "$O" "$T/o10_expired.log" -i "$T/id_expired" || rc=$?
    [ "$rc" = 255 ] || { echo "   expired: exit $rc"; return 1; }
}
lh_check "OpenSSH 10.5 sshd: ed25519, ECDSA, RSA (rsa-sha2-512-cert-v01) and CertificateFile log in; expired refused" \
    check_openssh10

lh_summary
