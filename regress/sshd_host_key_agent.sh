#!/usr/bin/env bash
# HostKeyAgent in Longhaul's sshd: host keys named by their .pub files (the
# private halves moved away), signed by an ssh-agent (Debian's, and
# Longhaul's own). Debian's ssh and Longhaul's ssh log in with every host
# key algorithm, known_hosts pinned to the keys; key re-exchanges after
# authentication (client and server RekeyLimit) are signed by the agent
# too; "HostKeyAgent SSH_AUTH_SOCK" reads the environment; a private key
# that loads is still used directly next to agent keys; an agent gone
# fails the login cleanly with a log line; sshd -t and -T agree with
# Debian's sshd (paths normalised).
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSHD=$BUILD/bin/sshd
LH_SSH=$BUILD/bin/ssh
[ -x "$LH_SSHD" ] && [ -x "$LH_SSH" ] || lh_fail "sshd or ssh not built in $BUILD/bin"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
[ -x /usr/bin/ssh-agent ] && [ -x /usr/bin/ssh-add ] || lh_skip "Debian's ssh-agent/ssh-add not found (openssh-client)"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found"
T=$LH_TMP
chmod 711 "$T"
if [ "$(id -u)" = 0 ]; then
    lh_make_user "pw-$RANDOM-$RANDOM"
    user=$LH_USER
    [ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 0755 /run/sshd; }
else
    user=$(id -un)
fi

kg() { "$LH_SSH_KEYGEN" -q "$@"; }
kg -t ed25519 -N '' -f "$T/id"
cp "$T/id.pub" "$T/authorized_keys"
chmod 644 "$T/authorized_keys"
# Host keys: the agents get the private halves, then those move away, so
# nothing but an agent can sign with them.
mkdir -p "$T/hk" "$T/private"
chmod 755 "$T/hk"
kg -t ed25519 -N '' -f "$T/hk/ed25519"
kg -t ecdsa -b 256 -N '' -f "$T/hk/ecdsa"
kg -t rsa -b 2048 -N '' -f "$T/hk/rsa"
kg -t ed25519 -N '' -f "$T/hk/direct" # loads: signed by sshd itself
# A HostCertificate for the agent's ECDSA key.
kg -t ed25519 -N '' -f "$T/host_ca"
kg -s "$T/host_ca" -h -I agent-host -n 127.0.0.1 "$T/hk/ecdsa.pub"

# agent NAME PROGRAM: an agent on $T/NAME.sock holding the three host keys.
agent() {
    local name=$1 prog=$2
    "$prog" -D -a "$T/$name.sock" >/dev/null 2>"$T/$name.log" &
    LH_PIDS+=($!)
    printf -v "agent_pid_$name" %s "$!"
    lh_wait_until 10 test -S "$T/$name.sock" || lh_fail "$prog did not start"
    SSH_AUTH_SOCK=$T/$name.sock /usr/bin/ssh-add -q "$T/hk/ed25519" "$T/hk/ecdsa" "$T/hk/rsa" 2>/dev/null ||
        lh_fail "ssh-add to $prog failed"
}
agent debian /usr/bin/ssh-agent
agent longhaul "$BUILD/bin/ssh-agent"
agent doomed /usr/bin/ssh-agent
agent late /usr/bin/ssh-agent
mv "$T/hk/ed25519" "$T/hk/ecdsa" "$T/hk/rsa" "$T/private/"

# config FILE PORT HOSTKEYAGENT [lines...]: an sshd_config serving the
# agent's keys through their .pub files.
config() {
    local file=$1 port=$2 agent=$3
    shift 3
    {
        printf '%s\n' "$@"
        echo "Port $port"
        echo "ListenAddress 127.0.0.1"
        echo "HostKey $T/hk/ed25519.pub"
        echo "HostKey $T/hk/ecdsa.pub"
        echo "HostKey $T/hk/rsa.pub"
        echo "HostKeyAgent $agent"
        echo "PidFile $file.pid"
        echo "AuthorizedKeysFile $T/authorized_keys"
        echo "UsePAM no"
        echo "StrictModes no"
        echo "LogLevel VERBOSE"
        echo "SetEnv SHLVL=1"
    } >"$file"
}

