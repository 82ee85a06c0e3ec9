#!/usr/bin/env bash
# Longhaul's ssh-keygen beside Debian's OpenSSH ssh-keygen: keys each one
# writes are read by the other (-y, -l, -p), -l output is identical for
# public, private, authorized_keys and known_hosts files, -A fills a prefix
# directory, -e exports what OpenSSH exports, and errors carry OpenSSH's
# messages and exit statuses.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
OURS=$BUILD/bin/ssh-keygen
THEIRS=$LH_SSH_KEYGEN
[ -x "$OURS" ] || lh_fail "ssh-keygen not built ($OURS)"
[ -x "$THEIRS" ] || lh_skip "OpenSSH ssh-keygen not found at $THEIRS (openssh-client)"

cd "$LH_TMP"
check() { # check NAME: compares files got.* with want.* (counted as lh_check counts)
    LH_CHECKS=$((LH_CHECKS + 1))
    if ! cmp -s "want.$1" "got.$1"; then
        echo "FAIL: $1 differs" >&2
        diff "want.$1" "got.$1" >&2 || true
        LH_FAILED=$((LH_FAILED + 1))
    else
        echo "ok: $1"
    fi
}
same() { # same NAME ARGS...: both programs, stdout+stderr and status compared
    # (WANT_SED, when set, edits Debian's output first.)
    local name=$1
    shift
    set +e
    "$THEIRS" "$@" > "want.$name" 2>&1 < /dev/null
    echo "status $?" >> "want.$name"
    "$OURS" "$@" > "got.$name" 2>&1 < /dev/null
    echo "status $?" >> "got.$name"
    set -e
    [ -z "${WANT_SED:-}" ] || sed -i "$WANT_SED" "want.$name"
    check "$name"
}

