#!/usr/bin/env bash
# FIDO security keys (sk-ssh-ed25519@openssh.com,
# sk-ecdsa-sha2-nistp256@openssh.com and their certificates) in the agents:
# Longhaul's ssh-add and ssh-agent beside Debian's (OpenSSH 9.2), with keys
# made by Debian's ssh-keygen and the software authenticator
# regress/tools/sk_test_provider.cpp (TEST ONLY):
#  a. the same ssh-add session (adding ed25519-sk, ecdsa-sk, an sk key
#     with its certificate, -t, -l, -E md5 -l, -L, -T, -d, -k -d, -D, the
#     provider from -S, $SSH_SK_PROVIDER (set, empty) or "internal", a
#     missing provider, an encrypted sk key, a plain key with -S), run by
#     Debian's and by Longhaul's ssh-add against Debian's and Longhaul's
#     ssh-agent (-P '<provider dir>/*'): identical stdout, stderr and exit
#     statuses in all four pairings;
#  b. a provider outside -P: ssh-add's message, and the agent's
#     "Refusing add key: provider ... not allowed" (ssh-agent -d);
#  c. Debian's and Longhaul's ssh log into Debian's and Longhaul's sshd
#     with sk keys and an sk certificate held by Longhaul's ssh-agent
#     (IdentityAgent; IdentitiesOnly with the .pub, or no IdentityFile);
#  d. websafe: a key whose application is not "ssh:..." cannot sign
#     random data (ssh-add -T) in a default agent, and can with
#     -O no-restrict-websafe, in both agents;
#  e. the "Confirm user presence" notice through SSH_ASKPASS (DISPLAY set
#     in the agent's environment): the same text and SSH_ASKPASS_PROMPT
#     from both agents;
#  f. a verify-required key with LH_SK_TEST_PIN in the agent's
#     environment: the askpass gets the same "Enter PIN ..." prompt from
#     both agents; the right PIN signs, a wrong one fails, in both;
#  g. ssh-add -K: the authenticator's resident keys (made by Debian's
#     ssh-keygen -O resident) into the agent, the same transcript from
#     both ssh-adds on both agents (-K with -t/-c/-q/-d, the provider from
#     $SSH_SK_PROVIDER, the PIN through askpass, a wrong PIN, no resident
#     keys, a missing provider, one outside -P); the built-in provider
#     refused as not supported yet; logins with a resident key that
#     Longhaul's ssh-add loaded.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_BIN=$BUILD/bin
PROVIDER=$BUILD/regress/sk_test_provider.so
DEBIAN_BIN=/usr/bin
DEBIAN_SSHD=/usr/sbin/sshd
for b in ssh-add ssh-agent ssh sshd; do
    [ -x "$LH_BIN/$b" ] || lh_fail "$b not built ($LH_BIN/$b)"
done
[ -f "$PROVIDER" ] || lh_fail "the test provider is not built ($PROVIDER: ninja sk_test_provider)"
for b in ssh-add ssh-agent ssh; do
    [ -x "$DEBIAN_BIN/$b" ] || lh_skip "OpenSSH's $b not found in $DEBIAN_BIN"
done
[ -x "$DEBIAN_SSHD" ] || lh_skip "OpenSSH's sshd not found at $DEBIAN_SSHD"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found"
command -v python3 >/dev/null || lh_skip "python3 not found (it writes the web-origin key)"
PROVIDER=$(realpath "$PROVIDER")
ALLOWED="$(dirname "$PROVIDER")/*"
T=$(realpath "$LH_TMP")
chmod 711 "$T"
# Nothing from the caller's environment reaches the tools unless a case
# sets it.
unset SSH_AUTH_SOCK SSH_AGENT_PID SSH_SK_PROVIDER SSH_ASKPASS SSH_ASKPASS_REQUIRE DISPLAY LH_SK_TEST_PIN \
    LH_SK_TEST_SIGN_FLAGS 2>/dev/null || true

if [ "$(id -u)" = 0 ]; then
    lh_make_user "pw-$RANDOM-$RANDOM"
    user=$LH_USER
else
    user=$(id -un)
fi

