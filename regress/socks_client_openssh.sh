#!/usr/bin/env bash
# regress/socks_client.py against the reference: Debian's ssh -D through
# Debian's sshd, to an echo server. The SOCKS tests of Longhaul's ssh -D and
# -R port (issue 11) rest on this client, so it is checked here first to
# speak SOCKS 4, 4a and 5 as OpenSSH's server side expects, with the
# handshake whole, cut byte by byte, pipelined, and with early data; and
# the refusals OpenSSH makes (it closes without a reply where Longhaul
# answers with a code, docs/ARCHITECTURE.md "Forwarding cores") are pinned.
set -euo pipefail
cd "$(dirname "$0")"
source "$(dirname "$0")/lib.sh"
lh_require_openssh_server
command -v python3 >/dev/null || lh_skip "python3 not found"
SSH=${LH_OPENSSH_SSH:-/usr/bin/ssh}
[ -x "$SSH" ] || lh_skip "OpenSSH ssh not found at $SSH (openssh-client)"
HERE=$(pwd)
CLIENT="python3 $HERE/socks_client.py"

lh_make_host_keys "$LH_TMP"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$LH_TMP/id"
cp "$LH_TMP/id.pub" "$LH_TMP/authorized_keys"
lh_port SSHD_PORT
lh_start_sshd "$LH_TMP" "$SSHD_PORT" "AllowTcpForwarding yes" "PermitRootLogin prohibit-password"

lh_port ECHO_PORT
python3 "$HERE/echo_server.py" "$ECHO_PORT" &
LH_PIDS+=($!)
lh_port CLOSED_PORT # reserved and never listened on

lh_port SOCKS_PORT
"$SSH" -N -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o ExitOnForwardFailure=yes -i "$LH_TMP/id" -p "$SSHD_PORT" -D "127.0.0.1:$SOCKS_PORT" \
    "$(id -un)@127.0.0.1" 2>"$LH_TMP/ssh.log" &
LH_PIDS+=($!)
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
lh_wait_until 10 accepts "$SOCKS_PORT" || { cat "$LH_TMP/ssh.log" "$LH_TMP/sshd.log" >&2; lh_fail "ssh -D did not listen"; }
lh_wait_until 10 accepts "$ECHO_PORT" || lh_fail "the echo server did not start"

BYTES=262144
WANT=$(python3 -c "import sys; sys.path.insert(0, '$HERE'); import socks_client, hashlib; \
print(hashlib.sha256(socks_client.pattern($BYTES)).hexdigest())")

# echoes HOST ARGS...: BYTES through the proxy to the echo server come back intact.
echoes() {
    local host=$1 got
    shift
    got=$($CLIENT "$@" --send-bytes "$BYTES" "$SOCKS_PORT" "$host" "$ECHO_PORT" | sha256sum | cut -d' ' -f1)
    [ "$got" = "$WANT" ]
}
for cut in whole 1 3; do
    args=()
    [ "$cut" = whole ] || args=(--fragment "$cut" --pause 0.01)
    lh_check "socks4 ipv4, $cut" echoes 127.0.0.1 --version 4 --user tester "${args[@]}"
    lh_check "socks4a name, $cut" echoes localhost --version 4a "${args[@]}"
    lh_check "socks5 ipv4, $cut" echoes 127.0.0.1 --version 5 "${args[@]}"
    lh_check "socks5 name, $cut" echoes localhost --version 5 --atyp domain "${args[@]}"
    lh_check "socks5 pipelined, $cut" echoes 127.0.0.1 --version 5 --pipeline "${args[@]}"
done
if python3 -c 'import socket; socket.create_connection(("::1", '"$ECHO_PORT"'), timeout=2).close()' 2>/dev/null; then
    lh_check "socks5 ipv6" echoes ::1 --version 5
else
    lh_skip_check "socks5 ipv6" "no IPv6 loopback"
fi

# Bytes written with the request are the start of the stream.
early() { [ "$($CLIENT "$@" --early hello --send ' world' "$SOCKS_PORT" 127.0.0.1 "$ECHO_PORT")" = "hello world" ]; }
lh_check "socks5 early data" early --version 5
lh_check "socks5 early data, pipelined and cut" early --version 5 --pipeline --fragment 2
lh_check "socks4 early data" early --version 4

# reply ARGS... EXPECTED: the reply line the client prints.
reply() {
    local want=${*: -1} got
    got=$($CLIENT --reply-only "${@:1:$#-1}" || true)
    [ "$got" = "$want" ] || { echo "  got '$got', want '$want'" >&2; return 1; }
}
lh_check "socks5 granted: reply 0" reply --version 5 "$SOCKS_PORT" 127.0.0.1 "$ECHO_PORT" reply=0x00
lh_check "socks4 granted: reply 0x5a" reply --version 4 "$SOCKS_PORT" 127.0.0.1 "$ECHO_PORT" reply=0x5a
# OpenSSH closes without a reply on each of these.
lh_check "openssh: no-auth not offered" reply --version 5 --methods 2 "$SOCKS_PORT" 127.0.0.1 "$ECHO_PORT" reply=none
lh_check "openssh: socks5 BIND" reply --version 5 --command bind "$SOCKS_PORT" 127.0.0.1 "$ECHO_PORT" reply=none
lh_check "openssh: socks4 BIND" reply --version 4 --command bind "$SOCKS_PORT" 127.0.0.1 "$ECHO_PORT" reply=none
lh_check "openssh: nothing listening" reply --version 5 "$SOCKS_PORT" 127.0.0.1 "$CLOSED_PORT" reply=none

lh_summary