# --- Keys written by each side, read by the other ---------------------------
specs=("ed25519 0" "ecdsa 256" "ecdsa 384" "ecdsa 521" "rsa 2048")
for spec in "${specs[@]}"; do
    read -r type bits <<< "$spec"
    tag=$type$bits
    b=(); [ "$bits" != 0 ] && b=(-b "$bits")
    # Ours writes, OpenSSH reads (plain and encrypted, default and PEM/PKCS8 formats).
    "$OURS" -q -t "$type" "${b[@]}" -N '' -C "ours $tag" -f "ours_$tag"
    "$THEIRS" -y -f "ours_$tag" > want.y_ours_$tag
    cut -d' ' -f1,2 "ours_$tag.pub" > cut.pub; cut -d' ' -f1,2 want.y_ours_$tag > cut.y
    cmp -s cut.pub cut.y || lh_fail "OpenSSH reads a different public key from ours_$tag"
    same "l_ours_$tag" -l -f "ours_$tag"
    same "l_ours_pub_$tag" -l -f "ours_$tag.pub"
    same "B_ours_$tag" -B -f "ours_$tag"
    same "Bv_ours_pub_$tag" -B -v -f "ours_$tag.pub"
    same "lv_ours_pub_$tag" -lv -f "ours_$tag.pub"
    same "lmd5_ours_$tag" -l -E md5 -f "ours_$tag.pub"
    "$OURS" -q -t "$type" "${b[@]}" -N 'pass phrase' -a 4 -f "ours_enc_$tag"
    "$THEIRS" -y -P 'pass phrase' -f "ours_enc_$tag" > "want.y_enc_$tag"
    "$OURS" -y -P 'pass phrase' -f "ours_enc_$tag" > "got.y_enc_$tag"
    check "y_enc_$tag"
    for fmt in PEM PKCS8; do
        [ "$type" = ed25519 ] && continue
        "$OURS" -q -t "$type" "${b[@]}" -m "$fmt" -N 'pw' -f "ours_${fmt}_$tag"
        head -1 "ours_${fmt}_$tag" > got.head_${fmt}_$tag
        "$THEIRS" -y -P pw -f "ours_${fmt}_$tag" > want.ypem_${fmt}_$tag
        "$OURS" -y -P pw -f "ours_${fmt}_$tag" > got.ypem_${fmt}_$tag
        check "ypem_${fmt}_$tag"
    done

    # OpenSSH writes, ours reads.
    "$THEIRS" -q -t "$type" "${b[@]}" -N '' -C "theirs $tag" -f "theirs_$tag"
    same "y_theirs_$tag" -y -f "theirs_$tag"
    same "l_theirs_$tag" -l -f "theirs_$tag"
    same "e_theirs_$tag" -e -f "theirs_$tag.pub"
    same "epkcs8_theirs_$tag" -e -m PKCS8 -f "theirs_$tag.pub"
    same "epem_theirs_$tag" -e -m PEM -f "theirs_$tag.pub"
    "$THEIRS" -q -t "$type" "${b[@]}" -N 'old' -f "theirs_enc_$tag"
    same "y_theirs_enc_$tag" -y -P old -f "theirs_enc_$tag"
    same "y_theirs_badpass_$tag" -y -P wrong -f "theirs_enc_$tag"

    # -p round trip: ours re-encrypts OpenSSH's key, OpenSSH reads it back and
    # re-encrypts it, ours reads that.
    "$OURS" -p -P old -N new -f "theirs_enc_$tag" > got.p 2>&1
    grep -q "Your identification has been saved with the new passphrase." got.p || lh_fail "-p failed: $(cat got.p)"
    "$THEIRS" -p -P new -N newer -f "theirs_enc_$tag" > /dev/null
    "$OURS" -y -P newer -f "theirs_enc_$tag" > got.rt
    "$THEIRS" -y -f "theirs_$tag" > /dev/null
    cut -d' ' -f1,2 got.rt > got.rtc; "$THEIRS" -y -P newer -f "theirs_enc_$tag" | cut -d' ' -f1,2 > want.rtc
    check rtc
    "$OURS" -p -P newer -N '' -f "theirs_enc_$tag" > /dev/null
    same "y_theirs_dec_$tag" -y -f "theirs_enc_$tag"
done

# --- The generation transcript ----------------------------------------------
"$OURS" -t ed25519 -N '' -C 'me@example' -f transcript > got.gen
fp=$("$THEIRS" -l -f transcript.pub | cut -d' ' -f2)
art=$("$THEIRS" -lv -f transcript.pub | tail -n +2)
{
    echo "Generating public/private ed25519 key pair."
    echo "Your identification has been saved in transcript"
    echo "Your public key has been saved in transcript.pub"
    echo "The key fingerprint is:"
    echo "$fp me@example"
    echo "The key's randomart image is:"
    echo "$art"
} > want.gen
check gen
[ "$(stat -c %a transcript)" = 600 ] || lh_fail "private key mode $(stat -c %a transcript)"
"$OURS" -q -t rsa -N '' -f quiet > got.quiet
: > want.quiet
check quiet
[ "$(head -c 7 quiet.pub)" = "ssh-rsa" ] && [ "$("$THEIRS" -l -f quiet.pub | cut -d' ' -f1)" = 3072 ] ||
    lh_fail "default RSA key is not 3072 bits"

# --- -l over authorized_keys / known_hosts lines -----------------------------
k1=$(cut -d' ' -f1,2 ours_ed255190.pub)
k2=$(cut -d' ' -f1,2 theirs_rsa2048.pub)
{
    echo "# comment"
    echo
    echo "  $k1 plain comment"
    echo "no-pty,command=\"x y\" $k1 with options"
    echo "from=\"10.0.0.0/8\" $k2"
    echo "host1,host2 $k2"
    echo "|1|abc=|def= $k2"
    echo "@cert-authority *.example $k1"
    echo "host3 $k1 #hash-comment"
    echo "$k1    spaced   comment  "
    echo "garbage"
} > mixed
same l_mixed -l -f mixed
same lv_mixed -lv -E sha512 -f mixed
same l_stdin -l -f - < mixed

