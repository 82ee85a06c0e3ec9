#!/usr/bin/env bash
# ssh-keygen -Y (SSHSIG, git's SSH commit signing) beside Debian's: both
# programs run the same commands on the same inputs and must print the
# same standard output, standard error and status. Signatures by Ed25519
# and RSA keys are deterministic, so ours must be byte-identical to
# Debian's (key files, certificates, standard input, sha256, an agent's
# key with -U); ECDSA signatures are checked across (each verifies the
# other's). verify, check-novalidate, find-principals and match-principals
# run against allowed_signers files with patterns, namespaces=, validity,
# cert-authority lines, malformed lines and a KRL (-r). Last, git itself
# signs and verifies a commit with our ssh-keygen, if git is installed.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
OURS=$BUILD/bin/ssh-keygen
THEIRS=$LH_SSH_KEYGEN
[ -x "$OURS" ] || lh_fail "ssh-keygen not built ($OURS)"
[ -x "$THEIRS" ] || lh_skip "OpenSSH ssh-keygen not found at $THEIRS (openssh-client)"
export TZ=UTC
unset SSH_AUTH_SOCK

T=$LH_TMP
cd "$T"
mkdir theirs ours
# same NAME STDIN ARGS...: each program runs ARGS in its own directory
# (theirs/, ours/: a signature written next to a file stays apart) with
# STDIN as standard input; output, errors and status compared.
same() {
    local name=$1 input=$2 side prog
    shift 2
    for side in theirs ours; do
        prog=$THEIRS
        [ "$side" = ours ] && prog=$OURS
        (set +e; cd "$side" && "$prog" "$@" <"$T/$input" >"../$side.$name.out" 2>"../$side.$name.err"; echo "status $?" >>"../$side.$name.out")
        # "verify time" is the clock when each ran: the two runs may straddle
        # a second.
        sed -i -E 's/verify time [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}/verify time (now)/' \
            "$side.$name.out" "$side.$name.err"
    done
    LH_CHECKS=$((LH_CHECKS + 1))
    if cmp -s "theirs.$name.out" "ours.$name.out" && cmp -s "theirs.$name.err" "ours.$name.err"; then
        echo "ok: $name"
    else
        echo "FAIL: $name differs" >&2
        diff "theirs.$name.out" "ours.$name.out" >&2
        diff "theirs.$name.err" "ours.$name.err" >&2
        LH_FAILED=$((LH_FAILED + 1))
    fi
}
# identical NAME FILE: the file each side wrote must be the same bytes.
identical() {
    LH_CHECKS=$((LH_CHECKS + 1))
    if cmp -s "theirs/$2" "ours/$2"; then
        echo "ok: $1"
    else
        echo "FAIL: $1: theirs/$2 and ours/$2 differ" >&2
        LH_FAILED=$((LH_FAILED + 1))
    fi
}

kg() { "$THEIRS" -q "$@"; }
kg -t ed25519 -N '' -C ed -f "$T/k_ed"
kg -t rsa -b 2048 -N '' -C rsa -f "$T/k_rsa"
kg -t ecdsa -b 256 -N '' -C ec -f "$T/k_ec"
kg -t ed25519 -N '' -C ca -f "$T/ca"
kg -t ed25519 -N '' -C other -f "$T/other"
kg -s "$T/ca" -I "alice cert" -n alice,bob -V 20200101:20400101 -z 9 "$T/k_ed.pub"
# The same key with a certificate that expired long ago.
cp "$T/k_ed" "$T/k_old" && cp "$T/k_ed.pub" "$T/k_old.pub"
kg -s "$T/ca" -I "old cert" -n alice -V 20000101:20010101 -z 10 "$T/k_old.pub"
printf 'tree 0123\nauthor A U Thor\n\nA commit message.\n' >msg
cp msg theirs/msg && cp msg ours/msg
: >empty
printf 'tampered\n' >tampered

