#!/usr/bin/env bash
# Login records and PrintLastLog, beside Debian's OpenSSH sshd: for a login
# shell on a pty (Debian's ssh -tt), each server
#  1. lists the user in utmp while the session lasts (who(1): the tty and
#     the client's address) and takes the entry away at logout;
#  2. appends the login and the logout to wtmp (last(1): a closed session,
#     not "still logged in" or "gone - no logout");
#  3. writes the user's lastlog slot (lastlog(8): tty, address);
#  4. shows no "Last login:" at the first login, then
#     "Last login: <ctime of the first> from 127.0.0.1" at the next;
#  5. shows none with ~/.hushlogin, or for a command (ssh -tt host cmd),
#     which still records its login;
#  6. PrintLastLog no: no line, records still written;
#  7. a shell without a pty (ssh -T): no record, no line, no /etc/motd;
#  8. btmp (lastb): failed passwords and invalid users, not refused keys;
#  9. root's login (served by one process) recorded and closed too, and
#     a client killed mid-session: the logout still recorded (root's and a
#     user's).
# And sshd -u rejects a length above HOST_NAME_MAX + 1 as OpenSSH does.
# The machine's own records are never touched: the script runs in a mount
# namespace of its own, with empty utmp, wtmp and lastlog on tmpfs over
# /run and /var/log. Needs root (test users, mounts).
source "$(dirname "$0")/mount_namespace.sh"
lh_enter_mount_namespace "login records (and test users)" "$@"
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LONGHAUL_SSHD=$BUILD/bin/sshd
[ -x "$LONGHAUL_SSHD" ] || lh_fail "not built: $LONGHAUL_SSHD"
lh_require_openssh_server
for tool in who last lastlog; do
    command -v "$tool" >/dev/null || lh_skip "$tool not found"
done
T=$LH_TMP

# Empty records, as the system keeps them (root:utmp 0664), in this
# namespace only; /run also held sshd's privilege separation directory.
mount -t tmpfs -o mode=0755 longhaul-run /run || lh_skip "cannot mount tmpfs on /run in a mount namespace"
mount -t tmpfs -o mode=0755 longhaul-log /var/log || lh_fail "cannot mount tmpfs on /var/log"
mkdir -m 0755 /run/sshd
for f in /run/utmp /var/log/wtmp /var/log/lastlog; do
    install -m 0664 -o root -g utmp /dev/null "$f"
done

# ctime's time zone, the servers' and the tools' alike.
export TZ=UTC
chmod 711 "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id"
lh_make_host_keys "$T"
lh_start_named_sshd debian /usr/sbin/sshd
lh_start_named_sshd longhaul "$LONGHAUL_SSHD"
lh_start_named_sshd longhaul_nolastlog "$LONGHAUL_SSHD" "PrintLastLog no"

# login NAME USER OUT [command]: a pty session as USER on server NAME; a
# login shell runs `tty; who` from stdin. OUT gets everything it printed.
login() {
    local name=$1 user=$2 out=$3 port_var="port_$1"
    shift 3
    printf 'echo "TTY=$(tty)"; who; exit\n' |
        lh_ssh_to "$T/srv-$name" "${!port_var}" "$T/id" -o ConnectTimeout=20 -o ServerAliveInterval=10 \
            -tt "$user@127.0.0.1" "$@" >"$out" 2>&1
}
# (bash's prompt may put terminal escapes before the line)
tty_of() { grep -ao 'TTY=/dev/pts/[0-9]*' "$1" | head -n 1 | cut -d/ -f3-; }
not_in_utmp() { ! who | lh_matches "^$1 "; }
closed_in_wtmp() { # USER TTY OUT: last(1) shows a login with its logout time
    last -w -f /var/log/wtmp "$1" >"$3"
    grep -Eq "^$1 +$2 +127\.0\.0\.1 .* - [0-9]{2}:[0-9]{2} +\(00:0[0-9]\)$" "$3"
}