# --- Errors -----------------------------------------------------------------
echo garbage > notakey
same err_missing -l -f /nonexistent/key
same err_notakey -l -f notakey
same err_type -t dss -f x
same err_rsa_small -t rsa -b 512 -f x
same err_ecdsa_bits -t ecdsa -b 300 -f x
same err_hash -l -E sha3 -f notakey
same err_y_missing -y -f /nonexistent/key
same err_pkcs8_ed25519 -e -m PKCS8 -f ours_ed255190.pub
chmod 644 ours_ed255190
same err_perms -y -f ours_ed255190
chmod 600 ours_ed255190

# Options: an unknown one or a missing argument gets OpenSSH's line (CR LF)
# and Debian's usage, less its DSA alternative (this ssh-keygen makes no
# DSA keys). OpenSSH 9.2 has no -G, -T, -j or -x (moduli options of old).
usage_same() { WANT_SED='s/\[-t dsa | ecdsa/[-t ecdsa/' same "$@"; } # Debian's "dsa | " taken out
usage_same opt_unknown -9
usage_same opt_old_G -G x -l -f ours_ed255190.pub
usage_same opt_old_T -T x -l -f ours_ed255190.pub
usage_same opt_old_j -j 1 -l -f ours_ed255190.pub
usage_same opt_old_x -x -l -f ours_ed255190.pub
usage_same opt_missing_f -f
usage_same opt_missing_Z -Z

# --- -A with a prefix ---------------------------------------------------------
mkdir -p ours_root/etc/ssh theirs_root/etc/ssh
"$OURS" -A -f ours_root > got.A
echo "ssh-keygen: generating new host keys: RSA ECDSA ED25519 " > want.A
check A
for t in rsa ecdsa ed25519; do
    f=ours_root/etc/ssh/ssh_host_${t}_key
    [ "$(stat -c %a "$f")" = 600 ] && [ "$(stat -c %a "$f.pub")" = 644 ] || lh_fail "$f modes"
    "$THEIRS" -y -f "$f" | cut -d' ' -f1,2 > "want.hk_$t"; cut -d' ' -f1,2 "$f.pub" > "got.hk_$t"
    check "hk_$t"
done
"$OURS" -A -f ours_root > got.A2
: > want.A2
check A2
rm ours_root/etc/ssh/ssh_host_ecdsa_key*
"$OURS" -A -f ours_root > got.A3
echo "ssh-keygen: generating new host keys: ECDSA " > want.A3
check A3

# --- Passphrase prompts on the terminal (a pty driven by python3) -------------
if command -v python3 > /dev/null; then
    cat > ptydrive.py <<'PY'
import os, pty, sys, select, time
# ptydrive.py a,b,... cmd args...: cmd on a pty; each answer is typed after a
# prompt ending in ": "; prints what the terminal showed.
answers = sys.argv[1].split(',') if sys.argv[1] else []
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
out, answered_at, deadline = b'', -1, time.time() + 60
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    if answers and out.endswith(b': ') and answered_at != len(out):
        answered_at = len(out)
        os.write(fd, (answers.pop(0) + '\n').encode())