# server NAME HOSTKEYAGENT [lines...]: Longhaul's sshd in $T/NAME.*, its
# port in port_NAME, known_hosts $T/NAME.kh pinned to the three keys.
server() {
    local name=$1 agent=$2 p i
    shift 2
    lh_port p
    config "$T/$name.conf" "$p" "$agent" "$@"
    "$LH_SSHD" -t -f "$T/$name.conf" 2>"$T/$name.t" || { cat "$T/$name.t" >&2; lh_fail "sshd -t rejected $name"; }
    "$LH_SSHD" -D -e -f "$T/$name.conf" 2>"$T/$name.log" &
    LH_PIDS+=($!)
    printf -v "pid_$name" %s "$!"
    for i in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break
        kill -0 "${LH_PIDS[-1]}" 2>/dev/null || { cat "$T/$name.log" >&2; lh_fail "sshd $name exited at start"; }
        sleep 0.05
    done
    for k in ed25519 ecdsa rsa direct; do
        echo "[127.0.0.1]:$p $(cut -d' ' -f1,2 "$T/hk/$k.pub")"
    done >"$T/$name.kh"
    printf -v "port_$name" %s "$p"
}
server debian "$T/debian.sock" "RekeyLimit 1M"
server longhaul "$T/longhaul.sock"
SSH_AUTH_SOCK=$T/debian.sock server env SSH_AUTH_SOCK
server mixed "$T/debian.sock" "HostKey $T/hk/direct"
server doomed "$T/doomed.sock"
server late "$T/late.sock" "RekeyLimit 1M"
server cert "$T/debian.sock" "HostCertificate $T/hk/ecdsa-cert.pub"
echo "@cert-authority [127.0.0.1]:$port_cert $(cat "$T/host_ca.pub")" >"$T/cert.kh"

# login CLIENT SERVER HOSTKEYALG [ssh args...] -- COMMAND: the command's output.
login() {
    local client=$1 name=$2 alg=$3 port kh args=()
    shift 3
    while [ "$1" != -- ]; do
        args+=("$1")
        shift
    done
    shift
    port=port_$name
    kh=$T/$name.kh
    "$client" -F /dev/null -p "${!port}" -o "UserKnownHostsFile=$kh" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -o ConnectTimeout=20 \
        -o "HostKeyAlgorithms=$alg" -i "$T/id" "${args[@]}" "$user@127.0.0.1" "$@"
}
check_login() { # CLIENT SERVER ALG
    local out
    out=$(login "$1" "$2" "$3" -- echo "hi-$3" </dev/null 2>"$T/client.err") && [ "$out" = "hi-$3" ] ||
        { cat "$T/client.err" >&2; return 1; }
}
algs="ssh-ed25519 ecdsa-sha2-nistp256 rsa-sha2-256 rsa-sha2-512"
for alg in $algs; do
    lh_check "Debian ssh, $alg, Debian ssh-agent" check_login ssh debian "$alg"
    lh_check "Longhaul ssh, $alg, Debian ssh-agent" check_login "$LH_SSH" debian "$alg"
    lh_check "Debian ssh, $alg, Longhaul ssh-agent" check_login ssh longhaul "$alg"
    lh_check "Longhaul ssh, $alg, Longhaul ssh-agent" check_login "$LH_SSH" longhaul "$alg"
