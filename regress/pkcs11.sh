#!/usr/bin/env bash
# PKCS#11 tokens (ssh -I / PKCS11Provider, ssh-keygen -D) with SoftHSM
# (Debian's softhsm2, a software token; its store lives in this test's
# temporary directory through SOFTHSM2_CONF), Longhaul's programs beside
# Debian's:
#  a. ssh-keygen -D lists the token's RSA and ECDSA keys (P-256, P-384,
#     P-521, RSA of 2048 and 3072 bits, and a P-256 key known only by its
#     X.509 certificate, labelled with its subject; an Ed25519 certificate
#     skipped) as Debian's does: stdout, stderr
#     and exit status the same with -l, -l -v, -E md5, -B and -v;
#  b. its failures in the same words: files that are no PKCS#11 library,
#     an uninitialised token, a token without keys (its PIN asked through
#     askpass, refused on standard input);
#  c. ssh -I logs in with each key type (RSA with rsa-sha2-512,
#     rsa-sha2-256 and ssh-rsa; ECDSA on three curves; a certificate's
#     key), into Debian's sshd and
#     Longhaul's, the PIN asked once through askpass with Debian's prompt;
#     the keys listed and offered with the token's labels, as Debian's ssh
#     lists them; PKCS11Provider in a configuration file does the same;
#  d. ssh's failures as Debian's: BatchMode ("pin required"), no PIN, a
#     wrong PIN, a provider that is no library; the exit status 255;
#  e. the agent: ssh-add -s (the PIN on standard input) and -e, Longhaul's
#     and Debian's ssh-add with Longhaul's and Debian's ssh-agent in all
#     four pairings: the same messages and exit statuses, the same keys
#     listed, Debian's ssh logging in with an RSA, an ECDSA and a
#     certificate's key through the agent; the refusals (a wrong PIN, a module -P does not allow, a
#     missing one, a module loaded twice, removing one not loaded) in the
#     same words;
#  f. ssh-keygen -s CA.pub -D signs certificates with a CA key on the token
#     (RSA with rsa-sha2-512 and -t rsa-sha2-256, ECDSA, a certificate
#     object's key; the PIN from -P or asked through askpass) as Debian's:
#     the same messages and statuses, the same certificates by Debian's
#     ssh-keygen -L (which checks the CA's signature), and Debian's ssh logs
#     in with one into Debian's and Longhaul's sshd (TrustedUserCAKeys); the
#     failures (a wrong PIN, a CA key not on the token, no CA file) in the
#     same words.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
L_KEYGEN=$BUILD/bin/ssh-keygen
L_SSH=$BUILD/bin/ssh
L_SSHD=$BUILD/bin/sshd
D_SSH=/usr/bin/ssh
[ -x "$L_KEYGEN" ] && [ -x "$L_SSH" ] || lh_fail "ssh-keygen or ssh not built in $BUILD"
lh_require_openssh_server
MODULE=/usr/lib/softhsm/libsofthsm2.so
[ -f "$MODULE" ] || lh_skip "SoftHSM not found at $MODULE (contrib/install-deps.sh installs softhsm2)"
command -v softhsm2-util >/dev/null || lh_skip "softhsm2-util not found (softhsm2)"
T=$LH_TMP
chmod 711 "$T"
cd "$T"