# ---------------------------------------------------------------- keys
PIN=4821
# The askpass: logs "PROMPT|SSH_ASKPASS_PROMPT" (first thing: a notice is
# killed as soon as the signature is made) to $ASKPASS_LOG, then answers
# with the contents of $T/answer; a notice (SSH_ASKPASS_PROMPT=none) stays
# up for $NOTICE_SLEEP seconds unless killed, as a real one would.
askpass=$T/askpass.sh
cat >"$askpass" <<EOF
#!/bin/sh
printf '%s|%s\n' "\$1" "\${SSH_ASKPASS_PROMPT-unset}" >>"\${ASKPASS_LOG:-$T/askpass.log}"
[ "\${SSH_ASKPASS_PROMPT-}" = none ] && exec sleep "\${NOTICE_SLEEP:-0}"
cat "$T/answer"
EOF
chmod 755 "$askpass"
answer() { printf '%s\n' "$1" >"$T/answer"; }
answer "$PIN"

K=$T/k
mkdir -p "$K/c" "$K/o"
# sk NAME TYPE [-O ...]: a key made by Debian's ssh-keygen with the provider.
sk() {
    local name=$1 type=$2
    shift 2
    env LH_SK_TEST_PIN=$PIN SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=:99 ASKPASS_LOG=$T/keygen.log \
        "$LH_SSH_KEYGEN" -q -t "$type" -w "$PROVIDER" -C "$name@sk-agent" "$@" -f "$K/$name" </dev/null ||
        lh_fail "Debian's ssh-keygen could not make a $type key with $PROVIDER"
}
sk ed ed25519-sk -N ''
sk ec ecdsa-sk -N ''
sk vr ed25519-sk -N '' -O verify-required
sk enc ecdsa-sk -N 'sk passphrase'
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C "plain@sk-agent" -f "$K/plain"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C "sk agent CA" -f "$T/ca"
# Certificates beside copies of the keys: c/ed-cert.pub, c/ec-cert.pub.
for k in ed ec; do
    cp "$K/$k" "$K/$k.pub" "$K/c/"
    "$LH_SSH_KEYGEN" -q -s "$T/ca" -I "${k}cert" -n "$user" -z 7 "$K/c/$k.pub" || lh_fail "ssh-keygen -s failed"
done
# A web-origin key: OpenSSH's ssh-keygen insists on "ssh:", so ed's file
# is rewritten with the application https://example.com (the test
# provider's key handle holds the key; it signs for any application).
python3 - "$K/ed" "$K/web" "https://example.com" <<'EOF' || lh_fail "could not write the web-origin key"
import base64, struct, sys
src, dst, app = sys.argv[1], sys.argv[2], sys.argv[3].encode()
text = open(src).read().split("\n")
body = base64.b64decode("".join(l for l in text if l and not l.startswith("-----")))
magic = b"openssh-key-v1\0"
assert body.startswith(magic)
p = len(magic)
def rd(b, p):
    n = struct.unpack(">I", b[p:p + 4])[0]
    return b[p + 4:p + 4 + n], p + 4 + n
def st(x):
    return struct.pack(">I", len(x)) + x
cipher, p = rd(body, p); kdf, p = rd(body, p); kdfo, p = rd(body, p)
assert cipher == b"none"
nkeys = body[p:p + 4]; p += 4
pub, p = rd(body, p); priv, p = rd(body, p)
t, q = rd(pub, 0); pk, q = rd(pub, q)
newpub = st(t) + st(pk) + st(app)
q = 8
t2, q = rd(priv, q); pk2, q = rd(priv, q); _, q = rd(priv, q)
flags = priv[q:q + 1]; q += 1
kh, q = rd(priv, q); res, q = rd(priv, q); comment, q = rd(priv, q)
rec = priv[:8] + st(t2) + st(pk2) + st(app) + flags + st(kh) + st(res) + st(b"web@sk-agent")
i = 1
while len(rec) % 8:
    rec += bytes([i]); i += 1