# The whole sequence for one server, each step checked.
records_of() { # NAME
    local name=$1 user out tty first t
    lh_make_user "pw-$RANDOM"
    user=$LH_USER
    out=$T/$name

    # 1st login: records, no "Last login:"; utmp lists the session.
    login "$name" "$user" "$out.1" || { cat "$out.1" >&2; return 1; }
    tty=$(tty_of "$out.1")
    [ -n "$tty" ] || { echo "$name: no tty in the session" >&2; cat "$out.1" >&2; return 1; }
    tr -d '\r' <"$out.1" | grep -Eq "^$user +$tty .*\(127\.0\.0\.1\)$" ||
        { echo "$name: who in the session does not list $user on $tty from 127.0.0.1" >&2; cat "$out.1" >&2; return 1; }
    ! grep -q 'Last login' "$out.1" || { echo "$name: 'Last login' at a first login" >&2; return 1; }
    # After logout: out of utmp, a closed session in wtmp, lastlog written.
    lh_wait_until 10 not_in_utmp "$user" || { echo "$name: $user still in utmp after logout" >&2; who >&2; return 1; }
    # (utmp is written first: wait for wtmp's logout too)
    lh_wait_until 10 closed_in_wtmp "$user" "$tty" "$out.last" ||
        { echo "$name: wtmp has no closed session of $user on $tty" >&2; cat "$out.last" >&2; return 1; }
    lastlog -u "$user" | tail -n 1 >"$out.lastlog"
    grep -Eq "^$user +$tty +127\.0\.0\.1 +[A-Z][a-z]{2} " "$out.lastlog" ||
        { echo "$name: lastlog has no login of $user on $tty" >&2; cat "$out.lastlog" >&2; return 1; }
    # lastlog's time, as ctime writes it (sshd's time zone: UTC here).
    t=$(date -u -d "$(sed -E 's/^\S+ +\S+ +\S+ +//' "$out.lastlog")" '+%a %b %e %H:%M:%S %Y')

    # 2nd login: the first one's time and address.
    login "$name" "$user" "$out.2" || { cat "$out.2" >&2; return 1; }
    first=$(tr -d '\r' <"$out.2" | grep '^Last login' | head -n 1)
    [ "$first" = "Last login: $t from 127.0.0.1" ] ||
        { echo "$name: expected 'Last login: $t from 127.0.0.1', got '$first'" >&2; cat "$out.2" >&2; return 1; }

    # A command on a pty: no line, but its login is recorded (wtmp grows).
    local before after
    before=$(last -w -f /var/log/wtmp "$user" | grep -c "^$user ")
    login "$name" "$user" "$out.3" 'echo "TTY=$(tty)"' || { cat "$out.3" >&2; return 1; }
    ! grep -q 'Last login' "$out.3" || { echo "$name: 'Last login' for a command" >&2; return 1; }
    lh_wait_until 10 not_in_utmp "$user" || return 1
    after=$(last -w -f /var/log/wtmp "$user" | grep -c "^$user ")
    [ "$after" -eq $((before + 1)) ] || { echo "$name: a command's login not in wtmp ($before -> $after)" >&2; return 1; }

    # ~/.hushlogin: quiet.
    su -s /bin/sh -c 'touch ~/.hushlogin' "$user"
    login "$name" "$user" "$out.4" || { cat "$out.4" >&2; return 1; }
    ! grep -q 'Last login' "$out.4" || { echo "$name: 'Last login' despite ~/.hushlogin" >&2; return 1; }
    grep -q 'TTY=/dev/pts/' "$out.4" || { cat "$out.4" >&2; return 1; }
}

lh_check "Debian's sshd: utmp while logged in, wtmp login and logout, lastlog, 'Last login:' from the 2nd login, quiet for commands and ~/.hushlogin" \
    records_of debian
lh_check "Longhaul's sshd: the same records and lines" records_of longhaul

