#!/bin/bash
# The link goes away for 10 s (100 % loss both ways, wanem-net outage) and
# comes back (issue 12, "load and fault tests"):
#
#  1. transfers survive it: a checksummed copy running when the link goes
#     down finishes, intact, once it is back, with ClientAlive/ServerAlive
#     set loosely enough (5 s x 12) to outlast the outage -- and TCP's
#     retransmission back-off, which can leave a 10 s cut unrepaired for
#     some 30 s (the next retry after 0.25, 0.75, 1.75, 3.75, 7.75 s of
#     silence comes 15.75 s after the cut, the one after that at 31.75 s);
#     Longhaul <->
#     Longhaul both ways, Debian's ssh -> Longhaul sshd (upload) and
#     Longhaul ssh <- Debian's sshd (download);
#  2. ClientAliveInterval 1 / ClientAliveCountMax 3 on the server: it gives
#     the silent client up while the link is still down, logging OpenSSH's
#     "Timeout, client not responding from user U ADDR port P", and the
#     connection process ends; Debian's sshd, same settings, as control;
#  3. ServerAliveInterval 1 / ServerAliveCountMax 3 on the client: ssh gives
#     up while the link is down, exit 255 with OpenSSH's "Timeout, server
#     ADDR not responding."; Longhaul ssh against both servers, Debian's ssh
#     as control.
# OpenSSH's count (ssh_config(5), sshd_config(5)): a probe once the peer has
# been silent an interval, the expiry after CountMax unanswered probes ends
# it: (CountMax + 1) intervals after the peer's last byte. The peer's last
# byte before the cut is at most one interval (plus a round trip) earlier,
# so Longhaul must give up between 2.5 s and 5 s after it (interval 1,
# CountMax 3): one that ignored the setting, counted from a fixed tick (an
# interval late) or gave up at once fails. OpenSSH's programs, the
# controls, must give up while the link is down; their times are printed
# (Debian's sshd 9.2 counts whole seconds and takes about 7.5 s).
# Skips (77) without root or TUN.
set -euo pipefail
# shellcheck source=regress/wan_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/wan_lib.sh"

wan_require ssh-keygen useradd userdel sha256sum ss
wan_install_trap
LH_BIN=$(dirname "$WANEM")
[[ -x $LH_BIN/ssh && -x $LH_BIN/sshd ]] || wan_fail "Longhaul's ssh and sshd are not built in $LH_BIN"
[[ -x /usr/sbin/sshd && -x /usr/bin/ssh ]] || wan_skip "Debian's OpenSSH (openssh-server, openssh-client) missing"
LH_SSH=$LH_BIN/ssh
LH_SSHD=$LH_BIN/sshd
DEB_SSH=/usr/bin/ssh
DEB_SSHD=/usr/sbin/sshd

OUTAGE_S=${WAN_OUTAGE_S:-10}
# 40 Mbit/s: 32 MiB take about 7 s, so the copy is well under way when the
# link goes down 1.5 s in, and still has most of its bytes to move after.
MIB=32
wan_ssh_prepare /dev/shm
wan_payload "$MIB"
export WAN_SSHD_LOGLEVEL=INFO
failures=0
fail() {
    echo "  FAIL $*" >&2
    failures=$((failures + 1))
}
ok() { echo "  ok   $*"; }

wan_up "wo$$" --rtt-ms 50 --rate-mbit 40
link() { "$WANEM_NET" outage "$WAN_NAME" "$1"; }
wan_on_exit "'$WANEM_NET' outage wo$$ up 2>/dev/null"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
file_size() { stat -c %s "$1" 2>/dev/null || echo 0; }
# wait_size FILE BYTES SECONDS: until FILE holds at least BYTES.
wait_size() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        (($(file_size "$1") >= $2)) && return 0
        sleep 0.1
    done
    return 1
}
# wait_pid PID SECONDS: until the process is gone (a child of this shell).
wait_gone() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

alive_loose=(-o ServerAliveInterval=5 -o ServerAliveCountMax=12)
sshd_loose=("ClientAliveInterval 5" "ClientAliveCountMax 12")

