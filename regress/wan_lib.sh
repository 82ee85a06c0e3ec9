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

# wan_payload MIB: MIB MiB of random data in $WAN_TMP/data/src, readable by
# the test user; sets data (the directory) and want (its SHA-256).
wan_payload() {
    data=$WAN_TMP/data
    mkdir -p "$data"
    chmod 755 "$data"
    head -c "$(($1 << 20))" /dev/urandom >"$data/src"
    chmod 644 "$data/src"
    want=$(sha256sum <"$data/src" | cut -d' ' -f1)
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
        echo "LogLevel ${WAN_SSHD_LOGLEVEL:-ERROR}"
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

# --- pairings and reference peers (contrib/bench/wan, issue 9) ----------------
# Added for the benchmark's client x server pairings; the functions above are
# unchanged. A pairing is one implementation's client (ssh, scp) against
# another's (or the same) server (sshd, sftp-server). Known implementations:
#   openssh    Debian's /usr/bin/ssh and /usr/sbin/sshd
#   longhaul   this build's ssh and sshd (as wan_default_impls finds them)
#   hpn        HPN-SSH from ../shared/peers (hpnssh, hpnsshd)
#   openssh10  OpenSSH 10.x from ../shared/peers
# The peers run from where they were built, with their helper paths given
# explicitly (../shared/peers/README.md).

# The folder of reference peer builds, if there is one.
wan_peers_dir() {
    local d=${WAN_PEERS_DIR:-$wan_repo_root/../shared/peers}
    [[ -d $d ]] || return 1
    (cd "$d" && pwd)
}

# wan_impl_paths NAME: prints "SSH SSHD" of a known implementation; fails
# when it is not on this machine.
wan_impl_paths() {
    local peers d spec
    case $1 in
        openssh)
            [[ -x /usr/bin/ssh && -x /usr/sbin/sshd ]] || return 1
            echo "/usr/bin/ssh /usr/sbin/sshd" ;;
        longhaul)
            spec=$(wan_default_impls | grep '^longhaul:') || return 1
            IFS=: read -r _ d spec <<<"$spec"
            echo "$d $spec" ;;
        hpn)
            peers=$(wan_peers_dir) || return 1
            d=$(printf '%s\n' "$peers"/hpn-ssh-* | sort -V | tail -n1)
            [[ -n $d && -x $d/bin/hpnssh && -x $d/sbin/hpnsshd ]] || return 1
            echo "$d/bin/hpnssh $d/sbin/hpnsshd" ;;
        openssh10)
            peers=$(wan_peers_dir) || return 1
            d=$(printf '%s\n' "$peers"/openssh-10* | sort -V | tail -n1)
            [[ -n $d && -x $d/bin/ssh && -x $d/sbin/sshd ]] || return 1
            echo "$d/bin/ssh $d/sbin/sshd" ;;
        *) return 1 ;;
    esac
}

# wan_pair_spec SPEC: normalises a pairing to NAME:SSH:SSHD. SPEC is either
# NAME:SSH:SSHD (as for --impl), a known implementation (both ends), or
# CLIENT/SERVER of known implementations, named CLIENT-client/SERVER-sshd.
wan_pair_spec() {
    local spec=$1 c s cp sp
    if [[ $spec == *:* ]]; then
        echo "$spec"
        return 0
    fi
    if [[ $spec == */* ]]; then
        c=${spec%%/*} s=${spec#*/}
    else
        c=$spec s=$spec
    fi
    cp=$(wan_impl_paths "$c") || { echo "wan: implementation '$c' not found on this machine" >&2; return 1; }
    sp=$(wan_impl_paths "$s") || { echo "wan: implementation '$s' not found on this machine" >&2; return 1; }
    if [[ $c == "$s" ]]; then
        echo "$c:${cp% *}:${sp#* }"
    else
        echo "$c-client/$s-sshd:${cp% *}:${sp#* }"
    fi
}

# The pairings measured when none are given: each implementation against
# itself (OpenSSH, Longhaul when built, HPN-SSH when ../shared/peers has it),
# and the two one-sided upgrades: Longhaul's client against Debian's sshd
# (download: a receiver-only upgrade) and Debian's client against
# Longhaul's sshd (upload from a stock sender).
wan_default_pairs() {
    local p
    for p in openssh longhaul hpn longhaul/openssh openssh/longhaul; do
        wan_pair_spec "$p" 2>/dev/null || true
    done
}

# wan_select_pair NAME:SSH:SSHD: wan_select_impl, then what the peers need:
#   WAN_SSH_OPTS   extra ssh arguments (hpnssh: -oFallback=no and an explicit -p)
#   WAN_SCP_OPTS   extra scp and sftp arguments (for HPN-SSH's, with -P)
#   WAN_SCP        hpnscp beside hpnssh
#   WAN_SFTP       hpnsftp beside hpnssh
#   WAN_SSHD_EXTRA sshd_config lines (SshdSessionPath/SshdAuthPath of a
#                  peer build whose compiled-in paths do not exist)
#   WAN_SFTP_SERVER the peer's own sftp-server from its libexec
#   WAN_SSHD_PRIVSEP_USER the unprivileged user the server needs
#   WAN_CLIENT_KIND / WAN_SERVER_KIND  hpn, openssh, longhaul or other
# shellcheck disable=SC2034 # set for the caller
wan_select_pair() {
    wan_select_impl "$1"
    local d sd
    WAN_SSH_OPTS=()
    WAN_SCP_OPTS=()
    WAN_SSHD_EXTRA=()
    WAN_SSHD_PRIVSEP_USER=""
    WAN_CLIENT_KIND=other
    WAN_SERVER_KIND=other
    d=$(dirname "$WAN_SSH")
    case $(basename "$WAN_SSH") in
        hpnssh)
            WAN_CLIENT_KIND=hpn
            WAN_SSH_OPTS=(-oFallback=no -p "$WAN_SSH_PORT")
            WAN_SCP_OPTS=(-oFallback=no -P "$WAN_SSH_PORT")
            [[ -x $d/hpnscp ]] && WAN_SCP=$d/hpnscp
            [[ -x $d/hpnsftp ]] && WAN_SFTP=$d/hpnsftp ;;
        ssh)
            if "$WAN_SSH" -V 2>&1 | grep -q '^OpenSSH'; then WAN_CLIENT_KIND=openssh
            elif "$WAN_SSH" -V 2>&1 | grep -qi longhaul; then WAN_CLIENT_KIND=longhaul; fi ;;
    esac
    sd=$(cd "$(dirname "$WAN_SSHD")/.." && pwd)/libexec
    case $(basename "$WAN_SSHD") in
        hpnsshd)
            WAN_SERVER_KIND=hpn
            WAN_SSHD_PRIVSEP_USER=hpnsshd
            [[ -x $sd/hpnsshd-session ]] && WAN_SSHD_EXTRA+=("SshdSessionPath $sd/hpnsshd-session")
            [[ -x $sd/hpnsshd-auth ]] && WAN_SSHD_EXTRA+=("SshdAuthPath $sd/hpnsshd-auth")
            [[ -x $sd/hpnsftp-server ]] && WAN_SFTP_SERVER=$sd/hpnsftp-server ;;
        sshd)
            if [[ $WAN_SSHD != /usr/sbin/sshd && -x $sd/sshd-session ]]; then
                # An OpenSSH 10 build run from where it was built.
                WAN_SERVER_KIND=openssh
                WAN_SSHD_PRIVSEP_USER=sshd
                WAN_SSHD_EXTRA+=("SshdSessionPath $sd/sshd-session")
                [[ -x $sd/sshd-auth ]] && WAN_SSHD_EXTRA+=("SshdAuthPath $sd/sshd-auth")
                [[ -x $sd/sftp-server ]] && WAN_SFTP_SERVER=$sd/sftp-server
            elif [[ $WAN_SSHD == /usr/sbin/sshd ]]; then
                WAN_SERVER_KIND=openssh
            elif [[ $(dirname "$WAN_SSHD") == $(dirname "$(wan_impl_paths longhaul 2>/dev/null | cut -d' ' -f2)") ]]; then
                WAN_SERVER_KIND=longhaul
            fi ;;
    esac
    return 0
}