out = magic + st(cipher) + st(kdf) + st(kdfo) + nkeys + st(newpub) + st(rec)
b64 = base64.b64encode(out).decode()
with open(dst, "w") as f:
    f.write("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    for i in range(0, len(b64), 70):
        f.write(b64[i:i + 70] + "\n")
    f.write("-----END OPENSSH PRIVATE KEY-----\n")
with open(dst + ".pub", "w") as f:
    f.write(t.decode() + " " + base64.b64encode(newpub).decode() + " web@sk-agent\n")
EOF
# A provider outside the agents' -P list.
cp "$PROVIDER" "$K/o/outside.so"
chmod 600 "$K"/ed "$K"/ec "$K"/vr "$K"/enc "$K"/plain "$K"/web "$K"/c/ed "$K"/c/ec "$T/ca"
chmod 644 "$K"/*.pub "$K"/c/*.pub
chmod 711 "$K" "$K/c" "$K/o"

fp() { "$LH_SSH_KEYGEN" -l -f "$1" | cut -d' ' -f2; }
fp_ed=$(fp "$K/ed.pub")
fp_vr=$(fp "$K/vr.pub")

# ---------------------------------------------------------------- agents
# agent NAME SIDE [env VAR=VALUE...] -- [ssh-agent options]: ssh-agent -d
# (debug, foreground, log on stderr) on $T/NAME.sock, log $T/NAME.log.
agent() {
    local name=$1 side=$2 bin envs=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    shift
    if [ "$side" = debian ]; then bin=$DEBIAN_BIN/ssh-agent; else bin=$LH_BIN/ssh-agent; fi
    rm -f "$T/$name.sock"
    (cd "$T" && exec env "${envs[@]}" "$bin" -d -a "$T/$name.sock" "$@" >"$T/$name.log" 2>&1) &
    LH_PIDS+=($!)
    lh_wait_until 5 test -S "$T/$name.sock" || echo "  note: $side ssh-agent ($name) did not start: $(head -c 300 "$T/$name.log")" >&2
}
for side in debian longhaul; do
    agent "main-$side" "$side" -- -P "$ALLOWED"
    agent "nows-$side" "$side" -- -P "$ALLOWED" -O no-restrict-websafe
    # The authenticator takes 300 ms, as a touch would: the notice has time to show.
    agent "ui-$side" "$side" DISPLAY=:99 SSH_ASKPASS=$askpass LH_SK_TEST_PIN=$PIN LH_SK_TEST_SIGN_DELAY_MS=300 \
        ASKPASS_LOG=$T/ui-$side.askpass NOTICE_SLEEP=8 \
        -- -P "$ALLOWED"
done
add_bin() { if [ "$1" = debian ]; then echo "$DEBIAN_BIN/ssh-add"; else echo "$LH_BIN/ssh-add"; fi; }

# ---------------------------------------------------------------- a, b
# session ADDER AGENT: the ssh-add session, run in $K (the names as
# given appear in the output), as a transcript in $T/session.ADDER.AGENT:
# each command, its stdout, its stderr, its status.
# run COMMAND...: one step of a transcript, with the caller's $bin (shown
# as ssh-add), $sock and $out.
run() {
    local rc=0
    {
        echo "\$ ${*//$bin/ssh-add}"
        (cd "$K" && exec env SSH_AUTH_SOCK="$sock" "$@" </dev/null >"$T/o" 2>"$T/e") || rc=$?
        sed 's/^/out: /' "$T/o"
        sed 's/^/err: /' "$T/e"
        echo "rc=$rc"
    } >>"$out"
}
session() {
    local adder=$1 sock=$T/main-$2.sock out=$T/session.$1.$2 bin
    bin=$(add_bin "$adder")
    : >"$out"
    run "$bin" -D
    run "$bin" -S "$PROVIDER" ed
    run "$bin" -S "$PROVIDER" -t 600 ec
    run "$bin" -S "$PROVIDER" c/ed
    run "$bin" -S "$PROVIDER" c/ec
    run "$bin" -l
    run "$bin" -E md5 -l
    run "$bin" -L
    run "$bin" -T ed.pub ec.pub c/ed-cert.pub c/ec-cert.pub
    run "$bin" -T vr.pub
    run "$bin" -d ec
    run "$bin" -d ec
    run "$bin" -k -d c/ed
    run "$bin" -l
    run "$bin" -d c/ed
    run "$bin" -l
    run "$bin" -D
    run "$bin" -l
    # The provider: $SSH_SK_PROVIDER (set, empty), "internal", missing,
    # outside -P; a plain key with -S (not sent).
    run env SSH_SK_PROVIDER="$PROVIDER" "$bin" ed
    run "$bin" -T ed.pub
    run env SSH_SK_PROVIDER="/nonexistent/provider.so" "$bin" -S "$PROVIDER" ec
    run "$bin" -T ec.pub
    run env SSH_SK_PROVIDER= "$bin" vr
    run "$bin" -S /nonexistent/provider.so vr
    run "$bin" -S "$K/o/outside.so" vr
    run "$bin" vr
    run "$bin" -T vr.pub
    run "$bin" -l
    run "$bin" -S "$PROVIDER" plain
    run "$bin" -T plain.pub
    # An encrypted sk key: the passphrase through askpass.
    answer 'sk passphrase'
    run env SSH_ASKPASS="$askpass" SSH_ASKPASS_REQUIRE=force DISPLAY=:99 "$bin" -S "$PROVIDER" enc
    answer "$PIN"
    run "$bin" -T enc.pub
    run "$bin" -c -t 1h -S "$PROVIDER" ed
    run "$bin" -L
    run "$bin" -D
}
for agent_side in debian longhaul; do
    for adder in debian longhaul; do
        session "$adder" "$agent_side"
    done