# survive LABEL SSH SSHD down|up: a copy in flight through a 10 s outage.
survive() {
    local label=$1 ssh_bin=$2 sshd_bin=$3 dir=$4 pid rc=0 t0 dst
    wan_select_impl "$label:$ssh_bin:$sshd_bin"
    wan_sshd_start "${sshd_loose[@]}"
    if [[ $dir == down ]]; then
        dst=$data/down
        wan_client "$ssh_bin" -F "$WAN_SSH_CONFIG" "${alive_loose[@]}" wan-server "cat $data/src" >"$dst" 2>"$data/client.log" &
    else
        dst=$WAN_TMP/srv/up
        wan_client "$ssh_bin" -F "$WAN_SSH_CONFIG" "${alive_loose[@]}" wan-server "cat > $dst" <"$data/src" 2>"$data/client.log" &
    fi
    pid=$!
    if ! wait_size "$dst" $((2 << 20)) 20; then
        fail "$label $dir: the copy did not start"
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        wan_sshd_stop
        return
    fi
    local at_cut
    at_cut=$(file_size "$dst")
    link down
    t0=$(now)
    sleep "$OUTAGE_S"
    link up
    local during=$(($(file_size "$dst") - at_cut))
    if ! wait_gone "$pid" 75; then
        fail "$label $dir: the copy did not finish within 75 s of the link's return"
        kill "$pid" 2>/dev/null || true
    fi
    wait "$pid" || rc=$?
    if ((rc != 0)); then
        fail "$label $dir: ssh exited $rc"
        tail -n5 "$data/client.log" >&2
    elif [[ $(sha256sum <"$dst" | cut -d' ' -f1) != "$want" ]]; then
        fail "$label $dir: the data arrived damaged or cut ($(file_size "$dst") bytes)"
    else
        ok "$label $dir: $(((at_cut) >> 20)) MiB before the cut, ${during} B while down, intact after, $(since "$t0") s from the cut to the end"
    fi
    rm -f "$dst"
    wan_sshd_stop
}

