#!/usr/bin/env bash
# Longhaul's scp beside Debian's (OpenSSH 9.2), against Debian's sshd
# (with Debian's sftp-server) and Longhaul's sshd (internal-sftp), both
# directions, SFTP mode and the legacy protocol (-O):
#  - trees with modes and times (-rp), an empty file, a sparse file, a
#    symlink, names with spaces and a newline; random files checksummed;
#  - errors (missing files, no permission, a directory without -r, a
#    full small tmpfs, usage) with the same messages and exit codes as
#    Debian's scp, run side by side;
#  - Longhaul's `scp -t`/`scp -f` (the remote side of -O) driven by
#    Debian's scp -O, and the reverse;
#  - -O with names that hold a newline, encoded as OpenSSH's scp does,
#    against both sshds and Longhaul's scp -t/-f;
#  - a source its user cannot read leaves the remote target untouched
#    (our scp sends the target's OPEN early, after opening the source);
#  - copies between the two servers through this host (-3, the default),
#    over SFTP and in the legacy protocol (-O), beside Debian's scp;
#  - the progress meter on a terminal, -l, -a (resume; with Longhaul's
#    sshd the whole prefix hashed by check-file-handle).
# Permission errors need a non-root user: as root the script creates one.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
SCP=$BUILD/bin/scp
LSSHD=$BUILD/bin/sshd
for f in "$SCP" "$BUILD/bin/ssh" "$LSSHD"; do
    [ -x "$f" ] || lh_fail "not built: $f"
done
lh_require_openssh_server
DSCP=${LH_DEBIAN_SCP:-/usr/bin/scp}
[ -x "$DSCP" ] || lh_skip "OpenSSH's scp not found at $DSCP (openssh-client)"
[ -x /usr/lib/openssh/sftp-server ] || lh_skip "Debian's sftp-server not found (openssh-sftp-server)"
[ "$(id -u)" = 0 ] || lh_skip "needs root (a test user for permission errors, a small tmpfs)"
BULK_MB=${LH_BULK_MB:-48}
T=$LH_TMP
export TZ=UTC

lh_file_transfer_servers /usr/lib/openssh/sftp-server "$LSSHD"

OPTS=(-F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
      -o BatchMode=yes -o IdentitiesOnly=yes -i "$T/id")

# The local tree: modes, times, an empty file, a sparse file, a symlink,
# a name with spaces, one with a newline.
L=$T/local
mkdir -p "$L/tree/sub/deeper" "$L/tree/with space"
head -c 300000 /dev/urandom >"$L/tree/data.bin"
echo hello >"$L/tree/sub/hello.txt"
echo deep >"$L/tree/sub/deeper/x"
: >"$L/tree/empty"
truncate -s 5M "$L/tree/sparse" && printf 'end' >>"$L/tree/sparse"
echo spaced >"$L/tree/with space/a file"
printf 'nl' >"$L/tree/new
line"
ln -s data.bin "$L/tree/link"
chmod 640 "$L/tree/data.bin"
chmod 700 "$L/tree/sub/deeper"
chmod 600 "$L/tree/with space/a file"
touch -d '2020-01-02 03:04:05' "$L/tree/sub/hello.txt" "$L/tree/data.bin" "$L/tree/empty" "$L/tree/sparse"
touch -d '2019-05-06 07:08:09' "$L/tree/sub/deeper" "$L/tree/sub"
head -c "$((BULK_MB * 1024 * 1024))" /dev/urandom >"$L/big"
chmod -R a+rX "$L"
# The legacy protocol cannot carry a newline in a name (a record is a
# line; OpenSSH's scp -O mangles it too): its trees leave that file out.
cp -a "$L/tree" "$L/tree-legacy"
rm -f "$L/tree-legacy/new"*

# Files, modes, sizes, times (seconds) and contents of a tree; with
# `follow` a symlink is listed as the file it names (scp follows them).
tree_list() {
    (cd "$1" && find . -mindepth 1 -printf '%p|%m|%s|%T@|%y\n' | awk -F'|' '{
        t = int($4); if ($5 == "d") { print $1, $2, t } else if ($5 == "l") { print $1, "link" } else { print $1, $2, $3, t } }' |
        sed 's/\\n/NL/' | sort)
}
sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum); }
R=$home/work
as_user() { runuser -u "$user" -- "$@"; }
fresh_remote() { rm -rf "$R" && as_user mkdir -p "$R"; }