done
# The transcripts differ only where they should not.
same_transcript() {
    if ! cmp -s "$T/session.$1" "$T/session.$2"; then
        echo "  transcripts differ (- $1, + $2):"
        diff "$T/session.$1" "$T/session.$2" | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/' | head -n 40
        return 1
    fi
}
debian_session_sane() {
    local f=$T/session.debian.debian ok=0 l
    for l in "err: Identity added: ed (ed@sk-agent)" \
        "err: Certificate added: c/ed-cert.pub (edcert)" \
        "err: Certificate added: c/ec-cert.pub (eccert)" \
        "out: 256 $fp_ed ed@sk-agent (ED25519-SK-CERT)" \
        "err: Identity removed: ec ECDSA-SK (ec@sk-agent)" \
        "err: Could not add identity \"vr\": agent refused operation"; do
        grep -qxF -- "$l" "$f" || { echo "  Debian's session lacks: $l"; ok=1; }
    done
    [ "$ok" = 0 ] || sed 's/^/    /' "$f" | head -n 120
    return "$ok"
}
lh_check "a. debian ssh-add + debian ssh-agent: the sk session says what OpenSSH 9.2 says" debian_session_sane
lh_check "a. longhaul ssh-add = debian ssh-add, on debian's ssh-agent" same_transcript debian.debian longhaul.debian
lh_check "a. longhaul ssh-agent = debian ssh-agent, with debian's ssh-add" same_transcript debian.debian debian.longhaul
lh_check "a. longhaul ssh-add + longhaul ssh-agent = debian's pair" same_transcript debian.debian longhaul.longhaul

# a. No files: the default identities (id_ecdsa_sk and id_ed25519_sk among
# them, in OpenSSH's order), from the test user's home (ssh-add takes it
# from the password database), into an agent running as that user.
defaults() {
    local home side adder ok=0 U=$T/u
    home=$(getent passwd "$user" | cut -d: -f6)
    mkdir -p "$U" "$home/.ssh"
    cp "$K/ed" "$home/.ssh/id_ed25519_sk"
    cp "$K/ec" "$home/.ssh/id_ecdsa_sk"
    cp "$K/plain" "$home/.ssh/id_ed25519"
    cp "$K/c/ec-cert.pub" "$home/.ssh/id_ecdsa_sk-cert.pub"
    chown -R "$user" "$U" "$home/.ssh"
    chmod 700 "$U" "$home/.ssh"
    for side in debian longhaul; do
        runuser -u "$user" -- "$(if [ $side = debian ]; then echo "$DEBIAN_BIN"; else echo "$LH_BIN"; fi)/ssh-agent" \
            -d -a "$U/$side.sock" -P "$ALLOWED" >"$T/u-$side.log" 2>&1 &
        LH_PIDS+=($!)
        lh_wait_until 5 test -S "$U/$side.sock" || { echo "  $side agent as $user did not start"; ok=1; }
        for adder in debian longhaul; do
            {
                (cd "$U" && runuser -u "$user" -- env SSH_AUTH_SOCK="$U/$side.sock" "$(add_bin "$adder")" \
                    -S "$PROVIDER" </dev/null 2>&1) && echo "rc=0" || echo "rc=$?"
                runuser -u "$user" -- env SSH_AUTH_SOCK="$U/$side.sock" "$(add_bin "$adder")" -l </dev/null 2>&1
                runuser -u "$user" -- env SSH_AUTH_SOCK="$U/$side.sock" "$(add_bin "$adder")" -D </dev/null 2>&1
            } | sed "s|$home|HOME|g" >"$T/defaults.$adder.$side"
        done
    done
    if ! grep -qxF "Identity added: HOME/.ssh/id_ecdsa_sk (ec@sk-agent)" "$T/defaults.debian.debian" ||
        ! grep -qxF "Certificate added: HOME/.ssh/id_ecdsa_sk-cert.pub (eccert)" "$T/defaults.debian.debian"; then
        echo "  Debian's pair did not add the default sk keys:"
        sed 's/^/    /' "$T/defaults.debian.debian"
        ok=1
    fi
    for pair in longhaul.debian debian.longhaul longhaul.longhaul; do
        if ! cmp -s "$T/defaults.debian.debian" "$T/defaults.$pair"; then
            echo "  $pair differs from debian.debian (- debian, + $pair):"
            diff "$T/defaults.debian.debian" "$T/defaults.$pair" | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/'
            ok=1
        fi
    done
    return "$ok"
}
if [ "$(id -u)" = 0 ]; then
    lh_check "a. ssh-add with no file: the default identities (sk ones included, in OpenSSH's order), all four pairings" defaults
