#!/usr/bin/env bash
# ssh-keygen -t ed25519-sk / ecdsa-sk (enrolment of a FIDO credential
# through the SecurityKeyProvider middleware): Longhaul's ssh-keygen beside
# Debian's, both with the software authenticator of
# regress/tools/sk_test_provider.cpp (TEST ONLY):
#  a. the same session (both key types, -q and not, -O options, -C, -N)
#     gives the same stdout, stderr and exit status from both, the key's
#     fingerprint and randomart aside (new keys differ);
#  b. the files: Longhaul's private key file has the layout of Debian's
#     (the same fields in the same order: type, key, application, flags,
#     key handle, reserved, comment), its flags follow the -O options, and
#     Debian's ssh-keygen reads it (-y, -l, an encrypted one with -P);
#     -p and -c rewrite a security key's file as Debian's do, -Y sign
#     signs with one (touch notice, PIN) and -K saves resident
#     credentials as Debian's does;
#  c. -O write-attestation: the same bytes from both (the provider's
#     attestation parts are fixed stand-ins);
#  d. failures in the same words and statuses: a bad application, an
#     unknown option, a missing challenge file, providers that are not
#     middleware (missing, a directory, /dev/null, a script, a small file,
#     libc), every error code the middleware can answer, wrong PINs on
#     standard input, a resident credential that exists (overwrite
#     refused and accepted);
#  e. the PIN through askpass: the same prompts, the key made;
#  f. a key Longhaul's ssh-keygen made logs in: Debian's ssh into Debian's
#     sshd, Longhaul's ssh into Longhaul's sshd.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LONGHAUL_KEYGEN=$BUILD/bin/ssh-keygen
LONGHAUL_SSHD=$BUILD/bin/sshd
LONGHAUL_SSH=$BUILD/bin/ssh
PROVIDER=$BUILD/regress/sk_test_provider.so
DEBIAN_KEYGEN=$LH_SSH_KEYGEN
[ -x "$LONGHAUL_KEYGEN" ] || lh_fail "ssh-keygen not built ($LONGHAUL_KEYGEN)"
[ -f "$PROVIDER" ] || lh_fail "the test provider is not built ($PROVIDER: ninja sk_test_provider)"
[ -x "$DEBIAN_KEYGEN" ] || lh_skip "Debian's ssh-keygen not found"
command -v python3 >/dev/null || lh_skip "python3 not found (contrib/install-deps.sh installs it)"
T=$LH_TMP
chmod 711 "$T"
cd "$T"

# run_both NAME [ENV=VALUE...] -- ARGS...: each ssh-keygen with ARGS (and
# the environment) in its own directory ($T/NAME/debian, .../longhaul),
# input from $T/NAME.in; out/err/rc files beside.
run_both() {
    local name=$1 who prog dir
    shift
    lh_split_env "$@"
    for who in debian longhaul; do
        prog=$DEBIAN_KEYGEN
        [ $who = longhaul ] && prog=$LONGHAUL_KEYGEN
        dir=$T/$name/$who
        mkdir -p "$dir"
        (cd "$dir" && env "${LH_ENV[@]}" "$prog" "${LH_ARGS[@]}" <"$T/$name.in" >out 2>err)
        echo $? >"$dir/rc"
    done
}
# What a new key's output has that differs run to run: its fingerprint and
# randomart.
mask() { sed -E 's#SHA256:[A-Za-z0-9+/]{43}#SHA256:FP#g; s#^\|.{17}\|$#|art|#' "$1"; }
same_outputs() {
    local d=$T/$1/debian l=$T/$1/longhaul f
    for f in out err rc; do
        if ! diff <(mask "$d/$f") <(mask "$l/$f") >"$T/$1.$f.diff"; then
            echo "   $f differs (Debian's <, Longhaul's >):"
            sed 's/^/   /' "$T/$1.$f.diff"
            return 1
        fi
    done
}
: >"$T/empty.in"
both() { # NAME [ENV...] -- ARGS: run, then compare
    local name=$1
    [ -e "$T/$name.in" ] || cp "$T/empty.in" "$T/$name.in"
    run_both "$@" && same_outputs "$name"
}

# The private key file's fields, the secrets' and random values' lengths in
# place of their bytes (python3: openssh-key-v1 unencrypted, PROTOCOL.key).
cat >"$T/fields.py" <<'EOF'
import base64, struct, sys
text = open(sys.argv[1]).read().split('\n')
body = base64.b64decode(''.join(l for l in text if l and not l.startswith('-----')))
assert body.startswith(b'openssh-key-v1\0')
p = len(b'openssh-key-v1\0')
def s(buf, p):
    n = struct.unpack('>I', buf[p:p + 4])[0]
    return buf[p + 4:p + 4 + n], p + 4 + n
