#!/usr/bin/env bash
# sshd's ChrootDirectory, as OpenSSH's do_setusercontext()/safely_chroot():
#  1. a user matched by `Match User` with `ChrootDirectory <base>/%u` and
#     `ForceCommand internal-sftp` uploads and downloads a checksummed file
#     with Debian's sftp -b: it lands in the jail on disk, the session starts
#     in the jail's / (no home directory there), and `ls /` lists the jail;
#  2. while such a session is open, the user's processes have the jail as
#     their root and the root monitor above them does not;
#  3. a jail owned by the user, or one under a 0777 component, ends the
#     login with OpenSSH's "bad ownership or modes" line in sshd's log;
#  4. `ChrootDirectory none` in another user's Match block overrides the
#     global ChrootDirectory: that user sees the real /;
#  5. a user under the global ChrootDirectory without ForceCommand: the
#     shell is exec'd inside the jail, which has none: the command fails
#     with the shell's name and errno, as OpenSSH's perror(shell).
#  6. the same user with a pty (ssh -tt): the jail has no /dev, so the
#     pty is opened by the root parent outside it and passed down;
#  7. root (served by one process, no monitor) is chrooted too, and an
#     unsafe jail refuses root's login the same way.
# The jail cannot live under /tmp: every component of its path must be
# owned by root and not writable by group or others, and /tmp is 1777. It
# is made under LH_CHROOT_PARENT (default /run) and removed at exit.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSHD=$BUILD/bin/sshd
[ -x "$LH_SSHD" ] || lh_fail "not built: $LH_SSHD"
[ "$(id -u)" = 0 ] || lh_skip "ChrootDirectory needs root (chroot(2) and test users)"
command -v sftp >/dev/null || lh_skip "OpenSSH's sftp client not found (openssh-client)"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found"
T=$LH_TMP

PARENT=${LH_CHROOT_PARENT:-/run}
BASE=$(mktemp -d "$PARENT/longhaul-chroot.XXXXXX")
chmod 755 "$BASE"
chroot_cleanup() {
    local rc=$?
    rm -rf -- "$BASE"
    # lh_cleanup reads the exit status from $?; set -e must not end the
    # trap at the (exit 1) that hands it over.
    set +e
    (exit "$rc")
    lh_cleanup
}
trap chroot_cleanup EXIT

lh_make_user "pw-$RANDOM"
jailed=$LH_USER
lh_make_user "pw-$RANDOM"
free=$LH_USER
free_home=$(getent passwd "$free" | cut -d: -f6)
lh_make_user "pw-$RANDOM"
shelly=$LH_USER
jail=$BASE/$jailed
mkdir -p "$jail/upload" "$BASE/global" "$BASE/rootjail"
echo root >"$BASE/rootjail/ROOT-MARKER"
chmod 755 "$BASE/rootjail"
chown "$jailed" "$jail/upload"
chmod 755 "$jail" "$BASE/global"
echo jail >"$jail/JAIL-MARKER"
echo global >"$BASE/global/GLOBAL-MARKER"

chmod 711 "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id"
d=$T/srv
mkdir -p "$d" && chmod 711 "$d"
lh_make_host_keys "$d"
cp "$T/id.pub" "$d/authorized_keys" && chmod 644 "$d/authorized_keys"

# Match blocks must come after every global line, which
# lh_write_sshd_config writes after the caller's: append them to its file.
eval "lh_original_$(declare -f lh_write_sshd_config)"
lh_write_sshd_config() {
    lh_original_lh_write_sshd_config "$@"
    cat >>"$1/sshd_config" <<CONF
Match User $jailed
    ChrootDirectory $BASE/%u
    ForceCommand internal-sftp
Match User $free
    ChrootDirectory none
Match User root
    ChrootDirectory $BASE/rootjail
    ForceCommand internal-sftp
CONF
}
lh_port port
LH_SFTP_SERVER=internal-sftp lh_start_sshd "$d" "$port" "ChrootDirectory $BASE/global"
LOG=$d/sshd.log

sftp_as() { # USER BATCH OUT: Debian's sftp -b; exit status appended to OUT
    timeout 60 sftp -F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id" -P "$port" -b "$2" \
        "$1@127.0.0.1" >"$3" 2>&1
    echo "exit $?" >>"$3"
}
log_mark() { wc -l <"$LOG"; }
log_since() { tail -n +"$(($1 + 1))" "$LOG"; }
log_has() { # MARK FIXED-STRING
    log_since "$1" | lh_matches -F -- "$2"
}

