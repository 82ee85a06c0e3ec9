# Shared helpers for regress/ tests (bash). Source it; it sets a cleanup trap.
#
# Tests start their own sshd on 127.0.0.1 with a port reserved by lh_port, a
# temporary config and fresh host keys. They never touch /etc/ssh or port 22,
# and stop only the processes they started, by PID.
#
# Skips are never silent (docs/TESTING.md): lh_skip (the whole script, exit
# 77) and lh_skip_check (one check) append "test: reason" to the file named by
# LONGHAUL_SKIP_LOG, and a skipped check fails the script unless
# LONGHAUL_ALLOW_SKIP=1.
#
# Sanitizers: every process a test starts writes AddressSanitizer, LSan and
# UBSan reports to LH_SAN_DIR (forked sshd children too, whatever user they
# run as), and the test fails at exit if any report is there.

set -euo pipefail

LH_SKIP=77
LH_NAME=${LH_NAME:-$(basename "$0" .sh)}
LH_SSHD=${LH_SSHD:-/usr/sbin/sshd}
LH_SSH_KEYGEN=${LH_SSH_KEYGEN:-/usr/bin/ssh-keygen}
LH_PIDS=()
LH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/longhaul-regress.XXXXXX")
LH_SAN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/longhaul-sanitizer.XXXXXX")
chmod 1777 "$LH_SAN_DIR"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$LH_SAN_DIR/asan"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}log_path=$LH_SAN_DIR/lsan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$LH_SAN_DIR/ubsan"

# Files outside LH_TMP that a test created (a PAM service file, say):
# removed by the cleanup trap, whatever the test's outcome.
LH_CLEANUP_FILES=()

# lh_stop_pids PID...: SIGTERM to each process (the script's own children),
# then up to 5 s for each to exit before SIGKILL: a server stuck in its
# shutdown must not hold the test until ctest's timeout. The cleanup trap
# stops LH_PIDS with it.
lh_stop_pids() {
    local pid i
    for pid in "$@"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    for pid in "$@"; do
        [ -n "$pid" ] || continue
        for i in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "warning: $(ps -o args= -p "$pid" 2>/dev/null | cut -c1-120) ($pid) ignored SIGTERM for 5 s; killed" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
        { wait "$pid"; } 2>/dev/null || true
    done
}