cipher, p = s(body, p); kdf, p = s(body, p); kdfopt, p = s(body, p)
nkeys = struct.unpack('>I', body[p:p + 4])[0]; p += 4
pub, p = s(body, p); sec, p = s(body, p)
out = [cipher.decode(), kdf.decode(), 'kdfoptions %d' % len(kdfopt), 'keys %d' % nkeys, 'public %d' % len(pub)]
if cipher == b'none':
    q = 8
    typ, q = s(sec, q); out.append(typ.decode())
    if b'ecdsa' in typ:
        curve, q = s(sec, q); out.append(curve.decode())
    key, q = s(sec, q); out.append('key %d' % len(key))
    app, q = s(sec, q); out.append('application ' + app.decode())
    out.append('flags 0x%02x' % sec[q]); q += 1
    handle, q = s(sec, q); out.append('handle %d' % len(handle))
    reserved, q = s(sec, q); out.append('reserved %d' % len(reserved))
    comment, q = s(sec, q); out.append('comment ' + comment.decode())
    out.append('padding ' + ','.join(str(b) for b in sec[q:]))
print('\n'.join(out))
EOF
same_file_layout() { # NAME FILE
    local d=$T/$1/debian/$2 l=$T/$1/longhaul/$2
    diff <(python3 "$T/fields.py" "$d") <(python3 "$T/fields.py" "$l") || {
        echo "   the files' fields differ (Debian's <, Longhaul's >)"
        return 1
    }
}
flags_of() { python3 "$T/fields.py" "$1" | sed -n 's/^flags //p'; }
# Debian's ssh-keygen reads Longhaul's file: -y gives the .pub's key and
# comment, -l its fingerprint.
debian_reads() { # DIR FILE [PASSPHRASE]
    local f=$1/$2 pass=${3:-}
    [ "$("$DEBIAN_KEYGEN" -y -P "$pass" -f "$f" 2>&1)" = "$(cat "$f.pub")" ] &&
        [ "$("$DEBIAN_KEYGEN" -l -f "$f" 2>&1)" = "$("$DEBIAN_KEYGEN" -l -f "$f.pub" 2>&1)" ] || {
        echo "   Debian's ssh-keygen reads $f as: $("$DEBIAN_KEYGEN" -y -P "$pass" -f "$f" 2>&1)"
        return 1
    }
}

W=(-w "$PROVIDER")
# Providers that are not middleware: a script, a file shorter than the name.
printf '#!/bin/sh\n' >"$T/script.sh"
printf 'tiny\n' >"$T/tiny.so"

# ---------------------------------------------------------------- a, b
check_generate() { # NAME TYPE ARGS...
    local name=$1 type=$2
    shift 2
    both "$name" -- -t "$type" "${W[@]}" -f key "$@" &&
        same_file_layout "$name" key && debian_reads "$T/$name/longhaul" key
}
lh_check "ed25519-sk, as Debian's ssh-keygen makes it: output, file layout, read by Debian's" \
    check_generate ed ed25519-sk -N '' -C "ed@sk-test"
lh_check "ecdsa-sk, -q: the same" check_generate ec ecdsa-sk -N '' -q -C "ec@sk-test"
check_flags() { # NAME WANT
    [ "$(flags_of "$T/$1/longhaul/key")" = "$2" ] && [ "$(flags_of "$T/$1/debian/key")" = "$2" ] || {
        echo "   flags: Longhaul $(flags_of "$T/$1/longhaul/key"), Debian $(flags_of "$T/$1/debian/key"), want $2"
        return 1
    }
}
check_options() {
    check_generate nt ed25519-sk -N '' -q -O no-touch-required && check_flags nt 0x00 &&
        check_generate vr ecdsa-sk -N '' -q -O Verify-Required -O device=/dev/null -O user=sk-user && check_flags vr 0x05 &&
        check_generate rk ed25519-sk -N '' -q -O resident -O application=ssh:lh-test && check_flags rk 0x21 &&
        lh_matches -F 'AAAAC3NzaDpsaC10ZXN0' "$T/rk/longhaul/key.pub" # base64 of the string "ssh:lh-test"
}
lh_check "-O no-touch-required, verify-required (any case), resident, application=, device=, user=: the key's flags and application" \
    check_options
