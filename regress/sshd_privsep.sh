#!/usr/bin/env bash
# Privilege separation (issue 12), checked from outside the processes, the
# same checks run against Debian's OpenSSH sshd as the reference:
#  - with a client stalled before authentication, the process that reads
#    its socket (the listener's grandchild) runs with real, effective and
#    saved uids not 0, NoNewPrivs 1, Seccomp 2 (a filter), and a root
#    directory that is not /;
#  - neither that process nor, after a login, the user's process holds the
#    private host key: their memory is searched for its secret (the root
#    monitor's memory holds it: the control that shows the search works).
#    Longhaul only: OpenSSH keeps private keys shielded (encrypted) in
#    memory, where no search finds them;
#  - killing the pre-authentication child with SIGSEGV ends that
#    connection only: the listener goes on serving new logins;
#  - a client that sends garbage to the sandboxed child, and one that
#    disconnects mid-key-exchange, leave the listener serving;
#  - after a login as a user (not root), key re-exchanges started by the
#    server work: the user's process gets each host key signature from its
#    root parent;
#  - every connection runs in a freshly executed program image (OpenSSH
#    re-executes sshd, sshd-session since 9.8): two connections' processes
#    and the listener have three different address-space layouts (a fork
#    would share the listener's);
#  - the configuration a connection uses is the one the listener read: an
#    edit on disk takes effect at SIGHUP, not before.
# Needs root (a test user, the sandbox's user and directory).
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSHD_LONGHAUL=$BUILD/bin/sshd
[ -x "$LH_SSHD_LONGHAUL" ] || lh_fail "sshd not built ($LH_SSHD_LONGHAUL)"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
command -v python3 >/dev/null || lh_skip "python3 not found"
[ "$(id -u)" = 0 ] || lh_skip "needs root: a test user, and the sandbox's user and directory"
getent passwd sshd >/dev/null || lh_skip "the privilege separation user sshd does not exist (openssh-server creates it)"
lh_require_openssh_server
T=$LH_TMP
chmod 755 "$T"

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C user-key -f "$T/id_user"
cat "$T/id_user.pub" >"$T/authorized_keys"
chmod 644 "$T/authorized_keys"
lh_make_user "Pw-$RANDOM-$RANDOM"
user=$LH_USER
head -c $((8 * 1024 * 1024)) /dev/urandom >"$T/data"
chmod 644 "$T/data"

