#!/usr/bin/env bash
# ssh-keygen -F, -R and -H on known_hosts files beside Debian's: each
# program works on its own copy of the same file, and their standard
# output, standard error, exit status and resulting files (and .old
# copies) must be the same: plain, bracketed "[host]:port", pattern and
# hashed names, @cert-authority and @revoked lines (never removed or
# hashed), invalid lines (the file is then not replaced), -q, -l and -lv,
# -F with -H. Hashing draws random salts, so the hashed files are compared
# by what -F finds in them with either program.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
OURS=$BUILD/bin/ssh-keygen
THEIRS=$LH_SSH_KEYGEN
[ -x "$OURS" ] || lh_fail "ssh-keygen not built ($OURS)"
[ -x "$THEIRS" ] || lh_skip "OpenSSH ssh-keygen not found at $THEIRS (openssh-client)"

T=$LH_TMP
cd "$T"
"$THEIRS" -q -t ed25519 -N '' -C one -f k1
"$THEIRS" -q -t ecdsa -N '' -C two -f k2
K1=$(cut -d' ' -f1,2 k1.pub)
K2=$(cut -d' ' -f1,2 k2.pub)
salted=$(printf 'hashed.example %s\n' "$K1" >h && "$THEIRS" -q -H -f h >/dev/null 2>&1 && head -1 h | cut -d' ' -f1)
{
    echo "host1,10.0.0.1 $K1 comment one"
    echo "[host2]:2222 $K2"
    echo "# a comment"
    echo ""
    echo "   host3 $K1"
    echo "@cert-authority *.example $K2"
    echo "@revoked host1 $K2"
    echo "Host1 $K2"
    echo "$salted $K2"
    echo "*.wild,!bad.wild $K1"
} >known_hosts
{
    cat known_hosts
    echo "brokenline"
    echo "host9 ssh-ed25519"
} >invalid_hosts

# same NAME FILE ARGS...: both programs on a fresh copy of FILE (as kh in
# their own directory); output, errors, status and the files left compared.
same() {
    local name=$1 file=$2 side prog
    shift 2
    for side in theirs ours; do
        prog=$THEIRS
        [ "$side" = ours ] && prog=$OURS
        rm -rf "$side" && mkdir "$side" && cp "$file" "$side/kh"
        (set +e; cd "$side" && "$prog" "$@" </dev/null >"../$side.$name.out" 2>"../$side.$name.err"
         echo "status $?" >>"../$side.$name.out")
        cat "$side"/kh "$side"/kh.old >"$side.$name.files" 2>/dev/null || true
    done
    LH_CHECKS=$((LH_CHECKS + 1))
    local what
    for what in out err files; do
        if ! cmp -s "theirs.$name.$what" "ours.$name.$what"; then
            echo "FAIL: $name: $what differs" >&2
            diff "theirs.$name.$what" "ours.$name.$what" >&2
            LH_FAILED=$((LH_FAILED + 1))
            return
        fi
    done
    echo "ok: $name"
}

same find_plain known_hosts -F host1 -f kh
same find_ip known_hosts -F 10.0.0.1 -f kh
same find_port known_hosts -F '[host2]:2222' -f kh
same find_port_missing known_hosts -F host2 -f kh
same find_pattern known_hosts -F a.example -f kh
same find_negated known_hosts -F bad.wild -f kh
same find_wild known_hosts -F x.wild -f kh
same find_hashed known_hosts -F hashed.example -f kh
same find_case known_hosts -F HOST3 -f kh
same find_quiet known_hosts -q -F host1 -f kh
same find_fingerprint known_hosts -l -F host1 -f kh
same find_randomart known_hosts -lv -F host3 -f kh
same find_hash_output_count known_hosts -H -F nothere -f kh
same find_invalid invalid_hosts -F host3 -f kh
same find_invalid_unmatched invalid_hosts -F host9 -f kh
same remove known_hosts -R host1 -f kh
same remove_quiet known_hosts -q -R host1 -f kh
same remove_port known_hosts -R '[host2]:2222' -f kh
same remove_hashed known_hosts -R hashed.example -f kh
same remove_pattern known_hosts -R a.example -f kh
same remove_missing known_hosts -R nothere -f kh
same remove_invalid invalid_hosts -R host1 -f kh
same hash_invalid invalid_hosts -H -f kh
same no_file known_hosts -F host1 -f nonexistent
# -l with -R: the message and status (the usage text after it lists each
# program's own options).
l_with_r() {
    local rc_t rc_o
    "$THEIRS" -l -R host1 -f known_hosts 2>theirs.lr </dev/null; rc_t=$?
    "$OURS" -l -R host1 -f known_hosts 2>ours.lr </dev/null; rc_o=$?
    [ "$rc_t" = "$rc_o" ] && [ "$(head -1 theirs.lr)" = "$(head -1 ours.lr)" ]
}
lh_check "-l with -R refused" l_with_r

# -H: the same messages; then each program finds every name in each
# hashed file at the same lines.
hash_both() {
    local side prog name
    for side in theirs ours; do
        prog=$THEIRS
        [ "$side" = ours ] && prog=$OURS
        rm -rf "$side" && mkdir "$side" && cp known_hosts "$side/kh"
        (cd "$side" && "$prog" -H -f kh >"../$side.hash.out" 2>"../$side.hash.err") || return 1
    done
    cmp -s theirs.hash.out ours.hash.out && cmp -s theirs.hash.err ours.hash.err || {
        diff theirs.hash.out ours.hash.out >&2; diff theirs.hash.err ours.hash.err >&2; return 1; }
    cmp -s theirs/kh.old known_hosts && cmp -s ours/kh.old known_hosts || return 1
    [ "$(wc -l <theirs/kh)" = "$(wc -l <ours/kh)" ] || return 1
    # (@revoked and @cert-authority lines keep their names)
    ! grep -q '^host1,\|^ *host3' ours/kh || return 1
    for name in host1 10.0.0.1 '[host2]:2222' host3 hashed.example a.example; do
        for prog in "$THEIRS" "$OURS"; do
            [ "$("$prog" -F "$name" -f theirs/kh | grep -c '^# Host')" = \
              "$("$prog" -F "$name" -f ours/kh | grep -c '^# Host')" ] || { echo "$name differs" >&2; return 1; }
        done
    done
}
lh_check "-H hashes as Debian's (by what -F finds)" hash_both

lh_summary || lh_fail "$LH_FAILED comparisons differ or were skipped"
echo "PASS: ssh-keygen -F/-R/-H compatible with OpenSSH's"