# --- Signing ------------------------------------------------------------------
same sign_ed empty -Y sign -n git -f "$T/k_ed" msg
identical sig_ed msg.sig
same sign_ed_overwrite_refused empty -Y sign -n git -f "$T/k_ed" msg
cp theirs/msg.sig "$T/ed.sig"
rm -f theirs/msg.sig ours/msg.sig
same sign_rsa empty -Y sign -n git -f "$T/k_rsa" msg
identical sig_rsa msg.sig
cp theirs/msg.sig "$T/rsa.sig"
rm -f theirs/msg.sig ours/msg.sig
same sign_sha256_pub empty -Y sign -n file -O hashalg=sha256 -f "$T/k_ed.pub" msg
identical sig_sha256 msg.sig
rm -f theirs/msg.sig ours/msg.sig
same sign_cert empty -Y sign -n git -f "$T/k_ed-cert.pub" msg
identical sig_cert msg.sig
cp theirs/msg.sig "$T/cert.sig"
rm -f theirs/msg.sig ours/msg.sig
same sign_old_cert empty -Y sign -n git -f "$T/k_old-cert.pub" msg
cp theirs/msg.sig "$T/old.sig"
rm -f theirs/msg.sig ours/msg.sig
same sign_stdin msg -Y sign -n git -f "$T/k_ed"
same sign_quiet empty -q -Y sign -n git -f "$T/k_ed" msg
rm -f theirs/msg.sig ours/msg.sig
# ECDSA signatures differ each time: each side's must verify with the other.
(cd theirs && "$THEIRS" -q -Y sign -n git -f "$T/k_ec" msg) && mv theirs/msg.sig "$T/ec_theirs.sig"
(cd ours && "$OURS" -q -Y sign -n git -f "$T/k_ec" msg) && mv ours/msg.sig "$T/ec_ours.sig"
same sign_bad_hash empty -Y sign -n git -O hashalg=md5 -f "$T/k_ed" msg
same sign_bad_option empty -Y sign -n git -O verify-time=20200101 -f "$T/k_ed" msg
same sign_no_key empty -Y sign -n git -f "$T/nonexistent" msg
same sign_no_file empty -Y sign -n git -f "$T/k_ed" nonexistent
same sign_mixed_stdin empty -Y sign -n git -f "$T/k_ed" - msg
same sign_no_namespace empty -Y sign -f "$T/k_ed" msg
same sign_no_key_arg empty -Y sign -n git msg
rm -f theirs/msg.sig ours/msg.sig

# -U and an agent holding the key (Debian's ssh-agent).
if command -v ssh-agent >/dev/null && command -v ssh-add >/dev/null; then
    eval "$(ssh-agent -s -a "$T/agent.sock")" >/dev/null
    LH_PIDS+=("$SSH_AGENT_PID")
    same sign_agent_missing empty -Y sign -U -n git -f "$T/k_ed.pub" msg
    ssh-add -q "$T/k_ed" 2>/dev/null
    mv "$T/k_ed" "$T/k_ed.away" # only the agent can sign now
    same sign_agent empty -Y sign -U -n git -f "$T/k_ed.pub" msg
    identical sig_agent msg.sig
    rm -f theirs/msg.sig ours/msg.sig
    same sign_agent_without_U empty -Y sign -n git -f "$T/k_ed.pub" msg
    identical sig_agent_without_U msg.sig
    rm -f theirs/msg.sig ours/msg.sig
    mv "$T/k_ed.away" "$T/k_ed"
    kill "$SSH_AGENT_PID"
    unset SSH_AUTH_SOCK SSH_AGENT_PID
    same sign_agent_absent empty -Y sign -U -n git -f "$T/k_ed.pub" msg
    rm -f theirs/msg.sig ours/msg.sig
else
    lh_skip_check "ssh-keygen -Y sign -U" "OpenSSH's ssh-agent and ssh-add not found"
fi