# token NAME LABEL: a SoftHSM store of its own ($T/NAME.conf), one token
# with user PIN 123456 initialised in it.
token() {
    mkdir -p "$T/$1.tokens"
    printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$T/$1.tokens" >"$T/$1.conf"
    [ -z "${2:-}" ] || SOFTHSM2_CONF=$T/$1.conf softhsm2-util --init-token --free --label "$2" --so-pin 87654321 \
        --pin 123456 >/dev/null
}
token main "test token"
token empty "empty token"
token blank # a store whose one slot holds no initialised token
import() { # NAME TYPE BITS LABEL ID: a key made by Debian's ssh-keygen, into the main token
    local f=$T/key_$1 label
    "$LH_SSH_KEYGEN" -q -t "$2" -b "$3" -N '' -m PKCS8 -f "$f"
    label=(--label "$4")
    SOFTHSM2_CONF=$T/main.conf softhsm2-util --import "$f" --token "test token" "${label[@]}" --id "$5" \
        --pin 123456 >/dev/null || lh_fail "softhsm2-util --import $1"
}
import rsa rsa 2048 "rsa key" 01
import ec256 ecdsa 256 "ec key 256" 02
import ec384 ecdsa 384 "ec key 384" 03
import ec521 ecdsa 521 "ec key 521" 04
import rsa3072 rsa 3072 "rsa 3072" 05
# X.509 certificates with their private keys (OpenSC's pkcs11-tool writes
# them): a P-256 key known only by its certificate, whose subject is its
# label, and an Ed25519 certificate (alone), which OpenSSH 9.2 skips.
command -v pkcs11-tool >/dev/null || lh_skip "pkcs11-tool not found (contrib/install-deps.sh installs opensc)"
import_cert() { # NAME OPENSSL-KEY-ARGS ID [nokey: the certificate alone]
    local f=$T/cert_$1 p11=(pkcs11-tool --module "$MODULE" --login --pin 123456)
    openssl req -x509 $2 -nodes -keyout "$f.key" -out "$f.pem" -days 30 -subj "/C=DE/O=Longhaul Test/CN=$1" \
        2>/dev/null && openssl x509 -in "$f.pem" -outform DER -out "$f.der" &&
        SOFTHSM2_CONF=$T/main.conf "${p11[@]}" --write-object "$f.der" --type cert --id "$3" --label "$1 cert" \
            >/dev/null 2>&1 && { [ "${4:-}" = nokey ] ||
        SOFTHSM2_CONF=$T/main.conf "${p11[@]}" --write-object "$f.key" --type privkey --id "$3" --label "$1 key" \
            >/dev/null 2>&1; } || lh_fail "pkcs11-tool --write-object $1"
    [ "${4:-}" = nokey ] ||
        "$LH_SSH_KEYGEN" -i -m PKCS8 -f <(openssl x509 -in "$f.pem" -pubkey -noout) >"$T/key_cert_$1.pub" 2>/dev/null ||
        lh_fail "the public key of certificate $1"
}
import_cert alice "-newkey ec -pkeyopt ec_paramgen_curve:P-256" 0a
import_cert bob "-newkey ed25519" 0b nokey

printf '#!/bin/sh\necho "$1" >>"%s/prompts"\necho 123456\n' "$T" >"$T/pin.sh"
printf '#!/bin/sh\necho "$1" >>"%s/prompts"\necho 000000\n' "$T" >"$T/badpin.sh"
chmod +x "$T/pin.sh" "$T/badpin.sh"
printf 'not a library\n' >"$T/text.so"
LIBC=$(ldd /bin/true | awk '/libc.so/ { print $3 }')

# Debian's debug lines that print its own pointers and reference counts.
# A missing file shows as a line naming it, so two missing files differ.
unpointed() {
    [ -e "$1" ] || { echo "MISSING $1"; return; }
    grep -v 'pkcs11_k11_free\|pkcs11_provider_unref\|pkcs11_provider_finalize' "$1" || true
}
# both NAME CONF ENV... -- ARGS: each ssh-keygen with ARGS, the outputs compared.
both_keygen() {
    local name=$1 conf=$2 who
    shift 2
    lh_split_env "$@"
    for who in debian longhaul; do
        local prog=$LH_SSH_KEYGEN
        [ $who = longhaul ] && prog=$L_KEYGEN
        env SOFTHSM2_CONF="$T/$conf.conf" "${LH_ENV[@]}" "$prog" "${LH_ARGS[@]}" </dev/null >"$T/$name.$who.out" \
            2>"$T/$name.$who.err"
        echo $? >"$T/$name.$who.rc"
    done
    same "$name"
}
same() { # NAME: the two programs' out, err and rc the same
    local f
    for f in out err rc; do
        if ! diff <(unpointed "$T/$1.debian.$f") <(unpointed "$T/$1.longhaul.$f") >"$T/$1.$f.diff"; then
            echo "   $f differs (Debian's <, Longhaul's >):"
            sed 's/^/   /' "$T/$1.$f.diff" | head -20
            return 1
        fi
    done
}