check_encrypted() {
    both enc -- -t ed25519-sk "${W[@]}" -f key -N 'sk pass' -q -C enc &&
        debian_reads "$T/enc/longhaul" key 'sk pass' &&
        [ "$(cd "$T/enc/longhaul" && "$DEBIAN_KEYGEN" -y -P wrong -f key 2>&1)" = \
            "$(cd "$T/enc/debian" && "$DEBIAN_KEYGEN" -y -P wrong -f key 2>&1)" ]
}
lh_check "-N: an encrypted sk key file Debian's ssh-keygen opens with the passphrase (and not without)" check_encrypted
check_prompts() {
    # No -N: the passphrase asked twice on standard input (no terminal).
    printf 'two words\ntwo words\n' >"$T/ask.in"
    both ask -- -t ecdsa-sk "${W[@]}" -f key -C asked && debian_reads "$T/ask/longhaul" key 'two words'
}
lh_check "the file's passphrase asked for after the enrolment, as Debian's" check_prompts

# -p and -c on a security key's file (Debian's, from a): each program on
# its own copy; the rewritten file read by Debian's ssh-keygen.
check_edit() {
    local who
    for who in debian longhaul; do
        mkdir -p "$T/pedit/$who" "$T/cedit/$who" "$T/wedit/$who"
        cp "$T/ed/debian/key" "$T/ed/debian/key.pub" "$T/pedit/$who/"
        cp "$T/ed/debian/key" "$T/ed/debian/key.pub" "$T/wedit/$who/"
    done
    both pedit -- -p -f key -P '' -N 'new pass' &&
        both wedit -- -p -f key -P 'wrong' -N 'x' &&
        for who in debian longhaul; do cp "$T/pedit/$who/key" "$T/pedit/$who/key.pub" "$T/cedit/$who/"; done &&
        both cedit -- -c -f key -P 'new pass' -C 'new comment' &&
        debian_reads "$T/cedit/longhaul" key 'new pass' &&
        lh_matches -F 'new comment' "$T/cedit/longhaul/key.pub"
}
lh_check "-p and -c on a security key's file, as Debian's (and a wrong passphrase refused)" check_edit

# -Y sign with security keys' files (Debian's, from a and b): each
# program in its own directory with copies of the key and the message.
sign_setup() { # NAME KEYDIR
    local who
    for who in debian longhaul; do
        mkdir -p "$T/$1/$who"
        cp "$2/key" "$2/key.pub" "$T/$1/$who/"
        echo "signed by a security key" >"$T/$1/$who/msg"
    done
}
novalidate() { "$DEBIAN_KEYGEN" -Y check-novalidate -n file -s "$1/msg.sig" <"$1/msg" >/dev/null 2>&1; }
check_sign() {
    sign_setup sig_ed "$T/ed/debian" && sign_setup sig_ec "$T/ec/debian" && sign_setup sig_md5 "$T/ed/debian" &&
        sign_setup sig_bad "$T/ed/debian" &&
        both sig_ed -- -Y sign -f key -n file "${W[@]}" msg &&
        both sig_ec SSH_SK_PROVIDER="$PROVIDER" -- -Y sign -f key.pub -n file msg &&
        both sig_md5 -- -Y sign -f key -n file -E md5 -q "${W[@]}" msg &&
        both sig_bad -- -Y sign -f key -n file -w "$T/tiny.so" msg &&
        novalidate "$T/sig_ed/longhaul" && novalidate "$T/sig_ec/longhaul" &&
        # Ed25519 signatures are deterministic, and the test provider's
        # counter fixed: the same bytes.
        cmp "$T/sig_ed/debian/msg.sig" "$T/sig_ed/longhaul/msg.sig"
}
lh_check "-Y sign with sk keys: the touch notice (-E md5 too), the signature, a bad provider, as Debian's" check_sign
check_sign_pin() {
    sign_setup sig_pin "$T/vr/debian" && sign_setup sig_wrong "$T/vr/debian" &&
        printf '4821\n' >"$T/sig_pin.in" && printf '1111\n' >"$T/sig_wrong.in" &&
        both sig_pin LH_SK_TEST_PIN=4821 -- -Y sign -f key -n file "${W[@]}" msg &&
        both sig_wrong LH_SK_TEST_PIN=4821 -- -Y sign -f key -n file "${W[@]}" msg &&
        novalidate "$T/sig_pin/longhaul" && [ ! -e "$T/sig_wrong/longhaul/msg.sig" ]
}
lh_check "-Y sign with a verify-required key: the PIN asked first, a wrong one refused" check_sign_pin