# ctest reads a test's output until every writer has closed it, so a
# process that outlives the test with its stdout or stderr (a server's
# connection process whose listener has gone, a forgotten client) makes a
# passed test a timeout. Such processes are named and killed here; all of
# them descend from this test, the only writer of its own output pipe.
lh_stop_output_holders() {
    local pipes=() f target pid holders=() ancestors=" $$ " p=$$
    for f in /proc/$$/fd/1 /proc/$$/fd/2; do
        target=$(readlink "$f" 2>/dev/null) || continue
        # (find -lname takes a glob: the brackets of "pipe:[N]" escaped)
        case $target in pipe:*) pipes+=("$(printf '%s' "$target" | sed 's/[][*?\\]/\\&/g')") ;; esac
    done
    [ ${#pipes[@]} -gt 0 ] || return 0
    # The reader (ctest) and the shells above this one hold it too.
    local key value
    while [ "$p" -gt 1 ]; do
        value=
        while read -r key value; do
            [ "$key" = PPid: ] && break
        done <"/proc/$p/status" 2>/dev/null || true
        [ -n "$value" ] || break
        p=$value
        ancestors+="$p "
    done
    for f in $(find /proc/[0-9]*/fd -maxdepth 1 -type l \( -lname "${pipes[0]}" -o -lname "${pipes[-1]}" \) 2>/dev/null); do
        pid=${f#/proc/}
        pid=${pid%%/*}
        case $ancestors in *" $pid "*) continue ;; esac
        case " ${holders[*]:-} " in *" $pid "*) continue ;; esac
        # Writers only (the read end, ctest's, may be shared further up).
        [ "$(awk '/^flags:/ { print substr($2, length($2)) }' "/proc/$pid/fdinfo/${f##*/}" 2>/dev/null)" = 1 ] || continue
        holders+=("$pid")
    done
    for pid in "${holders[@]:-}"; do
        [ -n "$pid" ] || continue
        echo "warning: $(ps -o user=,args= -p "$pid" 2>/dev/null | cut -c1-120) ($pid) still holds this test's output at exit; killed" >&2
        kill -KILL "$pid" 2>/dev/null || true
    done
}

lh_cleanup() {
    local rc=$? pid f
    declare -F lh_cleanup_users >/dev/null && lh_cleanup_users
    for f in "${LH_CLEANUP_FILES[@]:-}"; do
        [ -n "$f" ] && rm -f -- "$f"
    done
    lh_stop_pids "${LH_PIDS[@]:-}"
    lh_stop_output_holders
    # Sanitizer reports from anything the test ran (read after the servers
    # have exited, so their leak checks are in). One line is not a finding:
    # a process forked from one with threads (ssh after ~& or -f) still has
    # the parent's other threads in LeakSanitizer's registry, and its
    # exit-time leak check says "Running
    # thread N was not suspended. False leaks are possible." (clang 14;
    # shown with a 10-line program). A file with nothing else is set aside;
    # any other line, a leak report included, still fails the test.
    local reports
    for f in $(find "$LH_SAN_DIR" -type f -size +0 2>/dev/null); do
        if ! grep -qvE '^==[0-9]+==Running thread [0-9]+ was not suspended\. False leaks are possible\.$' "$f"; then
            echo "note: LeakSanitizer's 'thread not suspended' notice from a forked child ($(basename "$f")), not a finding" >&2
            rm -f "$f"
        fi
    done
    reports=$(find "$LH_SAN_DIR" -type f -size +0 2>/dev/null)
    if [ -n "$reports" ]; then
        for f in $reports; do
            echo "--- sanitizer report $f" >&2
            head -n 60 "$f" >&2
        done
        echo "FAIL: sanitizer reports ($(echo "$reports" | wc -l) files) from processes this test started" >&2
        rc=1
    fi
    rm -rf "$LH_SAN_DIR"
    if [ "${LH_KEEP_TMP:-0}" = 1 ]; then
        echo "regress: kept $LH_TMP" >&2
    else
        rm -rf "$LH_TMP"
    fi
    exit "$rc"
}
trap lh_cleanup EXIT
trap 'exit 130' INT TERM

# Appends "LH_NAME: TEXT" to $LONGHAUL_SKIP_LOG (contrib/run-tests.sh lists it).
lh_record_skip() {
    if [ -n "${LONGHAUL_SKIP_LOG:-}" ]; then
        printf '%s: %s\n' "$LH_NAME" "$*" >>"$LONGHAUL_SKIP_LOG"
    fi
}

# lh_skip REASON: this machine cannot run the test at all (ctest: Skipped).
lh_skip() {
    echo "SKIP: $*"
    lh_record_skip "$*"
    exit "$LH_SKIP"
}

lh_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

lh_require_openssh_server() {
    [ -x "$LH_SSHD" ] || lh_skip "OpenSSH sshd not found at $LH_SSHD (contrib/install-deps.sh installs openssh-server)"
    [ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found (openssh-client)"
}

# Host keys of every type in $1: ssh_host_{ed25519,ecdsa256,ecdsa384,ecdsa521,rsa}_key.
lh_make_host_keys() {
    local dir=$1
    "$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$dir/ssh_host_ed25519_key"
    local bits
    for bits in 256 384 521; do
        "$LH_SSH_KEYGEN" -q -t ecdsa -b "$bits" -N '' -f "$dir/ssh_host_ecdsa${bits}_key"
    done
    "$LH_SSH_KEYGEN" -q -t rsa -b 2048 -N '' -f "$dir/ssh_host_rsa_key"
}

# lh_known_hosts DIR PORT: DIR/known_hosts.PORT, naming the host keys
# lh_make_host_keys made in DIR as those of [127.0.0.1]:PORT.
lh_known_hosts() {
    local dir=$1 port=$2 k
    for k in ed25519 ecdsa256 ecdsa384 ecdsa521 rsa; do
        echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$dir/ssh_host_${k}_key.pub")"
    done >"$dir/known_hosts.$port"
}

# lh_ssh_to DIR PORT KEY [ssh args...]: OpenSSH's ssh to PORT with KEY alone
# (no configuration file, no agent, never a password prompt), the host key
# checked against DIR/known_hosts.PORT (lh_known_hosts).
lh_ssh_to() {
    local dir=$1 port=$2 key=$3
    shift 3
    ssh -F /dev/null -p "$port" -o "UserKnownHostsFile=$dir/known_hosts.$port" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$key" "$@"
}

# lh_write_sshd_config DIR PORT [extra sshd_config lines...]
# Writes DIR/sshd_config: the caller's lines, then the test defaults (host
# keys DIR/ssh_host_*_key, DIR/authorized_keys, VERBOSE log).
lh_write_sshd_config() {
    local dir=$1 port=$2
    shift 2
    {
        # The caller's lines first: sshd_config is first-value-wins (except
        # for a few keywords such as MaxStartups, so no default is set for those).
        local line
        for line in "$@"; do
            echo "$line"
        done
        echo "Port $port"
        echo "ListenAddress 127.0.0.1"
        local k
        for k in ed25519 ecdsa256 ecdsa384 ecdsa521 rsa; do
            echo "HostKey $dir/ssh_host_${k}_key"
        done
        echo "PidFile $dir/sshd.pid"
        echo "AuthorizedKeysFile $dir/authorized_keys"
        echo "UsePAM no"
        echo "StrictModes no"
        echo "LogLevel VERBOSE"
        # No sntrup761x25519 unless the test asks for it (LH_SSHD_ALL_KEX=1,
        # or its own KexAlgorithms line, which comes first and wins):
        # Debian's ssh prefers it and spends 70 ms of CPU a login on its
        # key generation, half of a login's CPU (docs/TESTING.md). The
        # tests about key exchange (pq_kex_interop, openssh_transport_interop,
        # sshd_interop's kex checks) still cover it both ways.
        [ "${LH_SSHD_ALL_KEX:-0}" = 1 ] || echo "KexAlgorithms -sntrup761x25519-sha512*"
        echo "Subsystem sftp ${LH_SFTP_SERVER:-/usr/lib/openssh/sftp-server}"
        # Sessions as root must not run the machine's ~/.bashrc: Debian's
        # bash reads it for a command over SSH unless SHLVL says it is a
        # nested shell, and a root .bashrc that runs `pyenv init` (as on CI's
        # machines) costs half a second a command and could print into an
        # output the tests compare. Issue 14: no dependence on the machine's
        # own config files. (A caller's own SetEnv line comes first and wins.)
        echo "SetEnv SHLVL=1"
        # Match blocks go last, where they cannot swallow the lines above
        # (LH_SSHD_TAIL: newline-separated).
        [ -z "${LH_SSHD_TAIL:-}" ] || printf '%s\n' "$LH_SSHD_TAIL"
    } >"$dir/sshd_config"
}

# lh_start_sshd DIR PORT [extra sshd_config lines...]
# Writes DIR/sshd_config (the extra lines first, LH_SSHD_TAIL's last), checks it with sshd -t, starts sshd -D -e in the
# background (log in DIR/sshd.log) and waits until the port accepts.
lh_start_sshd() {
    local dir=$1 port=$2
    shift 2
    if [ "$(id -u)" = 0 ]; then
        # sshd's privilege separation needs its empty directory; Debian's
        # service creates it at boot, a container may not have it.
        [ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 0755 /run/sshd; }
    fi
    lh_write_sshd_config "$dir" "$port" "$@"
    "$LH_SSHD" -t -f "$dir/sshd_config" || lh_fail "sshd -t rejected the test config"
    "$LH_SSHD" -D -e -f "$dir/sshd_config" 2>"$dir/sshd.log" &
    LH_PIDS+=($!)
    local i
    for i in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        kill -0 "${LH_PIDS[-1]}" 2>/dev/null || { cat "$dir/sshd.log" >&2; lh_fail "sshd exited at start"; }
        sleep 0.05
    done
    cat "$dir/sshd.log" >&2
    lh_fail "sshd did not start listening on port $port"
}

# lh_make_user PASSWORD: creates a test user with a unique name, a home
# directory and the given password, and sets LH_USER to its name; removed by
# the cleanup trap. Call it directly, not in $(...): the user must be
# recorded in this shell for the cleanup to find it. Needs root.
LH_USERS=()
lh_make_user() {
    local name="lhtest$$_${#LH_USERS[@]}"
    LH_USERS+=("$name")
    useradd -m -s /bin/bash "$name" >/dev/null 2>&1 || lh_fail "useradd $name failed"
    echo "$name:$1" | chpasswd || lh_fail "chpasswd failed"
    LH_USER=$name
}

# lh_file_transfer_servers DEBIAN_SUBSYSTEM LONGHAUL_SSHD: the setup the
# scp and sftp interop scripts share: a test user ($user, its home in
# $home; $LH_TMP is made traversable for it), a key $LH_TMP/id that logs it
# in, and two servers on their own ports: Debian's sshd with
# DEBIAN_SUBSYSTEM as its sftp subsystem ($port_debian) and LONGHAUL_SSHD
# with internal-sftp ($port_longhaul).
lh_file_transfer_servers() {
    local sub=$1 lsshd=$2
    lh_make_user "pw-$RANDOM"
    user=$LH_USER
    home=$(getent passwd "$user" | cut -d: -f6)
    chmod 711 "$LH_TMP"
    "$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$LH_TMP/id"
    lh_make_host_keys "$LH_TMP"
    LH_SFTP_SERVER=$sub lh_start_named_sshd debian /usr/sbin/sshd
    LH_SFTP_SERVER=internal-sftp lh_start_named_sshd longhaul "$lsshd"
}

# lh_start_named_sshd NAME SSHD [sshd_config lines...]: SSHD in
# $LH_TMP/srv-NAME with the host keys lh_make_host_keys made in $LH_TMP,
# $LH_TMP/id.pub as its authorized_keys when there is one (else an empty
# file), and srv-NAME/known_hosts.PORT (lh_known_hosts); sets port_NAME.
lh_start_named_sshd() {
    local name=$1 sshd=$2 d="$LH_TMP/srv-$1" p
    shift 2
    mkdir -p "$d" && chmod 711 "$d"
    cp "$LH_TMP"/ssh_host_* "$d/"
    if [ -e "$LH_TMP/id.pub" ]; then cp "$LH_TMP/id.pub" "$d/authorized_keys"; else : >"$d/authorized_keys"; fi
    chmod 644 "$d/authorized_keys"
    lh_port p
    LH_SSHD=$sshd lh_start_sshd "$d" "$p" "$@"
    lh_known_hosts "$d" "$p"
    printf -v "port_$name" %s "$p"
}

lh_cleanup_users() {
    local u i
    for u in "${LH_USERS[@]:-}"; do
        [ -n "$u" ] || continue
        # userdel refuses a user that still has processes, and a session's
        # processes can take a moment to exit (seconds under ASan): wait for
        # them, then kill what is left. A user left behind was seen after
        # CI's asan stage.
        pkill -u "$u" 2>/dev/null || true
        for i in $(seq 1 50); do
            pgrep -u "$u" >/dev/null 2>&1 || break
            sleep 0.1
        done
        pkill -KILL -u "$u" 2>/dev/null || true
        for i in $(seq 1 20); do
            pgrep -u "$u" >/dev/null 2>&1 || break
            sleep 0.1
        done
        userdel -r "$u" >/dev/null 2>&1 || echo "warning: could not remove test user $u" >&2
    done
}

# Counts checks and reports them; lh_check NAME COMMAND... runs the command.
# The command runs in an 'if', so set -e does not apply inside it: a check
# function must chain every step that matters with && (or return early).
LH_CHECKS=0
LH_FAILED=0
LH_SKIPPED=0
lh_check() {
    local name=$1 t0=$EPOCHREALTIME took
    shift
    LH_CHECKS=$((LH_CHECKS + 1))
    # Each line carries its time: CI has a budget (docs/TESTING.md), and this
    # is where a script's share of it shows.
    if "$@"; then
        took=$(lh_seconds_since "$t0")
        echo "ok   $name (${took} s)"
    else
        took=$(lh_seconds_since "$t0")
        echo "FAIL $name (${took} s)"
        LH_FAILED=$((LH_FAILED + 1))
    fi
}

# lh_seconds_since EPOCHREALTIME: the seconds since then, to a tenth.
lh_seconds_since() {
    local now=$EPOCHREALTIME
    local us=$(((${now//[.,]/} - ${1//[.,]/}) / 100000))
    echo "$((us / 10)).$((us % 10))"
}

# lh_skip_check NAME REASON: a check this machine cannot run. Recorded in
# the skip log; it counts as a failure unless LONGHAUL_ALLOW_SKIP=1.
lh_skip_check() {
    local name=$1 reason=$2
    LH_SKIPPED=$((LH_SKIPPED + 1))
    lh_record_skip "$name: $reason"
    if [ "${LONGHAUL_ALLOW_SKIP:-0}" = 1 ]; then
        echo "SKIP $name: $reason"
    else
        echo "FAIL $name: skipped: $reason (LONGHAUL_ALLOW_SKIP=1 allows skips)"
        LH_FAILED=$((LH_FAILED + 1))
    fi
}

# lh_matches GREP-ARGS...: standard input has a line that grep, given
# these arguments, matches; for `PRODUCER | lh_matches PATTERN` instead of
# `PRODUCER | grep -q PATTERN`. grep -q exits at the first match, so a
# producer still writing (tr or tail over a log longer than its buffer) dies
# of SIGPIPE, and pipefail turns that into a failed check now and then.
# This reads its input to the end.
lh_matches() {
    local n
    n=$(grep -c "$@") || true
    [ "${n:-0}" -gt 0 ]
}

# lh_tos_while FILTER COMMAND...: runs COMMAND in the background (an ssh
# whose remote command prints "ready", then waits) and, once "ready" has
# come, prints the TOS byte of the established connections ss's FILTER
# selects ("dst 127.0.0.1:PORT": a client's socket; "sport = :PORT": a
# server's); then stops it. ss prints no tos for 0 (IPQoS none).
lh_tos_while() {
    local filter=$1 out=$LH_TMP/tos.out pid
    shift
    : >"$out"
    "$@" >"$out" 2>/dev/null </dev/null &
    pid=$!
    lh_wait_until 10 grep -q ready "$out" || echo "no session"
    ss -Htn --tos state established "$filter" | grep -o 'tos:0x[0-9a-f]*' | sort -u | paste -sd, -
    lh_stop_pids "$pid"
}

lh_summary() {
    echo "$LH_CHECKS checks, $LH_FAILED failed, $LH_SKIPPED skipped"
    [ "$LH_FAILED" = 0 ]
}

# lh_wait_until SECONDS COMMAND...: polls COMMAND every 50 ms until it
# succeeds (status 0) or SECONDS have passed (status 1).
# lh_split_env [VAR=VALUE...] -- ARGS...: sets LH_ENV to the words before
# "--" (an environment for env) and LH_ARGS to those after it.
lh_split_env() {
    LH_ENV=()
    while [ "$1" != -- ]; do
        LH_ENV+=("$1")
        shift
    done
    shift
    LH_ARGS=("$@")
}

lh_wait_until() {
    local _lh_limit=$1 _lh_i
    shift
    for ((_lh_i = 0; _lh_i < _lh_limit * 20; _lh_i++)); do
        "$@" && return 0
        sleep 0.05
    done
    "$@"
}

# lh_port VAR: sets VAR to a TCP port for this test, held until the test
# exits. Ports come from 20000-29999, below the kernel's ephemeral range
# (32768 up), so no outgoing connection is ever given one. A port is ours
# while we hold an exclusive flock on its lock file; the lock's descriptor
# stays open in this shell (and in the servers it starts, which inherit it)
# until they exit, so parallel scripts (ctest -j) never get the same port,
# and nothing may be bound to it when it is chosen. Unlike bind-close-rebind,
# no window exists in which another test can take it.
LH_PORT_LOCK_DIR=${LH_PORT_LOCK_DIR:-${TMPDIR:-/tmp}/longhaul-ports}
lh_port() {
    # (Locals are prefixed: printf -v must not land on one of them.)
    local _lh_var=$1 _lh_p _lh_fd _lh_f _lh_i
    mkdir -p "$LH_PORT_LOCK_DIR"
    chmod 1777 "$LH_PORT_LOCK_DIR" 2>/dev/null || true
    for ((_lh_i = 0; _lh_i < 500; _lh_i++)); do
        _lh_p=$((20000 + (RANDOM * 32768 + RANDOM) % 10000))
        _lh_f=$LH_PORT_LOCK_DIR/$_lh_p.lock
        [ -e "$_lh_f" ] || : >"$_lh_f" 2>/dev/null || continue
        exec {_lh_fd}<"$_lh_f" || continue
        if flock -n "$_lh_fd"; then
            # Nothing bound to it: no listener, no connection in any state.
            if [ -z "$(ss -Htan "sport = :$_lh_p" 2>/dev/null)" ] &&
                ! (exec 3<>"/dev/tcp/127.0.0.1/$_lh_p") 2>/dev/null; then
                printf -v "$_lh_var" %s "$_lh_p"
                return 0
            fi
        fi
        exec {_lh_fd}<&-
    done
    lh_fail "lh_port: no free port in 20000-29999"
}

# An askpass helper that answers every prompt with $LH_ASKPASS_ANSWER.
lh_askpass() {
    local f="$LH_TMP/askpass.sh"
    printf '#!/bin/sh\nprintf "%%s\\n" "$LH_ASKPASS_ANSWER"\n' >"$f"
    chmod +x "$f"
    echo "$f"
}

# lh_in_pty COMMAND: runs the shell command COMMAND on a new terminal
# (script(1)) and prints what the terminal showed. script's own input is a
# FIFO held open read-write, so it never reaches end of file: at EOF util-linux
# script types the terminal's EOF character into the terminal, which a remote
# pty then echoes (as ^@ through ssh's raw mode) at a random place in the
# output.
lh_in_pty() {
    local hold="$LH_TMP/lh_in_pty.fifo"
    [ -p "$hold" ] || mkfifo "$hold"
    timeout 20 script -qc "$1" /dev/null <>"$hold"
}