else
    lh_skip_check "a. ssh-add with no file: the default identities" "needs root (a test user's home)"
fi

# b. The agents' refusals, in their logs (each agent saw both adders).
agent_log_has() {
    local log=$T/$1.log
    shift
    local l ok=0
    for l in "$@"; do
        tr -d '\r' <"$log" | lh_matches -xF -- "$l" || { echo "  $log lacks: $l"; ok=1; }
    done
    [ "$ok" = 0 ] || { echo "  its last lines:"; tail -n 15 "$log" | sed 's/^/    /'; }
    return "$ok"
}
for side in debian longhaul; do
    lh_check "b. $side ssh-agent: a provider outside -P refused, a missing one and an empty one too" \
        agent_log_has "main-$side" \
        "Refusing add key: provider $K/o/outside.so not allowed" \
        'failed provider "/nonexistent/provider.so": realpath: No such file or directory' \
        'failed provider "": realpath: No such file or directory'
done

# ---------------------------------------------------------------- c
# Servers: Debian's and Longhaul's sshd, the sk keys and the CA authorized.
lh_make_host_keys "$T"
AK=$T/authorized_keys
{
    cut -d' ' -f1,2 "$K/ed.pub"
    cut -d' ' -f1,2 "$K/ec.pub"
    echo "cert-authority,principals=\"$user\" $(cut -d' ' -f1,2 "$T/ca.pub")"
} >"$AK"
chmod 644 "$AK"
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for side in debian longhaul; do
    dir=$T/sshd-$side
    mkdir -p "$dir" && chmod 711 "$dir"
    cp "$T"/ssh_host_* "$dir/"
    lh_port p
    printf -v "port_$side" %s "$p"
    lh_write_sshd_config "$dir" "$p" "AuthorizedKeysFile $AK"
    lh_known_hosts "$dir" "$p"
    [ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 0755 /run/sshd; }
    if [ "$side" = debian ]; then s=$DEBIAN_SSHD; else s=$LH_BIN/sshd; fi
    "$s" -D -e -f "$dir/sshd_config" 2>"$dir/sshd.log" &
    LH_PIDS+=($!)
    lh_wait_until 10 accepts "$p" || echo "  note: $side sshd did not start: $(head -c 300 "$dir/sshd.log")" >&2
done
# Longhaul's ssh-add puts the keys into the agent (Longhaul's; Debian's
# as the control).
for side in debian longhaul; do
    agent "login-$side" "$side" -- -P "$ALLOWED"
    (cd "$K" && SSH_AUTH_SOCK=$T/login-$side.sock "$LH_BIN/ssh-add" -S "$PROVIDER" ed ec c/ec </dev/null \
        >"$T/login-add-$side.log" 2>&1) || true
