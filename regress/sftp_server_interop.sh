#!/usr/bin/env bash
# Longhaul's SFTP server beside Debian's (OpenSSH 9.2) sftp-server, with
# Debian's sftp and scp as the clients:
#  1. side by side without ssh: a scripted request sequence (sftp_probe)
#     sent to each server, transcripts and DEBUG3 log lines diffed, and the
#     same sftp -b batch through `sftp -D` against each;
#  2. through Longhaul's sshd with `Subsystem sftp` set to Debian's
#     sftp-server (the reference), to build/bin/sftp-server and to
#     internal-sftp: scp (SFTP mode) and sftp -b moving trees with modes
#     and times, rename, symlinks, chmod, df, and errors (no such file,
#     permission denied) printed exactly as against the reference; INFO log
#     lines of the two binaries diffed; a large file checksummed both ways;
#  3. ForceCommand internal-sftp with -R -d -l -e: a shell is refused with
#     OpenSSH's words, writes are refused as Debian's sftp-server -R refuses
#     them, and the log goes to the client's stderr.
# Permission errors need a non-root user: as root the script creates one.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSHD=$BUILD/bin/sshd
OURS=$BUILD/bin/sftp-server
PROBE=$BUILD/regress/sftp_probe
DEBIAN=${LH_DEBIAN_SFTP_SERVER:-/usr/lib/openssh/sftp-server}
for f in "$LH_SSHD" "$OURS" "$PROBE"; do
    [ -x "$f" ] || lh_fail "not built: $f"
done
command -v sftp >/dev/null || lh_skip "OpenSSH's sftp client not found (openssh-client)"
command -v scp >/dev/null || lh_skip "OpenSSH's scp not found (openssh-client)"
[ -x "$DEBIAN" ] || lh_skip "Debian's sftp-server not found at $DEBIAN (openssh-sftp-server)"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found"
BULK_MB=${LH_BULK_MB:-256}
T=$LH_TMP
export TZ=UTC

# ---------------------------------------------------------------- 1. side by side, no ssh
norm() { sed -e "s#$1#DIR#g" | tr -d '\r'; }
check_probe() {
    mkdir -p "$T/probe-debian" "$T/probe-ours"
    SSH_CONNECTION="192.0.2.7 5555 192.0.2.8 22" "$PROBE" "$T/probe-debian" -- "$DEBIAN" -e -l DEBUG3 \
        >"$T/probe-debian.out" 2>"$T/probe-debian.log" || return 1
    SSH_CONNECTION="192.0.2.7 5555 192.0.2.8 22" "$PROBE" "$T/probe-ours" -- "$OURS" -e -l DEBUG3 \
        >"$T/probe-ours.out" 2>"$T/probe-ours.log" || return 1
    # OpenSSH logs when it grows its read buffer ("allocate"); Longhaul
    # reads into its output buffer and has no such line. Longhaul's VERSION
    # also offers check-file-handle and check-file-name (the draft's, not
    # OpenSSH's), open-named@longhaul-ssh.org and drain-at-eof@longhaul-ssh.org
    # (docs/PROTOCOL.md), after OpenSSH's extensions.
    diff <(norm "$T/probe-debian" <"$T/probe-debian.out") \
         <(norm "$T/probe-ours" <"$T/probe-ours.out" |
             sed 's/ check-file-handle=[^ ]*//; s/ check-file-name=[^ ]*//; s/ open-named@longhaul-ssh.org=1//; s/ drain-at-eof@longhaul-ssh.org=1//') &&
        diff <(norm "$T/probe-debian" <"$T/probe-debian.log" | grep -v 'process_read: allocate') \
             <(norm "$T/probe-ours" <"$T/probe-ours.log") &&
        [ "$(grep -c ' -> ' "$T/probe-ours.out")" -gt 60 ]
}
lh_check "75 requests side by side: identical replies and DEBUG3 log lines" check_probe

# A local tree with modes, times, a symlink, an empty file and names with spaces.
L=$T/local
mkdir -p "$L/tree/sub/deeper" "$L/tree/with space"
head -c 200000 /dev/urandom >"$L/tree/data.bin"
echo hello >"$L/tree/sub/hello.txt"
echo deep >"$L/tree/sub/deeper/x"
: >"$L/tree/empty"
echo spaced >"$L/tree/with space/a file"
ln -s data.bin "$L/tree/link"
chmod 640 "$L/tree/data.bin"
chmod 700 "$L/tree/sub/deeper"
chmod 600 "$L/tree/with space/a file"
touch -h -d '2020-01-02 03:04:05' "$L/tree/sub/hello.txt" "$L/tree/data.bin" "$L/tree/empty" "$L/tree/with space/a file"
echo small >"$L/small"
touch -d '2021-06-07 08:09:10' "$L/small"