# The ed25519 host key's 32-byte secret seed, in hex, read from the
# openssh-key-v1 file (unencrypted): what must not be in the memory of a
# process that talks to the network before authentication, or runs as the
# user.
seed_hex=$(python3 - "$T/ssh_host_ed25519_key" <<'PYEND'
import base64, struct, sys
text = open(sys.argv[1]).read().split("\n")
blob = base64.b64decode("".join(l for l in text if l and not l.startswith("-----")))
magic = b"openssh-key-v1\0"
assert blob.startswith(magic)
p = len(magic)
def string():
    global p
    (n,) = struct.unpack(">I", blob[p:p + 4]); p += 4
    s = blob[p:p + n]; p += n
    return s
cipher, kdf, kdfopts = string(), string(), string()
assert cipher == b"none"
p += 4            # number of keys
string()          # public key
priv = string()
q = 8             # check ints
def pstring():
    global q
    (n,) = struct.unpack(">I", priv[q:q + 4]); q += 4
    s = priv[q:q + n]; q += n
    return s
assert pstring() == b"ssh-ed25519"
pstring()         # public
print(pstring()[:32].hex())
PYEND
) || lh_fail "cannot read the ed25519 host key's seed"
[ ${#seed_hex} = 64 ] || lh_fail "unexpected ed25519 seed length"

# memory_holds PID: whether the process's readable memory contains the seed.
memory_holds() {
    python3 - "$1" "$seed_hex" <<'PYEND'
import sys
pid, seed = sys.argv[1], bytes.fromhex(sys.argv[2])
found, scanned, heap = False, 0, False
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps:
        fields = line.split()
        if "r" not in fields[1] or (len(fields) > 5 and fields[5] in ("[vvar]", "[vsyscall]")):
            continue
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        try:
            mem.seek(lo)
            data = mem.read(hi - lo)
        except OSError:
            continue
        scanned += len(data)
        heap = heap or (len(fields) > 5 and fields[5] == "[heap]")
        if seed in data:
            found = True
print(f"pid {pid}: {scanned} bytes scanned, heap {'read' if heap else 'NOT read'}, seed {'found' if found else 'not found'}",
      file=sys.stderr)
# A search that could not read the heap proves nothing: status 2.
sys.exit(0 if found else 1 if heap else 2)
PYEND
}

# status_field PID FIELD: the value(s) of a /proc/PID/status line.
status_field() { awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ /, ""); print }' "/proc/$1/status"; }

# preauth_child LISTENER: the listener's grandchild (listener -> connection
# process, the monitor -> its sandboxed child), the one reading the socket.
preauth_child() {
    local conn child
    for conn in $(pgrep -P "$1"); do
        child=$(pgrep -P "$conn" | head -1)
        [ -n "$child" ] && { echo "$child"; return 0; }
    done
    return 1
}

# stall PORT: a client that sends its version and then nothing (fd 3).
stall() {
    exec 3<>"/dev/tcp/127.0.0.1/$1"
    printf 'SSH-2.0-Stalled_0.1\r\n' >&3
}
unstall() { exec 3<&- 3>&-; }

uids_not_root() { local u; for u in $(status_field "$1" Uid); do [ "$u" != 0 ] || return 1; done; }
no_new_privs() { [ "$(status_field "$1" NoNewPrivs)" = 1 ]; }
seccomp_filter() { [ "$(status_field "$1" Seccomp)" = 2 ]; }
root_not_slash() { [ "$(readlink "/proc/$1/root")" != / ]; }
not_holding_key() {
    local rc=0
    memory_holds "$1" || rc=$?
    [ "$rc" = 1 ]
}
holding_key() { memory_holds "$1"; }
gone() { ! kill -0 "$1" 2>/dev/null; }
# layout PID: where the stack and the program's first mapping lie.
layout() {
    local exe
    exe=$(readlink "/proc/$1/exe")
    awk -v e="$exe" '$6 == "[stack]" { s = $1 } $6 == e && !x { x = $1 } END { print s, x }' "/proc/$1/maps"
}
# two_connections LISTENER: the PIDs of its two connection processes.
two_connections() { [ "$(pgrep -P "$1" | wc -l)" -ge 2 ] && pgrep -P "$1" | head -2; }
login_works() { lh_ssh_to "$T" "$1" "$T/id_user" -l "$user" 127.0.0.1 'echo logged-in' 2>/dev/null | lh_matches -x logged-in; }

# check_server NAME SSHD: the checks against one server.
check_server() {
    local name=$1 sshd=$2 port listener child monitor
    mkdir -p "$T/$name"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$T/$name/"
    lh_port port
    LH_SSHD=$sshd lh_start_sshd "$T/$name" "$port" "LoginGraceTime 60"
    listener=${LH_PIDS[-1]}
    lh_known_hosts "$T" "$port"
    local rekey_port
    mkdir -p "$T/$name-rekey"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$T/$name-rekey/"
    lh_port rekey_port
    LH_SSHD=$sshd lh_start_sshd "$T/$name-rekey" "$rekey_port" "RekeyLimit 1M"
    lh_known_hosts "$T" "$rekey_port"

    stall "$port"
    lh_wait_until 10 preauth_child "$listener" >/dev/null || lh_fail "$name: no pre-authentication child appeared"
    child=$(preauth_child "$listener")
    monitor=$(awk '{print $4}' "/proc/$child/stat")
    lh_check "$name: the pre-authentication child runs without root (Uid: $(status_field "$child" Uid))" uids_not_root "$child"
    lh_check "$name: the pre-authentication child has NoNewPrivs 1" no_new_privs "$child"
    lh_check "$name: the pre-authentication child runs under a seccomp filter (Seccomp: 2)" seccomp_filter "$child"
    lh_check "$name: the pre-authentication child is chrooted ($(readlink "/proc/$child/root"))" root_not_slash "$child"
    if [ "$name" = longhaul ]; then
        lh_check "$name: the pre-authentication child's memory holds no private host key" not_holding_key "$child"
        lh_check "$name: (control) the monitor's memory holds the private host key" holding_key "$monitor"
    fi

    kill -SEGV "$child"
    lh_check "$name: the child killed with SIGSEGV is gone" lh_wait_until 10 gone "$child"
    unstall
    lh_check "$name: the listener still serves logins after the child's crash" login_works "$port"

    # Garbage and a cut key exchange reach only the sandboxed child.
    printf 'SSH-2.0-x\r\n\0\0\0\x0c\x0a\x14garbage\0\0\0' | timeout 5 nc -q 1 127.0.0.1 "$port" >/dev/null 2>&1
    printf 'SSH-2.0-x\r\n' | timeout 5 nc -q 0 127.0.0.1 "$port" >/dev/null 2>&1
    lh_check "$name: the listener still serves logins after garbage and a cut key exchange" login_works "$port"

    # Long peer text reaches the log through the monitor: a 300-byte user
    # name is an invalid user, a 9000-byte DISCONNECT description is logged
    # (cut), and neither ends anything but its own connection.
    local long_user
    long_user=$(printf 'u%.0s' $(seq 300))
    lh_ssh_to "$T" "$port" "$T/id_user" -l "$long_user" 127.0.0.1 true >/dev/null 2>&1 || true
    # (OpenSSH logs the first 100 bytes of a user name.)
    lh_check "$name: a 300-byte user name is logged as an invalid user" \
        lh_wait_until 5 grep -q "Invalid user ${long_user:0:100} from 127.0.0.1" "$T/$name/sshd.log"
    python3 - "$port" <<'PYEND2'
import socket, struct, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"SSH-2.0-Disconnecting\r\n")
text = b"x" * 9000
payload = b"\x01" + struct.pack(">I", 11) + struct.pack(">I", len(text)) + text + struct.pack(">I", 0)
pad = 8 - (5 + len(payload)) % 8
pad += 8 if pad < 4 else 0
time.sleep(0.3)
s.sendall(struct.pack(">IB", 1 + len(payload) + pad, pad) + payload + b"\0" * pad)
time.sleep(0.3)
s.close()
PYEND2
    lh_check "$name: a 9000-byte DISCONNECT description is logged" \
        lh_wait_until 5 grep -q "Received disconnect from 127.0.0.1 port [0-9]*:11: xxxxxxxxxx" "$T/$name/sshd.log"
    lh_check "$name: the listener still serves logins after long peer text" login_works "$port"

    # After the login: the user's process (the connection, running as the
    # user) holds no private host key either.
    lh_ssh_to "$T" "$port" "$T/id_user" -l "$user" 127.0.0.1 'sleep 20' 2>/dev/null &
    local client=$! session=""
    # The process of the user that serves this server's connection: sshd
    # by name, running as the user, below this listener.
    user_process() {
        local p a
        for p in $(pgrep -u "$user" -x sshd); do
            a=$p
            while [ "$a" -gt 1 ]; do
                a=$(awk '{print $4}' "/proc/$a/stat" 2>/dev/null) || break
                [ "$a" = "$listener" ] && { echo "$p"; return 0; }
            done
        done
        return 1
    }
    if lh_wait_until 10 user_process >/dev/null; then
        session=$(user_process)
        lh_check "$name: the user's process runs as the user" [ "$(status_field "$session" Uid | awk '{print $1}')" = "$(id -u "$user")" ]
        [ "$name" != longhaul ] ||
            lh_check "$name: the user's process holds no private host key" not_holding_key "$session"
    else
        lh_check "$name: a process of the user serves the session" false
    fi
    kill "$client" 2>/dev/null || true
    wait "$client" 2>/dev/null || true

    # Key re-exchanges after the login, started by the server (RekeyLimit
    # 1M): each needs a host key signature, which the user's process must
    # get from its root parent. 8 MiB each way, checksummed.
    local up down sent newkeys
    sent=$(sha256sum <"$T/data" | cut -d' ' -f1)
    up=$(lh_ssh_to "$T" "$rekey_port" "$T/id_user" -l "$user" -v 127.0.0.1 sha256sum <"$T/data" 2>"$T/$name.rekey.log" |
        cut -d' ' -f1) || true
    down=$(lh_ssh_to "$T" "$rekey_port" "$T/id_user" -l "$user" 127.0.0.1 "cat $T/data" 2>/dev/null | sha256sum |
        cut -d' ' -f1) || true
    newkeys=$(grep -c "SSH2_MSG_NEWKEYS received" "$T/$name.rekey.log" || true)
    lh_check "$name: 8 MiB up through server-started rekeys as a user ($newkeys key exchanges)" \
        [ "$up" = "$sent" -a "$newkeys" -gt 2 ]
    lh_check "$name: 8 MiB down through server-started rekeys as a user" [ "$down" = "$sent" ]

    # A fresh program image per connection: two stalled connections.
    stall "$port"
    exec 5<>"/dev/tcp/127.0.0.1/$port"
    printf 'SSH-2.0-Stalled_0.1\r\n' >&5
    local conns a b l
    if lh_wait_until 10 two_connections "$listener" >/dev/null; then
        conns=$(two_connections "$listener")
        a=$(layout "$(echo "$conns" | sed -n 1p)")
        b=$(layout "$(echo "$conns" | sed -n 2p)")
        l=$(layout "$listener")
        echo "  layouts (stack, program): listener $l; connections $a; $b"
        lh_check "$name: each connection process has its own address-space layout (re-executed, not only forked)" \
            [ -n "$a" -a -n "$b" -a "$a" != "$b" -a "$a" != "$l" -a "$b" != "$l" ]
    else
        lh_check "$name: two connection processes appear" false
    fi
    unstall
    exec 5<&- 5>&-

    # The listener's configuration, not the file's current text, until SIGHUP.
    echo "DenyUsers $user" >>"$T/$name/sshd_config"
    lh_check "$name: an edit of sshd_config does not reach new connections before SIGHUP" login_works "$port"
    kill -HUP "$listener"
    # Refused by the new setting (its log line), not by a listener restarting
    # (globals: lh_check has a local of its own called name).
    hup_port=$port
    hup_log=$T/$name/sshd.log
    refused() { ! login_works "$hup_port" && grep -q "User $user from 127.0.0.1 not allowed because listed in DenyUsers" "$hup_log"; }
    lh_check "$name: after SIGHUP new connections use the edited sshd_config" lh_wait_until 10 refused
    sed -i '$d' "$T/$name/sshd_config"
    kill -HUP "$listener"
    lh_check "$name: after another SIGHUP the user logs in again" lh_wait_until 10 login_works "$port"
}

check_server debian /usr/sbin/sshd
check_server longhaul "$LH_SSHD_LONGHAUL"
lh_check "longhaul: the crash was logged" grep -q "preauth child terminated by signal 11" "$T/longhaul/sshd.log"

lh_summary