run_scp() { # BIN PORT ARGS...: exit status in $rc, stderr in $T/err
    local bin=$1 port=$2
    shift 2
    rc=0
    "$bin" "${OPTS[@]}" -P "$port" "$@" </dev/null >"$T/out" 2>"$T/err" || rc=$?
}

# --- trees and bulk data, both directions, both servers, both modes ---------
check_trees() { # SERVER MODE...
    local server=$1 port_var="port_$1" src=$L/tree
    shift
    local port=${!port_var}
    [ "${1:-}" = -O ] && src=$L/tree-legacy
    fresh_remote
    run_scp "$SCP" "$port" "$@" -rp "$src" "$user@127.0.0.1:$R/up" && [ $rc = 0 ] || { cat "$T/err"; return 1; }
    rm -rf "$T/down"
    run_scp "$SCP" "$port" "$@" -rp "$user@127.0.0.1:$R/up" "$T/down" && [ $rc = 0 ] || { cat "$T/err"; return 1; }
    # The reference: Debian's scp, the same way.
    rm -rf "$T/ref-down" && as_user rm -rf "$R/ref-up"
    run_scp "$DSCP" "$port" "$@" -rp "$src" "$user@127.0.0.1:$R/ref-up" && [ $rc = 0 ] || return 1
    run_scp "$DSCP" "$port" "$@" -rp "$user@127.0.0.1:$R/ref-up" "$T/ref-down" && [ $rc = 0 ] || return 1
    diff <(tree_list "$R/ref-up") <(tree_list "$R/up") &&
        diff <(tree_list "$T/ref-down") <(tree_list "$T/down") &&
        diff <(sums "$T/ref-down") <(sums "$T/down") &&
        diff <(sums "$src" | grep -v ' ./link$') <(sums "$T/down" | grep -v ' ./link$')
}
check_bulk() { # SERVER MODE...
    local server=$1 port_var="port_$1"
    shift
    local port=${!port_var} want got
    fresh_remote
    want=$(md5sum <"$L/big")
    run_scp "$SCP" "$port" "$@" "$L/big" "$user@127.0.0.1:$R/big" && [ $rc = 0 ] &&
        got=$(md5sum <"$R/big") && [ "$got" = "$want" ] || { echo "   upload: $got"; return 1; }
    # Into a directory: the OPEN our scp sends ahead of the target's stat
    # fails there without effect, and the file goes inside.
    as_user mkdir "$R/into"
    run_scp "$SCP" "$port" "$@" "$L/big" "$user@127.0.0.1:$R/into" && [ $rc = 0 ] &&
        got=$(md5sum <"$R/into/big") && [ "$got" = "$want" ] && [ -d "$R/into" ] ||
        { echo "   upload into a directory: $got"; return 1; }
    rm -f "$T/big.down"
    run_scp "$SCP" "$port" "$@" "$user@127.0.0.1:$R/big" "$T/big.down" && [ $rc = 0 ] &&
        got=$(md5sum <"$T/big.down") && [ "$got" = "$want" ] || { echo "   download: $got"; return 1; }
}
for server in debian longhaul; do
    lh_check "$server sshd, SFTP mode: -rp tree up and down as Debian's scp moves it" check_trees $server
    lh_check "$server sshd, legacy -O: -rp tree up and down as Debian's scp moves it" check_trees $server -O
    lh_check "$server sshd, SFTP mode: ${BULK_MB} MiB random file both ways, checksummed" check_bulk $server
    lh_check "$server sshd, legacy -O: ${BULK_MB} MiB random file both ways, checksummed" check_bulk $server -O
done