done
lh_check "HostKeyAgent SSH_AUTH_SOCK (ed25519)" check_login ssh env ssh-ed25519
lh_check "HostKeyAgent SSH_AUTH_SOCK (rsa-sha2-512)" check_login "$LH_SSH" env rsa-sha2-512
lh_check "a private HostKey next to agent keys" check_login ssh mixed ssh-ed25519
lh_check "an agent key next to a private one" check_login ssh mixed rsa-sha2-256
lh_check "a HostCertificate of an agent key, Debian ssh" check_login ssh cert ecdsa-sha2-nistp256-cert-v01@openssh.com
lh_check "a HostCertificate of an agent key, Longhaul ssh" check_login "$LH_SSH" cert \
    ecdsa-sha2-nistp256-cert-v01@openssh.com
# The mixed server offers the agent's Ed25519 key after its own: the
# client must see the private one (pinned in known_hosts too).
mixed_key() {
    local port=$port_mixed
    ssh-keyscan -p "$port" -t ed25519 127.0.0.1 2>/dev/null | lh_matches -F "$(cut -d' ' -f2 "$T/hk/direct.pub")"
}
lh_check "the private key comes first for its type" mixed_key

# Re-keys after authentication: the client's (RekeyLimit on the client)
# and the server's (RekeyLimit 1M in sshd_config, signed through the root
# monitor when the session runs as another user), 4 MiB each way. Debian's
# ssh -v shows how many key exchanges there were.
rekey() { # CLIENT ALG [ssh args...]
    local client=$1 alg=$2 out rc=0 v=()
    shift 2
    [ "$client" = ssh ] && v=(-v)
    out=$(head -c 4194304 /dev/zero | login "$client" debian "$alg" "${v[@]}" "$@" -- \
        "head -c 4194304 /dev/zero; wc -c >&2" 2>"$T/rekey.err" | wc -c) || rc=$?
    if [ "$rc" != 0 ] || [ "$out" != 4194304 ] || ! tr -d '\r' <"$T/rekey.err" | lh_matches '^4194304$'; then
        # Debian's -v log without the per-packet lines, and the server's.
        echo "exit $rc, $out bytes out" >&2
        grep -vE '^debug1: (enqueue|dequeue) packet|^debug1: rekeying in progress' "$T/rekey.err" | tail -n 40 >&2
        echo "--- server log" >&2
        tail -n 30 "$T/debian.log" >&2
        return 1
    fi
    if [ "$client" = ssh ]; then
        local n
        n=$(grep -c 'SSH2_MSG_NEWKEYS received' "$T/rekey.err")
        [ "$n" -ge 3 ] || { echo "only $n key exchanges" >&2; return 1; }
    fi
}
lh_check "re-keys (client's), Debian ssh, rsa-sha2-512" rekey ssh rsa-sha2-512 -o RekeyLimit=1M
lh_check "re-keys (server's), Debian ssh, rsa-sha2-256" rekey ssh rsa-sha2-256
lh_check "re-keys, Longhaul ssh, ecdsa" rekey "$LH_SSH" ecdsa-sha2-nistp256 -o RekeyLimit=1M
lh_check "re-keys, Debian ssh, ed25519 with UpdateHostKeys=yes" rekey ssh ssh-ed25519 -o UpdateHostKeys=yes
no_agent_errors() { ! tr -d '\r' <"$T/debian.log" | grep -E 'agent sign|Unable to get agent socket|fatal'; }
lh_check "no agent errors in the log" no_agent_errors

# The agent gone: the login fails, sshd says why and goes on serving.
kill "$agent_pid_doomed"
wait "$agent_pid_doomed" 2>/dev/null || true
rm -f "$T/doomed.sock"
gone() {
    ! login ssh doomed ssh-ed25519 -- true </dev/null 2>/dev/null &&
        ! login "$LH_SSH" doomed rsa-sha2-256 -- true </dev/null 2>/dev/null &&
        kill -0 "$pid_doomed" &&
        lh_wait_until 5 eval "tr -d '\r' <'$T/doomed.log' |
            grep -q '^Unable to get agent socket: No such file or directory\$'" &&
        ! grep -qiE 'sanitizer|segmentation|core dumped|terminate called' "$T/doomed.log"
}
lh_check "the agent gone: the login fails cleanly" gone

