#!/usr/bin/env bash
# Longhaul's sftp beside Debian's (OpenSSH 9.2):
#  1. without ssh (sftp -D, Debian's sftp-server): one batch of commands,
#     errors included, gives the same transcript (stdout and stderr) and
#     exit status from both clients, with and without the '-' prefix;
#  2. through Debian's sshd and Longhaul's sshd (internal-sftp), as a
#     non-root user: put -rp / get -rp of a tree with modes, times, an
#     empty and a sparse file, names with spaces; a random file both ways
#     checksummed; reget/reput; permission errors and a batch that stops
#     at the first error (exit 1) as Debian's sftp does;
#  3. sftp host:dir (cd there), sftp host:file (fetch it and exit),
#     sftp://user@host:port/path, -B/-R, and refused options;
#  4. interactive use on a pseudo-terminal: the prompt, history and tab
#     completion of remote and local names.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
SFTP=$BUILD/bin/sftp
LSSHD=$BUILD/bin/sshd
for f in "$SFTP" "$BUILD/bin/ssh" "$LSSHD"; do
    [ -x "$f" ] || lh_fail "not built: $f"
done
lh_require_openssh_server
DSFTP=${LH_DEBIAN_SFTP:-/usr/bin/sftp}
SERVER=/usr/lib/openssh/sftp-server
[ -x "$DSFTP" ] || lh_skip "OpenSSH's sftp not found at $DSFTP (openssh-client)"
[ -x "$SERVER" ] || lh_skip "Debian's sftp-server not found (openssh-sftp-server)"
[ "$(id -u)" = 0 ] || lh_skip "needs root (a test user for permission errors)"
BULK_MB=${LH_BULK_MB:-32}
T=$LH_TMP
export TZ=UTC