# -s with a security key as the CA (OpenSSH's do_ca_sign): the PIN asked
# once, as "Enter PIN for CA key: ", a wrong one and a bad provider refused
# in Debian's words; the touch notice goes only to a terminal (none here).
# Debian's ssh-keygen -L reads each certificate, checking the
# authenticator's signature, and prints the same fields for both.
check_ca_sign() {
    "$DEBIAN_KEYGEN" -q -t ed25519 -N '' -C user -f "$T/ca_user" || return 1
    local n who
    for n in ca_ed:ed ca_ec:ec ca_pin:vr ca_wrong:vr ca_bad:ed; do
        for who in debian longhaul; do
            mkdir -p "$T/${n%%:*}/$who"
            cp "$T/${n##*:}/debian/key" "$T/${n##*:}/debian/key.pub" "$T/ca_user.pub" "$T/${n%%:*}/$who/"
        done
    done
    printf '4821\n' >"$T/ca_pin.in" && printf '1111\n' >"$T/ca_wrong.in" &&
        both ca_ed -- -s key "${W[@]}" -I sk-ca -n alice,bob -z 5 ca_user.pub &&
        both ca_ec SSH_SK_PROVIDER="$PROVIDER" -- -s key -h -I sk-host -n h.example ca_user.pub &&
        both ca_pin LH_SK_TEST_PIN=4821 -- -s key "${W[@]}" -I sk-ca-pin ca_user.pub &&
        both ca_wrong LH_SK_TEST_PIN=4821 -- -s key "${W[@]}" -I wrong ca_user.pub &&
        both ca_bad -- -s key -w "$T/tiny.so" -I bad ca_user.pub &&
        [ ! -e "$T/ca_wrong/longhaul/ca_user-cert.pub" ] && [ ! -e "$T/ca_bad/longhaul/ca_user-cert.pub" ] || return 1
    for n in ca_ed ca_ec ca_pin; do
        diff <(cd "$T/$n/debian" && "$DEBIAN_KEYGEN" -L -f ca_user-cert.pub 2>&1) \
            <(cd "$T/$n/longhaul" && "$DEBIAN_KEYGEN" -L -f ca_user-cert.pub 2>&1) || { echo "   $n: -L differs"; return 1; }
    done
}
lh_check "-s with security keys as CAs (touch, PIN, wrong PIN, bad provider), as Debian's; -L reads the certificates" check_ca_sign

# -K: resident credentials (the test authenticator keeps them in a
# directory) saved as Debian's ssh-keygen saves them: file names from the
# application and user id, the flags, the comment, the messages.
check_download() {
    export LH_SK_TEST_RESIDENT_DIR=$T/store
    mkdir -p "$T/store" "$T/empty-store"
    kgq() { "$DEBIAN_KEYGEN" -q "${W[@]}" -N '' -O resident "$@" </dev/null >/dev/null; }
    kgq -t ed25519-sk -f "$T/rk1" && kgq -t ecdsa-sk -f "$T/rk2" -O user=alice -O application=ssh:work &&
        kgq -t ed25519-sk -f "$T/rk3" -O user=../x -O verify-required || {
        echo "   Debian's ssh-keygen could not enrol resident credentials"
        return 1
    }
    local f who
    both dl -- -K "${W[@]}" -N '' || return 1
    for f in id_ecdsa_sk_rk_work_alice id_ed25519_sk_rk id_ed25519_sk_rk_2e2e2f78; do
        same_file_layout dl "$f" && debian_reads "$T/dl/longhaul" "$f" &&
            cmp "$T/dl/debian/$f.pub" "$T/dl/longhaul/$f.pub" || { echo "   $f"; return 1; }
    done
    [ "$(flags_of "$T/dl/longhaul/id_ed25519_sk_rk_2e2e2f78")" = 0x25 ] || return 1
    # The files exist now: overwrite one, refuse the next.
    for who in debian longhaul; do mkdir -p "$T/dl2/$who" && cp "$T/dl/$who"/id_* "$T/dl2/$who/"; done
    printf '\ny\nn\n' >"$T/dl2.in"
    both dl2 -- -K "${W[@]}" -N '' &&
        printf '\nsecret\nsecret\n' >"$T/dlpass.in" && both dlpass -- -K "${W[@]}" &&
        debian_reads "$T/dlpass/longhaul" id_ed25519_sk_rk secret &&
        both dlq -- -K "${W[@]}" -N '' -q -O device=/dev/null &&
        printf '4821\n' >"$T/dlpin.in" && both dlpin LH_SK_TEST_PIN=4821 -- -K "${W[@]}" -N '' &&
        printf '1\n' >"$T/dlwrong.in" && both dlwrong LH_SK_TEST_PIN=4821 -- -K "${W[@]}" -N '' &&
        both dlempty LH_SK_TEST_RESIDENT_DIR="$T/empty-store" -- -K "${W[@]}" -N '' &&
        both dlopt -- -K "${W[@]}" -N '' -O user=x &&
        both dlbad -- -K -w "$T/tiny.so" -N '' &&
        unset LH_SK_TEST_RESIDENT_DIR && both dlnone -- -K "${W[@]}" -N ''
}
lh_check "-K: resident credentials saved as Debian's saves them (names, flags, comments, overwrite, PIN, failures)" \
    check_download
