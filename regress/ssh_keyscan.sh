#!/usr/bin/env bash
# ssh-keyscan beside Debian's (OpenSSH 9.2), both against Debian's sshd and
# Longhaul's sshd (rsa, ecdsa and ed25519 host keys, an ed25519 host
# certificate): stdout compared line for line (sorted: connections end in
# any order), the "# host:port version" comments on stderr, -H (both
# outputs' hashed names checked with ssh-keygen -F), -D, -c, -f (a file and
# stdin), a port with nothing listening, a listener that never speaks
# (both give up within -T) and -t with an unknown type.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
OURS=$BUILD/bin/ssh-keyscan
OUR_SSHD=$BUILD/bin/sshd
DEB_SSHD=/usr/sbin/sshd
DEB=${LH_DEBIAN_KEYSCAN:-/usr/bin/ssh-keyscan}
[ -x "$OURS" ] || lh_fail "ssh-keyscan not built ($OURS)"
[ -x "$OUR_SSHD" ] || lh_fail "sshd not built ($OUR_SSHD)"
LH_SSHD=$DEB_SSHD
lh_require_openssh_server
[ -x "$DEB" ] || lh_skip "OpenSSH's ssh-keyscan not found at $DEB"
T=$LH_TMP
KG=$LH_SSH_KEYGEN

"$KG" -q -t ed25519 -N '' -C "host CA" -f "$T/ca"
server_dir() {
    local dir=$1
    mkdir -p "$dir"
    lh_make_host_keys "$dir"
    "$KG" -q -s "$T/ca" -h -I "host ed25519" -n 127.0.0.1,localhost "$dir/ssh_host_ed25519_key.pub"
    : >"$dir/authorized_keys"
}
server_dir "$T/deb"
server_dir "$T/lh"
lh_port deb_port
lh_port lh_port_
lh_port closed_port
lh_port silent_port
LH_SSHD=$DEB_SSHD
lh_start_sshd "$T/deb" "$deb_port" "HostCertificate=$T/deb/ssh_host_ed25519_key-cert.pub"
LH_SSHD=$OUR_SSHD
lh_start_sshd "$T/lh" "$lh_port_" "HostCertificate=$T/lh/ssh_host_ed25519_key-cert.pub"
LH_SSHD=$DEB_SSHD

# run NAME PROGRAM ARGS...: stdout, stderr and status in $T/NAME.{out,err,rc}.
run() {
    local name=$1 rc=0
    shift
    "$@" >"$T/$name.out" 2>"$T/$name.err" <"${RUN_STDIN:-/dev/null}" || rc=$?
    echo "$rc" >"$T/$name.rc"
}

# same ARGS...: both programs with ARGS; sorted stdout, sorted stderr and
# status must be equal.
same() {
    local tag=$((++same_n))
    run "o$tag" "$OURS" "$@"
    run "d$tag" "$DEB" "$@"
    if ! diff <(sort "$T/o$tag.out") <(sort "$T/d$tag.out") >&2; then
        echo "  stdout differs: ssh-keyscan $*" >&2
        return 1
    fi
    if ! diff <(sort "$T/o$tag.err") <(sort "$T/d$tag.err") >&2; then
        echo "  stderr differs: ssh-keyscan $*" >&2
        return 1
    fi
    if [ "$(cat "$T/o$tag.rc")" != "$(cat "$T/d$tag.rc")" ]; then
        echo "  status $(cat "$T/o$tag.rc") vs $(cat "$T/d$tag.rc"): ssh-keyscan $*" >&2
        return 1
    fi
    last=$tag
}
same_n=0

# Some output must have come (a comparison of two empty outputs proves little).
nonempty() { [ -s "$T/o$last.out" ] && [ "$(grep -c . "$T/o$last.out")" -ge "$1" ]; }

# hashed_same PORT: -H from both; every name of each output found with
# ssh-keygen -F, giving the same keys.
hashed_same() {
    local port=$1 name
    run oh "$OURS" -H -p "$port" 127.0.0.1,localhost &&
        run dh "$DEB" -H -p "$port" 127.0.0.1,localhost &&
        [ "$(cat "$T/oh.rc")" = "$(cat "$T/dh.rc")" ] &&
        [ "$(wc -l <"$T/oh.out")" = "$(wc -l <"$T/dh.out")" ] &&
        [ "$(grep -c '^|1|' "$T/oh.out")" = 6 ] || return 1
    for name in "[127.0.0.1]:$port" "[localhost]:$port"; do
        "$KG" -F "$name" -f "$T/oh.out" | grep -v '^#' | cut -d' ' -f2- | sort >"$T/oh.keys"
        "$KG" -F "$name" -f "$T/dh.out" | grep -v '^#' | cut -d' ' -f2- | sort >"$T/dh.keys"
        [ "$(wc -l <"$T/oh.keys")" = 3 ] && cmp -s "$T/oh.keys" "$T/dh.keys" || {
            echo "  -H: $name gives different keys" >&2
            return 1
        }
    done
}