# within LO HI VALUE: LO <= VALUE <= HI.
within() { awk -v lo="$1" -v hi="$2" -v v="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }
# Interval 1 s, CountMax 3 (see the top).
GIVE_UP_MIN=2.5
GIVE_UP_MAX=5
# is_control LABEL: OpenSSH's program is the one under test.
is_control() { [[ $1 == *control* ]]; }
# give_up_ok LABEL SECONDS
give_up_ok() {
    if is_control "$1"; then within 0 "$OUTAGE_S" "$2"; else within "$GIVE_UP_MIN" "$GIVE_UP_MAX" "$2"; fi
}
WAIT_MAX=$((OUTAGE_S - 1))

listener_children() { pgrep -P "$WAN_SSHD_PID" || true; }

# server_gives_up LABEL SSH SSHD: ClientAlive ends a silent client's connection.
server_gives_up() {
    local label=$1 ssh_bin=$2 sshd_bin=$3 pid t0 i took="" log
    wan_select_impl "$label:$ssh_bin:$sshd_bin"
    wan_sshd_start "ClientAliveInterval 1" "ClientAliveCountMax 3"
    log=$WAN_TMP/sshd.$WAN_NAME.log
    : >"$log"
    wan_client "$ssh_bin" -F "$WAN_SSH_CONFIG" -o ServerAliveInterval=0 -N wan-server 2>"$data/client.log" &
    pid=$!
    # Logged in, and answering probes for a few intervals first.
    for ((i = 0; i < 100; i++)); do
        [[ -n $(listener_children) ]] && wan_server ss -Htn state established "sport = :$WAN_SSH_PORT" | grep -q . && break
        sleep 0.1
    done
    sleep 3
    if ! kill -0 "$pid" 2>/dev/null || grep -q "Timeout" "$log"; then
        fail "$label: the connection did not stay up while the link was (client log: $(tail -n1 "$data/client.log"))"
        wan_sshd_stop
        return
    fi
    link down
    t0=$(now)
    local logged="" ended=""
    for ((i = 0; i < WAIT_MAX * 10; i++)); do
        [[ -z $logged ]] && grep -q "Timeout, client not responding from user $WAN_USER $WAN_CLIENT_ADDR port [0-9]" "$log" &&
            logged=$(since "$t0")
        [[ -z $ended && -z $(listener_children) ]] && ended=$(since "$t0")
        [[ -n $logged && -n $ended ]] && break
        sleep 0.1
    done
    link up
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if [[ -z $logged || -z $ended ]]; then
        fail "$label: within $WAIT_MAX s of the cut: 'Timeout, client not responding' ${logged:+logged after $logged s}${logged:-not logged}, connection ${ended:+ended after $ended s}${ended:-still there}"
        tail -n3 "$log" >&2
    elif give_up_ok "$label" "$logged" && give_up_ok "$label" "$ended"; then
        ok "$label: gave the client up ${logged} s after the cut (connection gone after ${ended} s): $(grep -o 'Timeout, client not responding.*' "$log" | head -n1)"
    else
        fail "$label: gave the client up ${logged} s after the cut, connection gone after ${ended} s (expected $GIVE_UP_MIN-$GIVE_UP_MAX s)"
    fi
    wan_sshd_stop
}

# client_gives_up LABEL SSH SSHD: ServerAlive ends ssh while the link is down.
client_gives_up() {
    local label=$1 ssh_bin=$2 sshd_bin=$3 pid t0 rc=0 took
    wan_select_impl "$label:$ssh_bin:$sshd_bin"
    wan_sshd_start
    wan_client "$ssh_bin" -F "$WAN_SSH_CONFIG" -o LogLevel=INFO -o ServerAliveInterval=1 -o ServerAliveCountMax=3 -N wan-server \
        2>"$data/client.log" &
    pid=$!
    local i
    for ((i = 0; i < 100; i++)); do
        [[ -n $(listener_children) ]] && wan_server ss -Htn state established "sport = :$WAN_SSH_PORT" | grep -q . && break
        sleep 0.1
    done
    sleep 3
    if ! kill -0 "$pid" 2>/dev/null; then
        fail "$label: ssh ended while the link was up: $(tail -n1 "$data/client.log")"
        wan_sshd_stop
        return
    fi
    link down
    t0=$(now)
    if wait_gone "$pid" "$WAIT_MAX"; then
        took=$(since "$t0")
        wait "$pid" || rc=$?
    else
        took=""
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    link up
    if [[ -z $took ]]; then
        fail "$label: ssh still running $WAIT_MAX s after the cut"
    elif ((rc != 255)) || ! grep -q "Timeout, server $WAN_SERVER_ADDR not responding." "$data/client.log"; then
        fail "$label: ssh exited $rc after ${took} s: $(tail -n1 "$data/client.log")"
    elif give_up_ok "$label" "$took"; then
        ok "$label: ssh gave up ${took} s after the cut, exit 255: $(grep -o 'Timeout, server.*' "$data/client.log")"
    else
        fail "$label: ssh gave up ${took} s after the cut (expected $GIVE_UP_MIN-$GIVE_UP_MAX s)"
    fi
    wan_sshd_stop
}

checks=${WAN_OUTAGE_CHECKS:-survive server client}
if [[ " $checks " == *" survive "* ]]; then
echo "== a ${OUTAGE_S} s outage on a 40 Mbit/s, 50 ms link, ClientAlive/ServerAlive 5 s x 12"
survive "longhaul" "$LH_SSH" "$LH_SSHD" down
survive "longhaul" "$LH_SSH" "$LH_SSHD" up
survive "debian-ssh/longhaul-sshd" "$DEB_SSH" "$LH_SSHD" up
survive "longhaul-ssh/debian-sshd" "$LH_SSH" "$DEB_SSHD" down
fi
if [[ " $checks " == *" server "* ]]; then
echo "== ClientAliveInterval 1, ClientAliveCountMax 3: the server gives a silent client up"
server_gives_up "longhaul sshd (Debian's ssh)" "$DEB_SSH" "$LH_SSHD"
server_gives_up "longhaul sshd (Longhaul ssh)" "$LH_SSH" "$LH_SSHD"
server_gives_up "debian sshd (control)" "$DEB_SSH" "$DEB_SSHD"
fi
if [[ " $checks " == *" client "* ]]; then
echo "== ServerAliveInterval 1, ServerAliveCountMax 3: ssh gives a silent server up"
client_gives_up "longhaul ssh -> longhaul sshd" "$LH_SSH" "$LH_SSHD"
client_gives_up "longhaul ssh -> debian sshd" "$LH_SSH" "$DEB_SSHD"
client_gives_up "debian ssh (control)" "$DEB_SSH" "$LH_SSHD"
fi

# The link, back up, carries a new login.
wan_select_impl "longhaul:$LH_SSH:$LH_SSHD"
wan_sshd_start
if [[ $(wan_ssh echo after 2>/dev/null) == after ]]; then ok "a new login after the outages"; else fail "no login after the outages"; fi
wan_sshd_stop
"$WANEM_NET" stats "$WAN_NAME" | sed 's/^/    /'
wan_down "wo$$"

if ((failures)); then
    echo "wan_outage: $failures check(s) failed" >&2
    exit 1
fi
echo "wan_outage: transfers outlived the outages; both keepalives gave up as OpenSSH's do"