# Privilege-separation users of peer servers have fixed, compiled-in names
# (hpnsshd), so they cannot be made unique: one is created only when
# missing, marked with our PID, and removed on exit only if it still carries
# that mark (a user someone else made is left alone). /var/empty, the peers'
# privsep directory, is created when missing and left in place (like
# /run/sshd above: standard, empty, and possibly in use by another test).
wan_peer_user_ensure() {
    local u=$1
    [[ -n $u ]] || return 0
    [[ -d /var/empty ]] || { mkdir -p /var/empty && chmod 755 /var/empty; }
    getent passwd "$u" >/dev/null && return 0
    wan_on_exit "wan_peer_user_remove $u"
    useradd -r -M -d /var/empty -s /usr/sbin/nologin -c "longhaul wan peer privsep (pid $$)" "$u"
}

wan_peer_user_remove() {
    getent passwd "$1" | grep -qF "longhaul wan peer privsep (pid $$)" || return 0
    userdel "$1" 2>/dev/null || true
}

# Peer privsep users left by a run that was killed outright.
wan_gc_peer_users() {
    local u c
    while IFS=: read -r u _ _ _ c _; do
        [[ $c =~ ^longhaul\ wan\ peer\ privsep\ \(pid\ ([0-9]+)\)$ ]] || continue
        kill -0 "${BASH_REMATCH[1]}" 2>/dev/null && continue
        echo "wan: removing stale peer user $u" >&2
        userdel "$u" 2>/dev/null || true
    done < <(getent passwd)
}

# wan_sshd_start_pair [sshd_config lines]: wan_sshd_start for the selected
# pairing (its privsep user, helper paths and sftp-server). Removes the
# cell's sshd cgroup left by the previous pairing first, so that each
# pairing's server CPU is counted by cgroup, not only the first one's.
wan_sshd_start_pair() {
    wan_peer_user_ensure "$WAN_SSHD_PRIVSEP_USER"
    local base
    base=$(wan_cg_base)
    [[ -n $base && -d $base/lhw-$$-sshd-$WAN_NAME ]] && wan_cg_remove "$base/lhw-$$-sshd-$WAN_NAME"
    wan_sshd_start "${WAN_SSHD_EXTRA[@]}" "$@"
}

# Stops the pairing's sshd and releases its cgroup.
wan_sshd_stop_pair() {
    wan_sshd_stop
    [[ -n ${WAN_SSHD_CG:-} ]] && wan_cg_remove "$WAN_SSHD_CG"
    return 0
}

# The selected client's ssh command, as an array in WAN_SSH_CMD:
# ssh -F CONFIG [peer options] (append the host and the command).
# shellcheck disable=SC2034 # set for the caller
wan_ssh_cmd() {
    WAN_SSH_CMD=("$WAN_SSH" -F "$WAN_SSH_CONFIG" "${WAN_SSH_OPTS[@]}")
}