# The agent gone during a session: the server's next re-key (RekeyLimit
# 1M, the user's process asking the root monitor, whose agent connection
# is now closed) fails, the connection ends, the listener lives on.
late_gone() {
    mkfifo "$T/go"
    (
        login ssh late ssh-ed25519 -- 'echo ready; read x; head -c 4194304 /dev/zero' <"$T/go" >"$T/late.out" \
            2>"$T/late.err"
        echo $? >"$T/late.rc"
    ) &
    exec 7>"$T/go"
    lh_wait_until 20 grep -q '^ready$' "$T/late.out" || { exec 7>&-; return 1; }
    kill "$agent_pid_late"
    wait "$agent_pid_late" 2>/dev/null || true
    echo go >&7
    exec 7>&-
    lh_wait_until 30 test -s "$T/late.rc" || return 1
    [ "$(cat "$T/late.rc")" != 0 ] && [ "$(wc -c <"$T/late.out")" -lt 4194310 ] && kill -0 "$pid_late" &&
        lh_wait_until 5 eval "tr -d '\r' <'$T/late.log' | lh_matches '^agent sign: '" &&
        ! grep -qiE 'sanitizer|segmentation|core dumped|terminate called' "$T/late.log" ||
        { cat "$T/late.err" "$T/late.log" >&2; return 1; }
}
lh_check "the agent gone during a session: the re-key fails cleanly" late_gone

# Start-up, against Debian's sshd (same config, paths normalised).
# norm FILE: sshd's stderr with the temporary directory and the program's
# version line out of the way.
norm() { tr -d '\r' <"$1" | sed -e "s#$T#T#g" | grep -v '^debug\|OpenSSH_\|Longhaul_'; }
compare_t() { # NAME HOSTKEYAGENT: sshd -t's exit status and messages
    local name=$1 agent=$2 rc_d=0 rc_l=0
    config "$T/cmp-$name.conf" 22222 "$agent"
    /usr/sbin/sshd -t -f "$T/cmp-$name.conf" 2>"$T/cmp-$name.debian" || rc_d=$?
    "$LH_SSHD" -t -f "$T/cmp-$name.conf" 2>"$T/cmp-$name.longhaul" || rc_l=$?
    [ "$rc_d" = "$rc_l" ] && diff <(norm "$T/cmp-$name.debian") <(norm "$T/cmp-$name.longhaul") >&2 ||
        { echo "exit $rc_d (Debian) vs $rc_l (Longhaul)" >&2; return 1; }
}
[ -x /usr/sbin/sshd ] && have_debian_sshd=yes || have_debian_sshd=no
if [ "$have_debian_sshd" = yes ]; then
    lh_check "sshd -t, agent keys, as Debian's" compare_t ok "$T/debian.sock"
    lh_check "sshd -t, no agent there, as Debian's" compare_t none "$T/nowhere.sock"
    unset SSH_AUTH_SOCK
    lh_check "sshd -t, SSH_AUTH_SOCK unset, as Debian's" compare_t unset SSH_AUTH_SOCK
    compare_dump() { # HOSTKEYAGENT
        config "$T/dump.conf" 22222 "$1"
        [ "$(SSH_AUTH_SOCK=$T/debian.sock /usr/sbin/sshd -T -f "$T/dump.conf" 2>/dev/null | grep '^hostkeyagent ')" = \
            "$(SSH_AUTH_SOCK=$T/debian.sock "$LH_SSHD" -T -f "$T/dump.conf" 2>/dev/null | grep '^hostkeyagent ')" ]
    }
    lh_check "sshd -T hostkeyagent (path), as Debian's" compare_dump "$T/debian.sock"
    lh_check "sshd -T hostkeyagent (SSH_AUTH_SOCK), as Debian's" compare_dump SSH_AUTH_SOCK
else
    lh_skip_check "sshd -t/-T against Debian's sshd" "/usr/sbin/sshd not found"
fi

lh_summary
