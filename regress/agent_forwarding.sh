#!/usr/bin/env bash
# Agent forwarding (ssh -A, ForwardAgent; sshd's AllowAgentForwarding)
# between Longhaul and Debian's OpenSSH, both ways and Longhaul with itself,
# as a test user (Longhaul's sshd serves it from its unprivileged process):
# the forwarded agent lists the key held by the local ssh-agent, and a
# second hop logs in with it; the socket sits where OpenSSH puts it
# (/tmp/ssh-XXXXXXXXXX/agent.PID, a directory only the user can enter) and
# is gone once the connection ends; 16 agent connections at once; sshd
# refuses as OpenSSH's does (AllowAgentForwarding no, DisableForwarding,
# no-agent-forwarding, restrict), and ssh forwards as OpenSSH's does
# (nothing without an agent or with IdentityAgent none; IdentityAgent and
# ForwardAgent naming a socket); keys held for some destinations only
# (ssh-add -h) used where they may be, directly and through a forwarding
# (session-bind@openssh.com).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSHD_BIN=$BUILD/bin/sshd
LH_SSH=$BUILD/bin/ssh
[ -x "$LH_SSHD_BIN" ] || lh_fail "sshd not built ($LH_SSHD_BIN)"
[ -x "$LH_SSH" ] || lh_fail "ssh not built ($LH_SSH)"
DEBIAN_SSH=/usr/bin/ssh
DEBIAN_SSHD=/usr/sbin/sshd
[ -x "$DEBIAN_SSH" ] || lh_skip "OpenSSH's ssh client not found at $DEBIAN_SSH"
[ -x "$DEBIAN_SSHD" ] || lh_skip "OpenSSH's sshd not found at $DEBIAN_SSHD"
command -v ssh-agent >/dev/null && command -v ssh-add >/dev/null || lh_skip "ssh-agent/ssh-add not found (openssh-client)"
[ "$(id -u)" = 0 ] || lh_skip "needs root (a test user)"
T=$LH_TMP
chmod 711 "$T"

lh_make_user "pw-$RANDOM"
user=$LH_USER
lh_make_host_keys "$T"
for k in id agentkey id_noagent id_restrict id_dest; do "$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/$k"; done
{
    cat "$T/id.pub" "$T/agentkey.pub" "$T/id_dest.pub"
    echo "no-agent-forwarding $(cat "$T/id_noagent.pub")"
    echo "restrict $(cat "$T/id_restrict.pub")"
} >"$T/authorized_keys"
chmod 644 "$T/authorized_keys"
chmod 600 "$T"/id*

# The local agent holds agentkey; its private file is removed, so only the
# agent (forwarded) can log in with it.
AGENT=$T/agent.sock
ssh-agent -D -a "$AGENT" >/dev/null &
LH_PIDS+=($!)
lh_wait_until 10 test -S "$AGENT" || lh_fail "ssh-agent did not start"
SSH_AUTH_SOCK=$AGENT ssh-add -q "$T/agentkey" 2>/dev/null || lh_fail "ssh-add failed"
rm -f "$T/agentkey"
# A second agent, holding no key.
EMPTY_AGENT=$T/empty-agent.sock
ssh-agent -D -a "$EMPTY_AGENT" >/dev/null &
LH_PIDS+=($!)
lh_wait_until 10 test -S "$EMPTY_AGENT" || lh_fail "the second ssh-agent did not start"
FP=$("$LH_SSH_KEYGEN" -lf "$T/agentkey.pub" | cut -d' ' -f2)

# start NAME SSHD [sshd_config lines...]: sets port_NAME. Host keys from
# $KEYS ($T, or a second set for the destination-constraint checks).
KEYS=$T
start() {
    local name=$1 sshd=$2 d="$T/srv-$1" p
    shift 2
    mkdir -p "$d" && chmod 711 "$d"
    cp "$KEYS"/ssh_host_* "$T/authorized_keys" "$d/"
    lh_port p
    LH_SSHD=$sshd lh_start_sshd "$d" "$p" "$@"
    printf -v "port_$name" %s "$p"
}
start lh "$LH_SSHD_BIN"
start deb "$DEBIAN_SSHD"
start lh_off "$LH_SSHD_BIN" "AllowAgentForwarding no"
start deb_off "$DEBIAN_SSHD" "AllowAgentForwarding no"
start lh_disabled "$LH_SSHD_BIN" "DisableForwarding yes"
start deb_disabled "$DEBIAN_SSHD" "DisableForwarding yes"
# Host B of the destination-constraint checks: host keys of its own.
mkdir -p "$T/keys_b"
lh_make_host_keys "$T/keys_b"
KEYS=$T/keys_b start deb_b "$DEBIAN_SSHD"