# root is served by one process (no root parent): it writes its records
# itself, and its sessions end before its recorder (under the sanitizers a
# session ending after it was a report).
check_root() { # NAME
    local name=$1 out=$T/root.$1 tty
    login "$name" root "$out" || { cat "$out" >&2; return 1; }
    tty=$(tty_of "$out")
    tr -d '\r' <"$out" | grep -Eq "^root +$tty .*\(127\.0\.0\.1\)$" ||
        { echo "$name: who in root's session does not list root on $tty" >&2; cat "$out" >&2; return 1; }
    lh_wait_until 10 closed_in_wtmp root "$tty" "$out.last" ||
        { echo "$name: no closed session of root on $tty" >&2; cat "$out.last" >&2; return 1; }
}
# A client killed while its pty session runs: the server ends the
# connection with the session still open (OpenSSH's once the command
# ends); its logout is recorded all the same.
tty_in_utmp() { who | grep -Eq "^$1 +$2 "; } # USER TTY
tty_gone() { ! tty_in_utmp "$@"; }
# (a command that outlives the hangup: the connection ends first)
DROPPED_COMMAND='trap "" HUP; sleep 3'
user_ttys() { who | awk -v u="$1" '$1 == u { print $2 }' | sort; }
check_dropped() { # NAME USER
    local name=$1 user=$2 port_var="port_$1" pid before tty=""
    before=$(user_ttys "$user")
    lh_ssh_to "$T/srv-$name" "${!port_var}" "$T/id" -tt "$user@127.0.0.1" "$DROPPED_COMMAND" </dev/null >/dev/null 2>&1 &
    pid=$!
    new_tty() { tty=$(comm -13 <(echo "$before") <(user_ttys "$user") | head -n 1); [ -n "$tty" ]; }
    lh_wait_until 10 new_tty || { kill "$pid"; echo "$name: $user never in utmp" >&2; return 1; }
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    lh_wait_until 20 tty_gone "$user" "$tty" ||
        { echo "$name: $user still in utmp on $tty after the client died" >&2; who >&2; return 1; }
    lh_wait_until 10 closed_in_wtmp "$user" "$tty" "$T/dropped.last" ||
        { echo "$name: no closed session of $user on $tty" >&2; cat "$T/dropped.last" >&2; return 1; }
}
check_dropped_both() { # NAME
    local user
    lh_make_user "pw-$RANDOM"
    user=$LH_USER
    check_dropped "$1" root && check_dropped "$1" "$user"
}
lh_check "Debian's sshd: a client killed mid-session: root's and a user's logout recorded" check_dropped_both debian
lh_check "Longhaul's sshd: the same" check_dropped_both longhaul

lh_check "Debian's sshd: root's pty login recorded and closed" check_root debian
lh_check "Longhaul's sshd: the same (one process, no monitor)" check_root longhaul

# A shell without a pty (ssh -T) is not a login on a terminal: neither
# server records it or prints the line or /etc/motd (OpenSSH's do_login()
# runs only for a pty).
check_no_pty() { # NAME
    local name=$1 port_var="port_$1" user out=$T/nopty.$1
    lh_make_user "pw-$RANDOM"
    user=$LH_USER
    login "$name" "$user" "$out.1" || return 1
    lh_wait_until 10 not_in_utmp "$user" || return 1
    printf 'echo done\n' | lh_ssh_to "$T/srv-$name" "${!port_var}" "$T/id" -T "$user@127.0.0.1" >"$out.2" 2>&1 || return 1
    [ "$(cat "$out.2")" = done ] || { echo "$name: a shell without a pty printed more:" >&2; cat "$out.2" >&2; return 1; }
    [ "$(last -w -f /var/log/wtmp "$user" | grep -c "^$user ")" = 1 ] ||
        { echo "$name: a session without a pty was recorded" >&2; last -w -f /var/log/wtmp "$user" >&2; return 1; }
}
lh_check "Debian's sshd: a shell without a pty prints only its output, no record" check_no_pty debian
lh_check "Longhaul's sshd: the same" check_no_pty longhaul

