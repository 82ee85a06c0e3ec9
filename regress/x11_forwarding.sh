#!/usr/bin/env bash
# X11 forwarding (ssh -X / -Y, ForwardX11; sshd's X11Forwarding) between
# Longhaul and Debian's OpenSSH, both ways and Longhaul with itself, as a
# test user. The local display is a stand-in X server
# (fake_x11_server.py) on TCP display 127.0.0.1:D (port 6000 + D, a free
# D), whose cookie sits in a temporary XAUTHORITY; on the server a
# stand-in X client (fake_x11_client.py) connects to $DISPLAY with the
# cookie `xauth list $DISPLAY` gives (what sshd's xauth run put there) and
# its bytes come back through the display, checksummed, in both X11 byte
# orders. Also: DISPLAY as OpenSSH sets it (localhost:N.0, N from
# X11DisplayOffset up, skipping a display in use), the listeners gone
# after the session, ~/.ssh/rc reading "proto cookie" instead of xauth
# running; sshd refusing as OpenSSH's does (X11Forwarding no,
# no-X11-forwarding, restrict), ssh refusing a connection whose cookie is
# not the one it gave (the display never sees it), ssh without DISPLAY or
# with -x running the session without X11, and untrusted forwarding (the
# stand-in has no SECURITY extension) failing as OpenSSH's does.
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
XAUTH=/usr/bin/xauth
[ -x "$XAUTH" ] || lh_skip "xauth not found at $XAUTH (contrib/install-deps.sh installs it)"
command -v python3 >/dev/null || lh_skip "python3 not found"
[ "$(id -u)" = 0 ] || lh_skip "needs root (a test user)"
T=$LH_TMP
chmod 711 "$T"
HERE=$(cd "$(dirname "$0")" && pwd)
cp "$HERE/fake_x11_client.py" "$T/x11_client.py"
chmod 755 "$T/x11_client.py"

lh_make_user "pw-$RANDOM"
user=$LH_USER
home=$(getent passwd "$user" | cut -d: -f6)
lh_make_host_keys "$T"
for k in id id_nox11 id_restrict; do "$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/$k"; done
{
    cat "$T/id.pub"
    echo "no-X11-forwarding $(cat "$T/id_nox11.pub")"
    echo "restrict $(cat "$T/id_restrict.pub")"
} >"$T/authorized_keys"
chmod 644 "$T/authorized_keys"
chmod 600 "$T"/id*

# x11_display VAR: a display number D (400-999) whose port 6000 + D is free,
# held as lh_port holds its ports (a lock under LH_PORT_LOCK_DIR).
x11_display() {
    local _var=$1 _d _f _fd _i
    mkdir -p "$LH_PORT_LOCK_DIR"
    for ((_i = 0; _i < 200; _i++)); do
        _d=$((400 + RANDOM % 600))
        _f=$LH_PORT_LOCK_DIR/$((6000 + _d)).lock
        [ -e "$_f" ] || : >"$_f" 2>/dev/null || continue
        exec {_fd}<"$_f" || continue
        if flock -n "$_fd" && [ -z "$(ss -Htan "sport = :$((6000 + _d))" 2>/dev/null)" ]; then
            printf -v "$_var" %s "$_d"
            return 0
        fi
        exec {_fd}<&-
    done
    lh_fail "no free X11 display in 400-999"
}

# The local display: the stand-in X server and its cookie.
x11_display D
COOKIE=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export XAUTHORITY=$T/local.xauth
: >"$XAUTHORITY"
"$XAUTH" -q -f "$XAUTHORITY" add "127.0.0.1:$D" MIT-MAGIC-COOKIE-1 "$COOKIE"
export DISPLAY=127.0.0.1:$D
XLOG=$T/xserver.log
: >"$XLOG"
python3 "$HERE/fake_x11_server.py" "$((6000 + D))" "$COOKIE" "$XLOG" &
LH_PIDS+=($!)
lh_wait_until 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$((6000 + D))" 2>/dev/null || lh_fail "the stand-in X server did not start"

# start NAME SSHD [sshd_config lines...]: sets port_NAME.
start() {
    local name=$1 sshd=$2 d="$T/srv-$1" p
    shift 2
    mkdir -p "$d" && chmod 711 "$d"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$d/"
    lh_port p
    LH_SSHD=$sshd lh_start_sshd "$d" "$p" "$@"
    SERVER_PIDS+=("${LH_PIDS[-1]}")
    printf -v "port_$name" %s "$p"
}
SERVER_PIDS=()