client_of() { case $1 in lh) echo "$LH_SSH" ;; deb) echo "$DEBIAN_SSH" ;; esac; }
port_of() { local v="port_$1"; echo "${!v}"; }

# remote CLIENT SERVER KEY COMMAND [ssh options...]: COMMAND as the test
# user, with the local agent in SSH_AUTH_SOCK (-A added by the caller).
remote() {
    local client server=$2 key=$3 cmd=$4
    client=$(client_of "$1")
    shift 4
    SSH_AUTH_SOCK=$AGENT timeout 30 "$client" -F /dev/null -p "$(port_of "$server")" -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o IdentitiesOnly=yes -i "$T/$key" -o LogLevel=ERROR "$@" \
        "$user@127.0.0.1" "$cmd" </dev/null
}

# lists CLIENT SERVER: the forwarded agent lists the local agent's key; its
# socket is OpenSSH's /tmp/ssh-XXXXXXXXXX/agent.PID in a directory of the
# user's alone, and both are gone once the connection has ended.
lists() {
    local out sock
    out=$(remote "$1" "$2" id 'echo "sock=$SSH_AUTH_SOCK"; stat -c "%U %a" "$(dirname "$SSH_AUTH_SOCK")"; ssh-add -l' -A) ||
        { echo "  $out" >&2; return 1; }
    sock=$(sed -n 's/^sock=//p' <<<"$out")
    # Every X of the template random, as OpenSSH's mkdtemp makes them.
    [[ $sock =~ ^/tmp/ssh-[A-Za-z0-9]{10}/agent\.[0-9]+$ ]] && [[ $sock != *XXXX* ]] ||
        { echo "  socket '$sock'" >&2; return 1; }
    grep -qx "$user 700" <<<"$out" || { echo "  $out" >&2; return 1; }
    grep -qF "$FP" <<<"$out" || { echo "  $out" >&2; return 1; }
    lh_wait_until 5 test ! -e "$(dirname "$sock")" || { echo "  $(dirname "$sock") left behind" >&2; return 1; }
}
# hop CLIENT SERVER NEXT: from SERVER, Debian's ssh logs in to NEXT with
# the forwarded agent's key (the only key that can).
hop() {
    local out
    out=$(remote "$1" "$2" id "ssh -F /dev/null -p $(port_of "$3") -o StrictHostKeyChecking=no \
-o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR $user@127.0.0.1 echo hop-ok" -A) || true
    [ "$out" = hop-ok ] || { echo "  got '$out'" >&2; return 1; }
}
# many CLIENT SERVER: 16 agent connections at once through one forwarding.
many() {
    local out
    out=$(remote "$1" "$2" id 'd=$(mktemp -d); for i in $(seq 16); do (ssh-add -l >/dev/null 2>&1; echo $? >"$d/$i") & done; wait
cat "$d"/* | grep -cx 0; rm -rf "$d"' -A) || true
    [ "$out" = 16 ] || { echo "  $out of 16" >&2; return 1; }
}
# none CLIENT SERVER KEY [ssh options...]: the session has no SSH_AUTH_SOCK.
none() {
    local out
    out=$(remote "$1" "$2" "$3" 'echo "sock=${SSH_AUTH_SOCK:-none}"' "${@:4}") || { echo "  $out" >&2; return 1; }
    [ "$out" = "sock=none" ] || { echo "  got '$out'" >&2; return 1; }
}
# unset_agent CLIENT: -A with SSH_AUTH_SOCK unset forwards nothing.
unset_agent() {
    local out client
    client=$(client_of "$1")
    out=$(env -u SSH_AUTH_SOCK timeout 30 "$client" -F /dev/null -p "$port_lh" -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o IdentitiesOnly=yes -i "$T/id" -o LogLevel=ERROR -A \
        "$user@127.0.0.1" 'echo "sock=${SSH_AUTH_SOCK:-none}"' </dev/null 2>&1) || { echo "  $out" >&2; return 1; }
    [ "$out" = "sock=none" ] || { echo "  got '$out'" >&2; return 1; }
}
# named CLIENT SSH_AUTH_SOCK OPTION...: with SSH_AUTH_SOCK as given, the
# agent named by the options (IdentityAgent or ForwardAgent) is forwarded.
named() {
    local out client
    client=$(client_of "$1")
    out=$(SSH_AUTH_SOCK=$2 timeout 30 "$client" -F /dev/null -p "$port_lh" -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o IdentitiesOnly=yes -i "$T/id" -o LogLevel=ERROR "${@:3}" \
        "$user@127.0.0.1" 'ssh-add -l' </dev/null 2>&1) || { echo "  $out" >&2; return 1; }
    grep -qF "$FP" <<<"$out" || { echo "  $out" >&2; return 1; }
}

for pair in lh:lh lh:deb deb:lh; do
    c=${pair%:*} s=${pair#*:}
    lh_check "ssh($c) -A -> sshd($s): the agent's key listed, OpenSSH's socket, removed at the end" lists "$c" "$s"
    lh_check "ssh($c) -A -> sshd($s) -> sshd(deb): the second hop logs in with the forwarded key" hop "$c" "$s" deb
    lh_check "ssh($c) -A -> sshd($s): 16 agent connections at once" many "$c" "$s"
done
lh_check "ssh(deb) -A -> sshd(lh) -> sshd(lh): the second hop logs in" hop deb lh lh

for s in lh deb; do
    lh_check "sshd($s) AllowAgentForwarding no: no agent" none lh "${s}_off" id -A
    lh_check "sshd($s) DisableForwarding yes: no agent" none lh "${s}_disabled" id -A
    lh_check "sshd($s) key no-agent-forwarding: no agent" none lh "$s" id_noagent -A
    lh_check "sshd($s) key restrict: no agent" none lh "$s" id_restrict -A
done
for c in lh deb; do
    lh_check "ssh($c) without -A: no agent" none "$c" lh id
    lh_check "ssh($c) -A -o IdentityAgent=none: no agent" none "$c" lh id -A -o IdentityAgent=none
    lh_check "ssh($c) -A without SSH_AUTH_SOCK: no agent, no error" unset_agent "$c"
    lh_check "ssh($c) -A -o IdentityAgent=SOCKET: that agent forwarded" named "$c" "" "-oIdentityAgent=$AGENT" -A
    # (OpenSSH 9.2 asks for forwarding only if the agent it uses answers,
    # even when ForwardAgent names another.)
    lh_check "ssh($c) -o ForwardAgent=SOCKET: that agent forwarded, not SSH_AUTH_SOCK's" \
        named "$c" "$EMPTY_AGENT" "-oForwardAgent=$AGENT"
    lh_check "ssh($c) -o ForwardAgent=SOCKET, no agent in SSH_AUTH_SOCK: no agent" \
        none "$c" lh id "-oForwardAgent=$AGENT" -o IdentityAgent=none
done

# Destination constraints (ssh-add -h): a third agent holds id_dest for
# the host keys of "lh" and "deb" (host A: they share keys) and for the
# way A>B, B being deb_b with keys of its own. The agent uses such a key
# only on connections bound to a host (session-bind@openssh.com): ssh binds
# its own, and each forwarded connection as forwarded, so that the agent
# knows the way through A.
lh_known_hosts "$T" "$port_lh"
lh_known_hosts "$T/keys_b" "$port_deb_b"
cat "$T/known_hosts.$port_lh" "$T/keys_b/known_hosts.$port_deb_b" >"$T/known_hosts_dest"
DEST_AGENT=$T/dest-agent.sock
ssh-agent -D -a "$DEST_AGENT" >/dev/null &
LH_PIDS+=($!)
lh_wait_until 10 test -S "$DEST_AGENT" || lh_fail "the third ssh-agent did not start"
A="[127.0.0.1]:$port_lh" B="[127.0.0.1]:$port_deb_b"
SSH_AUTH_SOCK=$DEST_AGENT ssh-add -q -H "$T/known_hosts_dest" -h "$A" -h "$A>$B" "$T/id_dest" 2>/dev/null ||
    lh_fail "ssh-add -h failed"
rm -f "$T/id_dest"
# dest CLIENT SERVER [ssh options...]: logs in with the constrained key alone.
dest() {
    local client server=$2 out
    client=$(client_of "$1")
    shift 2
    out=$(SSH_AUTH_SOCK=$DEST_AGENT timeout 30 "$client" -F /dev/null -p "$(port_of "$server")" \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR "$@" \
        "$user@127.0.0.1" 'echo in' </dev/null 2>&1) || true
    [ "$out" = in ]
}
dest_refused() { ! dest "$@"; }
# dest_hop CLIENT SERVER: through SERVER (host A) to deb_b with the
# forwarded constrained key.
dest_hop() {
    local client out
    client=$(client_of "$1")
    out=$(SSH_AUTH_SOCK=$DEST_AGENT timeout 30 "$client" -F /dev/null -p "$(port_of "$2")" -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -A "$user@127.0.0.1" \
        "ssh -F /dev/null -p $port_deb_b -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes \
-o LogLevel=ERROR $user@127.0.0.1 echo hop-ok" </dev/null 2>&1) || true
    [ "$out" = hop-ok ] || { echo "  got '$out'" >&2; return 1; }
}
for c in lh deb; do
    lh_check "ssh($c): a key the agent holds for host A only logs in to A (session-bind)" dest "$c" lh
    lh_check "ssh($c): that key is refused for host B directly" dest_refused "$c" deb_b
done
for pair in lh:lh lh:deb deb:lh; do
    c=${pair%:*} s=${pair#*:}
    lh_check "ssh($c) -A -> sshd($s) -> B: the key held for A>B works through A (the forwarded connection bound)" \
        dest_hop "$c" "$s"
done

# scp -A -R: the origin host's scp (Debian's, as the test user) copies to
# the target with the forwarded agent alone (its key is nowhere else);
# without -A it cannot log in there. The hosts are names in the local
# config (-F) and the test user's ~/.ssh/config, so no port 22 is used.
home=$(getent passwd "$user" | cut -d: -f6)
host_block() { printf 'Host %s\n HostName 127.0.0.1\n Port %s\n User %s\n' "$1" "$2" "$user"; }
{
    host_block src "$port_lh"
    host_block dst "$port_deb"
    printf 'Host *\n StrictHostKeyChecking no\n UserKnownHostsFile /dev/null\n BatchMode yes\n LogLevel ERROR\n'
} >"$T/client_config"
chmod 644 "$T/client_config"
install -d -m 700 -o "$user" "$home/.ssh"
install -m 600 -o "$user" "$T/client_config" "$home/.ssh/config"
head -c 300000 /dev/urandom >"$home/scp_src"
chown "$user" "$home/scp_src"
scp_r() { # [-A]: copies src:scp_src to dst:scp_dst
    rm -f "$home/scp_dst"
    SSH_AUTH_SOCK=$AGENT timeout 60 "$BUILD/bin/scp" "$@" -R -F "$T/client_config" "src:$home/scp_src" \
        "dst:$home/scp_dst" </dev/null 2>"$T/scp.err"
}
scp_forwards() {
    scp_r -A && cmp -s "$home/scp_src" "$home/scp_dst" || { cat "$T/scp.err" >&2; return 1; }
}
scp_needs_it() { ! scp_r && [ ! -e "$home/scp_dst" ]; }
lh_check "scp -A -R: the origin host reaches the target with the forwarded agent" scp_forwards
lh_check "scp -R without -A: the origin host cannot log in to the target" scp_needs_it

# sftp -A: the ssh it runs is told to forward, after -oForwardAgent=no
# (which -A overrides, as the checks above show for ssh).
printf '#!/bin/sh\necho "$*" >>"%s"\nexec "%s" "$@"\n' "$T/ssh_args" "$LH_SSH" >"$T/ssh_wrap"
chmod +x "$T/ssh_wrap"
sftp_forwards() {
    : >"$T/ssh_args"
    SSH_AUTH_SOCK=$AGENT timeout 30 "$BUILD/bin/sftp" -A -S "$T/ssh_wrap" -F "$T/client_config" -b - src \
        <<<"pwd" >/dev/null 2>"$T/sftp.err" || { cat "$T/sftp.err" >&2; return 1; }
    grep -qE -- '-oForwardAgent=no( .*)? -A ' "$T/ssh_args" || { cat "$T/ssh_args" >&2; return 1; }
}
lh_check "sftp -A: its ssh forwards the agent" sftp_forwards

lh_summary