# Contents, modes and file times of two trees (directories' times move as
# files land in them; symlinks are skipped by put/get as OpenSSH does).
tree_list() {
    (cd "$1" && find . ! -type l ! -type d -printf '%p|%m|%s|%T@\n' -o -type d -printf '%p|%m\n' |
        awk -F'|' '{ if (NF == 4) print $1, $2, $3, int($4); else print $1, $2 }' | sort)
}
same_tree() {
    local d
    diff <(tree_list "$1" | grep -v '^\. ') <(tree_list "$2" | grep -v '^\. ') >/dev/null || return 1
    d=$(diff -r --no-dereference "$1" "$2" 2>&1 | grep -v '^Only in .*: link$' || true)
    [ -z "$d" ]
}
check_direct() {
    local which=$1 server=$2
    rm -rf "$T/direct"
    mkdir -p "$T/direct"
    cat >"$T/direct.batch" <<EOF
cd $T/direct
lcd $L
put -rp tree up
ls -1 up
get -rp up $T/direct/down
rename up/empty up/empty2
ln -s data.bin up/l2
ls -l up/sub/hello.txt
chmod 600 up/data.bin
-get nosuchfile
-rm nosuchfile
-rename nosuch x
-rmdir nosuch
-chmod 644 nosuch
-cd nosuch
-ls nosuch
mkdir newdir
-mkdir newdir
rmdir newdir
EOF
    (cd "$T" && sftp -D "$server" -b "$T/direct.batch" >"$T/direct-$which.out" 2>&1)
    echo "exit $?" >>"$T/direct-$which.out"
    same_tree "$L/tree" "$T/direct/down" || { echo "   $which: trees differ"; return 1; }
    [ "$(stat -c %a "$T/direct/up/data.bin")" = 600 ] && [ "$(readlink "$T/direct/up/l2")" = data.bin ]
}
check_direct_same() {
    check_direct debian "$DEBIAN" && check_direct ours "$OURS" &&
        diff "$T/direct-debian.out" "$T/direct-ours.out"
}
lh_check "sftp -D -b: the same transcript and exit status as with Debian's sftp-server" check_direct_same

check_umask() {
    # -u: the umask applies to what the client creates (put without -p sends mode 0644).
    local which bin
    for which in debian ours; do
        bin=$DEBIAN
        [ $which = ours ] && bin=$OURS
        rm -rf "$T/umask-$which" && mkdir -p "$T/umask-$which"
        printf 'put %s %s\nmkdir %s\n' "$L/small" "$T/umask-$which/f" "$T/umask-$which/d" >"$T/umask.batch"
        sftp -D "$bin -u 077" -b "$T/umask.batch" >/dev/null 2>&1 || return 1
    done
    [ "$(stat -c %a "$T/umask-ours/f")" = 600 ] && [ "$(stat -c %a "$T/umask-ours/d")" = 700 ] &&
        [ "$(stat -c %a "$T/umask-debian/f")" = "$(stat -c %a "$T/umask-ours/f")" ] &&
        [ "$(stat -c %a "$T/umask-debian/d")" = "$(stat -c %a "$T/umask-ours/d")" ]
}
lh_check "-u 077: created files and directories get the umask, as with Debian's" check_umask

# ---------------------------------------------------------------- 2. through Longhaul's sshd
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/ssh_host_ed25519_key"
for k in ecdsa256 ecdsa384 ecdsa521 rsa; do
    cp "$T/ssh_host_ed25519_key" "$T/ssh_host_${k}_key"
done
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id"
chmod 600 "$T/id"
# The test user (root bypasses permissions, so errors need someone else).
user=$(id -un)
if [ "$(id -u)" = 0 ]; then
    lh_make_user "x-$RANDOM"
    user=$LH_USER
    chmod 711 "$T"
fi
R=$T/remote # the user's work area on the "remote" side
new_remote() { rm -rf "$R" && mkdir -p "$R" && chown "$user" "$R"; }

# start_server NAME SUBSYSTEM [extra sshd_config lines...]: sets port_NAME.
start_server() {
    local name=$1 subsystem=$2
    shift 2
    local d="$T/srv-$name"
    mkdir -p "$d"
    chmod 711 "$d"
    cp "$T"/ssh_host_* "$d/"
    cp "$T/id.pub" "$d/authorized_keys"
    chmod 644 "$d/authorized_keys"
    local p
    lh_port p
    LH_SFTP_SERVER=$subsystem lh_start_sshd "$d" "$p" "$@"
    printf -v "port_$name" %s "$p"
}
# The two binaries log (INFO) to files through a wrapper, so their lines
# can be compared; internal-sftp has no file to log to (syslog, or the
# client's stderr with -e, checked in part 3).
for which in debian ours; do
    bin=$DEBIAN
    [ $which = ours ] && bin=$OURS
    printf '#!/bin/sh\nexec %s -l INFO -e 2>>%s\n' "$bin" "$T/log-$which" >"$T/wrap-$which"
    chmod 755 "$T/wrap-$which"
    : >"$T/log-$which"
    chown "$user" "$T/log-$which"