# ours_listening PORT: a process below one of this test's servers listens
# on PORT (other tests on the machine may have displays of their own).
ours_listening() {
    local pid p s
    for pid in $(ss -Htlnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
        p=$pid
        while [ -n "$p" ] && [ "$p" -gt 1 ]; do
            for s in "${SERVER_PIDS[@]}"; do [ "$p" = "$s" ] && return 0; done
            p=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null)
        done
    done
    return 1
}
start lh "$LH_SSHD_BIN" "X11Forwarding yes"
start deb "$DEBIAN_SSHD" "X11Forwarding yes"
start lh_all "$LH_SSHD_BIN" "X11Forwarding yes" "X11UseLocalhost no"
start lh_off "$LH_SSHD_BIN" "X11Forwarding no"
start lh_disabled "$LH_SSHD_BIN" "X11Forwarding yes" "DisableForwarding yes"
start lh_noxauth "$LH_SSHD_BIN" "X11Forwarding yes" "XAuthLocation $T/no-such-xauth"
# A display in use at the offset: the next free one is taken.
x11_display BUSY
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); time.sleep(3600)' "$((6000 + BUSY))" &
LH_PIDS+=($!)
lh_wait_until 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$((6000 + BUSY))" 2>/dev/null || lh_fail "the busy display's listener did not start"
start lh_busy "$LH_SSHD_BIN" "X11Forwarding yes" "X11DisplayOffset $BUSY"

client_of() { case $1 in lh) echo "$LH_SSH" ;; deb) echo "$DEBIAN_SSH" ;; esac; }
port_of() { local v="port_$1"; echo "${!v}"; }

# remote CLIENT SERVER KEY COMMAND [ssh options...]: COMMAND as the test
# user; ssh's own messages go to $T/ssh.err.
remote() {
    local client server=$2 key=$3 cmd=$4
    client=$(client_of "$1")
    shift 4
    timeout 60 "$client" -F /dev/null -p "$(port_of "$server")" -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none \
        -i "$T/$key" "$@" "$user@127.0.0.1" "$cmd" </dev/null 2>"$T/ssh.err"
}

# ssh's messages without the CR OpenSSH's ends each line with on stderr.
errs() { tr -d '\r' <"$T/ssh.err"; }

CLIENT_CMD="echo display=\$DISPLAY; python3 $T/x11_client.py"