# ---------------------------------------------------------------- a
lh_check "a. ssh-keygen -D lists the token's keys as Debian's" both_keygen list main -- -D "$MODULE"
lh_check "a. ... six of them, each with its label, the certificate's its subject" eval \
    '[ "$(grep -c " rsa key$\| ec key [0-9]*$\| rsa 3072$\| /C=DE/O=Longhaul Test/CN=alice$" "$T/list.longhaul.out")" = 6 ]'
lh_check "a. the Ed25519 certificate skipped in Debian's words" eval \
    'tr -d "\\r" <"$T/list.longhaul.err" | lh_matches -x "unknown certificate key type"'
imported_listed() {
    local k
    for k in rsa ec256 ec384 ec521 rsa3072 cert_alice; do
        grep -qF "$(cut -d' ' -f2 "$T/key_$k.pub")" "$T/list.longhaul.out" || return 1
    done
}
lh_check "a. the keys are those imported" imported_listed
lh_check "a. ssh-keygen -D -l as Debian's" both_keygen list_l main -- -D "$MODULE" -l
lh_check "a. ssh-keygen -D -l -v (randomart, debug lines) as Debian's" both_keygen list_lv main -- -D "$MODULE" -l -v
lh_check "a. ssh-keygen -D -l -E md5 as Debian's" both_keygen list_md5 main -- -D "$MODULE" -l -E md5
lh_check "a. ssh-keygen -D -B as Debian's" both_keygen list_b main -- -D "$MODULE" -B
lh_check "a. ssh-keygen -D -v as Debian's" both_keygen list_v main -- -D "$MODULE" -v

# ---------------------------------------------------------------- b
for p in /nonexistent /dev/null "$LIBC" "$T/text.so" "$T"; do
    lh_check "b. ssh-keygen -D ${p/#$T/TMP} (no PKCS#11 library) as Debian's" both_keygen "bad$RANDOM" main -- -D "$p"
done
lh_check "b. an uninitialised token as Debian's" both_keygen blank blank -- -D "$MODULE"
lh_check "b. a token without keys, the PIN through askpass, as Debian's" \
    both_keygen empty_askpass empty SSH_ASKPASS="$T/pin.sh" SSH_ASKPASS_REQUIRE=force -- -D "$MODULE"
lh_check "b. ... the same prompt" eval '[ "$(sort -u "$T/prompts")" = "Enter PIN for '"'empty token'"': " ]'
lh_check "b. a token without keys, a wrong PIN, as Debian's" \
    both_keygen empty_bad empty SSH_ASKPASS="$T/badpin.sh" SSH_ASKPASS_REQUIRE=force -- -D "$MODULE"
lh_check "b. a token without keys, no PIN (no terminal, no askpass), as Debian's" \
    both_keygen empty_none empty SSH_ASKPASS_REQUIRE=never -- -D "$MODULE"

