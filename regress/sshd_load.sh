#!/usr/bin/env bash
# Load and fault tests for Longhaul's sshd (issue 12, "What must be shown"):
#  1. N concurrent logins (OpenSSH's ssh, one ControlMaster connection
#     each), each moving checksummed data on C channels at once (half
#     uploads into sha256sum on the server, half downloads checked here);
#     nothing may be lost or corrupted;
#  2. a SIGHUP to the listener in the middle of that load: the live
#     sessions survive it and the re-executed listener takes new logins;
#  3. an extra login started during the load, timed, beside the same load
#     against Debian's OpenSSH sshd (both figures printed; no timed
#     assertion, DESIGN.md);
#  4. clients killed (SIGKILL) in the middle of transfers both ways: every
#     connection process and session of theirs ends, and the server serves
#     the next login.
# Sized for CI (2 cores, < 90 s): LH_LOAD_CLIENTS=12 logins x
# LH_LOAD_CHANNELS=4 channels x LH_LOAD_KIB=1024 KiB each by default. The
# issue's full size: LH_LOAD_CLIENTS=200 LH_LOAD_CHANNELS=4 LH_LOAD_KIB=4096
# (needs ulimit -n above 4096, a few minutes and LH_LOAD_TIMEOUT=600).
# Needs root (a test user).
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_BIN=$BUILD/bin/sshd
DEB_SSHD=${LH_OPENSSH_SSHD:-/usr/sbin/sshd}
CLIENTS=${LH_LOAD_CLIENTS:-12}
CHANNELS=${LH_LOAD_CHANNELS:-4}
KIB=${LH_LOAD_KIB:-1024}
[ -x "$LH_BIN" ] || lh_fail "sshd not built ($LH_BIN)"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
[ "$(id -u)" = 0 ] || lh_skip "needs root: a test user"
T=$LH_TMP
chmod 755 "$T"
echo "  load: $CLIENTS logins x $CHANNELS channels x $KIB KiB"

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C load-key -f "$T/id_user"
cp "$T/id_user.pub" "$T/authorized_keys"
chmod 644 "$T/authorized_keys"
lh_make_user "Pw-$RANDOM-$RANDOM"
user=$LH_USER
# The data: one file per channel slot, read by the server as the user.
mkdir -p "$T/data"
for ((c = 0; c < CHANNELS; c++)); do
    head -c $((KIB * 1024)) /dev/urandom >"$T/data/$c"
    sha256sum <"$T/data/$c" | cut -d' ' -f1 >"$T/data/$c.sha"
done
chmod -R a+rX "$T/data"

# Both servers: the same settings; MaxStartups wide enough that neither
# drops a login of the load (OpenSSH's default begins at 10).
server_lines=("MaxStartups 1000:30:2000" "MaxSessions $((CHANNELS + 2))")
start_server() { # start_server NAME PORTVAR SSHD
    local name=$1 var=$2 bin=$3 k
    mkdir -p "$T/$name"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$T/$name/"
    lh_port "$var"
    LH_SSHD=$bin lh_start_sshd "$T/$name" "${!var}" "${server_lines[@]}"
    for k in ed25519 ecdsa256 ecdsa384 ecdsa521 rsa; do
        echo "[127.0.0.1]:${!var} $(cut -d' ' -f1,2 "$T/ssh_host_${k}_key.pub")"
    done >"$T/known_hosts.${!var}"
}
# Every ssh runs under a deadline: a session that never ends fails its
# check instead of hanging the test (LH_LOAD_TIMEOUT, seconds).
ssh_to() { # ssh_to PORT [ssh args...]
    local port=$1
    shift
    timeout "${LH_LOAD_TIMEOUT:-60}" ssh -F /dev/null -p "$port" -o "UserKnownHostsFile=$T/known_hosts.$port" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id_user" \
        -o ConnectTimeout=60 "$@"
}

# One login: a master connection, then every channel at once over it.
# Even channels upload (the server's sha256sum must print the digest),
# odd ones download (checked here). Writes RESULT/ok.N or RESULT/bad.N.
one_login() {
    local port=$1 i=$2 out=$3 sock=$T/cm.$port.$i c pids=() ok=1 got
    ssh_to "$port" -M -S "$sock" -o ControlPersist=no -N "$user@127.0.0.1" 2>"$out/master.$i.err" &
    local master=$!
    lh_wait_until 60 test -S "$sock" || { echo "master $i did not start" >"$out/bad.$i"; kill "$master" 2>/dev/null; return; }
    for ((c = 0; c < CHANNELS; c++)); do
        if ((c % 2 == 0)); then
            ssh_to "$port" -S "$sock" "$user@127.0.0.1" sha256sum <"$T/data/$c" >"$out/ch.$i.$c" 2>&1 &
        else
            ssh_to "$port" -S "$sock" "$user@127.0.0.1" "cat $T/data/$c" 2>"$out/ch.$i.$c.err" |
                sha256sum >"$out/ch.$i.$c" &
        fi
        pids+=($!)
    done
    for ((c = 0; c < CHANNELS; c++)); do
        wait "${pids[c]}" || { ok=0; echo "login $i channel $c: ssh failed or did not end" >>"$out/bad.$i"; }
    done
    for ((c = 0; c < CHANNELS; c++)); do
        got=$(cut -d' ' -f1 "$out/ch.$i.$c" 2>/dev/null)
        [ "$got" = "$(cat "$T/data/$c.sha")" ] || { ok=0; echo "login $i channel $c: '$got'" >>"$out/bad.$i"; }
    done
    ssh_to "$port" -S "$sock" -O exit "$user@127.0.0.1" >/dev/null 2>&1 || true
    wait "$master" 2>/dev/null || true
    [ "$ok" = 1 ] && : >"$out/ok.$i"
}