# roundtrip CLIENT SERVER ORDER FLAG...: $SIZE bytes (300 kB) through the
# display and back; DISPLAY must be $HOSTPART:N.0 (localhost).
SIZE=300000
HOSTPART=localhost
roundtrip() {
    local c=$1 s=$2 order=$3 out sent got disp before
    shift 3
    before=$(grep -c '^accepted' "$XLOG" || true)
    out=$(remote "$c" "$s" id "$CLIENT_CMD $SIZE $order" "$@") || { echo "  $out" >&2; cat "$T/ssh.err" >&2; return 1; }
    disp=$(sed -n 's/^display=//p' <<<"$out")
    [[ $disp =~ ^$HOSTPART:[0-9]+\.0$ ]] || { echo "  DISPLAY '$disp'" >&2; return 1; }
    sent=$(sed -n 's/^sent //p' <<<"$out")
    got=$(sed -n 's/^got //p' <<<"$out")
    [ -n "$sent" ] && [ "$sent" = "$got" ] || { echo "  $out" >&2; return 1; }
    [ "$(grep -c '^accepted' "$XLOG")" -gt "$before" ] || { echo "  the X server saw no connection" >&2; return 1; }
    # The display's listeners close with the session.
    local n=${disp#"$HOSTPART":}
    n=${n%.0}
    lh_wait_until 10 eval "! ours_listening $((6000 + n))" || { echo "  display $n still listening" >&2; ss -Htlnp "sport = :$((6000 + n))" >&2; return 1; }
}

for c in lh deb; do
    for s in lh deb; do
        lh_check "$c ssh -X -> $s sshd: data through the display (LSB first)" roundtrip "$c" "$s" l -X
        lh_check "$c ssh -Y -> $s sshd: data through the display (MSB first)" roundtrip "$c" "$s" B -Y
    done
done

SIZE=4000000 lh_check "lh ssh -Y -> lh sshd: 4 MB through the display" roundtrip lh lh l -Y
# X11UseLocalhost no: every address, DISPLAY names this host.
all_addresses() {
    HOSTPART=$(hostname) roundtrip lh lh_all l -Y || return 1
}
lh_check "lh sshd X11UseLocalhost no: DISPLAY=$(hostname):N.0, data through it" all_addresses

# The display number: from X11DisplayOffset (10) up, a busy one skipped.
display_from() {
    local out n
    out=$(remote lh "$1" id 'echo "$DISPLAY"' -X) || { cat "$T/ssh.err" >&2; return 1; }
    [[ $out =~ ^localhost:([0-9]+)\.0$ ]] || { echo "  DISPLAY '$out'" >&2; return 1; }
    n=${BASH_REMATCH[1]}
    [ "$n" -gt "$2" ] || { echo "  display $n, expected above $2" >&2; return 1; }
    [ "$n" -lt 1000 ] || { echo "  display $n" >&2; return 1; }
}
lh_check "lh sshd: display from X11DisplayOffset 10 up" display_from lh 9
lh_check "lh sshd: a display in use is skipped" display_from lh_busy "$BUSY"

# The cookie xauth stored is the fake one the client sent, under unix:N.0
# (sshd's auth display), and not the real one.
cookie_stored() {
    local out
    out=$(remote lh "$1" id 'xauth list "$DISPLAY"' -Y) || { cat "$T/ssh.err" >&2; return 1; }
    grep -Eq "^[^ ]+/unix:[0-9]+ +MIT-MAGIC-COOKIE-1 +[0-9a-f]{32}$" <<<"$out" || { echo "  '$out'" >&2; return 1; }
    ! grep -q "$COOKIE" <<<"$out" || { echo "  the real cookie reached the server" >&2; return 1; }
}
lh_check "lh sshd: xauth holds the fake cookie under unix:N" cookie_stored lh
lh_check "deb sshd (lh ssh): xauth holds the fake cookie under unix:N" cookie_stored deb

# ~/.ssh/rc gets "proto cookie" on stdin, and xauth is not run for it.
user_rc() {
    local out rc=$home/.ssh/rc
    mkdir -p "$home/.ssh"
    rm -f "$home/.Xauthority"
    printf 'read proto cookie\necho "rc: $proto $cookie" >"$HOME/rc.out"\n' >"$rc"
    chown -R "$user" "$home/.ssh"
    out=$(remote lh "$1" id 'cat "$HOME/rc.out"; xauth list 2>/dev/null | wc -l' -Y) || { rm -f "$rc"; cat "$T/ssh.err" >&2; return 1; }
    rm -f "$rc" "$home/rc.out"
    grep -Eq "^rc: MIT-MAGIC-COOKIE-1 [0-9a-f]{32}$" <<<"$out" || { echo "  '$out'" >&2; return 1; }
    [ "$(tail -n1 <<<"$out")" = 0 ] || { echo "  xauth ran: '$out'" >&2; return 1; }
}
lh_check "lh sshd: ~/.ssh/rc reads the cookie (no xauth)" user_rc lh
lh_check "deb sshd: ~/.ssh/rc reads the cookie (no xauth)" user_rc deb

# Refusals: no DISPLAY in the session, OpenSSH's line at the client.
refused() {
    local c=$1 s=$2 key=$3 out
    out=$(remote "$c" "$s" "$key" 'echo "display=$DISPLAY"' -X) || { cat "$T/ssh.err" >&2; return 1; }
    [ "$out" = "display=" ] || { echo "  '$out'" >&2; return 1; }
    errs | lh_matches -x "X11 forwarding request failed on channel 0" || { cat "$T/ssh.err" >&2; return 1; }
}
for c in lh deb; do
    lh_check "$c ssh -> lh sshd X11Forwarding no: refused" refused "$c" lh_off id
    lh_check "$c ssh -> lh sshd DisableForwarding: refused" refused "$c" lh_disabled id
    lh_check "$c ssh -> lh sshd no-X11-forwarding key: refused" refused "$c" lh id_nox11
    lh_check "$c ssh -> lh sshd restrict key: refused" refused "$c" lh id_restrict
    lh_check "$c ssh -> lh sshd without xauth: refused" refused "$c" lh_noxauth id
done
lh_check "lh ssh -> deb sshd no-X11-forwarding key: refused" refused lh deb id_nox11

# A connection with a cookie other than the fake one: the client refuses
# it (OpenSSH's line), the display never sees it.
wrong_cookie() {
    local c=$1 s=$2 out before
    # ssh connects to the display before it sees the setup (as OpenSSH
    # does), so the X server may see a connection end unused: never a setup.
    before=$(grep -vc 'EOF in the connection setup' "$XLOG" || true)
    out=$(remote "$c" "$s" id "$CLIENT_CMD 1000 l 00112233445566778899aabbccddeeff" -Y) && { echo "  '$out'" >&2; return 1; }
    grep -q "setup refused" <<<"$out" || { echo "  '$out'" >&2; return 1; }
    errs | lh_matches -x "X11 connection rejected because of wrong authentication." || { cat "$T/ssh.err" >&2; return 1; }
    sleep 0.2
    [ "$(grep -vc 'EOF in the connection setup' "$XLOG" || true)" = "$before" ] || { echo "  the X server saw it" >&2; return 1; }
}
for c in lh deb; do
    for s in lh deb; do
        lh_check "$c ssh -> $s sshd: a wrong cookie is refused by the client" wrong_cookie "$c" "$s"
    done
done

# No DISPLAY: the session runs without X11 (OpenSSH: a debug line only).
no_display() {
    local c=$1 out
    out=$(DISPLAY= env -u DISPLAY bash -c "$(declare -f remote client_of port_of); T=$T user=$user port_lh=$port_lh LH_SSH=$LH_SSH DEBIAN_SSH=$DEBIAN_SSH; remote $c lh id 'echo display=\$DISPLAY' -X -v") ||
        { cat "$T/ssh.err" >&2; return 1; }
    [ "$out" = "display=" ] || { echo "  '$out'" >&2; return 1; }
    errs | lh_matches "X11 forwarding requested but DISPLAY not set" || { cat "$T/ssh.err" >&2; return 1; }
    ! errs | lh_matches -i "x11-req\|X11 forwarding request failed" || { cat "$T/ssh.err" >&2; return 1; }
}
for c in lh deb; do lh_check "$c ssh -X without DISPLAY: session without X11" no_display "$c"; done

# -x after -X: no forwarding.
disabled_by_x() {
    local out
    out=$(remote "$1" lh id 'echo "display=$DISPLAY"' -X -x) || { cat "$T/ssh.err" >&2; return 1; }
    [ "$out" = "display=" ] || { echo "  '$out'" >&2; return 1; }
}
for c in lh deb; do lh_check "$c ssh -X -x: no X11" disabled_by_x "$c"; done

# Untrusted forwarding needs `xauth generate`, which asks the X server
# (its SECURITY extension); with no server on the display it fails, and
# both clients say so and run the session without X11.
x11_display NOX
untrusted() {
    local out
    out=$(DISPLAY=127.0.0.1:$NOX remote "$1" lh id 'echo "display=$DISPLAY"' -X -o ForwardX11Trusted=no) ||
        { cat "$T/ssh.err" >&2; return 1; }
    [ "$out" = "display=" ] || { echo "  '$out'" >&2; return 1; }
    errs | lh_matches -x "Warning: untrusted X11 forwarding setup failed: xauth key data not generated" ||
        { cat "$T/ssh.err" >&2; return 1; }
}
for c in lh deb; do lh_check "$c ssh -X ForwardX11Trusted=no: xauth generate fails as OpenSSH's" untrusted "$c"; done

# No xauth program (trusted): OpenSSH's warning, and a made-up cookie the
# display does not know; an invalid DISPLAY: no forwarding, said so.
no_xauth() {
    local out
    out=$(remote "$1" lh id 'echo "display=$DISPLAY"' -Y -o XAuthLocation="$T/no-such-xauth") ||
        { cat "$T/ssh.err" >&2; return 1; }
    [[ $out =~ ^display=localhost:[0-9]+\.0$ ]] || { echo "  '$out'" >&2; return 1; }
    errs | lh_matches -x "Warning: No xauth data; using fake authentication data for X11 forwarding." ||
        { cat "$T/ssh.err" >&2; return 1; }
}
bad_display() {
    local out
    out=$(DISPLAY='127.0.0.1:0;true' remote "$1" lh id 'echo "display=$DISPLAY"' -Y) || { cat "$T/ssh.err" >&2; return 1; }
    [ "$out" = "display=" ] || { echo "  '$out'" >&2; return 1; }
    errs | lh_matches -x 'DISPLAY "127.0.0.1:0;true" invalid; disabling X11 forwarding' || { cat "$T/ssh.err" >&2; return 1; }
}
for c in lh deb; do
    lh_check "$c ssh -Y without xauth: fake authentication data, as OpenSSH's" no_xauth "$c"
    lh_check "$c ssh -Y with an invalid DISPLAY: no X11, as OpenSSH's" bad_display "$c"
done

# sshd -T prints the X11 settings as Debian's sshd does.
dump_matches() {
    local cfg=$T/srv-lh/sshd_config a b
    a=$("$LH_SSHD_BIN" -T -f "$cfg" | grep -E '^(x11forwarding|x11displayoffset|x11uselocalhost|xauthlocation) ')
    b=$("$DEBIAN_SSHD" -T -f "$cfg" | grep -E '^(x11forwarding|x11displayoffset|x11uselocalhost|xauthlocation) ')
    [ -n "$a" ] && [ "$a" = "$b" ] || { echo "  ours: $a / Debian's: $b" >&2; return 1; }
}
lh_check "sshd -T: the X11 settings as Debian's" dump_matches
# And the start no longer calls X11Forwarding unsupported.
lh_check "lh sshd: no 'not supported yet' for X11Forwarding" bash -c "! grep -q 'X11Forwarding.*not supported' '$T/srv-lh/sshd.log'"

lh_summary