# ---------------------------------------------------------------- c, d
lh_make_host_keys "$T"
lh_start_named_sshd debian /usr/sbin/sshd
lh_start_named_sshd longhaul "$L_SSHD"
lh_start_named_sshd debian_sha1 /usr/sbin/sshd "PubkeyAcceptedAlgorithms +ssh-rsa"
lh_start_named_sshd longhaul_sha1 "$L_SSHD" "PubkeyAcceptedAlgorithms +ssh-rsa"
# login CLIENT SERVER KEY [ssh args]: only KEY authorised; the output in
# $T/login.CLIENT.*, the server's sshd log kept.
login() {
    local client=$1 server=$2 key=$3 port_var=port_$2 prog=$D_SSH
    shift 3
    [ "$client" = longhaul ] && prog=$L_SSH
    cp "$T/key_$key.pub" "$T/srv-$server/authorized_keys"
    rm -f "$T/prompts"
    SOFTHSM2_CONF=$T/main.conf SSH_ASKPASS=${ASKPASS:-$T/pin.sh} SSH_ASKPASS_REQUIRE=${ASKPASS_REQUIRE:-force} \
        "$prog" -F "${SSH_CONFIG:-/dev/null}" -p "${!port_var}" -o UserKnownHostsFile="$T/srv-$server/known_hosts.${!port_var}" \
        -o StrictHostKeyChecking=yes -o IdentityAgent=none -o PasswordAuthentication=no \
        -o KbdInteractiveAuthentication=no "$@" 127.0.0.1 echo logged-in </dev/null >"$T/login.$client.out" \
        2>"$T/login.$client.err"
    echo $? >"$T/login.$client.rc"
}
logged_in() { # CLIENT SERVER KEY ALG [ssh args]: login succeeds, the PIN asked once, KEY signing with ALG
    local client=$1 server=$2 key=$3 alg=$4 log=$T/srv-$2/sshd.log n fp
    shift 4
    n=$(wc -l <"$log")
    fp=$("$LH_SSH_KEYGEN" -l -f "$T/key_$key.pub" | cut -d' ' -f2)
    login "$client" "$server" "$key" -I "$MODULE" -vvv "$@" &&
        grep -qx logged-in "$T/login.$client.out" &&
        [ "$(cat "$T/prompts")" = "Enter PIN for 'test token': " ] &&
        grep -q "signing using $alg $fp" "$T/login.$client.err" &&
        tail -n +$((n + 1)) "$log" | lh_matches "Accepted publickey for .* $fp" || {
        echo "   $client into $server with $key ($alg):"
        grep -v '^debug' "$T/login.$client.err" | head -5 | sed 's/^/   /'
        tail -n +$((n + 1)) "$log" | tail -3 | sed 's/^/   /'
        return 1
    }
}
# The keys listed and offered, with their labels, as Debian's ssh shows them.
offered() { grep -E '^debug1: (Will attempt key|Offering public key|Server accepts key): .* token$' "$1" || true; }
same_offers() {
    diff <(offered "$T/login.debian.err") <(offered "$T/login.longhaul.err") >"$T/offers.diff" || {
        sed 's/^/   /' "$T/offers.diff" | head -10
        return 1
    }
}
for server in debian longhaul; do
    lh_check "c. longhaul ssh -I into $server's sshd with ec256" logged_in longhaul "$server" ec256 ecdsa-sha2-nistp256
    lh_check "c. longhaul ssh -I into $server's sshd with ec384" logged_in longhaul "$server" ec384 ecdsa-sha2-nistp384
    lh_check "c. longhaul ssh -I into $server's sshd with ec521" logged_in longhaul "$server" ec521 ecdsa-sha2-nistp521
    lh_check "c. longhaul ssh -I into $server's sshd with rsa" logged_in longhaul "$server" rsa rsa-sha2-512
    lh_check "c. longhaul ssh -I into $server's sshd with rsa 3072" logged_in longhaul "$server" rsa3072 rsa-sha2-512
    lh_check "c. longhaul ssh -I into $server's sshd with the certificate's key" \
        logged_in longhaul "$server" cert_alice ecdsa-sha2-nistp256
    lh_check "c. longhaul ssh -I into $server's sshd with rsa, rsa-sha2-256" \
        logged_in longhaul "$server" rsa rsa-sha2-256 -o PubkeyAcceptedAlgorithms=rsa-sha2-256
    lh_check "c. longhaul ssh -I into $server's sshd with rsa, ssh-rsa (SHA-1)" \
        logged_in longhaul "${server}_sha1" rsa ssh-rsa -o PubkeyAcceptedAlgorithms=ssh-rsa
done
lh_check "c. debian ssh -I into debian's sshd with ec384 (the reference)" logged_in debian debian ec384 ecdsa-sha2-nistp384
lh_check "c. longhaul ssh -I into debian's sshd with ec384" logged_in longhaul debian ec384 ecdsa-sha2-nistp384
lh_check "c. the keys listed and offered as Debian's ssh lists them" same_offers
printf 'Host *\n  PKCS11Provider %s\n' "$MODULE" >"$T/ssh_config"
lh_check "c. PKCS11Provider in ssh_config" eval \
    'SSH_CONFIG=$T/ssh_config login longhaul longhaul ec256 && grep -qx logged-in "$T/login.longhaul.out"'