done
# login AGENT CLIENT SERVER [ssh options]: one login with the agent's keys.
login() {
    local agent_side=$1 client=$2 server=$3 port_var=port_$3 bin
    shift 3
    if [ "$client" = debian ]; then bin=$DEBIAN_BIN/ssh; else bin=$LH_BIN/ssh; fi
    "$bin" -F /dev/null -p "${!port_var}" -o "UserKnownHostsFile=$T/sshd-$server/known_hosts.${!port_var}" \
        -o StrictHostKeyChecking=yes -o BatchMode=yes -o "IdentityAgent=$T/login-$agent_side.sock" \
        -o ConnectTimeout=10 -o SecurityKeyProvider=/nonexistent/provider.so "$@" "$user@127.0.0.1" \
        'echo sk-agent-login-ok' </dev/null >"$T/login.out" 2>&1
    grep -qx sk-agent-login-ok "$T/login.out" ||
        { echo "  $client ssh -> $server sshd ($*): $(tail -n 2 "$T/login.out")"; return 1; }
}
logins() {
    local ok=0 c s a=$1
    shift
    for c in debian longhaul; do
        for s in debian longhaul; do
            login "$a" "$c" "$s" "$@" || ok=1
        done
    done
    return "$ok"
}
cert_accepted() {
    tail -n +"$2" "$T/sshd-$1/sshd.log" | tr -d '\r' |
        lh_matches -E "Accepted publickey for $user from 127\.0\.0\.1 port [0-9]+ ssh2: ECDSA-SK-CERT SHA256:[^ ]+ ID eccert \(serial 7\) CA ED25519 "
}
for side in debian longhaul; do
    lh_check "c. ssh (debian, longhaul) -> sshd (debian, longhaul): ed25519-sk in $side's agent, IdentitiesOnly + ed.pub" \
        logins "$side" -o IdentitiesOnly=yes -o "IdentityFile=$K/ed.pub"
    lh_check "c. ... ecdsa-sk in $side's agent, IdentitiesOnly + ec.pub" \
        logins "$side" -o IdentitiesOnly=yes -o "IdentityFile=$K/ec.pub"
    # The certificate alone: the plain keys removed (-k: not the cert).
    (cd "$K" && SSH_AUTH_SOCK=$T/login-$side.sock "$LH_BIN/ssh-add" -k -d ed ec </dev/null \
        >>"$T/login-add-$side.log" 2>&1) || true
    for s in debian longhaul; do
        printf -v "from_$s" %s "$(($(wc -l <"$T/sshd-$s/sshd.log") + 1))"
    done
    lh_check "c. ... an ecdsa-sk certificate alone in $side's agent, no IdentityFile" \
        logins "$side" -o IdentitiesOnly=no -o "IdentityFile=$T/nonexistent"
    for s in debian longhaul; do
        from_var=from_$s
        lh_check "c. $s sshd logged the ECDSA-SK-CERT login ($side's agent)" cert_accepted "$s" "${!from_var}"
    done
done

# ---------------------------------------------------------------- d
# websafe ADDER AGENT-SIDE: the web key added to the default and to the
# -O no-restrict-websafe agent; -T refused by the first, signed by the second.
websafe() {
    local side=$1 bin ok=0 rc
    bin=$LH_BIN/ssh-add
    for a in main nows; do
        (cd "$K" && SSH_AUTH_SOCK=$T/$a-$side.sock "$bin" -S "$PROVIDER" web </dev/null >"$T/o" 2>&1) ||
            { echo "  $a-$side: add failed: $(cat "$T/o")"; ok=1; }
    done
    rc=0
    (cd "$K" && SSH_AUTH_SOCK=$T/main-$side.sock "$bin" -T web.pub </dev/null >"$T/o" 2>&1) || rc=$?
    if [ "$rc" != 1 ] || [ "$(tr -d '\r' <"$T/o")" != "Agent signature failed for web.pub: agent refused operation" ]; then
        echo "  default agent: -T web.pub rc=$rc: $(cat "$T/o")"
        ok=1
    fi
    agent_log_has "main-$side" "web-origin key attempting to sign non-SSH message" || ok=1
    rc=0
    (cd "$K" && SSH_AUTH_SOCK=$T/nows-$side.sock "$bin" -T web.pub </dev/null >"$T/o" 2>&1) || rc=$?
    [ "$rc" = 0 ] && [ ! -s "$T/o" ] || { echo "  -O no-restrict-websafe agent: -T web.pub rc=$rc: $(cat "$T/o")"; ok=1; }
    # "ssh:" keys are not restricted.
    (cd "$K" && SSH_AUTH_SOCK=$T/main-$side.sock "$bin" -S "$PROVIDER" ed </dev/null >"$T/o" 2>&1 &&
        SSH_AUTH_SOCK=$T/main-$side.sock "$bin" -T ed.pub </dev/null >"$T/o" 2>&1) ||
        { echo "  default agent: -T ed.pub: $(cat "$T/o")"; ok=1; }
    return "$ok"
}
lh_check "d. debian ssh-agent: a web-origin key signs no random data unless -O no-restrict-websafe" websafe debian
lh_check "d. longhaul ssh-agent: a web-origin key signs no random data unless -O no-restrict-websafe" websafe longhaul