# --- Verifying ----------------------------------------------------------------
key() { cut -d' ' -f1,2 "$T/$1.pub"; }
{
    echo "# git signers"
    echo "alice@example.com,!mallory@example.com $(key k_ed)"
    echo "*@rsa.example namespaces=\"git,file\" $(key k_rsa)"
    echo "\"quoted name\" $(key k_ec)"
    echo "alice,b* cert-authority,namespaces=\"git\" $(key ca)"
    echo "expired@example.com valid-before=\"20100101\" $(key k_ed)"
    echo "future@example.com valid-after=\"20990101Z\" $(key k_ed)"
    echo "broken frobnicate $(key other)"
} >allowed
cp allowed theirs/allowed && cp allowed ours/allowed
same verify_ed msg -Y verify -n git -f allowed -I alice@example.com -s "$T/ed.sig"
same verify_ed_mallory msg -Y verify -n git -f allowed -I mallory@example.com -s "$T/ed.sig"
same verify_ed_wrong_ns msg -Y verify -n file -f allowed -I alice@example.com -s "$T/ed.sig"
same verify_ed_tampered tampered -Y verify -n git -f allowed -I alice@example.com -s "$T/ed.sig"
same verify_ed_expired msg -Y verify -n git -f allowed -I expired@example.com -s "$T/ed.sig"
same verify_ed_future msg -Y verify -n git -f allowed -I future@example.com -s "$T/ed.sig"
same verify_ed_verify_time msg -Y verify -n git -f allowed -I expired@example.com -s "$T/ed.sig" -O verify-time=20050101
same verify_ed_pubkey msg -Y verify -n git -f allowed -I alice@example.com -s "$T/ed.sig" -O print-pubkey
same verify_ed_bad_time msg -Y verify -n git -f allowed -I alice@example.com -s "$T/ed.sig" -O verify-time=2020
same verify_ed_quiet msg -q -Y verify -n git -f allowed -I alice@example.com -s "$T/ed.sig"
same verify_rsa msg -Y verify -n git -f allowed -I dev@rsa.example -s "$T/rsa.sig"
same verify_ec_theirs msg -Y verify -n git -f allowed -I "quoted name" -s "$T/ec_theirs.sig"
same verify_ec_ours msg -Y verify -n git -f allowed -I "quoted name" -s "$T/ec_ours.sig"
same verify_cert msg -Y verify -n git -f allowed -I bob -s "$T/cert.sig"
same verify_cert_not_principal msg -Y verify -n git -f allowed -I bert -s "$T/cert.sig"
same verify_cert_expired msg -Y verify -n git -f allowed -I alice -s "$T/old.sig"
same verify_cert_pubkey msg -Y verify -n git -f allowed -I alice -s "$T/cert.sig" -O print-pubkey
same verify_no_allowed msg -Y verify -n git -f nonexistent -I alice -s "$T/ed.sig"
same verify_no_sig msg -Y verify -n git -f allowed -I alice -s nonexistent
printf 'junk\n' >junk.sig
head -3 "$T/ed.sig" >"$T/nofooter.sig"
head -c 200 /dev/zero | tr '\0' 'x' >"$T/long_junk.sig"
same verify_junk msg -Y verify -n git -f allowed -I alice -s "$T/junk.sig"
same verify_no_footer msg -Y verify -n git -f allowed -I alice -s "$T/nofooter.sig"
same verify_long_junk msg -Y verify -n git -f allowed -I alice -s "$T/long_junk.sig"
"$THEIRS" -q -k -f "$T/krl" "$T/k_ed.pub"
same verify_revoked msg -Y verify -n git -f allowed -I alice@example.com -s "$T/ed.sig" -r "$T/krl"
same verify_not_revoked msg -Y verify -n git -f allowed -I dev@rsa.example -s "$T/rsa.sig" -r "$T/krl"
same check_novalidate msg -Y check-novalidate -n git -s "$T/ed.sig"
same check_novalidate_cert msg -Y check-novalidate -n git -s "$T/cert.sig"
same check_novalidate_tampered tampered -Y check-novalidate -n git -s "$T/ed.sig"