done
start_server debian "$T/wrap-debian"
start_server ours "$T/wrap-ours"
start_server internal "internal-sftp"

opts() { echo "-F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i $T/id"; }
run_sftp() { # NAME BATCH: sftp -b as the user; transcript in $T/sftp-NAME.out
    local port_var="port_$1"
    sftp $(opts) -P "${!port_var}" -b "$2" "$user@127.0.0.1" >"$T/sftp-$1.out" 2>&1
    echo "exit $?" >>"$T/sftp-$1.out"
}
cat >"$T/transfer.batch" <<EOF
cd $R
lcd $L
put -rp tree up
get -rp up down
rename up/empty up/empty2
ln -s data.bin up/l2
chmod 604 up/data.bin
ls -1 up
ls -l up/sub/hello.txt
df
EOF
cat >"$T/errors.batch" <<EOF
cd $R
lcd $L
mkdir ro
chmod 555 ro
-put small ro/x
-mkdir ro/sub
-ln -s x ro/l
-rename up ro/up
-get nosuchfile
-get ro/nosuchfile
-rm nosuchfile
-rename nosuch x
-rmdir nosuch
-chmod 644 nosuch
-cd nosuch
-ls nosuch
-ln -s a up/l2
put small s
-rmdir s
rename s s2
ls -1
chmod 755 ro
rmdir ro
get nosuchfile
pwd
EOF
for name in debian ours internal; do
    check_transfer() {
        rm -rf "$L/down"
        new_remote && (cd "$T" && run_sftp "$1" "$T/transfer.batch") && grep -q '^exit 0$' "$T/sftp-$1.out" &&
            [ "$(stat -c %a "$R/up/data.bin")" = 604 ] && [ "$(readlink "$R/up/l2")" = data.bin ] &&
            [ -e "$R/up/empty2" ] && grep -q '^ *Size *Used *Avail *(root) *%Capacity$' "$T/sftp-$1.out" &&
            chmod 640 "$R/up/data.bin" && mv "$R/up/empty2" "$R/up/empty" && rm "$R/up/l2" &&
            same_tree "$L/tree" "$R/up" && same_tree "$L/tree" "$L/down"
    }
    lh_check "$name: sftp -b put -rp/get -rp, rename, ln -s, chmod, ls, df" check_transfer "$name"
done
check_transfer_same() {
    # df's figures move between runs; everything else must match.
    diff <(grep -v '^ *[0-9]' "$T/sftp-debian.out") <(grep -v '^ *[0-9]' "$T/sftp-ours.out") &&
        diff <(grep -v '^ *[0-9]' "$T/sftp-debian.out") <(grep -v '^ *[0-9]' "$T/sftp-internal.out")
}
lh_check "sftp -b transfer transcripts identical for the three servers" check_transfer_same

# scp follows symlinks: what it should deliver is the dereferenced tree.
cp -rLp "$L/tree" "$L/tree-deref"
for name in debian ours internal; do
    check_tree_round_trip() {
        local port_var="port_$1"
        new_remote && rm -rf "$T/back" &&
            scp -q $(opts) -P "${!port_var}" -rp "$L/tree" "$user@127.0.0.1:$R/copy" &&
            same_tree "$L/tree-deref" "$R/copy" &&
            scp -q $(opts) -P "${!port_var}" -rp "$user@127.0.0.1:$R/copy" "$T/back" &&
            same_tree "$L/tree-deref" "$T/back"
    }
    lh_check "$name: scp -rp (SFTP mode) up and down keeps contents, modes and times" check_tree_round_trip "$name"
done

if [ "$user" = root ] || [ "$(id -u)" = 0 -a -z "${LH_USER:-}" ]; then
    lh_skip_check "errors as a non-root user" "running as root without a test user"