# run_load NAME PORT [HUP_PID]: all logins at once; times an extra login
# started once they are under way; with HUP_PID, sends it SIGHUP mid-load.
# Sets load_ok, load_bad, extra_ms, load_s.
run_load() {
    local name=$1 port=$2 hup=${3:-} out=$T/load.$1 i pids=() start t0 t1
    mkdir -p "$out"
    start=$(date +%s%N)
    for ((i = 0; i < CLIENTS; i++)); do
        one_login "$port" "$i" "$out" &
        pids+=($!)
    done
    # The extra login once every master is connecting and data flows.
    sleep 1
    t0=$(date +%s%N)
    extra=$(ssh_to "$port" "$user@127.0.0.1" 'echo extra' 2>"$out/extra.err") || true
    t1=$(date +%s%N)
    extra_ms=$(((t1 - t0) / 1000000))
    [ "$extra" = extra ] || extra_ms=-1
    if [ -n "$hup" ]; then
        kill -HUP "$hup"
        hup_sent_at=$(date +%s%N)
    fi
    for p in "${pids[@]}"; do wait "$p" || true; done
    load_s=$(( ($(date +%s%N) - start) / 1000000 ))
    load_ok=$(find "$out" -name 'ok.*' | wc -l)
    load_bad=$(cat "$out"/bad.* 2>/dev/null | head -5 || true)
}

start_server lh port_lh "$LH_BIN"
listener_lh=${LH_PIDS[-1]}

login_after_hup() { [ "$(ssh_to "$port_lh" "$user@127.0.0.1" 'echo after-hup' 2>/dev/null)" = after-hup ]; }
check_load_with_sighup() {
    run_load lh "$port_lh" "$listener_lh"
    lh_extra_ms=$extra_ms
    echo "  Longhaul sshd: $load_ok/$CLIENTS logins with every digest right in $((load_s / 1000)).$((load_s % 1000 / 100)) s; extra login ${extra_ms} ms"
    [ -n "$load_bad" ] && echo "$load_bad" | sed 's/^/  /'
    [ "$load_ok" = "$CLIENTS" ] && [ "$extra_ms" -ge 0 ] &&
        grep -q "Received SIGHUP; restarting." "$T/lh/sshd.log" &&
        # The re-executed listener (same PID) serves new logins.
        kill -0 "$listener_lh" &&
        lh_wait_until 10 login_after_hup
}
lh_check "$CLIENTS logins x $CHANNELS channels, checksummed, SIGHUP mid-load: nothing lost, sessions survive" \
    check_load_with_sighup

# The same load against Debian's sshd, for the extra login's time.
if [ -x "$DEB_SSHD" ]; then
    start_server deb port_deb "$DEB_SSHD"
    check_openssh_load() {
        run_load deb "$port_deb"
        echo "  OpenSSH sshd:  $load_ok/$CLIENTS logins with every digest right in $((load_s / 1000)).$((load_s % 1000 / 100)) s; extra login ${extra_ms} ms"
        echo "  extra login during the load: Longhaul ${lh_extra_ms} ms, OpenSSH ${extra_ms} ms"
        [ "$load_ok" = "$CLIENTS" ]
    }
    lh_check "the same load against Debian's OpenSSH sshd (for comparison)" check_openssh_load
else
    lh_skip_check "the same load against Debian's OpenSSH sshd" "$DEB_SSHD not found (openssh-server)"
fi

# Clients killed mid-transfer, both directions: the server notices, every
# connection process and user process of theirs ends, and it serves on.
transfers_running() { [ "$(pgrep -u "$user" -x cat | wc -l)" -ge 8 ]; }
no_connections() { [ -z "$(pgrep -P "$listener_lh")" ]; }
no_user_processes() { [ -z "$(pgrep -u "$user")" ]; }
check_killed_clients() {
    local i pids=() n
    # ssh itself in the background (not ssh_to, whose subshell and timeout
    # would take the SIGKILL and leave ssh running): $! is the client.
    local -a args=(-F /dev/null -p "$port_lh" -o "UserKnownHostsFile=$T/known_hosts.$port_lh"
        -o StrictHostKeyChecking=yes -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none
        -i "$T/id_user" "$user@127.0.0.1")
    for ((i = 0; i < 8; i++)); do
        if ((i % 2 == 0)); then
            ssh "${args[@]}" 'cat /dev/zero' >/dev/null 2>&1 &
        else
            ssh "${args[@]}" 'cat >/dev/null' </dev/zero >/dev/null 2>&1 &
        fi
        pids+=($!)
    done
    # All of them logged in and moving data.
    lh_wait_until 20 transfers_running || { echo "  transfers did not start"; return 1; }
    sleep 0.5
    for p in "${pids[@]}"; do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = ssh ] || { echo "  client $p is not ssh"; return 1; }
    done
    kill -KILL "${pids[@]}"
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    lh_wait_until 20 no_connections || { echo "  connection processes left: $(pgrep -P "$listener_lh" | wc -l)"; return 1; }
    lh_wait_until 10 no_user_processes || { echo "  user processes left: $(pgrep -u "$user" -a)"; return 1; }
    n=$(ssh_to "$port_lh" "$user@127.0.0.1" "cat $T/data/0" | sha256sum | cut -d' ' -f1)
    [ "$n" = "$(cat "$T/data/0.sha")" ]
}
lh_check "8 clients killed mid-transfer (4 each way): their processes end, the next login works" check_killed_clients

lh_summary