head -c 300000 /dev/urandom >"$T/payload"

check_jailed_transfer() {
    local mark out=$T/jailed.out
    mark=$(log_mark)
    rm -f "$T/back"
    cat >"$T/jailed.batch" <<B
pwd
put $T/payload upload/payload
get upload/payload $T/back
ls -1 /
B
    sftp_as "$jailed" "$T/jailed.batch" "$out"
    grep -qx 'exit 0' "$out" || { cat "$out" >&2; return 1; }
    # Landed in the jail, the user's, and came back intact.
    cmp -s "$T/payload" "$jail/upload/payload" || { echo "not in $jail/upload" >&2; return 1; }
    [ "$(stat -c %U "$jail/upload/payload")" = "$jailed" ] || return 1
    cmp -s "$T/payload" "$T/back" || return 1
    # No home directory in the jail: the session starts in its /.
    grep -qx 'Remote working directory: /' "$out" || { cat "$out" >&2; return 1; }
    # / is the jail: its entries, not the real root's.
    grep -qx '/JAIL-MARKER' "$out" && grep -qx '/upload' "$out" || { cat "$out" >&2; return 1; }
    ! grep -Eqx '/(etc|usr|proc|GLOBAL-MARKER)' "$out" || { cat "$out" >&2; return 1; }
    lh_wait_until 5 log_has "$mark" "Changed root directory to \"$jail\"" || { log_since "$mark" >&2; return 1; }
}
lh_check "Match User: ChrootDirectory %u + internal-sftp: checksummed put/get land in the jail, / is the jail" \
    check_jailed_transfer

user_root_of() { readlink "/proc/$1/root"; }
check_monitor_outside() {
    local fifo=$T/hold.fifo w sftp_pid p ppid monitor="" ok=0
    rm -f "$fifo" && mkfifo "$fifo"
    timeout 60 sftp -F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id" -P "$port" -b "$fifo" \
        "$jailed@127.0.0.1" >"$T/hold.out" 2>&1 &
    sftp_pid=$!
    exec {w}<>"$fifo" # read-write: never blocks, even if sftp fails before opening it
    echo pwd >&"$w"
    # The connection's process and its internal-sftp child, both the user's.
    lh_wait_until 10 grep -qx 'Remote working directory: /' "$T/hold.out" || ok=1
    local procs
    procs=$(pgrep -u "$jailed" || true)
    [ "$(echo "$procs" | wc -w)" -ge 2 ] || ok=1
    for p in $procs; do
        [ "$(user_root_of "$p")" = "$jail" ] || { echo "pid $p root $(user_root_of "$p")" >&2; ok=1; }
        ppid=$(ps -o ppid= -p "$p" | tr -d ' ')
        [ "$(ps -o uid= -p "$ppid" | tr -d ' ')" = 0 ] && monitor=$ppid
    done
    # The root parent (host keys, PAM) keeps the real root.
    [ -n "$monitor" ] && [ "$(user_root_of "$monitor")" = / ] || { echo "monitor '$monitor'" >&2; ok=1; }
    exec {w}>&-
    wait "$sftp_pid" || ok=1
    return "$ok"
}
lh_check "the user's processes are chrooted, the root monitor above them is not" check_monitor_outside

check_refused() { # LOG-LINE: the login fails and sshd logs LOG-LINE
    local mark out=$T/refused.out
    mark=$(log_mark)
    printf 'pwd\n' >"$T/pwd.batch"
    sftp_as "$jailed" "$T/pwd.batch" "$out"
    ! grep -qx 'exit 0' "$out" || { echo "login succeeded" >&2; return 1; }
    ! grep -q 'Remote working directory' "$out" || return 1
    lh_wait_until 5 log_has "$mark" "$1" || { log_since "$mark" >&2; return 1; }
}
check_owned_by_user() {
    chown "$jailed" "$jail"
    check_refused "fatal: bad ownership or modes for chroot directory \"$jail\""
    local rc=$?
    chown root "$jail"
    return $rc
}
lh_check "a jail owned by the user: login refused, 'bad ownership or modes for chroot directory' logged" \
    check_owned_by_user
check_world_writable_component() {
    chmod 0777 "$BASE"
    check_refused "fatal: bad ownership or modes for chroot directory component \"$BASE/\""
    local rc=$?
    chmod 0755 "$BASE"
    return $rc
}
lh_check "a 0777 component above the jail: login refused, 'component' logged" check_world_writable_component