# ---------------------------------------------------------------- e, f
# ui SIDE: in the agent with DISPLAY, SSH_ASKPASS and LH_SK_TEST_PIN: the
# touch notice for ed (tried until the askpass logged it: the agent kills
# the notice as soon as it has signed), then vr with the right PIN and with
# a wrong one. $T/ui.SIDE: the prompts and outcomes, for comparison.
ui() {
    local side=$1 sock=$T/ui-$1.sock log=$T/ui-$1.askpass bin=$LH_BIN/ssh-add i rc out=$T/ui.$1
    : >"$out"
    (cd "$K" && SSH_AUTH_SOCK=$sock "$bin" -S "$PROVIDER" ed vr </dev/null >"$T/o" 2>&1) ||
        { echo "  add failed: $(cat "$T/o")"; return 1; }
    local t0 took slowest=0
    for i in 1 2 3 4 5; do
        t0=$EPOCHREALTIME
        (cd "$K" && SSH_AUTH_SOCK=$sock "$bin" -T ed.pub </dev/null >>"$out" 2>&1) || echo "ed rc=$?" >>"$out"
        took=$(lh_seconds_since "$t0")
        [ "${took%.*}" -le "$slowest" ] || slowest=${took%.*}
        grep -q '^Confirm user presence' "$log" 2>/dev/null && break
        sleep 0.2
    done
    # The notice is closed when the signature is made (OpenSSH's
    # notify_complete kills it): the reply does not wait for it.
    printf -v "notice_wait_$side" %s "$slowest"
    grep '^Confirm user presence' "$log" | sort -u >>"$out" || true
    : >"$log"
    answer "$PIN"
    rc=0
    (cd "$K" && SSH_AUTH_SOCK=$sock "$bin" -T vr.pub </dev/null >>"$out" 2>&1) || rc=$?
    echo "right PIN: rc=$rc" >>"$out"
    grep '^Enter PIN' "$log" >>"$out" || true
    : >"$log"
    answer 1111
    rc=0
    (cd "$K" && SSH_AUTH_SOCK=$sock "$bin" -T vr.pub </dev/null >>"$out" 2>&1) || rc=$?
    echo "wrong PIN: rc=$rc" >>"$out"
    grep '^Enter PIN' "$log" >>"$out" || true
    answer "$PIN"
}
ui debian || true
ui longhaul || true
ui_debian() {
    local ok=0 l
    for l in "Confirm user presence for key ED25519-SK $fp_ed|none" \
        "right PIN: rc=0" "wrong PIN: rc=1" \
        "Enter PIN and confirm user presence for ED25519-SK key $fp_vr: |unset" \
        "Agent signature failed for vr.pub: agent refused operation"; do
        grep -qxF -- "$l" <(tr -d '\r' <"$T/ui.debian") || { echo "  lacks: $l"; ok=1; }
    done
    [ "$ok" = 0 ] || sed 's/^/    /' "$T/ui.debian"
    return "$ok"
}
lh_check "e, f. debian ssh-agent: the touch notice and the PIN prompt through askpass, right and wrong PIN" ui_debian
same_ui() {
    cmp -s "$T/ui.debian" "$T/ui.longhaul" && return 0
    echo "  differ (- debian, + longhaul):"
    diff "$T/ui.debian" "$T/ui.longhaul" | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/'
    return 1
}
lh_check "e, f. longhaul ssh-agent: the same notice, prompts and outcomes as debian's" same_ui
notice_closed() {
    local v=notice_wait_$1
    [ "${!v}" -lt 4 ] || { echo "  ssh-add -T took ${!v} s: the agent waited for the notice (askpass up for 8 s) to exit"; return 1; }
}
for side in debian longhaul; do
    lh_check "e. $side ssh-agent: the notice is closed once signed (no wait for the askpass)" notice_closed "$side"
done