else
    for name in debian ours internal; do
        check_errors_run() {
            new_remote && mkdir -p "$R/up" && chown "$user" "$R/up" && (cd "$T" && run_sftp "$1" "$T/errors.batch")
            grep -q '^exit 1$' "$T/sftp-$1.out"
        }
        lh_check "$name: the error batch ends with exit 1" check_errors_run "$name"
    done
    check_errors_same() {
        diff "$T/sftp-debian.out" "$T/sftp-ours.out" && diff "$T/sftp-debian.out" "$T/sftp-internal.out" &&
            grep -q 'Permission denied' "$T/sftp-ours.out" && grep -q 'No such file or directory' "$T/sftp-ours.out"
    }
    lh_check "errors (permission denied, no such file, exists) printed exactly as with Debian's sftp-server" \
        check_errors_same
fi


check_logs_same() {
    # The INFO lines of Debian's sftp-server and ours over the same
    # sessions (open/close with byte counts, mkdir, rename, set, sent status...).
    tr -d '\r' <"$T/log-debian" >"$T/log-debian.txt"
    tr -d '\r' <"$T/log-ours" >"$T/log-ours.txt"
    [ -s "$T/log-debian.txt" ] && diff "$T/log-debian.txt" "$T/log-ours.txt" &&
        grep -q "^open \"$R/up/data.bin\" flags WRITE,CREATE,TRUNCATE mode 0640$" "$T/log-ours.txt" &&
        grep -q "^close \"$R/up/data.bin\" bytes read 0 written 200000$" "$T/log-ours.txt" &&
        grep -q "^session opened for local user $user from \[127.0.0.1\]$" "$T/log-ours.txt"
}
lh_check "INFO log lines identical to Debian's sftp-server's for the same sessions" check_logs_same

head -c "${BULK_MB}M" /dev/urandom >"$T/bulk"
want=$(sha256sum <"$T/bulk" | cut -d' ' -f1)
for name in ours internal; do
    check_bulk() {
        local port_var="port_$1"
        new_remote && scp -q $(opts) -P "${!port_var}" "$T/bulk" "$user@127.0.0.1:$R/bulk" &&
            [ "$(sha256sum <"$R/bulk" | cut -d' ' -f1)" = "$want" ] &&
            rm -f "$T/bulk.down" &&
            printf 'get %s %s\n' "$R/bulk" "$T/bulk.down" >"$T/bulk.batch" &&
            sftp -q $(opts) -P "${!port_var}" -b "$T/bulk.batch" "$user@127.0.0.1" >/dev/null &&
            [ "$(sha256sum <"$T/bulk.down" | cut -d' ' -f1)" = "$want" ]
    }
    lh_check "$name: ${BULK_MB} MiB up with scp and down with sftp, checksummed" check_bulk "$name"
done
rm -f "$T/bulk" "$T/bulk.down" "$R/bulk"

# ---------------------------------------------------------------- 3. ForceCommand internal-sftp
mkdir -p "$T/start"
echo start >"$T/start/here"
chmod 755 "$T/start"
start_server forced "internal-sftp" "ForceCommand internal-sftp -R -d $T/start -l INFO -e"
start_server forced_ref "$DEBIAN" "ForceCommand $DEBIAN -R -d $T/start -l INFO -e"
check_refuse_shell() {
    local out rc=0
    out=$(ssh $(opts) -p "$port_forced" "$user@127.0.0.1" 'echo should not run' 2>/dev/null) || rc=$?
    [ "$rc" = 1 ] && [ "$out" = "This service allows sftp connections only." ] &&
        grep -q "refusing non-sftp session" "$T/srv-forced/sshd.log"
}
lh_check "ForceCommand internal-sftp refuses a command: OpenSSH's message, exit 1" check_refuse_shell
cat >"$T/forced.batch" <<EOF
pwd
ls -1
get here $T/got-here
-put $L/small x
-mkdir d
-rm here
EOF
check_forced() {
    (cd "$T" && sftp $(opts) -P "$1" -b "$T/forced.batch" "$user@127.0.0.1" >"$T/forced-$2.out" 2>"$T/forced-$2.err")
    echo "exit $?" >>"$T/forced-$2.out"
    [ "$(cat "$T/got-here")" = start ] && rm -f "$T/got-here"
}
check_forced_same() {
    check_forced "$port_forced_ref" debian && check_forced "$port_forced" ours &&
        diff "$T/forced-debian.out" "$T/forced-ours.out" &&
        grep -q "^Remote working directory: $T/start$" "$T/forced-ours.out" &&
        diff <(tr -d '\r' <"$T/forced-debian.err" | sort) <(tr -d '\r' <"$T/forced-ours.err" | sort) &&
        grep -q "^sent status Permission denied" "$T/forced-ours.err" &&
        grep -q "session opened for local user $user from \[127.0.0.1\]" "$T/forced-ours.err"
}
lh_check "ForceCommand internal-sftp -R -d -l INFO -e: start directory, read-only, log on stderr as Debian's" \
    check_forced_same

lh_summary