unset LH_SK_TEST_RESIDENT_DIR

# ---------------------------------------------------------------- c
check_attestation() {
    both att -- -t ed25519-sk "${W[@]}" -f key -N '' -O write-attestation=key.att &&
        cmp "$T/att/debian/key.att" "$T/att/longhaul/key.att" &&
        [ "$(stat -c %a "$T/att/longhaul/key.att")" = "$(stat -c %a "$T/att/debian/key.att")" ] &&
        echo challenge-bytes >"$T/challenge" &&
        both chal -- -t ecdsa-sk "${W[@]}" -f key -N '' -q -O challenge="$T/challenge" -O write-attestation=a &&
        cmp "$T/chal/debian/a" "$T/chal/longhaul/a"
}
lh_check "-O write-attestation (and challenge=): the same file, mode and message" check_attestation

# ---------------------------------------------------------------- d
check_refusals() {
    both app -- -t ed25519-sk "${W[@]}" -f key -N '' -O application=web:x &&
        both opt -- -t ecdsa-sk "${W[@]}" -f key -N '' -O bogus &&
        both nochal -- -t ed25519-sk "${W[@]}" -f key -N '' -O challenge="$T/no-such-file" &&
        [ ! -e "$T/app/longhaul/key" ] && [ ! -e "$T/nochal/longhaul/key" ]
}
lh_check "a bad application, an unknown option, a missing challenge file: refused as Debian's refuses them" \
    check_refusals
check_providers() {
    local libc
    libc=$(ldd /bin/true | awk '/libc\.so/ { print $3 }')
    local i=0 p
    for p in "$T/no-such.so" "$T" /dev/null "$T/script.sh" "$T/tiny.so" "$libc"; do
        i=$((i + 1))
        both "prov$i" -- -t ed25519-sk -w "$p" -f key -N '' || { echo "   with -w $p"; return 1; }
    done
    # The environment names one too.
    both provenv SSH_SK_PROVIDER="$T/tiny.so" -- -t ed25519-sk -f key -N '' -q &&
        both provenv2 SSH_SK_PROVIDER="$PROVIDER" -- -t ecdsa-sk -f key -N '' -q
}
lh_check "providers that are not middleware (missing, a directory, /dev/null, a script, a small file, libc) refused in Debian's words; SSH_SK_PROVIDER" \
    check_providers
check_codes() {
    local code
    for code in -1 -2 -4 -5; do
        both "code$code" LH_SK_TEST_ENROLL_ERROR=$code -- -t ed25519-sk "${W[@]}" -f key -N '' ||
            { echo "   with the middleware answering $code"; return 1; }
    done
}
lh_check "every error the middleware answers: the same message and status" check_codes
check_wrong_pins() {
    printf '1\n2\n3\n' >"$T/pins.in"
    both pins LH_SK_TEST_PIN=4821 -- -t ed25519-sk "${W[@]}" -f key -N '' -O verify-required &&
        [ "$(cat "$T/pins/longhaul/rc")" = 255 ]
}
lh_check "wrong PINs on standard input: two 'PIN incorrect', then 'Too many incorrect PINs'" check_wrong_pins
# The key keeps the flags the authenticator answered with (OpenSSH stores
# those): the test provider echoes the request's, here with "force" (0x10).
check_resident_exists() {
    printf 'n\n' >"$T/rkn.in"
    printf 'y\n' >"$T/rky.in"
    both rkn LH_SK_TEST_CREDENTIAL_EXISTS=1 -- -t ed25519-sk "${W[@]}" -f key -N '' -O resident -O user=alice &&
        both rky LH_SK_TEST_CREDENTIAL_EXISTS=1 -- -t ed25519-sk "${W[@]}" -f key -N '' -O resident &&
        [ ! -e "$T/rkn/longhaul/key" ] && check_flags rky 0x31 && debian_reads "$T/rky/longhaul" key
}
lh_check "a resident credential that exists: the question, 'n' refuses, 'y' replaces it" check_resident_exists

