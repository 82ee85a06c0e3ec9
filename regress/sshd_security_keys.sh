#!/usr/bin/env bash
# FIDO security-key ("sk") user keys in Longhaul's sshd, beside Debian's
# sshd with the same configuration, with Debian's ssh and ssh-keygen and a
# software authenticator (regress/tools/sk_test_provider.cpp, TEST ONLY):
#  a. sk-ssh-ed25519 and sk-ecdsa-sha2-nistp256 keys on plain
#     authorized_keys lines log in;
#  b. a key made with -O no-touch-required (signatures without the user
#     presence flag): refused on a plain line, accepted on a
#     no-touch-required line, refused again under PubkeyAuthOptions
#     touch-required;
#  c. verify-required lines and PubkeyAuthOptions verify-required refuse a
#     key without user verification, accept one made with -O verify-required;
#  d. sk user certificates (plain Ed25519 CA): TrustedUserCAKeys, the
#     no-touch-required extension, cert-authority lines with and without
#     no-touch-required (both must allow it), the verify-required critical
#     option;
#  e. Longhaul's ssh-keygen -l, -y, -L on sk files print what Debian's
#     prints, and -Y verify of Debian's sk signatures agrees with Debian's;
#  f. Longhaul's ssh signs with sk keys through the provider
#     (SecurityKeyProvider, SSH_SK_PROVIDER) into both servers, PINs
#     through askpass, the touch notice as Debian's ssh shows it,
#     "internal" refused in words, sk keys in Debian's ssh-agent.
# Each case is two checks: "debian: ..." (Debian's sshd decides as OpenSSH
# 9.2 does, and writes the expected log line) and "longhaul: ..." (same
# outcome as Debian's, and the same auth log lines, ports aside).
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LONGHAUL_SSHD=$BUILD/bin/sshd
LONGHAUL_SSH=$BUILD/bin/ssh
LONGHAUL_KEYGEN=$BUILD/bin/ssh-keygen
PROVIDER=$BUILD/regress/sk_test_provider.so
DEBIAN_SSHD=/usr/sbin/sshd
[ -x "$LONGHAUL_SSHD" ] || lh_fail "sshd not built ($LONGHAUL_SSHD)"
[ -f "$PROVIDER" ] || lh_fail "the test provider is not built ($PROVIDER: ninja sk_test_provider)"
[ -x "$DEBIAN_SSHD" ] || lh_skip "OpenSSH's sshd not found at $DEBIAN_SSHD"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found"
T=$LH_TMP
chmod 711 "$T"

# A test user when root (its sessions run as that user), else ourselves.
if [ "$(id -u)" = 0 ]; then
    lh_make_user "pw-$RANDOM-$RANDOM"
    user=$LH_USER
else
    user=$(id -un)
fi

# ---------------------------------------------------------------- keys
# PINs: the provider wants LH_SK_TEST_PIN for every operation on a key
# with the user verification flag (-O verify-required), so ssh-keygen
# ("Enter PIN for authenticator: ") and ssh ("Enter PIN for ED25519-SK key
# FILE: ") ask for it, as with a real authenticator. An askpass program
# answers (SSH_ASKPASS_REQUIRE=force; no terminal) and logs each prompt;
# with SSH_ASKPASS_REQUIRE=force ssh also shows it "Confirm user presence
# for key ..." (SSH_ASKPASS_PROMPT=none) for keys that want a touch.
export LH_SK_TEST_PIN=4821
askpass=$T/askpass.sh
printf '#!/bin/sh\nprintf "%%s\\n" "$1" >>"%s"\nprintf "%%s\\n" "%s"\n' "$T/askpass.log" "$LH_SK_TEST_PIN" >"$askpass"
chmod 755 "$askpass"
with_askpass() { SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none "$@"; }
kg() { "$LH_SSH_KEYGEN" -q "$@" </dev/null; }
# sk KEY TYPE [-O options]: an sk key made by Debian's ssh-keygen with the provider.
sk() {
    local name=$1 type=$2
    shift 2
    with_askpass "$LH_SSH_KEYGEN" -q -t "$type" -w "$PROVIDER" -N '' -C "$name@sk-test" "$@" -f "$T/$name" </dev/null ||
        lh_fail "Debian's ssh-keygen could not make a $type key with $PROVIDER"
}
sk ed ed25519-sk                                      # flags 0x01 (UP)
sk ec ecdsa-sk                                        # 0x01
sk nt ed25519-sk -O no-touch-required                 # 0x00
sk ecnt ecdsa-sk -O no-touch-required                 # 0x00
sk vr ed25519-sk -O verify-required                   # 0x05 (UP|UV)
sk ecvr ecdsa-sk -O verify-required                   # 0x05
grep -qx "Enter PIN for authenticator: " "$T/askpass.log" 2>/dev/null ||
    lh_fail "Debian's ssh-keygen did not ask for the PIN of a verify-required key (askpass log: $(cat "$T/askpass.log" 2>/dev/null))"
