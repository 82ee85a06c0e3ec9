# shellcheck shell=bash
# Shared by regress/wan_*.sh and contrib/bench/wan: an emulated WAN
# (regress/wanem/wanem-net) with an sshd in the "server" namespace and
# ssh/scp/sftp run from the "client" namespace. Source it; it defines
# functions only.
#
# Cleanup: every resource is registered with wan_on_exit before or right
# after it is created, and wan_install_trap runs the registrations in reverse
# order on EXIT, INT, TERM and HUP. Each registered action is idempotent and
# only touches what this script created: its namespaces (by name), its
# processes (by PID, checked against the expected program), its user and its
# temporary directory.

wan_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
wan_repo_root=$(cd "$wan_lib_dir/.." && pwd)
WANEM_NET=$wan_lib_dir/wanem/wanem-net
WAN_SSH_PORT=2222

wan_skip() {
    echo "SKIP: $*" >&2
    exit 77
}

wan_log() { echo "[$(date +%T)] $*" >&2; }

wan_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# --- cleanup registry -------------------------------------------------------

wan_cleanups=()

wan_on_exit() { wan_cleanups+=("$1"); }

wan_run_cleanups() {
    local i
    for ((i = ${#wan_cleanups[@]} - 1; i >= 0; i--)); do
        eval "${wan_cleanups[i]}" || true
    done
    wan_cleanups=()
}

wan_install_trap() {
    trap 'wan_rc=$?; trap - EXIT INT TERM HUP; wan_run_cleanups; exit $wan_rc' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
}

# Kills PID only if it still runs a program whose command line contains
# PATTERN (PIDs get reused; never kill a stranger).
wan_kill_pid() {
    local pid=$1 pattern=$2 i
    [[ -n $pid ]] || return 0
    { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -- "$pattern" || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 30); do
        { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -- "$pattern" || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

# --- prerequisites ----------------------------------------------------------

# A program built by this project (wanem, wan_meter): $WAN_BUILD_DIR/bin first
# (ctest passes the build tree), then the usual build directories.
wan_find_built() {
    local name=$1 c
    for c in ${WAN_BUILD_DIR:+"$WAN_BUILD_DIR/bin/$name"} "$wan_repo_root/build/bin/$name" \
             "$wan_repo_root/build-wan/bin/$name"; do
        [[ -x $c ]] && { echo "$c"; return 0; }
    done
    return 1
}

# Skips (exit 77) with a clear message when the machine cannot run the
# emulated WAN. Extra arguments name commands the caller needs.
wan_require() {
    [[ $(uname -s) == Linux ]] || wan_skip "emulated WAN needs Linux"
    [[ $(id -u) -eq 0 ]] || wan_skip "emulated WAN needs root (network namespaces, TUN devices)"
    [[ -c /dev/net/tun ]] || wan_skip "/dev/net/tun missing (no TUN support)"
    command -v ip >/dev/null || wan_skip "ip (iproute2) missing: run contrib/install-deps.sh"
    WANEM=$(wan_find_built wanem) || wan_skip "wanem not built (cmake --build BUILD --target wanem)"
    WAN_METER=$(wan_find_built wan_meter) || wan_skip "wan_meter not built (cmake --build BUILD --target wan_meter)"
    export WANEM WAN_METER
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null || wan_skip "$c missing: run contrib/install-deps.sh"
    done
    # Instances left by a run that was killed outright (SIGKILL).
    "$WANEM_NET" gc || true
    wan_gc_users
}

# --- the emulated link ------------------------------------------------------

# wan_up NAME [wanem-net up options]: brings an instance up and imports its
# WAN_* variables (namespaces, addresses, wanem PID).
wan_up() {
    local name=$1
    shift
    wan_on_exit "wan_down_if_up $name"
    "$WANEM_NET" up "$name" --owner $$ "$@"
    eval "$("$WANEM_NET" env "$name")"
}

wan_down() { "$WANEM_NET" down "$1"; }

wan_down_if_up() {
    [[ -d ${WANEM_STATE_DIR:-/run/longhaul-wanem}/$1 ]] || return 0
    "$WANEM_NET" down "$1"
}

wan_client() { ip netns exec "$WAN_NS_CLIENT" "$@"; }
wan_server() { ip netns exec "$WAN_NS_SERVER" "$@"; }

# Waits until something listens on TCP PORT in the server namespace.
wan_wait_listen() {
    local port=$1 i
    for i in $(seq 200); do
        wan_server ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
        sleep 0.05
    done
    return 1
}

# --- SSH implementations ----------------------------------------------------

# Implementations as NAME:SSH:SSHD. OpenSSH from Debian always; Longhaul's
# own build as soon as both programs exist (WAN_SKIP_LONGHAUL=1 opts out).
wan_default_impls() {
    echo "openssh:/usr/bin/ssh:/usr/sbin/sshd"
    local bin
    for bin in ${WAN_BUILD_DIR:+"$WAN_BUILD_DIR/bin"} "$wan_repo_root/build/bin"; do
        if [[ -z ${WAN_SKIP_LONGHAUL:-} && -x $bin/ssh && -x $bin/sshd ]]; then
            echo "longhaul:$bin/ssh:$bin/sshd"
            return 0
        fi
    done
}

# Sets WAN_IMPL, WAN_SSH, WAN_SSHD, WAN_SCP, WAN_SFTP, WAN_SFTP_SERVER from a
# NAME:SSH:SSHD spec. scp and sftp are taken from beside ssh when present
# (else Debian's) and always pointed at WAN_SSH with -S; the sftp server
# from beside sshd when present (else Debian's).
wan_select_impl() {
    local spec=$1
    IFS=: read -r WAN_IMPL WAN_SSH WAN_SSHD <<<"$spec"
    [[ -n $WAN_IMPL && -x $WAN_SSH && -x $WAN_SSHD ]] || wan_fail "bad implementation '$spec' (NAME:SSH_PATH:SSHD_PATH)"
    local d
    d=$(dirname "$WAN_SSH")
    WAN_SCP=/usr/bin/scp
    [[ -x $d/scp ]] && WAN_SCP=$d/scp
    WAN_SFTP=/usr/bin/sftp
    [[ -x $d/sftp ]] && WAN_SFTP=$d/sftp
    d=$(dirname "$WAN_SSHD")
    WAN_SFTP_SERVER=/usr/lib/openssh/sftp-server
    [[ -x $d/sftp-server ]] && WAN_SFTP_SERVER=$d/sftp-server
    return 0
}

# --- CPU accounting by cgroup -----------------------------------------------

# Base of a cgroup hierarchy that counts CPU: cgroup v2 (pure or hybrid
# mount), else v1 cpuacct. Empty when there is none.
wan_cg_base() {
    local b
    for b in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        [[ -f $b/cgroup.controllers && -w $b ]] && { echo "$b"; return 0; }
    done
    [[ -f /sys/fs/cgroup/cpuacct/cpuacct.usage && -w /sys/fs/cgroup/cpuacct ]] && echo /sys/fs/cgroup/cpuacct
    return 0
}

# wan_cg_create LABEL: a new cgroup lhw-<our PID>-LABEL in WAN_CG, removed on
# exit. Returns 1 where cgroups cannot be used.
wan_cg_create() {
    local base
    base=$(wan_cg_base)
    [[ -n $base ]] || return 1
    WAN_CG=$base/lhw-$$-$1
    mkdir "$WAN_CG" 2>/dev/null || return 1
    wan_on_exit "wan_cg_remove '$WAN_CG'"
}

# CPU seconds used by everything that has been in cgroup $1.
wan_cg_cpu_s() {
    if [[ -f $1/cpu.stat ]]; then
        awk '/^usage_usec/ { printf "%.4f\n", $2 / 1e6 }' "$1/cpu.stat"
    else
        awk '{ printf "%.4f\n", $1 / 1e9 }' "$1/cpuacct.usage"
    fi
}

# Moves any process still in cgroup $1 to its parent, then removes it
# (retrying: a process may still be forking into it).
wan_cg_remove() {
    local cg=$1 pid i
    for i in $(seq 20); do
        [[ -d $cg ]] || return 0
        while read -r pid; do
            echo "$pid" >"$(dirname "$cg")/cgroup.procs" 2>/dev/null || true
        done <"$cg/cgroup.procs"
        rmdir "$cg" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "wan: could not remove cgroup $cg" >&2
}

# --- test user, keys, sshd --------------------------------------------------

# Test users are named lhw<PID of the script that made them>, cgroups
# lhw-<PID>-*; those whose script has died (killed outright) are removed by
# the next run.
wan_gc_users() {
    local cg base
    base=$(wan_cg_base)
    if [[ -n $base ]]; then
        for cg in "$base"/lhw-*; do
            [[ -d $cg && $(basename "$cg") =~ ^lhw-([0-9]+)- ]] || continue
            kill -0 "${BASH_REMATCH[1]}" 2>/dev/null && continue
            wan_cg_remove "$cg"
        done
    fi
    local u pid
    while IFS=: read -r u _; do
        [[ $u =~ ^lhw([0-9]+)$ ]] || continue
        pid=${BASH_REMATCH[1]}
        kill -0 "$pid" 2>/dev/null && continue
        getent passwd "$u" | grep -q 'longhaul wan test' || continue
        echo "wan: removing stale test user $u" >&2
        userdel "$u" 2>/dev/null || true
    done < <(getent passwd)
}

# Creates WAN_TMP (world-readable), a test user WAN_USER with /bin/sh and a
# home inside WAN_TMP, an ed25519 host key and a client key. A dedicated user
# keeps root's shell start-up files (and anything they print) out of the
# measurements and the scp/sftp protocol streams.
wan_ssh_prepare() {
    local base=${1:-/tmp}
    WAN_TMP=$(mktemp -d "$base/lhw-wan.XXXXXX")
    wan_on_exit "rm -rf -- '$WAN_TMP'"
    chmod 755 "$WAN_TMP"
    WAN_USER=lhw$$
    getent passwd "$WAN_USER" >/dev/null && wan_fail "user $WAN_USER already exists"
    wan_on_exit "getent passwd $WAN_USER >/dev/null && userdel $WAN_USER"
    mkdir -p "$WAN_TMP/home" "$WAN_TMP/srv"
    # '*' rather than useradd's '!': with UsePAM no, sshd refuses a locked
    # account even for public-key logins.
    useradd -M -N -g nogroup -d "$WAN_TMP/home" -s /bin/sh -p '*' \
        -c "longhaul wan test (pid $$)" "$WAN_USER"
    chown "$WAN_USER" "$WAN_TMP/home" "$WAN_TMP/srv"
    ssh-keygen -q -t ed25519 -N '' -C wan-host -f "$WAN_TMP/host_ed25519" </dev/null
    ssh-keygen -q -t ed25519 -N '' -C wan-client -f "$WAN_TMP/id_ed25519" </dev/null
    cp "$WAN_TMP/id_ed25519.pub" "$WAN_TMP/authorized_keys"
    chmod 644 "$WAN_TMP/authorized_keys"
}

# Starts WAN_SSHD in the server namespace on WAN_SERVER_ADDR:WAN_SSH_PORT
# with a private configuration, and writes the client's configuration.
# Extra arguments are appended to sshd_config.
wan_sshd_start() {
    local cfg=$WAN_TMP/sshd_config.$WAN_NAME
    # OpenSSH's pre-authentication sandbox chroots here; the openssh-server
    # package creates it at boot (tmpfiles.d), so creating it is harmless.
    [[ -d /run/sshd ]] || { mkdir -p /run/sshd && chmod 755 /run/sshd; }
    {
        echo "Port $WAN_SSH_PORT"
        echo "ListenAddress $WAN_SERVER_ADDR"
        echo "HostKey $WAN_TMP/host_ed25519"
        echo "PidFile none"
        echo "UsePAM no"
        echo "StrictModes no"
        echo "AuthorizedKeysFile $WAN_TMP/authorized_keys"
        echo "AllowUsers $WAN_USER"
        echo "PasswordAuthentication no"
        echo "KbdInteractiveAuthentication no"
        echo "PermitRootLogin no"
        echo "PrintMotd no"
        echo "PrintLastLog no"
        echo "UseDNS no"
        echo "X11Forwarding no"
        echo "MaxStartups 100"
        echo "LogLevel ERROR"
        echo "Subsystem sftp $WAN_SFTP_SERVER"
        local extra
        for extra in "$@"; do echo "$extra"; done
    } >"$cfg"
    # Everything sshd forks stays in this cgroup, so its CPU can be counted
    # even for processes that are orphaned and reaped by init (OpenSSH's
    # per-connection processes are); optional, the tests do not need it.
    # Created (and registered for removal) before sshd starts, so that on
    # exit sshd is stopped first and the cgroup removed after it.
    WAN_SSHD_CG=""
    wan_cg_create "sshd-$WAN_NAME" && WAN_SSHD_CG=$WAN_CG
    # Not through wan_server: a function run with & is a subshell, and $!
    # must be sshd itself ('ip netns exec' execs it in place).
    ip netns exec "$WAN_NS_SERVER" "$WAN_SSHD" -f "$cfg" -D -E "$WAN_TMP/sshd.$WAN_NAME.log" &
    WAN_SSHD_PID=$!
    wan_on_exit "wan_kill_pid $WAN_SSHD_PID '$cfg'"
    if [[ -n $WAN_SSHD_CG ]]; then
        echo "$WAN_SSHD_PID" >"$WAN_SSHD_CG/cgroup.procs" 2>/dev/null || WAN_SSHD_CG=""
    fi
    if ! wan_wait_listen "$WAN_SSH_PORT"; then
        cat "$WAN_TMP/sshd.$WAN_NAME.log" >&2 || true
        wan_fail "$WAN_SSHD did not start listening"
    fi
    WAN_SSH_CONFIG=$WAN_TMP/ssh_config
    {
        echo "Host wan-server"
        echo "  HostName $WAN_SERVER_ADDR"
        echo "  Port $WAN_SSH_PORT"
        echo "  User $WAN_USER"
        echo "  IdentityFile $WAN_TMP/id_ed25519"
        echo "  IdentitiesOnly yes"
        echo "  UserKnownHostsFile $WAN_TMP/known_hosts"
        echo "  GlobalKnownHostsFile /dev/null"
        echo "  StrictHostKeyChecking yes"
        echo "  UpdateHostKeys no"
        echo "  BatchMode yes"
        echo "  ControlMaster no"
        echo "  ControlPath none"
        echo "  LogLevel ERROR"
    } >"$WAN_SSH_CONFIG"
    echo "[$WAN_SERVER_ADDR]:$WAN_SSH_PORT $(cut -d' ' -f1,2 "$WAN_TMP/host_ed25519.pub")" >"$WAN_TMP/known_hosts"
}

wan_sshd_stop() { wan_kill_pid "$WAN_SSHD_PID" "$WAN_TMP/sshd_config.$WAN_NAME"; }

# ssh / scp / sftp from the client namespace to the server.
wan_ssh() { wan_client "$WAN_SSH" -F "$WAN_SSH_CONFIG" wan-server "$@"; }
wan_scp() { wan_client "$WAN_SCP" -q -F "$WAN_SSH_CONFIG" -S "$WAN_SSH" "$@"; }
wan_sftp() { wan_client "$WAN_SFTP" -q -F "$WAN_SSH_CONFIG" -S "$WAN_SSH" "$@"; }