# --- errors: the same words and status as Debian's scp ------------------------
mkdir -p "$T/full"
mount -t tmpfs -o size=1m,mode=1777 none "$T/full" || lh_fail "cannot mount a tmpfs"
LH_CLEANUP_MOUNT=$T/full
trap 'lh_rc=$?; umount "$LH_CLEANUP_MOUNT" 2>/dev/null || true; (exit $lh_rc); lh_cleanup' EXIT
fresh_remote
as_user mkdir "$R/locked" && as_user sh -c "echo secret >'$R/locked/f'; echo x >'$R/unreadable'; chmod 000 '$R/locked' '$R/unreadable'"
head -c 3000000 /dev/urandom >"$R/three-mb" && chown "$user" "$R/three-mb"
echo local >"$L/one" && echo local2 >"$L/two" && chmod 644 "$L/one" "$L/two"
# Both programs start their log lines with argv[0] as invoked.
norm() { sed -e "s#^$DSCP: #scp: #" -e "s#^$SCP: #scp: #" -e "s#$T#TMP#g" -e "s#$R#REMOTE#g"; }
compare_error() { # PORT ARGS...: Debian's scp and ours, same words and status
    local port=$1 drc
    shift
    run_scp "$DSCP" "$port" "$@"
    drc=$rc
    norm <"$T/err" >"$T/err.debian"
    rm -f "$T/full"/* 2>/dev/null || true
    run_scp "$SCP" "$port" "$@"
    norm <"$T/err" >"$T/err.ours"
    rm -f "$T/full"/* 2>/dev/null || true
    if [ "$drc" != "$rc" ] || ! diff "$T/err.debian" "$T/err.ours" >/dev/null; then
        echo "   scp $*: Debian's exit $drc, ours $rc"
        diff "$T/err.debian" "$T/err.ours" | sed 's/^/   /'
        return 1
    fi
}
check_errors() { # SERVER MODE...
    local port_var="port_$1"
    local p=${!port_var} u="$user@127.0.0.1"
    shift
    compare_error "$p" "$@" "$u:$R/no-such-file" "$T/x" &&
        compare_error "$p" "$@" "$T/no-such-file" "$u:$R/" &&
        compare_error "$p" "$@" "$L/tree" "$u:$R/" &&
        compare_error "$p" "$@" "$u:$R/locked/f" "$T/x" &&
        compare_error "$p" "$@" "$u:$R/unreadable" "$T/x" &&
        compare_error "$p" "$@" "$L/one" "$u:$R/locked/f" &&
        compare_error "$p" "$@" "$L/one" "$u:$R/no/such/dir" &&
        compare_error "$p" "$@" "$u:$R/three-mb" "$T/full/f" &&
        compare_error "$p" "$@" "$u:$R/one" "/no/such/dir/x" &&
        compare_error "$p" "$@" "$L/one" "$L/two" "$u:$R/one" &&
        compare_error "$p" "$@" "$u:$R/no-such-*" "$T/"
}
for server in debian longhaul; do
    lh_check "$server sshd, SFTP mode: errors and exit codes as Debian's scp" check_errors $server
    lh_check "$server sshd, legacy -O: errors and exit codes as Debian's scp" check_errors $server -O
done
# Refusals of the command line, before any connection: OpenSSH's fatal()
# lines (the program's name for scp, CR LF, "bad port" with its own
# newline) and exit statuses, for scp and sftp alike.
check_option_refusals() {
    local prog deb ours args want got
    for prog in scp sftp; do
        deb=/usr/bin/$prog
        ours=$BUILD/bin/$prog
        [ -x "$deb" ] || { echo "   $deb missing"; return 1; }
        for args in "-1 a h:b" "-P x a h:b" "-P 0 a h:b" "-X buffer=0 a h:b" "-X buffer=x a h:b" \
            "-X buffer=1M a h:b" "-X buffer=1KB a h:b" "-X buffer=99999999999999999999999 a h:b" \
            "-X nrequests=0 a h:b" "-X nrequests=x a h:b" "-X other=1 a h:b" "-X buffer a h:b" "-M x a h:b"; do
            want=$( (cd "$T" && $deb $args) 2>&1 </dev/null; echo "status $?")
            got=$( (cd "$T" && $ours $args) 2>&1 </dev/null; echo "status $?")
            want=${want//$deb/PROG}
            got=${got//$ours/PROG}
            [ "$want" = "$got" ] || { echo "   $prog $args:"; diff <(echo "$want" | cat -A) <(echo "$got" | cat -A) | sed 's/^/   /'; return 1; }
        done
    done
    # sftp's -B and -R: strtol's numbers, not 0, nothing after them.
    for args in "-B 0 h:" "-B 1x h:" "-B 64K h:" "-R 0 h:" "-R 2x h:"; do
        want=$( (cd "$T" && /usr/bin/sftp $args) 2>&1 </dev/null; echo "status $?")
        got=$( (cd "$T" && $BUILD/bin/sftp $args) 2>&1 </dev/null; echo "status $?")
        [ "$want" = "$got" ] || { echo "   sftp $args:"; diff <(echo "$want" | cat -A) <(echo "$got" | cat -A) | sed 's/^/   /'; return 1; }
    done
    # Sizes Debian's sftp takes (and a proxy that fails at once): no
    # refusal of the command line, whatever the connection does.
    got=$( (cd "$T" && $BUILD/bin/sftp -B 300000 -R 5000 -X nrequests=262144 -X buffer=64K -o ProxyCommand=false 127.0.0.1:) 2>&1 </dev/null) &&
        { echo "   sftp with a failing proxy succeeded"; return 1; }
    ! grep -q Invalid <<<"$got" || { echo "   $got"; return 1; }
}
lh_check "scp and sftp: command-line refusals (-1, -P, -X, -M, sftp's -B and -R) as Debian's, byte for byte with their statuses" check_option_refusals
check_unreadable_source() { # SERVER: scp run by a user who cannot read its source
    # Our scp sends the target's OPEN (which truncates it) ahead of the
    # target's stat: only after it has opened the source, as an upload
    # does first. A source the user cannot read leaves the target as it
    # was, with OpenSSH's message and status.
    local port_var="port_$1" rc=0
    chmod 711 "$T"
    mkdir -p "$T/u" && cp "$T/id" "$T/u/id" && chown -R "$user" "$T/u" && chmod 700 "$T/u" && chmod 600 "$T/u/id"
    echo secret >"$T/root-only" && chmod 600 "$T/root-only"
    # (Not fresh_remote: the checks after this one use what $R holds.)
    echo keep | as_user tee "$R/target" >/dev/null
    as_user "$SCP" -F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -o BatchMode=yes -o IdentitiesOnly=yes -i "$T/u/id" -P "${!port_var}" \
        "$T/root-only" "$user@127.0.0.1:$R/target" </dev/null >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" = 1 ] || { echo "   exit $rc"; cat "$T/err"; return 1; }
    grep -qF "open local \"$T/root-only\": Permission denied" "$T/err" || { cat "$T/err"; return 1; }
    [ "$(cat "$R/target")" = keep ] || { echo "   target changed: $(head -c 40 "$R/target")"; return 1; }
    rm -f "$R/target"
}
for server in debian longhaul; do
    lh_check "$server sshd: a source the user cannot read leaves the target untouched" check_unreadable_source $server
done
check_full_upload() {
    # A full remote file system: the remote user writes into the small tmpfs.
    local p=$port_debian drc
    run_scp "$DSCP" "$p" "$R/three-mb" "$user@127.0.0.1:$T/full/f"
    drc=$rc
    norm <"$T/err" >"$T/err.debian"
    rm -f "$T/full"/*
    run_scp "$SCP" "$p" "$R/three-mb" "$user@127.0.0.1:$T/full/f"
    norm <"$T/err" >"$T/err.ours"
    rm -f "$T/full"/*
    [ "$drc" = "$rc" ] && diff "$T/err.debian" "$T/err.ours" && grep -q 'No space left\|Failure' "$T/err.ours"
}
lh_check "a full remote tmpfs: the same message and status as Debian's scp" check_full_upload
check_usage() {
    local a drc
    for a in "" "-Z" "onlyone" "-P"; do
        rc=0; "$DSCP" $a 2>&1 >/dev/null | norm >"$T/err.debian"; "$DSCP" $a >/dev/null 2>&1 || rc=$?; drc=$rc
        rc=0; "$SCP" $a 2>&1 >/dev/null | norm >"$T/err.ours"; "$SCP" $a >/dev/null 2>&1 || rc=$?
        [ "$drc" = "$rc" ] && diff "$T/err.debian" "$T/err.ours" || { echo "   scp $a"; return 1; }
    done
}
lh_check "usage and unknown options as Debian's scp" check_usage
# --- -3 (the default): between two servers through this host ------------------
# From Debian's sshd to Longhaul's and back, beside Debian's scp doing the
# same; scp:// URIs give each side its port (paths relative to the home).
uri() { echo "scp://$user@127.0.0.1:$1/work/$2"; }
run_scp3() { # BIN ARGS...: run_scp without -P (the URIs carry the ports)
    local bin=$1
    shift
    rc=0
    "$bin" "${OPTS[@]}" "$@" </dev/null >"$T/out" 2>"$T/err" || rc=$?
}
check_through_local() { # FROM TO [MODE]: MODE -O is the legacy protocol
    local from=$1 to=$2 mode=${3:-} want got
    fresh_remote
    cp -a "$L/tree" "$R/src" && chown -R -h "$user" "$R/src"
    # shellcheck disable=SC2086
    run_scp3 "$SCP" $mode -3 -rp "$(uri "$from" src)" "$(uri "$to" ours)" && [ $rc = 0 ] || { cat "$T/err"; return 1; }
    # shellcheck disable=SC2086
    run_scp3 "$DSCP" $mode -3 -rp "$(uri "$from" src)" "$(uri "$to" ref)" && [ $rc = 0 ] || { cat "$T/err"; return 1; }
    diff <(tree_list "$R/ref") <(tree_list "$R/ours") && diff <(sums "$R/ref") <(sums "$R/ours") || return 1
    # A big file, no -3 (the default), into a directory.
    cp "$L/big" "$R/big" && chown "$user" "$R/big" && as_user mkdir "$R/into"
    want=$(md5sum <"$L/big")
    # shellcheck disable=SC2086
    run_scp3 "$SCP" $mode "$(uri "$from" big)" "$(uri "$to" into)" && [ $rc = 0 ] &&
        got=$(md5sum <"$R/into/big") && [ "$got" = "$want" ] || { echo "   big: $got"; cat "$T/err"; return 1; }
    # Errors: a missing source, a directory without -r, several sources
    # into a file; the same words and status as Debian's scp.
    local args drc dout
    for args in "$(uri "$from" nosuch) $(uri "$to" x)" "$(uri "$from" src) $(uri "$to" x)" \
        "$(uri "$from" big) $(uri "$from" src/empty) $(uri "$to" big)"; do
        # shellcheck disable=SC2086
        run_scp3 "$DSCP" $mode $args; drc=$rc; dout=$(norm <"$T/err" | sed 's/\r$//')
        # shellcheck disable=SC2086
        run_scp3 "$SCP" $mode $args
        [ "$rc" = "$drc" ] && [ "$(norm <"$T/err" | sed 's/\r$//')" = "$dout" ] ||
            { echo "   scp -3 $args: ours $rc '$(cat "$T/err")', Debian's $drc '$dout'"; return 1; }
    done
}
lh_check "-3: a -rp tree from Debian's sshd to Longhaul's as Debian's scp copies it, a big file, errors" \
    check_through_local "$port_debian" "$port_longhaul"
lh_check "-3: the same from Longhaul's sshd to Debian's" check_through_local "$port_longhaul" "$port_debian"
lh_check "-3 -O (the legacy protocol, scp -f to scp -t through this host): the same, Debian's sshd to Longhaul's" \
    check_through_local "$port_debian" "$port_longhaul" -O
lh_check "-3 -O: the same from Longhaul's sshd to Debian's" check_through_local "$port_longhaul" "$port_debian" -O
check_connection_refused() {
    local q drc k
    lh_port q
    # Debian's scp may write into the pipe of an ssh that already exited
    # and die of SIGPIPE (141) before its message: that run is repeated
    # (as in sftp_client_interop.sh).
    for k in 1 2 3 4 5; do
        run_scp "$DSCP" "$q" "$L/one" "$user@127.0.0.1:$R/"; drc=$rc
        [ "$drc" = 141 ] || break
    done
    grep -v '^ssh:' "$T/err" | norm >"$T/err.debian"
    run_scp "$SCP" "$q" -S /usr/bin/ssh "$L/one" "$user@127.0.0.1:$R/"
    grep -v '^ssh:' "$T/err" | norm >"$T/err.ours"
    [ "$drc" = "$rc" ] && [ "$rc" = 255 ] || { echo "   exit $rc, Debian's $drc"; return 1; }
    diff "$T/err.debian" "$T/err.ours"
}
lh_check "no server: 'Connection closed', exit 255, as Debian's scp" check_connection_refused

# --- Longhaul's scp -t / -f, the remote side of -O ---------------------------
# A stand-in for ssh that runs the remote command here, with Longhaul's
# scp first in PATH (or Debian's), so either client meets either server.
for side in ours debian; do
    dir=$BUILD/bin
    [ $side = debian ] && dir=/usr/bin
    cat >"$T/fake-ssh-$side" <<EOF
#!/bin/sh
# ssh [options] -- host command: run the command locally.
while [ "\$1" != "--" ]; do shift; done
shift 2
if [ "\${1#scp }" != "\$1" ]; then exec $dir/scp \${1#scp }; fi
exec sh -c "\$1"
EOF
    chmod 755 "$T/fake-ssh-$side"
done
check_remote_side() { # CLIENT SERVER
    local client=$DSCP
    [ "$1" = ours ] && client=$SCP
    rm -rf "$T/rs-up" "$T/rs-down"
    "$client" -O -S "$T/fake-ssh-$2" -rp "$L/tree-legacy" "h:$T/rs-up" 2>"$T/err" &&
        "$client" -O -S "$T/fake-ssh-$2" -rp "h:$T/rs-up" "$T/rs-down" 2>>"$T/err" &&
        diff <(tree_list "$L/tree-legacy" | grep -v '^./link') <(tree_list "$T/rs-down" | grep -v '^./link') &&
        diff <(sums "$L/tree-legacy" | grep -v 'link$') <(sums "$T/rs-down" | grep -v 'link$') ||
        { cat "$T/err"; return 1; }
}
lh_check "Debian's scp -O against Longhaul's scp -t/-f: a -rp tree both ways" check_remote_side debian ours
lh_check "Longhaul's scp -O against Debian's scp -t/-f: a -rp tree both ways" check_remote_side ours debian
check_remote_side_errors() {
    local drc
    rc=0; "$DSCP" -O -S "$T/fake-ssh-debian" "h:$T/no-such" "$T/x" 2>"$T/err.debian" || rc=$?; drc=$rc
    rc=0; "$DSCP" -O -S "$T/fake-ssh-ours" "h:$T/no-such" "$T/x" 2>"$T/err.ours" || rc=$?
    [ "$drc" = "$rc" ] && diff "$T/err.debian" "$T/err.ours" || return 1
    rc=0; "$DSCP" -O -S "$T/fake-ssh-debian" "$L/one" "h:/no/such/dir/x" 2>"$T/err.debian" || rc=$?; drc=$rc
    rc=0; "$DSCP" -O -S "$T/fake-ssh-ours" "$L/one" "h:/no/such/dir/x" 2>"$T/err.ours" || rc=$?
    [ "$drc" = "$rc" ] && diff "$T/err.debian" "$T/err.ours"
}
lh_check "Longhaul's scp -t/-f reports errors to Debian's scp -O as Debian's does" check_remote_side_errors

# --- -O and a newline in a file name ------------------------------------------------
# A record is one line, so OpenSSH's scp sends a source name that holds a
# newline encoded as strnvis(VIS_NL) does ("new\^Jline"; every other byte
# that is not graphic ASCII, space or tab encoded too, backslashes doubled)
# and the sink creates that name; a name without a newline goes as it is.
# A directory with a newline is not sent at all: the encoded name is what
# it opens ("d\^Jir: No such file or directory"). (A remote path with a
# newline cannot be asked for by name either: the remote shell splits the
# command there, so downloads below go through a glob.)
NL=$T/nl
mkdir -p "$NL/src" "$NL/dirs/d"$'\n'"ir"
printf 'nl' >"$NL/src/new"$'\n'"line"
printf 'mixed' >"$NL/src/"$'a\\b\n\r\xe9'
printf 'cr' >"$NL/src/"$'c\rr\xe9'
echo x >"$NL/dirs/d"$'\n'"ir/f"
chmod -R a+rX "$NL"
nl_sources=("$NL/src/new"$'\n'"line" "$NL/src/"$'a\\b\n\r\xe9' "$NL/src/"$'c\rr\xe9')
names_and_sums() { (cd "$1" && ls -b | sort && find . -type f -print0 | sort -z | xargs -0 md5sum | sed 's/^/  /'); }
check_legacy_newline() { # SERVER: Debian's scp -O and ours, up and down, the same names
    local port_var="port_$1" which bin
    local p=${!port_var}
    for which in debian ours; do
        bin=$DSCP
        [ $which = ours ] && bin=$SCP
        as_user rm -rf "$R/nl-$which" && as_user mkdir -p "$R/nl-$which" && rm -rf "$T/nl-$which" && mkdir "$T/nl-$which" || return 1
        run_scp "$bin" "$p" -O "${nl_sources[@]}" "$user@127.0.0.1:$R/nl-$which/" && [ $rc = 0 ] ||
            { echo "   $which upload: exit $rc"; cat "$T/err"; return 1; }
        run_scp "$bin" "$p" -O "$user@127.0.0.1:$NL/src/*" "$T/nl-$which/" && [ $rc = 0 ] ||
            { echo "   $which download: exit $rc"; cat "$T/err"; return 1; }
    done
    diff <(names_and_sums "$R/nl-debian") <(names_and_sums "$R/nl-ours") &&
        diff <(names_and_sums "$T/nl-debian") <(names_and_sums "$T/nl-ours") &&
        [ -f "$T/nl-ours/new\^Jline" ] && [ "$(cat "$T/nl-ours/new\^Jline")" = nl ] &&
        compare_error "$p" -O -r "$NL/dirs/d"$'\n'"ir" "$user@127.0.0.1:$R/" &&
        grep -q 'd\\^Jir: No such file or directory' "$T/err.ours"
}
for server in debian longhaul; do
    lh_check "$server sshd, legacy -O: names with a newline sent and created as Debian's scp does" check_legacy_newline $server
done
check_remote_side_newline() { # Debian's scp -O against Debian's scp -t/-f and against ours
    local side
    for side in debian ours; do
        rm -rf "$T/nlrs-$side-up" "$T/nlrs-$side-down" && mkdir "$T/nlrs-$side-up" "$T/nlrs-$side-down" &&
            "$DSCP" -O -S "$T/fake-ssh-$side" "${nl_sources[@]}" "h:$T/nlrs-$side-up/" 2>"$T/err" &&
            "$DSCP" -O -S "$T/fake-ssh-$side" "h:$NL/src/*" "$T/nlrs-$side-down/" 2>>"$T/err" ||
            { echo "   remote side $side"; cat "$T/err"; return 1; }
    done
    diff <(names_and_sums "$T/nlrs-debian-up") <(names_and_sums "$T/nlrs-ours-up") &&
        diff <(names_and_sums "$T/nlrs-debian-down") <(names_and_sums "$T/nlrs-ours-down") &&
        [ -f "$T/nlrs-ours-down/new\^Jline" ]
}
lh_check "Debian's scp -O against Longhaul's scp -t/-f: names with a newline as against Debian's" check_remote_side_newline

# --- meter, limit, resume ---------------------------------------------------------
check_meter() {
    command -v script >/dev/null || { lh_skip_check "progress meter" "script(1) not found (bsdutils)"; return 0; }
    fresh_remote
    cp "$L/one" "$R/m.txt" && chown "$user" "$R/m.txt"
    script -qec "$SCP ${OPTS[*]} -P $port_debian $user@127.0.0.1:$R/m.txt $T/m.txt" "$T/meter.typescript" >/dev/null
    grep -aq 'm\.txt *100% *6 *[0-9.]*[KMG]*B/s *00:00' "$T/meter.typescript" || { cat -v "$T/meter.typescript"; return 1; }
    # Not a terminal: no meter at all.
    run_scp "$SCP" "$port_debian" "$user@127.0.0.1:$R/m.txt" "$T/m2.txt" && [ ! -s "$T/out" ]
}
lh_check "the progress meter on a terminal (file, 100%, size, rate, time), none otherwise" check_meter
check_limit() {
    fresh_remote
    head -c 2000000 /dev/urandom >"$T/lim" && chmod 644 "$T/lim"
    local start end
    start=$(date +%s%N)
    run_scp "$SCP" "$port_debian" -l 4000 "$T/lim" "$user@127.0.0.1:$R/lim" && [ $rc = 0 ] || return 1
    end=$(date +%s%N)
    # 2 MB at 4000 Kbit/s cannot take less than 3.9 s (a lower bound only).
    [ $(((end - start) / 1000000)) -ge 3000 ] && cmp "$T/lim" "$R/lim"
}
lh_check "-l 4000: 2 MB take at least the limit's time, and arrive intact" check_limit
check_resume() {
    fresh_remote
    cp "$L/big" "$R/big" && chown "$user" "$R/big"
    head -c 1000000 "$L/big" >"$T/partial"
    run_scp "$SCP" "$port_debian" -a "$user@127.0.0.1:$R/big" "$T/partial" && [ $rc = 0 ] && cmp "$L/big" "$T/partial" ||
        { echo "   download: status $rc"; cat "$T/err"; return 1; }
    # Upload: half there already.
    head -c 2000000 "$L/big" >"$R/up-partial" && chown "$user" "$R/up-partial"
    run_scp "$SCP" "$port_debian" -a "$L/big" "$user@127.0.0.1:$R/up-partial" && [ $rc = 0 ] && cmp "$L/big" "$R/up-partial" ||
        { echo "   upload: status $rc"; cat "$T/err"; return 1; }
    # A partial copy that is not a prefix of the source (one byte changed
    # near its end, one near the start remotely) is sent again whole.
    head -c 1000000 "$L/big" >"$T/stale" && printf 'X' | dd of="$T/stale" bs=1 seek=999000 conv=notrunc 2>/dev/null
    run_scp "$SCP" "$port_debian" -a "$user@127.0.0.1:$R/big" "$T/stale" && [ $rc = 0 ] && cmp "$L/big" "$T/stale" &&
        grep -q 'does not match' "$T/err" || { echo "   download over a stale copy: status $rc"; cat "$T/err"; return 1; }
    head -c 2000000 "$L/big" >"$R/up-stale" && printf 'X' | dd of="$R/up-stale" bs=1 seek=10 conv=notrunc 2>/dev/null
    chown "$user" "$R/up-stale"
    run_scp "$SCP" "$port_debian" -a "$L/big" "$user@127.0.0.1:$R/up-stale" && [ $rc = 0 ] && cmp "$L/big" "$R/up-stale" ||
        { echo "   upload over a stale copy: status $rc"; cat "$T/err"; return 1; }
}
lh_check "-a resumes a partial download and upload, and resends a copy whose prefix differs" check_resume
flip_byte() { # FILE OFFSET: a different byte there
    local b
    b=$(dd if="$1" bs=1 skip="$2" count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
    printf "\\$(printf %03o $(((b + 1) % 256)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
check_resume_hashed() {
    # Longhaul's sshd (internal-sftp) has check-file-handle: the whole
    # prefix is hashed on both sides, so a byte changed in the middle of
    # the partial file, far from the first and last 64 KiB (all that can be
    # compared cheaply without it), is caught and the file sent whole.
    fresh_remote
    cp "$L/big" "$R/big" && chown "$user" "$R/big"
    head -c 4000000 "$L/big" >"$T/mid-stale" && flip_byte "$T/mid-stale" 2000000 &&
        ! cmp -s "$T/mid-stale" <(head -c 4000000 "$L/big") || return 1
    run_scp "$SCP" "$port_longhaul" -v -a "$user@127.0.0.1:$R/big" "$T/mid-stale" && [ $rc = 0 ] &&
        cmp "$L/big" "$T/mid-stale" && grep -q 'does not match' "$T/err" &&
        grep -q '(check-file-handle): different' "$T/err" || { echo "   download"; grep -v '^debug[23]' "$T/err"; return 1; }
    head -c 4000000 "$L/big" >"$R/up-mid" && flip_byte "$R/up-mid" 2000000 && chown "$user" "$R/up-mid"
    run_scp "$SCP" "$port_longhaul" -v -a "$L/big" "$user@127.0.0.1:$R/up-mid" && [ $rc = 0 ] &&
        cmp "$L/big" "$R/up-mid" && grep -q '(check-file-handle): different' "$T/err" ||
        { echo "   upload"; grep -v '^debug[23]' "$T/err"; return 1; }
    # A prefix that matches is continued.
    head -c 4000000 "$L/big" >"$T/mid-ok"
    run_scp "$SCP" "$port_longhaul" -v -a "$user@127.0.0.1:$R/big" "$T/mid-ok" && [ $rc = 0 ] &&
        cmp "$L/big" "$T/mid-ok" && grep -q '(check-file-handle): same' "$T/err" && ! grep -q 'does not match' "$T/err" ||
        { echo "   matching prefix"; grep -v '^debug[23]' "$T/err"; return 1; }
    # Debian's sshd (its sftp-server has no check-file-handle): samples, said at -v.
    head -c 4000000 "$L/big" >"$T/deb-ok"
    run_scp "$SCP" "$port_debian" -v -a "$user@127.0.0.1:$R/big" "$T/deb-ok" && [ $rc = 0 ] &&
        cmp "$L/big" "$T/deb-ok" && grep -q 'server lacks check-file-handle: comparing samples of the prefix' "$T/err" ||
        { echo "   Debian's sshd"; grep -v '^debug[23]' "$T/err"; return 1; }
}
lh_check "-a against Longhaul's sshd: a byte changed mid-prefix is caught by the hash, the file sent whole" check_resume_hashed

lh_summary