printf 'Host *\n  PKCS11Provider none\n' >"$T/ssh_config_none"
lh_check "c. PKCS11Provider none: no token keys, no PIN asked" eval \
    'SSH_CONFIG=$T/ssh_config_none login longhaul longhaul ec256 -I none; [ "$(cat "$T/login.longhaul.rc")" = 255 ] && [ ! -e "$T/prompts" ]'

both_fail() { # NAME KEY [ssh args]: both ssh fail alike into Debian's sshd
    local name=$1 key=$2 who
    shift 2
    for who in debian longhaul; do
        login "$who" debian "$key" "$@"
        for f in err rc; do cp "$T/login.$who.$f" "$T/$name.$who.$f"; done
        : >"$T/$name.$who.out"
    done
    same "$name" && [ "$(cat "$T/$name.longhaul.rc")" = 255 ]
}
lh_check "d. BatchMode: 'pin required', as Debian's ssh" both_fail batch ec256 -I "$MODULE" -o BatchMode=yes
lh_check "d. no PIN (askpass never, no terminal), as Debian's ssh" eval \
    'ASKPASS_REQUIRE=never both_fail nopin ec256 -I "$MODULE"'
lh_check "d. a wrong PIN, as Debian's ssh" eval 'ASKPASS=$T/badpin.sh both_fail badpin rsa -I "$MODULE"'
lh_check "d. a provider that is no library, as Debian's ssh" both_fail notlib ec256 -I "$T/text.so"
lh_check "d. a missing provider, as Debian's ssh" both_fail missing ec256 -I /nonexistent

# ---------------------------------------------------------------- e
L_ADD=$BUILD/bin/ssh-add
L_AGENT=$BUILD/bin/ssh-agent
start_agent() { # NAME PROGRAM: an agent on $T/NAME.sock, in debug mode (its log lines kept)
    rm -f "$T/$1.sock"
    SOFTHSM2_CONF=$T/main.conf "$2" -d -a "$T/$1.sock" >/dev/null 2>"$T/$1.agent.log" &
    LH_PIDS+=($!)
    lh_wait_until 5 test -S "$T/$1.sock" || lh_fail "$1 agent did not start"
}
start_agent agent_debian /usr/bin/ssh-agent
start_agent agent_longhaul "$L_AGENT"
# add ADD AGENT PATH [ssh-add args]: stdout+stderr and status in PATH.out, PATH.rc
add() {
    local prog=/usr/bin/ssh-add name=$3 agent=$2
    [ "$1" = longhaul ] && prog=$L_ADD
    shift 3
    printf '%s\n' "${PIN:-123456}" | SSH_AUTH_SOCK=$T/agent_$agent.sock setsid -w "$prog" "$@" >"$name.out" 2>&1
    echo $? >"$name.rc"
}
# card_flow ADD AGENT: -s, -l, a login of Debian's ssh through the agent
# with an RSA and an ECDSA key, -e, -l; every output kept as $T/flow.ADD.AGENT.N
card_flow() {
    local a=$1 g=$2 f=$T/flow.$1.$2 k
    add "$a" "$g" "$f.1" -s "$MODULE" &&
        add "$a" "$g" "$f.2" -l && sort "$f.2.out" -o "$f.2.out" || return 1
    for k in rsa ec256 cert_alice; do
        cp "$T/key_$k.pub" "$T/srv-debian/authorized_keys"
        SSH_AUTH_SOCK=$T/agent_$g.sock "$D_SSH" -F /dev/null -p "$port_debian" -o BatchMode=yes \
            -o UserKnownHostsFile="$T/srv-debian/known_hosts.$port_debian" -o StrictHostKeyChecking=yes \
            127.0.0.1 echo logged-in >"$f.$k.out" 2>&1 </dev/null
    done
    add "$a" "$g" "$f.3" -e "$MODULE"
    add "$a" "$g" "$f.4" -l
}
same_flow() { # ADD AGENT: the outputs and statuses of Debian's pair
    local n ext
    for n in 1 2 3 4 rsa ec256 cert_alice; do
        for ext in out rc; do
            [ -e "$T/flow.debian.debian.$n.$ext" ] || continue
            diff "$T/flow.debian.debian.$n.$ext" "$T/flow.$1.$2.$n.$ext" >"$T/flow.diff" || {
                echo "   $n.$ext differs (Debian's pair <, $1 ssh-add with $2's agent >):"
                sed 's/^/   /' "$T/flow.diff" | head -10
                return 1
            }
        done
    done
}
lh_check "e. Debian's ssh-add -s, -l, -e with Debian's agent (the reference)" eval \
    'card_flow debian debian && grep -q "Card added: $MODULE$" "$T/flow.debian.debian.1.out" &&
     grep -qx logged-in "$T/flow.debian.debian.rsa.out" && grep -qx logged-in "$T/flow.debian.debian.ec256.out" &&
     grep -qx logged-in "$T/flow.debian.debian.cert_alice.out" && [ "$(wc -l <"$T/flow.debian.debian.2.out")" = 6 ]'