# ---------------------------------------------------------------- e
check_askpass_pin() {
    local who
    printf '#!/bin/sh\nprintf "%%s\\n" "$1" >>"$PWD/askpass.log"\necho 4821\n' >"$T/askpass.sh"
    chmod 755 "$T/askpass.sh"
    both pinask LH_SK_TEST_PIN=4821 SSH_ASKPASS="$T/askpass.sh" SSH_ASKPASS_REQUIRE=force DISPLAY=none -- \
        -t ecdsa-sk "${W[@]}" -f key -N '' -O verify-required -C pin &&
        cmp "$T/pinask/debian/askpass.log" "$T/pinask/longhaul/askpass.log" &&
        check_flags pinask 0x05 && debian_reads "$T/pinask/longhaul" key
}
lh_check "the PIN through askpass: the same prompts, the key made" check_askpass_pin

# ---------------------------------------------------------------- f
# Logins with keys Longhaul's ssh-keygen made (the ed25519-sk of a and the
# ecdsa-sk of e, which wants the PIN): Debian's ssh (through its
# ssh-sk-helper) into Debian's sshd, Longhaul's ssh into Longhaul's sshd.
if [ "$(id -u)" = 0 ] && [ -x /usr/sbin/sshd ]; then
    lh_make_user "pw-$RANDOM-$RANDOM"
    user=$LH_USER
    lh_make_host_keys "$T"
    cat "$T/ed/longhaul/key.pub" "$T/pinask/longhaul/key.pub" >"$T/authorized_keys"
    chmod 644 "$T/authorized_keys"
    lh_port port_debian
    lh_port port_longhaul
    d_srv=$T/srv-debian l_srv=$T/srv-longhaul
    mkdir -p "$d_srv" "$l_srv"
    chmod 711 "$d_srv" "$l_srv"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$d_srv/"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$l_srv/"
    LH_SSHD=/usr/sbin/sshd lh_start_sshd "$d_srv" "$port_debian"
    LH_SSHD=$LONGHAUL_SSHD lh_start_sshd "$l_srv" "$port_longhaul"
    lh_known_hosts "$d_srv" "$port_debian"
    lh_known_hosts "$l_srv" "$port_longhaul"
    login() { # SSH SRV PORT KEY
        local ssh=$1 srv=$2 port=$3 key=$4 got
        got=$(LH_SK_TEST_PIN=4821 SSH_ASKPASS=$T/askpass.sh SSH_ASKPASS_REQUIRE=force DISPLAY=none \
            "$ssh" -F /dev/null -p "$port" -o "UserKnownHostsFile=$srv/known_hosts.$port" -o StrictHostKeyChecking=yes \
            -o IdentitiesOnly=yes -o IdentityAgent=none -o SecurityKeyProvider="$PROVIDER" -o PasswordAuthentication=no \
            -o KbdInteractiveAuthentication=no -i "$key" "$user@127.0.0.1" 'echo logged-in' 2>"$T/login.err" </dev/null)
        [ "$got" = logged-in ] || {
            echo "   $ssh with $key to port $port: '$got'"
            sed 's/^/   /' "$T/login.err"
            return 1
        }
    }
    check_logins() {
        login ssh "$d_srv" "$port_debian" "$T/ed/longhaul/key" &&
            login ssh "$d_srv" "$port_debian" "$T/pinask/longhaul/key" &&
            login "$LONGHAUL_SSH" "$l_srv" "$port_longhaul" "$T/ed/longhaul/key" &&
            login "$LONGHAUL_SSH" "$l_srv" "$port_longhaul" "$T/pinask/longhaul/key" &&
            lh_matches -F "Accepted publickey for $user" "$d_srv/sshd.log"
    }
    lh_check "keys Longhaul's ssh-keygen made log in: Debian's ssh into Debian's sshd, Longhaul's into Longhaul's" \
        check_logins
else
    lh_skip_check "logins with the keys made" "needs root (a test user) and Debian's sshd"
fi

lh_summary