# LH_SK_AGENT_SAVE=DIR: the transcripts and agent logs, kept for reading.
if [ -n "${LH_SK_AGENT_SAVE:-}" ]; then
    mkdir -p "$LH_SK_AGENT_SAVE"
    cp "$T"/session.* "$T"/defaults.* "$T"/ui.* "$T"/*.log "$LH_SK_AGENT_SAVE/" 2>/dev/null || true
fi
# ---------------------------------------------------------------- g
export LH_SK_TEST_RESIDENT_DIR=$T/rk-store
mkdir -p "$T/rk-store" "$T/rk-empty"
answer "$PIN"
sk rk1 ed25519-sk -N '' -O resident
sk rk2 ecdsa-sk -N '' -O resident -O user=alice -O application=ssh:work
sk rk3 ed25519-sk -N '' -O resident -O verify-required -O user=bob
# resident_session ADDER AGENT: ssh-add -K's transcript in $T/session.rk.ADDER.AGENT.
resident_session() {
    local adder=$1 sock=$T/main-$2.sock out=$T/session.rk.$1.$2 bin
    bin=$(add_bin "$adder")
    local ask=(SSH_ASKPASS="$askpass" SSH_ASKPASS_REQUIRE=force DISPLAY=:99)
    : >"$out"
    run "$bin" -D
    run "$bin" -K -S "$PROVIDER"
    run "$bin" -l
    run "$bin" -L
    run "$bin" -D
    run "$bin" -K -d -t 60 -c -S "$PROVIDER" ignored-file
    run "$bin" -E md5 -l
    run "$bin" -D
    run "$bin" -q -K -S "$PROVIDER"
    run "$bin" -l
    run env SSH_SK_PROVIDER="$PROVIDER" "$bin" -K
    run "$bin" -D
    answer "$PIN"
    run env LH_SK_TEST_PIN="$PIN" "${ask[@]}" "$bin" -K -S "$PROVIDER"
    answer 1111
    run env LH_SK_TEST_PIN="$PIN" "${ask[@]}" "$bin" -K -S "$PROVIDER"
    answer "$PIN"
    run "$bin" -D
    run env LH_SK_TEST_RESIDENT_DIR="$T/rk-empty" "$bin" -K -S "$PROVIDER"
    run "$bin" -K -S /nonexistent/provider.so
    run "$bin" -K -S "$K/o/outside.so"
    run "$bin" -l
}
for agent_side in debian longhaul; do
    for adder in debian longhaul; do
        resident_session "$adder" "$agent_side"
    done
done
debian_resident_sane() {
    local f=$T/session.rk.debian.debian ok=0 l
    for l in "err: Resident identity added: ED25519-SK $(fp "$K/rk3.pub")" \
        "err: Resident identity added: ECDSA-SK $(fp "$K/rk2.pub")" \
        "err: Lifetime set to 60 seconds" \
        "err: Unable to load resident keys: incorrect passphrase supplied to decrypt private key" \
        "out: 256 $(fp "$K/rk2.pub")  (ECDSA-SK)"; do
        tr -d '\r' <"$f" | lh_matches -xF -- "$l" || { echo "  Debian's -K session lacks: $l"; ok=1; }
    done
    [ "$ok" = 0 ] || sed 's/^/    /' "$f" | head -n 120
    return "$ok"
}
lh_check "g. debian ssh-add -K + debian ssh-agent: resident keys as OpenSSH 9.2 adds them" debian_resident_sane
lh_check "g. longhaul ssh-add -K = debian's, on debian's ssh-agent" same_transcript rk.debian.debian rk.longhaul.debian
lh_check "g. debian ssh-add -K on longhaul's ssh-agent = on debian's" same_transcript rk.debian.debian rk.debian.longhaul
lh_check "g. longhaul ssh-add -K + longhaul ssh-agent = debian's pair" same_transcript rk.debian.debian rk.longhaul.longhaul
internal_refused() {
    local rc=0
    env SSH_AUTH_SOCK="$T/main-longhaul.sock" "$LH_BIN/ssh-add" -K </dev/null >"$T/o" 2>"$T/e" || rc=$?
    [ "$rc" = 1 ] && grep -q 'Unable to load resident keys: .*"internal".* not supported yet' "$T/e" || {
        echo "  rc=$rc: $(cat "$T/e")"
        return 1
    }
}
lh_check "g. ssh-add -K with the built-in provider: not supported yet, exit 1" internal_refused
cut -d' ' -f1,2 "$K/rk2.pub" >>"$AK"
for side in debian longhaul; do
    agent "login-rk-$side" "$side" -- -P "$ALLOWED"
    SSH_AUTH_SOCK=$T/login-rk-$side.sock "$LH_BIN/ssh-add" -K -S "$PROVIDER" </dev/null >"$T/rk-add-$side.log" 2>&1 || true
    lh_check "g. ssh (debian, longhaul) -> sshd (debian, longhaul): a resident ecdsa-sk key longhaul's ssh-add -K put in $side's agent" \
        logins "rk-$side" -o IdentitiesOnly=yes -o "IdentityFile=$K/rk2.pub"
done
unset LH_SK_TEST_RESIDENT_DIR

lh_summary