for pair in "longhaul longhaul" "debian longhaul" "longhaul debian"; do
    set -- $pair
    lh_check "e. $1's ssh-add with $2's agent: -s, -l, logins through it, -e as Debian's" eval \
        "card_flow $1 $2; same_flow $1 $2"
done
# Refusals, the same pair against the same agent each: Debian's with
# Debian's, Longhaul's with Longhaul's.
refusal() { # NAME [PIN=...] ssh-add args: both pairs, outputs compared
    local name=$1 who
    shift
    for who in debian longhaul; do
        add "$who" "$who" "$T/$name.$who" "$@"
        cp "$T/$name.$who.out" "$T/$name.$who.err"
        : >"$T/$name.$who.out"
    done
    same "$name"
}
lh_check "e. a wrong PIN: refused as by Debian's" eval 'PIN=000000 refusal card_badpin -s "$MODULE"'
lh_check "e. a module outside -P: refused as by Debian's" refusal card_notallowed -s "$T/text.so"
lh_check "e. a missing module: refused as by Debian's" refusal card_missing -s /nonexistent.so
lh_check "e. removing a module not loaded: refused as by Debian's" refusal card_notloaded -e "$MODULE"
lh_check "e. a module loaded twice: the second refused as by Debian's" eval \
    'refusal card_once -s "$MODULE" && refusal card_twice -s "$MODULE" && refusal card_done -e "$MODULE"'
agents_logged() {
    local l
    for l in "refusing PKCS#11 add of \"$T/text.so\": provider not allowed" \
        "failed PKCS#11 add of \"/nonexistent.so\": realpath: No such file or directory"; do
        grep -qF "$l" "$T/agent_debian.agent.log" && grep -qF "$l" "$T/agent_longhaul.agent.log" || {
            echo "   not in both agents' logs: $l"
            return 1
        }
    done
}
lh_check "e. the agent's log lines for the refusals as Debian's agent's" agents_logged