# btmp (lastb): a failed password for an existing user, and one for a name
# with no account, give the same entries on both servers (OpenSSH records
# the invalid user itself too); a refused key gives none.
askpass=$(lh_askpass)
failed_password() { # NAME USER
    local port_var="port_$1"
    LH_ASKPASS_ANSWER=wrong-password SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none \
        ssh -F /dev/null -p "${!port_var}" -o "UserKnownHostsFile=$T/srv-$1/known_hosts.${!port_var}" \
        -o StrictHostKeyChecking=yes -o PubkeyAuthentication=no -o NumberOfPasswordPrompts=1 \
        -o PreferredAuthentications=password "$2@127.0.0.1" true </dev/null >/dev/null 2>&1 && return 1
    return 0
}
btmp_count() { lastb -w -f /var/log/btmp "$1" 2>/dev/null | grep -Ec "^$1 +ssh:notty +127\.0\.0\.1 " || true; }
btmp_counts() { # NAME USER KEY-ONLY-USER: "valid invalid key-only" entry counts after the attempts
    local name=$1 user=$2 keyonly=$3 ghost="nosuch$$$1" port_var="port_$1"
    failed_password "$name" "$user" && failed_password "$name" "$ghost" || return 1
    # A refused key: the server knows $T/id2 for no one.
    ! lh_ssh_to "$T/srv-$name" "${!port_var}" "$T/id2" "$keyonly@127.0.0.1" true >/dev/null 2>&1 || return 1
    sleep 0.5
    echo "$(btmp_count "$user") $(btmp_count "$ghost") $(btmp_count "$keyonly")"
}
check_btmp() {
    local debian longhaul users=()
    "$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/id2"
    for _ in 1 2 3 4; do
        lh_make_user "pw-$RANDOM"
        users+=("$LH_USER")
    done
    debian=$(btmp_counts debian "${users[0]}" "${users[1]}") &&
        longhaul=$(btmp_counts longhaul "${users[2]}" "${users[3]}") || return 1
    echo "  btmp entries (failed password, invalid user's failed password, refused key): Debian $debian, Longhaul $longhaul"
    [ "$debian" = "$longhaul" ] && [ "$longhaul" = "1 2 0" ]
}
install -m 0600 -o root -g root /dev/null /var/log/btmp
lh_check "btmp: a failed password and an invalid user recorded as by Debian's sshd (lastb), a refused key not" check_btmp

check_btmp_unsafe() { # a btmp readable by others: nothing written, OpenSSH's line logged
    local name before
    chmod 0644 /var/log/btmp
    before=$(stat -c %s /var/log/btmp)
    for name in debian longhaul; do
        failed_password "$name" "nosuch$$$name" || return 1
        lh_wait_until 5 grep -q "Excess permission or bad ownership on file /var/log/btmp" "$T/srv-$name/sshd.log" ||
            { echo "$name: no 'Excess permission' line" >&2; return 1; }
    done
    chmod 0600 /var/log/btmp
    [ "$(stat -c %s /var/log/btmp)" = "$before" ]
}
lh_check "btmp readable by others: nothing written, 'Excess permission or bad ownership' logged by both servers" check_btmp_unsafe

check_print_last_log_no() {
    local user out=$T/nolastlog
    lh_make_user "pw-$RANDOM"
    user=$LH_USER
    login longhaul_nolastlog "$user" "$out.1" && login longhaul_nolastlog "$user" "$out.2" || return 1
    ! grep -q 'Last login' "$out.1" "$out.2" || { echo "'Last login' under PrintLastLog no" >&2; return 1; }
    lastlog -u "$user" | tail -n 1 | grep -Eq "^$user +pts/[0-9]+ +127\.0\.0\.1 " ||
        { echo "PrintLastLog no stopped lastlog's record" >&2; lastlog -u "$user" >&2; return 1; }
}
lh_check "PrintLastLog no: no 'Last login:' line, the records still written" check_print_last_log_no

check_utmp_length() {
    local rc
    "$LONGHAUL_SSHD" -u 66 -t -f "$T/srv-longhaul/sshd_config" >"$T/u.out" 2>&1 && return 1
    grep -qx 'Invalid utmp length.' "$T/u.out" || { cat "$T/u.out" >&2; return 1; }
    "$LONGHAUL_SSHD" -u 0 -t -f "$T/srv-longhaul/sshd_config" && "$LONGHAUL_SSHD" -u 65 -t -f "$T/srv-longhaul/sshd_config"
}
lh_check "sshd -u: 0..65 accepted, 66 refused with OpenSSH's 'Invalid utmp length.'" check_utmp_length

lh_summary