else:
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace').replace('\r\n', '\n'))
print('status', os.waitstatus_to_exitcode(status))
PY
    # The transcript up to the fingerprint (which differs: new keys).
    python3 ptydrive.py 'pw1,typo,pw1,pw1' "$THEIRS" -t ed25519 -C tty -f tty_theirs > full_theirs.tty
    head -7 full_theirs.tty > want.tty_gen
    python3 ptydrive.py 'pw1,typo,pw1,pw1' "$OURS" -t ed25519 -C tty -f tty_ours > full_ours.tty
    head -7 full_ours.tty | sed "s/tty_ours/tty_theirs/" > got.tty_gen
    check tty_gen
    # ... and the same exit status ("status N", the driver's last line).
    tail -n 1 full_theirs.tty > want.tty_gen_status
    tail -n 1 full_ours.tty > got.tty_gen_status
    check tty_gen_status
    python3 ptydrive.py 'pw1' "$THEIRS" -y -f tty_ours > want.tty_y
    python3 ptydrive.py 'pw1' "$OURS" -y -f tty_theirs | sed "s#$(cut -d' ' -f2 tty_theirs.pub)#$(cut -d' ' -f2 tty_ours.pub)#" > got.tty_y
    check tty_y
    cp tty_ours tty_ours2
    python3 ptydrive.py 'pw1,pw2,pw2' "$THEIRS" -p -f tty_ours > want.tty_p
    python3 ptydrive.py 'pw1,pw2,pw2' "$OURS" -p -f tty_ours2 > got.tty_p
    check tty_p
    python3 ptydrive.py 'pw2,a,b' "$OURS" -p -f tty_ours2 > got.tty_p_mismatch
    python3 ptydrive.py 'pw2,a,b' "$THEIRS" -p -f tty_ours > want.tty_p_mismatch
    check tty_p_mismatch
else
    lh_skip_check "passphrase prompts on a terminal" "python3 not found (contrib/install-deps.sh installs it)"
fi

# --- -i (import) and -r (SSHFP): each program reads what Debian's -e wrote --
"$THEIRS" -q -t ecdsa -b 384 -N '' -f imp_ec
"$THEIRS" -q -t rsa -b 2048 -N '' -f imp_rsa
"$THEIRS" -q -t ed25519 -N '' -f imp_ed
"$THEIRS" -e -f imp_ed.pub >imp_ed.rfc
"$THEIRS" -e -f imp_rsa.pub >imp_rsa.rfc
"$THEIRS" -e -m PKCS8 -f imp_ec.pub >imp_ec.p8
"$THEIRS" -e -m PKCS8 -f imp_rsa.pub >imp_rsa.p8
"$THEIRS" -e -m PEM -f imp_rsa.pub >imp_rsa.pem
same i_rfc_ed -i -f imp_ed.rfc
same i_rfc_rsa -X -f imp_rsa.rfc
same i_pkcs8_ec -i -m PKCS8 -f imp_ec.p8
same i_pkcs8_rsa -i -m PKCS8 -f imp_rsa.p8
same i_pem_rsa -i -m PEM -f imp_rsa.pem
same i_pem_of_pkcs8 -i -m PEM -f imp_rsa.p8
same i_pkcs8_of_rfc -i -m PKCS8 -f imp_ed.rfc
same i_openssh_line -i -f imp_ed.pub
same i_missing -i -f no_such_file
same r_ed -r host.example -f imp_ed.pub
same r_rsa_generic -r host.example -g -f imp_rsa
same r_ec -r host.example -f imp_ec.pub
same r_missing -r host.example -f no_such_file
same r_not_a_key -r host.example -f imp_ec.p8
same o_is_a_no_op -o -l -f imp_ed.pub

# --- -c: a key's comment changed, each program on its own copy ----------------
"$THEIRS" -q -t ed25519 -N '' -C original -f c_theirs
"$THEIRS" -q -t rsa -b 2048 -N 'pass c' -C original -f c_enc_theirs
for f in c c_enc; do
    cp "${f}_theirs" "${f}_ours" && cp "${f}_theirs.pub" "${f}_ours.pub"