for srv in deb lh; do
    if [ $srv = deb ]; then port=$deb_port; else port=$lh_port_; fi
    lh_check "$srv: default types, two names" eval 'same -p "$port" 127.0.0.1,LocalHost && nonempty 6'
    lh_check "$srv: -t rsa,ecdsa,ed25519 one name" eval 'same -p "$port" -t rsa,ecdsa,ed25519 127.0.0.1 && nonempty 3'
    lh_check "$srv: -t ssh-ed25519" eval 'same -p "$port" -t ssh-ed25519 localhost && nonempty 1'
    lh_check "$srv: -c (host certificate)" eval 'same -c -p "$port" 127.0.0.1 && nonempty 1 && grep -q "^ssh-ed25519-cert-v01@openssh.com " "$T/o$last.out"'
    lh_check "$srv: -D" eval 'same -D -p "$port" 127.0.0.1,localhost && nonempty 12'
    lh_check "$srv: -H verifies with ssh-keygen -F" hashed_same "$port"
    printf '%s\n' "# keyscan input" "127.0.0.1" "127.0.0.1 name.example,Other.Example # aliases" "" \
        "localhost,127.0.0.1	tabbed.example" >"$T/hosts.$srv"
    lh_check "$srv: -f file" eval 'same -p "$port" -t ed25519,rsa -f "$T/hosts.$srv" && nonempty 6'
    lh_check "$srv: -f - (stdin)" eval 'RUN_STDIN=$T/hosts.$srv same -p "$port" -t ecdsa -f - && nonempty 3'
    lh_check "$srv: first name unresolvable, the next one used" eval 'same -p "$port" -t ed25519 nosuchhost.invalid,127.0.0.1 && nonempty 1'
    lh_check "$srv: first name refused: no other name tried" same -p "$port" -t ed25519 127.0.0.2,127.0.0.1
    lh_check "$srv: -c -D (no SSHFP for a certificate)" same -c -D -p "$port" 127.0.0.1
    lh_check "$srv: a CIDR range" eval 'same -p "$port" -t ed25519 127.0.0.0/30 && nonempty 1'
    lh_check "$srv: -D -O hashalg=sha256 is -D's SHA-256 lines" eval '
        run o256 "$OURS" -D -O hashalg=sha256 -p "$port" 127.0.0.1 &&
        diff <(sort "$T/o256.out") <("$DEB" -D -p "$port" 127.0.0.1 2>/dev/null | grep " SSHFP [0-9] 2 " | sort) >&2 &&
        [ -s "$T/o256.out" ]'
done

lh_check "nothing listening: no output, same status" eval 'same -p "$closed_port" 127.0.0.1 && [ ! -s "$T/o$last.out" ]'
lh_check "unresolvable name: same message and status" same -t rsa -p "$closed_port" nosuchhost.invalid

silent_within() {
    local tag=$1 prog=$2 t0=$EPOCHREALTIME took rc=0
    "$prog" -T 2 -p "$silent_port" 127.0.0.1 >"$T/silent.out" 2>"$T/silent.err" || rc=$?
    took=$(lh_seconds_since "$t0")
    echo "  $prog: status $rc after ${took} s" >&2
    echo "$rc" >"$T/silent.rc.$tag"
    [ ! -s "$T/silent.out" ] && [ ! -s "$T/silent.err" ] && [ "${took%.*}" -ge 1 ] && [ "${took%.*}" -lt 5 ]
}
# A listener that accepts and never says a word (python3; without it
# those checks are skipped, and say so).
have_python=0
if command -v python3 >/dev/null; then
    have_python=1
    python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
' "$silent_port" &
    LH_PIDS+=($!)
    lh_wait_until 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$silent_port" 2>/dev/null ||
        lh_fail "silent listener did not start"
fi

if [ $have_python = 1 ]; then
    lh_check "silent listener: ours gives up within -T 2" silent_within ours "$OURS"
    lh_check "silent listener: Debian's gives up within -T 2" silent_within deb "$DEB"
    lh_check "silent listener: same status" eval '[ "$(cat "$T/silent.rc.ours")" = "$(cat "$T/silent.rc.deb")" ]'
else
    lh_skip_check "silent listener (-T)" "python3 not found"
fi

lh_check "-t unknown type: same message and status" eval 'same -t rsa,nosuchtype 127.0.0.1 && [ "$(cat "$T/o$last.rc")" = 255 ]'
lh_check "-t certificate name refused the same" same -t ed25519-cert 127.0.0.1
lh_check "usage: no host" same
lh_check "usage: bad port" same -p 0 127.0.0.1
lh_check "usage: bad timeout" same -T 0 127.0.0.1
lh_check "usage: unknown option" same -x 127.0.0.1
lh_check "usage: option without its value" same -p
lh_check "missing -f file" same -f "$T/no/such/file"

lh_summary