# --- 1. side by side over sftp -D -------------------------------------------
W=$T/direct
mkdir -p "$W/t/a/b" "$W/t/sp ace" "$W/l"
echo one >"$W/f1"
head -c 70000 /dev/urandom >"$W/t/big"
echo x >"$W/t/a/b/c"
: >"$W/t/empty"
ln -s big "$W/t/lnk"
chmod 640 "$W/t/big"
chmod 700 "$W/t/a"
touch -d '2020-01-01 00:00:00' "$W/t/big" "$W/t/a/b/c"
touch -d '2021-03-04 05:06:07' "$W/t/empty" "$W/t/a/b" "$W/t/a" "$W/t/sp ace" "$W/t/lnk" "$W/t" "$W/f1"
touch -h -d '2021-03-04 05:06:07' "$W/t/lnk"
cat >"$T/b1" <<EOF
pwd
lpwd
-get nosuchfile
-put nosuchfile
-rm nosuchfile
-rename nosuch x
-rmdir nosuch
-chmod 644 nosuch
-cd nosuch
-cd /etc/passwd
-ls nosuch
-get
-put -Z x
-chmod abc f1
-ln onlyone
mkdir newdir
-mkdir newdir
rmdir newdir
ls
ls -1
ls -la t/a/b
ls -l t/a/b
ls -1t t
ls -1S t
ls -1rS t
ls -lh t
ls -1 t/*
ls -l t/*
put f1 f2
get f2 f3
ln -s f1 l1
ls -l l1
-ln f1 l1
rename f2 f4
rm f4
cp f3 f5
rm f5
version
progress
progress
lls -d t
lmkdir lm
-lmkdir lm
!echo hi
-!false
help
lumask 022
chmod 600 f3
chmod 644 f3
chown 0 f3
chgrp 0 f3
cd t
pwd
ls
get -r a $W/l/got
get -rp a $W/l/gotp
put -r $W/t/a putr
ls -1 putr
rm putr/b/c
rmdir putr/b
rmdir putr
cd
pwd
@pwd
# a comment
   
-bogus
bogus
pwd
EOF
run_direct() { # CLIENT NAME
    rm -rf "$W/f2" "$W/f3" "$W/l1" "$W/f4" "$W/f5" "$W/lm" "$W/l"/* "$W/t/putr"
    rc=0
    (cd "$W" && umask 022 && "$1" -D "$SERVER" -b "$T/b1" >"$T/direct-$2.out" 2>&1) || rc=$?
    echo "exit $rc" >>"$T/direct-$2.out"
    (cd "$W/l" && find . -printf '%p %m %s %y\n' | sort) >"$T/direct-$2.tree"
}
check_direct() {
    run_direct "$DSFTP" debian
    run_direct "$SFTP" ours
    diff "$T/direct-debian.out" "$T/direct-ours.out" && diff "$T/direct-debian.tree" "$T/direct-ours.tree" &&
        grep -q '^exit 1$' "$T/direct-ours.out" && grep -q 'Invalid command' "$T/direct-ours.out"
}
lh_check "sftp -D -b: the same transcript, files and exit status as Debian's sftp (70 commands, errors, ls forms)" check_direct

# --- 2. through sshd, as a user ------------------------------------------------
lh_file_transfer_servers "$SERVER" "$LSSHD"
OPTS=(-F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
      -o IdentitiesOnly=yes -i "$T/id")
as_user() { runuser -u "$user" -- "$@"; }
R=$home/work
fresh_remote() { rm -rf "$R" && as_user mkdir -p "$R"; }
L=$T/local
mkdir -p "$L/tree/sub/deeper" "$L/tree/with space"
head -c 200000 /dev/urandom >"$L/tree/data.bin"
echo hello >"$L/tree/sub/hello.txt"
echo deep >"$L/tree/sub/deeper/x"
: >"$L/tree/empty"
truncate -s 3M "$L/tree/sparse"
echo spaced >"$L/tree/with space/a file"
chmod 640 "$L/tree/data.bin"
chmod 700 "$L/tree/sub/deeper"
touch -d '2020-01-02 03:04:05' "$L/tree/sub/hello.txt" "$L/tree/data.bin" "$L/tree/empty" "$L/tree/sparse"
touch -d '2019-05-06 07:08:09' "$L/tree/sub/deeper" "$L/tree/sub"
head -c "$((BULK_MB * 1024 * 1024))" /dev/urandom >"$L/big"
chmod -R a+rX "$L"
tree_list() {
    (cd "$1" && find . -mindepth 1 -printf '%p|%m|%s|%T@|%y\n' | awk -F'|' '{
        t = int($4); if ($5 == "d") print $1, $2, t; else print $1, $2, $3, t }' | sort)
}
sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum); }
run_batch() { # CLIENT PORT BATCH OUT
    rc=0
    "$1" "${OPTS[@]}" -P "$2" -b "$3" "$user@127.0.0.1" >"$4" 2>&1 || rc=$?
    echo "exit $rc" >>"$4"
}
check_trees() { # SERVER
    local port_var="port_$1"
    local p=${!port_var}
    fresh_remote
    rm -rf "$T/down" "$T/ref-down"
    cat >"$T/trees.batch" <<EOF
cd $R
put -rp $L/tree up
get -rp up $T/down
put $L/big big
get big $T/big.down
EOF
    run_batch "$SFTP" "$p" "$T/trees.batch" "$T/trees-ours.out"
    grep -q '^exit 0$' "$T/trees-ours.out" || { cat "$T/trees-ours.out"; return 1; }
    cmp "$L/big" "$T/big.down" && cmp "$L/big" "$R/big" &&
        diff <(tree_list "$L/tree") <(tree_list "$R/up") &&
        diff <(tree_list "$L/tree") <(tree_list "$T/down") &&
        diff <(sums "$L/tree") <(sums "$T/down") || return 1
    # Debian's sftp says the same about the same batch.
    fresh_remote
    rm -rf "$T/down"
    run_batch "$DSFTP" "$p" "$T/trees.batch" "$T/trees-debian.out"
    diff "$T/trees-debian.out" "$T/trees-ours.out"
}
cat >"$T/errors.batch" <<EOF
cd $R
mkdir ro
chmod 555 ro
-put $L/tree/empty ro/x
-get /etc/shadow $T/shadow
-mkdir /root/nope
-rm /etc/passwd
-ls /root
-get -z nosuchfile
-ln -q a b
chmod 755 ro
put $L/tree/empty ro/x
ls -1 ro
get nosuchfile
pwd
EOF
check_errors() { # SERVER
    local port_var="port_$1"
    local p=${!port_var}
    fresh_remote
    run_batch "$DSFTP" "$p" "$T/errors.batch" "$T/errors-debian.out"
    fresh_remote
    run_batch "$SFTP" "$p" "$T/errors.batch" "$T/errors-ours.out"
    diff "$T/errors-debian.out" "$T/errors-ours.out" && grep -q '^exit 1$' "$T/errors-ours.out" &&
        ! grep -q '^sftp> pwd' "$T/errors-ours.out"
}
check_resume() { # SERVER
    local port_var="port_$1"
    local p=${!port_var}
    fresh_remote
    head -c 3000000 "$L/big" >"$T/part.down"
    head -c 1000000 "$L/big" >"$R/part.up" && chown "$user" "$R/part.up"
    cp "$L/big" "$R/big" && chown "$user" "$R/big"
    cat >"$T/resume.batch" <<EOF
cd $R
reget big $T/part.down
reput $L/big part.up
EOF
    run_batch "$SFTP" "$p" "$T/resume.batch" "$T/resume.out"
    grep -q '^exit 0$' "$T/resume.out" && cmp "$L/big" "$T/part.down" && cmp "$L/big" "$R/part.up" ||
        { cat "$T/resume.out"; return 1; }
}
check_last_line() { # SERVER
    # A batch file's last line is known as such: its transfer may end the
    # server's input with its last requests (Longhaul's sshd announces
    # drain-at-eof; Debian's does not, and the input ends after the data).
    local port_var="port_$1"
    local p=${!port_var}
    fresh_remote
    cp "$L/big" "$R/big" && chown "$user" "$R/big"
    rm -f "$T/last.down"
    printf 'cd %s\nget big %s\n' "$R" "$T/last.down" >"$T/last-get.batch"
    # (put to a directory first: the OPEN sent ahead with the stat is of
    # the directory itself, fails, and the file goes into it.)
    printf 'cd %s\nmkdir sub\nput %s sub\nput %s last.up\n' "$R" "$L/big" "$L/big" >"$T/last-put.batch"
    run_batch "$SFTP" "$p" "$T/last-get.batch" "$T/last-get.out"
    run_batch "$SFTP" "$p" "$T/last-put.batch" "$T/last-put.out"
    grep -q '^exit 0$' "$T/last-get.out" && grep -q '^exit 0$' "$T/last-put.out" &&
        cmp "$L/big" "$T/last.down" && cmp "$L/big" "$R/last.up" && cmp "$L/big" "$R/sub/big" ||
        { cat "$T/last-get.out" "$T/last-put.out"; return 1; }
}
check_first_line() { # SERVER
    # A batch file's first get or put has its lookups (and a put's OPEN)
    # sent with INIT, by the path as typed, relative to the starting
    # directory (the home); into a directory the early OPEN fails and the
    # file goes into it.
    local port_var="port_$1"
    local p=${!port_var}
    fresh_remote
    cp "$L/big" "$R/big" && chown "$user" "$R/big" && as_user mkdir "$R/sub"
    rm -f "$T/first.down"
    printf 'get work/big %s\n' "$T/first.down" >"$T/first-get.batch"
    printf 'put %s work/sub\n' "$L/big" >"$T/first-put-dir.batch"
    printf 'put %s work/first.up\nls work/sub\n' "$L/big" >"$T/first-put.batch"
    run_batch "$SFTP" "$p" "$T/first-get.batch" "$T/first-get.out"
    run_batch "$SFTP" "$p" "$T/first-put-dir.batch" "$T/first-put-dir.out"
    run_batch "$SFTP" "$p" "$T/first-put.batch" "$T/first-put.out"
    grep -q '^exit 0$' "$T/first-get.out" && grep -q '^exit 0$' "$T/first-put-dir.out" &&
        grep -q '^exit 0$' "$T/first-put.out" && cmp "$L/big" "$T/first.down" && cmp "$L/big" "$R/sub/big" &&
        cmp "$L/big" "$R/first.up" ||
        { cat "$T/first-get.out" "$T/first-put-dir.out" "$T/first-put.out"; return 1; }
}
for server in debian longhaul; do
    lh_check "$server sshd: a batch's first get, put into a directory and put, by relative paths, checksummed" check_first_line $server
    lh_check "$server sshd: a batch's last get and last put, a put into a directory, checksummed" check_last_line $server
    lh_check "$server sshd: put -rp/get -rp trees and ${BULK_MB} MiB both ways, checksummed, transcript as Debian's" check_trees $server
    lh_check "$server sshd: permission errors and a batch that stops at the first error, as Debian's sftp" check_errors $server
    lh_check "$server sshd: reget and reput continue partial files" check_resume $server
done

# --- 3. destinations and options ---------------------------------------------------
check_destinations() {
    local p=$port_debian out rc
    fresh_remote
    echo fetched >"$R/file.txt" && chown "$user" "$R/file.txt"
    rm -f "$T/file.txt" "$T/got.txt"
    (cd "$T" && "$SFTP" "${OPTS[@]}" -P "$p" "$user@127.0.0.1:$R/file.txt" >"$T/dest.out" 2>&1) &&
        cmp "$R/file.txt" "$T/file.txt" && grep -q "^Fetching $R/file.txt to file.txt" "$T/dest.out" || return 1
    "$SFTP" "${OPTS[@]}" "sftp://$user@127.0.0.1:$p/$R/file.txt" "$T/got.txt" >/dev/null 2>&1 &&
        cmp "$R/file.txt" "$T/got.txt" || return 1
    out=$(echo pwd | "$SFTP" "${OPTS[@]}" -P "$p" "$user@127.0.0.1:$R" 2>&1) &&
        grep -q "Remote working directory: $R" <<<"$out" && grep -q "^Changing to: $R" <<<"$out" || return 1
    rc=0
    "$SFTP" "${OPTS[@]}" -P "$p" "$user@127.0.0.1:$R/nosuch" >"$T/dest.out" 2>&1 || rc=$?
    [ "$rc" = 1 ] && grep -q "File \"$R/nosuch\" not found." "$T/dest.out"
}
lh_check "host:file fetches and exits, host:dir changes there, sftp:// URIs with a port" check_destinations
check_options() {
    local p=$port_debian rc
    echo "put $L/big big-b" >"$T/opt.batch"
    fresh_remote
    rc=0
    "$SFTP" "${OPTS[@]}" -P "$p" -B 16384 -R 8 -b "$T/opt.batch" "$user@127.0.0.1:$R" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" = 0 ] || { echo "   sftp -B -R: exit $rc"; cat "$T/out" "$T/err"; return 1; }
    cmp "$L/big" "$R/big-b" || return 1
    # (-J works since ssh has ProxyJump: forward_interop.sh carries data
    # through it; -A forwards the agent: agent_forwarding.sh.) -A is taken
    # as Debian's sftp takes it, and the copy goes on.
    rc=0
    "$SFTP" "${OPTS[@]}" -A -P "$p" -b "$T/opt.batch" "$user@127.0.0.1:$R" </dev/null >/dev/null 2>"$T/err" || rc=$?
    [ "$rc" = 0 ] || { echo "   sftp -A: exit $rc"; cat "$T/err"; return 1; }
    # Usage and a refused connection, as Debian's.
    local drc q
    rc=0; "$DSFTP" -Z >/dev/null 2>"$T/err.debian" || rc=$?; drc=$rc
    rc=0; "$SFTP" -Z >/dev/null 2>"$T/err.ours" || rc=$?
    [ "$drc" = "$rc" ] || { echo "   usage: exit $rc, Debian's $drc"; return 1; }
    diff "$T/err.debian" "$T/err.ours" || return 1
    lh_port q
    # Debian's sftp writes INIT into the pipe of an ssh that may already
    # have exited: now and then SIGPIPE ends it (exit 141, no message)
    # before it reports the closed connection. What it does otherwise is
    # the reference, so a run cut by SIGPIPE is run again.
    local k
    for k in 1 2 3 4 5; do
        drc=0; "$DSFTP" "${OPTS[@]}" -P "$q" -b /dev/null "$user@127.0.0.1" >/dev/null 2>"$T/err.debian" || drc=$?
        [ "$drc" = 141 ] || break
    done
    rc=0; "$SFTP" "${OPTS[@]}" -S /usr/bin/ssh -P "$q" -b /dev/null "$user@127.0.0.1" >/dev/null 2>"$T/err.ours" || rc=$?
    [ "$drc" = "$rc" ] && [ "$rc" = 255 ] || { echo "   refused connection: exit $rc, Debian's $drc"; return 1; }
    diff <(grep -v '^ssh:' "$T/err.debian") <(grep -v '^ssh:' "$T/err.ours")
}
lh_check "-B/-R move data; -A taken; usage and a refused connection as Debian's sftp" check_options

# --- 4. interactive, on a pseudo-terminal --------------------------------------------
check_interactive() {
    command -v python3 >/dev/null || { lh_skip_check "interactive sftp" "python3 not found"; return 0; }
    fresh_remote
    echo a >"$R/completion-target.txt" && chown "$user" "$R/completion-target.txt"
    mkdir -p "$T/lcl" && echo b >"$T/lcl/local-only-name.txt"
    cat >"$T/ptydrive.py" <<'EOF'
import os, pty, sys, time, select
argv = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
out = b""
def read_until(token, timeout=15):
    # Only output that arrives from now on counts.
    global out
    start = len(out)
    end = time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            out += data
            if token in out[start:]:
                return True
    return False
def send(s):
    os.write(fd, s)
ok = read_until(b"sftp> ")
send(b"cd " + os.environ["R"].encode() + b"\r")
ok = ok and read_until(b"sftp> ")
send(b"get compl\t")          # remote completion
time.sleep(1)
send(b" " + os.environ["T"].encode() + b"/got-by-completion.txt\r")
ok = ok and read_until(b"sftp> ")
send(b"lcd " + os.environ["T"].encode() + b"/lcl\r")
ok = ok and read_until(b"sftp> ")
send(b"put local-only\t")     # local completion
time.sleep(1)
send(b"\r")
ok = ok and read_until(b"sftp> ")
send(b"pwd\r")
ok = ok and read_until(b"sftp> ")
send(b"\x1b[A\r")              # history: pwd again
ok = ok and read_until(b"Remote working directory", 5)
send(b"bye\r")
time.sleep(0.5)
sys.stdout.buffer.write(out)
sys.exit(0 if ok else 1)
EOF
    R=$R T=$T python3 "$T/ptydrive.py" "$SFTP" "${OPTS[@]}" -P "$port_debian" "$user@127.0.0.1" >"$T/pty.out" 2>&1 || { cat -v "$T/pty.out"; return 1; }
    cmp "$R/completion-target.txt" "$T/got-by-completion.txt" && cmp "$T/lcl/local-only-name.txt" "$R/local-only-name.txt" &&
        [ "$(grep -ac 'Remote working directory' "$T/pty.out")" -ge 2 ] || { cat -v "$T/pty.out"; return 1; }
}
lh_check "interactive on a pty: prompt, tab completion of remote and local names, history" check_interactive

lh_summary