# --- Principals ----------------------------------------------------------------
same find_ed empty -Y find-principals -f allowed -s "$T/ed.sig"
same find_rsa empty -Y find-principals -f allowed -s "$T/rsa.sig"
same find_cert empty -Y find-principals -f allowed -s "$T/cert.sig"
same find_old_cert empty -Y find-principals -f allowed -s "$T/old.sig"
same find_no_allowed empty -Y find-principals -f nonexistent -s "$T/ed.sig"
same find_junk empty -Y find-principals -f allowed -s "$T/junk.sig"
same find_verify_time empty -Y find-principals -f allowed -s "$T/ed.sig" -O verify-time=20990102
same match_alice empty -Y match-principals -f allowed -I alice
same match_rsa empty -Y match-principals -f allowed -I x@rsa.example
same match_none empty -Y match-principals -f allowed -I nobody
same match_broken empty -Y match-principals -f allowed -I broken
same match_no_allowed empty -Y match-principals -f nonexistent -I alice

# --- Arguments ------------------------------------------------------------------
same verify_no_identity msg -Y verify -n git -f allowed -s "$T/ed.sig"
same verify_no_file msg -Y verify -n git -I x -s "$T/ed.sig"
same verify_no_ns msg -Y verify -f allowed -I x -s "$T/ed.sig"
same verify_no_sigfile msg -Y verify -n git -f allowed -I x
same find_no_allowed_arg empty -Y find-principals -s "$T/ed.sig"
same find_no_sig_arg empty -Y find-principals -f allowed
same match_no_allowed_arg empty -Y match-principals -I x
same match_no_identity empty -Y match-principals -f allowed
same novalidate_no_ns msg -Y check-novalidate -s "$T/ed.sig"
same novalidate_no_sig msg -Y check-novalidate -n git
# An unknown operation: the message and status (the usage text that
# follows lists each program's own options).
unknown_op() {
    local rc_t rc_o
    "$THEIRS" -Y frobnicate 2>theirs.unknown </dev/null; rc_t=$?
    "$OURS" -Y frobnicate 2>ours.unknown </dev/null; rc_o=$?
    [ "$rc_t" = "$rc_o" ] && [ "$(head -1 theirs.unknown)" = "$(head -1 ours.unknown)" ]
}
lh_check "unknown -Y operation" unknown_op

# --- git ------------------------------------------------------------------------
# git drives ssh-keygen -Y sign, find-principals and verify itself.
git_signs_and_verifies() {
    local repo=$T/repo out
    git init -q "$repo" &&
        git -C "$repo" config user.name "A U Thor" &&
        git -C "$repo" config user.email alice@example.com &&
        git -C "$repo" config gpg.format ssh &&
        git -C "$repo" config gpg.ssh.program "$OURS" &&
        git -C "$repo" config user.signingkey "$T/k_ed.pub" &&
        git -C "$repo" config gpg.ssh.allowedSignersFile "$T/allowed" &&
        echo hello >"$repo/f" && git -C "$repo" add f &&
        git -C "$repo" commit -q -S -m "signed by Longhaul's ssh-keygen" &&
        out=$(git -C "$repo" verify-commit HEAD 2>&1) &&
        echo "$out" | grep -q 'Good "git" signature for alice@example.com with ED25519 key' &&
        # and Debian's ssh-keygen accepts the same commit
        git -C "$repo" -c gpg.ssh.program="$THEIRS" verify-commit HEAD 2>/dev/null ||
        { echo "$out" >&2; return 1; }
}
if command -v git >/dev/null; then
    lh_check "git commit -S and verify-commit with our ssh-keygen" git_signs_and_verifies
else
    lh_skip_check "git commit signing" "git not installed"
fi

lh_summary || lh_fail "$LH_FAILED comparisons differ or were skipped"
echo "PASS: ssh-keygen -Y compatible with OpenSSH's"