kg -t ed25519 -N '' -C "sk user CA" -f "$T/ca"
# cert NAME KEY [ssh-keygen -s options]: $T/NAME-cert.pub, a user
# certificate for $T/KEY.pub with principal $user, key id NAME.
cert() {
    local name=$1 key=$2
    shift 2
    cp "$T/$key.pub" "$T/$name.pub"
    kg -s "$T/ca" -I "$name" -n "$user" "$@" "$T/$name.pub" || lh_fail "ssh-keygen -s $name failed"
    rm -f "$T/$name.pub"
}
cert edcert ed -z 11                                  # plain
cert eccert ec -z 12
cert ntplain nt -z 13                                 # no-touch key, cert without the extension
cert ntcert nt -z 14 -O no-touch-required             # ... with it
cert edvr ed -z 15 -O verify-required                 # critical verify-required, key without UV
cert vrvr vr -z 16 -O verify-required                 # ... key with UV
chmod 600 "$T"/ed "$T"/ec "$T"/nt "$T"/ecnt "$T"/vr "$T"/ecvr "$T"/ca
chmod 644 "$T"/*.pub

fp() { "$LH_SSH_KEYGEN" -l -f "$1" | cut -d' ' -f2; }
for k in ed ec nt ecnt vr ecvr ca; do
    printf -v "fp_$k" %s "$(fp "$T/$k.pub")"
done

# ---------------------------------------------------------------- servers
# One authorized_keys file for every server (rewritten by each case, so
# both servers read the same lines at the same path); a second one, empty,
# for the TrustedUserCAKeys cases.
AK=$T/authorized_keys
: >"$AK"
: >"$T/no_keys"
chmod 644 "$AK" "$T/no_keys"
ak() { printf '%s\n' "$@" >"$AK"; }
pub() { cut -d' ' -f1,2 "$T/$1.pub"; }

lh_make_host_keys "$T"
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# start SIDE PROFILE SSHD [sshd_config lines...]: a server in
# $T/SIDE-PROFILE; port in port_SIDE_PROFILE, or up_SIDE_PROFILE=no (with
# the reason in $T/SIDE-PROFILE/start.err) when it would not start.
start() {
    local side=$1 profile=$2 sshd=$3 dir=$T/$1-$2 p
    shift 3
    mkdir -p "$dir" && chmod 711 "$dir"
    cp "$T"/ssh_host_* "$dir/"
    lh_port p
    printf -v "port_${side}_$profile" %s "$p"
    printf -v "up_${side}_$profile" %s no
    lh_write_sshd_config "$dir" "$p" "$@"
    lh_known_hosts "$dir" "$p"
    [ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 0755 /run/sshd; }
    if ! "$sshd" -t -f "$dir/sshd_config" >"$dir/start.err" 2>&1; then
        echo "$side: sshd -t rejected the $profile config: $(head -c 300 "$dir/start.err")" >&2
        [ "$side" = debian ] && lh_fail "Debian's sshd rejected the test config"
        return 0
    fi
    "$sshd" -D -e -f "$dir/sshd_config" 2>"$dir/sshd.log" &
    LH_PIDS+=($!)
    if ! lh_wait_until 10 accepts "$p"; then
        head -c 1000 "$dir/sshd.log" >"$dir/start.err"
        echo "$side: sshd ($profile) did not start: $(cat "$dir/start.err")" >&2
        [ "$side" = debian ] && lh_fail "Debian's sshd did not start"
        return 0
    fi
    printf -v "up_${side}_$profile" %s yes
}
# Profiles: plain (authorized_keys only), touch and verify
# (PubkeyAuthOptions; the user CA trusted too), ca (TrustedUserCAKeys).
for side in debian longhaul; do
    if [ "$side" = debian ]; then s=$DEBIAN_SSHD; else s=$LONGHAUL_SSHD; fi
    start "$side" plain "$s" "TrustedUserCAKeys none" "AuthorizedKeysFile $AK"
    start "$side" touch "$s" "PubkeyAuthOptions touch-required" "TrustedUserCAKeys $T/ca.pub" "AuthorizedKeysFile $AK"
    start "$side" verify "$s" "PubkeyAuthOptions verify-required" "TrustedUserCAKeys $T/ca.pub" "AuthorizedKeysFile $AK"
    start "$side" ca "$s" "TrustedUserCAKeys $T/ca.pub" "AuthorizedKeysFile $T/no_keys"
done

# ---------------------------------------------------------------- logins
# login SIDE PROFILE KEY [CERT]: Debian's ssh through the provider; the
# client's output in $T/out.SIDE, its status returned.
login() {
    local side=$1 profile=$2 key=$3 cert=${4:-} port_var=port_$1_$2
    local certopt=(-o CertificateFile=none)
    [ -n "$cert" ] && certopt=(-o "CertificateFile=$T/$cert-cert.pub")
    with_askpass lh_ssh_to "$T/$side-$profile" "${!port_var}" "$T/$key" -o "SecurityKeyProvider=$PROVIDER" \
        "${certopt[@]}" -o ConnectTimeout=10 "$user@127.0.0.1" 'echo sk-login-ok' </dev/null >"$T/out.$side" 2>&1
}
# The auth lines of a log, from line $2 on, ports normalised.
auth_lines() {
    # (sshd -e ends its lines with CR LF.)
    tail -n +"$2" "$1" | tr -d '\r' |
        grep -E 'Accepted publickey|Failed publickey|signature for .* rejected: |Accepted key |Accepted certificate|Certificate invalid|Authentication key .* revoked|not met' |
        sed -E 's/ port [0-9]+/ port N/g' || true
}
# The connection is over (in the log) once it logged in and out, or the
# client went away.
conn_done() {
    tail -n +"$2" "$1" | lh_matches -E 'Disconnected from user|Connection closed by|Disconnected from authenticating user|Received disconnect from'
}
# attempt SIDE PROFILE KEY CERT: one login; sets got_SIDE (accepted or
# refused) and writes the auth lines to $T/lines.SIDE.
attempt() {
    local side=$1 profile=$2 key=$3 cert=$4 log=$T/$1-$2/sshd.log from up_var=up_$1_$2
    if [ "${!up_var}" != yes ]; then
        printf -v "got_$side" %s "no-server"
        : >"$T/lines.$side"
        return
    fi
    from=$(($(wc -l <"$log") + 1))
    if login "$side" "$profile" "$key" "$cert" && grep -qx sk-login-ok "$T/out.$side"; then
        printf -v "got_$side" %s accepted
    else
        printf -v "got_$side" %s refused
    fi
    lh_wait_until 5 conn_done "$log" "$from" || true
    auth_lines "$log" "$from" >"$T/lines.$side"
}
# case_ NAME PROFILE KEY CERT WANT [LINE...]: Debian's and Longhaul's
# servers tried once each. Checks "debian: NAME" (outcome WANT, each LINE
# in its log, * = the connection's port) and "longhaul: NAME" (Debian's
# outcome and auth log lines).
case_() {
    local name=$1 profile=$2 key=$3 cert=$4 want=$5
    shift 5
    want_lines=("$@")
    lh_check "debian: $name" debian_ok "$profile" "$key" "$cert" "$want"
    lh_check "longhaul: $name" longhaul_ok "$profile" "$key" "$cert"
    { echo "## $name"; cat "$T/lines.debian"; } >>"$T/debian_auth_lines"
}
debian_ok() {
    local want=$4 l ok=0
    attempt debian "$1" "$2" "$3"
    if [ "$got_debian" != "$want" ]; then
        echo "  debian's sshd: $got_debian, expected $want; client said:"
        sed 's/^/    /' "$T/out.debian" | tail -n 5
        ok=1
    fi
    for l in "${want_lines[@]}"; do
        grep -qxF -- "$l" "$T/lines.debian" || { echo "  debian's log lacks: '$l'"; ok=1; }
    done
    [ "$ok" = 0 ] || { echo "  debian's auth lines:"; sed 's/^/    /' "$T/lines.debian"; }
    return "$ok"
}
longhaul_ok() {
    local ok=0 profile=$1
    attempt longhaul "$1" "$2" "$3"
    if [ "$got_longhaul" = no-server ]; then
        echo "  longhaul's sshd is not running for this profile: $(head -c 300 "$T/longhaul-$profile/start.err" 2>/dev/null)"
        return 1
    fi
    if [ "$got_longhaul" != "$got_debian" ]; then
        echo "  longhaul's sshd: $got_longhaul, debian's: $got_debian; client said:"
        sed 's/^/    /' "$T/out.longhaul" | tail -n 5
        ok=1
    fi
    # The same distinct lines (OpenSSH writes some twice, for the query
    # and for the signature; order between the monitor's lines and the
    # child's is not compared).
    if ! cmp -s <(sort -u "$T/lines.debian") <(sort -u "$T/lines.longhaul"); then
        echo "  longhaul's auth log lines differ from debian's (- debian, + longhaul):"
        diff <(sort -u "$T/lines.debian") <(sort -u "$T/lines.longhaul") | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/'
        ok=1
    fi
    return "$ok"
}

U="for $user from 127.0.0.1 port N"
presence="rejected: user presence (authenticator touch) requirement not met "
verification="rejected: user verification requirement not met "
acc() { echo "Accepted publickey $U ssh2: $1"; }
rej() { echo "public key $1 signature $U $2"; }
failed() { echo "Failed publickey $U ssh2: $1"; }

# ---------------------------------------------------------------- a. plain lines
ak "$(pub ed)" "$(pub ec)"
case_ "a. ed25519-sk key, plain authorized_keys line: accepted" plain ed "" accepted \
    "Accepted key ED25519-SK $fp_ed found at $AK:1" "$(acc "ED25519-SK $fp_ed")"
case_ "a. ecdsa-sk key, plain authorized_keys line: accepted" plain ec "" accepted \
    "Accepted key ECDSA-SK $fp_ec found at $AK:2" "$(acc "ECDSA-SK $fp_ec")"

# ---------------------------------------------------------------- b. touch
ak "$(pub nt)" "$(pub ecnt)"
case_ "b. no-touch ed25519-sk key, plain line: refused (presence)" plain nt "" refused \
    "$(rej "ED25519-SK $fp_nt" "$presence")" "$(failed "ED25519-SK $fp_nt")"
case_ "b. no-touch ecdsa-sk key, plain line: refused (presence)" plain ecnt "" refused \
    "$(rej "ECDSA-SK $fp_ecnt" "$presence")" "$(failed "ECDSA-SK $fp_ecnt")"
ak "no-touch-required $(pub nt)" "no-touch-required $(pub ecnt)"
case_ "b. no-touch ed25519-sk key, no-touch-required line: accepted" plain nt "" accepted \
    "$(acc "ED25519-SK $fp_nt")"
case_ "b. no-touch ecdsa-sk key, no-touch-required line: accepted" plain ecnt "" accepted \
    "$(acc "ECDSA-SK $fp_ecnt")"
case_ "b. no-touch-required line under PubkeyAuthOptions touch-required: refused" touch nt "" refused \
    "$(rej "ED25519-SK $fp_nt" "$presence")"
ak "touch-required $(pub nt)"
case_ "b. no-touch key, touch-required line (the default): refused" plain nt "" refused \
    "$(rej "ED25519-SK $fp_nt" "$presence")"
ak "$(pub ed)"
case_ "b. touch key under PubkeyAuthOptions touch-required: accepted" touch ed "" accepted \
    "$(acc "ED25519-SK $fp_ed")"

# ---------------------------------------------------------------- c. verify
ak "verify-required $(pub ed)" "verify-required $(pub ec)"
case_ "c. verify-required line, ed25519-sk key without UV: refused (verification)" plain ed "" refused \
    "$(rej "ED25519-SK $fp_ed" "$verification")" "$(failed "ED25519-SK $fp_ed")"
case_ "c. verify-required line, ecdsa-sk key without UV: refused (verification)" plain ec "" refused \
    "$(rej "ECDSA-SK $fp_ec" "$verification")"
ak "verify-required $(pub vr)" "verify-required $(pub ecvr)"
case_ "c. verify-required line, ed25519-sk key made with -O verify-required: accepted" plain vr "" accepted \
    "$(acc "ED25519-SK $fp_vr")"
case_ "c. verify-required line, ecdsa-sk key made with -O verify-required: accepted" plain ecvr "" accepted \
    "$(acc "ECDSA-SK $fp_ecvr")"
pin_asked() {
    grep -qxF "Enter PIN for ED25519-SK key $T/vr: " "$T/askpass.log" &&
        grep -qxF "Enter PIN for ECDSA-SK key $T/ecvr: " "$T/askpass.log" ||
        { echo "  askpass log:"; sed 's/^/    /' "$T/askpass.log"; return 1; }
}
lh_check "c. debian: ssh asked for the PIN of verify-required keys (askpass)" pin_asked
ak "no-verify-required $(pub ed)" "$(pub vr)"
case_ "c. PubkeyAuthOptions verify-required, plain key: refused (verification)" verify ed "" refused \
    "$(rej "ED25519-SK $fp_ed" "$verification")"
case_ "c. PubkeyAuthOptions verify-required, key with UV: accepted" verify vr "" accepted \
    "$(acc "ED25519-SK $fp_vr")"
ak "no-touch-required,verify-required $(pub nt)"
case_ "c. no-touch key on a no-touch-required,verify-required line: refused (verification)" plain nt "" refused \
    "$(rej "ED25519-SK $fp_nt" "$verification")"

# ---------------------------------------------------------------- d. certificates
certacc() { # KEYTYPE FP ID SERIAL
    echo "Accepted publickey $U ssh2: $1-CERT $2 ID $3 (serial $4) CA ED25519 $fp_ca"
}
via_ca() { echo "Accepted certificate ID \"$1\" (serial $2) signed by ED25519 CA $fp_ca via $T/ca.pub"; }
ak
case_ "d. TrustedUserCAKeys: ed25519-sk certificate accepted" ca ed edcert accepted \
    "$(via_ca edcert 11)" "$(certacc ED25519-SK "$fp_ed" edcert 11)"
case_ "d. TrustedUserCAKeys: ecdsa-sk certificate accepted" ca ec eccert accepted \
    "$(via_ca eccert 12)" "$(certacc ECDSA-SK "$fp_ec" eccert 12)"
case_ "d. TrustedUserCAKeys: no-touch key, certificate without no-touch-required: refused" ca nt ntplain refused \
    "$(rej "ED25519-SK-CERT $fp_nt" "$presence")"
case_ "d. TrustedUserCAKeys: no-touch key, certificate with no-touch-required: accepted" ca nt ntcert accepted \
    "$(certacc ED25519-SK "$fp_nt" ntcert 14)"
case_ "d. TrustedUserCAKeys + PubkeyAuthOptions touch-required: no-touch certificate refused" touch nt ntcert refused \
    "$(rej "ED25519-SK-CERT $fp_nt" "$presence")"
case_ "d. TrustedUserCAKeys: critical verify-required, key without UV: refused" ca ed edvr refused \
    "$(rej "ED25519-SK-CERT $fp_ed" "$verification")"
case_ "d. TrustedUserCAKeys: critical verify-required, key with UV: accepted" ca vr vrvr accepted \
    "$(certacc ED25519-SK "$fp_vr" vrvr 16)"
ak "cert-authority $(pub ca)"
case_ "d. cert-authority line: ed25519-sk certificate accepted" plain ed edcert accepted \
    "Accepted certificate ID \"edcert\" (serial 11) signed by CA ED25519 $fp_ca found at $AK:1" \
    "$(certacc ED25519-SK "$fp_ed" edcert 11)"
case_ "d. cert-authority line: no-touch-required certificate refused (the line does not allow it)" plain nt ntcert refused \
    "$(rej "ED25519-SK-CERT $fp_nt" "$presence")"
case_ "d. cert-authority line: critical verify-required, key without UV: refused" plain ed edvr refused \
    "$(rej "ED25519-SK-CERT $fp_ed" "$verification")"
ak "cert-authority,no-touch-required $(pub ca)"
case_ "d. cert-authority,no-touch-required line: no-touch-required certificate accepted" plain nt ntcert accepted \
    "$(certacc ED25519-SK "$fp_nt" ntcert 14)"
case_ "d. cert-authority,no-touch-required line: certificate without the extension refused" plain nt ntplain refused \
    "$(rej "ED25519-SK-CERT $fp_nt" "$presence")"
ak "cert-authority,verify-required $(pub ca)"
case_ "d. cert-authority,verify-required line: plain certificate, key without UV: refused" plain ed edcert refused \
    "$(rej "ED25519-SK-CERT $fp_ed" "$verification")"
ak "cert-authority,no-touch-required $(pub ca)"
case_ "d. cert-authority,no-touch-required line under PubkeyAuthOptions touch-required: refused" touch nt ntcert refused \
    "$(rej "ED25519-SK-CERT $fp_nt" "$presence")"

# ---------------------------------------------------------------- e. ssh-keygen
# same_output NAME ARGS...: Debian's and Longhaul's ssh-keygen with ARGS:
# the same stdout, stderr and status.
same_output() {
    local d_rc=0 l_rc=0
    "$LH_SSH_KEYGEN" "$@" </dev/null >"$T/kg.d.out" 2>"$T/kg.d.err" || d_rc=$?
    "$LONGHAUL_KEYGEN" "$@" </dev/null >"$T/kg.l.out" 2>"$T/kg.l.err" || l_rc=$?
    sed -i "s#$LH_SSH_KEYGEN#ssh-keygen#; s#$LONGHAUL_KEYGEN#ssh-keygen#" "$T/kg.d.err" "$T/kg.l.err"
    local ok=0
    [ "$d_rc" = "$l_rc" ] || { echo "  status: debian $d_rc, longhaul $l_rc"; ok=1; }
    cmp -s "$T/kg.d.out" "$T/kg.l.out" ||
        { echo "  stdout differs (- debian, + longhaul):"; diff "$T/kg.d.out" "$T/kg.l.out" | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/'; ok=1; }
    cmp -s "$T/kg.d.err" "$T/kg.l.err" ||
        { echo "  stderr differs (- debian, + longhaul):"; diff "$T/kg.d.err" "$T/kg.l.err" | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/'; ok=1; }
    return "$ok"
}
if [ -x "$LONGHAUL_KEYGEN" ]; then
    for k in ed ec nt vr; do
        lh_check "e. longhaul: ssh-keygen -l -f $k (private sk key) as Debian's" same_output -l -f "$T/$k"
        lh_check "e. longhaul: ssh-keygen -l -f $k.pub as Debian's" same_output -l -f "$T/$k.pub"
        lh_check "e. longhaul: ssh-keygen -y -f $k (private sk key) as Debian's" same_output -y -f "$T/$k"
    done
    lh_check "e. longhaul: ssh-keygen -l -E md5 -f ec.pub as Debian's" same_output -l -E md5 -f "$T/ec.pub"
    lh_check "e. longhaul: ssh-keygen -l -v -f ed.pub (randomart) as Debian's" same_output -l -v -f "$T/ed.pub"
    for c in edcert eccert ntcert vrvr; do
        lh_check "e. longhaul: ssh-keygen -L -f $c-cert.pub as Debian's" same_output -L -f "$T/$c-cert.pub"
        lh_check "e. longhaul: ssh-keygen -l -f $c-cert.pub as Debian's" same_output -l -f "$T/$c-cert.pub"
    done

    # SSHSIG: Debian's ssh-keygen signs with the sk keys (provider from
    # SSH_SK_PROVIDER); both verify against an allowed_signers file.
    echo "data signed by a security key $RANDOM" >"$T/msg"
    {
        echo "signer-ed $(pub ed)"
        echo "signer-ec $(pub ec)"
        echo "signer-nt $(pub nt)"
    } >"$T/allowed_signers"
    sig_made=yes
    for k in ed ec nt; do
        SSH_SK_PROVIDER=$PROVIDER "$LH_SSH_KEYGEN" -Y sign -f "$T/$k" -n file <"$T/msg" >"$T/msg.$k.sig" 2>"$T/sign.$k.err" ||
            { echo "Debian's ssh-keygen -Y sign with $k failed: $(cat "$T/sign.$k.err")"; sig_made=no; }
    done
    echo "tampered" >>"$T/msg.bad"
    cat "$T/msg" >>"$T/msg.bad"
    verify_same() { # KEY SIGNER MESSAGE
        local d_rc=0 l_rc=0 ok=0
        "$LH_SSH_KEYGEN" -Y verify -f "$T/allowed_signers" -I "$2" -n file -s "$T/msg.$1.sig" \
            <"$T/$3" >"$T/v.d" 2>&1 || d_rc=$?
        "$LONGHAUL_KEYGEN" -Y verify -f "$T/allowed_signers" -I "$2" -n file -s "$T/msg.$1.sig" \
            <"$T/$3" >"$T/v.l" 2>&1 || l_rc=$?
        echo "  debian (status $d_rc): $(head -n 2 "$T/v.d" | tr '\n' ' ')"
        [ "$d_rc" = "$l_rc" ] || { echo "  status: debian $d_rc, longhaul $l_rc"; ok=1; }
        cmp -s "$T/v.d" "$T/v.l" ||
            { echo "  output differs (- debian, + longhaul):"; diff "$T/v.d" "$T/v.l" | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/'; ok=1; }
        return "$ok"
    }
    if [ "$sig_made" = yes ]; then
        lh_check "e. debian: -Y verify of an ed25519-sk signature succeeds" \
            bash -c "'$LH_SSH_KEYGEN' -Y verify -f '$T/allowed_signers' -I signer-ed -n file -s '$T/msg.ed.sig' <'$T/msg' >/dev/null"
        lh_check "e. longhaul: -Y verify, ed25519-sk signature, as Debian's" verify_same ed signer-ed msg
        lh_check "e. longhaul: -Y verify, ecdsa-sk signature, as Debian's" verify_same ec signer-ec msg
        lh_check "e. longhaul: -Y verify, no-touch ed25519-sk signature, as Debian's" verify_same nt signer-nt msg
        lh_check "e. longhaul: -Y verify, tampered message, as Debian's" verify_same ed signer-ed msg.bad
        lh_check "e. longhaul: -Y verify, another signer's identity, as Debian's" verify_same ed signer-ec msg
        lh_check "e. longhaul: -Y check-novalidate, ecdsa-sk signature, as Debian's" \
            bash -c "cd '$T' && '$LH_SSH_KEYGEN' -Y check-novalidate -n file -s msg.ec.sig <msg >v2.d 2>&1; echo \$? >>v2.d;
                     '$LONGHAUL_KEYGEN' -Y check-novalidate -n file -s msg.ec.sig <msg >v2.l 2>&1; echo \$? >>v2.l;
                     diff v2.d v2.l"
    else
        lh_check "e. debian: ssh-keygen -Y sign with sk keys" false
    fi
else
    lh_check "e. longhaul: ssh-keygen built ($LONGHAUL_KEYGEN)" false
fi

# ---------------------------------------------------------------- f. Longhaul's ssh
# Longhaul's ssh signs with sk keys through the same provider (loaded
# in-process from SecurityKeyProvider or SSH_SK_PROVIDER), into Debian's and
# Longhaul's sshd; PINs through SSH_ASKPASS; the touch notice on a
# terminal as Debian's ssh shows it; "internal" refused in words; an sk key
# held by Debian's ssh-agent (ssh-add -S) used through the agent.
# lhssh SIDE PROFILE KEY [ssh args...]: Longhaul's ssh with KEY alone (no
# agent, no password), answers from $askpass; output in $T/lout, status
# returned.
lhssh() {
    local side=$1 profile=$2 key=$3 port_var=port_$1_$2
    shift 3
    # (The caller's options first: the first value of an option wins.)
    with_askpass timeout 30 "$LONGHAUL_SSH" "$@" -F /dev/null -p "${!port_var}" \
        -o "UserKnownHostsFile=$T/$side-$profile/known_hosts.${!port_var}" -o StrictHostKeyChecking=yes \
        -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no -o IdentitiesOnly=yes \
        -o IdentityAgent=none -o CertificateFile=none -o ConnectTimeout=10 -i "$T/$key" \
        "$user@127.0.0.1" 'echo sk-login-ok' </dev/null >"$T/lout" 2>&1
}
# lh_accepts SIDE KEY LOGLINE [ssh args...]: a login that works and shows
# in the server's log (plain profile).
lh_accepts() {
    local side=$1 key=$2 want=$3 log=$T/$1-plain/sshd.log from rc=0
    shift 3
    from=$(($(wc -l <"$log") + 1))
    lhssh "$side" plain "$key" "$@" || rc=$?
    if [ "$rc" != 0 ] || ! grep -qx sk-login-ok "$T/lout"; then
        echo "  longhaul's ssh: status $rc:"
        sed 's/^/    /' "$T/lout" | tail -n 8
        return 1
    fi
    lh_wait_until 5 conn_done "$log" "$from" || true
    auth_lines "$log" "$from" | lh_matches -xF -- "$want" ||
        { echo "  $side sshd's log lacks '$want':"; auth_lines "$log" "$from" | sed 's/^/    /'; return 1; }
}
# lh_refused: the last lhssh failed cleanly (255, no login, no crash).
lh_refused() {
    [ "$1" = 255 ] && ! grep -q sk-login-ok "$T/lout" ||
        { echo "  longhaul's ssh: status $1:"; sed 's/^/    /' "$T/lout" | tail -n 8; return 1; }
}
[ -x "$LONGHAUL_SSH" ] || lh_fail "Longhaul's ssh is not built ($LONGHAUL_SSH)"
# The provider reaches ssh by -o SecurityKeyProvider or, where a check says
# so, SSH_SK_PROVIDER (which replaces the default "internal").
unset SSH_SK_PROVIDER
with_sk_env() { SSH_SK_PROVIDER=$PROVIDER "$@"; }
kg -t ed25519 -N '' -C plain -f "$T/plainkey"
chmod 600 "$T/plainkey"
ak "$(pub ed)" "$(pub ec)" "$(pub vr)" "$(pub ecvr)" "$(pub nt)" "$(pub plainkey)"
for side in debian longhaul; do
    lh_check "f. longhaul ssh -> $side sshd: ed25519-sk key, -o SecurityKeyProvider" \
        lh_accepts "$side" ed "$(acc "ED25519-SK $fp_ed")" -o "SecurityKeyProvider=$PROVIDER"
    lh_check "f. longhaul ssh -> $side sshd: ecdsa-sk key, SSH_SK_PROVIDER" \
        with_sk_env lh_accepts "$side" ec "$(acc "ECDSA-SK $fp_ec")"
    : >"$T/askpass.log"
    lh_check "f. longhaul ssh -> $side sshd: verify-required ed25519-sk key, PIN from askpass" \
        lh_accepts "$side" vr "$(acc "ED25519-SK $fp_vr")" -o "SecurityKeyProvider=$PROVIDER"
    lh_check "f. longhaul ssh -> $side sshd: verify-required ecdsa-sk key, PIN from askpass" \
        lh_accepts "$side" ecvr "$(acc "ECDSA-SK $fp_ecvr")" -o "SecurityKeyProvider=$PROVIDER"
    lh_pin_asked() {
        grep -qxF "Enter PIN for ED25519-SK key $T/vr: " "$T/askpass.log" &&
            grep -qxF "Enter PIN for ECDSA-SK key $T/ecvr: " "$T/askpass.log" ||
            { echo "  askpass log:"; sed 's/^/    /' "$T/askpass.log"; return 1; }
    }
    lh_check "f. longhaul ssh -> $side sshd: the PIN prompts are OpenSSH's" lh_pin_asked
    lh_wrong_pin() {
        local rc=0
        LH_SK_TEST_PIN=0000 lhssh "$side" plain vr -o "SecurityKeyProvider=$PROVIDER" || rc=$?
        lh_refused "$rc" && grep -q 'sign_and_send_pubkey: signing failed for ED25519-SK ' "$T/lout" ||
            { echo "  no 'signing failed' line:"; sed 's/^/    /' "$T/lout" | tail -n 5; return 1; }
    }
    lh_check "f. longhaul ssh -> $side sshd: a wrong PIN fails the key" lh_wrong_pin
    lh_internal() {
        local rc=0
        lhssh "$side" plain ed || rc=$?
        lh_refused "$rc" &&
            grep -qF "SecurityKeyProvider internal: not supported yet (set SecurityKeyProvider to a middleware library)" "$T/lout" ||
            { echo "  no 'not supported yet' message:"; sed 's/^/    /' "$T/lout" | tail -n 5; return 1; }
    }
    lh_check "f. longhaul ssh -> $side sshd: SecurityKeyProvider internal (the default) says not supported, fails cleanly" lh_internal
    lh_check "f. longhaul ssh -> $side sshd: internal, then a plain key: logs in with the plain key" \
        lh_accepts "$side" plainkey "$(acc "ED25519 $(fp "$T/plainkey.pub")")" -o SecurityKeyProvider=internal -i "$T/ed"
done

# An sk user certificate, signed through the provider.
ak "cert-authority $(pub ca)"
for side in debian longhaul; do
    lh_check "f. longhaul ssh -> $side sshd: ed25519-sk user certificate on a cert-authority line" \
        lh_accepts "$side" ed "$(certacc ED25519-SK "$fp_ed" edcert 11)" -o "SecurityKeyProvider=$PROVIDER" \
        -o "CertificateFile=$T/edcert-cert.pub"
done
ak "$(pub ed)" "$(pub nt)"

# A no-touch key on a plain line: refused, with the lines Debian's ssh causes.
lh_attempt() { # CLIENT(debian|longhaul): one login with nt into Debian's sshd, auth lines to $T/nt.CLIENT
    local log=$T/debian-plain/sshd.log from
    from=$(($(wc -l <"$log") + 1))
    if [ "$1" = debian ]; then
        login debian plain nt || true
        cp "$T/out.debian" "$T/lout"
    else
        lhssh debian plain nt -o "SecurityKeyProvider=$PROVIDER" || true
    fi
    lh_wait_until 5 conn_done "$log" "$from" || true
    auth_lines "$log" "$from" | sort -u >"$T/nt.$1"
}
lh_no_touch() {
    lh_attempt debian
    lh_attempt longhaul
    ! grep -q sk-login-ok "$T/lout" || { echo "  longhaul's ssh logged in"; return 1; }
    grep -qxF "$(rej "ED25519-SK $fp_nt" "$presence")" "$T/nt.debian" || { echo "  debian's ssh: no presence line"; return 1; }
    cmp -s "$T/nt.debian" "$T/nt.longhaul" ||
        { echo "  log lines differ (- debian's ssh, + longhaul's):"; diff "$T/nt.debian" "$T/nt.longhaul" | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/'; return 1; }
}
lh_check "f. longhaul ssh: no-touch key on a plain line refused, the same sshd log lines as Debian's ssh" lh_no_touch

# The touch notice on a terminal: what Debian's ssh prints, and nothing in
# BatchMode (askpass then, and no display here).
lh_notice() { # CLIENT BATCH [SSH OPTION]
    local bin=ssh extra=${3:-}
    [ "$1" = longhaul ] && bin=$LONGHAUL_SSH
    lh_in_pty "env -u SSH_ASKPASS -u DISPLAY -u SSH_ASKPASS_REQUIRE $bin -F /dev/null -p $port_debian_plain \
        -o UserKnownHostsFile=$T/debian-plain/known_hosts.$port_debian_plain -o StrictHostKeyChecking=yes \
        -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no -o IdentitiesOnly=yes -o IdentityAgent=none \
        -o CertificateFile=none -o BatchMode=$2 -o SecurityKeyProvider=$PROVIDER $extra -i $T/ed $user@127.0.0.1 echo sk-login-ok" |
        tr -d '\r' | grep -E 'Confirm user presence|User presence confirmed|sk-login-ok' || true
}
lh_touch_notice() {
    local want="Confirm user presence for key ED25519-SK $fp_ed" ok=0
    lh_notice debian no >"$T/notice.debian"
    lh_notice longhaul no >"$T/notice.longhaul"
    lh_notice debian yes >"$T/notice.debian.batch"
    lh_notice longhaul yes >"$T/notice.longhaul.batch"
    grep -qxF "$want" "$T/notice.debian" || { echo "  debian's ssh did not show '$want'"; ok=1; }
    cmp -s "$T/notice.debian" "$T/notice.longhaul" ||
        { echo "  terminal differs (- debian, + longhaul):"; diff "$T/notice.debian" "$T/notice.longhaul" | sed 's/^/    /'; ok=1; }
    cmp -s "$T/notice.debian.batch" "$T/notice.longhaul.batch" ||
        { echo "  BatchMode terminal differs (- debian, + longhaul):"; diff "$T/notice.debian.batch" "$T/notice.longhaul.batch" | sed 's/^/    /'; ok=1; }
    ! grep -q "Confirm user presence" "$T/notice.longhaul.batch" || { echo "  notice shown in BatchMode"; ok=1; }
    # The fingerprint as FingerprintHash says.
    lh_notice debian no "-o FingerprintHash=md5" >"$T/notice.debian.md5"
    lh_notice longhaul no "-o FingerprintHash=md5" >"$T/notice.longhaul.md5"
    grep -q "^Confirm user presence for key ED25519-SK MD5:" "$T/notice.debian.md5" ||
        { echo "  debian's ssh did not show an MD5 fingerprint"; ok=1; }
    cmp -s "$T/notice.debian.md5" "$T/notice.longhaul.md5" ||
        { echo "  FingerprintHash md5 differs (- debian, + longhaul):"; diff "$T/notice.debian.md5" "$T/notice.longhaul.md5" | sed 's/^/    /'; ok=1; }
    return "$ok"
}
lh_check "f. longhaul ssh: 'Confirm user presence' on the terminal as Debian's ssh (none in BatchMode, FingerprintHash md5)" lh_touch_notice

# An sk key in Debian's ssh-agent (ssh-add -S): the agent signs.
lh_agent() {
    local sock=$T/agent.sock rc=0
    ssh-agent -D -a "$sock" -P "$PROVIDER" >"$T/agent.log" 2>&1 &
    LH_PIDS+=($!)
    lh_wait_until 5 test -S "$sock" || { echo "  ssh-agent did not start: $(cat "$T/agent.log")"; return 1; }
    SSH_AUTH_SOCK=$sock ssh-add -S "$PROVIDER" "$T/ed" </dev/null >"$T/add.log" 2>&1 ||
        { echo "  ssh-add -S failed: $(cat "$T/add.log")"; return 1; }
    local side
    for side in debian longhaul; do
        # A provider that cannot load: only the agent can sign.
        lh_accepts "$side" ed.pub "$(acc "ED25519-SK $fp_ed")" -o "IdentityAgent=$sock" \
            -o SecurityKeyProvider=/nonexistent/provider.so || { echo "  ($side sshd)"; rc=1; }
    done
    return "$rc"
}
lh_check "f. longhaul ssh: an sk key held by Debian's ssh-agent logs into both servers" lh_agent

# LH_SK_SHOW_DEBIAN_LINES=1: every case's auth lines from Debian's sshd.
if [ "${LH_SK_SHOW_DEBIAN_LINES:-0}" = 1 ]; then
    echo "---- Debian's sshd, auth lines per case (ports as N):"
    cat "$T/debian_auth_lines"
fi
lh_summary