# ---------------------------------------------------------------- f
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C "the user" -f "$T/user"
"$LH_SSH_KEYGEN" -q -t ecdsa -N '' -f "$T/key_elsewhere"
ME=$(id -un)
# ca_sign NAME CA ENV... -- ARGS: each ssh-keygen signs a copy of $T/user.pub
# with the token's CA key_CA (the same validity and serial, so that the two
# certificates differ only in their nonces and signatures); Debian's -L of
# each certificate stands as its out.
ca_sign() {
    local name=$1 ca=$2 who
    shift 2
    lh_split_env "$@"
    for who in debian longhaul; do
        local prog=$LH_SSH_KEYGEN
        [ $who = longhaul ] && prog=$L_KEYGEN
        rm -f "$T/prompts" "$T/$name.$who-cert.pub"
        cp "$T/user.pub" "$T/$name.$who.pub"
        env SOFTHSM2_CONF="$T/main.conf" "${LH_ENV[@]}" "$prog" -s "$T/key_$ca.pub" -D "$MODULE" -I "key id" \
            -n "$ME,other" -V 20260101:20360101 -z 7 "${LH_ARGS[@]}" "$T/$name.$who.pub" </dev/null >/dev/null \
            2>"$T/$name.$who.err"
        echo $? >"$T/$name.$who.rc"
        sed -i "s|$name.$who|NAME|g" "$T/$name.$who.err"
        if [ -e "$T/$name.$who-cert.pub" ]; then
            "$LH_SSH_KEYGEN" -L -f "$T/$name.$who-cert.pub" | sed "s|$name.$who|NAME|" >"$T/$name.$who.out"
        else
            : >"$T/$name.$who.out"
        fi
    done
    same "$name"
}
signed() { # NAME CA ENV... -- ARGS: both sign alike, and the certificate is there
    ca_sign "$@" && grep -q "Signing CA: " "$T/$1.longhaul.out" && [ "$(cat "$T/$1.longhaul.rc")" = 0 ]
}
lh_check "f. ssh-keygen -s -D with an RSA CA as Debian's (rsa-sha2-512)" signed ca_rsa rsa -- -P 123456
lh_check "f. ... the CA signature is rsa-sha2-512" grep -q "(using rsa-sha2-512)" "$T/ca_rsa.longhaul.out"
lh_check "f. ssh-keygen -s -D -t rsa-sha2-256 as Debian's" signed ca_rsa256 rsa -- -P 123456 -t rsa-sha2-256
lh_check "f. ... the CA signature is rsa-sha2-256" grep -q "(using rsa-sha2-256)" "$T/ca_rsa256.longhaul.out"
lh_check "f. ssh-keygen -s -D with an ECDSA P-384 CA as Debian's" signed ca_ec384 ec384 -- -P 123456
lh_check "f. ssh-keygen -s -D with a certificate object's key as Debian's" signed ca_alice cert_alice -- -P 123456
lh_check "f. ssh-keygen -s -D, the PIN through askpass, as Debian's" \
    signed ca_askpass ec256 SSH_ASKPASS="$T/pin.sh" SSH_ASKPASS_REQUIRE=force --
lh_check "f. ... asked with Debian's prompt" eval '[ "$(cat "$T/prompts")" = "Enter PIN for '"'test token'"': " ]'
lh_check "f. a wrong PIN (-P) as Debian's" ca_sign ca_badpin ec256 -- -P 000000
lh_check "f. a wrong PIN through askpass as Debian's" \
    ca_sign ca_badask ec256 SSH_ASKPASS="$T/badpin.sh" SSH_ASKPASS_REQUIRE=force --
lh_check "f. a CA key the token does not hold, as Debian's" ca_sign ca_elsewhere elsewhere -- -P 123456
lh_check "f. a missing CA public key, as Debian's" ca_sign ca_missing nothing -- -P 123456
cert_login() { # SERVER: Debian's ssh logs in with Longhaul's certificate signed by the token's P-384 CA
    local port_var=port_$1 log=$T/srv-$1/sshd.log
    : >"$T/srv-$1/authorized_keys"
    cp "$T/user" "$T/certuser" && cp "$T/ca_ec384.longhaul-cert.pub" "$T/certuser-cert.pub"
    "$D_SSH" -F /dev/null -p "${!port_var}" -o UserKnownHostsFile="$T/srv-$1/known_hosts.${!port_var}" \
        -o StrictHostKeyChecking=yes -o IdentityAgent=none -o PasswordAuthentication=no -o IdentitiesOnly=yes \
        -i "$T/certuser" 127.0.0.1 echo logged-in </dev/null 2>"$T/certlogin.$1.err" | lh_matches -x logged-in &&
        grep -q "Accepted publickey for $ME .*ED25519-CERT .*ID key id (serial 7) CA ECDSA" "$log" || {
        sed 's/^/   /' "$T/certlogin.$1.err" | head -5
        tail -n 3 "$log" | sed 's/^/   /'
        return 1
    }
}
lh_start_named_sshd ca_debian /usr/sbin/sshd "TrustedUserCAKeys $T/key_ec384.pub"
lh_start_named_sshd ca_longhaul "$L_SSHD" "TrustedUserCAKeys $T/key_ec384.pub"
lh_check "f. Debian's ssh logs in to Debian's sshd with the certificate Longhaul's ssh-keygen signed" cert_login ca_debian
lh_check "f. ... and to Longhaul's sshd" cert_login ca_longhaul

lh_summary