done
comment_case() { # NAME FILE-STEM ARGS...: -c on theirs/ours copies, outputs and files compared
    local name=$1 stem=$2
    shift 2
    set +e
    "$THEIRS" -c "$@" -f "${stem}_theirs" >"want.$name" 2>&1 </dev/null
    echo "status $?" >>"want.$name"
    "$OURS" -c "$@" -f "${stem}_ours" >"got.$name" 2>&1 </dev/null
    echo "status $?" >>"got.$name"
    set -e
    sed -i "s/${stem}_theirs/${stem}_ours/g" "want.$name"
    check "$name"
    cut -d' ' -f3- "${stem}_theirs.pub" >"want.${name}_pub"
    cut -d' ' -f3- "${stem}_ours.pub" >"got.${name}_pub"
    check "${name}_pub"
}
comment_case c_change c -C "new comment"
comment_case c_same c -C "new comment"
comment_case c_remove c -C ""
comment_case c_wrong_pass c_enc -C x -P wrong
comment_case c_enc c_enc -C "encrypted one" -P "pass c"
# The changed key still loads with its passphrase, in either program.
"$THEIRS" -y -P "pass c" -f c_enc_ours >/dev/null
# -c with -p: the message and status (the usage text after it lists each
# program's own options).
set +e
"$THEIRS" -c -p -f c_ours 2>&1 </dev/null | head -1 >want.c_and_p
"$OURS" -c -p -f c_ours 2>&1 </dev/null | head -1 >got.c_and_p
"$THEIRS" -c -p -f c_ours >/dev/null 2>&1 </dev/null; echo "status $?" >>want.c_and_p
"$OURS" -c -p -f c_ours >/dev/null 2>&1 </dev/null; echo "status $?" >>got.c_and_p
set -e
check c_and_p

# --- -Z: the cipher of new-format private keys, each read by the other side ---
same err_Z_cipher -q -t ed25519 -N pw -Z rijndael-cbc@lysator.liu.se -f zx
for z in 3des-cbc aes128-cbc aes256-ctr aes128-gcm@openssh.com chacha20-poly1305@openssh.com none; do
    rm -f z_ours z_ours.pub z_theirs z_theirs.pub
    "$OURS" -q -t ed25519 -N 'z pass' -Z "$z" -f z_ours
    "$THEIRS" -q -t ed25519 -N 'z pass' -Z "$z" -f z_theirs
    # The header names the cipher (and bcrypt, even for "none") as OpenSSH's does.
    for k in ours theirs; do
        sed '1d;$d' "z_$k" | base64 -d | head -c 80 | tr -c '[:print:]' '.' | sed 's/bcrypt.*/bcrypt/' > "hdr.$k"
    done
    cp hdr.theirs "want.Z_header_$z"; cp hdr.ours "got.Z_header_$z"; check "Z_header_$z"
    "$THEIRS" -y -P 'z pass' -f z_ours > "want.Z_read_ours_$z" 2>&1; cut -d' ' -f1,2 z_ours.pub > "got.Z_read_ours_$z"
    cut -d' ' -f1,2 "want.Z_read_ours_$z" > t && mv t "want.Z_read_ours_$z"; check "Z_read_ours_$z"
    "$OURS" -y -P 'z pass' -f z_theirs > "got.Z_read_theirs_$z" 2>&1; cut -d' ' -f1,2 z_theirs.pub > "want.Z_read_theirs_$z"
    cut -d' ' -f1,2 "got.Z_read_theirs_$z" > t && mv t "got.Z_read_theirs_$z"; check "Z_read_theirs_$z"
    same "Z_wrong_pass_$z" -y -P 'other' -f z_theirs
done
# -p with -Z rewrites the key under the new cipher.
"$OURS" -q -p -P 'z pass' -N 'new pass' -Z aes128-ctr -f z_theirs >/dev/null
sed '1d;$d' z_theirs | base64 -d | head -c 40 | tr -c '[:print:]' '.' > got.Z_p; echo >> got.Z_p
printf 'openssh-key-v1.....aes128-ctr....bcrypt.\n' > want.Z_p
check Z_p

lh_summary || lh_fail "$LH_FAILED comparisons differ or were skipped"
echo "PASS: ssh-keygen compatible with OpenSSH's"