check_jail_restored() {
    sftp_as "$jailed" "$T/pwd.batch" "$T/restored.out"
    grep -qx 'exit 0' "$T/restored.out" && grep -qx 'Remote working directory: /' "$T/restored.out"
}
lh_check "the jail made safe again: the same server serves the user again" check_jail_restored

check_none_unconfined() {
    local out=$T/free.out
    printf 'pwd\nls -1 /\n' >"$T/free.batch"
    sftp_as "$free" "$T/free.batch" "$out"
    grep -qx 'exit 0' "$out" || { cat "$out" >&2; return 1; }
    grep -qx "Remote working directory: $free_home" "$out" || { cat "$out" >&2; return 1; }
    grep -qx '/etc' "$out" && grep -qx '/usr' "$out" || { cat "$out" >&2; return 1; }
    ! grep -q 'MARKER' "$out"
}
lh_check "ChrootDirectory none in another user's Match block: real / and home, despite the global jail" \
    check_none_unconfined

check_shell_in_jail() {
    local mark out=$T/shell.out rc=0
    mark=$(log_mark)
    timeout 60 ssh -F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id" -p "$port" \
        "$shelly@127.0.0.1" 'echo reached a shell' >"$out" 2>&1 || rc=$?
    [ "$rc" = 1 ] || { echo "exit $rc" >&2; cat "$out" >&2; return 1; }
    grep -qx '/bin/bash: No such file or directory' "$out" || { cat "$out" >&2; return 1; }
    ! grep -q 'reached a shell' "$out" || return 1
    lh_wait_until 5 log_has "$mark" "Changed root directory to \"$BASE/global\"" || { log_since "$mark" >&2; return 1; }
}
lh_check "global ChrootDirectory, no ForceCommand: the shell is looked for in the jail and fails cleanly" \
    check_shell_in_jail

check_pty_in_jail() {
    # The jail has no /dev: the pty comes from the root parent, opened
    # outside it as OpenSSH's monitor does (before, the request was
    # refused). The failed exec's message then comes through the pty, its
    # line ended by the terminal's CR LF, and the log names the pty.
    local mark out=$T/pty.out rc=0
    mark=$(log_mark)
    timeout 60 ssh -tt -F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id" -p "$port" \
        "$shelly@127.0.0.1" 'echo reached a shell' >"$out" 2>&1 </dev/null || rc=$?
    [ "$rc" = 1 ] || { echo "exit $rc" >&2; cat -A "$out" >&2; return 1; }
    ! grep -q 'PTY allocation request failed' "$out" || { cat "$out" >&2; return 1; }
    grep -qx $'/bin/bash: No such file or directory\r' "$out" || { cat -A "$out" >&2; return 1; }
    lh_wait_until 5 log_has "$mark" "Starting session: command on pts/" || { log_since "$mark" >&2; return 1; }
    [ ! -e "$BASE/global/dev" ] || { echo "the jail grew a /dev" >&2; return 1; }
}
lh_check "a pty in a jail without /dev: opened by the root parent, as OpenSSH's monitor does" check_pty_in_jail

check_root_jailed() {
    local mark out=$T/root.out
    mark=$(log_mark)
    printf 'pwd\nls -1 /\n' >"$T/root.batch"
    sftp_as root "$T/root.batch" "$out"
    grep -qx 'exit 0' "$out" && grep -qx '/ROOT-MARKER' "$out" || { cat "$out" >&2; return 1; }
    ! grep -Eqx '/(etc|usr)' "$out" || { cat "$out" >&2; return 1; }
    lh_wait_until 5 log_has "$mark" "Changed root directory to \"$BASE/rootjail\"" || { log_since "$mark" >&2; return 1; }
    # Unsafe: refused with the same line, and the server goes on serving.
    chmod 0775 "$BASE/rootjail"
    mark=$(log_mark)
    sftp_as root "$T/root.batch" "$out"
    chmod 0755 "$BASE/rootjail"
    ! grep -qx 'exit 0' "$out" || { echo "root login succeeded" >&2; return 1; }
    lh_wait_until 5 log_has "$mark" "fatal: bad ownership or modes for chroot directory \"$BASE/rootjail\"" ||
        { log_since "$mark" >&2; return 1; }
    sftp_as root "$T/root.batch" "$out"
    grep -qx 'exit 0' "$out"
}
lh_check "root, served by one process: chrooted too; a group-writable jail refuses the login" check_root_jailed

lh_summary
